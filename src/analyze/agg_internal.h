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
#include "model/u32map.h"

#define AGG_NONE UINT32_MAX
/* Legacy PyTorch exports round start and duration separately, so a child
 * may end up to this much after its parent and still be its child (when
 * most of it lies inside; see unwind() in agg.c). */
#define AGG_OVERHANG_NS 1000u
/* Op-detail rows go this deep (0 = top-level op); deeper ops fold into
 * their depth-3 ancestor. */
#define AGG_DETAIL_MAX_DEPTH 3

/* ---- varints (agg_union.c) ---- */
/* Unsigned LEB128 and zigzag-coded signed deltas: the aggregator's long
 * per-event logs (intervals, step children, launches) are kept as byte
 * streams of small deltas, 4 to 7 bytes an entry instead of 16 to 24. */
static inline uint8_t *vput(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}
static inline uint64_t vget(const uint8_t **pp)
{
	const uint8_t *p = *pp;
	uint64_t v = *p & 0x7f;
	unsigned sh = 7;
	while (*p++ & 0x80) {
		v |= (uint64_t)(*p & 0x7f) << sh;
		sh += 7;
	}
	*pp = p;
	return v;
}
/* b - a as a zigzag code (any two u64, wrapping), and back. */
static inline uint64_t zz_delta(uint64_t a, uint64_t b)
{
	uint64_t d = b - a;
	return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}
static inline uint64_t zz_apply(uint64_t a, uint64_t z)
{
	uint64_t neg = 0 - (z & 1); /* all ones for a negative delta */
	return a + ((z >> 1) ^ neg);
}
#define VMAX 10 /* bytes of one varint at most */

/* A growable byte log of varints. */
struct vlog {
	uint8_t *p;
	size_t len, cap;
};
/* The end of the log (no pointer arithmetic on an empty log's NULL). */
static inline const uint8_t *vlog_end(const struct vlog *l)
{
	return l->len ? l->p + l->len : l->p;
}
/* Makes room for n more bytes; returns where to write. */
uint8_t *vlog_reserve(struct vlog *l, size_t n);
void vlog_free(struct vlog *l);

/* ---- interval lists (agg_union.c) ---- */
struct ivl {
	uint64_t s, e;
};
/* Merged intervals in start order. The last one stays open (plain) so the
 * next can merge into it; the ones before are coded in a vlog as
 * (zigzag start - previous end, length). */
struct ivl_list {
	struct vlog log;
	uint64_t n;	 /* intervals, the open one included */
	uint64_t prev_e; /* end of the last coded interval (0 before any) */
	struct ivl last; /* the open interval, when n > 0 */
};
/* Appends [s, e) to a list whose starts arrive in order, merging with the
 * last interval when they overlap or touch: O(1). */
void ivl_add(struct ivl_list *l, uint64_t s, uint64_t e);
void ivl_free(struct ivl_list *l);
/* Reads a list back in order. */
struct ivl_rd {
	const uint8_t *p, *end;
	uint64_t prev_e;
	struct ivl last;
	int last_left;
};
void ivl_rd_init(struct ivl_rd *r, const struct ivl_list *l);
/* 1 and the next interval in *out, or 0 at the end. */
int ivl_rd_next(struct ivl_rd *r, struct ivl *out);
/* Union of k lists (each sorted and merged); writes the merged result to
 * out when out is non-NULL. Returns the union's length. */
uint64_t ivl_union(struct ivl_list *const *lists, size_t k, struct ivl_list *out);
/* The same, cut to the merged list clip (NULL: no cut). */
uint64_t ivl_union_clip(struct ivl_list *const *lists, size_t k, const struct ivl_list *clip,
			struct ivl_list *out);
/* |a ∩ b| for two merged lists. */
uint64_t ivl_intersect_len(const struct ivl_list *a, const struct ivl_list *b);
/* a ∩ b as a merged list into out (empty on entry); returns its length. */
uint64_t ivl_intersect(const struct ivl_list *a, const struct ivl_list *b, struct ivl_list *out);

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
size_t u64map_mem_bytes(const struct u64map *m);

