/*
 * agg.h - the aggregator and the summary it produces.
 *
 * The aggregator turns a trace's events into the tables of Paddle's profiler
 * summaries: Model (per step phase, CPU and GPU), Overview (per event type,
 * overlapping intervals merged), Operator (with inner ops and the kernels each
 * op launched), Kernel, Memory Manipulation, UserDefined, Distributed
 * (communication / computation / overlap), Device, and the Perf Summary
 * (reader_cost, batch_cost, ips, reader ratio).
 *
 * Feeding contract: pt_agg_feed() takes the events of each track in start
 * order (ties: longer first); tracks may be fed in any interleaving. Each
 * event costs O(1) amortized (a per-track stack, hash updates). Work that
 * needs the whole step (Forward derived from its neighbours, GPU time per
 * phase) is settled per step in pt_agg_finish(). pt_summarize() is the
 * one-call form that feeds a whole trace (or a window of it) from the store.
 *
 * A pt_summary is immutable once returned; faces read it from any thread.
 */
#ifndef PROFTOP_AGG_H
#define PROFTOP_AGG_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/event.h"
#include "proftop/trace.h"

/* Min/max/total over a set of durations; min is UINT64_MAX when n == 0. */
struct pt_stat {
	uint64_t n;
	uint64_t total_ns;
	uint64_t max_ns;
	uint64_t min_ns;
};

static inline void pt_stat_add(struct pt_stat *s, uint64_t v)
{
	if (s->n == 0 || v < s->min_ns)
		s->min_ns = v;
	if (v > s->max_ns)
		s->max_ns = v;
	s->n++;
	s->total_ns += v;
}

/* Model Summary rows, in Paddle's order. */
enum pt_ms_row {
	PT_MS_STEP = 0,
	PT_MS_DATALOADER,
	PT_MS_FORWARD,
	PT_MS_BACKWARD,
	PT_MS_OPTIMIZATION,
	PT_MS_OTHERS,
	PT_MS__COUNT
};
const char *pt_ms_row_name(enum pt_ms_row r); /* "ProfileStep", ..., "Others" */

/* torch.compile in a summary, in one line ("torch.compile: 2 of 30 steps
 * compiled (#1 #4: ...)"): 1 and the line in buf when some step compiled or
 * a graph break was found, else 0 and "". brief: the same in under 80
 * columns ("compile: 2/30 steps compiling, ..."), for a narrow screen. */
#define PT_COMPILE_LINE_MAX 320
struct pt_summary;
int pt_compile_line(const struct pt_summary *s, char *buf, size_t cap, int brief);

struct pt_model_row {
	uint64_t calls;      /* steps in which the phase occurred (ProfileStep, Others: steps) */
	struct pt_stat cpu;  /* per-step CPU time of the phase */
	struct pt_stat gpu;  /* per-step GPU time launched from the phase */
};

/* One step, in start order. */
/* The counter a step's tokens come in (proftop_step_tokens): its sample
 * at the step's start holds the step's token count. */
#define PT_STEP_TOKENS "Step tokens"

struct pt_step {
	int64_t number;      /* from the name ("ProfilerStep#552" -> 552), else ordinal */
	uint64_t start_ns, dur_ns;
	/* samples and tokens in the step, 0 when unknown (saturating: 32 bits
	 * each keep a long session's steps as small as before tokens came) */
	uint32_t samples;
	uint32_t tokens;     /* PT_STEP_TOKENS */
	uint32_t track;
	/* torch.compile in the step (the Python helper's "torch.compile: ..."
	 * user ranges): compilations begun (recompiles among them) and graph
	 * breaks found, saturating; time compiling below (compile_ns > 0: a
	 * compiling step). Small, in what would be padding: live sessions keep
	 * every step. */
	uint8_t compiles, recompiles;
	uint16_t graph_breaks;
	uint64_t cpu_ns[PT_MS__COUNT]; /* per phase (PT_MS_STEP = whole step) */
	uint64_t gpu_ns[PT_MS__COUNT];
	uint64_t compile_ns;
};

struct pt_perf {
	uint64_t steps;
	int has_reader;          /* some step had Dataloader time; else reader figures are n/a */
	double reader_ratio_pct;
	struct pt_stat reader;   /* per-step dataloader time */
	struct pt_stat batch;    /* per-step step time */
	double ips_avg, ips_max, ips_min;
	int ips_samples;         /* 1: samples/s (every step had a sample count), 0: steps/s */
	/* tokens/s (a language model's steps carry their token counts): avg =
	 * all tokens / the time of the steps that have some; max and min over
	 * those steps. has_tokens 0: none had any */
	int has_tokens;
	double tokens_avg, tokens_max, tokens_min;
	/* Compiling steps (struct pt_step.compile_ns > 0): left out of every
	 * figure above and of the Model Summary (steps counts the others),
	 * unless pt_agg_opts.with_compile, or when every step compiled. */
	uint64_t compile_steps;     /* compiling steps in the summary */
	int compile_left_out;       /* 1: they are not in the figures */
	uint64_t compile_step_ns;   /* their duration */
	uint64_t compile_ns;        /* time spent compiling, in all steps */
	uint64_t compiles, recompiles, graph_breaks; /* over all steps */
};

