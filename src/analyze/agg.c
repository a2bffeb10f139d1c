/*
 * agg.c - the aggregator's front half: feeding. Each event costs O(1)
 * amortized: a per-track stack finds its parent (host tracks only), name-id
 * indexed maps find its rows, correlation ids (sparse id maps, u32map.h)
 * link device activities to the host call that launched them, and
 * per-(track, kind) interval lists merge on the fly for the Overview unions.
 * Activities fed before their launch (pt_summarize feeds device tracks
 * first) wait in a compact list; the launch takes them and adds their time
 * into the frames open on its thread, so an op's per-call GPU time is final
 * when it pops. Activities that come after their launch (any other order)
 * find it registered and reach the per-call stats through instances settled
 * at finish. Anything that needs the whole step or the whole trace (step
 * phases, unions across tracks) is only recorded here and settled in
 * pt_agg_finish (agg_tables.c, agg_steps.c). Making, sizing and freeing an
 * aggregator: agg_life.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/agg_internal.h"
#include "model/util.h"

/* msprof's "Overlap Analysis" process: its lanes are msprof's own figures. */
int agg_derived_lane(const struct pt_trace *t, uint32_t id)
{
	if (!t || id >= t->ntracks || !t->tracks[id].process_label)
		return 0;
	const char *p = pt_trace_str(t, t->tracks[id].process_label);
	return strncmp(p, "Overlap Analysis", 16) == 0;
}

struct ivl_list *agg_lists_make(uint8_t li[LS__COUNT], uint8_t *nl, uint8_t *capl,
				struct ivl_list **lv, int k)
{
	if (!li[k]) {
		if (*nl == *capl) {
			*capl = (uint8_t)(*capl ? *capl * 2 : 2);
			if (*capl > LS__COUNT)
				*capl = LS__COUNT;
			*lv = pt_xrealloc(*lv, *capl * sizeof **lv);
		}
		memset(&(*lv)[*nl], 0, sizeof **lv);
		li[k] = ++*nl;
	}
	return &(*lv)[li[k] - 1];
}

struct ivl_list *ts_list_make(struct track_state *ts, int k)
{
	return agg_lists_make(ts->li, &ts->nl, &ts->capl, &ts->lv, k);
}

/* The state of track id: events come a track at a time, so the previous
 * event's track is tried first and the map is asked only on a change. */
static struct track_state *track_get(struct pt_agg *a, uint32_t id)
{
	if (a->ntracks && a->tracks[a->last_ix].id == id)
		return &a->tracks[a->last_ix];
	uint32_t *ix = u64map_slot(&a->track_ix, id);
	if (*ix != AGG_NONE) {
		a->last_ix = *ix;
		return &a->tracks[*ix];
	}
	a->tracks = agg_grow(a->tracks, &a->tracks_cap, a->ntracks, sizeof *a->tracks);
	*ix = (uint32_t)a->ntracks;
	a->last_ix = a->ntracks;
	struct track_state *ts = &a->tracks[a->ntracks++];
	memset(ts, 0, sizeof *ts);
	ts->id = id;
	ts->used = 1;
	ts->device = -1;
	ts->dev_idx = AGG_NONE;
	ts->derived = (uint8_t)agg_derived_lane(a->t, id);
	if (a->t && id < a->t->ntracks && pt_track_is_device(&a->t->tracks[id])) {
		ts->is_device = 1;
		ts->device = a->t->tracks[id].device;
		size_t i;
		for (i = 0; i < a->ndevs; i++)
			if (a->devs[i].device == ts->device)
				break;
		if (i == a->ndevs) {
			a->devs = agg_grow(a->devs, &a->devs_cap, a->ndevs, sizeof *a->devs);
			memset(&a->devs[i], 0, sizeof a->devs[i]);
			a->devs[i].device = ts->device;
			a->ndevs++;
		}
		ts->dev_idx = (uint32_t)i;
	}
	return ts;
}

/* Decided once per name id: does a runtime call copy or set memory
 * (cudaMemcpyAsync, cuMemsetD32, GpuMemcpySync...)? */
static int is_memory_name(struct pt_agg *a, uint32_t name_id)
{
	uint32_t *known = idmap_slot(&a->memname, name_id);
	if (*known == AGG_NONE) {
		const char *s = a->t ? pt_trace_str(a->t, name_id) : "";
		int hit = strcasestr(s, "memcpy") || strcasestr(s, "memset");
		*known = hit ? 1 : 2;
	}
	return *known == 1;
}

