/*
 * agg_internal.h - the aggregator's private state, shared by its files:
 * agg.c (feeding: per-track stacks, rows, launches), agg_tables.c (settling
 * the tables, unions and devices in pt_agg_finish), agg_steps.c (per-step
 * phases, Model and Perf Summary) and agg_union.c (interval lists, the
 * integer hash map and row vectors). Nothing here is public; the contract
 * is include/proftop/agg.h.
 */
#ifndef PT_AGG_INTERNAL_H
#define PT_AGG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/agg.h"

#define AGG_NONE UINT32_MAX
/* Legacy PyTorch exports round start and duration separately, so a child
 * may end up to this much after its parent and still be its child. */
#define AGG_OVERHANG_NS 1000u
/* Op-detail rows go this deep (0 = top-level op); deeper ops fold into
 * their depth-3 ancestor. */
#define AGG_DETAIL_MAX_DEPTH 3

/* ---- interval lists (agg_union.c) ---- */
struct ivl {
	uint64_t s, e;
};
struct ivl_list {
	struct ivl *v;
	size_t n, cap;
};
/* Appends [s, e) to a list whose starts arrive in order, merging with the
 * last interval when they overlap or touch: O(1). */
void ivl_add(struct ivl_list *l, uint64_t s, uint64_t e);
void ivl_free(struct ivl_list *l);
/* Union of k lists (each sorted and merged); writes the merged result to
 * out when out is non-NULL. Returns the union's length. */
uint64_t ivl_union(struct ivl_list *const *lists, size_t k, struct ivl_list *out);
/* |a ∩ b| for two merged lists. */
uint64_t ivl_intersect_len(const struct ivl_list *a, const struct ivl_list *b);

/* ---- u64 -> u32 open-addressing hash map (agg_union.c) ---- */
struct u64map {
	uint64_t *keys;
	uint32_t *vals; /* AGG_NONE = empty slot */
	size_t mask, n;
};
uint32_t u64map_get(const struct u64map *m, uint64_t key);
/* Returns the slot's value pointer, inserting AGG_NONE when absent. */
uint32_t *u64map_slot(struct u64map *m, uint64_t key);
void u64map_free(struct u64map *m);

/* Dense map name id -> row index (AGG_NONE when absent), grown on demand. */
struct idmap {
	uint32_t *v;
	size_t n;
};
uint32_t *idmap_slot(struct idmap *m, uint32_t id);
void idmap_free(struct idmap *m);

/* Growable vector of table rows. */
struct rowvec {
	struct pt_row *v;
	size_t n, cap;
};
uint32_t rowvec_add(struct rowvec *r, uint32_t name_id, uint8_t kind, uint8_t is_device);

/* Generic growable array helper: ensures room for one more element. */
void *agg_grow(void *p, size_t *cap, size_t n, size_t elem);

/* ---- per-track state ---- */
enum {
	LS_BUSY = PT_KIND__COUNT, /* kernels + communication on this track */
	LS_HOSTCOMM,		  /* host events flagged PT_EVF_COMM */
	LS__COUNT
};

struct frame {
	uint64_t start_ns, end_ns, dur_ns;
	uint64_t child_ns; /* sum of direct children's durations */
	uint32_t own_inst; /* this event's instance, or AGG_NONE */
	uint32_t inst;	   /* innermost instance on the stack (self included) */
	uint32_t detail;   /* innermost op-detail row on the stack */
	uint32_t step_fid; /* for a step frame: its feed index */
	uint8_t kind;
	uint8_t phase;	    /* innermost phase kind on the stack, 0 = none */
	uint8_t phase_mask; /* phase kinds open on the stack (bit = kind) */
	uint8_t op_anc;	    /* an OPERATOR is on the stack (self included) */
};

struct track_state {
	int used;
	int is_device;
	int32_t device;
	uint32_t dev_idx; /* index into agg->devs, AGG_NONE for host tracks */
	struct frame *stack;
	size_t depth, cap;
	uint64_t last_start_ns;
	struct ivl_list lists[LS__COUNT];
};

/* A host instance that owns a row: its GPU time (launched at any depth
 * below it) is summed here and folded into the rows at finish. */
struct inst {
	uint64_t gpu_ns;
	uint32_t parent; /* enclosing instance, created earlier (lower index) */
	uint32_t row;	 /* row in the table chosen by kind */
	uint32_t detail; /* own op-detail row, AGG_NONE if none */
	uint8_t kind;
};

/* A host call that launched device work (keyed by corr). */
struct launch {
	uint64_t start_ns;
	uint64_t gpu_ns; /* device time of the activities it launched */
	uint32_t track;
	uint32_t inst;
	uint32_t detail;
	uint8_t phase;
};

struct step_rec {
	uint64_t start_ns, dur_ns, samples;
	uint32_t name_id, track;
};

/* A direct child of a step on the step's own track (not a phase event). */
struct step_child {
	uint64_t start_ns, end_ns;
	uint32_t step_fid;
};

/* An outermost (of its kind) phase event. */
struct phase_rec {
	uint64_t start_ns, end_ns;
	uint32_t track;
	uint8_t kind;
};

struct dev_acc {
	int32_t device;
	uint64_t kernels, memcpys, memsets, memcpy_bytes;
};

struct pt_agg {
	const struct pt_trace *t;
	struct pt_agg_opts o;
	int64_t ordinal_base; /* step ordinal of the first step (step windows) */

	uint64_t events, t0_ns, t1_ns;
	int has_gpu;
	uint64_t overhangs, straddles, disorders;
	uint64_t device_total_ns; /* kernel+memcpy+memset+communication */
	uint64_t kernel_total_ns; /* kernel+communication */
	uint64_t op_top_cpu_ns;	  /* top-level operators' inclusive time */
	uint64_t calls[PT_KIND__COUNT];

	struct track_state *tracks;
	size_t ntracks;

	struct rowvec ops, detail, kernels, memory, ud;
	struct idmap ops_by_name, kernels_by_name, memdev_by_name, memhost_by_name, ud_by_name;
	struct u64map detail_by_key;
	uint8_t *memname; /* per name id: 0 unknown, 1 memory call, 2 not */
	size_t memname_n;

	struct inst *inst;
	size_t ninst, inst_cap;
	struct launch *launches;
	size_t nlaunches, launches_cap;
	struct u64map launch_by_corr;
	struct pt_event *pending; /* device activities whose launch was not yet seen */
	size_t npending, pending_cap;

	struct step_rec *steps;
	size_t nsteps, steps_cap;
	struct step_child *children;
	size_t nchildren, children_cap;
	struct phase_rec *phases;
	size_t nphases, phases_cap;

	struct dev_acc *devs;
	size_t ndevs, devs_cap;
};

/* agg.c: routes a device activity to the op-detail rows under its launch. */
void agg_apply_launch(struct pt_agg *a, uint32_t li, const struct pt_event *ev);
/* agg_steps.c: fills s->steps, s->model, s->perf. */
void agg_settle_steps(struct pt_agg *a, struct pt_summary *s);
/* agg_tables.c: fills the tables, overview, dist and devices. */
void agg_settle_tables(struct pt_agg *a, struct pt_summary *s);
void agg_free(struct pt_agg *a);

#endif