/*
 * Map name id -> row index (AGG_NONE when absent). Dense (one load) while
 * the ids it holds fill a good part of the array; a hash once they are too
 * sparse for that, so an aggregator that sees few names with high ids (one
 * rank of a trace with many) costs what it holds, not the trace's name count.
 */
struct idmap {
	uint32_t *v; /* dense part, v[id] */
	size_t n;
	int hashed;
	struct u64map h;
};
/* The value's slot (AGG_NONE when absent: the caller stores one at once). */
uint32_t *idmap_slot(struct idmap *m, uint32_t id);
void idmap_free(struct idmap *m);
size_t idmap_mem_bytes(const struct idmap *m);

/* Growable vector of table rows. */
struct rowvec {
	struct pt_row *v;
	size_t n, cap;
};
uint32_t rowvec_add(struct rowvec *r, uint32_t name_id, uint8_t kind, uint8_t is_device);

/* Generic growable array helper: ensures room for one more element. */
void *agg_grow(void *p, size_t *cap, size_t n, size_t elem);

/* Copies sharing nothing with their source (agg_clone): dst is overwritten. */
void *agg_dup(const void *p, size_t n); /* NULL for NULL or n == 0 */
void vlog_copy(struct vlog *dst, const struct vlog *src);
void ivl_copy(struct ivl_list *dst, const struct ivl_list *src);
void u64map_copy(struct u64map *dst, const struct u64map *src);
void idmap_copy(struct idmap *dst, const struct idmap *src);

/* ---- per-track state ---- */
enum {
	LS_BUSY = PT_KIND__COUNT, /* kernels + communication on this track */
	LS_HOSTCOMM,		  /* host events flagged PT_EVF_COMM */
	/* msprof's own Overlap Analysis lanes (cross-check of Distributed) */
	LS_VCOMP,    /* "Computing" */
	LS_VCOMM,    /* "Communication" */
	LS_VEXPOSED, /* "Communication(Not Overlapped)" */
	LS__COUNT
};

struct frame {
	uint64_t start_ns, end_ns, dur_ns;
	uint64_t child_ns;   /* sum of direct children's durations */
	uint64_t gpu_ns;     /* device time launched below it, not yet handed on */
	uint32_t row;	     /* own row in the table of its kind, or AGG_NONE */
	uint32_t own_detail; /* own op-detail row, or AGG_NONE */
	uint32_t detail;     /* innermost op-detail row on the stack */
	uint32_t own_inst;   /* instance (made only for late launches), or AGG_NONE */
	uint32_t inst;	     /* innermost instance on the stack (valid once inst_ok) */
	uint32_t step_fid;   /* for a step frame: its feed index */
	uint8_t kind;
	uint8_t phase;	    /* innermost phase kind on the stack, 0 = none */
	uint8_t phase_mask; /* phase kinds open on the stack (bit = kind) */
	uint8_t op_anc;	    /* an OPERATOR is on the stack (self included) */
	uint8_t inst_ok;    /* inst is set (the instance chain reaches here) */
	uint8_t no_self;    /* a host event on a device track: no self time */
	uint8_t outer;	    /* no call of the same row is open below it on its track */
	uint64_t clip_end;  /* end clipped to the parent's (an overhanging child) */
};

struct track_state {
	uint32_t id; /* the trace's track id */
	int used;
	int is_device;
	uint8_t derived; /* msprof's "Overlap Analysis" lane */
	uint8_t has_ud;	 /* recorded UserDefined rows */
	uint8_t has_mem; /* recorded memory-call rows (cudaMemcpy...) */
	int32_t device;
	uint32_t dev_idx; /* index into agg->devs, AGG_NONE for host tracks */
	struct frame *stack;
	size_t depth, cap;
	uint64_t last_start_ns;
	/* interval lists of the kinds this track has (most have one or two),
	 * not one of each: list k is lv[li[k] - 1], none while li[k] is 0 */
	uint8_t li[LS__COUNT];
	uint8_t nl, capl;
	struct ivl_list *lv;
};

/* Track ts's list of slot k, NULL when it has none. */
static inline struct ivl_list *ts_list(const struct track_state *ts, int k)
{
	return ts->li[k] ? &ts->lv[ts->li[k] - 1] : NULL;
}
/* The same, made when missing. */
struct ivl_list *ts_list_make(struct track_state *ts, int k);
/* List k of the set (li, nl, capl, lv) a track keeps, made when missing
 * (ts_list_make's, for sets kept elsewhere: agg_pipe.c). */