/* A new user-defined row: one of torch.compile's ranges (proftop's Python
 * helper, proftop_compile.py) has its row remembered, so that each of its
 * events costs a compare. */
static void ud_row_new(struct pt_agg *a, uint32_t row, uint32_t name_id)
{
	static const char *const names[3] = {"torch.compile: compile", "torch.compile: recompile",
					     "torch.compile: graph break"};
	const char *s = a->t ? pt_trace_str(a->t, name_id) : "";
	if (strncmp(s, "torch.compile: ", 15) != 0)
		return;
	for (int i = 0; i < 3; i++)
		if (strcmp(s, names[i]) == 0)
			a->compile_row[i] = row;
}

/* The user-defined row's AGG_PH_* code, 0 when it is not torch.compile's. */
static inline uint8_t ud_compile_kind(const struct pt_agg *a, uint32_t row)
{
	for (int i = 0; i < 3; i++)
		if (a->compile_row[i] == row)
			return (uint8_t)(AGG_PH_COMPILE + i);
	return 0;
}

static uint32_t row_for(struct rowvec *rv, struct idmap *m, uint32_t name_id, uint8_t kind,
			uint8_t is_device)
{
	uint32_t *slot = idmap_slot(m, name_id);
	if (*slot == AGG_NONE)
		*slot = rowvec_add(rv, name_id, kind, is_device);
	return *slot;
}

static uint32_t detail_new(struct pt_agg *a, uint32_t parent, uint32_t name_id, uint8_t kind,
			   int is_device)
{
	uint32_t r = rowvec_add(&a->detail, name_id, kind, (uint8_t)is_device);
	a->detail.v[r].parent = parent;
	a->detail.v[r].depth = parent == AGG_NONE ? 0 : (uint16_t)(a->detail.v[parent].depth + 1);
	return r;
}

/* The child-lookup cache of op-detail row r. */
static struct dcache *dcache_of(struct pt_agg *a, uint32_t r)
{
	if (r >= a->dcache_cap) {
		size_t nn = a->dcache_cap ? a->dcache_cap : 64;
		while (nn <= r)
			nn *= 2;
		a->dcache = pt_xrealloc(a->dcache, nn * sizeof *a->dcache);
		memset(a->dcache + a->dcache_cap, 0xff, (nn - a->dcache_cap) * sizeof *a->dcache);
		a->dcache_cap = nn;
	}
	return &a->dcache[r];
}

/* Op-detail row of (parent row, name, host/device). Ops repeat, so the
 * last children found under each parent are cached by name; the hash map
 * is only asked on a miss. */
static uint32_t detail_row(struct pt_agg *a, uint32_t parent, uint32_t name_id, uint8_t kind,
			   int is_device)
{
	if (parent == AGG_NONE && !is_device) {
		uint32_t *slot = idmap_slot(&a->detail_top, name_id);
		if (*slot == AGG_NONE)
			*slot = detail_new(a, parent, name_id, kind, is_device);
		return *slot;
	}
	unsigned ci = (name_id * 2u + (unsigned)is_device) & (AGG_DCACHE - 1);
	if (parent != AGG_NONE) {
		uint32_t c = dcache_of(a, parent)->row[ci];
		if (c != AGG_NONE && a->detail.v[c].name_id == name_id &&
		    a->detail.v[c].is_device == is_device)
			return c;
	}
	uint64_t key =
	    ((uint64_t)parent << 32) | (name_id & 0x7fffffffu) | (is_device ? 0x80000000u : 0);
	uint32_t *slot = u64map_slot(&a->detail_by_key, key);
	if (*slot == AGG_NONE)
		*slot = detail_new(a, parent, name_id, kind, is_device);
	uint32_t r = *slot;
	if (parent != AGG_NONE)
		dcache_of(a, parent)->row[ci] = r;
	return r;
}

static struct rowvec *rows_of(struct pt_agg *a, uint8_t kind)
{
	switch (kind) {
	case PT_KIND_OPERATOR:
		return &a->ops;
	case PT_KIND_USER_DEFINED:
		return &a->ud;
	case PT_KIND_CUDA_RUNTIME:
		return &a->memory;
	default:
		return NULL;
	}
}

/* The open-call counter of (table, row) on track tr in the hash map. */
static uint32_t *open_slot(struct pt_agg *a, uint64_t tbl, uint32_t row, uint32_t tr)
{
	uint64_t key = (uint64_t)tr << 34 | tbl << 32 | row;
	uint32_t *slot = u64map_slot(&a->open_rows, key);
	if (*slot == AGG_NONE)
		*slot = 0;
	return slot;
}

