/*
 * cli_screen.c - the glue every screen command (view, run, attach) shares:
 * the screen options (--ascii, --no-color, --mouse, -n, --exit-on-end,
 * --capture-steps, --peak-tflops/--peak-gbps), the
 * live loop's ui_wait hook that opens the screen on first use and passes it
 * the session line (state, elapsed time), and the wait after the job ended:
 * the screen stays ("exited (code N)") until q.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "live/live.h"
#include "proftop/shm.h"

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
	case CLI_OPT_EXIT_ON_END:
		o->exit_on_end = 1;
		return 1;
	case 'n':
		if (cli_parse_count(arg, UINT32_MAX, &n) || n == 0)
			return cli_usage_error("-n: '%s' is not a positive count", arg);
		o->max_refreshes = n;
		return 1;
	case CLI_OPT_CAPTURE_STEPS: {
		int rc = cli_opt_capture_steps(arg, &o->capture_steps);
		return rc ? rc : 1;
	}
	}
	return cli_peak_opt(&o->peak_tflops, &o->peak_gbps, c, arg);
}

int cli_peak_opt(double *tflops, double *gbps, int c, const char *arg)
{
	if (c != CLI_OPT_PEAK_TFLOPS && c != CLI_OPT_PEAK_GBPS)
		return 0;
	char *end;
	double v = strtod(arg, &end);
	if (end == arg || *end || !(v > 0) || v > 1e9)
		return cli_usage_error("%s needs a positive number",
				       c == CLI_OPT_PEAK_TFLOPS ? "--peak-tflops" : "--peak-gbps");
	*(c == CLI_OPT_PEAK_TFLOPS ? tflops : gbps) = v;
	return 1;
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
	struct tui_status st = {0};
	snprintf(s->describe, sizeof s->describe, "%s", res->describe[0] ? res->describe : "live session");
	size_t dl = strlen(s->describe);
	if (dl > 9 && !strcmp(s->describe + dl - 9, " [exited]"))
		s->describe[dl - 9] = 0;
	st.describe = s->describe;
	if (res->child_done && WIFSIGNALED(res->child_status))
		snprintf(s->state, sizeof s->state, "exited (signal %d)", WTERMSIG(res->child_status));
	else if (res->child_done)
		snprintf(s->state, sizeof s->state, "exited (code %d)",
			 pt_live_exit_code(res->child_status));
	else
		snprintf(s->state, sizeof s->state, "%s",
			 !res->session_found ? "waiting" : res->session_exited ? "exited" : "running");
	st.state = s->state;
	st.started_ns = s->started_ns;
	/* a CMD that failed on its own (not stopped by q or Ctrl-C): its last
	 * lines where the empty tables would leave the user guessing */
	int failed = cli_child_failed(res);
	if (failed && s->log && !s->failure_read) {
		s->failure_read = 1;
		int n = snprintf(s->failure, sizeof s->failure, "%s\n", s->log);
		if (n > 0 && (size_t)n < sizeof s->failure)
			cli_log_tail(s->log, 8, s->failure + n, sizeof s->failure - (size_t)n);
	}
	st.failure = failed && s->failure_read ? s->failure : NULL;
	st.live = !res->session_exited && !res->child_done;
	int quit = tui_wait(s->u, &st, wait_ns);
	uint32_t cap = tui_take_capture(s->u);
	if (cap)
		s->ctl.capture_steps = cap;
	if (quit) {
		int how = tui_quit_how(s->u);
		cli_screen_close(s);
		s->failed = 1; /* closed: do not reopen */
		return how == TUI_QUIT_DETACH ? 2 : 1;
	}
	return 0;
}

static volatile sig_atomic_t stay_stop;
static void on_stay_signal(int sig)
{
	(void)sig;
	stay_stop = 1;
}

void cli_screen_stay(struct cli_screen *s, struct pt_trace *t, const struct pt_live_result *res)
{
	if (!s->u || s->o.exit_on_end || res->ui_quit || res->interrupted || res->timed_out)
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stay_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	stay_stop = 0;
	while (!stay_stop && s->u && !cli_screen_wait(s, t, res, 250000000ull))
		;
}

void cli_screen_close(struct cli_screen *s)
{
	tui_close(s->u);
	s->u = NULL;
}

void cli_final_summary(struct pt_trace *t, const struct pt_live_result *res, int full, int clear)
{
	struct winsize ws;
	if (!full && isatty(1) && ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
		pt_live_print_brief(stdout, t, res, ws.ws_col);
		return;
	}
	pt_live_print(stdout, t, res, 0, clear, NULL, NULL);
}
