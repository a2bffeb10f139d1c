/*
 * cli/report.c - `proftop report FILE`: loads a trace, summarizes it (all
 * steps or --steps A:B) and prints Paddle's summary tables, or with --json
 * one JSON object (schema proftop.report/2).
 */
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "proftop/advisor.h"
#include "proftop/error.h"
#include "analyze/gate_metrics.h"
#include "proftop/ranks.h"
#include "proftop/report.h"
#include "model/util.h"

/* The per-rank figures, on a thread of their own beside the summary. */
struct rank_job {
	struct pt_trace *t;
	struct pt_agg_opts ao;
	struct pt_ranks ranks;
	int rc;
};

static void *rank_job_main(void *arg)
{
	struct rank_job *j = arg;
	j->rc = pt_ranks_compute(j->t, &j->ao, &j->ranks);
	return NULL;
}

void cli_usage_report(FILE *f)
{
	fputs("Usage: proftop report FILE [OPTIONS]\n"
	      "\n"
	      "Print the summary tables of a trace, in the layout of Paddle's profiler:\n"
	      "Device, Overview, Model, Distributed, Operator, Kernel, Memory Manipulation,\n"
	      "UserDefined and the Perf Summary (reader ratio, batch cost, ips); for traces\n"
	      "with input shapes (record_shapes, proftop capture), the FLOPs Summary.\n"
	      "\n"
	      "Ratios (none can pass 100%):\n"
	      "  Overview, Distributed  of the steps' time, counting only the parts within the\n"
	      "                         steps (no steps: of the profiled span); the phases are\n"
	      "                         the Model Summary's\n"
	      "  Model                  of ProfileStep's total (Backward: first to last backward\n"
	      "                         event of each step; its events alone: Backward busy)\n"
	      "  Operator               of the top-level operators' time (GPU: of all device\n"
	      "                         time); --detail: an inner row of its parent's\n"
	      "  Kernel                 of all kernel time\n"
	      "  Memory, UserDefined    CPU: of the wall time of the threads that recorded them\n"
	      "                         (span x threads); GPU: of all device time\n"
	      "What does not apply is '-' or n/a (null in JSON). The profiled span leaves out\n"
	      "the profiler's own spans (PyTorch Profiler (0)).\n"
	      "\n"
	      "Options:\n"
	      "      --json          print one JSON object (schema proftop.report/2)\n"
	      "      --format FMT    text (default), json (= --json) or md (GitHub Markdown)\n"
	      "      --fail-if EXPR  exit 3 when EXPR holds, e.g. 'ips<120 || reader_ratio>0.2'\n"
	      "      --top N         rows per table (default: all)\n"
	      "      --sort KEY      order rows by total (default), avg, max, calls, gpu or name\n"
	      "      --steps A:B     only steps A to B, inclusive (also A:, :B, A)\n"
	      CLI_WITH_COMPILE_HELP
	      CLI_BATCH_HELP
	      "      --detail        show inner ops and the kernels under each operator\n"
	      "      --no-advice     leave out the Advice section (the bottleneck advisor)\n"
	      CLI_HANG_HELP
	      CLI_PEAK_HELP
	      "      --max-mem SIZE  memory for kept events (default 1G; e.g. 512M, 2G)\n"
	      "      --threads N     parser threads (default: one per CPU, at most 4)\n"
	      "  -h, --help          show this help\n",
	      f);
	fputs("\n"
	      "--fail-if EXPR: comparisons of a figure with a number (< <= > >= == !=; a\n"
	      "trailing % divides by 100), joined by && and ||, with ! and parentheses.\n"
	      "Figures:\n",
	      f);
	pt_gate_list_figures(f, "  ");
	fputs("\n"
	      "Exit status: 0 ok, 1 error (or a figure the trace cannot give), 2 bad usage\n"
	      "(or an unknown figure), 3 the --fail-if condition held (reason on stderr).\n",
	      f);
}

static int parse_sort(const char *s, enum pt_sort_key *out)
{
	static const struct {
		const char *name;
		enum pt_sort_key key;
	} keys[] = {
		{"total", PT_SORT_TOTAL}, {"avg", PT_SORT_AVG},   {"max", PT_SORT_MAX},
		{"calls", PT_SORT_CALLS}, {"gpu", PT_SORT_GPU},   {"name", PT_SORT_NAME},
	};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		if (!strcmp(s, keys[i].name)) {
			*out = keys[i].key;
			return 0;
		}
	}
	return -1;
}

enum { OPT_FORMAT = 320, OPT_FAIL_IF };
enum { OPT_NO_ADVICE = 340 };
enum { OPT_JSON = 256, OPT_TOP, OPT_SORT, OPT_DETAIL };