static struct rowopen *rowopen_of(struct pt_agg *a, uint8_t kind, uint32_t row, uint64_t *tbl)
{
	*tbl = kind == PT_KIND_OPERATOR ? 0 : kind == PT_KIND_USER_DEFINED ? 1 : 2;
	struct rowopen **v = &a->ro[*tbl];
	size_t *cap = &a->ro_cap[*tbl];
	if (row >= *cap) {
		size_t nn = *cap ? *cap : 64;
		while (nn <= row)
			nn *= 2;
		*v = pt_xrealloc(*v, nn * sizeof **v);
		for (size_t i = *cap; i < nn; i++)
			(*v)[i] = (struct rowopen){AGG_NONE, 0, 0};
		*cap = nn;
	}
	return &(*v)[row];
}

/*
 * A call of a row opens on track tr; returns 1 when no call of that row is
 * open below it on tr (struct frame's outer). Calls of a row open on one
 * track at a time (the common case) are counted in the row's own slot;
 * only a second track meanwhile goes through the hash map. A track's calls
 * of a row all take one path: it owns the row only while it has no entry
 * in the map, and keeps owning it until its last call closes.
 */
static int row_open(struct pt_agg *a, uint8_t kind, uint32_t row, uint32_t tr)
{
	uint64_t tbl;
	struct rowopen *ro = rowopen_of(a, kind, row, &tbl);
	if (ro->owner == tr)
		return ro->cnt++ == 0;
	if (ro->owner == AGG_NONE && !ro->nhash) {
		ro->owner = tr;
		ro->cnt = 1;
		return 1;
	}
	uint32_t *c = open_slot(a, tbl, row, tr);
	if ((*c)++)
		return 0;
	ro->nhash++;
	return 1;
}

static void row_close(struct pt_agg *a, uint8_t kind, uint32_t row, uint32_t tr)
{
	uint64_t tbl;
	struct rowopen *ro = rowopen_of(a, kind, row, &tbl);
	if (ro->owner == tr) {
		if (ro->cnt && --ro->cnt == 0)
			ro->owner = AGG_NONE;
		return;
	}
	uint32_t *c = open_slot(a, tbl, row, tr);
	if (*c && --*c == 0 && ro->nhash)
		ro->nhash--;
}

/* A frame ends: its self time, its per-call GPU time (launched anywhere
 * below it) to its rows, and that GPU time on to its parent. A frame with
 * an instance hands its sum to the instance instead, settled at finish. */
static void close_frame(struct pt_agg *a, const struct frame *f, struct frame *parent, uint32_t tr)
{
	if (f->row != AGG_NONE || f->own_detail != AGG_NONE) {
		struct rowvec *rv = f->row != AGG_NONE ? rows_of(a, f->kind) : NULL;
		struct pt_row *dr = f->own_detail != AGG_NONE ? &a->detail.v[f->own_detail] : NULL;
		if (rv) {
			row_close(a, f->kind, f->row, tr);
			if (f->outer) {
				/* the ratio counts the wall time of outermost calls */
				rv->v[f->row].cpu_ratio_ns += f->clip_end - f->start_ns;
				if (f->own_inst == AGG_NONE)
					rv->v[f->row].gpu_ratio_ns += f->gpu_ns;
			}
		}
		if (dr)
			dr->cpu_ratio_ns += f->clip_end - f->start_ns;
		if (!f->no_self) {
			/* Self time = own duration minus the direct children's,
			 * clamped. */
			uint64_t self = f->dur_ns > f->child_ns ? f->dur_ns - f->child_ns : 0;
			if (rv)
				rv->v[f->row].cpu_self_ns += self;
			if (dr)
				dr->cpu_self_ns += self;
		}
		if (f->own_inst == AGG_NONE) {
			if (rv)
				pt_stat_add(&rv->v[f->row].gpu, f->gpu_ns);
			if (dr)
				pt_stat_add(&dr->gpu, f->gpu_ns);
		}
	}
	if (f->own_inst != AGG_NONE) {
		a->inst[f->own_inst].gpu_ns += f->gpu_ns;
		a->inst[f->own_inst].closed = 1;
	} else if (parent)
		parent->gpu_ns += f->gpu_ns;
}