struct ivl_list *agg_lists_make(uint8_t li[LS__COUNT], uint8_t *nl, uint8_t *capl,
				struct ivl_list **lv, int k);

/*
 * Per-call GPU time. A launch whose device activities were fed before it
 * (pt_summarize feeds device tracks first) adds their time to its frame;
 * a frame hands its sum to its parent when it pops, after adding it to its
 * rows' per-call stats. Only a launch whose activities may still come
 * (fed in another order, as a live session does) needs instances: records
 * of the row-owning frames open at the launch, made on demand, whose sums
 * are settled at pt_agg_finish once every activity is in.
 */
struct inst {
	uint64_t gpu_ns;
	uint64_t end_ns; /* the frame's end */
	uint32_t parent; /* enclosing instance, created earlier (lower index) */
	uint32_t row;	 /* row in the table chosen by kind */
	uint32_t detail; /* own op-detail row, AGG_NONE if none */
	uint8_t kind;
	uint8_t outer;	/* the frame's row was not open below it */
	uint8_t closed; /* the frame was popped: its own GPU time is in */
};

/* A host call whose device activities may come after it (keyed by corr). */
struct launch {
	uint64_t start_ns;
	uint64_t gpu_ns;  /* device time of the activities it launched */
	uint64_t late_ns; /* the part that came after it (goes to inst) */
	uint32_t track;
	uint32_t inst;
	uint32_t detail;
	uint32_t corr;
	uint8_t phase;
};

/* A device activity fed before its launch, kept until a host event with
 * its corr takes it (start_ns = UINT64_MAX once taken); the ones never
 * taken are orphans at finish. */
struct devact {
	uint64_t start_ns, dur_ns;
	uint32_t name_id;
	uint32_t next; /* index + 1 of the next activity with the same corr */
	uint32_t corr;
};

struct step_rec {
	uint64_t start_ns, dur_ns, samples;
	uint32_t name_id, track;
};

/* An outermost (of its kind) phase event. kind: a phase's event kind,
 * or one of AGG_PH_* (torch.compile's ranges, which mark a step as
 * compiling and count in it). */
struct phase_rec {
	uint64_t start_ns, end_ns;
	uint32_t track;
	uint8_t kind;
};
#define AGG_PH_COMPILE 0xf0     /* "torch.compile: compile" */
#define AGG_PH_RECOMPILE 0xf1   /* "torch.compile: recompile" */
#define AGG_PH_GRAPH_BREAK 0xf2 /* "torch.compile: graph break" */
#define AGG_PH_TOKENS 0xf3      /* a PT_STEP_TOKENS sample: end_ns holds the token count */

/* A device activity with no launch (no corr, or one never launched). */
struct orphan { /* 16 bytes: a long session keeps many */
	uint64_t start_ns;
	uint64_t dur_ns : 52; /* PT_MAX_DUR_NS fits */
	uint64_t dev : 12;    /* 1 + index into devs, for the union per device; ORPHAN_SUM: none */
};
#define ORPHAN_SUM 0
#define ORPHAN_DEV(idx) ((idx) < 4095 ? (uint64_t)(idx) + 1 : ORPHAN_SUM)

struct dev_acc {
	int32_t device;
	uint64_t kernels, memcpys, memsets, memcpy_bytes;
};

/* Per op-detail row: the last children looked up under it, by name. */
#define AGG_DCACHE 4
struct dcache {
	uint32_t row[AGG_DCACHE];
};

/*
 * What agg_fold settled for good (agg_fold.c): everything that starts
 * before upto_ns, in figures, so a live aggregator's state stays the size
 * of what is in flight. Zero (nothing folded) in any other aggregator.
 */
