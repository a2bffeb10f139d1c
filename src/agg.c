/*
 * agg.c - the aggregator's front half: feeding. Each event costs O(1)
 * amortized: a per-track stack finds its parent (host tracks only), name-id
 * indexed maps find its rows, correlation ids link device activities to the
 * host call that launched them, and per-(track, kind) interval lists merge
 * on the fly for the Overview unions. Anything that needs the whole step or
 * the whole trace (GPU time per op call, step phases, unions across tracks)
 * is only recorded here and settled in pt_agg_finish (agg_tables.c,
 * agg_steps.c). Also pt_summarize, the one-call form over a trace's store.
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

static struct track_state *track_get(struct pt_agg *a, uint32_t id)
{
	if (id >= a->ntracks) {
		size_t nn = a->ntracks ? a->ntracks : 8;
		while (nn <= id)
			nn *= 2;
		a->tracks = pt_xrealloc(a->tracks, nn * sizeof *a->tracks);
		memset(a->tracks + a->ntracks, 0, (nn - a->ntracks) * sizeof *a->tracks);
		a->ntracks = nn;
	}
	struct track_state *ts = &a->tracks[id];
	if (!ts->used) {
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
				a->devs =
				    agg_grow(a->devs, &a->devs_cap, a->ndevs, sizeof *a->devs);
				memset(&a->devs[i], 0, sizeof a->devs[i]);
				a->devs[i].device = ts->device;
				a->ndevs++;
			}
			ts->dev_idx = (uint32_t)i;
		}
	}
	return ts;
}

/* Decided once per name id: does a runtime call copy or set memory
 * (cudaMemcpyAsync, cuMemsetD32, GpuMemcpySync...)? */
static int is_memory_name(struct pt_agg *a, uint32_t name_id)
{
	if (name_id >= a->memname_n) {
		size_t nn = a->memname_n ? a->memname_n : 256;
		while (nn <= name_id)
			nn *= 2;
		a->memname = pt_xrealloc(a->memname, nn);
		memset(a->memname + a->memname_n, 0, nn - a->memname_n);
		a->memname_n = nn;
	}
	if (!a->memname[name_id]) {
		const char *s = a->t ? pt_trace_str(a->t, name_id) : "";
		int hit = strcasestr(s, "memcpy") || strcasestr(s, "memset");
		a->memname[name_id] = hit ? 1 : 2;
	}
	return a->memname[name_id] == 1;
}

static uint32_t row_for(struct rowvec *rv, struct idmap *m, uint32_t name_id, uint8_t kind,
			uint8_t is_device)
{
	uint32_t *slot = idmap_slot(m, name_id);
	if (*slot == AGG_NONE)
		*slot = rowvec_add(rv, name_id, kind, is_device);
	return *slot;
}

/* Op-detail row of (parent row, name, host/device). */
static uint32_t detail_row(struct pt_agg *a, uint32_t parent, uint32_t name_id, uint8_t kind,
			   int is_device)
{
	uint64_t key =
	    ((uint64_t)parent << 32) | (name_id & 0x7fffffffu) | (is_device ? 0x80000000u : 0);
	uint32_t *slot = u64map_slot(&a->detail_by_key, key);
	if (*slot == AGG_NONE) {
		uint32_t r = rowvec_add(&a->detail, name_id, kind, (uint8_t)is_device);
		a->detail.v[r].parent = parent;
		a->detail.v[r].depth =
		    parent == AGG_NONE ? 0 : (uint16_t)(a->detail.v[parent].depth + 1);
		*slot = r;
	}
	return *slot;
}

