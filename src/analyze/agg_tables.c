/*
 * agg_tables.c - settles the per-name tables at pt_agg_finish: folds the
 * device time that came after its launch into the op / user-defined /
 * memory-call instances open at the launch (per-call GPU stats), orders the Operator,
 * op-detail (pre-order tree), Kernel, Memory and UserDefined tables, and
 * merges the per-track interval lists into the Overview unions, the
 * Distributed Summary (communication / computation / overlap) and the
 * Device Summary (busy time per device across its streams).
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/agg_internal.h"
#include "model/util.h"

/* Default row order: CPU total desc, then GPU total desc, then name id. */
static int row_cmp(const void *pa, const void *pb)
{
	const struct pt_row *a = pa, *b = pb;
	if (a->cpu.total_ns != b->cpu.total_ns)
		return a->cpu.total_ns > b->cpu.total_ns ? -1 : 1;
	if (a->gpu.total_ns != b->gpu.total_ns)
		return a->gpu.total_ns > b->gpu.total_ns ? -1 : 1;
	if (a->is_device != b->is_device)
		return a->is_device < b->is_device ? -1 : 1;
	return a->name_id < b->name_id ? -1 : a->name_id > b->name_id;
}

/* Moves a row vector into a table (sorted; depth 0, no parents). A device
 * row's ratio is of its whole GPU time (device activities do not nest). */
static void table_from(struct pt_table *t, struct rowvec *rv)
{
	t->rows = rv->v;
	t->n = rv->n;
	rv->v = NULL;
	rv->n = rv->cap = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->rows[i].is_device)
			t->rows[i].gpu_ratio_ns = t->rows[i].gpu.total_ns;
	if (t->n > 1)
		qsort(t->rows, t->n, sizeof *t->rows, row_cmp);
}

/* Per-call GPU time of the calls that had instances (see struct inst):
 * each registered launch's late device time goes to the innermost
 * instance open at the launch; instances are created parent first, so one
 * backward sweep adds every child's sum into its parent and each instance
 * ends up with the device time launched anywhere below it. */
static void settle_instances(struct pt_agg *a)
{
	for (size_t i = 0; i < a->nlaunches; i++) {
		const struct launch *l = &a->launches[i];
		if (l->inst != AGG_NONE)
			a->inst[l->inst].gpu_ns += l->late_ns;
	}
	for (size_t i = a->ninst; i-- > 0;) {
		const struct inst *in = &a->inst[i];
		if (in->parent != AGG_NONE)
			a->inst[in->parent].gpu_ns += in->gpu_ns;
	}
	for (size_t i = 0; i < a->ninst; i++)
		agg_inst_settle(a, &a->inst[i]);
}

void agg_inst_settle(struct pt_agg *a, const struct inst *in)
{
	struct rowvec *rv = NULL;
	if (in->row != AGG_NONE) {
		if (in->kind == PT_KIND_OPERATOR)
			rv = &a->ops;
		else if (in->kind == PT_KIND_USER_DEFINED)
			rv = &a->ud;
		else if (in->kind == PT_KIND_CUDA_RUNTIME)
			rv = &a->memory;
	}
	if (rv) {
		pt_stat_add(&rv->v[in->row].gpu, in->gpu_ns);
		if (in->outer)
			rv->v[in->row].gpu_ratio_ns += in->gpu_ns;
	}
	if (in->detail != AGG_NONE)
		pt_stat_add(&a->detail.v[in->detail].gpu, in->gpu_ns);
}

struct dkey {
	uint32_t parent;
	uint8_t is_device;
	uint64_t cpu_total, gpu_total;
	uint32_t name_id, idx;
};

/* Siblings together; op rows by CPU total desc, then device rows by GPU
 * total desc. */
