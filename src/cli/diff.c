/*
 * cli/diff.c - `proftop diff BEFORE AFTER`: loads two traces (any format
 * the reader takes: proftop recordings and snapshots, exports, PyTorch,
 * Paddle, ...), summarizes each (all steps or --steps A:B), detaches the
 * summaries from their traces (diff.h) and prints the Perf and Model
 * Summaries and the rows whose time changed most as before / after / delta
 * / ratio, or with --json one object (proftop.diff/1). --fail-if tests a
 * condition over AFTER's figures and their relative changes (NAME_delta)
 * and exits 3 when it holds, as report's gate does (gate_metrics.h).
 */
#include <getopt.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "analyze/gate_metrics.h"
#include "proftop/diff.h"
#include "proftop/error.h"
#include "model/util.h"

void cli_usage_diff(FILE *f)
{
	fputs("Usage: proftop diff BEFORE AFTER [OPTIONS]\n"
	      "\n"
	      "Compare two runs: the Perf Summary (step time, ips, samples/s, reader ratio,\n"
	      "...) and the Model Summary phases per step, then the operators, kernels,\n"
	      "memory operations and user-defined ranges whose total time changed most, as\n"
	      "before / after / delta / ratio; rows only one run has are marked new or\n"
	      "vanished. BEFORE and AFTER are traces, snapshots or exports in any format\n"
	      "proftop reads.\n"
	      "\n"
	      "Options:\n"
	      "      --json          print one JSON object (schema proftop.diff/1)\n"
	      "      --top N         rows per table (default 20, 0 = all)\n"
	      "      --steps A:B     only steps A to B of each run, inclusive (also A:, :B, A)\n"
	      CLI_WITH_COMPILE_HELP
	      CLI_BATCH_HELP
	      "      --fail-if EXPR  exit 3 with a one-line reason when EXPR holds over AFTER's\n"
	      "                      figures and NAME_delta, the relative change (after -\n"
	      "                      before) / before: e.g. 'ips_delta<-5% || step_ms>120'\n"
	      "      --max-mem SIZE  memory for kept events, per run (default 1G)\n"
	      "      --threads N     parser threads (default: one per CPU, at most 4)\n"
	      "  -h, --help          show this help\n"
	      "\n"
	      "Exit status: 0 done (condition false), 1 a file could not be read or a figure\n"
	      "of the condition is undefined, 2 bad command line, 3 the condition held.\n",
	      f);
}

/* Report figures a diff cannot give: they need the trace, not just its summary. */
static int needs_trace(const char *name)
{
	return !strcmp(name, "dropped") || !strcmp(name, "dropped_ratio") ||
	       !strcmp(name, "overhead_ratio");
}

/* The figures a diff condition may name: report's, the diff's own, and NAME_delta. */
static int diff_name(void *ctx, const char *name, double *v)
{
	(void)ctx;
	char base[64];
	size_t len = strlen(name), sl = strlen("_delta");
	if (len > sl && !strcmp(name + len - sl, "_delta") && len - sl < sizeof base) {
		memcpy(base, name, len - sl);
		base[len - sl] = 0;
		name = base;
	}
	*v = 0;
	for (size_t i = 0; pt_diff_metric_names[i]; i++)
		if (!strcmp(pt_diff_metric_names[i], name))
			return 0;
	if (needs_trace(name))
		return PT_ENOENT;
	return pt_gate_report_name(NULL, name, v);
}

static void list_figures(FILE *out)
{
	fputs("Known figures (AFTER's; NAME_delta is the relative change, -0.05 = 5% lower):\n",
	      out);
	for (size_t i = 0; pt_diff_metric_names[i]; i++) {
		double v;
		if (pt_gate_report_name(NULL, pt_diff_metric_names[i], &v) == 0)
			continue; /* listed below with its help */
		fprintf(out, "  %s\n", pt_diff_metric_names[i]);
	}
	/* report's figures, less those that need the trace itself */
	for (size_t i = 0; pt_gate_figure_names[i].name; i++)
		if (!needs_trace(pt_gate_figure_names[i].name))
			fprintf(out, "  %-20s %s\n", pt_gate_figure_names[i].name,
				pt_gate_figure_names[i].help);
}

enum { OPT_JSON = 256, OPT_TOP, OPT_FAILIF };

int cli_diff(int argc, char **argv)
{
	static const struct option longs[] = {
	    {"json", no_argument, NULL, OPT_JSON},
	    {"top", required_argument, NULL, OPT_TOP},
		CLI_STEPS_LONGOPT,
		CLI_WITH_COMPILE_LONGOPT,
		CLI_BATCH_LONGOPT,
	    CLI_LOAD_LONGOPTS,
	    {"fail-if", required_argument, NULL, OPT_FAILIF},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct cli_load_opts lo;
	struct pt_diff_opts dopts;
	const char *fail_if = NULL;
	int json = 0, c, rc;
	uint64_t n;
	cli_load_opts_init(&lo);
	pt_diff_opts_init(&dopts);
	optind = 0;
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
			cli_usage_diff(stdout);
			return CLI_OK;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_TOP:
			if (cli_parse_count(optarg, SIZE_MAX, &n))
				return cli_usage_error("--top: '%s' is not a number", optarg);
			dopts.top = (size_t)n;
			break;
		case OPT_FAILIF:
			fail_if = optarg;
			break;
		default:
			return cli_getopt_error(c, argv);
		}
	}
	if (argc - optind != 2)
		return cli_usage_error(
		    "diff: expected BEFORE and AFTER (proftop diff BEFORE AFTER)");

	struct pt_gate *gate = NULL;
	if (fail_if) {
		if ((rc = pt_gate_cli_parse(fail_if, &gate, stderr)))
			return rc;
		/* an unknown figure is a usage error, found before reading gigabytes */
		if ((rc = pt_gate_cli_check_names(gate, diff_name, NULL, list_figures, stderr))) {
			pt_gate_free(gate);
			return rc;
		}
	}
	struct pt_diff_side *before = NULL, *after = NULL;
	rc = cli_load_side(argv[optind], &lo, &before);
	if (rc == CLI_OK)
		rc = cli_load_side(argv[optind + 1], &lo, &after);
	if (rc == CLI_OK) {
		int wrc = json ? pt_diff_json(stdout, before, after, &dopts)
			       : pt_diff_text(stdout, before, after, &dopts);
		if (wrc)
			rc = cli_fail("writing the diff: output error");
	}
	if (rc == CLI_OK && gate) {
		struct pt_diff_metric_ctx mc = {pt_diff_side_summary(before),
						pt_diff_side_summary(after)};
		rc = pt_gate_cli_eval(gate, pt_diff_metric, &mc, list_figures, stderr);
	}
	pt_gate_free(gate);
	pt_diff_side_free(before);
	pt_diff_side_free(after);
	return rc;
}
