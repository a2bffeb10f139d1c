/*
 * cli/merge.c - `proftop merge A B ... -o OUT.json`: reads per-rank traces
 * (any format the reader takes, gzip too) one at a time, joins them into
 * one Chrome trace with one process lane per rank (merge.c), says on
 * stderr which ranks' clocks were shifted and by how much, and writes the
 * result through the exporter (temporary file, fsync, rename).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "import/merge.h"
#include "proftop/chrome.h"
#include "proftop/error.h"
#include "proftop/store.h"
#include "model/safefile.h"
#include "model/util.h"

void cli_usage_merge(FILE *f)
{
	fputs("Usage: proftop merge A B ... -o OUT.json [OPTIONS]\n"
	      "\n"
	      "Join per-rank traces (any format proftop reads, plain or gzip) into one Chrome\n"
	      "trace with one process lane per rank, named \"rank N\" and sorted by rank. The\n"
	      "rank of each input is the one the file gives (PyTorch's distributedInfo,\n"
	      "proftop's own export); when some are missing or repeated, the inputs' order.\n"
	      "'proftop report OUT.json' then prints a Rank Summary (the slowest rank, the\n"
	      "spread of step times) and the Distributed Summary per rank.\n"
	      "\n"
	      "Clocks: each input is lined up with the first one on their first common step\n"
	      "(the same ProfilerStep number), or on the first event when one has no steps.\n"
	      "Only clocks that differ by at least --align-min are shifted (other hosts'\n"
	      "clocks); a smaller difference is the ranks' real skew and is kept. Every\n"
	      "shift is printed on stderr and recorded in the file (otherData\n"
	      "\"clock_offsets_ns\").\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output OUT      the file to write (required; - writes to stdout)\n"
	      "  -f, --force           overwrite OUT if it exists\n"
	      "      --align MODE      steps (default): line clocks up as above; none: keep\n"
	      "                        every timestamp as the files give it\n"
	      "      --align-min SECS  shift only clocks that differ by at least SECS\n"
	      "                        (default 1)\n"
	      "      --max-mem SIZE    memory for kept events (default 1G): half for the\n"
	      "                        merged trace, half for the input being read\n"
	      "      --threads N       parser threads (default: one per CPU, at most 4)\n"
	      "  -h, --help            show this help\n",
	      f);
}

enum { OPT_ALIGN = 256, OPT_ALIGN_MIN };

/* "-12.345678 s" style, for the stderr notes. */
static void secs_text(int64_t ns, char *buf, size_t len)
{
	snprintf(buf, len, "%+.6f s", (double)ns / 1e9);
}

static void say_alignment(const struct pt_merge *m)
{
	for (size_t l = 0; l < m->nlanes; l++) {
		const struct pt_merge_lane *ln = &m->lanes[l];
		const struct pt_merge_input *mi = &m->in[ln->input];
		if (!mi->shifted)
			continue;
		char file[160], off[48], diff[48], on[64];
		pt_escape_term(file, sizeof file, mi->name, strlen(mi->name), 80, 0);
		secs_text(mi->offset_ns, off, sizeof off);
		secs_text(mi->diff_ns, diff, sizeof diff);
		switch (mi->how) {
		case PT_MERGE_BY_STEP:
			snprintf(on, sizeof on, "step %" PRId64, mi->step);
			break;
		case PT_MERGE_BY_FIRST_STEP:
			snprintf(on, sizeof on, "the first step (no step number in common)");
			break;
		default:
			snprintf(on, sizeof on, "the first event (no steps to line up)");
			break;
		}
		fprintf(stderr,
			"proftop: merge: rank %" PRId64 " (%s): clock differs by %s at %s; "
			"shifted by %" PRId64 " ns%s\n",
			ln->rank, file, diff, on, mi->offset_ns,
			mi->clamped ? " (as far as its first event allows)" : "");
	}
	if (m->ranks_from_order && m->nlanes > 1)
		fprintf(stderr, "proftop: merge: ranks missing or repeated in the inputs; "
				"ranks follow the inputs' order\n");
}

