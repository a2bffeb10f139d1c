/*
 * flops_table.c - the FLOPs tables (flops.h): each operator call with FLOPs
 * found with the kernels it launched (by correlation id), the rows per
 * operator and per kernel with their achieved rates and the share of the
 * roofline of their data type, and the model FLOPs utilization per step
 * (pt_mfu_compute).
 */
#include "proftop/flops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/agg.h"
#include "model/u32map.h"
#include "model/util.h"

/* ---- rows ---- */

/* The row's time: its kernels', else (a CPU-only trace) its calls' own */
static double row_s(const struct pt_flops_row *r)
{
	uint64_t ns = r->gpu_ns ? r->gpu_ns : r->untimed ? 0 : r->cpu_ns;
	return (double)ns / 1e9;
}

double pt_flops_row_tflops(const struct pt_flops_row *r)
{
	double s = row_s(r);
	return s > 0 ? r->flops / s / 1e12 : -1;
}

double pt_flops_row_gbps(const struct pt_flops_row *r)
{
	double s = row_s(r);
	return s > 0 ? r->bytes / s / 1e9 : -1;
}

double pt_flops_row_peak_pct(const struct pt_flops_row *r, const struct pt_peak *p)
{
	if (!p)
		return -1;
	int d = (int)((unsigned)r->dtype & PT_DT_MASK);
	double peak = d < PT_DT__COUNT ? p->tflops[d] : 0;
	/* a device's roof is for device time: a rate timed on the CPU (a trace
	 * with no kernels for the row) is not a share of it */
	if (!(peak > 0) || !r->gpu_ns || pt_flops_row_tflops(r) < 0)
		return -1;
	double roof = peak;
	if (p->gbps > 0 && r->bytes > 0) {
		/* more traffic than the memory can move: the shapes overstate it
		 * (an expanded or broadcast input, data kept in cache) or the
		 * bandwidth given is wrong; either way no share of a roof holds */
		if (pt_flops_row_gbps(r) > p->gbps)
			return -2;
		double mem = r->flops / r->bytes * p->gbps / 1e3; /* intensity x bandwidth, TFLOP/s */
		if (mem < roof)
			roof = mem;
	}
	if (!(roof > 0))
		return -1;
	double pct = 100.0 * pt_flops_row_tflops(r) / roof;
	return pct > 100.0 ? -2 : pct; /* past the peak: the peak given is wrong */
}

/* ---- the tables ---- */

struct inst {
	uint32_t name_id;
	int dtype;
	double flops, bytes;
	uint64_t start_ns;
	int64_t pid;
	uint64_t cpu_ns, gpu_ns, own_gpu_ns;
	uint64_t tf32_ns; /* of own_gpu_ns, in kernels that ran fp32 math as TF32 */
	int32_t parent; /* enclosing operator with FLOPs, -1 */
};

struct kern {
	uint32_t name_id;
	uint64_t dur_ns;
	uint32_t inst;
	int tf32;
};

/* cuDNN, cuBLAS and CUTLASS kernels that run fp32 math on tensor cores as
 * TF32 say so in their names ("sm80_xmma_fprop_implicit_gemm_tf32f32_...",
 * "cutlass_80_tensorop_s1688gemm_..."); an fp32 operator run by them is
 * judged against the TF32 peak, not the CUDA cores' fp32 one. */
static int kernel_is_tf32(const char *n)
{
	return strstr(n, "tf32") || strstr(n, "TF32") || strstr(n, "tensorop_s1688") ||
	       strstr(n, "tensorop_s16816");
}

struct frame {
	uint64_t end;
	int32_t inst; /* innermost operator with FLOPs at or above this frame, -1 */
};

/* Most FLOPs first; ties by name and type class, never by name id (an id
 * depends on the order names were met: a re-read export must list the
 * rows in the same order). */
static int by_flops(const void *pa, const void *pb, void *ctx)
{
	const struct pt_flops_row *a = pa, *b = pb;
	const struct pt_trace *t = ctx;
	if (a->flops != b->flops)
		return a->flops < b->flops ? 1 : -1;
	int c = strcmp(pt_trace_str(t, a->name_id), pt_trace_str(t, b->name_id));
	if (c)
		return c;
	return (a->dtype > b->dtype) - (a->dtype < b->dtype);
}