static void pop_frame(struct pt_agg *a, struct track_state *ts)
{
	struct frame *f = &ts->stack[--ts->depth];
	if (f->own_inst == AGG_NONE)
		return;
	/* Self time = own duration minus the direct children's, clamped. */
	uint64_t self = f->dur_ns > f->child_ns ? f->dur_ns - f->child_ns : 0;
	const struct inst *in = &a->inst[f->own_inst];
	switch (in->kind) {
	case PT_KIND_OPERATOR:
		a->ops.v[in->row].cpu_self_ns += self;
		break;
	case PT_KIND_USER_DEFINED:
		a->ud.v[in->row].cpu_self_ns += self;
		break;
	case PT_KIND_CUDA_RUNTIME:
		a->memory.v[in->row].cpu_self_ns += self;
		break;
	default:
		break;
	}
	if (in->detail != AGG_NONE)
		a->detail.v[in->detail].cpu_self_ns += self;
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

static uint32_t new_inst(struct pt_agg *a, const struct frame *parent, uint8_t kind, uint32_t row,
			 uint32_t detail)
{
	a->inst = agg_grow(a->inst, &a->inst_cap, a->ninst, sizeof *a->inst);
	struct inst *in = &a->inst[a->ninst];
	in->gpu_ns = 0;
	in->parent = parent ? parent->inst : AGG_NONE;
	in->row = row;
	in->detail = detail;
	in->kind = kind;
	return (uint32_t)a->ninst++;
}

static void register_launch(struct pt_agg *a, const struct pt_event *ev, const struct frame *f)
{
	uint32_t *slot = u64map_slot(&a->launch_by_corr, ev->corr);
	/* A corr seen twice (ids wrap in long live sessions): the latest
	 * launch wins. */
	if (*slot == AGG_NONE) {
		a->launches =
		    agg_grow(a->launches, &a->launches_cap, a->nlaunches, sizeof *a->launches);
		*slot = (uint32_t)a->nlaunches++;
	}
	struct launch *l = &a->launches[*slot];
	l->start_ns = ev->start_ns;
	l->gpu_ns = 0;
	l->track = ev->track_id;
	l->inst = f->inst;
	l->detail = f->detail;
	l->phase = f->phase;
}

static void host_event(struct pt_agg *a, struct track_state *ts, const struct pt_event *ev,
		       uint8_t kind)
{
	uint64_t end = pt_event_end(ev);
	if (!ts->is_device)
		unwind(a, ts, ev);
	struct frame *parent = ts->depth ? &ts->stack[ts->depth - 1] : NULL;

	/* An operator inside an operator is OperatorInner for the Overview
	 * (it still has its own Operator Summary row). */
	uint8_t eff = kind;
	if (kind == PT_KIND_OPERATOR && parent && parent->op_anc)
		eff = PT_KIND_OPERATOR_INNER;
	a->calls[eff]++;
	if (kind == PT_KIND_INSTANT || kind == PT_KIND_COUNTER)
		return;
	ivl_add(&ts->lists[eff], ev->start_ns, end);
	if (ev->flags & PT_EVF_COMM)
		ivl_add(&ts->lists[LS_HOSTCOMM], ev->start_ns, end);

	struct frame f = {0};
	f.start_ns = ev->start_ns;
	f.end_ns = end;
	f.dur_ns = ev->dur_ns;
	f.kind = kind;
	f.own_inst = AGG_NONE;
	f.inst = parent ? parent->inst : AGG_NONE;
	f.detail = parent ? parent->detail : AGG_NONE;
	f.phase = parent ? parent->phase : 0;
	f.phase_mask = parent ? parent->phase_mask : 0;
	f.op_anc = (uint8_t)((parent && parent->op_anc) || kind == PT_KIND_OPERATOR);
	f.step_fid = AGG_NONE;

	if (parent) {
		parent->child_ns += ev->dur_ns;
		/* The step's direct children are its "top-level work", from
		 * which a step without explicit Forward derives it. */
		if (parent->kind == PT_KIND_PROFILE_STEP && !pt_kind_is_phase(kind)) {
			a->children = agg_grow(a->children, &a->children_cap, a->nchildren,
					       sizeof *a->children);
			a->children[a->nchildren++] =
			    (struct step_child){ev->start_ns, end, parent->step_fid};
		}
	}

	if (pt_kind_is_phase(kind)) {
		uint8_t bit = (uint8_t)(1u << (kind - PT_KIND_DATALOADER));
		/* Only the outermost event of each phase kind counts. */
		if (!(f.phase_mask & bit)) {
			a->phases =
			    agg_grow(a->phases, &a->phases_cap, a->nphases, sizeof *a->phases);
			a->phases[a->nphases++] =
			    (struct phase_rec){ev->start_ns, end, ev->track_id, kind};
		}
		f.phase_mask |= bit;
		f.phase = kind;
	} else if (kind == PT_KIND_PROFILE_STEP) {
		a->steps = agg_grow(a->steps, &a->steps_cap, a->nsteps, sizeof *a->steps);
		a->steps[a->nsteps] =
		    (struct step_rec){ev->start_ns, ev->dur_ns, ev->arg, ev->name_id, ev->track_id};
		f.step_fid = (uint32_t)a->nsteps++;
	}

	if (kind == PT_KIND_OPERATOR && (ev->flags & PT_EVF_AUTOGRAD)) {
		/* An autograd node (CudnnConvolutionBackward, AddmmBackward0)
		 * is backward work even without an evaluate_function wrapper
		 * (PyTorch before 1.9 records only the node, on the autograd
		 * thread): it marks the Backward phase and stays an operator in
		 * the tables. Nested in an evaluate_function it changes nothing. */
		uint8_t bit = (uint8_t)(1u << (PT_KIND_BACKWARD - PT_KIND_DATALOADER));
		if (!(f.phase_mask & bit)) {
			a->phases =
			    agg_grow(a->phases, &a->phases_cap, a->nphases, sizeof *a->phases);
			a->phases[a->nphases++] = (struct phase_rec){ev->start_ns, end, ev->track_id,
								     PT_KIND_BACKWARD};
		}
		f.phase_mask |= bit;
		f.phase = PT_KIND_BACKWARD;
	}

	uint32_t row = AGG_NONE, drow = AGG_NONE;
	if (kind == PT_KIND_OPERATOR) {
		row = row_for(&a->ops, &a->ops_by_name, ev->name_id, kind, 0);
		pt_stat_add(&a->ops.v[row].cpu, ev->dur_ns);
		if (!(parent && parent->op_anc))
			a->op_top_cpu_ns += ev->dur_ns;
	} else if (kind == PT_KIND_USER_DEFINED) {
		row = row_for(&a->ud, &a->ud_by_name, ev->name_id, kind, 0);
		pt_stat_add(&a->ud.v[row].cpu, ev->dur_ns);
	} else if (kind == PT_KIND_CUDA_RUNTIME && is_memory_name(a, ev->name_id)) {
		row = row_for(&a->memory, &a->memhost_by_name, ev->name_id, kind, 0);
		pt_stat_add(&a->memory.v[row].cpu, ev->dur_ns);
	}
	if (kind == PT_KIND_OPERATOR || kind == PT_KIND_OPERATOR_INNER) {
		/* Op detail: a top-level operator, or a child of the innermost
		 * op row open, down to AGG_DETAIL_MAX_DEPTH (deeper ones fold
		 * into their ancestor). An OperatorInner outside any operator
		 * has no detail row. */
		if (f.detail == AGG_NONE) {
			if (kind == PT_KIND_OPERATOR)
				drow = detail_row(a, AGG_NONE, ev->name_id, kind, 0);
		} else if (a->detail.v[f.detail].depth < AGG_DETAIL_MAX_DEPTH) {
			drow = detail_row(a, f.detail, ev->name_id, kind, 0);
		}
		if (drow != AGG_NONE) {
			pt_stat_add(&a->detail.v[drow].cpu, ev->dur_ns);
			f.detail = drow;
		}
	}
	if (row != AGG_NONE || drow != AGG_NONE) {
		f.own_inst = new_inst(a, parent, kind, row, drow);
		f.inst = f.own_inst;
	}
	if (ev->corr)
		register_launch(a, ev, &f);

	if (ts->is_device)
		return; /* nothing nests on device tracks */
	ts->stack = agg_grow(ts->stack, &ts->cap, ts->depth, sizeof *ts->stack);
	ts->stack[ts->depth++] = f;
}

void agg_apply_launch(struct pt_agg *a, uint32_t li, const struct pt_event *ev)
{
	struct launch *l = &a->launches[li];
	l->gpu_ns += ev->dur_ns;
	if (l->detail != AGG_NONE) {
		uint32_t r = detail_row(a, l->detail, ev->name_id, ev->kind, 1);
		pt_stat_add(&a->detail.v[r].gpu, ev->dur_ns);
	}
}

static void device_event(struct pt_agg *a, struct track_state *ts, const struct pt_event *ev,
			 uint8_t kind)
{
	uint64_t end = pt_event_end(ev);
	a->calls[kind]++;
	a->has_gpu = 1;
	a->device_total_ns += ev->dur_ns;
	ivl_add(&ts->lists[kind], ev->start_ns, end);
	if (kind == PT_KIND_KERNEL || kind == PT_KIND_COMMUNICATION) {
		ivl_add(&ts->lists[LS_BUSY], ev->start_ns, end);
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
	uint32_t li = ev->corr ? u64map_get(&a->launch_by_corr, ev->corr) : AGG_NONE;
	if (li != AGG_NONE) {
		agg_apply_launch(a, li, ev);
	} else {
		/* Launch not seen yet (or never will be): settled at finish. */
		a->pending = agg_grow(a->pending, &a->pending_cap, a->npending, sizeof *a->pending);
		a->pending[a->npending++] = *ev;
	}
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

void agg_free(struct pt_agg *a)
{
	for (size_t i = 0; i < a->ntracks; i++) {
		free(a->tracks[i].stack);
		for (int k = 0; k < LS__COUNT; k++)
			ivl_free(&a->tracks[i].lists[k]);
	}
	free(a->tracks);
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
	u64map_free(&a->detail_by_key);
	u64map_free(&a->launch_by_corr);
	free(a->memname);
	free(a->inst);
	free(a->launches);
	free(a->pending);
	free(a->steps);
	free(a->children);
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
	/* Activities that came before their launch: resolve now; the rest
	 * (no corr, or a corr never launched) stay as orphans, which count
	 * in the step whose span holds their start (Others). */
	size_t norphans = 0;
	for (size_t i = 0; i < a->npending; i++) {
		const struct pt_event *ev = &a->pending[i];
		uint32_t li = ev->corr ? u64map_get(&a->launch_by_corr, ev->corr) : AGG_NONE;
		if (li != AGG_NONE)
			agg_apply_launch(a, li, ev);
		else
			a->pending[norphans++] = *ev;
	}
	a->npending = norphans;

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
