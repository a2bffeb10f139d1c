/*
 * merge.h - joining per-rank traces into one trace with one process per
 * rank (proftop merge). Internal to proftop's core; the CLI (cli/merge.c)
 * reads the inputs, prints what was shifted and exports the result.
 *
 * Inputs are added one at a time and copied into the merged trace at once,
 * so memory holds the merged trace plus one input, not every input.
 * Clocks: every input is lined up with the first one. When step k of an
 * input (the first step number both have) starts more than align_min_ns
 * away from step k of the first input, the hosts' clocks differ: every
 * timestamp of the input is shifted by that difference. A smaller
 * difference is taken for real skew between ranks (what a straggler looks
 * like) and left alone. Without steps, the first events are lined up.
 *
 * Threading: one owner.
 */
#ifndef PT_MERGE_H
#define PT_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/trace.h"

enum pt_merge_align {
	PT_MERGE_ALIGN_STEPS = 0, /* step boundaries, else first events */
	PT_MERGE_ALIGN_NONE,	  /* timestamps as the files give them */
};

/* Default: clocks closer than this are taken as the same clock. */
#define PT_MERGE_ALIGN_MIN_NS 1000000000ull

struct pt_merge_opts {
	enum pt_merge_align align;
	uint64_t align_min_ns; /* 0 = PT_MERGE_ALIGN_MIN_NS */
	size_t max_mem_bytes;  /* the merged trace's event cap (0 = default) */
};

/* How an input's clock was lined up. */
enum pt_merge_how {
	PT_MERGE_REFERENCE = 0,	 /* the first input: the others line up with it */
	PT_MERGE_BY_STEP,	 /* on step `step` (a number both inputs have) */
	PT_MERGE_BY_FIRST_STEP,	 /* on each one's first step (no step number in common) */
	PT_MERGE_BY_FIRST_EVENT, /* on the first events (no steps in one of them) */
	PT_MERGE_NOT_ALIGNED,	 /* --align none, or an empty input */
};

/* One process lane of the merged trace (an input, or a rank of a merged input). */
struct pt_merge_lane {
	size_t input;	      /* index of the input it came from */
	int64_t pid;	      /* its pid in the merged trace */
	int64_t claimed_rank; /* rank the input gave (-1: none) */
	int64_t rank;	      /* rank in the merged trace (settled by pt_merge_finish) */
	char host[64];	      /* "" when unknown */
	uint64_t events;
};

struct pt_merge_input {
	char *name; /* path as given */
	enum pt_merge_how how;
	int64_t step;	   /* PT_MERGE_BY_STEP: the step number lined up */
	int64_t diff_ns;   /* reference time minus this input's, at the alignment point */
	int64_t offset_ns; /* added to every timestamp (0 when not shifted) */
	int shifted;	   /* the clocks differed and offset_ns was applied */
	int clamped;	   /* the full shift would have put events before 0 */
	uint64_t events;
};

struct pt_merge {
	struct pt_trace *t; /* the merged trace (owned; pt_merge_take_trace takes it) */
	struct pt_merge_input *in;
	size_t nin;
	struct pt_merge_lane *lanes;
	size_t nlanes;
	int ranks_from_order; /* ranks missing or repeated: input order used */
	char *other_json;     /* otherData members for the export (after finish) */
	struct pt_merge_opts o;
	struct pt_merge_priv *priv;
};

struct pt_merge *pt_merge_new(const struct pt_merge_opts *o);
/*
 * Copies in (read from a file named name) into the merged trace, shifted
 * as the alignment says. in is only read (its store gets sorted).
 */
void pt_merge_add(struct pt_merge *m, struct pt_trace *in, const char *name);
/* Settles ranks (process names "rank N", process table) and other_json. */
void pt_merge_finish(struct pt_merge *m);
/* Hands the merged trace to the caller (pt_merge_free then leaves it). */
struct pt_trace *pt_merge_take_trace(struct pt_merge *m);
void pt_merge_free(struct pt_merge *m);

#endif
