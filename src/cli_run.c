/*
 * cli_run.c - `proftop run [OPTIONS] -- CMD...`: starts CMD with the probe
 * (libproftop.so) injected, shows a text summary refreshed every -d seconds
 * while it runs, and passes its exit code through. Also the launcher the
 * record command shares (cli_launch: finding the library, the environment,
 * the log file, the child's process group) and the Chrome-trace writer.
 *
 * The child gets stdin from /dev/null and its own process group, so a
 * Ctrl-C at the terminal reaches proftop only; proftop forwards one SIGINT
 * per key press, waits for the child to finish, drains its session and
 * prints the final summary.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "live.h"
#include "proftop/backend.h"
#include "proftop/chrome.h"
#include "proftop/error.h"
#include "proftop/diff.h"
#include "proftop/store.h"
#include "util.h"

void cli_usage_run(FILE *f)
{
	fputs("Usage: proftop run [OPTIONS] -- CMD [ARGS...]\n"
	      "\n"
	      "Start CMD with the probe (libproftop.so) injected and show its summary while\n"
	      "it runs: steps, phases, operators, CPU utilization. On a terminal the screen\n"
	      "shows it live and stays when CMD ends (q quits); otherwise the summary is\n"
	      "printed once at the end. q while CMD runs, or Ctrl-C, passes CMD one SIGINT;\n"
	      "proftop waits for it and prints the final summary. The exit status is CMD's\n"
	      "(128+N when a signal N ended it).\n"
	      "\n"
	      "Options:\n"
	      "  -d, --delay SECS    refresh period (default: the screen 0.15, longer\n"
	      "                      when the session grows; the text view 1)\n"
	      "      --log FILE      CMD's stdout and stderr (default ./proftop-run-PID.log)\n"
	      "  -o, --output FILE   also write a Chrome trace at the end\n"
	      "      --no-screen     no screen: only the final summary (also off a terminal)\n"
	      CLI_EVERY_HELP
	      "      --torch-ops     also aten operators in a PyTorch job (CUDA builds of torch:\n"
	      "                      through its NVTX emission; see docs/python.md)\n"
	      "      --max-mem SIZE  memory for kept events (default 1G; see 'proftop --help')\n"
	      CLI_ANOMALY_HELP
	      CLI_BASELINE_HELP
	      CLI_SCREEN_HELP
	      CLI_CAPTURE_HELP
	      CLI_END_HELP
	      "  -h, --help          show this help\n"
	      "\n"
	      "The library is $PROFTOP_LIB, else libproftop.so next to the proftop binary,\n"
	      "else ../lib/libproftop.so from it. CMD's stdin is /dev/null.\n",
	      f);
}

int cli_parse_secs(const char *s, uint64_t *ns)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	double unit = 1e9; /* seconds unless a unit follows: 500ms, 10s, 2m, 1h */
	if (end != s && *end) {
		if (!strcmp(end, "ms"))
			unit = 1e6;
		else if (!strcmp(end, "s"))
			unit = 1e9;
		else if (!strcmp(end, "m") || !strcmp(end, "min"))
			unit = 60e9;
		else if (!strcmp(end, "h"))
			unit = 3600e9;
		else
			return -1;
		end += strlen(end);
	}
	if (errno || end == s || *end || !(v > 0) || v * unit > 1e16)
		return -1;
	*ns = (uint64_t)(v * unit);
	return *ns ? 0 : -1;
}

int cli_find_lib(char *buf, size_t len)
{
	/* buf holds PATH_MAX bytes */
	const char *env = getenv("PROFTOP_LIB");
	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return access(buf, R_OK) == 0 ? 0 : -1;
	}
	char exe[PATH_MAX - 64]; /* room for the suffixes below */
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;
	snprintf(buf, len, "%s/libproftop.so", exe);
	if (access(buf, R_OK) == 0)
		return 0;
	snprintf(buf, len, "%s/../lib/libproftop.so", exe);
	if (access(buf, R_OK) == 0) {
		char real[PATH_MAX];
		if (realpath(buf, real))
			snprintf(buf, len, "%s", real);
		return 0;
	}
	return -1;
}

/*
 * The directory whose sitecustomize.py starts the zero-code Python helper:
 * $PROFTOP_PYTHON/boot, else python/boot beside the build directory of the
 * proftop binary (a source tree), else ../share/proftop/python/boot (make
 * install). 0 with the path in buf, -1 when there is none.
 */
