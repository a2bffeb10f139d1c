/*
 * advisor.h - the bottleneck advisor: rules over the aggregator's figures
 * that say what to do, not only what happened (MindInsight's "Helper", the
 * Paddle guide's dataloader case study). Each rule has a named threshold
 * (struct pt_advisor_opts, defaults below), and when it fires it gives the
 * evidence - numbers from the summarized window, formatted - and a concrete
 * suggestion. The report prints them as an Advice section and a JSON
 * "advice" array; the TUI shows them in its Advice view.
 *
 * Inputs: the summary (agg.h), the per-rank figures (ranks.h) when the trace
 * holds two or more ranks, and a few facts the summary does not keep -
 * time in kernel-launch and synchronizing runtime calls, and the operator
 * that issued each synchronizing call - gathered by pt_advisor_scan(), one
 * pass over the host tracks of the summarized span.
 *
 * Rules (key, threshold, default; a rule fires at or beyond its threshold,
 * "critical" at or beyond critical_factor times it, for the two "low"
 * thresholds at or below threshold / critical_factor):
 *   input_bound      input_ratio_pct 20      reader ratio (or Dataloader
 *                                            share of ProfileStep), %
 *   gpu_starved      gpu_util_low_pct 40     GPU busy / (span - dataloader
 *                                            time), % of the busiest GPU, below;
 *                    launch_share_pct 10     and kernel-launch API time or
 *                    host_fwd_ratio 2.0      Forward CPU / Forward GPU time
 *                                            (Forward >= 10% of step time)
 *                    gpu_min_kernels 20      kernels needed to judge at all
 *   sync             sync_share_pct 5        synchronizing calls / step time, %
 *   comm_bound       comm_share_pct 20       device communication / step, %
 *                    comm_overlap_low_pct 50 and overlapped share of it below
 *   memcpy_pageable  pageable_share_pct 5    copies from/to pageable host
 *                                            memory (device time) / step, %
 *   straggler        straggler_spread 1.2    slowest rank's step / median; or,
 *                                            with collectives, the rank the others
 *                                            wait for (colls.h's straggler)
 *   hang             hang_after_ns 30 s      a collective open this long, with
 *                                            the ranks missing from it (critical)
 *   step_jitter      jitter_ratio 1.5        p99 / p50 step time, with at
 *                    jitter_min_steps 5      least this many steps and at least
 *                    jitter_min_slow 2       this many at jitter_ratio x p50 or
 *                                            more; the window's first step is
 *                                            left out (warm-up) when there are
 *                                            more than jitter_min_steps
 *   data_pipeline    data_busy_pct 80        workers busy (datapipe.h), %, at or
 *                                            above it while the queue is empty
 *                                            or the reader ratio is at
 *                                            input_ratio_pct: saturated (more
 *                                            workers, or a cheaper slowest
 *                                            stage; critical at critical_factor
 *                                            x input_ratio_pct);
 *                    data_empty_pct 50       fetches that found the loader's
 *                                            queue empty, %, with
 *                    data_idle_pct 50        workers busy below it: the
 *                                            sampler or the main process;
 *                    data_full_pct 10        empty below it while the reader
 *                                            ratio is at input_ratio_pct: the
 *                                            transfer (pin memory, copies);
 *                                            no queue and stages on the
 *                                            training thread at input_ratio_pct:
 *                                            names the slowest stage
 * Order: by severity (critical first), then in the order above.
 *
 * Threading: pure functions over immutable summaries; pt_advisor_scan reads
 * the trace's store (iterates, which may sort unsorted chunks), so call it
 * where the store is not being written (like pt_summarize). On a store of
 * PT_SUMMARIZE_PIPE_EVENTS events or more, pt_advise_trace_dp sorts it and
 * computes the data pipeline on a thread of its own beside the scan
 * (joined before it returns).
 */
#ifndef PROFTOP_ADVISOR_H
#define PROFTOP_ADVISOR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proftop/agg.h"
#include "proftop/ranks.h"
#include "proftop/trace.h"

enum pt_advice_key {
	PT_ADV_INPUT_BOUND = 0,
	PT_ADV_GPU_STARVED,
	PT_ADV_SYNC,
	PT_ADV_COMM_BOUND,
	PT_ADV_MEMCPY_PAGEABLE,
	PT_ADV_STRAGGLER,
	PT_ADV_STEP_JITTER,
	PT_ADV_DATA_PIPELINE,
	PT_ADV_RECOMPILE,
	PT_ADV_HANG,          /* a collective open past hang_after_ns (colls.h) */
	PT_ADV__COUNT
};
/* "input_bound", "gpu_starved", "sync", "comm_bound", "memcpy_pageable",
 * "straggler", "step_jitter", "data_pipeline", "recompile", "hang" (stable: JSON keys). */
const char *pt_advice_key_name(enum pt_advice_key k);

enum pt_advice_severity { PT_ADV_WARNING = 1, PT_ADV_CRITICAL = 2 };
const char *pt_advice_severity_name(enum pt_advice_severity s); /* "warning", "critical" */

struct pt_advisor_opts {
	double input_ratio_pct;
	double gpu_util_low_pct;
	double launch_share_pct;
	double host_fwd_ratio;
	unsigned gpu_min_kernels;
	double sync_share_pct;
	double comm_share_pct;
	double comm_overlap_low_pct;
	double pageable_share_pct;
	double straggler_spread;
	double jitter_ratio;
	unsigned jitter_min_steps;
	unsigned jitter_min_slow;
	double data_empty_pct;
	double data_busy_pct;
	double data_idle_pct;
	double data_full_pct;
	double recompile_step_pct; /* steps that recompiled (torch.compile), of all */
	unsigned recompile_min;    /* recompiles before the rule speaks */
	double critical_factor;
	uint64_t hang_after_ns; /* hang: a collective open this long; 0 = colls.h's 30 s */
};
void pt_advisor_opts_init(struct pt_advisor_opts *o);