struct corr_range {
	uint32_t lo, hi; /* inclusive */
};
struct agg_folded {
	uint64_t upto_ns;
	/* per list slot, the union before upto_ns over every track, whole
	 * (all) and cut to the steps' union (clip); nonempty: it had an
	 * interval (Distributed's host-communication fallback asks) */
	uint64_t all[LS__COUNT], clip[LS__COUNT];
	uint8_t nonempty_all[LS__COUNT], nonempty_clip[LS__COUNT];
	uint64_t overlap[2][2]; /* [host communication][cut to steps]: |comm ∩ kernels| */
	uint64_t *dev_busy;	/* per a->devs index: LS_BUSY's union on that device */
	size_t ndev_busy;
	/* settled steps, start order within each fold; number -1: unnumbered
	 * (the ordinal is given at finish, among all steps) */
	struct pt_step *steps;
	size_t nsteps, steps_cap;
	/* a copy's (agg_clone): steps is the original's, read only, never
	 * freed here (the copy is finished before the original folds again) */
	int steps_borrowed;
	uint64_t bwd_busy[2]; /* Backward busy of the folded steps: [1] those that compiled */
	/* correlation ids of the launches and activities folded: a partner
	 * arriving later (a violation) means the figures would differ */
	struct corr_range *corrs;
	size_t ncorrs, corrs_cap;
	uint64_t violations;
	uint64_t max_lag_ns; /* the longest activity start - launch start seen */
	/* launches whose correlation id an earlier launch had (ids of several
	 * processes in one trace): which activity goes to which launch then
	 * depends on the order fed, so a live summary must not differ from
	 * pt_summarize's order (agg_live.c stops keeping P) */
	uint64_t corr_dups;
};

/* Open calls one thread may nest (trace.h); an event deeper is left out of
 * the tables (counted: PT_WARN_NEST_DEEP), so the per-thread stacks stay
 * bounded whatever the trace (3M events each inside the one before took
 * 250 MB of stack frames). The lists' thread (agg_pipe.c) skips the same. */
#define AGG_MAX_DEPTH PT_NEST_MAX_DEPTH

struct pt_agg {
	const struct pt_trace *t;
	struct agg_folded fold;
	struct pt_agg_opts o;
	int64_t ordinal_base; /* step ordinal of the first step (step windows) */
	/* Every device activity has been fed (pt_summarize, after its device
	 * pass): a launch with no activity waiting has none to come. */
	int dev_complete;

	uint64_t events, t0_ns, t1_ns;
	int has_gpu;
	uint64_t overhangs, straddles, disorders;
	uint64_t too_deep; /* host events below AGG_MAX_DEPTH open calls: left out */
	/* "CPU(Process)" counter samples in the window (procstat's per-process
	 * CPU %): their name once seen, their count and their sum in millionths
	 * of a percent (an integer sum: the same whatever order fed them) */
	uint32_t cpu_name;
	uint32_t tok_name; /* PT_STEP_TOKENS, once seen */
	uint64_t cpu_n;
	int64_t cpu_sum_u;
	uint64_t device_total_ns; /* kernel+memcpy+memset+communication */
	uint64_t kernel_total_ns; /* kernel+communication */
	uint64_t op_top_cpu_ns;	  /* top-level operators' inclusive time */
	uint64_t calls[PT_KIND__COUNT];

	/* the tracks fed, in the order first seen (an aggregator of one rank
	 * holds its own tracks, not the trace's), found by id through track_ix */
	struct track_state *tracks;
	size_t ntracks, tracks_cap;
	struct u64map track_ix; /* track id -> index into tracks */
	size_t last_ix;		/* the track of the previous event */

	struct rowvec ops, detail, kernels, memory, ud;
	struct idmap ops_by_name, kernels_by_name, memdev_by_name, memhost_by_name, ud_by_name;
	struct idmap detail_top; /* name -> top-level op-detail row */
	struct u64map detail_by_key;
	/* open calls per (table, row, track): a call nested in a call of its
	 * own row adds nothing to the row's ratio (struct pt_row). Per row of
	 * each table (ops, user-defined, memory calls) the track whose calls
	 * are counted in place; other tracks' in the map (agg.c, row_open). */
	struct rowopen {
		uint32_t owner, cnt, nhash;
	} *ro[3];
	size_t ro_cap[3];
	struct u64map open_rows;
	uint32_t vname[3];     /* name ids of msprof's Computing, Communication,
				  Communication(Not Overlapped); 0 = absent */
	struct dcache *dcache; /* parallel to detail rows */
	size_t dcache_cap;
	struct idmap memname; /* per name id: 1 memory call, 2 not, AGG_NONE unknown */

