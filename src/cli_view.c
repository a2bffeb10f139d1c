/*
 * cli_view.c - `proftop view FILE`: the full-screen UI over a trace file
 * (tui/), and the glue every screen command shares: the screen options
 * (--ascii, --no-color, --mouse, -n) and the live loop's ui_wait hook that
 * opens the screen on first use and passes it the session line (state,
 * elapsed time). Off a terminal, view prints the text report instead.
 */
#include <getopt.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "live.h"
#include "proftop/report.h"
#include "util.h"

void cli_usage_view(FILE *f)
{
	fputs("Usage: proftop view [OPTIONS] FILE\n"
	      "\n"
	      "Open a trace (Chrome JSON, plain or .gz: proftop, PyTorch/Kineto, Paddle,\n"
	      "MindSpore, msprof) in the full-screen UI: Summary, Operators, Kernels, Timeline,\n"
	      "Memory, Distributed and UserDefined views; press ? for the keys. Off a terminal\n"
	      "the summary tables are printed instead (as proftop report does).\n"
	      "\n"
	      "Options:\n"
	      "  -d, --delay SECS    refresh period (default 1)\n" CLI_SCREEN_HELP
	      "      --max-mem SIZE  memory cap of the event store (default 1G)\n"
	      "  -h, --help          show this help\n",
	      f);
}

int cli_screen_opt(struct tui_opts *o, int c, const char *arg)
{
	uint64_t n;
	switch (c) {
	case CLI_OPT_ASCII:
		o->ascii = 1;
		return 1;
	case CLI_OPT_NOCOLOR:
		o->no_color = 1;
		return 1;
	case CLI_OPT_MOUSE:
		o->mouse = 1;
		return 1;
	case CLI_OPT_NOMOUSE:
		o->mouse = 0;
		return 1;
	case 'n':
		if (cli_parse_count(arg, UINT32_MAX, &n) || n == 0)
			return cli_usage_error("-n: '%s' is not a positive count", arg);
		o->max_refreshes = n;
		return 1;
	}
	return 0;
}

int cli_screen_wait(void *ctx, struct pt_trace *t, const struct pt_live_result *res,
		    uint64_t wait_ns)
{
	struct cli_screen *s = ctx;
	if (!s->u && !s->failed) {
		s->u = tui_open(t, &s->o);
		s->failed = !s->u;
	}
	if (!s->u) {
		struct timespec ts = {(time_t)(wait_ns / 1000000000ull), (long)(wait_ns % 1000000000ull)};
		nanosleep(&ts, NULL);
		return 0;
	}
	struct tui_status st;
	st.describe = res->describe[0] ? res->describe : "live session";
	st.state = !res->session_found ? "waiting" : res->session_exited ? "exited" : "running";
	st.started_ns = s->started_ns;
	st.live = !res->session_exited;
	if (tui_wait(s->u, &st, wait_ns)) {
		cli_screen_close(s);
		s->failed = 1; /* closed: do not reopen */
		return 1;
	}
	return 0;
}

void cli_screen_close(struct cli_screen *s)
{
	tui_close(s->u);
	s->u = NULL;
}

int cli_view(int argc, char **argv)
{
	static const struct option longs[] = {
		{"delay", required_argument, NULL, 'd'},
		{"max-mem", required_argument, NULL, 'M'},
		{"help", no_argument, NULL, 'h'},
		CLI_SCREEN_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	struct tui_opts to;
	struct cli_load_opts lo;
	tui_opts_init(&to);
	cli_load_opts_init(&lo);
	int c, rc;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hd:n:", longs, NULL)) != -1) {
		if ((rc = cli_screen_opt(&to, c, optarg)) != 0) {
			if (rc != 1)
				return rc;
			continue;
		}
		switch (c) {
		case 'h':
			cli_usage_view(stdout);
			return CLI_OK;
		case 'd':
			if (cli_parse_secs(optarg, &to.refresh_ns))
				return cli_usage_error("-d: '%s' is not a number of seconds", optarg);
			break;
		case 'M':
			if ((rc = cli_opt_max_mem(&lo, optarg)))
				return rc;
			break;
		default:
			return cli_getopt_error(c, argv);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("view: expected one FILE (proftop view [OPTIONS] FILE)");
	struct pt_trace *t;
	if ((rc = cli_load_trace(argv[optind], &lo, &t)))
		return rc;
	rc = CLI_OK;
	if (!isatty(0) || !isatty(1)) {
		struct pt_summary *s = pt_summarize(t, NULL);
		struct pt_report_opts ro;
		pt_report_opts_init(&ro);
		pt_report_text(stdout, t, s, &ro);
		pt_summary_free(s);
	} else {
		char esc[300];
		pt_escape_term(esc, sizeof esc, argv[optind], strlen(argv[optind]), 80, 0);
		if (tui_view_file(t, &to, esc) < 0)
			rc = CLI_FAIL;
	}
	pt_trace_free(t);
	return rc;
}