static int dkey_cmp(const void *pa, const void *pb)
{
	const struct dkey *a = pa, *b = pb;
	if (a->parent != b->parent)
		return a->parent < b->parent ? -1 : 1;
	if (a->is_device != b->is_device)
		return a->is_device < b->is_device ? -1 : 1;
	if (a->cpu_total != b->cpu_total)
		return a->cpu_total > b->cpu_total ? -1 : 1;
	if (a->gpu_total != b->gpu_total)
		return a->gpu_total > b->gpu_total ? -1 : 1;
	if (a->name_id != b->name_id)
		return a->name_id < b->name_id ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Lays the op-detail rows out in pre-order: each parent before its
 * children, siblings grouped and ordered as dkey_cmp says. */
static void settle_detail(struct pt_agg *a, struct pt_table *t)
{
	size_t n = a->detail.n;
	t->n = n;
	if (!n)
		return;
	const struct pt_row *in = a->detail.v;
	struct dkey *k = pt_xmalloc(n * sizeof *k);
	for (size_t i = 0; i < n; i++)
		k[i] = (struct dkey){in[i].parent,	 in[i].is_device, in[i].cpu.total_ns,
				     in[i].gpu.total_ns, in[i].name_id,	  (uint32_t)i};
	qsort(k, n, sizeof *k, dkey_cmp);
	/* first[p]: where p's children start in k; roots sort last. */
	uint32_t *first = pt_xmalloc((n + 1) * sizeof *first);
	uint32_t *count = pt_xcalloc(n + 1, sizeof *count);
	for (size_t i = n; i-- > 0;) {
		size_t p = k[i].parent == AGG_NONE ? n : k[i].parent;
		first[p] = (uint32_t)i;
		count[p]++;
	}
	uint32_t *newidx = pt_xmalloc(n * sizeof *newidx);
	uint32_t *stack = pt_xmalloc(n * sizeof *stack);
	size_t sp = 0, out = 0;
	t->rows = pt_xmalloc(n * sizeof *t->rows);
	for (uint32_t c = count[n]; c-- > 0;)
		stack[sp++] = k[first[n] + c].idx;
	while (sp) {
		uint32_t r = stack[--sp];
		newidx[r] = (uint32_t)out;
		t->rows[out] = in[r];
		if (in[r].parent != AGG_NONE)
			t->rows[out].parent = newidx[in[r].parent];
		out++;
		for (uint32_t c = count[r]; c-- > 0;)
			stack[sp++] = k[first[r] + c].idx;
	}
	t->n = out;
	for (size_t i = 0; i < out; i++)
		t->rows[i].gpu_ratio_ns = t->rows[i].gpu.total_ns;
	free(k);
	free(first);
	free(count);
	free(newidx);
	free(stack);
}

/* Union of list slot ls over every track (device tracks only when
 * dev >= 0, and only that device's), cut to clip when it is non-NULL. */
static uint64_t union_cut(struct pt_agg *a, int ls, int dev_only, int32_t dev,
			  const struct ivl_list *clip, struct ivl_list *out)
{
	struct ivl_list **lists = pt_xmalloc((a->ntracks ? a->ntracks : 1) * sizeof *lists);
	size_t k = 0;
	for (size_t i = 0; i < a->ntracks; i++) {
		struct track_state *ts = &a->tracks[i];
		if (!ts->used || (dev_only && (!ts->is_device || ts->device != dev)))
			continue;
		struct ivl_list *l = ts_list(ts, ls);
		if (l && l->n)
			lists[k++] = l;
	}
	uint64_t total = ivl_union_clip(lists, k, clip, out);
	free(lists);
	return total;
}

static uint64_t union_of(struct pt_agg *a, int ls, int dev_only, int32_t dev, struct ivl_list *out)
{
	return union_cut(a, ls, dev_only, dev, NULL, out);
}

/* The merged intervals of list slot ls over every track, cut to the
 * steps' union when steps is non-NULL; the result (a merged list) goes to
 * out when out is non-NULL. Returns its length. */
static uint64_t union_in(struct pt_agg *a, int ls, const struct ivl_list *steps,
			 struct ivl_list *out)
{
	return union_cut(a, ls, 0, 0, steps, out);
}

/*
 * agg_fold's part: the unions before upto become lengths (whole, and cut
 * to the steps' union before upto, which is final too), and every list
 * keeps only what lies from upto on. Unions are additive over time, so
 * settle_overview adds the folded lengths to the rest's.
 */
void agg_fold_unions(struct pt_agg *a, uint64_t upto)
{
	struct agg_folded *f = &a->fold;
	if (!upto)
		return;
	struct ivl_list below = {0}, steps_b = {0};
	ivl_add(&below, 0, upto);
	union_cut(a, PT_KIND_PROFILE_STEP, 0, 0, &below, &steps_b);
	struct ivl_list keep_all[3], keep_clip[3]; /* comm, host comm, kernels */
	memset(keep_all, 0, sizeof keep_all);
	memset(keep_clip, 0, sizeof keep_clip);
	for (int k = 0; k < LS__COUNT; k++) {
		if (k == PT_KIND_INSTANT || k == PT_KIND_COUNTER || k == LS_BUSY)
			continue;
		int keep = k == PT_KIND_COMMUNICATION ? 0 : k == LS_HOSTCOMM ? 1 : k == PT_KIND_KERNEL ? 2 : -1;
		struct ivl_list o1 = {0}, o2 = {0};
		f->all[k] += union_cut(a, k, 0, 0, &below, &o1);
		f->clip[k] += union_cut(a, k, 0, 0, &steps_b, &o2);
		f->nonempty_all[k] |= o1.n > 0;
		f->nonempty_clip[k] |= o2.n > 0;
		if (keep >= 0) {
			keep_all[keep] = o1;
			keep_clip[keep] = o2;
		} else {
			ivl_free(&o1);
			ivl_free(&o2);
		}
	}
	for (int h = 0; h < 2; h++) {
		f->overlap[h][0] += ivl_intersect_len(&keep_all[h], &keep_all[2]);
		f->overlap[h][1] += ivl_intersect_len(&keep_clip[h], &keep_clip[2]);
	}
	for (int i = 0; i < 3; i++) {
		ivl_free(&keep_all[i]);
		ivl_free(&keep_clip[i]);
	}
	if (f->ndev_busy < a->ndevs) {
		f->dev_busy = pt_xrealloc(f->dev_busy, a->ndevs * sizeof *f->dev_busy);
		memset(f->dev_busy + f->ndev_busy, 0, (a->ndevs - f->ndev_busy) * sizeof *f->dev_busy);
		f->ndev_busy = a->ndevs;
	}
	for (size_t i = 0; i < a->ndevs; i++)
		f->dev_busy[i] += union_cut(a, LS_BUSY, 1, a->devs[i].device, &below, NULL);
	for (size_t i = 0; i < a->ntracks; i++)
		for (int k = 0; k < a->tracks[i].nl; k++)
			ivl_cut_before(&a->tracks[i].lv[k], upto);
	ivl_free(&below);
	ivl_free(&steps_b);
}

/*
 * Overview and Distributed. With steps, every time is the part within the
 * steps' union and every share is of that union, so work outside the steps
 * (kernels still running after the last step, collectives of other threads
 * between steps) counts in neither the numerator nor the denominator.
 * Without steps, both are over the profiled span.
 */
void agg_settle_overview(struct pt_agg *a, struct pt_summary *s)
{
	const struct agg_folded *f = &a->fold;
	struct ivl_list steps_l = {0};
	uint64_t span = s->t1_ns - s->t0_ns;
	uint64_t steps_union =
	    union_of(a, PT_KIND_PROFILE_STEP, 0, 0, &steps_l) + f->all[PT_KIND_PROFILE_STEP];
	const struct ivl_list *steps = a->calls[PT_KIND_PROFILE_STEP] ? &steps_l : NULL;
	/* what agg_fold settled of slot k: cut to the steps when they are cut */
	const uint64_t *folded = steps ? f->clip : f->all;
	const uint8_t *folded_any = steps ? f->nonempty_clip : f->nonempty_all;
	int clip = steps != NULL;
	uint64_t base = steps ? steps_union : span;
	struct pt_distributed *d = &s->dist;
	d->step_ns = base;
	struct ivl_list comm = {0}, comp = {0};
	uint64_t comm_dev =
	    union_in(a, PT_KIND_COMMUNICATION, steps, &comm) + folded[PT_KIND_COMMUNICATION];
	d->comm_ns = comm_dev;
	int host = 0;
	if (!a->calls[PT_KIND_COMMUNICATION]) {
		/* No device collectives: host communication calls (nccl:,
		 * gloo, c10d annotations) stand in for them. */
		ivl_free(&comm);
		d->comm_ns = union_in(a, LS_HOSTCOMM, steps, &comm) + folded[LS_HOSTCOMM];
		d->comm_from_host = comm.n > 0 || folded_any[LS_HOSTCOMM];
		host = 1;
	}
	/* the kernels' merged list only matters against communication */
	d->comp_ns =
	    union_in(a, PT_KIND_KERNEL, steps, comm.n ? &comp : NULL) + folded[PT_KIND_KERNEL];
	d->overlap_ns = ivl_intersect_len(&comm, &comp) + f->overlap[host][clip];
	ivl_free(&comm);
	ivl_free(&comp);

	for (int kind = 0; kind < PT_KIND__COUNT; kind++) {
		s->overview[kind].calls = a->calls[kind];
		s->overview[kind].ratio_base_ns = base;
		if (kind == PT_KIND_INSTANT || kind == PT_KIND_COUNTER)
			continue;
		/* Overlaps counted once: merged across threads / streams
		 * (kernels and collectives: the unions just taken) */
		if (kind == PT_KIND_KERNEL)
			s->overview[kind].union_ns = d->comp_ns;
		else if (kind == PT_KIND_COMMUNICATION)
			s->overview[kind].union_ns = comm_dev;
		else
			s->overview[kind].union_ns = union_in(a, kind, steps, NULL) + folded[kind];
	}

	/* msprof's Overlap Analysis, cut to the same window */
	for (size_t i = 0; i < a->ntracks; i++)
		if (a->tracks[i].used && a->tracks[i].derived &&
		    (ts_list(&a->tracks[i], LS_VCOMP) || ts_list(&a->tracks[i], LS_VCOMM)))
			d->has_vendor = 1;
	if (d->has_vendor) {
		d->vendor_comp_ns = union_in(a, LS_VCOMP, steps, NULL) + folded[LS_VCOMP];
		d->vendor_comm_ns = union_in(a, LS_VCOMM, steps, NULL) + folded[LS_VCOMM];
		d->vendor_exposed_ns = union_in(a, LS_VEXPOSED, steps, NULL) + folded[LS_VEXPOSED];
	}
	ivl_free(&steps_l);
}

uint64_t agg_device_busy(struct pt_agg *a, int32_t device)
{
	return union_of(a, LS_BUSY, 1, device, NULL);
}

void agg_settle_devices(struct pt_agg *a, struct pt_summary *s, const struct agg_busy *pre,
			size_t npre)
{
	const struct agg_folded *f = &a->fold;
	s->ndevices = a->ndevs;
	s->devices = a->ndevs ? pt_xcalloc(a->ndevs, sizeof *s->devices) : NULL;
	for (size_t i = 0; i < a->ndevs; i++) {
		struct pt_device_row *r = &s->devices[i];
		const struct dev_acc *da = &a->devs[i];
		r->device = da->device;
		/* Busy = kernels and collectives merged across the streams. */
		uint64_t busy = 0;
		if (pre) {
			for (size_t k = 0; k < npre; k++)
				if (pre[k].device == da->device)
					busy = pre[k].busy_ns;
		} else {
			busy = agg_device_busy(a, da->device);
		}
		r->busy_ns = busy + (i < f->ndev_busy ? f->dev_busy[i] : 0);
		r->span_ns = s->t1_ns - s->t0_ns;
		r->util_pct = r->span_ns ? 100.0 * (double)r->busy_ns / (double)r->span_ns : 0.0;
		r->kernels = da->kernels;
		r->memcpys = da->memcpys;
		r->memsets = da->memsets;
		r->memcpy_bytes = da->memcpy_bytes;
	}
	/* Devices in id order. */
	for (size_t i = 1; i < s->ndevices; i++)
		for (size_t j = i; j > 0 && s->devices[j - 1].device > s->devices[j].device; j--) {
			struct pt_device_row tmp = s->devices[j];
			s->devices[j] = s->devices[j - 1];
			s->devices[j - 1] = tmp;
		}
}

void agg_settle_tables(struct pt_agg *a, struct pt_summary *s)
{
	settle_instances(a);

	/* The CPU ratios of the memory-call and user-defined tables are shares
	 * of the wall time of the threads that recorded such rows (the
	 * profiled span times their number): work spread over four loader
	 * threads is a share of four threads' time, never above 100%. */
	uint64_t span = s->t1_ns - s->t0_ns;
	uint32_t ud_threads = 0, mem_threads = 0;
	for (size_t i = 0; i < a->ntracks; i++) {
		ud_threads += a->tracks[i].has_ud;
		mem_threads += a->tracks[i].has_mem;
	}

	table_from(&s->operators, &a->ops);
	/* Top-level operator instances only, so top-level ratios sum to 100%. */
	s->operators.cpu_base_ns = a->op_top_cpu_ns;
	s->operators.gpu_base_ns = a->device_total_ns;

	settle_detail(a, &s->op_detail);
	s->op_detail.cpu_base_ns = a->op_top_cpu_ns;
	s->op_detail.gpu_base_ns = a->device_total_ns;

	table_from(&s->kernels, &a->kernels);
	s->kernels.gpu_base_ns = a->kernel_total_ns;

	table_from(&s->memory, &a->memory);
	s->memory.cpu_base_ns = span * mem_threads;
	s->memory.gpu_base_ns = a->device_total_ns;
	s->memory.threads = mem_threads;

	table_from(&s->user_defined, &a->ud);
	s->user_defined.cpu_base_ns = span * ud_threads;
	s->user_defined.gpu_base_ns = a->device_total_ns;
	s->user_defined.threads = ud_threads;
}
