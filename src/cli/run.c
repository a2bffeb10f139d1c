/*
 * cli/run.c - `proftop run [OPTIONS] -- CMD...`: starts CMD with the probe
 * (libproftop.so) injected (cli_launch.c), shows the screen or a text
 * summary refreshed every -d seconds while it runs, and passes its exit
 * code through.
 */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "live/live.h"
#include "proftop/diff.h"
#include "model/util.h"

void cli_usage_run(FILE *f)
{
	fputs("Usage: proftop run [OPTIONS] -- CMD [ARGS...]\n"
	      "\n"
	      "Start CMD with the probe (libproftop.so) injected and show its summary while\n"
	      "it runs: steps, phases, operators, CPU utilization. On a terminal the screen\n"
	      "shows it live and stays when CMD ends (q quits); otherwise the summary is\n"
	      "printed once at the end. q while CMD runs asks: q or y stops CMD (one\n"
	      "SIGINT; proftop waits for it and prints the final summary), d leaves it\n"
	      "running and closes proftop (proftop -p PID watches it again), any other\n"
	      "key stays. Ctrl-C passes CMD one SIGINT. The exit status is CMD's (128+N\n"
	      "when a signal N ended it; 0 when it was left running).\n"
	      "\n"
	      "Options:\n"
	      "  -d, --delay SECS    refresh period (default: the screen 0.15, longer\n"
	      "                      when the session grows; the text view 1)\n"
	      "      --log FILE      CMD's stdout and stderr (default proftop-run-PID.log in\n"
	      "                      $XDG_STATE_HOME/proftop or ~/.local/state/proftop)\n"
	      "  -o, --output FILE   also write a Chrome trace at the end\n"
	      "      --no-screen     no screen: only the final summary (also off a terminal)\n"
	      "      --full          the final summary's full tables on a terminal too (by\n"
	      "                      default one that fits it; off a terminal, the tables)\n"
	      CLI_EVERY_HELP
	      "      --kill-on-quit  q stops CMD at once, without asking\n"
	      "      --torch-ops     also aten operators in a PyTorch job (CUDA builds of torch:\n"
	      "                      through its NVTX emission; see docs/python.md)\n"
	      "      --max-mem SIZE  memory for kept events (default 1G; see 'proftop --help')\n"
	      CLI_ANOMALY_HELP
	      CLI_BASELINE_HELP
	      CLI_SCREEN_HELP
	      CLI_CAPTURE_HELP
	      CLI_STRAGGLER_HELP
	      CLI_END_HELP
	      "  -h, --help          show this help\n"
	      "\n"
	      "The library is $PROFTOP_LIB, else libproftop.so next to the proftop binary,\n"
	      "else ../lib/libproftop.so from it. CMD's stdin is /dev/null.\n",
	      f);
}

enum { OPT_LOG = 256, OPT_NOSCREEN, OPT_MAXMEM, OPT_TORCH_OPS, OPT_KILL_ON_QUIT, OPT_FULL };

