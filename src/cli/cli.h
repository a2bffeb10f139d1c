/*
 * cli.h - the shared CLI layer, what the commands (src/cli/, one file each)
 * use besides the core: the version, option parsers (--steps, --max-mem,
 * numbers, durations), the one-line error conventions (usage errors exit 2
 * with "Try 'proftop --help'.", file errors exit 1 with the reader's
 * message), loading + summarizing a trace (cli_common.c), choosing sessions
 * (cli_session.c, cli_inject.c), launching a job (cli_launch.c, cli_log.c),
 * the anomaly recorder's options (cli_anomaly.c) and the screen's set-up
 * (cli_screen.c). A command never uses another command: their entry points
 * are declared in src/cli/commands.h, for main.c.
 */
#ifndef PT_CLI_H
#define PT_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proftop/agg.h"
#include "proftop/trace.h"
#include "model/version.h"

/* Exit codes. */
#define CLI_OK 0
#define CLI_FAIL 1  /* the command ran and failed (file errors, no such steps) */
#define CLI_USAGE 2 /* bad command line */

/* Options every trace-loading command takes. */
struct cli_load_opts {
	size_t max_mem_bytes;
	int threads;
	int has_steps;
	int64_t step_first, step_last; /* inclusive */
	const char *steps_text;        /* as given, for messages */
	int with_compile;              /* --with-compile: compiling steps in the figures */
	uint64_t batch;                /* --batch N: samples of a step that carries none */
};
void cli_load_opts_init(struct cli_load_opts *o);

/* Prints "proftop: MSG" and "Try 'proftop --help'." to stderr; returns CLI_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "proftop: MSG" to stderr; returns CLI_FAIL. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A getopt_long failure ('?' or ':' with optind past the culprit) as a usage error. */
int cli_getopt_error(int c, char **argv);

/* "A:B", "A:", ":B", "A" (inclusive). Returns 0, or -1 when malformed. */
int cli_parse_steps(const char *s, int64_t *first, int64_t *last);
/* Non-negative decimal integer that fits in max. Returns 0 or -1. */
int cli_parse_count(const char *s, uint64_t max, uint64_t *out);
/* --steps, --max-mem, --threads: 0, or CLI_USAGE after printing the error. */
int cli_opt_steps(struct cli_load_opts *o, const char *arg);
int cli_opt_max_mem(struct cli_load_opts *o, const char *arg);
int cli_opt_threads(struct cli_load_opts *o, const char *arg);
/* The loading options every trace-reading command shares, as getopt entries. */
enum { CLI_OPT_STEPS = 400, CLI_OPT_MAXMEM, CLI_OPT_THREADS, CLI_OPT_WITH_COMPILE, CLI_OPT_BATCH };
#define CLI_LOAD_LONGOPTS                                                                      \
	{"max-mem", required_argument, NULL, CLI_OPT_MAXMEM},                                  \
	{"threads", required_argument, NULL, CLI_OPT_THREADS}
#define CLI_STEPS_LONGOPT {"steps", required_argument, NULL, CLI_OPT_STEPS}
#define CLI_WITH_COMPILE_LONGOPT {"with-compile", no_argument, NULL, CLI_OPT_WITH_COMPILE}
#define CLI_WITH_COMPILE_HELP                                                                          \
	"      --with-compile  count the steps that compiled (torch.compile) in the figures\n"
#define CLI_BATCH_LONGOPT {"batch", required_argument, NULL, CLI_OPT_BATCH}
#define CLI_BATCH_HELP                                                                         \
	"      --batch N       N samples in each step that carries no count (a trace another\n"  \
	"                      profiler wrote), so that ips is in samples/s\n"
/* 1 when c was a loading option (applied), 0 when not, CLI_USAGE after an error. */
int cli_load_opt(struct cli_load_opts *o, int c, const char *arg);

/* Reads path into a new trace; on failure prints the error, returns CLI_FAIL. */
int cli_load_trace(const char *path, const struct cli_load_opts *o, struct pt_trace **out);
/*
 * Summarizes t over the steps in o (all when none given). A step range with
 * no steps in the trace prints "no steps in A:B; the trace has steps X to Y"
 * and returns CLI_FAIL.
 */