static void pop_frame(struct pt_agg *a, struct track_state *ts)
{
	ts->depth--;
	close_frame(a, &ts->stack[ts->depth], ts->depth ? &ts->stack[ts->depth - 1] : NULL,
		    (uint32_t)(ts - a->tracks));
}

/*
 * Pops every open event that is not ev's parent. The parent is the
 * innermost open event that contains ev; legacy exports round start and
 * duration separately, so an event that ends up to AGG_OVERHANG_NS after
 * an open event's end is still its child, but only when most of it lies
 * inside (the part outside is shorter than the part inside). Otherwise it
 * is a sibling that started before its neighbour's rounded end (an
 * aten::empty_like right after an aten::empty): the open event is popped
 * and an enclosing event that contains ev exactly becomes the parent.
 */
static void unwind(struct pt_agg *a, struct track_state *ts, const struct pt_event *ev)
{
	uint64_t end = pt_event_end(ev);
	while (ts->depth) {
		const struct frame *top = &ts->stack[ts->depth - 1];
		if (ev->start_ns < top->end_ns) {
			if (end <= top->end_ns)
				return;
			uint64_t out = end - top->end_ns, in = top->end_ns - ev->start_ns;
			if (out <= AGG_OVERHANG_NS && out < in) {
				a->overhangs++;
				return;
			}
			a->straddles++;
		}
		pop_frame(a, ts);
	}
}

/* Gives every row-owning frame on the stack an instance, so device time
 * that comes after the launch can still reach the per-call stats. Frames
 * already linked are skipped, so each frame is visited once: O(1)
 * amortized. */
static void ensure_insts(struct pt_agg *a, struct track_state *ts)
{
	size_t i = ts->depth;
	while (i > 0 && !ts->stack[i - 1].inst_ok)
		i--;
	uint32_t cur = i > 0 ? ts->stack[i - 1].inst : AGG_NONE;
	for (; i < ts->depth; i++) {
		struct frame *f = &ts->stack[i];
		if (f->row != AGG_NONE || f->own_detail != AGG_NONE) {
			a->inst = agg_grow(a->inst, &a->inst_cap, a->ninst, sizeof *a->inst);
			a->inst[a->ninst] = (struct inst){
			    0, f->end_ns, cur, f->row, f->own_detail, f->kind, f->outer, 0};
			f->own_inst = cur = (uint32_t)a->ninst++;
		}
		f->inst = cur;
		f->inst_ok = 1;
	}
}

/* The host event on top of ts carries a correlation id: it launched the
 * device activities with that id. Those fed already are taken now (their
 * time joins the frame's GPU sum and their op-detail rows); unless every
 * activity is known to be in, the launch is also registered so later ones
 * find it. A corr launched twice: activities go to the launch registered
 * when they come (ids wrap in long live sessions). */
static void launch(struct pt_agg *a, struct track_state *ts, const struct pt_event *ev)
{
	struct frame *f = &ts->stack[ts->depth - 1];
	uint64_t gpu = 0;
	uint32_t head = a->nacts ? pt_u32map_get(&a->act_by_corr, ev->corr) : 0;
	if (head) {
		for (uint32_t i = head; i; i = a->acts[i - 1].next) {
			struct devact *d = &a->acts[i - 1];
			gpu += d->dur_ns;
			if (d->start_ns > ev->start_ns &&
			    d->start_ns - ev->start_ns > a->fold.max_lag_ns)
				a->fold.max_lag_ns = d->start_ns - ev->start_ns;
			if (f->detail != AGG_NONE) {
				uint32_t r =
				    detail_row(a, f->detail, d->name_id, a->act_kind[i - 1], 1);
				pt_stat_add(&a->detail.v[r].gpu, d->dur_ns);
			}
			d->start_ns = UINT64_MAX; /* taken */
		}
		pt_u32map_put(&a->act_by_corr, ev->corr, 0);
		f->gpu_ns += gpu;
	} else if (a->fold.ncorrs && agg_corr_folded(a, ev->corr)) {
		a->fold.violations++; /* its activities were folded as orphans */
	}
	if (!a->dev_complete) {
		if (pt_u32map_get(&a->launch_by_corr, ev->corr) ||
		    (a->fold.ncorrs && agg_corr_folded(a, ev->corr)))
			a->fold.corr_dups++;
		ensure_insts(a, ts);
		a->launches =
		    agg_grow(a->launches, &a->launches_cap, a->nlaunches, sizeof *a->launches);
		a->launches[a->nlaunches] = (struct launch){
		    ev->start_ns, gpu, 0, ev->track_id, f->inst, f->detail, ev->corr, f->phase};
		pt_u32map_put(&a->launch_by_corr, ev->corr, (uint32_t)++a->nlaunches);
	} else if (gpu) {
		/* all in: only step settling needs it, as a few bytes */
		agg_done_add(a, ev->start_ns, gpu, ev->track_id, f->phase);
	}
}

