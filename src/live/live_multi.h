/*
 * live_multi.h - the set of sessions behind a multi-session live loop
 * (proftop -p A,B,..., --all): which pids to read, finding sessions that
 * appear later, opening each with its /proc sampler, draining them all,
 * and telling the loop when every one has ended. Internal to live.c.
 */
#ifndef PT_LIVE_MULTI_H
#define PT_LIVE_MULTI_H

#include <stdint.h>

#include "live/live_opts.h"

struct live_multi;

struct live_multi *live_multi_new(const struct pt_live_opts *o, struct pt_trace *t,
				  uint64_t poll_ns);
/* Every full period: looks for new sessions (--all, when due) and opens the pending ones. */
void live_multi_open(struct live_multi *m, uint64_t now_ns, struct pt_live_result *res);
/* When the session directory is next due a look (UINT64_MAX: never, only the
 * pids given); the loop calls live_multi_open by then. */
uint64_t live_multi_open_due(const struct live_multi *m);
/*
 * Drains the open sessions that are due (all of them when all_due: a full
 * period) into t; each keeps its own gap (live_drain_gap), so one busy rank
 * is drained every millisecond without the idle ones. Returns when the next
 * session wants draining (UINT64_MAX: none open).
 */
uint64_t live_multi_drain(struct live_multi *m, uint64_t now_ns, int all_due, uint64_t busy_ns,
			  struct pt_live_result *res);
/* The pacing of drains (live.c's one session and each of these): the gap to
 * the next drain after one that was busy or not. */
uint64_t live_drain_gap(uint64_t gap_ns, int busy, uint64_t busy_ns, uint64_t poll_ns);
/* Every full period: the /proc sample of each process. */
void live_multi_sample(struct live_multi *m, uint64_t now_ns);
/* Sessions open and not exited (the loop drains only while there are some). */
size_t live_multi_live(const struct live_multi *m);
/* The first session's pid (for NVML's per-process memory), 0 when none yet. */
int32_t live_multi_first_pid(const struct live_multi *m);
/* 1 when the loop should end: every session found has ended and none is pending. */
int live_multi_done(struct live_multi *m, uint64_t now_ns, struct pt_live_result *res);
/* The launched child has exited: a last scan, open and drain of everything. */
void live_multi_final(struct live_multi *m, uint64_t now_ns, struct pt_live_result *res);
/* The pids of the open sessions (at most max), in the order found. */
size_t live_multi_open_pids(const struct live_multi *m, int32_t *out, size_t max);
/* Asks every open session's helper for a deep capture of `steps` steps
 * (at_step > 0: from the job's step at_step on, the same steps on every
 * rank); returns how many accepted, with the first refusal's reason in
 * why. With g, each session asked (or refusing) joins the group. */
struct pt_capture_group;
size_t live_multi_capture(struct live_multi *m, uint32_t steps, int64_t at_step,
			  struct pt_capture_group *g, int32_t *first_pid, char *why,
			  size_t whylen);
/* Closes everything; res->sessions becomes NULL. */
void live_multi_free(struct live_multi *m, struct pt_live_result *res);

#endif
