/*
 * cluster.h - the Ranks view of a whole job, many nodes, from the series
 * each node's `proftop serve` exports to Prometheus (docs/distributed.md):
 * the samples of a few instant queries in, per-rank rows and the job's
 * straggler and hang out (src/analyze/cluster.c). Nothing here talks to
 * the network: backends/prom_query.c fetches the samples.
 *
 * Across nodes arrival times are not comparable (each node's clock is its
 * own), so the straggler is found from what each rank measured itself: in
 * a synchronous job every rank waits in the collectives for the last one,
 * so the straggler is the rank that spends the least of its time in them
 * (5 points or more below the median), and its reason the phase of its steps
 * that is longer than the other ranks' median by the most. A node's own
 * straggler figure (proftop_straggler_late_seconds, from arrivals it could
 * compare) is shown beside it. The hang: a node says ranks wait in a
 * collective (proftop_hang_seconds, proftop_hang_waiting); every other rank
 * of the job is missing, with what it has had open for a second or more
 * (proftop_rank_open_range_seconds) and its process state where its node
 * knows it (proftop_hang_missing).
 */
#ifndef PROFTOP_CLUSTER_H
#define PROFTOP_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

/* One sample of an instant query, the labels proftop's series carry. */
struct pt_cluster_sample {
	char host[64], job[64];
	int64_t rank, pid;        /* -1 when the series has none */
	char phase[16];           /* proftop_phase_ratio, proftop_straggler_late_seconds */
	char op[32], group[48];   /* collectives, the hang */
	char name[48];            /* proftop_rank_open_range_seconds */
	char process[12];         /* proftop_hang_missing */
	int64_t seq, depth;       /* -1 when none */
	double value;
};

/* What the view asks Prometheus, one instant query each (QUERY_* order). */
enum pt_cluster_query {
	PT_CQ_STEP_MEAN,   /* proftop_step_mean_seconds */
	PT_CQ_STEPS,       /* proftop_steps */
	PT_CQ_PHASE,       /* proftop_phase_ratio */
	PT_CQ_WAIT,        /* irate(proftop_rank_collective_seconds_total[2m]): the last two scrapes */
	PT_CQ_STRAGGLER,   /* proftop_straggler_late_seconds */
	PT_CQ_HANG,        /* proftop_hang_seconds */
	PT_CQ_HANG_WAITING,/* proftop_hang_waiting */
	PT_CQ_HANG_MISSING,/* proftop_hang_missing */
	PT_CQ_OPEN,        /* proftop_rank_open_range_seconds */
	PT_CQ__COUNT
};

/* The PromQL of query q, restricted to job when job is not NULL or "". */
size_t pt_cluster_query_text(enum pt_cluster_query q, const char *job, char *buf, size_t len);

struct pt_cluster_rank {
	char host[64];
	int64_t rank, pid;
	double step_ms;           /* mean step time, -1 unknown */
	uint64_t steps;
	double phase[5];          /* shares: dataloader, forward, backward, optimization, other */
	double wait_ratio;        /* time in blocking collectives / time, -1 unknown */
	double late_ms;           /* its node named it the straggler: how late, else -1 */
	int straggler, waiting, missing;
	char open[48];            /* outermost range open >= 1 s, "" none */
	double open_s;
	char process[12];         /* missing: "running", "exited", "died", "" unknown */
};

struct pt_cluster {
	struct pt_cluster_rank *r; /* by rank number */
	size_t n;
	size_t nhosts;
	double median_step_ms, spread;
	/* the straggler: index into r, SIZE_MAX none; its reason, escaped */
	size_t straggler;
	char reason[256];
	/* the hang, "" none (escaped), and its figures */
	char hang[768];
	double hang_s;
	size_t nwaiting, nmissing;
};

/* From the samples of each query (s[q], n[q]). Returns 0. */
int pt_cluster_compute(const struct pt_cluster_sample *const s[PT_CQ__COUNT],
		       const size_t n[PT_CQ__COUNT], struct pt_cluster *out);
void pt_cluster_free(struct pt_cluster *c);

#endif