int cli_run(int argc, char **argv)
{
	static const struct option longs[] = {
		{"delay", required_argument, NULL, 'd'},
		{"log", required_argument, NULL, OPT_LOG},
		{"output", required_argument, NULL, 'o'},
		{"no-screen", no_argument, NULL, OPT_NOSCREEN},
		{"max-mem", required_argument, NULL, OPT_MAXMEM},
		{"baseline", required_argument, NULL, CLI_OPT_BASELINE},
		{"help", no_argument, NULL, 'h'},
		{"torch-ops", no_argument, NULL, OPT_TORCH_OPS},
		{"kill-on-quit", no_argument, NULL, OPT_KILL_ON_QUIT},
		{"full", no_argument, NULL, OPT_FULL},
		CLI_EVERY_LONGOPT,
		CLI_SCREEN_LONGOPTS,
		CLI_CAPTURE_LONGOPT,
		CLI_STRAGGLER_LONGOPT,
		CLI_END_LONGOPT,
		CLI_ANOMALY_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	uint64_t refresh_ns = 1000000000ull, every_ns = 0;
	int delay_given = 0;
	struct cli_anomaly an;
	const char *log = NULL, *out = NULL, *baseline = NULL;
	struct pt_diff_side *base = NULL;
	int rc;
	int no_screen = 0, kill_on_quit = 0, full = 0, c;
	double straggler_k = 0;
	struct cli_screen scr = {0};
	struct cli_load_opts lopt;
	cli_load_opts_init(&lopt);
	tui_opts_init(&scr.o);
	cli_anomaly_init(&an);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:hd:o:n:", longs, NULL)) != -1) {
		if ((rc = cli_screen_opt(&scr.o, c, optarg)) != 0 ||
		    (rc = cli_anomaly_opt(&an, c, optarg)) != 0) {
			if (rc != 1)
				return rc;
			continue;
		}
		switch (c) {
		case 'h':
			cli_usage_run(stdout);
			return CLI_OK;
		case 'd':
			delay_given = 1;
			if (cli_parse_secs(optarg, &refresh_ns))
				return cli_usage_error("-d: '%s' is not a number of seconds", optarg);
			break;
		case OPT_LOG:
			log = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case OPT_NOSCREEN:
			no_screen = 1;
			break;
		case CLI_OPT_BASELINE:
			baseline = optarg;
			break;
		case CLI_OPT_EVERY:
			if (cli_parse_secs(optarg, &every_ns))
				return cli_usage_error("--every: '%s' is not a duration (10s, 1m)", optarg);
			no_screen = 1;
			break;
		case OPT_FULL:
			full = 1;
			break;
		case CLI_OPT_CAPTURE_STRAGGLER:
			if ((rc = cli_opt_capture_straggler(optarg, &straggler_k)))
				return rc;
			break;
		case OPT_KILL_ON_QUIT:
			kill_on_quit = 1;
			break;
		case OPT_TORCH_OPS:
			setenv("PROFTOP_TORCH_OPS", "1", 1); /* the child inherits it */
			break;
		case OPT_MAXMEM:
			if ((rc = cli_opt_max_mem(&lopt, optarg)))
				return rc;
			break;
		default:
			return cli_getopt_error(c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error("run: missing CMD (proftop run [OPTIONS] -- CMD...)");
	/* before CMD starts: a baseline that cannot be read stops here */
	if (baseline && (rc = cli_baseline_load(baseline, &lopt, &base)))
		return rc;
	scr.o.baseline = base;
	if ((rc = cli_anomaly_check(&an))) /* before CMD starts, as the baseline */
		return rc;

	pt_live_signals();
	pid_t child;
	char log_used[PATH_MAX];
	uint64_t launch_id = 0;
	rc = cli_launch(argv + optind, log, &child, log_used, sizeof log_used, &launch_id);
	if (rc)
		return rc;
	char esc[PATH_MAX];
	pt_escape_term(esc, sizeof esc, log_used, strlen(log_used), 0, 0);
	fprintf(stderr, "proftop: started pid %d; its output goes to %s\n", (int)child, esc);

	struct pt_trace *t = pt_trace_new(lopt.max_mem_bytes);
	pt_trace_set_source(t, "live session");
	struct pt_live_opts lo = {0};
	struct pt_live_result res;
	int tty = isatty(1);
	lo.session_ops = pt_backend_find("session");
	lo.procstat_ops = pt_backend_find("procstat");
	lo.nvml_ops = pt_backend_find("nvml");
	lo.child = child;
	lo.launch_id = launch_id;
	lo.refresh_ns = refresh_ns;
	lo.every_ns = every_ns;
	lo.out = stdout;
	lo.capture_on_straggler = straggler_k;
	lo.capture_steps = scr.o.capture_steps;
	if (straggler_k > 0) { /* saved here; said on stderr unless the screen says it */
		lo.capture_save = 1;
		lo.capture_out = tty && !no_screen ? NULL : stderr;
	}
	if (tty && !no_screen) { /* the full-screen UI; the final summary follows it */
		scr.o.refresh_ns = delay_given ? refresh_ns : TUI_AUTO_REFRESH_NS;
		scr.o.refresh_auto = !delay_given;
		scr.started_ns = pt_now_ns();
		scr.o.can_capture = 1; /* key T: a deep capture (capture.h), saved here */
		scr.o.ask_quit = !kill_on_quit;
		lo.ui_wait = cli_screen_wait;
		lo.ui_ctx = &scr;
		lo.ctl = &scr.ctl;
		lo.capture_save = 1;
		scr.log = log_used;
	}
	cli_anomaly_start(&an, &lo, &scr.o);
	pt_live_run(t, &lo, &res);
	cli_reap_sessions(launch_id); /* read whole: nothing left to keep in /dev/shm */
	cli_screen_stay(&scr, t, &res);
	cli_screen_close(&scr);
	cli_final_summary(t, &res, full, 0);
	cli_anomaly_end(&an, t);
	int probe_off = cli_say_launched(t, &res, child, log_used);
	if (cli_child_failed(&res))
		cli_say_failed(stderr, log_used, res.child_status);
	rc = res.detached ? CLI_OK : pt_live_exit_code(res.child_status);
	if (probe_off && rc == 0)
		rc = CLI_FAIL; /* the job ran, but was not profiled */
	if (res.detached)
		fprintf(stderr,
			"proftop: left pid %d running; its output goes to %s; 'proftop -p %d' "
			"watches it again\n",
			(int)child, esc, (int)child);
	if (out && cli_write_trace_rescue(t, out) != CLI_OK && rc == 0)
		rc = CLI_FAIL;
	pt_trace_free(t);
	pt_diff_side_free(base);
	return rc;
}
