/*
 * capture.h - deep captures of live sessions as proftop keeps them: a
 * job's Python helper ran torch's profiler for N steps on request (shm.h,
 * struct pt_shm_ctl) and wrote a Chrome trace; the session reader follows
 * the request's progress here and, when the trace is complete, merges its
 * events into the live trace on the session's clock (the marker
 * "proftop/sync#<seq>" is in the trace and its session-clock bracket in the
 * header), so the views show torch's operators nested under the helper's
 * modules and phases, in the right steps. The capture's cost (the step
 * times during it against those before and after) is measured from the
 * session's own steps.
 *
 * The list lives in the trace (pt_trace.captures); the reader writes it,
 * the faces read it between polls. Nothing here knows shared memory.
 */
#ifndef PROFTOP_CAPTURE_H
#define PROFTOP_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/trace.h"

/* Where a capture stands (the helper's states of shm.h, plus proftop's). */
enum pt_capture_state {
	PT_CAPTURE_ASKED = 0,   /* requested; the job has not reached a step boundary */
	PT_CAPTURE_RUNNING,     /* torch's profiler runs (done of steps) */
	PT_CAPTURE_WRITING,     /* stopped; the job writes the trace */
	PT_CAPTURE_MERGED,      /* merged into this trace */
	PT_CAPTURE_FAILED,      /* msg says why (in the job, or reading the trace here) */
	PT_CAPTURE_CANCELLED,
	PT_CAPTURE_REFUSED,     /* proftop did not ask: msg says why (another runs, no helper) */
};

struct pt_capture {
	int64_t pid;
	uint32_t seq;            /* the session's capture number (0 for a refusal) */
	uint8_t state;           /* enum pt_capture_state */
	uint8_t mine;            /* this proftop asked for it */
	uint32_t steps, done;    /* asked for, finished */
	uint64_t asked_ns;       /* CLOCK_MONOTONIC */
	uint64_t t0_ns, t1_ns;   /* torch's profiler ran from t0 to t1 (session clock) */
	uint64_t start_block_ns, stop_block_ns, write_ns;
	uint64_t sync_err_ns;    /* how far off the clock alignment can be (half the
	                            marker's bracket, less the marker) */
	uint64_t events;         /* merged into the trace */
	uint64_t flop_events;    /* of which carry FLOPs */
	/* step times of the process (ns, medians) and how many steps each holds */
	uint64_t before_ns, during_ns, after_ns;
	uint32_t before_n, during_n, after_n;
	int64_t first_step, last_step; /* numbers of the captured steps (the job's count from
					  0, else their ordinals here), -1: unknown */
	int64_t job_first_step;  /* the job's number of the first one, -1: not said */
	uint64_t win0_ns, win1_ns; /* the captured steps' span (their first start, last end) */
	char msg[256];           /* the helper's line, or why merging failed (raw: escape it) */
	char saved[512];         /* where this proftop saved it as a Chrome trace, "" if not */
	int save_failed;
	/* A capture of the same steps on every rank (key T on a job of several
	 * ranks, --capture-on-straggler): the group this proftop asked for it
	 * in (0: none) and the job's step it starts at (-1: the next boundary). */
	uint32_t group;
	int64_t at_step;
};

/* A group of captures asked for together: one per rank, the same steps. */
struct pt_capture_group {
	uint32_t id;
	int64_t at_step;         /* the job's first step captured on every rank */
	uint32_t steps;
	uint32_t asked;          /* ranks asked (refusals included) */
	uint64_t asked_ns;       /* CLOCK_MONOTONIC */
	char why[160];           /* what asked for it ("key T", "rank 3's step ..."), raw */
	char saved[512];         /* the folder this proftop saved it in, "" if not */
	int save_failed;
	char save_err[200];
	int said;                /* the live loop has saved it and said so (its end is final) */
};

struct pt_capture_list {
	struct pt_capture *v;
	uint32_t n, cap;
	uint32_t gen;            /* bumps on every change (faces redraw) */
	struct pt_capture_group *groups; /* the newest CAPTURE_GROUPS_KEEP, oldest first */
	uint32_t ngroups, next_group;
};

/* The capture (pid, seq), created when create is set (NULL otherwise). */
struct pt_capture *pt_capture_get(struct pt_trace *t, int64_t pid, uint32_t seq, int create);
/* The most recently created capture, NULL when none. */
const struct pt_capture *pt_capture_latest(const struct pt_trace *t);
/* Records a request proftop did not make (why: one line). */
void pt_capture_refused(struct pt_trace *t, int64_t pid, const char *why);
/*
 * Captures of the same steps on every rank. pt_capture_group_new starts a
 * group (at_step: the job's step the captures start at; why: a few words
 * on what asked) and returns it; pt_capture_group_add puts capture (pid,
 * seq) in it (created as asked for) or, with seq 0, a rank that refused
 * (why).
 * pt_capture_group_over: 1 once every member is final (merged, failed,
 * cancelled or refused). pt_capture_group_latest: the newest group, NULL
 * when none.
 */
