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
 * pt_agg_finish (agg_tables.c, agg_steps.c).
 */
#include <stdlib.h>
#include <string.h>

#include "agg_internal.h"
#include "util.h"

static const char *const ms_names[PT_MS__COUNT] = {
    "ProfileStep", "Dataloader", "Forward", "Backward", "Optimization", "Others",
};

const char *pt_ms_row_name(enum pt_ms_row r)
{
	if ((unsigned)r >= PT_MS__COUNT)
		return "";
	return ms_names[r];
}

void pt_agg_opts_init(struct pt_agg_opts *o)
{
	memset(o, 0, sizeof *o);
	o->t0_ns = 0;
	o->t1_ns = UINT64_MAX;
	o->step_first = INT64_MIN;
	o->step_last = INT64_MAX;
}

struct pt_agg *pt_agg_new(const struct pt_trace *t, const struct pt_agg_opts *o)
{
	struct pt_agg *a = pt_xcalloc(1, sizeof *a);
	a->t = t;
	if (o)
		a->o = *o;
	else
		pt_agg_opts_init(&a->o);
	return a;
}

struct ivl_list *ts_list_make(struct track_state *ts, int k)
{
	if (!ts->li[k]) {
		if (ts->nl == ts->capl) {
			ts->capl = (uint8_t)(ts->capl ? ts->capl * 2 : 2);
			if (ts->capl > LS__COUNT)
				ts->capl = LS__COUNT;
			ts->lv = pt_xrealloc(ts->lv, ts->capl * sizeof *ts->lv);
		}
		memset(&ts->lv[ts->nl], 0, sizeof *ts->lv);
		ts->li[k] = ++ts->nl;
	}
	return &ts->lv[ts->li[k] - 1];
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

/* A frame ends: its self time, its per-call GPU time (launched anywhere
 * below it) to its rows, and that GPU time on to its parent. A frame with
 * an instance hands its sum to the instance instead, settled at finish. */
static void close_frame(struct pt_agg *a, const struct frame *f, struct frame *parent)
{
	if (f->row != AGG_NONE || f->own_detail != AGG_NONE) {
		struct rowvec *rv = f->row != AGG_NONE ? rows_of(a, f->kind) : NULL;
		struct pt_row *dr = f->own_detail != AGG_NONE ? &a->detail.v[f->own_detail] : NULL;
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
	if (f->own_inst != AGG_NONE)
		a->inst[f->own_inst].gpu_ns += f->gpu_ns;
	else if (parent)
		parent->gpu_ns += f->gpu_ns;
}

static void pop_frame(struct pt_agg *a, struct track_state *ts)
{
	ts->depth--;
	close_frame(a, &ts->stack[ts->depth], ts->depth ? &ts->stack[ts->depth - 1] : NULL);
}

/* Pops every open event that does not contain ev. A child may overhang its
 * parent's end by AGG_OVERHANG_NS (rounding in legacy exports) and still
 * nest; one that straddles further is the parent's sibling. */
static void unwind(struct pt_agg *a, struct track_state *ts, const struct pt_event *ev)
{
	uint64_t end = pt_event_end(ev);
	while (ts->depth) {
		const struct frame *top = &ts->stack[ts->depth - 1];
		if (ev->start_ns < top->end_ns) {
			if (end <= top->end_ns)
				return;
			if (end <= top->end_ns + AGG_OVERHANG_NS) {
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
			a->inst[a->ninst] = (struct inst){0, cur, f->row, f->own_detail, f->kind};
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
			if (f->detail != AGG_NONE) {
				uint32_t r =
				    detail_row(a, f->detail, d->name_id, a->act_kind[i - 1], 1);
				pt_stat_add(&a->detail.v[r].gpu, d->dur_ns);
			}
			d->start_ns = UINT64_MAX; /* taken */
		}
		pt_u32map_put(&a->act_by_corr, ev->corr, 0);
		f->gpu_ns += gpu;
	}
	if (!a->dev_complete) {
		ensure_insts(a, ts);
		a->launches =
		    agg_grow(a->launches, &a->launches_cap, a->nlaunches, sizeof *a->launches);
		a->launches[a->nlaunches] = (struct launch){
		    ev->start_ns, gpu, 0, ev->track_id, f->inst, f->detail, f->phase};
		pt_u32map_put(&a->launch_by_corr, ev->corr, (uint32_t)++a->nlaunches);
	} else if (gpu) {
		/* all in: only step settling needs it, as a few bytes */
		uint8_t *p = vlog_reserve(&a->done, 3 * VMAX + 1);
		p = vput(p, zz_delta(a->done_prev_start, ev->start_ns));
		p = vput(p, gpu);
		p = vput(p, zz_delta(a->done_prev_track, ev->track_id));
		*p++ = f->phase;
		a->done.len = (size_t)(p - a->done.p);
		a->done_prev_start = ev->start_ns;
		a->done_prev_track = ev->track_id;
	}
}

static void log_child(struct pt_agg *a, uint32_t fid, uint64_t start_ns, uint64_t end_ns)
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

static void host_event(struct pt_agg *a, struct track_state *ts, const struct pt_event *ev,
		       uint8_t kind)
{
	uint64_t end = pt_event_end(ev);
	if (!ts->is_device)
		unwind(a, ts, ev);
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
	ivl_add(ts_list_make(ts, eff), ev->start_ns, end);
	if (ev->flags & PT_EVF_COMM)
		ivl_add(ts_list_make(ts, LS_HOSTCOMM), ev->start_ns, end);

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

	if (parent) {
		parent->child_ns += ev->dur_ns;
		/* The step's direct children are its "top-level work", from
		 * which a step without explicit Forward derives it. */
		if (parent->kind == PT_KIND_PROFILE_STEP && !pt_kind_is_phase(kind))
			log_child(a, parent->step_fid, ev->start_ns, end);
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
			a->op_top_cpu_ns += ev->dur_ns;
	} else if (kind == PT_KIND_USER_DEFINED) {
		f->row = row_for(&a->ud, &a->ud_by_name, ev->name_id, kind, 0);
		pt_stat_add(&a->ud.v[f->row].cpu, ev->dur_ns);
	} else if (kind == PT_KIND_CUDA_RUNTIME && is_memory_name(a, ev->name_id)) {
		f->row = row_for(&a->memory, &a->memhost_by_name, ev->name_id, kind, 0);
		pt_stat_add(&a->memory.v[f->row].cpu, ev->dur_ns);
	}
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
	ivl_add(ts_list_make(ts, kind), ev->start_ns, end);
	if (kind == PT_KIND_KERNEL || kind == PT_KIND_COMMUNICATION) {
		ivl_add(ts_list_make(ts, LS_BUSY), ev->start_ns, end);
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
		a->orphans[a->norphans++] = (struct orphan){ev->start_ns, ev->dur_ns};
		return;
	}
	uint32_t li = a->nlaunches ? pt_u32map_get(&a->launch_by_corr, ev->corr) : 0;
	if (li) {
		struct launch *l = &a->launches[li - 1];
		l->gpu_ns += ev->dur_ns;
		l->late_ns += ev->dur_ns;
		if (l->detail != AGG_NONE) {
			uint32_t r = detail_row(a, l->detail, ev->name_id, ev->kind, 1);
			pt_stat_add(&a->detail.v[r].gpu, ev->dur_ns);
		}
		return;
	}
	/* Launch not seen yet: wait for it (or stay an orphan). */
	a->acts = agg_grow(a->acts, &a->acts_cap, a->nacts, sizeof *a->acts);
	a->act_kind = agg_grow(a->act_kind, &a->act_kind_cap, a->nacts, 1);
	a->acts[a->nacts] = (struct devact){ev->start_ns, ev->dur_ns, ev->name_id,
					    pt_u32map_get(&a->act_by_corr, ev->corr)};
	a->act_kind[a->nacts] = kind;
	pt_u32map_put(&a->act_by_corr, ev->corr, (uint32_t)++a->nacts);
}

void pt_agg_feed(struct pt_agg *a, const struct pt_event *ev)
{
	if (ev->start_ns < a->o.t0_ns || ev->start_ns >= a->o.t1_ns)
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
	if (pt_kind_is_device(kind))
		device_event(a, ts, ev, kind);
	else
		host_event(a, ts, ev, kind);
}

static void free_acts(struct pt_agg *a)
{
	free(a->acts);
	free(a->act_kind);
	a->acts = NULL;
	a->act_kind = NULL;
	a->nacts = a->acts_cap = a->act_kind_cap = 0;
	pt_u32map_free(&a->act_by_corr);
}

size_t agg_mem_bytes(const struct pt_agg *a)
{
	size_t b = sizeof *a + a->tracks_cap * sizeof *a->tracks + u64map_mem_bytes(&a->track_ix);
	for (size_t i = 0; i < a->ntracks; i++) {
		b += a->tracks[i].cap * sizeof *a->tracks[i].stack;
		b += a->tracks[i].capl * sizeof *a->tracks[i].lv;
		for (int k = 0; k < a->tracks[i].nl; k++)
			b += a->tracks[i].lv[k].log.cap;
	}
	const struct rowvec *rv[] = {&a->ops, &a->detail, &a->kernels, &a->memory, &a->ud};
	for (size_t i = 0; i < sizeof rv / sizeof *rv; i++)
		b += rv[i]->cap * sizeof *rv[i]->v;
	const struct idmap *im[] = {&a->ops_by_name,	 &a->kernels_by_name, &a->memdev_by_name,
				    &a->memhost_by_name, &a->ud_by_name,      &a->detail_top,
				    &a->memname};
	for (size_t i = 0; i < sizeof im / sizeof *im; i++)
		b += idmap_mem_bytes(im[i]);
	b += u64map_mem_bytes(&a->detail_by_key) + a->dcache_cap * sizeof *a->dcache;
	b += a->acts_cap * sizeof *a->acts + a->act_kind_cap;
	b += pt_u32map_mem_bytes(&a->act_by_corr) + pt_u32map_mem_bytes(&a->launch_by_corr);
	b += a->inst_cap * sizeof *a->inst + a->launches_cap * sizeof *a->launches;
	b += a->done.cap + a->children.cap + a->orphans_cap * sizeof *a->orphans;
	b += a->steps_cap * sizeof *a->steps + a->phases_cap * sizeof *a->phases;
	b += a->devs_cap * sizeof *a->devs;
	return b;
}

void agg_free(struct pt_agg *a)
{
	for (size_t i = 0; i < a->ntracks; i++) {
		free(a->tracks[i].stack);
		for (int k = 0; k < a->tracks[i].nl; k++)
			ivl_free(&a->tracks[i].lv[k]);
		free(a->tracks[i].lv);
	}
	free(a->tracks);
	u64map_free(&a->track_ix);
	free(a->ops.v);
	free(a->detail.v);
	free(a->kernels.v);
	free(a->memory.v);
	free(a->ud.v);
	idmap_free(&a->ops_by_name);
	idmap_free(&a->kernels_by_name);
	idmap_free(&a->memdev_by_name);
	idmap_free(&a->memhost_by_name);
	idmap_free(&a->ud_by_name);
	idmap_free(&a->detail_top);
	u64map_free(&a->detail_by_key);
	free(a->dcache);
	idmap_free(&a->memname);
	free_acts(a);
	free(a->inst);
	free(a->launches);
	pt_u32map_free(&a->launch_by_corr);
	vlog_free(&a->done);
	free(a->orphans);
	free(a->steps);
	vlog_free(&a->children);
	free(a->phases);
	free(a->devs);
	free(a);
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
		a->orphans[a->norphans++] = (struct orphan){d->start_ns, d->dur_ns};
	}
	free_acts(a);

	s->t0_ns = a->events ? a->t0_ns : 0;
	s->t1_ns = a->events ? a->t1_ns : 0;
	s->events = a->events;
	s->has_gpu = a->has_gpu;
	agg_settle_tables(a, s);
	agg_settle_steps(a, s);
	agg_free(a);
	return s;
}

void pt_summary_free(struct pt_summary *s)
{
	if (!s)
		return;
	free(s->steps);
	free(s->devices);
	free(s->operators.rows);
	free(s->op_detail.rows);
	free(s->kernels.rows);
	free(s->memory.rows);
	free(s->user_defined.rows);
	free(s);
}