void agg_done_add(struct pt_agg *a, uint64_t start_ns, uint64_t gpu_ns, uint32_t track,
		  uint8_t phase)
{
	uint8_t *p = vlog_reserve(&a->done, 3 * VMAX + 1);
	p = vput(p, zz_delta(a->done_prev_start, start_ns));
	p = vput(p, gpu_ns);
	p = vput(p, zz_delta(a->done_prev_track, track));
	*p++ = phase;
	a->done.len = (size_t)(p - a->done.p);
	a->done_prev_start = start_ns;
	a->done_prev_track = track;
}

void agg_child_add(struct pt_agg *a, uint32_t fid, uint64_t start_ns, uint64_t end_ns)
{
	uint8_t *p = vlog_reserve(&a->children, 3 * VMAX);
	p = vput(p, zz_delta(a->child_prev_fid, fid));
	p = vput(p, zz_delta(a->child_prev_start, start_ns));
	p = vput(p, end_ns - start_ns);
	a->children.len = (size_t)(p - a->children.p);
	a->child_prev_fid = fid;
	a->child_prev_start = start_ns;
}

static void add_phase(struct pt_agg *a, const struct pt_event *ev, uint8_t kind)
{
	a->phases = agg_grow(a->phases, &a->phases_cap, a->nphases, sizeof *a->phases);
	a->phases[a->nphases++] =
	    (struct phase_rec){ev->start_ns, pt_event_end(ev), ev->track_id, kind};
}

/* [s, e) into track ts's list k, unless the lists' thread builds the
 * lists (agg_pipe.c, which appends exactly what this appends: keep the
 * two in step). */
static inline void list_add(struct pt_agg *a, struct track_state *ts, int k, uint64_t s, uint64_t e)
{
	if (!a->pipe)
		ivl_add(ts_list_make(ts, k), s, e);
}