/* What one synchronizing call site cost: the outermost and innermost
 * operator open around the call (0 = none) and the call's name. */
struct pt_sync_site {
	uint32_t outer_op, inner_op, call;
	uint64_t ns, calls;
};

#define PT_ADVISOR_SITES 64 /* distinct sites kept; the rest count in other_ns */

/* Facts from one pass over the host tracks (pt_advisor_scan). */
struct pt_advisor_facts {
	int scanned;			  /* 0: not gathered (rules that need them stay quiet) */
	uint64_t launch_ns, launch_calls; /* cudaLaunchKernel, cuLaunchKernel, hipLaunchKernel... */
	uint64_t runtime_ns;		  /* every runtime/driver call, summed */
	uint64_t sync_ns, sync_calls;	  /* synchronizing calls (PT_EVF_SYNC or by name) */
	struct pt_sync_site sites[PT_ADVISOR_SITES];
	size_t nsites;
	uint64_t other_ns; /* sync time of sites past PT_ADVISOR_SITES */
	/* the data pipeline (datapipe.h), filled by pt_advise_trace */
	int dp_present;
	uint64_t dp_queue_samples;
	double dp_empty_pct, dp_queue_mean, dp_capacity;
	size_t dp_workers;
	double dp_workers_busy_pct;
	int dp_on_training;
	uint32_t dp_slowest;	     /* name id of the stage with the most self time, 0 = none */
	double dp_slowest_share_pct; /* its self time / the lanes' busy time */
	double dp_slowest_per_sample_ms;
	uint32_t dp_pin;	     /* "data: pin_memory" when it ran, else 0 */
	double dp_pin_per_batch_ms;
};

/*
 * Gathers the facts over events starting in [t0_ns, t1_ns) on host tracks
 * of process pid (-1: every process). Use the summary's t0_ns and t1_ns + 1
 * to cover what it summarized. Returns 0.
 */
int pt_advisor_scan(const struct pt_trace *t, uint64_t t0_ns, uint64_t t1_ns, int64_t pid,
		    struct pt_advisor_facts *f);

#define PT_ADVICE_TEXT 640

struct pt_advice {
	enum pt_advice_key key;
	enum pt_advice_severity severity;
	const char *title;	       /* static, one line */
	char evidence[PT_ADVICE_TEXT]; /* numbers from the window; names escaped */
	char suggestion[PT_ADVICE_TEXT];
	double value, threshold; /* the rule's measure and its threshold (same unit) */
	const char *unit;	 /* "%" or "x" */
};

struct pt_advice_list {
	struct pt_advice v[PT_ADV__COUNT]; /* each rule fires at most once */
	size_t n;
};

/*
 * Runs every rule over s (and r when it holds two or more ranks; NULL
 * otherwise) with facts f (NULL or not scanned: the sync rule and the
 * launch half of gpu_starved stay quiet) and thresholds o (NULL: defaults).
 * t names operators in the evidence (may be NULL: names become "?").
 */
void pt_advise(const struct pt_trace *t, const struct pt_summary *s, const struct pt_ranks *r,
	       const struct pt_advisor_facts *f, const struct pt_advisor_opts *o,
	       struct pt_advice_list *out);

/*
 * Scan + advise over what s summarized (its steps' span, else its span) on
 * the host tracks of process pid (-1: all; a rank's own summary: its pid).
 */
void pt_advise_trace(const struct pt_trace *t, const struct pt_summary *s, const struct pt_ranks *r,
		     int64_t pid, const struct pt_advisor_opts *o, struct pt_advice_list *out);

/* pt_advise_trace that also hands back the data pipeline it computed over
 * what s summarized (datapipe.h; the caller frees it with
 * pt_datapipe_free), so a screen that shows both pays one pass. */
struct pt_datapipe;
void pt_advise_trace_dp(const struct pt_trace *t, const struct pt_summary *s,
			const struct pt_ranks *r, int64_t pid, const struct pt_advisor_opts *o,
			struct pt_advice_list *out, struct pt_datapipe *dp_out);

/*
 * The store scan of pt_advise_trace_dp made while the summary is worked
 * out: pt_advisor_prescan_spare as pt_agg_opts.spare, with a struct
 * pt_advisor_prescan (t set, the rest zero) as its argument, scans the
 * span that thread counted. pt_advise_trace_pre uses it where that span is
 * the one the summary gives, for every process (pid -1); otherwise it
 * scans again. The thread that made it must be joined before (pt_summarize
 * returns once it is).
 */
struct pt_advisor_prescan {
	const struct pt_trace *t;
	int done;
	uint64_t t0_ns, t1_ns; /* the span scanned, as pt_advise_trace_dp reckons it */
	struct pt_advisor_facts f;
};
void pt_advisor_prescan_spare(void *prescan, uint64_t t0_ns, uint64_t t1_ns);
/* pt_advise_trace_dp with the scan made ahead (NULL: none). */
void pt_advise_trace_pre(const struct pt_trace *t, const struct pt_summary *s,
			 const struct pt_ranks *r, int64_t pid, const struct pt_advisor_opts *o,
			 struct pt_advice_list *out, struct pt_datapipe *dp_out,
			 const struct pt_advisor_prescan *pre);

/* Fills f's dp_* facts from the data pipeline over what s summarized. */
void pt_advisor_data_facts(const struct pt_trace *t, const struct pt_summary *s,
			   struct pt_advisor_facts *f);

/* The Advice section of the text report (nothing when l->n == 0). */
void pt_advice_text(FILE *out, const struct pt_advice_list *l);

#endif