int cli_summarize(struct pt_trace *t, const struct cli_load_opts *o, struct pt_summary **out);
/* cli_summarize with pt_agg_opts.spare (agg.h) set to spare and arg. */
int cli_summarize_spare(struct pt_trace *t, const struct cli_load_opts *o,
			void (*spare)(void *, uint64_t, uint64_t), void *arg,
			struct pt_summary **out);

/* Loads and summarizes one run (a side of diff) over the steps in lo: CLI_OK
 * with *out (pt_diff_side_free), else the error printed. */
struct pt_diff_side;
int cli_load_side(const char *path, const struct cli_load_opts *lo, struct pt_diff_side **out);
/* --baseline FILE of the screen commands (view, run): the run the tables compare
 * with. Loads and summarizes path (all steps), keeps only the summary: CLI_OK
 * and *out (pt_diff_side_free), or CLI_FAIL after printing why. */
#define CLI_OPT_BASELINE 330
#define CLI_BASELINE_HELP \
	"      --baseline FILE compare with an earlier run: delta columns in every table\n"
int cli_baseline_load(const char *path, const struct cli_load_opts *lo, struct pt_diff_side **out);
/* Seconds ("1", "0.5", or with a unit: "500ms", "10s", "2m", "1h") as ns;
 * 0 or -1 when not a positive duration. */
int cli_parse_secs(const char *s, uint64_t *ns);

/* ---- launching a job (cli_launch.c) ---- */
#include <sys/types.h>
/*
 * Starts cmd with the probe injected (LD_PRELOAD, NVTX/CUDA injection),
 * stdout/stderr to log_path (NULL: ./proftop-run-<pid>.log; the path used
 * goes to log_used), stdin from /dev/null, in its own process group, with
 * PROFTOP_LAUNCH_ID set (returned in *launch_id, for pt_live_opts) and, for
 * Python programs, python/boot first on PYTHONPATH (the zero-code helper).
 * Returns CLI_OK or CLI_FAIL after printing why.
 */
int cli_launch(char **cmd, const char *log_path, pid_t *child, char *log_used, size_t len,
	       uint64_t *launch_id);
/*
 * CMD's log (cli_log.c), opened in the child: path (--log) when it is new
 * or a regular file of ours with one link (then truncated), else (NULL)
 * DIR/proftop-run-<pid>.log created exclusively (DIR: cli_log_dir), or an
 * unguessable DIR/proftop-run-<pid>-XXXXXX.log when that name is taken;
 * 0600. Returns the
 * fd (name in used) or -1 with the reason in err; cli_log_report sends
 * either to the parent. cli_log_wait, in the
 * parent, reads the child's report from the pipe rep (closing both ends):
 * 0 with the name in used, or -1 after reaping the child and printing why.
 */
int cli_log_open(const char *path, int pid, char *used, size_t len, char *err, size_t errlen);
/* The default logs' directory: $XDG_STATE_HOME/proftop, else
 * ~/.local/state/proftop; made 0700 when missing, refused when it is a
 * link, not ours or open to others. 0, or -1 with the reason in err. */
int cli_log_dir(char *buf, size_t len, char *err, size_t errlen);
/* The last nlines lines of the log at path (at most its last 4 KiB), raw:
 * the caller escapes them. Returns the length (0: none, or unreadable). */
size_t cli_log_tail(const char *path, int nlines, char *buf, size_t len);
/* The first "probe disabled" line at the start of the job's log (the probe's
 * own words on why it switched itself off), escaped into buf: 1, else 0. */
int cli_log_probe_off(const char *log, char *buf, size_t len);
/* "proftop: CMD exited with code N; its output is in LOG, ending:" and the
 * log's last lines, escaped, on f: for a CMD that failed on its own. */
void cli_say_failed(FILE *f, const char *log, int status);
/* CMD ended on its own with a failure (a non-zero code or a signal), not
 * stopped by q or Ctrl-C. */
struct pt_live_result;
int cli_child_failed(const struct pt_live_result *res);
/* In the child: what (L: the name used, E: why not) and text on the pipe fd. */
void cli_log_report(int fd, char what, const char *text);
int cli_log_wait(int rep[2], pid_t pid, char *used, size_t len);
/*
 * Several sessions (cli_session.c): "A,B,C" appended to *pids (-p); CLI_USAGE
 * after printing why when malformed. cli_check_session refuses a pid whose
 * session cannot be opened, with the reason (CLI_OK or CLI_FAIL).
 * cli_live_pids lists the pids of this user's live sessions (maybe none).
 */
