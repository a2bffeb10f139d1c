/*
 * live_opts.h - what the live loop (live.h) is asked to do and what it
 * reports: its periods, the options of pt_live_run, the screen's requests,
 * and the result. Types only: live.c and the session set (live_multi.c)
 * both read them, so neither includes the other's header for them.
 */
#ifndef PT_LIVE_OPTS_H
#define PT_LIVE_OPTS_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "proftop/backend.h"
#include "proftop/trace.h"

#define PT_LIVE_POLL_NS 100000000ull /* drain period: 100 ms keeps latency < 250 ms */
/* drain period while the session reports PT_BACKEND_BUSY (rings filling) */
#define PT_LIVE_BUSY_POLL_NS 1000000ull
/* --all: how often the session directory is looked at for new sessions */
#define PT_LIVE_SCAN_NS 500000000ull
/* A launched job (run, record/serve -- CMD): its processes' sessions are looked
 * for every PT_LIVE_LAUNCH_SCAN_FAST_NS for the first PT_LIVE_LAUNCH_FAST_NS
 * (a ring of 32768 records fills in 33 ms at a million events/s, and the
 * probe overwrites its oldest records until a reader attaches), then at the
 * drain period. */
#define PT_LIVE_LAUNCH_SCAN_FAST_NS 5000000ull
#define PT_LIVE_LAUNCH_FAST_NS 5000000000ull

struct pt_live_result;

/*
 * Requests from the screen to the sessions, taken by the loop after each
 * ui_wait: capture_steps > 0 asks the Python helper of every open session
 * for a deep capture of its next capture_steps steps (capture.h); the loop
 * sets it back to 0 and the outcome shows in the trace's capture list (a
 * refusal as a PT_CAPTURE_REFUSED entry with the reason).
 */
struct pt_live_ctl {
	uint32_t capture_steps;
};

struct pt_live_opts {
	const struct pt_backend_ops *session_ops; /* NULL: no session backend */
	const struct pt_backend_ops *procstat_ops;/* NULL: no CPU samples */
	const struct pt_backend_ops *nvml_ops;     /* optional GPU sampler, NULL = none */
	pid_t child;             /* launched CMD (0: attach) */
	int32_t session_pid;     /* session to open (the child's pid when launching) */
	/*
	 * Several sessions at once: the sessions of pids[0..npids),
	 * and with all_sessions every live session of this user, including
	 * those that appear while the loop runs (torchrun starts its ranks
	 * over a few seconds). Either one selects the multi-session mode:
	 * session_pid, child and find_pid are then not used. Each session is a
	 * process of the trace (pt_trace_set_proc: rank from RANK, else
	 * LOCAL_RANK, this host's name) with its own /proc samples; NVML is
	 * opened once. The loop ends when every session found has exited (and,
	 * with all_sessions, a last look finds no new one), at Ctrl-C, the
	 * duration or the UI's quit; with all_sessions and none found yet it
	 * waits. An exited session's events stay in the trace.
	 */
	const int32_t *pids;
	size_t npids;
	int all_sessions;
	/*
	 * The job this proftop launched (with child): the sessions whose
	 * segment carries this launch id (PROFTOP_LAUNCH_ID, inherited by every
	 * process below the child: a wrapper script's python, torchrun's ranks),
	 * each opened once it has recorded something, so a shell or a launcher
	 * that records nothing is not a rank. Multi-session mode; the child's
	 * own CPU is sampled from the start; the loop ends when the child has
	 * exited, after a last look at every session.
	 */
	uint64_t launch_id;
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
	/* one benchmark line on out every every_ns (pt_live_line); 0 = none */
	uint64_t every_ns;
	int screen;              /* redraw a text summary on out (a tty) */
	FILE *out;
	/*
	 * Optional full-screen UI (tui/), called instead of sleeping between
	 * polls for up to wait_ns; it reads t (no poll runs meanwhile). Returns 1
	 * when the user quit: attach then ends; with a child the child gets one
	 * SIGINT and the loop goes on quietly until it exits (the UI has closed).
	 * Returns 2 when the user quit leaving the child running: the loop ends
	 * at once (res->detached) and the child is not waited for.
	 */
	int (*ui_wait)(void *ctx, struct pt_trace *t, const struct pt_live_result *res,
		       uint64_t wait_ns);
	void *ui_ctx;
	/*
	 * Optional: called once per full period, after that period's drains,
	 * on the loop's thread (it may read t; no poll runs meanwhile), e.g.
	 * the anomaly recorder. now_ns: CLOCK_MONOTONIC.
	 */
	void (*after_poll)(void *ctx, struct pt_trace *t, uint64_t now_ns);
	void *after_ctx;
	/* Optional: the screen's requests (above), shared with ui_ctx. With
	 * capture_save, each capture this proftop asked for is saved once
	 * merged, as capture_dir/proftop-capture-PID-N.json (NULL: the current
	 * directory). */
	struct pt_live_ctl *ctl;
	int capture_save;
	const char *capture_dir;
	/* --capture-on-straggler K (0: off): once, when the newest step of a
	 * rank of a job of two or more takes K times the median of the ranks'
	 * recent steps, every rank captures the same capture_steps steps
	 * (0: 5), saved with capture_save; what happens is said on
	 * capture_out (NULL: nowhere). */
	double capture_on_straggler;
	uint32_t capture_steps;
	FILE *capture_out;
	/* The hang (colls.h), looked for once a second: a collective open for
	 * hang_after_ns (0: PT_HANG_AFTER_DEFAULT_NS) is said in res->hang and,
	 * with hang_out, once on hang_out ("proftop: hang: ..."), with a line
	 * again when it ends. */
	uint64_t hang_after_ns;
	FILE *hang_out;
};

/* One session of a multi-session run (pt_live_result.sessions). */
struct pt_live_session {
	int32_t pid;
	int64_t rank;            /* RANK, else LOCAL_RANK of the probe's environment; -1 */
	int exited;              /* its owner exited and it was drained */
};

struct pt_live_result {
	int session_found;       /* a session was opened (multi: at least one) */
	int session_exited;      /* its owner exited and it was drained (multi: all found) */
	size_t nsessions;        /* multi: sessions opened so far (single: 0 or 1) */
	size_t nexited;          /* multi: of which exited */
	/* multi: the nsessions sessions in the order found; valid while
	 * pt_live_run runs (ui_wait may read it), NULL once it returned */
	const struct pt_live_session *sessions;
	int child_done;          /* child reaped; status below */
	int child_status;        /* waitpid status */
	int interrupted;         /* Ctrl-C / SIGTERM seen */
	int ui_quit;             /* the screen was quit (q) */
	int detached;            /* ... leaving the child running (ui_wait returned 2) */
	int timed_out;           /* duration reached */
	char describe[512];      /* the session, escaped, or ""; multi: e.g.
				  * "4 sessions: rank 0..3 (pids 11,12,13,14)" */
	char error[256];         /* the session backend's first failure (e.g. a truncated segment), or "" */
	char hang[768];          /* the hang now (pt_coll_hang_line), escaped, or "" */
	uint64_t hang_seq;       /* its collective's seq (valid while hang[0]) */
	uint32_t hang_group;     /* its group (interned name) */
	uint64_t hang_since_ns;  /* when the first waiting rank entered it */
};

#endif
