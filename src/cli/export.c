/*
 * cli/export.c - `proftop export IN -o OUT.json`: loads a trace and writes
 * it as Chrome Trace Event Format JSON (Perfetto, chrome://tracing, and
 * proftop again), optionally only the time of steps A to B.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "proftop/chrome.h"
#include "proftop/error.h"
#include "model/util.h"

void cli_usage_export(FILE *f)
{
	fputs("Usage: proftop export IN -o OUT.json [OPTIONS]\n"
	      "\n"
	      "Write the trace IN (any format proftop reads) as Chrome Trace Event Format\n"
	      "JSON that opens in Perfetto (ui.perfetto.dev) and chrome://tracing, with\n"
	      "process and thread names and arrows from CPU launches to GPU kernels.\n"
	      "The file is written to a temporary beside OUT, fsynced and renamed into place\n"
	      "(mode 0600): an interrupted export or a full disk leaves OUT as it was, never\n"
	      "a partial file. A leftover OUT.tmp.XXXXXX is from a proftop killed at the\n"
	      "last moment; the next export to OUT removes it.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output OUT    the file to write (required; - writes to stdout)\n"
	      "  -f, --force         overwrite OUT if it exists\n"
	      "      --steps A:B     only events that start within steps A to B (inclusive)\n"
	      "      --max-mem SIZE  memory for kept events (default 1G; e.g. 512M, 2G)\n"
	      "      --threads N     parser threads (default: one per CPU, at most 4)\n"
	      "  -h, --help          show this help\n",
	      f);
}


int cli_export(int argc, char **argv)
{
	static const struct option longs[] = {
		{"output", required_argument, NULL, 'o'},
		{"force", no_argument, NULL, 'f'},
		CLI_STEPS_LONGOPT,
		CLI_LOAD_LONGOPTS,
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct cli_load_opts lo;
	struct pt_export_opts eo = {0};
	const char *outp = NULL;
	int c, rc;
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
			cli_usage_export(stdout);
			return CLI_OK;
		case 'o':
			outp = optarg;
			break;
		case 'f':
			eo.force = 1;
			break;
		default:
			return cli_getopt_error(c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error("export: missing IN");
	if (argc - optind > 1)
		return cli_usage_error("export: one IN at a time");
	if (!outp || !*outp)
		return cli_usage_error("export: missing -o OUT");

	struct pt_trace *t = NULL;
	struct pt_summary *s = NULL;
	if ((rc = cli_load_trace(argv[optind], &lo, &t)))
		return rc;
	if (lo.has_steps) {
		/* the window: from the first selected step's start to the last one's end */
		if ((rc = cli_summarize(t, &lo, &s)))
			goto out;
		eo.t0_ns = UINT64_MAX;
		for (size_t i = 0; i < s->nsteps; i++) {
			uint64_t a = s->steps[i].start_ns, b = a + s->steps[i].dur_ns;
			if (a < eo.t0_ns)
				eo.t0_ns = a;
			if (b > eo.t1_ns)
				eo.t1_ns = b;
		}
		if (eo.t1_ns <= eo.t0_ns)
			eo.t1_ns = eo.t0_ns + 1;
	}
	char err[600] = "";
	int erc = pt_chrome_export(t, outp, &eo, err, sizeof err);
	if (erc < 0) {
		char esc[700];
		if (!err[0])
			snprintf(err, sizeof err, "%s: %s", outp, pt_strerror(erc));
		pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
		rc = cli_fail("%s", esc);
	}
out:
	pt_summary_free(s);
	pt_trace_free(t);
	return rc;
}