int cli_merge(int argc, char **argv)
{
	static const struct option longs[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"force", no_argument, NULL, 'f'},
	    {"align", required_argument, NULL, OPT_ALIGN},
	    {"align-min", required_argument, NULL, OPT_ALIGN_MIN},
	    CLI_LOAD_LONGOPTS,
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct cli_load_opts lo;
	struct pt_merge_opts mo = {0};
	struct pt_export_opts eo = {0};
	const char *outp = NULL;
	int c, rc = CLI_OK;
	cli_load_opts_init(&lo);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:f", longs, NULL)) != -1) {
		if ((rc = cli_load_opt(&lo, c, optarg)) != 0) {
			if (rc != 1)
				return rc;
			rc = CLI_OK;
			continue;
		}
		switch (c) {
		case 'h':
			cli_usage_merge(stdout);
			return CLI_OK;
		case 'o':
			outp = optarg;
			break;
		case 'f':
			eo.force = 1;
			break;
		case OPT_ALIGN:
			if (!strcmp(optarg, "steps"))
				mo.align = PT_MERGE_ALIGN_STEPS;
			else if (!strcmp(optarg, "none"))
				mo.align = PT_MERGE_ALIGN_NONE;
			else {
				char esc[64];
				pt_escape_term(esc, sizeof esc, optarg, strlen(optarg), 30, 0);
				return cli_usage_error("merge: --align: '%s' is not steps or none",
						       esc);
			}
			break;
		case OPT_ALIGN_MIN:
			if (cli_parse_secs(optarg, &mo.align_min_ns)) {
				char esc[64];
				pt_escape_term(esc, sizeof esc, optarg, strlen(optarg), 30, 0);
				return cli_usage_error(
				    "merge: --align-min: '%s' is not a number of seconds", esc);
			}
			break;
		default:
			return cli_getopt_error(c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error("merge: missing input traces");
	if (!outp || !*outp)
		return cli_usage_error("merge: missing -o OUT");

	/* one input at a time: memory holds the merged trace and one input,
	 * each with half of the cap, so the whole stays under the cap (plus
	 * the fixed part) as every command's does */
	size_t half = lo.max_mem_bytes / 2;
	if (half < PT_STORE_MIN_MAX_BYTES)
		half = PT_STORE_MIN_MAX_BYTES;
	mo.max_mem_bytes = half;
	lo.max_mem_bytes = half;
	struct pt_merge *m = pt_merge_new(&mo);
	for (int i = optind; i < argc; i++) {
		struct pt_trace *t = NULL;
		if ((rc = cli_load_trace(argv[i], &lo, &t)))
			goto out;
		pt_merge_add(m, t, argv[i]);
		pt_trace_free(t);
	}
	pt_merge_finish(m);
	say_alignment(m);
	eo.other_json = m->other_json;
	char err[600] = "";
	int erc = pt_chrome_export(m->t, outp, &eo, err, sizeof err);
	char esc[700];
	if (erc < 0) {
		if (!err[0])
			snprintf(err, sizeof err, "%s: %s", outp, pt_strerror(erc));
		pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
		rc = cli_fail("%s", esc);
		goto out;
	}
	pt_escape_term(esc, sizeof esc, outp, strlen(outp), 0, 0);
	if (pt_out_fd(outp) == STDOUT_FILENO)
		snprintf(esc, sizeof esc, "the trace to stdout");
	fprintf(stderr, "proftop: wrote %s (%zu ranks, %llu events", esc, m->nlanes,
		(unsigned long long)pt_store_count(m->t->store));
	/* what the memory cap (reading an input, or the merged trace) and the
	 * inputs' own sources lost: said here, not only inside the file */
	uint64_t by_cap = m->t->warnings[PT_WARN_STORE_DROPPED], by_src = pt_trace_source_lost(m->t);
	if (by_cap)
		fprintf(stderr, "; %llu dropped by the memory cap: raise --max-mem to keep them",
			(unsigned long long)by_cap);
	if (by_src)
		fprintf(stderr, "; %llu lost by the inputs' sources", (unsigned long long)by_src);
	fputs(")\n", stderr);
out:
	pt_merge_free(m);
	return rc;
}