static struct pt_flops_row *row_of(struct pt_flops_row **v, size_t *n, size_t *cap,
				   struct pt_u32map *idx, uint32_t name_id, int dtype)
{
	/* one row per name and data type class (ids stay below 2^29) */
	uint32_t key = (name_id << 3) | ((uint32_t)dtype & PT_DT_MASK);
	uint32_t i = pt_u32map_get(idx, key);
	if (i)
		return &(*v)[i - 1];
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 32;
		*v = pt_xrealloc(*v, *cap * sizeof **v);
	}
	struct pt_flops_row *r = &(*v)[(*n)++];
	memset(r, 0, sizeof *r);
	r->name_id = name_id;
	r->dtype = dtype;
	pt_u32map_put(idx, key, (uint32_t)*n);
	return r;
}

/* The operator calls with FLOPs in [t0_ns, t1_ns) and the kernels they
 * launched: what the tables and the MFU are made of. */
struct calls {
	struct inst *insts;
	size_t ninst;
	struct kern *kerns;
	size_t nk;
	int gpu_trace; /* the trace has device tracks */
};

static void calls_free(struct calls *c)
{
	free(c->insts);
	free(c->kerns);
	memset(c, 0, sizeof *c);
}

static void collect(struct pt_trace *t, uint64_t t0_ns, uint64_t t1_ns, struct calls *c)
{
	memset(c, 0, sizeof *c);
	struct inst *insts = NULL;
	size_t ninst = 0, icap = 0;
	struct pt_u32map by_corr = {0};
	struct frame *stack = NULL;
	size_t scap = 0;
	/* host tracks: operators with FLOPs, and the runtime calls inside them */
	for (uint32_t tr = 0; tr < t->ntracks; tr++) {
		if (pt_track_is_device(&t->tracks[tr]))
			continue;
		struct pt_store_iter it;
		pt_store_iter_init(&it, t->store, tr, t0_ns, t1_ns);
		size_t depth = 0;
		struct pt_event *ev;
		while ((ev = pt_store_iter_next(&it))) {
			if (ev->kind == PT_KIND_INSTANT || ev->kind == PT_KIND_COUNTER)
				continue;
			while (depth && stack[depth - 1].end <= ev->start_ns)
				depth--;
			int32_t cur = depth ? stack[depth - 1].inst : -1;
			if ((ev->flags & PT_EVF_FLOPS) && ev->kind == PT_KIND_OPERATOR) {
				if (ninst == icap) {
					icap = icap ? icap * 2 : 256;
					insts = pt_xrealloc(insts, icap * sizeof *insts);
				}
				struct inst *in = &insts[ninst];
				pt_flops_unpack(ev->arg, &in->flops, &in->bytes, &in->dtype);
				in->name_id = ev->name_id;
				in->start_ns = ev->start_ns;
				in->pid = t->tracks[tr].key.pid;
				in->cpu_ns = ev->dur_ns;
				in->gpu_ns = in->own_gpu_ns = in->tf32_ns = 0;
				in->parent = cur;
				cur = (int32_t)ninst++;
			} else if (ev->corr && cur >= 0 && ev->kind == PT_KIND_CUDA_RUNTIME) {
				pt_u32map_put(&by_corr, ev->corr, (uint32_t)cur + 1);
			}
			if (depth == scap) {
				scap = scap ? scap * 2 : 64;
				stack = pt_xrealloc(stack, scap * sizeof *stack);
			}
			stack[depth++] = (struct frame){pt_event_end(ev), cur};
		}
		pt_store_iter_done(&it);
	}
	/* device tracks: the kernels those calls launched */
	struct kern *kerns = NULL;
	size_t nk = 0, kcap = 0;
	struct pt_u32map tf32_by_name = {0}; /* kernel name id -> 2 TF32, 1 not */
	for (uint32_t tr = 0; tr < t->ntracks; tr++) {
		if (!pt_track_is_device(&t->tracks[tr]))
			continue;
		c->gpu_trace = 1;
		if (!ninst)
			break;
		struct pt_store_iter it;
		pt_store_iter_init(&it, t->store, tr, t0_ns, UINT64_MAX);
		struct pt_event *ev;
		while ((ev = pt_store_iter_next(&it))) {
			if (!ev->corr || !pt_kind_is_device((enum pt_kind)ev->kind))
				continue;
			uint32_t i = pt_u32map_get(&by_corr, ev->corr);
			if (!i)
				continue;
			if (nk == kcap) {
				kcap = kcap ? kcap * 2 : 256;
				kerns = pt_xrealloc(kerns, kcap * sizeof *kerns);
			}
			/* a memset or memcpy is the operator's device time too, but
			 * computes nothing: no FLOPs are credited to it */
			if (ev->kind == PT_KIND_KERNEL) {
				int tf = 0;
				if (insts[i - 1].dtype == PT_DT_F32) {
					uint32_t known = pt_u32map_get(&tf32_by_name, ev->name_id);
					if (!known) {
						known = kernel_is_tf32(pt_trace_str(t, ev->name_id)) ? 2 : 1;
						pt_u32map_put(&tf32_by_name, ev->name_id, known);
					}
					tf = known == 2;
				}
				kerns[nk++] = (struct kern){ev->name_id, ev->dur_ns, i - 1, tf};
				insts[i - 1].own_gpu_ns += ev->dur_ns;
				if (tf)
					insts[i - 1].tf32_ns += ev->dur_ns;
			}
			for (int32_t j = (int32_t)(i - 1); j >= 0; j = insts[j].parent)
				insts[j].gpu_ns += ev->dur_ns;
		}
		pt_store_iter_done(&it);
	}
	/* most of its kernel time in TF32 kernels: a TF32 call */
	for (size_t i = 0; i < ninst; i++) {
		struct inst *in = &insts[i];
		if (in->dtype == PT_DT_F32 && in->tf32_ns && 2 * in->tf32_ns >= in->own_gpu_ns)
			in->dtype = PT_DT_TF32;
	}
	pt_u32map_free(&by_corr);
	pt_u32map_free(&tf32_by_name);
	free(stack);
	c->insts = insts;
	c->ninst = ninst;
	c->kerns = kerns;
	c->nk = nk;
}