static void host_event(struct pt_agg *a, struct track_state *ts, const struct pt_event *ev,
		       uint8_t kind)
{
	uint64_t end = pt_event_end(ev);
	if (!ts->is_device)
		unwind(a, ts, ev);
	if (ts->depth >= AGG_MAX_DEPTH) {
		a->too_deep++;
		return;
	}
	if (ts->depth >= ts->cap) { /* from 2 frames: most tracks are shallow */
		ts->cap = ts->cap ? ts->cap * 2 : 2;
		ts->stack = pt_xrealloc(ts->stack, ts->cap * sizeof *ts->stack);
	}
	struct frame *parent = ts->depth ? &ts->stack[ts->depth - 1] : NULL;

	/* An operator inside an operator is OperatorInner for the Overview
	 * (it still has its own Operator Summary row). */
	uint8_t eff = kind;
	if (kind == PT_KIND_OPERATOR && parent && parent->op_anc)
		eff = PT_KIND_OPERATOR_INNER;
	a->calls[eff]++;
	if (kind == PT_KIND_INSTANT || kind == PT_KIND_COUNTER)
		return;
	list_add(a, ts, eff, ev->start_ns, end);
	if (ev->flags & PT_EVF_COMM)
		list_add(a, ts, LS_HOSTCOMM, ev->start_ns, end);
	if (ts->derived && ev->name_id) {
		for (int i = 0; i < 3; i++)
			if (ev->name_id == a->vname[i])
				list_add(a, ts, LS_VCOMP + i, ev->start_ns, end);
	}

	struct frame *f = &ts->stack[ts->depth];
	memset(f, 0, sizeof *f);
	f->start_ns = ev->start_ns;
	f->end_ns = end;
	f->dur_ns = ev->dur_ns;
	f->kind = kind;
	f->row = f->own_detail = f->own_inst = f->inst = AGG_NONE;
	f->detail = parent ? parent->detail : AGG_NONE;
	f->phase = parent ? parent->phase : 0;
	f->phase_mask = parent ? parent->phase_mask : 0;
	f->op_anc = (uint8_t)((parent && parent->op_anc) || kind == PT_KIND_OPERATOR);
	f->step_fid = AGG_NONE;
	f->no_self = (uint8_t)ts->is_device;
	f->clip_end = parent && parent->clip_end < end ? parent->clip_end : end;
	if (f->clip_end < f->start_ns)
		f->clip_end = f->start_ns;

	if (parent) {
		parent->child_ns += ev->dur_ns;
		/* The step's direct children are its "top-level work", from
		 * which a step without explicit Forward derives it. */
		if (parent->kind == PT_KIND_PROFILE_STEP && !pt_kind_is_phase(kind))
			agg_child_add(a, parent->step_fid, ev->start_ns, end);
	}

	if (pt_kind_is_phase(kind)) {
		uint8_t bit = (uint8_t)(1u << (kind - PT_KIND_DATALOADER));
		/* Only the outermost event of each phase kind counts. */
		if (!(f->phase_mask & bit))
			add_phase(a, ev, kind);
		f->phase_mask |= bit;
		f->phase = kind;
	} else if (kind == PT_KIND_PROFILE_STEP) {
		a->steps = agg_grow(a->steps, &a->steps_cap, a->nsteps, sizeof *a->steps);
		a->steps[a->nsteps] =
		    (struct step_rec){ev->start_ns, ev->dur_ns, ev->arg, ev->name_id, ev->track_id};
		f->step_fid = (uint32_t)a->nsteps++;
	}

	if (kind == PT_KIND_OPERATOR && (ev->flags & PT_EVF_AUTOGRAD)) {
		/* An autograd node (CudnnConvolutionBackward, AddmmBackward0)
		 * is backward work even without an evaluate_function wrapper
		 * (PyTorch before 1.9 records only the node, on the autograd
		 * thread): it marks the Backward phase and stays an operator in
		 * the tables. Nested in an evaluate_function it changes nothing. */
		uint8_t bit = (uint8_t)(1u << (PT_KIND_BACKWARD - PT_KIND_DATALOADER));
		if (!(f->phase_mask & bit))
			add_phase(a, ev, PT_KIND_BACKWARD);
		f->phase_mask |= bit;
		f->phase = PT_KIND_BACKWARD;
	}

	if (kind == PT_KIND_OPERATOR) {
		f->row = row_for(&a->ops, &a->ops_by_name, ev->name_id, kind, 0);
		pt_stat_add(&a->ops.v[f->row].cpu, ev->dur_ns);
		if (!(parent && parent->op_anc))
			a->op_top_cpu_ns += f->clip_end - f->start_ns;
	} else if (kind == PT_KIND_USER_DEFINED) {
		size_t nud = a->ud.n;
		f->row = row_for(&a->ud, &a->ud_by_name, ev->name_id, kind, 0);
		if (a->ud.n != nud)
			ud_row_new(a, f->row, ev->name_id);
		pt_stat_add(&a->ud.v[f->row].cpu, ev->dur_ns);
		ts->has_ud = 1;
		uint8_t ck = ud_compile_kind(a, f->row);
		if (ck)
			add_phase(a, ev, ck);
	} else if (kind == PT_KIND_CUDA_RUNTIME &&
		   (is_memory_name(a, ev->name_id) || ev->kind == PT_KIND_MEMCPY ||
		    ev->kind == PT_KIND_MEMSET)) {
		f->row = row_for(&a->memory, &a->memhost_by_name, ev->name_id, kind, 0);
		pt_stat_add(&a->memory.v[f->row].cpu, ev->dur_ns);
		ts->has_mem = 1;
	}
	if (f->row != AGG_NONE)
		f->outer = (uint8_t)row_open(a, kind, f->row, (uint32_t)(ts - a->tracks));
	if (kind == PT_KIND_OPERATOR || kind == PT_KIND_OPERATOR_INNER) {
		/* Op detail: a top-level operator, or a child of the innermost
		 * op row open, down to AGG_DETAIL_MAX_DEPTH (deeper ones fold
		 * into their ancestor). An OperatorInner outside any operator
		 * has no detail row. */
		uint32_t drow = AGG_NONE;
		if (f->detail == AGG_NONE) {
			if (kind == PT_KIND_OPERATOR)
				drow = detail_row(a, AGG_NONE, ev->name_id, kind, 0);
		} else if (a->detail.v[f->detail].depth < AGG_DETAIL_MAX_DEPTH) {
			drow = detail_row(a, f->detail, ev->name_id, kind, 0);
		}
		if (drow != AGG_NONE) {
			pt_stat_add(&a->detail.v[drow].cpu, ev->dur_ns);
			f->detail = f->own_detail = drow;
		}
	}
	ts->depth++;
	if (ev->corr)
		launch(a, ts, ev);
	if (ts->is_device) /* nothing nests on device tracks */
		pop_frame(a, ts);
}