/* A table row: operators, kernels, memory, user-defined, and op detail. */
struct pt_row {
	uint32_t name_id;
	uint8_t kind;        /* enum pt_kind of the row's events */
	uint8_t is_device;   /* device activity: only the GPU columns apply */
	uint16_t depth;      /* op detail: 0 top, 1 child, ... */
	uint32_t parent;     /* op detail: index of the parent row, UINT32_MAX at top */
	struct pt_stat cpu;  /* inclusive CPU time per call (host rows) */
	uint64_t cpu_self_ns;/* CPU time minus direct children's */
	struct pt_stat gpu;  /* device time: per call of the row (host rows: GPU time
	                        launched from inside each call; device rows: each activity) */
	/* Numerators of the Ratio columns: the CPU and GPU time of the row's
	 * outermost calls (a call nested in a call of the same row, as
	 * aten::cudnn_convolution_backward in itself, counts once; a child's
	 * overhang past its parent is cut). Device rows: gpu.total_ns. */
	uint64_t cpu_ratio_ns, gpu_ratio_ns;
};

struct pt_table {
	struct pt_row *rows;
	size_t n;
	uint64_t cpu_base_ns; /* denominator of the CPU Ratio column */
	uint64_t gpu_base_ns; /* denominator of the GPU Ratio column */
	uint32_t threads;     /* host threads with rows of the table (cpu_base_ns is
	                         their wall time for UserDefined and Memory) */
};

/*
 * Overview rows. With steps: time within the steps (each kind's intervals
 * merged across threads/streams, then cut to the steps' union), a share of
 * the steps' union; the phase kinds (Dataloader..Optimization) carry the
 * Model Summary's figures instead (calls = steps with the phase, time = its
 * total, base = the steps' summed time). Without steps: over the profiled
 * span (first to last event, the profiler's own spans left out).
 */
struct pt_overview_row {
	uint64_t calls;      /* events of the kind (phase kinds with steps: see above) */
	uint64_t union_ns;   /* merged time (see above) */
	uint64_t ratio_base_ns; /* denominator of its ratio */
};

/*
 * Distributed: with steps, everything within the steps' union (so every
 * share is of step_ns and none exceeds it); without, over the span.
 */
struct pt_distributed {
	uint64_t step_ns;        /* ProfileStep union (or the profiled span) */
	uint64_t comm_ns;        /* communication, merged */
	uint64_t comp_ns;        /* computation kernels (non-communication), merged */
	uint64_t overlap_ns;     /* |comm ∩ comp| */
	int comm_from_host;      /* 1 when no device communication: host comm calls used */
	/* msprof's own Overlap Analysis in the same file (same window), to
	 * cross-check comp_ns, comm_ns and comm_ns - overlap_ns */
	int has_vendor;
	uint64_t vendor_comp_ns, vendor_comm_ns, vendor_exposed_ns;
};

struct pt_device_row {
	int32_t device;
	uint64_t busy_ns;        /* kernels (incl. communication) merged across streams */
	uint64_t span_ns;        /* elapsed time the ratio is taken over */
	double util_pct;
	uint64_t kernels, memcpys, memsets;
	uint64_t memcpy_bytes;
};

struct pt_summary {
	uint64_t t0_ns, t1_ns;   /* span of the events aggregated */
	uint64_t events;         /* events aggregated */
	int has_gpu;             /* any device activity */
	/* mean of the "CPU(Process)" counter's samples (procstat: the
	 * process's CPU, % of one core), -1 when there are none */
	double proc_cpu_pct;

	struct pt_step *steps;
	size_t nsteps;
	struct pt_model_row model[PT_MS__COUNT];
	struct pt_perf perf;
	struct pt_overview_row overview[PT_KIND__COUNT];
	/* Backward as a span (Model Summary) vs the time its events take:
	 * the union of each step's backward events, summed over the steps */
	uint64_t backward_busy_ns;
	struct pt_distributed dist;
	struct pt_device_row *devices;
	size_t ndevices;

	struct pt_table operators;    /* one row per op name, any depth (key_averages) */
	struct pt_table op_detail;    /* tree: top-level op -> inner ops -> kernels */
	struct pt_table kernels;      /* per kernel name (communication included) */
	struct pt_table memory;       /* memcpy/memset activities and host copy calls */
	struct pt_table user_defined;
};