int cli_report(int argc, char **argv)
{
	static const struct option longs[] = {
		{"json", no_argument, NULL, OPT_JSON},
		{"format", required_argument, NULL, OPT_FORMAT},
		{"fail-if", required_argument, NULL, OPT_FAIL_IF},
		{"top", required_argument, NULL, OPT_TOP},
		{"sort", required_argument, NULL, OPT_SORT},
		CLI_STEPS_LONGOPT,
		CLI_WITH_COMPILE_LONGOPT,
		CLI_BATCH_LONGOPT,
		{"detail", no_argument, NULL, OPT_DETAIL},
		{"no-advice", no_argument, NULL, OPT_NO_ADVICE},
		CLI_HANG_LONGOPT,
		CLI_PEAK_LONGOPTS,
		CLI_LOAD_LONGOPTS,
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct cli_load_opts lo;
	struct pt_report_opts ro;
	int json = 0, c, rc; /* json: 0 text, 1 JSON, 2 Markdown */
	const char *fail_if = NULL;
	struct pt_gate *gate = NULL;
	uint64_t n;
	cli_load_opts_init(&lo);
	pt_report_opts_init(&ro);
	optind = 0; /* GNU: full re-initialization */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
		if ((rc = cli_load_opt(&lo, c, optarg)) != 0) {
			if (rc != 1)
				return rc;
			rc = CLI_OK;
			continue;
		}
		switch (c) {
		case 'h':
			cli_usage_report(stdout);
			return CLI_OK;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "text") || !strcmp(optarg, "json") ||
			    !strcmp(optarg, "md"))
				json = optarg[0] == 'j' ? 1 : optarg[0] == 'm' ? 2 : 0;
			else
				return cli_usage_error("--format: unknown format '%s' (text, "
						       "json, md)", optarg);
			break;
		case OPT_FAIL_IF:
			fail_if = optarg;
			break;
		case OPT_TOP:
			if (cli_parse_count(optarg, SIZE_MAX, &n))
				return cli_usage_error("--top: '%s' is not a number", optarg);
			ro.top = (size_t)n;
			break;
		case OPT_SORT:
			if (parse_sort(optarg, &ro.sort))
				return cli_usage_error("--sort: unknown key '%s' (total, avg, max, "
						       "calls, gpu, name)",
						       optarg);
			break;
		case OPT_DETAIL:
			ro.op_detail = 1;
			break;
		case CLI_OPT_HANG_AFTER:
			if (cli_opt_hang_after(optarg, &ro.hang_after_ns))
				return CLI_USAGE;
			break;
		case OPT_NO_ADVICE:
			ro.no_advice = 1;
			break;
		default:
			if ((rc = cli_peak_opt(&ro.peak_tflops, &ro.peak_gbps, c, optarg)) != 0) {
				if (rc != 1)
					return rc;
				break;
			}
			return cli_getopt_error(c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error("report: missing FILE");
	if (argc - optind > 1)
		return cli_usage_error("report: one FILE at a time");
	if (fail_if && ((rc = pt_gate_cli_parse(fail_if, &gate, stderr)) ||
			(rc = pt_gate_cli_check_names(gate, pt_gate_report_name, NULL,
						      pt_gate_list_report_figures, stderr)))) {
		pt_gate_free(gate);
		return rc;
	}

	struct pt_trace *t = NULL;
	struct pt_summary *s = NULL;
	if ((rc = cli_load_trace(argv[optind], &lo, &t))) {
		pt_gate_free(gate);
		return rc;
	}
	/* several processes: the Rank Summary, over the same steps, computed
	 * beside the summary (both only read the sorted trace) */
	struct rank_job rj = {t, {0}, {0}, 0};
	int rj_thread = 0;
	pthread_t rj_th;
	if (pt_ranks_possible(t)) {
		pt_agg_opts_init(&rj.ao);
		if (lo.has_steps) {
			rj.ao.step_first = lo.step_first;
			rj.ao.step_last = lo.step_last;
		}
		rj.ao.with_compile = lo.with_compile;
		rj.ao.batch_samples = lo.batch;
		pt_store_sort(t->store);
		rj_thread = pthread_create(&rj_th, NULL, rank_job_main, &rj) == 0;
		if (!rj_thread)
			rank_job_main(&rj);
	}
	/* the advisor's scan of the store, on the summary's second thread
	 * while the feed still runs (when the summary has that thread) */
	struct pt_advisor_prescan *pre = NULL;
	if (!ro.no_advice) {
		pre = pt_xcalloc(1, sizeof *pre);
		pre->t = t;
		ro.prescan = pre;
	}
	rc = cli_summarize_spare(t, &lo, pre ? pt_advisor_prescan_spare : NULL, pre, &s);
	if (rj_thread)
		pthread_join(rj_th, NULL);
	struct pt_ranks ranks = rj.ranks;
	if (rc == CLI_OK) {
		if (rj.rc == 0 && ranks.n >= 2)
			ro.ranks = &ranks;
		else if (rj.rc == PT_ENOMEM)
			fprintf(stderr, "proftop: no Rank Summary: the per-process figures of "
					"this trace need more memory than --max-mem leaves "
					"(raise it)\n");
		int wrc = json == 2 ? pt_report_md(stdout, t, s, &ro)
			  : json ? pt_report_json(stdout, t, s, &ro) : pt_report_text(stdout, t, s, &ro);
		if (wrc)
			rc = cli_fail("writing the report: %s", "output error");
		if (gate && rc == CLI_OK) {
			struct pt_gate_figures gf = {t, s};
			fflush(stdout);
			rc = pt_gate_cli_eval(gate, pt_gate_metric, &gf, pt_gate_list_report_figures,
					      stderr);
		}
	}
	free(pre);
	pt_ranks_free(&ranks);
	pt_gate_free(gate);
	pt_summary_free(s);
	pt_trace_free(t);
	return rc;
}