static void device_event(struct pt_agg *a, struct track_state *ts, const struct pt_event *ev,
			 uint8_t kind)
{
	uint64_t end = pt_event_end(ev);
	a->calls[kind]++;
	a->has_gpu = 1;
	a->device_total_ns += ev->dur_ns;
	list_add(a, ts, kind, ev->start_ns, end);
	if (kind == PT_KIND_KERNEL || kind == PT_KIND_COMMUNICATION) {
		list_add(a, ts, LS_BUSY, ev->start_ns, end);
		a->kernel_total_ns += ev->dur_ns;
		uint32_t r = row_for(&a->kernels, &a->kernels_by_name, ev->name_id, kind, 1);
		pt_stat_add(&a->kernels.v[r].gpu, ev->dur_ns);
	} else {
		uint32_t r = row_for(&a->memory, &a->memdev_by_name, ev->name_id, kind, 1);
		pt_stat_add(&a->memory.v[r].gpu, ev->dur_ns);
	}
	if (ts->dev_idx != AGG_NONE) {
		struct dev_acc *d = &a->devs[ts->dev_idx];
		if (kind == PT_KIND_MEMCPY) {
			d->memcpys++;
			d->memcpy_bytes += ev->arg;
		} else if (kind == PT_KIND_MEMSET) {
			d->memsets++;
		} else {
			d->kernels++;
		}
	}
	if (!ev->corr) {
		/* no launch to find: counts in the step holding its start */
		a->orphans = agg_grow(a->orphans, &a->orphans_cap, a->norphans, sizeof *a->orphans);
		a->orphans[a->norphans++] = (struct orphan){
		    ev->start_ns, ev->dur_ns, ts->dev_idx != AGG_NONE ? ORPHAN_DEV(ts->dev_idx) : ORPHAN_SUM};
		return;
	}
	uint32_t li = a->nlaunches ? pt_u32map_get(&a->launch_by_corr, ev->corr) : 0;
	if (li) {
		struct launch *l = &a->launches[li - 1];
		l->gpu_ns += ev->dur_ns;
		l->late_ns += ev->dur_ns;
		if (ev->start_ns > l->start_ns && ev->start_ns - l->start_ns > a->fold.max_lag_ns)
			a->fold.max_lag_ns = ev->start_ns - l->start_ns;
		if (l->detail != AGG_NONE) {
			uint32_t r = detail_row(a, l->detail, ev->name_id, ev->kind, 1);
			pt_stat_add(&a->detail.v[r].gpu, ev->dur_ns);
		}
		return;
	}
	/* Launch not seen yet: wait for it (or stay an orphan). */
	if (a->fold.ncorrs && agg_corr_folded(a, ev->corr))
		a->fold.violations++; /* its launch was folded */
	a->acts = agg_grow(a->acts, &a->acts_cap, a->nacts, sizeof *a->acts);
	a->act_kind = agg_grow(a->act_kind, &a->act_kind_cap, a->nacts, 1);
	a->acts[a->nacts] = (struct devact){ev->start_ns, ev->dur_ns, ev->name_id,
					    pt_u32map_get(&a->act_by_corr, ev->corr), ev->corr};
	a->act_kind[a->nacts] = kind;
	pt_u32map_put(&a->act_by_corr, ev->corr, (uint32_t)++a->nacts);
}

/* A step's token count (PT_STEP_TOKENS), a record of the step holding
 * its time, settled with the phases. */
static void tokens_sample(struct pt_agg *a, const struct pt_event *ev)
{
	if (!a->tok_name && a->t && ev->name_id &&
	    pt_strtab_len(a->t->strings, ev->name_id) == sizeof PT_STEP_TOKENS - 1 &&
	    memcmp(pt_trace_str(a->t, ev->name_id), PT_STEP_TOKENS, sizeof PT_STEP_TOKENS - 1) == 0)
		a->tok_name = ev->name_id;
	if (!a->tok_name || ev->name_id != a->tok_name)
		return;
	double x;
	memcpy(&x, &ev->arg, sizeof x);
	if (!(x >= 1.0 && x < 1e15))
		return;
	a->phases = agg_grow(a->phases, &a->phases_cap, a->nphases, sizeof *a->phases);
	a->phases[a->nphases++] =
	    (struct phase_rec){ev->start_ns, (uint64_t)llround(x), ev->track_id, AGG_PH_TOKENS};
}