/* The rows per operator and per kernel of the calls in c. */
static void tables_of(struct pt_trace *t, const struct calls *cp, struct pt_flops_table *out)
{
	const struct calls c = *cp;
	const struct inst *insts = c.insts;
	size_t ocap = 0, kc = 0;
	struct pt_u32map oidx = {0}, kidx = {0};
	/* an operator that launched kernels is timed by them; one whose kernels
	 * are not in the trace (cut off at its end) would make its row's rate
	 * too high: its calls count only where no call of the row has kernels */
	for (size_t i = 0; i < c.ninst; i++) {
		const struct inst *in = &insts[i];
		struct pt_flops_row *r =
		    row_of(&out->ops, &out->nops, &ocap, &oidx, in->name_id, in->dtype);
		if (in->gpu_ns && !r->gpu_ns) { /* the first call with kernels: start over */
			r->calls = 0;
			r->flops = r->bytes = 0;
			r->cpu_ns = 0;
		}
		if (!in->gpu_ns && r->gpu_ns)
			continue;
		r->calls++;
		r->flops += in->flops;
		r->bytes += in->bytes;
		r->cpu_ns += in->cpu_ns;
		r->gpu_ns += in->gpu_ns;
		/* a GPU trace: the time of calls whose kernels are missing is not known */
		r->untimed = c.gpu_trace && !r->gpu_ns;
	}
	for (size_t i = 0; i < c.nk; i++) {
		const struct inst *in = &insts[c.kerns[i].inst];
		double share =
		    in->own_gpu_ns ? (double)c.kerns[i].dur_ns / (double)in->own_gpu_ns : 0;
		int dt = c.kerns[i].tf32 ? PT_DT_TF32 : in->dtype == PT_DT_TF32 ? PT_DT_F32 : in->dtype;
		struct pt_flops_row *r =
		    row_of(&out->kernels, &out->nkernels, &kc, &kidx, c.kerns[i].name_id, dt);
		r->calls++;
		r->flops += in->flops * share;
		r->bytes += in->bytes * share;
		r->gpu_ns += c.kerns[i].dur_ns;
	}
	out->events = c.ninst;
	if (out->nops)
		qsort_r(out->ops, out->nops, sizeof *out->ops, by_flops, (void *)t);
	if (out->nkernels)
		qsort_r(out->kernels, out->nkernels, sizeof *out->kernels, by_flops, (void *)t);
	pt_u32map_free(&oidx);
	pt_u32map_free(&kidx);
}

void pt_flops_summarize(struct pt_trace *t, uint64_t t0_ns, uint64_t t1_ns,
			struct pt_flops_table *out)
{
	memset(out, 0, sizeof *out);
	if (!t->flop_events)
		return;
	struct calls c;
	collect(t, t0_ns, t1_ns, &c);
	tables_of(t, &c, out);
	calls_free(&c);
}

/* ---- MFU ---- */