struct pt_capture_group *pt_capture_group_new(struct pt_trace *t, int64_t at_step,
					      uint32_t steps, const char *why);
void pt_capture_group_add(struct pt_trace *t, struct pt_capture_group *g, int64_t pid,
			  uint32_t seq, const char *why);
const struct pt_capture_group *pt_capture_group_latest(const struct pt_trace *t);
int pt_capture_group_over(const struct pt_trace *t, const struct pt_capture_group *g);
/*
 * One line for a group, e.g. "capture of steps 120-124 on 4 ranks: 2
 * running, 2 waiting for step 120" or, once saved, "capture of steps
 * 120-124 on 4 ranks: saved proftop-capture-steps-120-124/, step time x1.42
 * (12.1 ms vs 8.5 ms before, medians of the ranks); rank 2 failed: ...".
 * brief: the folder's last part only. Raw text from the jobs is escaped.
 */
void pt_capture_group_describe(const struct pt_trace *t, const struct pt_capture_group *g,
			       char *buf, size_t len, int brief);
void pt_capture_list_free(struct pt_capture_list *l);
/* Marks a change (the faces look at gen). */
void pt_capture_touch(struct pt_trace *t);

/*
 * Reads the capture's Chrome trace at path and adds its events to t, on
 * the session clock: the marker "proftop/sync#<c->seq>" is placed between
 * sync_lo_ns and sync_hi_ns (session clock), the marker's thread becomes
 * thread tid of process pid, the trace's other threads and device streams
 * become tracks of pid. Steps, the profiler's own spans and the marker are
 * left out (the session has its steps). Fills c->events, c->flop_events,
 * c->sync_err_ns. 0, or PT_E* with one line in err (nothing added then).
 */
int pt_capture_merge(struct pt_trace *t, struct pt_capture *c, const char *path, int32_t tid,
		     uint64_t sync_lo_ns, uint64_t sync_hi_ns, char *err, size_t errlen);
/*
 * The capture's cost from the process's own steps (its first track with
 * steps): medians of the steps that ended before t0 (the latest
 * max(steps, 5), at most 64), of those that overlap [t0, t1] (with their
 * ordinal numbers and span), and of those that began after t1 (as many, the
 * first ones). full: all of it (reads the step track from its start: at
 * the merge, and again while none of the capture's steps had come in);
 * else only the steps after, read from t1 on (while after_n is short of
 * the count, as steps come).
 */
/*
 * Whether t holds a step of process pid that ended by t0_ns: a reader that
 * attached after a capture had ended still has the capture's steps (and
 * those before it) when its first drain brought one in, and may merge it.
 */
int pt_capture_steps_from(struct pt_trace *t, int64_t pid, uint64_t t0_ns);
uint32_t pt_capture_cost_want(const struct pt_capture *c);
void pt_capture_cost(struct pt_trace *t, struct pt_capture *c, int full);
/*
 * Saves the captured steps (win0..win1, every process's events that start
 * there) as a Chrome trace: to path, or when path is NULL to
 * dir/proftop-capture-<pid>-<seq>.json (dir NULL: the current directory;
 * -2, -3, ... when taken). Sets c->saved, or c->save_failed with the reason
 * in err. 0 or PT_E*.
 */
int pt_capture_save(struct pt_trace *t, struct pt_capture *c, const char *path, const char *dir,
		    char *err, size_t errlen);
/*
 * Saves a group's merged captures together, in a new folder
 * dir/proftop-capture-steps-A-B (dir NULL: the current directory; -2, -3,
 * ... when taken): rank-R.json per rank (its own process, its captured
 * steps; `proftop merge` joins these, from several nodes too, lining their
 * clocks up on the common steps) and all-ranks.json (every rank of this
 * trace in one file, from the first rank's captured steps to the last's).
 * Each file is written whole and renamed. Sets g->saved and each member's
 * saved, or g->save_failed with the reason in err. 0 or PT_E*.
 */
int pt_capture_group_save(struct pt_trace *t, struct pt_capture_group *g, const char *dir,
			  char *err, size_t errlen);
/*
 * One line for the screen or the terminal, e.g.
 *   "capture #1 (pid 123): 5 steps, 4810 events merged; steps 12.1 ms
 *    during vs 8.0 ms before (x1.51), 8.1 ms after; start 1.2 ms, stop 40 ms"
 * brief: shorter, for the status line: the saved file's name first, then
 * the steps and the step time's ratio, e.g. "capture #1: saved
 * proftop-capture-123-1.json, steps 12-16, step time x1.51 (12.1 ms vs
 * 8.0 ms before, 8.1 ms after)". Raw text from the job is escaped.
 */
void pt_capture_describe(const struct pt_capture *c, char *buf, size_t len, int brief);

#endif
