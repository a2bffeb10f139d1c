/*
 * live.h - the loop shared by `proftop run`, `record` and attaching to a
 * session: opens the session and /proc backends, polls them on a timer
 * (never spinning), feeds the trace, watches a launched child, handles
 * Ctrl-C, and either redraws a text summary every refresh period or stays
 * quiet (the caller prints or exports at the end).
 */
#ifndef PT_LIVE_H
#define PT_LIVE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "proftop/backend.h"
#include "proftop/trace.h"

#define PT_LIVE_POLL_NS 100000000ull /* drain period: 100 ms keeps latency < 250 ms */
/* drain period while the session reports PT_BACKEND_BUSY (rings filling) */
#define PT_LIVE_BUSY_POLL_NS 1000000ull

struct pt_live_result;

struct pt_live_opts {
	const struct pt_backend_ops *session_ops; /* NULL: no session backend */
	const struct pt_backend_ops *procstat_ops;/* NULL: no CPU samples */
	const struct pt_backend_ops *nvml_ops;     /* optional GPU sampler, NULL = none */
	pid_t child;             /* launched CMD (0: attach) */
	int32_t session_pid;     /* session to open (the child's pid when launching) */
	/* optional: another pid to try while the child's own session is missing
	 * (a wrapper script whose child loads the probe); 0 = none yet */
	int32_t (*find_pid)(void *ctx);
	void *find_ctx;
	/*
	 * Optional further source polled every period (e.g. a folder of trace
	 * files); owned by the caller. Its PT_ENOENT is not an end: the loop
	 * ends on the child, the session, Ctrl-C, the UI or the duration.
	 */
	struct pt_backend *extra;
	uint64_t poll_ns;        /* 0: PT_LIVE_POLL_NS */
	uint64_t refresh_ns;     /* redraw period when screen is set */
	uint64_t duration_ns;    /* stop recording after this (0: no limit) */
	int screen;              /* redraw a text summary on out (a tty) */
	FILE *out;
	/*
	 * Optional full-screen UI (tui/), called instead of sleeping between
	 * polls for up to wait_ns; it reads t (no poll runs meanwhile). Returns 1
	 * when the user quit: attach then ends; with a child the child gets one
	 * SIGINT and the loop goes on quietly until it exits (the UI has closed).
	 */
	int (*ui_wait)(void *ctx, struct pt_trace *t, const struct pt_live_result *res,
		       uint64_t wait_ns);
	void *ui_ctx;
};

struct pt_live_result {
	int session_found;       /* a session was opened */
	int session_exited;      /* its owner exited and it was drained */
	int child_done;          /* child reaped; status below */
	int child_status;        /* waitpid status */
	int interrupted;         /* Ctrl-C / SIGTERM seen */
	int ui_quit;             /* the screen was quit (q) */
	int timed_out;           /* duration reached */
	char describe[512];      /* the session, escaped, or "" */
	char error[256];         /* the session backend's first failure (e.g. a truncated segment), or "" */
};

/* Runs until the session or child ends, Ctrl-C, or the duration. */
int pt_live_run(struct pt_trace *t, const struct pt_live_opts *o, struct pt_live_result *res);
/* Installs the SIGINT/SIGTERM handlers (call before forking a child). */
void pt_live_signals(void);
/* Prints the text view (a status line and the summary tables, top rows). */
void pt_live_print(FILE *out, struct pt_trace *t, const struct pt_live_result *res, int top,
		   int clear);
/* Exit code of a wait status: the code, or 128 + signal. */
int pt_live_exit_code(int status);

#endif