#define CLI_MAX_PIDS 4096
int cli_parse_pids(const char *arg, int32_t **pids, size_t *n);
int cli_check_session(int32_t pid);
/* When process pid started, on pt_now_ns()'s clock (its age from /proc);
 * 0 when unknown. */
uint64_t cli_process_start_ns(int32_t pid);
int cli_live_pids(int32_t **pids, size_t *n);
/* Removes exited sessions nobody reads any more, quietly: the stale ones
 * (every start of proftop), and with launch_id those of the job this
 * proftop launched once it has read them (pt_session_reap). */
void cli_reap_sessions(uint64_t launch_id);
/* This user's sessions (clean: remove stale segments, saying how many):
 * CLI_OK with *v (free()), or CLI_FAIL after printing why. cli_print_sessions
 * prints them as `proftop ls` does (PID, state, age, rank, dropped, command). */
struct pt_session_info;
int cli_list_sessions(int clean, struct pt_session_info **v, size_t *n);
void cli_print_sessions(FILE *f, const struct pt_session_info *v, size_t n);
/* libproftop.so ($PROFTOP_LIB, beside the binary, ../lib): 0 with the path in
 * buf (PATH_MAX bytes), -1 when not found. */
int cli_find_lib(char *buf, size_t len);
/* python/boot, whose sitecustomize.py starts the zero-code Python helper
 * ($PROFTOP_PYTHON/boot, ../python/boot from the binary, ../share/proftop/
 * python/boot): 0 with the directory in buf, -1 when not found. */
int cli_find_pyboot(char *buf, size_t len);

/* After a launched job: which sessions were read, and why there were no
 * steps when there were none (stderr). 1 when the job's probe switched
 * itself off (its reason, from the job's log, is said): the job was not
 * profiled, and the command's exit code says so. */
struct pt_live_result;
int cli_say_launched(const struct pt_trace *t, const struct pt_live_result *res, pid_t child,
		     const char *log);
/*
 * -p PID of attach, record and serve (cli_inject.c): CLI_OK when pid has a
 * session. Without one: with inject, loads the probe and the zero-code
 * Python helper into the running Python process (cli_inject), else says in
 * one line why not and whether --inject would help; CLI_FAIL.
 */
int cli_prepare_session(int32_t pid, int inject);
/* Loads the probe and the helper into Python process pid (PEP 768's
 * sys.remote_exec on Python 3.14+, else gdb), waits for its session;
 * prints what it did and how long the job was paused. CLI_OK or CLI_FAIL. */
int cli_inject(int32_t pid);
#define CLI_OPT_INJECT 370
#define CLI_INJECT_LONGOPT {"inject", no_argument, NULL, CLI_OPT_INJECT}
#define CLI_INJECT_HELP                                                                      \
	"      --inject        a Python process with no session (not started under\n"         \
	"                      proftop): load proftop and its PyTorch helper into it\n"        \
	"                      (gdb, or sys.remote_exec on Python 3.14+; pauses it once)\n"
/* Waits for child, forwarding Ctrl-C; returns its wait status. */
int cli_wait_child(pid_t child);
/* Exports t to path as a Chrome trace; prints "wrote PATH" or the error. */
int cli_write_trace(struct pt_trace *t, const char *path);
/*
 * Like cli_write_trace (replaces path), but a recording that cannot be
 * written there (full disk, no permission) is saved to a rescue file
 * ($TMPDIR, /tmp, ., $HOME) and the user told where; CLI_FAIL then too.
 */
int cli_write_trace_rescue(struct pt_trace *t, const char *path);

/* --every SECS of run, record and attach: a benchmark line per period. */
#define CLI_OPT_EVERY 360
/* --hang-after SECS: how long a collective may stay open before it is the hang (colls.h). */
#define CLI_OPT_HANG_AFTER 361
#define CLI_HANG_LONGOPT {"hang-after", required_argument, NULL, CLI_OPT_HANG_AFTER}
#define CLI_HANG_HELP                                                                          \
	"      --hang-after SECS  a collective that ranks entered and that has not\n"        \
	"                       completed for SECS is the hang: said with the ranks\n"      \
	"                       waiting and those missing (default 30)\n"
/* 0, or CLI_USAGE after the error. */
int cli_opt_hang_after(const char *arg, uint64_t *ns);
/* --capture-on-straggler[=K] of run and record (live_opts.h): a capture of
 * the same steps on every rank, once, when a rank's step takes K times the
 * ranks' median (default 2). */
