/*
 * colls.h - the collectives of a job across its ranks (src/analyze/colls.c),
 * from the trace's rows (coll.h): calls of every rank matched by (group,
 * seq), and from the matches
 *
 *  - per op and group: calls, bytes, the arrival skew (last arrival less
 *    the first), the rank most often last, bus bandwidth as nccl-tests
 *    defines it (algorithm bandwidth bytes / time, times 2(n-1)/n for an
 *    all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all, 1
 *    for broadcast and reduce), the time taken from the last arrival to the
 *    first completion;
 *  - per rank: time in collectives, of which waiting for later ranks, and
 *    how often it was the last to arrive, and by how much;
 *  - the hang: a collective that ranks entered and that has not completed
 *    for hang_after, the ranks waiting in it and those that never entered
 *    it (marked when their process ended), with what each missing rank had
 *    open when last seen (pt_track's open ranges).
 *
 * Point-to-point calls (send, recv) are counted but not matched. A rank is
 * a process; its number comes from the trace's process table (pt_proc),
 * else the process's place. Reads the trace only; no thread of its own.
 */
#ifndef PROFTOP_COLLS_H
#define PROFTOP_COLLS_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/trace.h"

#define PT_HANG_MAX_RANKS 64
#define PT_HANG_OPEN 4

struct pt_coll_op_stat {
	char op[32];        /* escaped for a terminal */
	char group[48];     /* escaped */
	uint64_t calls;     /* matched calls (two ranks or more entered them) */
	uint64_t rows;      /* calls of single ranks, matched or not */
	uint64_t bytes;     /* bytes per call and rank, mean */
	double skew_ms_avg, skew_ms_max;
	int64_t last_rank;  /* the rank most often last to arrive, -1: none */
	uint64_t last_count;/* of calls where it was */
	double last_late_ms;/* its skew in those calls, mean */
	double busbw_gb_per_s; /* mean over completed matched calls, 0: unknown */
	double time_ms_avg; /* last arrival to first completion, mean */
	uint32_t group_size;
	int p2p;
	/* per entry of pt_coll_stats.ranks: calls it arrived last in, and its
	 * skew in them summed (owned by the stats) */
	uint64_t *rank_last;
	double *rank_late;
};

struct pt_coll_rank_stat {
	int64_t rank, pid;
	uint64_t calls;     /* its rows */
	double coll_ms;     /* time in collectives (entry to completion, blocking calls) */
	double coll_total_s;/* the same since the start, every row (dropped ones too) */
	double wait_ms;     /* of which before the last rank arrived */
	uint64_t last;      /* matched calls where it arrived last */
	double late_ms;     /* summed: how much later than the first it arrived, when last */
	size_t nopen;       /* what its host threads have open now, outermost first */
	char open[PT_HANG_OPEN][48];  /* escaped names */
	double open_s[PT_HANG_OPEN];  /* how long each has been open at now_ns */
};

struct pt_coll_hang {
	int active;         /* 1: a collective has not completed for hang_after */
	char op[32], group[48];
	uint64_t seq;
	double since_s;     /* since the first waiting rank entered it */
	size_t nwaiting, nmissing; /* counts (the lists hold the first PT_HANG_MAX_RANKS) */
	int64_t waiting[PT_HANG_MAX_RANKS];
	struct pt_hang_missing {
		int64_t rank, pid;
		int ended;          /* its process ended: 1 exited, 2 died (pt_proc) */
		size_t nopen;       /* open ranges, outermost first */
		char open[PT_HANG_OPEN][48]; /* escaped names */
		double open_s[PT_HANG_OPEN]; /* how long each has been open */
		double quiet_s;     /* since its last event ended, -1 unknown */
	} missing[PT_HANG_MAX_RANKS];
	uint32_t group_size;    /* 0 unknown; > waiting + missing: ranks not in this trace */
};

struct pt_coll_stats {
	struct pt_coll_op_stat *ops;   /* sorted by group, then op */
	size_t nops;
	struct pt_coll_rank_stat *ranks; /* sorted by rank */
	size_t nranks;
	uint64_t rows, matched, open;    /* rows seen, matched calls, rows open */
	uint64_t dropped;                /* rows the memory cap dropped */
	struct pt_coll_hang hang;
};

/*
 * Computes the figures over rows that start at or after t0_ns, and every
 * row still open (a hang outlasts any window). now_ns: the
 * time a hang is measured at (live: the session clock now; a file: its
 * last event's end); hang_after_ns: 0 = PT_HANG_AFTER_DEFAULT_NS. Returns
 * 0, out empty when the trace has no rows.
 */
#define PT_HANG_AFTER_DEFAULT_NS (30ull * 1000000000ull)
int pt_coll_stats_compute(const struct pt_trace *t, uint64_t t0_ns, uint64_t now_ns,
			  uint64_t hang_after_ns, struct pt_coll_stats *out);
void pt_coll_stats_free(struct pt_coll_stats *s);
/* The rank's entry in s, NULL when it has none. */
const struct pt_coll_rank_stat *pt_coll_rank(const struct pt_coll_stats *s, int64_t rank);
/*
 * One line on the hang, escaped, e.g. "ranks 0-6 have waited 41 s in
 * all_reduce #1932 (group 0); rank 7 never entered it; its open ranges:
 * Dataloader". Empty when there is no hang. Returns the length.
 */
size_t pt_coll_hang_line(const struct pt_coll_hang *h, char *buf, size_t len);
/* "0-6" / "0,2,5" from a sorted list of ranks. */
size_t pt_coll_rank_list(const int64_t *r, size_t n, char *buf, size_t len);

/*
 * The straggler of a job and why: the rank whose lateness at the matched
 * collectives (how much after the first it arrived, summed over the calls
 * it was last in) is half the job's or more, else the rank with the
 * slowest steps (ranks.h), and the phase of its steps that is longer than
 * the same phase's median over the other ranks by the most.
 */
struct pt_ranks;
struct pt_straggler {
	int valid;
	int64_t rank;
	char name[32];          /* "rank 3" (pt_rank_stat's name) */
	int by_collectives;     /* 1: named by its arrivals, 0: by its step time */
	double last_share;      /* of the matched calls, the share it arrived last in */
	double late_ms_avg;     /* when last at op: by how much, mean */
	char op[32];            /* the op it is most often last at, "" none */
	int phase;              /* enum pt_rank_phase, -1: no phase stands out */
	double phase_ms, others_ms; /* per step: its phase, the others' median */
	char reason[256];       /* one line, escaped */
};
/* Of the five phases (ranks.h's order), the one where mine[p] (ms a step)
 * passes the median of others[i * 5 + p] (i < n ranks) by the most, by a
 * tenth of step_ms and min_ms at least; its figures in *mine_ms, *med_ms.
 * -1 when none stands out. pt_phase_text(p): "Dataloader", ... */
int pt_phase_longer(const double *mine, const double *others, size_t n, double step_ms,
		    double min_ms, double *mine_ms, double *med_ms);
const char *pt_phase_text(int p);
void pt_straggler_find(const struct pt_ranks *r, const struct pt_coll_stats *c,
		       struct pt_straggler *out);

#endif