	/* activities waiting for their launch */
	struct devact *acts;
	uint8_t *act_kind;
	size_t nacts, acts_cap, act_kind_cap;
	struct pt_u32map act_by_corr; /* corr -> index + 1 of the newest */
	/* launches whose activities may come later */
	struct inst *inst;
	size_t ninst, inst_cap;
	struct launch *launches;
	size_t nlaunches, launches_cap;
	struct pt_u32map launch_by_corr; /* corr -> index + 1 */
	/* launches that took their activities when fed: (zigzag start delta,
	 * gpu_ns, zigzag track delta, phase) for step settling */
	struct vlog done;
	uint64_t done_prev_start;
	uint32_t done_prev_track;
	struct orphan *orphans;
	size_t norphans, orphans_cap;

	struct step_rec *steps;
	size_t nsteps, steps_cap;
	/* direct children of steps on the step's own track that are not
	 * phase events: (zigzag step delta, zigzag start delta, length) */
	struct vlog children;
	uint64_t child_prev_start;
	uint32_t child_prev_fid;
	struct phase_rec *phases;
	size_t nphases, phases_cap;
	/* the user rows of torch.compile's ranges, by AGG_PH_* - AGG_PH_COMPILE
	 * (AGG_NONE until seen): a user-defined row is looked at once, when
	 * it is made */
	uint32_t compile_row[3];

	struct dev_acc *devs;
	size_t ndevs, devs_cap;

	/* the interval lists' thread (agg_pipe.c), NULL: lists built here */
	struct agg_pipe *pipe;
};

/* agg.c: 1 when track id is a lane of msprof's "Overlap Analysis". */
int agg_derived_lane(const struct pt_trace *t, uint32_t id);

/* Bytes the aggregator holds (what pt_ranks counts against --max-mem). */
size_t agg_mem_bytes(const struct pt_agg *a);

/* agg_steps.c: fills s->steps, s->model, s->perf. */
void agg_settle_steps(struct pt_agg *a, struct pt_summary *s);
/* agg_steps.c: the Overview's phase rows from the Model Summary (after
 * agg_settle_overview and agg_settle_steps). */
void agg_settle_phase_rows(struct pt_summary *s);
/* agg_tables.c: a call instance's final GPU time into its rows' per-call
 * stats (settle_instances, and agg_fold for the ones it settles early). */
void agg_inst_settle(struct pt_agg *a, const struct inst *in);
/* agg_tables.c: fills the tables. */
void agg_settle_tables(struct pt_agg *a, struct pt_summary *s);
/* agg_tables.c: fill the overview and dist, and the devices, from the
 * interval lists, a->calls, a->devs and s's span; they read nothing else
 * that agg_settle_tables or agg_settle_steps write, and write nothing the
 * other reads (agg_pipe.c runs the three side by side). */
void agg_settle_overview(struct pt_agg *a, struct pt_summary *s);
/* A device's busy time from the lists (kernels and collectives merged
 * across its streams). */
uint64_t agg_device_busy(struct pt_agg *a, int32_t device);
/* Busy times already settled (agg_pipe.c), by device. */
struct agg_busy {
	int32_t device;
	uint64_t busy_ns;
};
/* pre (npre entries): the devices' busy times, settled from the same lists
 * (a device absent from it has none); NULL: from a's lists. */
void agg_settle_devices(struct pt_agg *a, struct pt_summary *s, const struct agg_busy *pre,
			size_t npre);

/* ---- interval lists built beside the feed (agg_pipe.c) ---- */
struct agg_pipe;
/* Starts the lists' thread for a, which reads tracks [0, ntracks) of the
 * sorted store st as a's feed will; NULL when no thread could start. */
struct agg_pipe *agg_pipe_start(struct pt_agg *a, struct pt_store *st, uint32_t ntracks);
/* s's span and a's feed are final: the thread moves its lists into a's
 * tracks and fills s's overview (not the devices). */
void agg_pipe_overview(struct agg_pipe *p, struct pt_summary *s);
/* Waits until the lists are in a's tracks (they may be read then). The
 * devices' busy times the thread settled with the overview, or NULL (then
 * agg_settle_devices takes them from the lists). */
