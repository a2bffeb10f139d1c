/*
 * ranks_int.h - what the per-rank figures of a whole trace (ranks.c) and of
 * a growing one (ranks_live.c) share: the trace's processes as groups,
 * which of them are ranks, the ranks' figures from their summaries, and
 * running one job per rank on several threads.
 */
#ifndef PT_RANKS_INT_H
#define PT_RANKS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/ranks.h"

#define NO_RANK UINT32_MAX
/* A rank's aggregator and summary before its tracks and rows (the structs
 * are 1.3 KB and 1.1 KB; a one-track rank measured 8-10 KB with the first
 * small arrays). */
#define RANK_FIXED_BYTES 8192u

/* One process of the trace: the tracks sharing (pid, pid_str). */
struct group {
	int64_t pid;
	uint32_t pid_str;
	uint64_t host_events, device_events;
	int has_steps;
	uint64_t steps_before; /* step events starting before the window (t0_ns) */
	const struct pt_proc *proc;
	uint32_t rank_idx; /* index into the working rank list, NO_RANK: not aggregated */
	int main;
};

/* Jobs 0..n-1 (one per rank) on several threads, each job on one of them. */
struct jobs {
	size_t n;
	size_t next;	 /* the next job to take (atomic) */
	const int *stop; /* when set (atomic), no further job starts; may be NULL */
	void (*fn)(void *ctx, size_t i);
	void *ctx;
};

/* Groups the tracks by process; fills track_group[track]. Returns the group count. */
size_t ranks_groups(const struct pt_trace *t, uint32_t *track_group, struct group **out);

/*
 * Decides which groups are ranks and which rank every other group's
 * events belong to. Fills g[].rank_idx; returns the number of ranks and
 * the naming group of each in *rank_group.
 */
size_t ranks_assign(const struct pt_trace *t, struct group *g, size_t ng, uint32_t **rank_group);

/* out's ranks from each rank's summary (taken) and naming group, sorted by
 * rank number, the spread settled. */
void ranks_fill(const struct pt_trace *t, struct pt_ranks *out, const struct group *g,
		const uint32_t *rank_group, struct pt_summary **sums, size_t nr);

/* threads <= 0: one per core, at most RANKS_MAX_THREADS; never more than jobs. */
void ranks_run_jobs(struct jobs *j, int threads);

/* What the ranks' aggregators may hold beside the store: the cap less what
 * the store holds, at least the quarter of it kept for summaries. */
size_t ranks_room(const struct pt_trace *t);

#endif
