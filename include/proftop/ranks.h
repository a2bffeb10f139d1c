/*
 * ranks.h - per-rank figures of a trace that holds several processes of one
 * job: a merged trace (proftop merge), or many live sessions of one node.
 * A rank is a process (struct pt_proc gives its rank number and host when
 * known). pt_ranks_compute() reads each event once, into the aggregator of
 * its process, so N ranks cost one pass, not N; the ranks are fed on as
 * many threads as there are cores (and ranks). The Ranks view, the report's
 * Rank Summary, and the Prometheus exporter all read these figures.
 */
#ifndef PROFTOP_RANKS_H
#define PROFTOP_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/agg.h"
#include "proftop/trace.h"

/* Shares of step time, in Paddle's Model Summary order. */
enum pt_rank_phase {
	PT_RANK_DATALOADER,
	PT_RANK_FORWARD,
	PT_RANK_BACKWARD,
	PT_RANK_OPTIMIZATION,
	PT_RANK_OTHER,
	PT_RANK__PHASES
};

struct pt_rank_stat {
	int64_t pid;               /* process id as the trace's tracks give it */
	int64_t rank;              /* rank number, -1 when unknown */
	char name[32];             /* "rank 3", or "pid 1234" when the rank is unknown */
	char host[64];             /* host name, "" when unknown (escaped: printable ASCII) */
	uint64_t steps;            /* complete steps */
	int64_t last_step;         /* number of the last step, -1 when none */
	double step_avg_ms;        /* mean step time over the window */
	double step_p50_ms, step_p99_ms, step_max_ms;
	double ips;                /* steps per second (Paddle's ips) */
	double samples_per_s;      /* 0 when the source gave no sample counts */
	double reader_ratio;       /* Dataloader time / step time, 0..1 */
	double phase_share[PT_RANK__PHASES]; /* of step time, 0..1 */
	double gpu_util_pct;       /* device busy / span over its devices, -1: no device data */
	double cpu_util_pct;       /* process CPU (procstat samples), -1: unknown */
	double comm_share;         /* communication / step time, 0..1 */
	double comm_overlap;       /* overlapped communication / communication, 0..1 */
	uint64_t events;           /* events aggregated for this rank */
	struct pt_summary *summary;/* this rank's full summary (owned by pt_ranks) */
};

struct pt_ranks {
	struct pt_rank_stat *r;    /* sorted by rank number, then pid */
	size_t n;
	size_t slowest;            /* index of the highest step_avg_ms (valid when n > 0) */
	double median_step_ms;     /* over ranks with steps */
	double spread;             /* max / median step_avg_ms; 0 with fewer than 2 such ranks */
	size_t mem_bytes;          /* what the ranks' aggregators held (counted against the cap) */
};

/*
 * Computes per-rank figures over the window in o (NULL = everything). Every
 * process with at least one host or device event is a rank. Returns 0, or a
 * negative PT_E* code; out is then empty. PT_ENOMEM: the ranks' state would
 * pass the trace's memory cap (--max-mem) beside what the store holds.
 */
int pt_ranks_compute(struct pt_trace *t, const struct pt_agg_opts *o, struct pt_ranks *out);
/*
 * The same on up to `threads` threads (<= 0: one per core, at most 8; never
 * more than ranks): each rank's aggregator is fed and settled on one of
 * them, so the figures are the same whatever the count. No other thread may
 * append to the trace meanwhile; others may read it (store.h).
 */
int pt_ranks_compute_threads(struct pt_trace *t, const struct pt_agg_opts *o, int threads,
			     struct pt_ranks *out);
void pt_ranks_free(struct pt_ranks *r);

/*
 * The per-rank figures of a growing trace (a live session of several
 * ranks), refreshed at the cost of what arrived since the last call rather
 * than of the session: each rank keeps a live summary of its own tracks
 * (pt_agg_live_summary's way). Each call returns what
 * pt_ranks_compute(t, NULL, out) would, figure for figure; 0 or PT_ENOMEM
 * (out empty) as it does. Call it with the same trace each time.
 */
struct pt_ranks_live;
struct pt_ranks_live *pt_ranks_live_new(void);
int pt_ranks_live_compute(struct pt_ranks_live *rl, struct pt_trace *t, struct pt_ranks *out);
/* Summed over the ranks' live summaries: refreshes and rebuilds (a rank
 * that started over counts one), the last call's events fed and tail, the
 * kept aggregators' bytes; cost_ns: the last call's; full: some rank's
 * correlation ids repeat. */
void pt_ranks_live_stats(const struct pt_ranks_live *rl, struct pt_agg_live_stats *out);
void pt_ranks_live_free(struct pt_ranks_live *rl);
/*
 * Figures over a recent window instead of every event (0, the default:
 * every event; a change starts the ranks over): each call then returns
 * what pt_ranks_compute(t, o, out) returns with o->t0_ns =
 * pt_ranks_live_start(rl), figure for figure. The start moves in steps of
 * half the window: it is the first multiple of window_ns / 2 at or after
 * the trace's newest end (t->last_ns) less window_ns, so the figures cover
 * between half the window and all of it, never more, and 0 while the
 * trace is younger than the window. Each rank keeps the next window's
 * summary up to date too, so a call still costs what arrived, not the
 * window.
 */
void pt_ranks_live_set_window(struct pt_ranks_live *rl, uint64_t window_ns);
/* The start of the last call's window (0: every event). */
uint64_t pt_ranks_live_start(const struct pt_ranks_live *rl);

/*
 * 0 when t surely holds at most one rank (no process table of two or more,
 * fewer than two processes with host events), else 1. Looks at the track
 * table only, so a face can skip pt_ranks_compute's pass for the common
 * single-process trace. (Added with proftop merge.)
 */
int pt_ranks_possible(const struct pt_trace *t);

#endif
