/*
 * live_steps.h - the ranks' newest steps in a live job (live_steps.c),
 * behind captures of the same steps on every rank: the step such a capture
 * starts at, and the straggler that asks for one by itself
 * (--capture-on-straggler). Reads the trace only.
 */
#ifndef PT_LIVE_STEPS_H
#define PT_LIVE_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/trace.h"

/* The least time ahead a group's first step is put (a rank's reader sees
 * its steps a drain late, and its helper looks at a step boundary), and
 * the least steps. */
#define PT_LIVE_CAPTURE_AHEAD_NS 1000000000ull
#define PT_LIVE_CAPTURE_AHEAD_STEPS 2

/*
 * The ranks' newest steps, kept as they come: pt_live_steps_update reads
 * the steps that ended since its last call on each rank's stepping thread
 * (so a call costs what arrived on that thread, not its history).
 */
struct pt_live_steps;
struct pt_live_steps *pt_live_steps_new(void);
void pt_live_steps_update(struct pt_live_steps *s, struct pt_trace *t, const int32_t *pids,
			  size_t n);
void pt_live_steps_free(struct pt_live_steps *s);

/*
 * The job's step number at which a capture of every rank in pids[0..n)
 * starts (after pt_live_steps_update): past the furthest rank's newest step
 * by the steps that take PT_LIVE_CAPTURE_AHEAD_NS at the job's pace now
 * (the median of each rank's newest two steps), at least
 * PT_LIVE_CAPTURE_AHEAD_STEPS. -1 when no rank has a
 * step yet.
 */
int64_t pt_live_capture_at_step(const struct pt_live_steps *s, const int32_t *pids, size_t n);

/* What --capture-on-straggler saw. */
struct pt_live_straggler {
	int32_t pid;
	int64_t step;       /* the job's number of the slow step */
	uint64_t step_ns;   /* its time */
	uint64_t median_ns; /* the ranks' recent steps, the newest of each left out */
	double ratio;
};

/*
 * 1 when the newest step of some rank in pids[0..n) (one that ended after
 * since_ns) took k times the median of the ranks' recent steps or more
 * (the last PT_LIVE_STRAGGLER_STEPS of each, the newest left out; at least
 * PT_LIVE_STRAGGLER_MIN_STEPS of them, and a step of a millisecond or
 * more), with the slowest such rank in *out; else 0.
 */
#define PT_LIVE_STRAGGLER_STEPS 32
#define PT_LIVE_STRAGGLER_MIN_STEPS 8
int pt_live_straggler_check(const struct pt_live_steps *s, const int32_t *pids, size_t n,
			    double k, uint64_t since_ns, struct pt_live_straggler *out);

#endif