struct pt_agg_opts {
	uint64_t t0_ns, t1_ns;        /* window on event start; 0 and UINT64_MAX = all */
	int64_t step_first, step_last;/* step-number range (inclusive); INT64_MIN/INT64_MAX = all */
	/* The ordinal of the window's first step, for steps without a number in
	 * their name (a window from t0_ns counts the steps before it); -1 (the
	 * default): the steps the store's cap dropped, right for a window that
	 * starts with the data. */
	int64_t step_ordinal0;
	/* pt_summarize: 0 (the default) builds the interval lists on a
	 * thread of their own once the store holds PT_SUMMARIZE_PIPE_EVENTS
	 * events or more, and settles the steps' GPU time beside their CPU
	 * time on another once there are many launches; 1 never; 2 always.
	 * The figures are the same. 3 and 4 (for tests) are 2 with the lists'
	 * thread's Overview always settled again after the feed (3) or always
	 * the one it settled early (4). */
	int lists_thread;
	/* pt_summarize with that thread: once its lists are done, while the
	 * feed still runs, it calls spare(spare_arg, t0_ns, t1_ns): the span
	 * the summary's steps will cover (the first one's start, the latest
	 * end), or without steps the summary's span (t0_ns, t1_ns), as that
	 * thread counted them. Work that would come after the summary and
	 * needs only that span can be done there, in time the thread would
	 * idle; it may only read the trace, and its caller checks the span
	 * against the summary's before using what it made. Not called
	 * without that thread. NULL (the default): nothing. */
	void (*spare)(void *spare_arg, uint64_t t0_ns, uint64_t t1_ns);
	void *spare_arg;
	/* 1: steps that compiled (torch.compile) count in the Perf and Model
	 * Summaries like any other; 0 (the default): they are left out. */
	int with_compile;
	/* samples in a step that carries no count (a trace another profiler
	 * wrote: report --batch N), so that ips is samples/s; 0: none */
	uint64_t batch_samples;
};
#define PT_SUMMARIZE_PIPE_EVENTS 65536
void pt_agg_opts_init(struct pt_agg_opts *o);

struct pt_agg;
struct pt_agg *pt_agg_new(const struct pt_trace *t, const struct pt_agg_opts *o);
void pt_agg_feed(struct pt_agg *a, const struct pt_event *ev);
/* Settles everything fed so far into a new summary and frees the aggregator. */
struct pt_summary *pt_agg_finish(struct pt_agg *a);

/* Sorts the store and feeds it whole (or the window in o) through an aggregator. */
struct pt_summary *pt_summarize(struct pt_trace *t, const struct pt_agg_opts *o);
void pt_summary_free(struct pt_summary *s);

/*
 * The summary of a growing trace (a live session), refreshed at the cost of
 * what arrived since the last refresh rather than of the whole session:
 * each call returns what pt_summarize(t, NULL) would, figure for figure.
 * It keeps an aggregator fed up to a frontier a little behind the newest
 * event (agg_live.c says how far); events that arrive from before it (a
 * range reported long after it began) make that call rebuild from the
 * store, as do events the store's cap dropped. One trace per object; the
 * caller owns each summary returned.
 */
struct pt_agg_live;
struct pt_agg_live_stats {
	uint64_t refreshes, rebuilds;
	uint64_t fed_events;  /* last refresh: events added to the kept aggregator */
	uint64_t tail_events; /* last refresh: events after the frontier, fed to its copy */
	uint64_t cost_ns;     /* last refresh */
	uint64_t frontier_ns; /* events starting before it are in the kept aggregator */
	uint64_t folded_ns;   /* ...and settled into figures before this one */
	uint64_t violations;  /* rebuilds because a folded launch's partner came late */
	uint64_t fold_ns;     /* the last fold's cost */
	int full;             /* correlation ids repeat (several processes): every
	                         refresh is a pt_summarize */
	size_t mem_bytes;     /* the kept aggregator's */
};
struct pt_agg_live *pt_agg_live_new(void);
/* The same over the events that start at or after t0_ns only: what
 * pt_summarize gives with o->t0_ns = t0_ns and its steps numbered as the
 * job numbers them (o->step_ordinal0: the steps the store keeps before t0_ns
 * and those its cap dropped). */
struct pt_agg_live *pt_agg_live_new_from(uint64_t t0_ns);
struct pt_summary *pt_agg_live_summary(struct pt_agg_live *l, struct pt_trace *t);
/* What pt_agg_live_summary does but the summary: the kept aggregator takes
 * what arrived, so that a later summary costs only what comes after (a
 * window that is not shown yet kept up to date). */
void pt_agg_live_advance(struct pt_agg_live *l, struct pt_trace *t);
void pt_agg_live_stats(const struct pt_agg_live *l, struct pt_agg_live_stats *out);
void pt_agg_live_free(struct pt_agg_live *l);

#endif
