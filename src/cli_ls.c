/*
 * cli_ls.c - `proftop ls` (this user's live sessions, and the cleanup of
 * stale ones) and attaching: `proftop` with no command (or --all) attaches
 * to every live session of the user, picking up those that start later
 * (the ranks torchrun starts over a few seconds); `proftop -p PID` attaches
 * to one, `-p A,B,...` to several. The text view refreshes every -d
 * seconds until Ctrl-C or the processes exit, then prints the final
 * summary (with several ranks, the Rank Summary too) and writes a Chrome
 * trace with -o. Also the pid-list helpers record and serve share.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "live.h"
#include "proftop/backend.h"
#include "proftop/diff.h"
#include "proftop/error.h"
#include "proftop/session.h"
#include "proftop/store.h"
#include "util.h"

void cli_usage_ls(FILE *f)
{
	fputs("Usage: proftop ls\n"
	      "\n"
	      "List this user's proftop sessions: PID, state (running or exited), age, rank\n"
	      "(RANK, else LOCAL_RANK, of its environment), events dropped by the probe, and\n"
	      "the command line. Segments of processes that are gone, older than 10 minutes\n"
	      "and read by no one are removed (and counted).\n"
	      "The directory is $PROFTOP_SESSION_DIR, else /dev/shm/proftop-UID.\n"
	      "\n"
	      "Options:\n"
	      "  -h, --help   show this help\n",
	      f);
}

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

int cli_parse_pids(const char *arg, int32_t **pids, size_t *n)
{
	const char *p = arg;
	char esc[64];
	pt_escape_term(esc, sizeof esc, arg, strlen(arg), 40, 0);
	for (;;) {
		size_t len = strcspn(p, ",");
		char one[16];
		uint64_t v;
		if (len == 0 || len >= sizeof one)
			return cli_usage_error("-p: '%s' is not a list of process ids", esc);
		memcpy(one, p, len);
		one[len] = 0;
		if (cli_parse_count(one, INT32_MAX, &v) || v == 0)
			return cli_usage_error("-p: '%s' is not a list of process ids", esc);
		if (*n == CLI_MAX_PIDS)
			return cli_usage_error("-p: more than %d process ids", CLI_MAX_PIDS);
		size_t i = 0;
		while (i < *n && (*pids)[i] != (int32_t)v)
			i++;
		if (i == *n) { /* a pid given twice is one session */
			*pids = pt_xrealloc(*pids, (*n + 1) * sizeof **pids);
			(*pids)[(*n)++] = (int32_t)v;
		}
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

int cli_check_session(int32_t pid)
{
	char path[600], err[600], esc[700];
	struct pt_session *s;
	int rc = pt_session_path(pid, path, sizeof path, err, sizeof err);
	if (rc == 0)
		rc = pt_session_open(path, &s, err, sizeof err);
	if (rc) {
		if (rc == PT_ENOENT)
			return cli_fail("no proftop session for pid %d (see 'proftop ls')", (int)pid);
		pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
		return cli_fail("%s", esc);
	}
	pt_session_close(s);
	return CLI_OK;
}

int cli_live_pids(int32_t **pids, size_t *n)
{
	struct pt_session_info *v;
	size_t nv;
	char err[256], esc[300];
	*pids = NULL;
	*n = 0;
	if (pt_session_list(&v, &nv, 0, NULL, err, sizeof err)) {
		pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
		return cli_fail("%s", esc);
	}
	for (size_t i = 0; i < nv; i++) {
		if (!v[i].valid || v[i].exited || *n == CLI_MAX_PIDS)
			continue;
		*pids = pt_xrealloc(*pids, (*n + 1) * sizeof **pids);
		(*pids)[(*n)++] = v[i].pid;
	}
	free(v);
	return CLI_OK;
}

static void fmt_age(char *buf, size_t len, uint64_t ns)
{
	uint64_t s = ns / 1000000000ull;
	if (s < 120)
		snprintf(buf, len, "%" PRIu64 "s", s);
	else if (s < 7200)
		snprintf(buf, len, "%" PRIu64 "m", s / 60);
	else if (s < 172800)
		snprintf(buf, len, "%" PRIu64 "h", s / 3600);
	else
		snprintf(buf, len, "%" PRIu64 "d", s / 86400);
}

static void print_list(FILE *f, const struct pt_session_info *v, size_t n)
{
	fprintf(f, "%-8s %-8s %6s %5s %9s  %s\n", "PID", "STATE", "AGE", "RANK", "DROPPED",
		"COMMAND");
	for (size_t i = 0; i < n; i++) {
		const struct pt_session_info *in = &v[i];
		char esc[512], age[24], rank[24];
		if (!in->valid) {
			pt_escape_term(esc, sizeof esc, in->why, strlen(in->why), 100, 0);
			fprintf(f, "%-8d %-8s %6s %5s %9s  (refused: %s)\n", (int)in->pid, "invalid",
				"-", "-", "-", esc);
			continue;
		}
		fmt_age(age, sizeof age, in->age_ns);
		if (in->rank >= 0)
			snprintf(rank, sizeof rank, "%" PRId64, in->rank);
		else
			snprintf(rank, sizeof rank, "-");
		pt_escape_term(esc, sizeof esc, in->cmdline, strlen(in->cmdline), 100, 0);
		fprintf(f, "%-8d %-8s %6s %5s %9" PRIu64 "  %s\n", (int)in->pid,
			in->exited ? "exited" : "running", age, rank, in->dropped, esc);
	}
}

static int list_sessions(int clean, struct pt_session_info **v, size_t *n)
{
	char err[512], esc[600];
	size_t cleaned = 0;
	int rc = pt_session_list(v, n, clean, &cleaned, err, sizeof err);
	if (rc) {
		pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
		return cli_fail("%s", esc);
	}
	if (cleaned)
		fprintf(stderr, "proftop: removed %zu stale session%s of exited processes\n", cleaned,
			cleaned == 1 ? "" : "s");
	return CLI_OK;
}

int cli_ls(int argc, char **argv)
{
	if (argc > 1) {
		if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
			cli_usage_ls(stdout);
			return CLI_OK;
		}
		char esc[128];
		pt_escape_term(esc, sizeof esc, argv[1], strlen(argv[1]), 60, 0);
		return cli_usage_error("ls: unexpected argument '%s'", esc);
	}
	struct pt_session_info *v = NULL;
	size_t n = 0;
	int rc = list_sessions(1, &v, &n);
	if (rc)
		return rc;
	if (!n)
		printf("no proftop sessions\n");
	else
		print_list(stdout, v, n);
	free(v);
	return CLI_OK;
}

enum { OPT_ATTACH_ALL = 256 };

int cli_attach(int argc, char **argv)
{
	static const struct option longs[] = {
		{"pid", required_argument, NULL, 'p'},
		{"all", no_argument, NULL, OPT_ATTACH_ALL},
		{"delay", required_argument, NULL, 'd'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{"no-screen", no_argument, NULL, 'S'},
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
	int c, rc = CLI_OK, no_screen = 0, inject = 0;
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
		if ((rc = list_sessions(0, &v, &n)))
			goto out;
		for (size_t i = 0; i < n; i++)
			live += v[i].valid && !v[i].exited;
		if (!live && n)
			print_list(stdout, v, n);
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
		scr.started_ns = pt_now_ns();
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
	pt_live_print(stdout, t, &res, 0, lo.screen);
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
