/*
 * cli/capture.c - `proftop capture -p PID [--steps N] [-o FILE]`: asks the
 * PyTorch helper inside a job that runs under proftop (run, record, serve,
 * or attached with --inject) to run torch's profiler for its next N steps,
 * follows the capture on stderr, merges the finished trace with the
 * session's own steps, phases and modules (as a reader of the session, like
 * the screen), saves the captured steps as a Chrome trace and says what the
 * capture cost the job (its steps' times during the capture against before
 * and after). Any other reader of the session (a screen in another pane)
 * merges the same capture into its own view.
 *
 * Exit: 0 when the capture was saved; 1 when it was refused (no helper, one
 * already running, the job exiting), failed inside the job (torch's
 * profiler), was cancelled (Ctrl-C, --wait passed with no step boundary,
 * the job exited) or could not be saved; 2 on a bad command line.
 */
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "proftop/backend.h"
#include "proftop/capture.h"
#include "proftop/error.h"
#include "proftop/session.h"
#include "proftop/shm.h"
#include "model/util.h"

#define CAPTURE_POLL_NS 100000000ull
#define CAPTURE_AFTER_WAIT_NS (10ull * 1000000000ull)
#define CAPTURE_SETTLE_NS 500000000ull

void cli_usage_capture(FILE *f)
{
	fputs("Usage: proftop capture -p PID [--steps N] [-o FILE] [OPTIONS]\n"
	      "\n"
	      "Ask a PyTorch job that runs under proftop (run, record, serve, or attached\n"
	      "with --inject) to run torch's own profiler for its next N steps, starting and\n"
	      "stopping at step boundaries: every aten operator with its input shapes, and\n"
	      "its FLOPs where they are known. proftop puts the capture on the session's\n"
	      "clock, nests the operators under the modules and phases that proftop records\n"
	      "all the time, saves the captured steps as a Chrome trace and says what the\n"
	      "capture cost: the job's step time during it against before and after. A\n"
	      "screen attached to the same job shows the capture too (key T asks from there).\n"
	      "\n"
	      "Options:\n"
	      "  -p, --pid PID        the job's process (its session: 'proftop ls')\n"
	      "      --steps N        steps to capture (default 5, 1 to 1000)\n"
	      "  -o, --output FILE    the Chrome trace to write (replaced; default\n"
	      "                       ./proftop-capture-PID-N.json, N the capture's number)\n"
	      "      --wait SECS      give up (and withdraw the request) when the job has\n"
	      "                       reached no step boundary after SECS (default 120: a job\n"
	      "                       between epochs, or evaluating, has none)\n"
	      "      --no-after       exit once saved, without timing the steps after it\n"
	      "      --max-mem SIZE   memory for kept events (default 1G)\n"
	      "  -h, --help           show this help\n"
	      "\n"
	      "Only one capture runs in a job at a time. While proftop's own GPU collector\n"
	      "runs in the job, torch records CPU activity only and proftop's kernels link\n"
	      "to the captured operators; otherwise torch collects CUDA activity itself.\n"
	      "Ctrl-C withdraws the request (a capture in progress stops at the next step\n"
	      "boundary and keeps nothing).\n",
	      f);
}

static volatile sig_atomic_t cap_sigs;

static void on_sig(int sig)
{
	(void)sig;
	cap_sigs++;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
	nanosleep(&ts, NULL);
}

static void say(const struct pt_capture *c)
{
	char line[1024];
	pt_capture_describe(c, line, sizeof line, 0);
	fprintf(stderr, "proftop: %s\n", line);
}

