/*
 * cli_ls.c - `proftop ls` (this user's live sessions, and the cleanup of
 * stale ones) and attaching: `proftop` with no command attaches to the only
 * live session or lists them, `proftop -p PID` attaches to one; the text
 * view refreshes every -d seconds until Ctrl-C or the process exits, then
 * prints the final summary (and writes a Chrome trace with -o).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "live.h"
#include "proftop/backend.h"
#include "proftop/error.h"
#include "proftop/session.h"
#include "proftop/store.h"
#include "util.h"

void cli_usage_ls(FILE *f)
{
	fputs("Usage: proftop ls\n"
	      "\n"
	      "List this user's proftop sessions: PID, state (running or exited), age, rank,\n"
	      "events dropped by the probe, and the command line. Segments of processes that\n"
	      "are gone, older than 10 minutes and read by no one are removed (and counted).\n"
	      "The directory is $PROFTOP_SESSION_DIR, else /dev/shm/proftop-UID.\n"
	      "\n"
	      "Options:\n"
	      "  -h, --help   show this help\n",
	      f);
}

void cli_usage_attach(FILE *f)
{
	fputs("Usage: proftop [-p PID] [-d SECS] [-o OUT.json]\n"
	      "\n"
	      "Attach to a running session and show its summary, refreshed every -d seconds\n"
	      "(default 1), until Ctrl-C or the process exits. Without -p, attach to the only\n"
	      "live session of this user, or list them when there are several.\n"
	      "\n"
	      "Options:\n"
	      "  -p, --pid PID       the session of PID\n"
	      "  -d, --delay SECS    refresh period (default: the screen 0.15, longer\n"
	      "                      when the session grows; the text view 1)\n"
	      "  -o, --output FILE   write a Chrome trace when done\n"
	      "      --no-screen     no screen: only the final summary (also off a terminal)\n"
	      CLI_SCREEN_HELP
	      "  -h, --help          show this help\n",
	      f);
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

int cli_attach(int argc, char **argv)
{
	static const struct option longs[] = {
		{"pid", required_argument, NULL, 'p'},
		{"delay", required_argument, NULL, 'd'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{"no-screen", no_argument, NULL, 'S'},
		CLI_SCREEN_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	uint64_t pid = 0, refresh_ns = 1000000000ull;
	int delay_given = 0;
	const char *out = NULL;
	int c, rc, no_screen = 0;
	struct cli_screen scr = {0};
	tui_opts_init(&scr.o);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hp:d:o:n:", longs, NULL)) != -1) {
		if ((rc = cli_screen_opt(&scr.o, c, optarg)) != 0) {
			if (rc != 1)
				return rc;
			continue;
		}
		switch (c) {
		case 'S':
			no_screen = 1;
			break;
		case 'h':
			cli_usage_attach(stdout);
			return CLI_OK;
		case 'p':
			if (cli_parse_count(optarg, INT32_MAX, &pid) || pid == 0)
				return cli_usage_error("-p: '%s' is not a process id", optarg);
			break;
		case 'd':
			delay_given = 1;
			if (cli_parse_secs(optarg, &refresh_ns))
				return cli_usage_error("-d: '%s' is not a number of seconds", optarg);
			break;
		case 'o':
			out = optarg;
			break;
		default:
			return cli_getopt_error(c, argv);
		}
	}
	if (optind < argc) {
		char esc[128];
		pt_escape_term(esc, sizeof esc, argv[optind], strlen(argv[optind]), 60, 0);
		return cli_usage_error("unknown command '%s'", esc);
	}
	if (!pid) {
		struct pt_session_info *v = NULL;
		size_t n = 0, live = 0;
		if ((rc = list_sessions(0, &v, &n)))
			return rc;
		for (size_t i = 0; i < n; i++) {
			if (v[i].valid && !v[i].exited) {
				live++;
				pid = (uint64_t)v[i].pid;
			}
		}
		if (live > 1) {
			printf("%zu live sessions; pick one with 'proftop -p PID':\n", live);
			print_list(stdout, v, n);
		}
		free(v);
		if (live > 1)
			return CLI_OK;
		if (live == 0)
			return cli_fail("no live proftop session (start one with 'proftop run -- CMD'; "
					"'proftop ls' lists them)");
	}
	char path[600], err[600], esc[700];
	struct pt_session *s;
	if ((rc = pt_session_path((int32_t)pid, path, sizeof path, err, sizeof err)) == 0)
		rc = pt_session_open(path, &s, err, sizeof err);
	if (rc) {
		if (rc == PT_ENOENT)
			return cli_fail("no proftop session for pid %d (see 'proftop ls')", (int)pid);
		pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
		return cli_fail("%s", esc);
	}
	pt_session_close(s);

	struct pt_trace *t = pt_trace_new(PT_STORE_DEFAULT_MAX_BYTES);
	struct pt_live_opts lo = {0};
	struct pt_live_result res;
	lo.session_ops = pt_backend_find("session");
	lo.procstat_ops = pt_backend_find("procstat");
	lo.nvml_ops = pt_backend_find("nvml");
	lo.session_pid = (int32_t)pid;
	lo.refresh_ns = refresh_ns;
	lo.out = stdout;
	if (isatty(0) && isatty(1) && !no_screen) {
		scr.o.refresh_ns = delay_given ? refresh_ns : TUI_AUTO_REFRESH_NS;
		scr.o.refresh_auto = !delay_given;
		scr.started_ns = pt_now_ns();
		lo.ui_wait = cli_screen_wait;
		lo.ui_ctx = &scr;
	} else {
		lo.screen = isatty(1) && !no_screen;
	}
	pt_live_signals();
	pt_live_run(t, &lo, &res);
	cli_screen_close(&scr);
	pt_trace_set_source(t, res.describe[0] ? res.describe : "live session");
	pt_live_print(stdout, t, &res, 0, lo.screen);
	rc = CLI_OK;
	if (out)
		rc = cli_write_trace_rescue(t, out);
	pt_trace_free(t);
	return rc;
}