#define CLI_OPT_CAPTURE_STRAGGLER 362
#define CLI_STRAGGLER_LONGOPT                                                                \
	{"capture-on-straggler", optional_argument, NULL, CLI_OPT_CAPTURE_STRAGGLER}
#define CLI_STRAGGLER_HELP                                                                   \
	"      --capture-on-straggler[=K]  in a job of several ranks, once a rank's step\n"   \
	"                       takes K times the median of the ranks' recent steps\n"       \
	"                       (default 2), capture the same steps on every rank\n"         \
	"                       (as key T) into ./proftop-capture-steps-A-B/\n"
/* 0 with *k, or CLI_USAGE after the error (arg NULL: the default). */
int cli_opt_capture_straggler(const char *arg, double *k);
/* --capture-steps N (1 .. PT_SHM_CTL_MAX_STEPS): 0 with *steps, or CLI_USAGE. */
int cli_opt_capture_steps(const char *arg, uint32_t *steps);
#define CLI_EVERY_LONGOPT {"every", required_argument, NULL, CLI_OPT_EVERY}
#define CLI_EVERY_HELP                                                                       \
	"      --every SECS    print one line of figures every SECS (10s, 1m; implies\n"        \
	"                      --no-screen): step, ips, reader_cost, batch_cost, reader\n"     \
	"                      ratio, phase shares, dropped events, over the steps since\n"    \
	"                      the last line\n"

/* ---- the anomaly recorder's options (cli_anomaly.c) ---- */
#include "proftop/anomaly.h"
enum {
	CLI_OPT_ANOMALIES = 340,
	CLI_OPT_ANOMALY_DIR,
	CLI_OPT_ANOMALY_FACTOR,
	CLI_OPT_ANOMALY_KEEP,
};
#define CLI_ANOMALY_LONGOPTS                                                                 \
	{"anomalies", no_argument, NULL, CLI_OPT_ANOMALIES},                                 \
		{"anomaly-dir", required_argument, NULL, CLI_OPT_ANOMALY_DIR},               \
		{"anomaly-factor", required_argument, NULL, CLI_OPT_ANOMALY_FACTOR},         \
		{"anomaly-keep", required_argument, NULL, CLI_OPT_ANOMALY_KEEP}
#define CLI_ANOMALY_HELP                                                                         \
	"      --anomalies     save a Chrome trace of each slow step or reader stall (the\n"      \
	"                      step, 2 before, 1 after) in ./" PT_ANOMALY_DEFAULT_DIR "\n"       \
	"      --anomaly-dir DIR  the same, into DIR\n"                                          \
	"      --anomaly-factor F  a step is slow above F x the median of the last 50\n"         \
	"                      (default 3)\n"                                                    \
	"      --anomaly-keep N  keep the newest N files it wrote (default 20, 0: all)\n"
struct cli_anomaly {
	int on;
	struct pt_anomaly_opts o;
	struct pt_anomaly *d;
};
struct pt_live_opts;
struct tui_opts;
void cli_anomaly_init(struct cli_anomaly *a);
/* 1 when c was an anomaly option (applied), 0 when not, CLI_USAGE after an error. */
int cli_anomaly_opt(struct cli_anomaly *a, int c, const char *arg);
/* When asked for: the folder checked before anything starts (a folder of
 * another user, a link, one we cannot write in): CLI_OK or CLI_FAIL, said. */
int cli_anomaly_check(const struct cli_anomaly *a);
/* When asked for: the recorder, hooked into lo (after_poll) and the screen (to, may be NULL). */
void cli_anomaly_start(struct cli_anomaly *a, struct pt_live_opts *lo, struct tui_opts *to);
/* After the loop: writes what is pending, says what was saved; 1 when a write failed. */
int cli_anomaly_end(struct cli_anomaly *a, struct pt_trace *t);

/* ---- the full-screen UI (cli_screen.c; tui/tui.h has no curses types) ---- */
#include "../tui/tui.h"
#include "live/live.h"
struct pt_live_result;
/* Options every screen command takes: --ascii --no-color --mouse --no-mouse -n N. */
enum { CLI_OPT_ASCII = 300, CLI_OPT_NOCOLOR, CLI_OPT_MOUSE, CLI_OPT_NOMOUSE, CLI_OPT_EXIT_ON_END,
       CLI_OPT_PEAK_TFLOPS = 380, CLI_OPT_PEAK_GBPS, CLI_OPT_CAPTURE_STEPS };