int cli_capture(int argc, char **argv)
{
	enum { OPT_STEPS = 600, OPT_WAIT, OPT_NO_AFTER };
	static const struct option longopts[] = {
	    {"pid", required_argument, NULL, 'p'},
	    {"steps", required_argument, NULL, OPT_STEPS},
	    {"output", required_argument, NULL, 'o'},
	    {"wait", required_argument, NULL, OPT_WAIT},
	    {"no-after", no_argument, NULL, OPT_NO_AFTER},
	    {"max-mem", required_argument, NULL, CLI_OPT_MAXMEM},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct cli_load_opts lo;
	cli_load_opts_init(&lo);
	uint64_t pid = 0, steps = 5, wait_ns = 120ull * 1000000000ull;
	const char *out = NULL;
	int no_after = 0, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (cli_parse_count(optarg, INT32_MAX, &pid) || pid == 0)
				return cli_usage_error("-p needs a process id");
			break;
		case OPT_STEPS:
			if (cli_parse_count(optarg, PT_SHM_CTL_MAX_STEPS, &steps) || steps == 0)
				return cli_usage_error("--steps takes 1 to %u", PT_SHM_CTL_MAX_STEPS);
			break;
		case 'o':
			out = optarg;
			break;
		case OPT_WAIT:
			if (cli_parse_secs(optarg, &wait_ns) != 0)
				return cli_usage_error("--wait needs a duration (30, 2m)");
			break;
		case OPT_NO_AFTER:
			no_after = 1;
			break;
		case 'h':
			cli_usage_capture(stdout);
			return CLI_OK;
		default: {
			int r = cli_load_opt(&lo, c, optarg);
			if (r == 1)
				break;
			if (r)
				return r;
			return cli_getopt_error(c, argv);
		}
		}
	}
	if (optind < argc)
		return cli_usage_error("capture takes no arguments (did you mean -p PID?)");
	if (!pid)
		return cli_usage_error("capture needs -p PID (see 'proftop ls')");
	if (cli_check_session((int32_t)pid) != CLI_OK)
		return CLI_FAIL;

	struct pt_backend *b = NULL;
	struct pt_backend_args ba = {0};
	char err[600], esc[700];
	ba.pid = (int32_t)pid;
	if (pt_backend_session.open(&b, &ba, err, sizeof err) != 0) {
		pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
		return cli_fail("%s", esc);
	}
	struct pt_trace *t = pt_trace_new(lo.max_mem_bytes);
	int rc = CLI_FAIL;
	/* attach first: the steps before the capture are the cost's baseline.
	 * Reading a session from the start (the first drain takes the rings'
	 * backlog, on a machine where this command shares the job's cores)
	 * slows the job's steps of that moment: they would inflate the
	 * baseline. Poll for CAPTURE_SETTLE_NS at the usual rate first. */
	uint64_t settle_end = pt_now_ns() + CAPTURE_SETTLE_NS;
	while (b->ops->poll(b, t, pt_now_ns()) != PT_ENOENT && pt_now_ns() < settle_end)
		sleep_ns(CAPTURE_POLL_NS);
	struct pt_session *s = pt_backend_session_of(b);
	uint32_t seq = 0;
	char why[300];
	if (pt_session_capture_request(s, (uint32_t)steps, 0, 0, &seq, why, sizeof why) != 0) {
		pt_escape_term(esc, sizeof esc, why, strlen(why), 0, 0);
		rc = cli_fail("pid %llu: %s", (unsigned long long)pid, esc);
		goto out;
	}
	fprintf(stderr, "proftop: capture #%u of pid %llu: %llu steps asked for\n", seq,
		(unsigned long long)pid, (unsigned long long)steps);
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sig;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	cap_sigs = 0;
	uint64_t asked = pt_now_ns(), merged_at = 0, shown_ns = 0;
	uint8_t shown = 0xff;
	uint32_t shown_done = 0;
	int cancelled_here = 0, exited = 0;
	struct pt_capture *cap = NULL;
	for (;;) {
		uint64_t now = pt_now_ns();
		if (!exited && b->ops->poll(b, t, now) == PT_ENOENT)
			exited = 1;
		cap = pt_capture_get(t, (int64_t)pid, seq, 0);
		/* progress: each new state, and a running count once a second */
		if (cap && (cap->state != shown ||
			    (cap->done != shown_done && now - shown_ns >= 1000000000ull))) {
			if (cap->state == PT_CAPTURE_RUNNING || cap->state == PT_CAPTURE_WRITING)
				say(cap);
			shown = cap->state;
			shown_done = cap->done;
			shown_ns = now;
		}
		int state = cap ? cap->state : PT_CAPTURE_ASKED;
		if (state == PT_CAPTURE_FAILED || state == PT_CAPTURE_CANCELLED)
			break;
		if (state == PT_CAPTURE_MERGED) {
			if (!merged_at)
				merged_at = now;
			if (no_after || exited || cap->after_n >= pt_capture_cost_want(cap) ||
			    now - merged_at > CAPTURE_AFTER_WAIT_NS)
				break;
		} else if (exited && !cap) {
			break;
		}
		if (cap_sigs && !cancelled_here) {
			cancelled_here = 1;
			if (state == PT_CAPTURE_MERGED)
				break; /* only the steps after were awaited */
			pt_session_capture_cancel(s, seq);
			fprintf(stderr, "proftop: withdrawing capture #%u\n", seq);
		}
		if (state == PT_CAPTURE_ASKED && !cancelled_here && now - asked > wait_ns) {
			cancelled_here = 1;
			pt_session_capture_cancel(s, seq);
			fprintf(stderr,
				"proftop: pid %llu reached no step boundary in %.0f s (between "
				"epochs, evaluating, or stalled?): withdrawing capture #%u\n",
				(unsigned long long)pid, (double)wait_ns / 1e9, seq);
		}
		if (cancelled_here && now - asked > wait_ns + 30ull * 1000000000ull)
			break; /* the job answers nothing: give up waiting */
		sleep_ns(CAPTURE_POLL_NS);
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (!cap || (cap->state != PT_CAPTURE_MERGED)) {
		if (cap) {
			say(cap);
		} else if (exited) {
			fprintf(stderr, "proftop: pid %llu exited before capture #%u started\n",
				(unsigned long long)pid, seq);
		} else {
			fprintf(stderr, "proftop: capture #%u: the job did not answer\n", seq);
		}
		goto out;
	}
	if (pt_capture_save(t, cap, out, NULL, err, sizeof err) != 0) {
		pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
		say(cap);
		rc = cli_fail("%s", esc);
		goto out;
	}
	say(cap);
	rc = CLI_OK;
out:
	b->ops->close(b);
	pt_trace_free(t);
	return rc;
}