int cli_find_pyboot(char *buf, size_t len)
{
	char exe[PATH_MAX - 64], real[PATH_MAX];
	const char *env = getenv("PROFTOP_PYTHON");
	if (env && *env) {
		snprintf(buf, len, "%s/boot/sitecustomize.py", env);
		goto check;
	}
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;
	snprintf(buf, len, "%s/../python/boot/sitecustomize.py", exe);
	if (access(buf, R_OK) != 0)
		snprintf(buf, len, "%s/../share/proftop/python/boot/sitecustomize.py", exe);
check:
	if (access(buf, R_OK) != 0 || !realpath(buf, real))
		return -1;
	*strrchr(real, '/') = 0;
	snprintf(buf, len, "%s", real);
	return 0;
}

/* Sets name=lib in the child unless it is already set to something else. */
static int injection_var(const char *name, const char *lib, int warn)
{
	const char *cur = getenv(name);
	if (cur && *cur && strcmp(cur, lib) != 0) {
		if (warn) {
			char esc[200];
			pt_escape_term(esc, sizeof esc, cur, strlen(cur), 80, 0);
			fprintf(stderr, "proftop: %s is already set (%s); leaving it\n", name, esc);
		}
		return 0;
	}
	return 1;
}

int cli_launch(char **cmd, const char *log_path, pid_t *child, char *log_used, size_t len,
	       uint64_t *launch_id)
{
	/* marks the job's processes' sessions (shm.h launch_id): this proftop's
	 * pid and the time, unique enough on one machine */
	uint64_t lid = ((uint64_t)getpid() << 32) ^ (pt_now_ns() & 0xffffffffull);
	char lid_s[32];
	snprintf(lid_s, sizeof lid_s, "%llx", (unsigned long long)(lid ? lid : 1));
	char lib[PATH_MAX];
	int have_lib = cli_find_lib(lib, sizeof lib) == 0;
	if (!have_lib)
		fprintf(stderr, "proftop: libproftop.so not found (set PROFTOP_LIB); running without "
				"the probe, CPU samples only\n");
	int set_nvtx = have_lib && injection_var("NVTX_INJECTION64_PATH", lib, 1);
	int set_cuda = have_lib && injection_var("CUDA_INJECTION64_PATH", lib, 1);
	char pyboot[PATH_MAX];
	int have_py = have_lib && cli_find_pyboot(pyboot, sizeof pyboot) == 0;
	struct pt_buf pypath = {0};
	if (have_py) {
		/* first on PYTHONPATH: Python imports its sitecustomize.py at start-up */
		const char *cur = getenv("PYTHONPATH");
		pt_buf_printf(&pypath, "%s", pyboot);
		if (cur && *cur)
			pt_buf_printf(&pypath, ":%s", cur);
		pt_buf_putc(&pypath, 0);
	}
	const char *pre = getenv("LD_PRELOAD");
	struct pt_buf preload = {0};
	if (have_lib) {
		if (pre && *pre) {
			pt_buf_printf(&preload, "%s:", pre);
		}
		pt_buf_printf(&preload, "%s", lib);
		pt_buf_putc(&preload, 0);
	}
	fflush(NULL);
	int rep[2]; /* the child's word on its log (cli_log.c): "L" + name, or "E" + why */
	if (pipe2(rep, O_CLOEXEC) != 0) {
		pt_buf_free(&preload);
		return cli_fail("pipe: %s", strerror(errno));
	}
	pid_t pid = fork();
	if (pid < 0) {
		pt_buf_free(&preload);
		pt_buf_free(&pypath);
		close(rep[0]);
		close(rep[1]);
		return cli_fail("fork: %s", strerror(errno));
	}
	if (pid == 0) {
		char path[PATH_MAX], why[PATH_MAX + 128];
		int err_fd = fcntl(2, F_DUPFD_CLOEXEC, 3);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		setpgid(0, 0);
		close(rep[0]);
		int fd = cli_log_open(log_path, (int)getpid(), path, sizeof path, why, sizeof why);
		int nul = open("/dev/null", O_RDONLY);
		cli_log_report(rep[1], fd < 0 ? 'E' : 'L', fd < 0 ? why : path);
		if (fd < 0)
			_exit(127);
		if (nul >= 0) {
			dup2(nul, 0);
			close(nul);
		}
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
		if (have_lib) {
			setenv("LD_PRELOAD", preload.p, 1);
			if (set_nvtx)
				setenv("NVTX_INJECTION64_PATH", lib, 1);
			if (set_cuda)
				setenv("CUDA_INJECTION64_PATH", lib, 1);
			if (have_py)
				setenv("PYTHONPATH", pypath.p, 1);
			setenv("PROFTOP_LAUNCH_ID", lid_s, 1);
		}
		execvp(cmd[0], cmd);
		int e = errno;
		char esc[256];
		pt_escape_term(esc, sizeof esc, cmd[0], strlen(cmd[0]), 80, 0);
		dprintf(err_fd, "proftop: %s: %s\n", esc, strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
	setpgid(pid, pid); /* both sides, so the group exists before either runs on */
	pt_buf_free(&preload);
	pt_buf_free(&pypath);
	if (cli_log_wait(rep, pid, log_used, len))
		return CLI_FAIL;
	*child = pid;
	if (launch_id)
		*launch_id = strtoull(lid_s, NULL, 16);
	return CLI_OK;
}

int cli_wait_child(pid_t child)
{
	int st = 0;
	for (;;) {
		pid_t w = waitpid(child, &st, 0);
		if (w == child)
			return st;
		if (w < 0 && errno == EINTR) {
			kill(child, SIGINT); /* Ctrl-C while waiting: pass it on */
			continue;
		}
		return st;
	}
}

int cli_write_trace(struct pt_trace *t, const char *path)
{
	struct pt_export_opts eo = {0};
	char err[512] = "";
	eo.force = 1;
	int rc = pt_chrome_export(t, path, &eo, err, sizeof err);
	char esc[600];
	if (rc < 0) {
		if (!err[0])
			snprintf(err, sizeof err, "%s: %s", path, pt_strerror(rc));
		pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
		return cli_fail("%s", esc);
	}
	pt_escape_term(esc, sizeof esc, path, strlen(path), 0, 0);
	fprintf(stderr, "proftop: wrote %s (%llu events)\n", esc,
		(unsigned long long)pt_store_count(t->store));
	return CLI_OK;
}

enum { OPT_LOG = 256, OPT_NOSCREEN, OPT_MAXMEM, OPT_TORCH_OPS };

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
		CLI_EVERY_LONGOPT,
		CLI_SCREEN_LONGOPTS,
		CLI_CAPTURE_LONGOPT,
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
	int no_screen = 0, c;
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
	if (tty && !no_screen) { /* the full-screen UI; the final summary follows it */
		scr.o.refresh_ns = delay_given ? refresh_ns : TUI_AUTO_REFRESH_NS;
		scr.o.refresh_auto = !delay_given;
		scr.started_ns = pt_now_ns();
		scr.o.can_capture = 1; /* key T: a deep capture (capture.h), saved here */
		lo.ui_wait = cli_screen_wait;
		lo.ui_ctx = &scr;
		lo.ctl = &scr.ctl;
		lo.capture_save = 1;
	}
	cli_anomaly_start(&an, &lo, &scr.o);
	pt_live_run(t, &lo, &res);
	cli_screen_stay(&scr, t, &res);
	cli_screen_close(&scr);
	pt_live_print(stdout, t, &res, 0, 0);
	cli_anomaly_end(&an, t);
	cli_say_launched(t, &res, child);
	rc = pt_live_exit_code(res.child_status);
	if (out && cli_write_trace_rescue(t, out) != CLI_OK && rc == 0)
		rc = CLI_FAIL;
	pt_trace_free(t);
	pt_diff_side_free(base);
	return rc;
}

/* Steps in t (every track's count). */
static uint64_t trace_steps(const struct pt_trace *t)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < t->ntracks; i++)
		n += t->tracks[i].steps;
	return n;
}

void cli_say_launched(const struct pt_trace *t, const struct pt_live_result *res, pid_t child)
{
	if (!res->session_found) {
		fprintf(stderr,
			"proftop: no steps: pid %d and the processes it started recorded nothing "
			"(no proftop or NVTX calls; a Python program is marked once it imports "
			"torch; is it run with -I or -E, which ignore PYTHONPATH?)\n",
			(int)child);
		return;
	}
	if (res->nsessions > 1)
		fprintf(stderr, "proftop: recorded %s\n", res->describe);
	if (trace_steps(t))
		return;
	for (uint32_t i = 0; i < t->nnotes; i++)
		if (strncmp(pt_trace_note_text(t, i), "no steps", 8) == 0)
			return; /* the source said why (the Python helper) */
	fprintf(stderr,
		"proftop: no steps: the job recorded %llu events but never marked a step "
		"(proftop_step(), an optimizer step or forward of a torch model, or an NVTX "
		"range named 'step')\n",
		(unsigned long long)t->events_seen);
}
