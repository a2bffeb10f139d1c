/*
 * coll.h - the collectives a trace saw: one row per call of a
 * torch.distributed collective or point-to-point op on one rank (process),
 * from the call's entry to its completion (for async work: when the work
 * was waited on or completed). Rows of different ranks are matched by
 * (group, seq): every rank of a group numbers its collectives on that group
 * in the same order (torch's own sequence number per process group).
 *
 * Sources write through pt_trace_coll_enter / pt_trace_coll_done (the live
 * session reader, the Chrome reader); the analysis (src/analyze/colls.c)
 * only reads. A completed blocking call also goes into the store as an
 * operator event named "c10d::OP" with PT_EVF_COMM, so every summary, the
 * timeline and the export see the call like any host communication call
 * (an async call's launch is such an event from its source; its row runs
 * on to the work's completion, which no thread's nesting holds).
 *
 * Memory: rows are counted against the trace's cap; past their share the
 * oldest completed half is dropped, counted in warnings[PT_WARN_COLL_DROPPED].
 *
 * Threading: the trace's (one writer, readers while none writes).
 */
#ifndef PROFTOP_COLL_H
#define PROFTOP_COLL_H

#include <stddef.h>
#include <stdint.h>

/* flags */
#define PT_COLL_ASYNC 0x1u  /* async_op=True, or a DDP bucket: ends at wait / completion */
#define PT_COLL_P2P 0x2u    /* send / recv: matched per pair, not per group */
#define PT_COLL_BUCKET 0x4u /* DistributedDataParallel's gradient bucket */
/* timed on the device (NCCL's profiler plugin): entered when the host
 * enqueued it, its completion carries when its kernel started (the row's
 * start from then on: the arrival) and ended */
#define PT_COLL_DEVICE 0x8u
#define PT_COLL_FLAGS (PT_COLL_ASYNC | PT_COLL_P2P | PT_COLL_BUCKET | PT_COLL_DEVICE)

/* What the helper prefixes to an op for the operator event's name. */
#define PT_COLL_EVENT_PREFIX "c10d::"

struct pt_coll {
	uint64_t start_ns;   /* entered */
	uint64_t end_ns;     /* completed; 0 while open */
	uint64_t seq;        /* the group's sequence number of the call */
	uint64_t bytes;      /* bytes of the call's input on this rank */
	uint32_t op;         /* interned op name ("all_reduce") */
	uint32_t group;      /* interned process group name ("0": the default group) */
	uint32_t track;      /* the host track that entered it */
	uint32_t group_size; /* ranks in the group, 0 unknown */
	uint32_t flags;      /* PT_COLL_* */
	uint32_t epoch;      /* the group's sequence numbers started over this often on
				this process (a group made again): part of the match */
};

struct pt_colls {
	struct pt_coll *v;
	size_t n, cap;
	uint64_t dropped; /* rows dropped by the memory cap */
	uint64_t unmatched_done; /* completions with no entry (entry lost): kept as rows */
	uint64_t orphans; /* of their rows, those an entry read late may still join (the
			     newest rows only; coll.c) */
	uint64_t done;    /* completions seen */
	struct pt_coll_seq { /* per process and group: the last seq entered, the epoch */
		int64_t pid;
		uint32_t pid_str, group, epoch;
		uint64_t last;
		uint64_t blocking_ns; /* time in its blocking (or device-timed) calls, summed
					 (dropped rows too) */
	} *seqs;
	size_t nseqs;
};

struct pt_trace;

/* What the sink takes: op and group as interned ids of t. */
struct pt_coll_rec {
	uint64_t time_ns;    /* entry (enter) or completion (done) */
	uint64_t start_ns;   /* done only: when it was entered, 0 unknown */
	uint64_t seq, bytes;
	uint32_t op, group, group_size, flags;
};

/* A rank entered a collective on track (a host track of t). */
void pt_trace_coll_enter(struct pt_trace *t, uint32_t track, const struct pt_coll_rec *r);
/*
 * The collective completed: closes the open row of the same process,
 * group, seq and op (searching back from the newest row), or adds a closed
 * row when there is none, and adds the operator event. Returns the row's
 * index.
 */
size_t pt_trace_coll_done(struct pt_trace *t, uint32_t track, const struct pt_coll_rec *r);
/* Adds a row as it is (a re-read export: its event is in the trace already). */
void pt_trace_coll_row(struct pt_trace *t, const struct pt_coll *row);
/* The operator event's name id for op ("c10d::" op), interned in t. */
uint32_t pt_trace_coll_event_name(struct pt_trace *t, uint32_t op);
void pt_colls_free(struct pt_colls *c);

#endif