/* run and attach: the screen stays when the job ends, unless --exit-on-end. */
#define CLI_END_LONGOPT {"exit-on-end", no_argument, NULL, CLI_OPT_EXIT_ON_END}
#define CLI_END_HELP                                                                         \
	"      --exit-on-end   close the screen when the job ends (by default it stays,\n"    \
	"                      browsable, until q; then the final summary is printed)\n"
#define CLI_SCREEN_LONGOPTS                                                                  \
	{"ascii", no_argument, NULL, CLI_OPT_ASCII},                                         \
		{"no-color", no_argument, NULL, CLI_OPT_NOCOLOR},                            \
		{"mouse", no_argument, NULL, CLI_OPT_MOUSE},                                 \
		{"no-mouse", no_argument, NULL, CLI_OPT_NOMOUSE},                            \
		{"iterations", required_argument, NULL, 'n'},                                \
		CLI_PEAK_LONGOPTS
/* --peak-tflops / --peak-gbps: the device peak of the FLOPs figures (flops.h) */
#define CLI_PEAK_LONGOPTS                                                                    \
	{"peak-tflops", required_argument, NULL, CLI_OPT_PEAK_TFLOPS},                       \
		{"peak-gbps", required_argument, NULL, CLI_OPT_PEAK_GBPS}
#define CLI_PEAK_HELP                                                                        \
	"      --peak-tflops N the device's peak TFLOP/s for the FLOPs figures' Peak%\n"       \
	"                      (default: from the GPU's name, when proftop knows it)\n"        \
	"      --peak-gbps N   its memory bandwidth, for the roofline (GB/s)\n"
/* 1 when c was --peak-tflops or --peak-gbps (applied), 0 when not, CLI_USAGE after an error. */
int cli_peak_opt(double *tflops, double *gbps, int c, const char *arg);
/* run and attach: --capture-steps N, the steps key T captures (default 5) */
#define CLI_CAPTURE_LONGOPT {"capture-steps", required_argument, NULL, CLI_OPT_CAPTURE_STEPS}
#define CLI_CAPTURE_HELP                                                                     \
	"      --capture-steps N  key T captures the next N steps with torch.profiler\n"      \
	"                      (default 5; see 'proftop help capture')\n"
#define CLI_SCREEN_HELP                                                                      \
	"  -n, --iterations N  quit the screen after N refreshes (for tests)\n"                \
	"      --ascii         draw with ASCII only (automatic when the locale is not UTF-8)\n" \
	"      --no-color      no colours (also when NO_COLOR is set)\n"                        \
	"      --mouse         clicks pick tabs, rows and slices; the wheel scrolls and\n"   \
	"                      zooms (off by default: it takes the terminal's selection)\n"  \
	CLI_PEAK_HELP
/* 1 when c was a screen option (applied), 0 when not, CLI_USAGE after an error. */
int cli_screen_opt(struct tui_opts *o, int c, const char *arg);
/* The live loop's ui_wait: opens the screen on first use (ctx: struct cli_screen). */
struct cli_screen {
	struct tui *u;
	struct tui_opts o;
	uint64_t started_ns;
	int failed;
	char state[48];          /* the session line's state ("exited (code 0)") */
	char describe[512];      /* the session, without the " [exited]" the state says */
	struct pt_live_ctl ctl;  /* the screen's requests to the live loop (key T) */
	const char *log;         /* run: CMD's log, whose end shows when CMD fails */
	int failure_read;        /* failure holds the log's end (read once) */
	char failure[2048];
};
int cli_screen_wait(void *ctx, struct pt_trace *t, const struct pt_live_result *res,
		    uint64_t wait_ns);
/* After the live loop: when the job ended on its own and the screen is up
 * (no --exit-on-end, not quit, no Ctrl-C), keeps it until q (or a signal). */
void cli_screen_stay(struct cli_screen *s, struct pt_trace *t, const struct pt_live_result *res);
void cli_screen_close(struct cli_screen *s);
/* The summary once the live loop ended: on a terminal the one that fits it
 * (pt_live_print_brief), unless full; else the full tables (pt_live_print). */
void cli_final_summary(struct pt_trace *t, const struct pt_live_result *res, int full, int clear);

#endif