/* A counter sample: the mean of "CPU(Process)" goes into the summary. */
static void counter_sample(struct pt_agg *a, const struct pt_event *ev)
{
	tokens_sample(a, ev);
	if (!a->cpu_name && a->t && ev->name_id &&
	    pt_strtab_len(a->t->strings, ev->name_id) == 12 &&
	    memcmp(pt_trace_str(a->t, ev->name_id), "CPU(Process)", 12) == 0)
		a->cpu_name = ev->name_id; /* its own name read: no lookup per sample */
	if (!a->cpu_name || ev->name_id != a->cpu_name)
		return;
	double x;
	memcpy(&x, &ev->arg, sizeof x);
	if (isfinite(x) && fabs(x) < 1e9) { /* a percentage; no sum can overflow */
		a->cpu_sum_u += llround(x * 1e6);
		a->cpu_n++;
	}
}

void pt_agg_feed(struct pt_agg *a, const struct pt_event *ev)
{
	if (ev->start_ns < a->o.t0_ns || ev->start_ns >= a->o.t1_ns)
		return;
	if (ev->kind == PT_KIND_COUNTER)
		counter_sample(a, ev);
	/* the profiler's own spans and marks: in no summary, not in the span */
	if (ev->flags & PT_EVF_INTERNAL)
		return;
	uint8_t kind = ev->kind < PT_KIND__COUNT ? ev->kind : PT_KIND_OTHER;
	uint64_t end = pt_event_end(ev);
	if (a->events == 0 || ev->start_ns < a->t0_ns)
		a->t0_ns = ev->start_ns;
	if (end > a->t1_ns)
		a->t1_ns = end;
	a->events++;
	struct track_state *ts = track_get(a, ev->track_id);
	if (ev->start_ns < ts->last_start_ns)
		a->disorders++;
	ts->last_start_ns = ev->start_ns;
	if (pt_kind_is_device(kind) && ts->is_device)
		device_event(a, ts, ev, kind);
	else if (pt_kind_is_device(kind))
		/* a host thread's record of device work (Paddle's host-side
		 * GpuMemcpyAsync has category Memcpy): a runtime call, its time
		 * CPU time; a copy or set is a memory call */
		host_event(a, ts, ev, PT_KIND_CUDA_RUNTIME);
	else
		host_event(a, ts, ev, kind);
}

struct pt_summary *pt_agg_finish(struct pt_agg *a)
{
	struct pt_summary *s = pt_xcalloc(1, sizeof *s);
	for (size_t i = 0; i < a->ntracks; i++)
		while (a->tracks[i].depth)
			pop_frame(a, &a->tracks[i]);
	/* Activities whose launch never came (a corr never launched) are
	 * orphans: they count in the step whose span holds their start
	 * (Others). */
	for (size_t i = 0; i < a->nacts; i++) {
		const struct devact *d = &a->acts[i];
		if (d->start_ns == UINT64_MAX)
			continue;
		a->orphans = agg_grow(a->orphans, &a->orphans_cap, a->norphans, sizeof *a->orphans);
		a->orphans[a->norphans++] = (struct orphan){d->start_ns, d->dur_ns, ORPHAN_SUM};
	}
	agg_free_acts(a);

	s->t0_ns = a->events ? a->t0_ns : 0;
	s->t1_ns = a->events ? a->t1_ns : 0;
	s->events = a->events;
	s->has_gpu = a->has_gpu;
	s->proc_cpu_pct = a->cpu_n ? (double)a->cpu_sum_u / 1e6 / (double)a->cpu_n : -1;
	if (a->pipe) {
		/* the lists' thread settles the overview beside the rest */
		agg_pipe_overview(a->pipe, s);
		agg_settle_tables(a, s);
		agg_settle_steps(a, s);
		size_t nbusy = 0;
		const struct agg_busy *busy = agg_pipe_lists_in(a->pipe, &nbusy);
		agg_settle_devices(a, s, busy, nbusy);
		agg_pipe_join(a->pipe);
		a->pipe = NULL;
	} else {
		agg_settle_tables(a, s);
		agg_settle_overview(a, s);
		agg_settle_devices(a, s, NULL, 0);
		agg_settle_steps(a, s);
	}
	agg_settle_phase_rows(s);
	agg_free(a);
	return s;
}