const struct agg_busy *agg_pipe_lists_in(struct agg_pipe *p, size_t *nbusy);
/* Waits for the thread and frees p. */
void agg_pipe_join(struct agg_pipe *p);
void agg_free(struct pt_agg *a);
/* Frees the activities waiting for their launch (agg_free does too). */
void agg_free_acts(struct pt_agg *a);
/* A deep copy of a (agg_live.c): feeding or finishing either leaves the other as it was. */
struct pt_agg *agg_clone(const struct pt_agg *a);

/*
 * agg_fold.c: settles everything that starts before upto for good: the
 * caller promises that every event fed from now on starts at or after it
 * (upto must not pass what has been fed, and launches' activities must be
 * in: see agg_live.c). Launches, call instances, waiting activities, step
 * records and interval lists before it become figures in a->fold.
 */
void agg_fold(struct pt_agg *a, uint64_t upto);
/* agg_steps.c: the steps part (steps that end by upto and their records). */
void agg_fold_steps(struct pt_agg *a, uint64_t upto);
/* agg_tables.c: the unions part. */
void agg_fold_unions(struct pt_agg *a, uint64_t upto);
/* Whether corr belongs to a launch or activity folded already. */
int agg_corr_folded(const struct pt_agg *a, uint32_t corr);
/* Appends a launch with its activities' time to the done log. */
void agg_done_add(struct pt_agg *a, uint64_t start_ns, uint64_t gpu_ns, uint32_t track,
		  uint8_t phase);
/* Appends a step's direct child to the children log. */
void agg_child_add(struct pt_agg *a, uint32_t fid, uint64_t start_ns, uint64_t end_ns);
/* Cuts list l to [from, inf): intervals that end by from go. */
void ivl_cut_before(struct ivl_list *l, uint64_t from);

/*
 * pt_agg_live_summary over only the given tracks of t (ascending ids; a
 * rank's, ranks.c): what one aggregator fed just those tracks, device ones
 * first, gives, unnumbered steps counted from 0. Use one pt_agg_live per
 * track set, always with the same set (a set that loses a track needs a
 * new one). The store must be sorted beforehand (pt_store_sort); calls on
 * disjoint track sets may run at once, each on its own pt_agg_live.
 */
struct pt_summary *agg_live_summary_of(struct pt_agg_live *l, struct pt_trace *t,
				       const uint32_t *tracks, size_t n);
/*
 * A live summary of the events that start at or after t0_ns only, as
 * pt_ranks_compute's window from o->t0_ns counts them (its unnumbered steps
 * count from the steps the store keeps before t0_ns). For
 * agg_live_summary_of.
 */
struct pt_agg_live *agg_live_new_from(uint64_t t0_ns);
/* What agg_live_summary_of does but the summary: the kept aggregator
 * takes what arrived, so that a later summary costs only what comes
 * after. */
void agg_live_advance_of(struct pt_agg_live *l, struct pt_trace *t, const uint32_t *tracks,
			 size_t n);

/* ---- shared by the step files (agg_steps.c, agg_perf.c, agg_summarize.c) ---- */

static inline uint64_t agg_u64_min(uint64_t x, uint64_t y)
{
	return x < y ? x : y;
}
static inline uint64_t agg_u64_max(uint64_t x, uint64_t y)
{
	return x > y ? x : y;
}

/* A step event's span, by start (longer first), for finding steps. */
struct sorted_step {
	uint64_t start_ns, end_ns;
	uint32_t fid;
	uint32_t proc; /* 1 + the step's process among those with steps (0: one process) */
};
/* qsort's order of struct sorted_step: start, longer first, then fid. */
int agg_sstep_cmp(const void *pa, const void *pb);
/* The step number of a step event's name (pt_step_number). */
int64_t agg_step_number(const struct pt_trace *t, uint32_t name_id);
/* agg_perf.c: the compile counts (and whether compiling steps are left out
 * of the summaries), the Model Summary, the Perf Summary. */
void agg_settle_compile(struct pt_summary *s, int with_compile);
void agg_settle_model(struct pt_summary *s);
void agg_settle_perf(struct pt_summary *s);

#endif