static int inst_start_cmp(const void *pa, const void *pb)
{
	const struct inst *a = pa, *b = pb;
	return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

/* The MFU of the steps from the calls in c (which it reorders). */
static int mfu_of_calls(struct pt_trace *t, struct calls *cp, const struct pt_step *steps,
			size_t nsteps, const struct pt_peak *peak, struct pt_mfu *out)
{
	struct calls c = *cp;
	/* the outermost calls only: aten::linear holds aten::addmm, and both
	 * carry the same FLOPs */
	size_t n = 0;
	for (size_t i = 0; i < c.ninst; i++)
		if (c.insts[i].parent < 0)
			c.insts[n++] = c.insts[i];
	qsort(c.insts, n, sizeof *c.insts, inst_start_cmp);
	out->per_step = pt_xcalloc(nsteps, sizeof *out->per_step);
	double by_dtype[PT_DT__COUNT] = {0}, flops = 0, secs = 0;
	for (size_t i = 0; i < nsteps; i++) {
		const struct pt_step *st = &steps[i];
		int64_t pid = t->tracks[st->track].key.pid;
		/* the first call starting in the step, by binary search */
		size_t lo = 0, hi = n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (c.insts[mid].start_ns < st->start_ns)
				lo = mid + 1;
			else
				hi = mid;
		}
		double f = 0;
		for (size_t k = lo; k < n && c.insts[k].start_ns < st->start_ns + st->dur_ns; k++) {
			const struct inst *in = &c.insts[k];
			if (in->pid != pid)
				continue; /* another rank's step covers it */
			f += in->flops;
			int d = (int)((unsigned)in->dtype & PT_DT_MASK);
			by_dtype[d < PT_DT__COUNT ? d : PT_DT_OTHER] += in->flops;
			out->covered_gpu_ns += in->gpu_ns;
		}
		out->per_step[i] = st->dur_ns ? f / ((double)st->dur_ns / 1e9) / 1e12 : 0;
		if (f > 0)
			out->steps++;
		flops += f;
		secs += (double)st->dur_ns / 1e9;
		out->step_gpu_ns += st->gpu_ns[PT_MS_STEP];
		if (i == 0 || out->per_step[i] > out->tflops_max)
			out->tflops_max = out->per_step[i];
		if (i == 0 || out->per_step[i] < out->tflops_min)
			out->tflops_min = out->per_step[i];
	}
	out->nper_step = nsteps;
	out->gpu_trace = c.gpu_trace;
	if (!(flops > 0) || !(secs > 0))
		return -1;
	out->flops_per_step = flops / (double)nsteps;
	out->tflops_avg = flops / secs / 1e12;
	int dom = PT_DT_F32;
	for (int d = 0; d < PT_DT__COUNT; d++)
		if (by_dtype[d] > by_dtype[dom])
			dom = d;
	out->dtype = dom;
	out->dtype_share_pct = 100.0 * by_dtype[dom] / flops;
	/* a peak only where one is known for what ran: the GPU a GPU trace ran
	 * on, or the one the user gave; a CPU-only trace has none of its own */
	if (peak && peak->tflops[dom] > 0 && (out->gpu_trace || peak->from_user)) {
		out->peak_tflops = peak->tflops[dom];
		double pct = 100.0 * out->tflops_avg / out->peak_tflops;
		out->mfu_pct = pct > 100.0 ? -2 : pct;
	}
	return 0;
}

int pt_mfu_compute(struct pt_trace *t, const struct pt_step *steps, size_t nsteps,
		   const struct pt_peak *peak, struct pt_mfu *out)
{
	memset(out, 0, sizeof *out);
	out->mfu_pct = -1;
	if (!t->flop_events || !nsteps)
		return -1;
	uint64_t t0 = UINT64_MAX, t1 = 0;
	for (size_t i = 0; i < nsteps; i++) {
		if (steps[i].start_ns < t0)
			t0 = steps[i].start_ns;
		if (steps[i].start_ns + steps[i].dur_ns > t1)
			t1 = steps[i].start_ns + steps[i].dur_ns;
	}
	struct calls c;
	collect(t, t0, t1, &c);
	int rc = mfu_of_calls(t, &c, steps, nsteps, peak, out);
	calls_free(&c);
	return rc;
}

int pt_flops_summarize_mfu(struct pt_trace *t, uint64_t t0_ns, uint64_t t1_ns,
			   const struct pt_step *steps, size_t nsteps, const struct pt_peak *peak,
			   struct pt_flops_table *tab, struct pt_mfu *m)
{
	memset(tab, 0, sizeof *tab);
	memset(m, 0, sizeof *m);
	m->mfu_pct = -1;
	if (!t->flop_events)
		return -1;
	struct calls c;
	collect(t, t0_ns, t1_ns, &c);
	tables_of(t, &c, tab);
	int rc = nsteps ? mfu_of_calls(t, &c, steps, nsteps, peak, m) : -1;
	calls_free(&c);
	return rc;
}

void pt_mfu_free(struct pt_mfu *m)
{
	free(m->per_step);
	memset(m, 0, sizeof *m);
}

void pt_flops_table_free(struct pt_flops_table *tab)
{
	free(tab->ops);
	free(tab->kernels);
	memset(tab, 0, sizeof *tab);
}
