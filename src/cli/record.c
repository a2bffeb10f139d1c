/*
 * cli/record.c - `proftop record -o OUT.json [--duration S] -- CMD...`,
 * `proftop record -p PID[,PID...] -o OUT.json [--duration S]` and
 * `proftop record --all -o OUT.json`: the live loop without a screen;
 * writes a Chrome trace at the end (several sessions: one process per rank,
 * with the process table that `proftop report` turns into a Rank Summary).
 *
 * When recording ends: CMD exits (trace written, its exit code passed
 * through), Ctrl-C (forwarded to CMD, which is waited for, then the trace is
 * written), or --duration elapses. With a CMD, --duration stops recording
 * only: the trace is written at once, proftop detaches (the probe goes back
 * to flight recording) and then waits for CMD and passes its exit code
 * through, so a batch script that wraps its job in `proftop record` keeps
 * waiting for the job. With -p, --duration (or Ctrl-C, or the process's
 * exit) ends the attach and proftop exits 0; with several sessions, when
 * all of them have exited (--all: sessions that start meanwhile are added).
 */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "analyze/gate_metrics.h"
#include "live/live.h"
#include "proftop/backend.h"
#include "proftop/chrome.h"
#include "proftop/error.h"
#include "proftop/session.h"
#include "proftop/store.h"
#include "model/safefile.h"
#include "model/util.h"

void cli_usage_record(FILE *f)
{
	fputs("Usage: proftop record -o OUT.json [OPTIONS] -- CMD [ARGS...]\n"
	      "       proftop record -p PID[,PID...] -o OUT.json [OPTIONS]\n"
	      "       proftop record --all -o OUT.json [OPTIONS]\n"
	      "\n"
	      "Record a training job without a screen and write a Chrome trace (open it in\n"
	      "Perfetto, chrome://tracing or 'proftop report'). With CMD, start it with the\n"
	      "probe injected and record until it exits; with -p, attach to the running\n"
	      "session of PID (several: one process per rank in the trace); with --all,\n"
	      "to every live session of this user and those that start meanwhile. Ctrl-C is\n"
	      "passed to CMD; the trace is written after it exits.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output FILE    the Chrome trace to write (required; replaced; - is stdout)\n"
	      "  -p, --pid PID[,PID...]  attach to the session of PID (or of each PID)\n"
	      "                       instead of starting CMD\n"
	      "      --all            attach to every live session of this user\n"
	      "      --duration SECS  stop recording after SECS; with CMD, proftop then\n"
	      "                       detaches, waits for CMD and passes its exit code on\n"
	      "      --log FILE       CMD's stdout and stderr (default proftop-run-PID.log in\n"
	      "                       $XDG_STATE_HOME/proftop or ~/.local/state/proftop)\n"
	      "      --every SECS     print one line of figures every SECS (10s, 1m): step,\n"
	      "                       ips, reader_cost, batch_cost, reader ratio, phase\n"
	      "                       shares, dropped events, over the steps since the last\n"
	      "                       line\n"
	      CLI_HANG_HELP
	      CLI_STRAGGLER_HELP
	      "      --capture-steps N  the steps --capture-on-straggler captures (default 5)\n"
	      "      --torch-ops      also aten operators in a PyTorch job (CUDA builds of\n"
	      "                       torch; see docs/python.md)\n"
	      "      --inject         with -p: a Python process with no session (not started\n"
	      "                       under proftop): load proftop and its PyTorch helper into\n"
	      "                       it (gdb, or sys.remote_exec on Python 3.14+)\n"
	      "      --max-mem SIZE   memory for kept events (default 1G)\n"
	      "      --fail-if EXPR   at the end, exit 3 when EXPR holds on the recording\n"
	      "                       (e.g. 'ips<120'; see 'proftop help report')\n"
	      CLI_ANOMALY_HELP
	      "                       (with --anomalies or --anomaly-dir, -o is optional)\n"
	      "  -h, --help           show this help\n"
	      "\n"
	      "FILE is written to a temporary beside it and renamed into place (mode 0600),\n"
	      "so it is either the old file or the complete new one. If it cannot be\n"
	      "written (a full disk, no permission), the recording is not lost: proftop\n"
	      "saves it as proftop-rescue-PID-TIME.json in $TMPDIR (else /tmp), else the\n"
	      "current directory, else $HOME, says where on stderr, and exits 1 (or CMD's\n"
	      "non-zero exit code).\n",
	      f);
}

enum { OPT_DURATION = 256, OPT_LOG, OPT_MAXMEM, OPT_ALL };
enum { OPT_FAIL_IF = 330, OPT_TORCH_OPS };
static uint64_t rec_every_ns; /* --every */
static int rec_inject;        /* --inject */
static uint64_t rec_hang_ns;  /* --hang-after */
static double rec_straggler;  /* --capture-on-straggler */
static uint32_t rec_capture_steps; /* --capture-steps */

/* --fail-if, parsed before anything starts; evaluated on the recorded trace. */
static struct pt_gate *rec_gate;

