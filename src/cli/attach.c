/*
 * cli/attach.c - attaching: `proftop` with no command (or --all) attaches
 * to every live session of the user, picking up those that start later
 * (the ranks torchrun starts over a few seconds); `proftop -p PID` attaches
 * to one, `-p A,B,...` to several. The text view refreshes every -d
 * seconds until Ctrl-C or the processes exit, then prints the final
 * summary (with several ranks, the Rank Summary too) and writes a Chrome
 * trace with -o.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "live/live.h"
#include "proftop/backend.h"
#include "proftop/diff.h"
#include "proftop/error.h"
#include "proftop/session.h"
#include "proftop/store.h"
#include "model/util.h"

void cli_usage_attach(FILE *f)
{
	fputs("Usage: proftop [-p PID[,PID...] | --all] [-d SECS] [-o OUT.json]\n"
	      "\n"
	      "Attach to running sessions and show their summary, refreshed every -d seconds\n"
	      "(default 1), until Ctrl-C or the processes exit (on a terminal the screen\n"
	      "stays then, until q). Without -p, attach to every\n"
	      "live session of this user (e.g. all ranks torchrun started on this node),\n"
	      "including sessions that start later. With several sessions the summary merges\n"
	      "them and the Rank Summary shows each rank (rank from RANK, else LOCAL_RANK),\n"
	      "the slowest marked.\n"
	      "\n"
	      "Options:\n"
	      "  -p, --pid PID[,PID...]  the session of PID, or of each PID\n"
	      "      --all           every live session of this user, and those that start\n"
	      "                      later (the default without -p)\n"
	      "  -d, --delay SECS    refresh period (default: the screen 0.15, longer\n"
	      "                      when the session grows; the text view 1)\n"
	      "  -o, --output FILE   write a Chrome trace when done\n"
	      "      --no-screen     no screen: only the final summary (also off a terminal)\n"
	      "      --full          the final summary's full tables on a terminal too (by\n"
	      "                      default one that fits it; off a terminal, the tables)\n"
	      CLI_EVERY_HELP
	      CLI_INJECT_HELP
	      CLI_BASELINE_HELP
	      CLI_ANOMALY_HELP
	      CLI_SCREEN_HELP
	      CLI_CAPTURE_HELP
	      CLI_END_HELP
	      "  -h, --help          show this help\n",
	      f);
}

enum { OPT_ATTACH_ALL = 256, OPT_ATTACH_FULL };

int cli_attach(int argc, char **argv)
{
	static const struct option longs[] = {
		{"pid", required_argument, NULL, 'p'},
		{"all", no_argument, NULL, OPT_ATTACH_ALL},
		{"delay", required_argument, NULL, 'd'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{"no-screen", no_argument, NULL, 'S'},
		{"full", no_argument, NULL, OPT_ATTACH_FULL},
		{"baseline", required_argument, NULL, CLI_OPT_BASELINE},
		CLI_EVERY_LONGOPT,
		CLI_INJECT_LONGOPT,
		CLI_SCREEN_LONGOPTS,
		CLI_CAPTURE_LONGOPT,
		CLI_END_LONGOPT,
		CLI_ANOMALY_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	struct cli_anomaly an;
	uint64_t refresh_ns = 1000000000ull, every_ns = 0;
	int32_t *pids = NULL;
	size_t npids = 0;
	int delay_given = 0, all = 0;
	const char *out = NULL, *baseline = NULL;
	struct pt_diff_side *base = NULL;
	int c, rc = CLI_OK, no_screen = 0, inject = 0, full = 0;
	struct cli_screen scr = {0};
	tui_opts_init(&scr.o);
	cli_anomaly_init(&an);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hp:d:o:n:", longs, NULL)) != -1) {
		if ((rc = cli_screen_opt(&scr.o, c, optarg)) != 0 ||
		    (rc = cli_anomaly_opt(&an, c, optarg)) != 0) {
			if (rc != 1)
				goto out;
			rc = CLI_OK;
			continue;
		}
		switch (c) {
		case 'S':
			no_screen = 1;
			break;
		case 'h':
			cli_usage_attach(stdout);
			goto out;
		case 'p':
			if ((rc = cli_parse_pids(optarg, &pids, &npids)))
				goto out;
			break;
		case OPT_ATTACH_ALL:
			all = 1;
			break;
		case OPT_ATTACH_FULL:
			full = 1;
			break;
		case 'd':
			delay_given = 1;
			if (cli_parse_secs(optarg, &refresh_ns)) {
				rc = cli_usage_error("-d: '%s' is not a number of seconds", optarg);
				goto out;
			}
			break;
		case 'o':
			out = optarg;
			break;
		case CLI_OPT_BASELINE:
			baseline = optarg;
			break;
		case CLI_OPT_EVERY:
			if (cli_parse_secs(optarg, &every_ns)) {
				rc = cli_usage_error("--every: '%s' is not a duration (10s, 1m)", optarg);
				goto out;
			}
			no_screen = 1;
			break;
		case CLI_OPT_INJECT:
			inject = 1;
			break;
		default:
			rc = cli_getopt_error(c, argv);
			goto out;
		}
	}
	if (baseline) { /* read before attaching: a bad file stops here */
		struct cli_load_opts blo;
		cli_load_opts_init(&blo);
		if ((rc = cli_baseline_load(baseline, &blo, &base)))
			goto out;
		scr.o.baseline = base;
	}
	if (optind < argc) {
		char esc[128];
		pt_escape_term(esc, sizeof esc, argv[optind], strlen(argv[optind]), 60, 0);
		rc = cli_usage_error("unknown command '%s'", esc);
		goto out;
	}
	if (all && npids) {
		rc = cli_usage_error("give either -p PID or --all, not both");
		goto out;
	}
	if (!npids) {
		/* every live session; none: say so (and list what is there) */
		struct pt_session_info *v = NULL;
		size_t n = 0, live = 0;
		if ((rc = cli_list_sessions(0, &v, &n)))
			goto out;
		for (size_t i = 0; i < n; i++)
			live += v[i].valid && !v[i].exited;
		if (!live && n)
			cli_print_sessions(stdout, v, n);
		free(v);
		if (!live) {
			rc = cli_fail("no live proftop session (start one with 'proftop run -- CMD'; "
				      "'proftop ls' lists them)");
			goto out;
		}
		all = 1;
	}
	if (inject && !npids) {
		rc = cli_usage_error("--inject needs -p PID");
		goto out;
	}
	for (size_t i = 0; i < npids; i++)
		if ((rc = cli_prepare_session(pids[i], inject)))
			goto out;
	if ((rc = cli_anomaly_check(&an)))
		goto out;

	struct pt_trace *t = pt_trace_new(PT_STORE_DEFAULT_MAX_BYTES);
	struct pt_live_opts lo = {0};
	struct pt_live_result res;
	lo.session_ops = pt_backend_find("session");
	lo.procstat_ops = pt_backend_find("procstat");
	lo.nvml_ops = pt_backend_find("nvml");
	if (npids == 1) {
		lo.session_pid = pids[0];
	} else {
		lo.pids = pids;
		lo.npids = npids;
		lo.all_sessions = all;
	}
	lo.refresh_ns = refresh_ns;
	lo.every_ns = every_ns;
	lo.out = stdout;
	if (isatty(0) && isatty(1) && !no_screen) {
		scr.o.refresh_ns = delay_given ? refresh_ns : TUI_AUTO_REFRESH_NS;
		scr.o.refresh_auto = !delay_given;
		/* one job: "running" counts from its start, not from this attach */
		uint64_t born = npids == 1 ? cli_process_start_ns(pids[0]) : 0;
		scr.started_ns = born ? born : pt_now_ns();
		scr.o.can_capture = 1; /* key T: a deep capture (capture.h), saved here */
		lo.ui_wait = cli_screen_wait;
		lo.ui_ctx = &scr;
		lo.ctl = &scr.ctl;
		lo.capture_save = 1;
	} else {
		lo.screen = isatty(1) && !no_screen && !every_ns;
	}
	pt_live_signals();
	cli_anomaly_start(&an, &lo, &scr.o);
	pt_live_run(t, &lo, &res);
	cli_screen_stay(&scr, t, &res);
	cli_screen_close(&scr);
	pt_trace_set_source(t, res.describe[0] ? res.describe : "live session");
	cli_final_summary(t, &res, full, lo.screen);
	cli_anomaly_end(&an, t);
	if (res.error[0] && (lo.npids || lo.all_sessions)) {
		char esc[300];
		pt_escape_term(esc, sizeof esc, res.error, strlen(res.error), 0, 0);
		fprintf(stderr, "proftop: warning: %s\n", esc);
	}
	rc = CLI_OK;
	if (out)
		rc = cli_write_trace_rescue(t, out);
	pt_trace_free(t);
out:
	pt_diff_side_free(base);
	free(pids);
	return rc;
}