/* The gate on the recording: 0, or PT_EXIT_GATE / _USAGE / _ERROR (printed). */
static int record_gate(struct pt_trace *t)
{
	if (!rec_gate)
		return 0;
	struct pt_summary *s = pt_summarize(t, NULL);
	struct pt_gate_figures gf = {t, s};
	int rc = pt_gate_cli_eval(rec_gate, pt_gate_metric, &gf, pt_gate_list_report_figures,
				  stderr);
	pt_summary_free(s);
	return rc;
}

static int record(int argc, char **argv, const char *out, const char *log, uint64_t duration_ns,
		  const int32_t *pids, size_t npids, int all, const struct cli_load_opts *lopt,
		  struct cli_anomaly *an);

int cli_record(int argc, char **argv)
{
	static const struct option longs[] = {
		{"output", required_argument, NULL, 'o'},
		{"pid", required_argument, NULL, 'p'},
		{"all", no_argument, NULL, OPT_ALL},
		{"duration", required_argument, NULL, OPT_DURATION},
		{"log", required_argument, NULL, OPT_LOG},
		{"max-mem", required_argument, NULL, OPT_MAXMEM},
		{"fail-if", required_argument, NULL, OPT_FAIL_IF},
		{"help", no_argument, NULL, 'h'},
		{"torch-ops", no_argument, NULL, OPT_TORCH_OPS},
		CLI_EVERY_LONGOPT,
		CLI_HANG_LONGOPT,
		CLI_STRAGGLER_LONGOPT,
		CLI_CAPTURE_LONGOPT,
		CLI_INJECT_LONGOPT,
		CLI_ANOMALY_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	const char *out = NULL, *log = NULL;
	struct cli_anomaly an;
	uint64_t duration_ns = 0;
	int32_t *pids = NULL;
	size_t npids = 0;
	int all = 0;
	struct cli_load_opts lopt;
	int c, rc;
	cli_load_opts_init(&lopt);
	cli_anomaly_init(&an);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:ho:p:", longs, NULL)) != -1) {
		if ((rc = cli_anomaly_opt(&an, c, optarg)) != 0) {
			if (rc != 1)
				goto out;
			continue;
		}
		switch (c) {
		case 'h':
			cli_usage_record(stdout);
			rc = CLI_OK;
			goto out;
		case 'o':
			out = optarg;
			break;
		case 'p':
			if ((rc = cli_parse_pids(optarg, &pids, &npids)))
				goto out;
			break;
		case OPT_ALL:
			all = 1;
			break;
		case OPT_DURATION:
			if (cli_parse_secs(optarg, &duration_ns)) {
				rc = cli_usage_error("--duration: '%s' is not a number of seconds",
						     optarg);
				goto out;
			}
			break;
		case OPT_LOG:
			log = optarg;
			break;
		case OPT_MAXMEM:
			if ((rc = cli_opt_max_mem(&lopt, optarg)))
				goto out;
			break;
		case CLI_OPT_EVERY:
			if (cli_parse_secs(optarg, &rec_every_ns)) {
				rc = cli_usage_error("--every: '%s' is not a duration (10s, 1m)", optarg);
				goto out;
			}
			break;
		case CLI_OPT_HANG_AFTER:
			if ((rc = cli_opt_hang_after(optarg, &rec_hang_ns)))
				goto out;
			break;
		case OPT_TORCH_OPS:
			setenv("PROFTOP_TORCH_OPS", "1", 1); /* the child inherits it */
			break;
		case CLI_OPT_CAPTURE_STRAGGLER:
			if ((rc = cli_opt_capture_straggler(optarg, &rec_straggler)))
				goto out;
			break;
		case CLI_OPT_CAPTURE_STEPS:
			if ((rc = cli_opt_capture_steps(optarg, &rec_capture_steps)))
				goto out;
			break;
		case CLI_OPT_INJECT:
			rec_inject = 1;
			break;
		case OPT_FAIL_IF:
			pt_gate_free(rec_gate);
			rec_gate = NULL;
			if ((rc = pt_gate_cli_parse(optarg, &rec_gate, stderr)) ||
			    (rc = pt_gate_cli_check_names(rec_gate, pt_gate_report_name, NULL,
							  pt_gate_list_report_figures, stderr)))
				goto out;
			break;
		default:
			rc = cli_getopt_error(c, argv);
			goto out;
		}
	}
	rc = record(argc, argv, out, log, duration_ns, pids, npids, all, &lopt, &an);
out:
	pt_gate_free(rec_gate);
	rec_gate = NULL;
	free(pids);
	return rc;
}

/* After the options: checks the sources, runs the loop, writes the trace. */
static int record(int argc, char **argv, const char *out, const char *log, uint64_t duration_ns,
		  const int32_t *pids, size_t npids, int all, const struct cli_load_opts *lopt,
		  struct cli_anomaly *an)
{
	int rc;
	if (!out && !an->on)
		return cli_usage_error("record: missing -o OUT.json (or --anomaly-dir DIR)");
	if (out) { /* a device, a FIFO...: refused before CMD starts, not after */
		char err[PATH_MAX + 128], esc[PATH_MAX + 256];
		if (pt_safe_check(out, 1, err, sizeof err)) {
			pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
			return cli_fail("%s", esc);
		}
	}
	int have_cmd = optind < argc;
	if (rec_inject && !npids)
		return cli_usage_error("record: --inject needs -p PID");
	if (have_cmd + (npids > 0) + all > 1)
		return cli_usage_error("record: give one of -p PID, --all or a CMD");
	if (!have_cmd && !npids && !all)
		return cli_usage_error(
		    "record: missing CMD (proftop record -o OUT -- CMD...), -p PID or --all");

	struct pt_live_opts lo = {0};
	struct pt_live_result res;
	lo.session_ops = pt_backend_find("session");
	lo.procstat_ops = pt_backend_find("procstat");
	lo.nvml_ops = pt_backend_find("nvml");
	lo.duration_ns = duration_ns;
	lo.every_ns = rec_every_ns;
	lo.out = stdout;
	lo.hang_after_ns = rec_hang_ns;
	lo.hang_out = stderr;
	lo.capture_on_straggler = rec_straggler;
	lo.capture_steps = rec_capture_steps;
	if (rec_straggler > 0) {
		lo.capture_save = 1;
		lo.capture_out = stderr;
	}
	if (all) {
		int32_t *live = NULL;
		size_t nlive = 0;
		if ((rc = cli_live_pids(&live, &nlive)))
			return rc;
		free(live);
		if (!nlive)
			return cli_fail("no live proftop sessions (see 'proftop ls')");
		lo.all_sessions = 1;
	} else if (!have_cmd) {
		/* refuse a bad segment with its reason before starting */
		for (size_t i = 0; i < npids; i++)
			if ((rc = cli_prepare_session(pids[i], rec_inject)))
				return rc;
		if (npids == 1) {
			lo.session_pid = pids[0];
		} else {
			lo.pids = pids;
			lo.npids = npids;
		}
	}
	int multi = lo.npids || lo.all_sessions || lo.launch_id;
	if ((rc = cli_anomaly_check(an))) /* before CMD starts or anything is read */
		return rc;
	pt_live_signals();
	char log_used[PATH_MAX] = "";
	if (have_cmd) {
		pid_t child;
		char esc[PATH_MAX];
		if ((rc = cli_launch(argv + optind, log, &child, log_used, sizeof log_used,
				      &lo.launch_id)))
			return rc;
		pt_escape_term(esc, sizeof esc, log_used, strlen(log_used), 0, 0);
		fprintf(stderr, "proftop: recording pid %d; its output goes to %s\n", (int)child, esc);
		lo.child = child;
	}

	struct pt_trace *t = pt_trace_new(lopt->max_mem_bytes);
	pt_trace_set_source(t, "live session");
	cli_anomaly_start(an, &lo, NULL);
	pt_live_run(t, &lo, &res);
	if (lo.launch_id)
		cli_reap_sessions(lo.launch_id); /* read whole: nothing left to keep */
	if (res.describe[0])
		pt_trace_set_source(t, res.describe);
	int anomaly_failed = cli_anomaly_end(an, t);
	if (res.error[0]) {
		char esc[300];
		pt_escape_term(esc, sizeof esc, res.error, strlen(res.error), 0, 0);
		fprintf(stderr, "proftop: warning: the session failed: %s\n", esc);
	}
	int probe_off = lo.launch_id && cli_say_launched(t, &res, lo.child, log_used);
	if (lo.child && cli_child_failed(&res))
		cli_say_failed(stderr, log_used, res.child_status);
	else if (multi && !res.session_found)
		fprintf(stderr, "proftop: no session was found\n");
	else if (multi)
		fprintf(stderr, "proftop: recorded %s\n", res.describe);
	else if (!res.session_found && !lo.launch_id) /* a launched job's: said above */
		fprintf(stderr, "proftop: no session was found for pid %d (no probe loaded?)\n",
			(int)lo.session_pid);
	else if (res.session_exited && !lo.launch_id) /* a launched job's end: said above */
		fprintf(stderr, "proftop: process %d exited\n", (int)lo.session_pid);
	rc = out ? cli_write_trace_rescue(t, out) : anomaly_failed ? CLI_FAIL : CLI_OK;
	if (probe_off && rc == CLI_OK)
		rc = CLI_FAIL; /* the trace is saved, but the job was not profiled */
	if (rc == CLI_OK)
		rc = record_gate(t); /* a failing CMD's own exit code still wins below */
	pt_trace_free(t);
	if (lo.child) {
		int st = res.child_status;
		if (!res.child_done) {
			fprintf(stderr, "proftop: recording stopped after --duration; waiting for pid %d\n",
				(int)lo.child);
			st = cli_wait_child(lo.child);
		}
		int code = pt_live_exit_code(st);
		return code ? code : rc;
	}
	return rc;
}
