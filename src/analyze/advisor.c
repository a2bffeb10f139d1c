/*
 * advisor.c - the advisor's rules (pt_advise): each reads figures of one
 * summarized window (summary, per-rank figures, scan facts), compares one
 * measure with its named threshold, and when it fires writes the evidence
 * with the numbers it used and a concrete suggestion. Rules look only at
 * the window they are given, so the TUI's "last 10 steps" advice follows
 * the run as it changes. Thresholds and their defaults are documented in
 * advisor.h and docs/advisor.md; the test fixtures pin them.
 * Formatting of the Advice section and the JSON array is advisor_out.c;
 * the scan of the host tracks is advisor_scan.c; gathering a trace's facts
 * for the rules (the data pipeline, the scan beside the summary) is
 * advisor_trace.c.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/advisor.h"
#include "proftop/agg.h"
#include "proftop/colls.h"
#include "proftop/datapipe.h"
#include "proftop/store.h"
#include "model/util.h"

#define NAME_COLS 60 /* an operator name in the evidence, escaped and cut */

static const char *const key_names[PT_ADV__COUNT] = {
    "input_bound",     "gpu_starved", "sync",	     "comm_bound",
    "memcpy_pageable", "straggler",   "step_jitter", "data_pipeline",
    "recompile",       "hang",
};

const char *pt_advice_key_name(enum pt_advice_key k)
{
	return (unsigned)k < PT_ADV__COUNT ? key_names[k] : "?";
}

const char *pt_advice_severity_name(enum pt_advice_severity s)
{
	return s == PT_ADV_CRITICAL ? "critical" : "warning";
}

void pt_advisor_opts_init(struct pt_advisor_opts *o)
{
	memset(o, 0, sizeof *o);
	o->input_ratio_pct = 20.0;
	o->gpu_util_low_pct = 40.0;
	o->launch_share_pct = 10.0;
	o->host_fwd_ratio = 2.0;
	o->gpu_min_kernels = 20;
	o->sync_share_pct = 5.0;
	o->comm_share_pct = 20.0;
	o->comm_overlap_low_pct = 50.0;
	o->pageable_share_pct = 5.0;
	o->straggler_spread = 1.2;
	o->jitter_ratio = 1.5;
	o->jitter_min_steps = 5;
	o->jitter_min_slow = 2;
	o->data_empty_pct = 50.0;
	o->data_busy_pct = 80.0;
	o->data_idle_pct = 50.0;
	o->data_full_pct = 10.0;
	o->recompile_step_pct = 10.0;
	o->recompile_min = 2;
	o->critical_factor = 2.0;
}

/* ---- helpers ---- */

struct ctx {
	const struct pt_trace *t;
	const struct pt_summary *s;
	const struct pt_ranks *r;
	const struct pt_advisor_facts *f;
	const struct pt_advisor_opts *o;
	struct pt_advice_list *out;
	uint64_t step_ns; /* ProfileStep CPU total, else the span */
};

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? (double)a * 100.0 / (double)b : 0.0;
}

static double fin(double v)
{
	return isfinite(v) ? v : 0.0;
}

/* An interned name, escaped for terminals and cut to NAME_COLS. */
static void name_of(const struct ctx *c, uint32_t id, char *buf, size_t cap)
{
	const char *s = c->t && id ? pt_trace_str(c->t, id) : "?";
	pt_escape_term(buf, cap, s, strlen(s), NAME_COLS, 0);
}

static struct pt_advice *emit(struct ctx *c, enum pt_advice_key key, const char *title,
			      double value, double threshold, const char *unit, int critical)
{
	struct pt_advice *a = &c->out->v[c->out->n++];
	memset(a, 0, sizeof *a);
	a->key = key;
	a->title = title;
	a->value = fin(value);
	a->threshold = threshold;
	a->unit = unit;
	a->severity = critical ? PT_ADV_CRITICAL : PT_ADV_WARNING;
	return a;
}

static void put(char *dst, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(char *dst, const char *fmt, ...)
{
	size_t len = strlen(dst);
	if (len >= PT_ADVICE_TEXT - 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(dst + len, PT_ADVICE_TEXT - len, fmt, ap);
	va_end(ap);
}

/* "at or beyond factor times the threshold" for a high measure */
static int crit_high(const struct ctx *c, double v, double th)
{
	return v >= th * c->o->critical_factor;
}

/* for ratios that start at 1 (spread, p99/p50): the excess over 1 */
static int crit_ratio(const struct ctx *c, double v, double th)
{
	return v - 1.0 >= (th - 1.0) * c->o->critical_factor;
}

/* ---- rules ---- */

static void rule_input(struct ctx *c)
{
	const struct pt_summary *s = c->s;
	const struct pt_perf *p = &s->perf;
	double rr = p->steps ? fin(p->reader_ratio_pct) : 0.0;
	double dl = pct(s->model[PT_MS_DATALOADER].cpu.total_ns, s->model[PT_MS_STEP].cpu.total_ns);
	double v = rr > dl ? rr : dl;
	double th = c->o->input_ratio_pct;
	if (v < th || v <= 0.0)
		return;
	struct pt_advice *a =
	    emit(c, PT_ADV_INPUT_BOUND, "input-bound: steps wait for the data loader", v, th, "%",
		 crit_high(c, v, th));
	uint64_t n = p->reader.n ? p->reader.n : s->model[PT_MS_DATALOADER].calls;
	uint64_t dl_ns = p->reader.n ? p->reader.total_ns : s->model[PT_MS_DATALOADER].cpu.total_ns;
	uint64_t steps = p->batch.n ? p->batch.n : s->model[PT_MS_STEP].cpu.n;
	uint64_t step_ns = p->batch.n ? p->batch.total_ns : s->model[PT_MS_STEP].cpu.total_ns;
	put(a->evidence, "reader ratio %.2f%% (threshold %g%%): Dataloader %.2f ms per step", v, th,
	    n ? ms(dl_ns) / (double)n : 0.0);
	if (p->reader.n)
		put(a->evidence, " (max %.2f ms)", ms(p->reader.max_ns));
	put(a->evidence, " of a %.2f ms step, over %" PRIu64 " steps",
	    steps ? ms(step_ns) / (double)steps : 0.0, steps);
	if (v < 100.0)
		put(a->evidence, "; hiding it would make steps up to %.2fx faster",
		    100.0 / (100.0 - v));
	if (p->ips_avg > 0)
		put(a->evidence, " (ips %.2f %s now)", p->ips_avg,
		    p->ips_samples ? "samples/s" : "steps/s");
	/* the loader's own setting where the helper saw it (its workers' lanes) */
	char workers[96] = "0 -> 4 or more";
	if (c->f && c->f->dp_present && c->f->dp_workers)
		snprintf(workers, sizeof workers, "%zu -> %zu, while there are cores for them",
			 c->f->dp_workers, 2 * c->f->dp_workers);
	put(a->suggestion,
	    "Prepare batches in parallel with the step: raise the DataLoader's num_workers (%s), "
	    "prefetch batches ahead (prefetch_factor, a background reader), use pinned "
	    "memory (pin_memory=True) and keep decoding and augmentation out of the training loop. "
	    "Paddle's case study: reader ratio 38%% -> num_workers=4 -> 0.99%%, ips 30 -> 101 "
	    "steps/s.",
	    workers);
}

/* Kernels in the window: count and device time (communication included). */
static void kernel_totals(const struct pt_summary *s, uint64_t *n, uint64_t *ns)
{
	*n = *ns = 0;
	for (size_t i = 0; i < s->kernels.n; i++) {
		*n += s->kernels.rows[i].gpu.n;
		*ns += s->kernels.rows[i].gpu.total_ns;
	}
}

static void rule_gpu_starved(struct ctx *c)
{
	const struct pt_summary *s = c->s;
	if (!s->has_gpu || !s->ndevices)
		return;
	/* Time spent waiting for data is the input rule's: utilization is
	 * taken over the rest, so a loader-bound run does not fire both. */
	uint64_t reader_ns = s->perf.reader.total_ns;
	double best = -1.0;
	int32_t dev = 0;
	for (size_t i = 0; i < s->ndevices; i++) {
		const struct pt_device_row *d = &s->devices[i];
		if (!d->span_ns)
			continue;
		uint64_t eff = d->span_ns > reader_ns ? d->span_ns - reader_ns : d->span_ns;
		double u = pct(d->busy_ns, eff);
		if (u > 100.0)
			u = 100.0;
		if (u > best) {
			best = u;
			dev = d->device;
		}
	}
	double th = c->o->gpu_util_low_pct;
	uint64_t kn, kns;
	kernel_totals(s, &kn, &kns);
	/* a handful of kernels (a toy or a cut window) says nothing about
	 * how the GPU is fed */
	if (best < 0.0 || best >= th || kn < c->o->gpu_min_kernels)
		return;
	/* ... and the host is the reason: launches, or a Forward whose CPU
	 * time far exceeds the GPU time it launches */
	double launch = c->f && c->f->scanned ? pct(c->f->launch_ns, c->step_ns) : 0.0;
	const struct pt_model_row *fw = &s->model[PT_MS_FORWARD];
	double fwd_share = pct(fw->cpu.total_ns, c->step_ns);
	double fwd_ratio = fw->gpu.total_ns ? (double)fw->cpu.total_ns / (double)fw->gpu.total_ns
					    : (fw->cpu.total_ns ? INFINITY : 0.0);
	int by_launch = launch >= c->o->launch_share_pct;
	int by_fwd = fwd_share >= 10.0 && fwd_ratio >= c->o->host_fwd_ratio;
	if (!by_launch && !by_fwd)
		return;
	struct pt_advice *a =
	    emit(c, PT_ADV_GPU_STARVED, "GPU starved: the host cannot feed the GPU fast enough",
		 best, th, "%", best <= th / c->o->critical_factor);
	put(a->evidence, "GPU%d busy %.1f%% of the time outside the data loader (threshold %g%%)",
	    (int)dev, best, th);
	if (c->f && c->f->scanned && c->f->launch_calls)
		put(a->evidence,
		    "; kernel launches take %.1f%% of step time (%" PRIu64 " calls, %.1f us each)",
		    launch, c->f->launch_calls,
		    ms(c->f->launch_ns) * 1e3 / (double)c->f->launch_calls);
	if (fw->cpu.total_ns)
		put(a->evidence,
		    "; Forward: %.1f%% of step time on the CPU, %.2f ms CPU per %.2f ms GPU",
		    fwd_share, ms(fw->cpu.total_ns) / (double)(fw->calls ? fw->calls : 1),
		    ms(fw->gpu.total_ns) / (double)(fw->calls ? fw->calls : 1));
	if (kn) {
		put(a->evidence, "; %" PRIu64 " kernels of %.1f us on average", kn,
		    ms(kns) * 1e3 / (double)kn);
		if (s->nsteps)
			put(a->evidence, " (%.0f per step)", (double)kn / (double)s->nsteps);
	}
	put(a->suggestion,
	    "The GPU idles between many small kernels while Python and the launch path run: "
	    "capture the step with CUDA graphs (torch.cuda.graphs, torch.compile "
	    "mode=\"reduce-overhead\"), fuse small ops (torch.compile, fused optimizers such as "
	    "foreach/fused Adam), raise the batch size so each kernel does more work, and move "
	    "host-side work (Python loops, logging, data reshaping) out of the step.");
}

/* The Python call behind a synchronizing operator, when there is a common one. */
static const char *sync_hint(const char *outer, const char *inner)
{
	static const struct {
		const char *op, *hint;
	} map[] = {
	    {"aten::item", "`.item()` reads a CUDA tensor's value on the host"},
	    {"aten::_local_scalar_dense",
	     "`.item()` (or print / float() of a CUDA tensor) reads a value on the host"},
	    {"aten::is_nonzero", "`if tensor:` / `bool(tensor)` on a CUDA tensor"},
	    {"aten::nonzero",
	     "`nonzero()` or boolean-mask indexing needs the result's size on the host"},
	    {"aten::masked_select", "boolean-mask indexing needs the result's size on the host"},
	    {"aten::unique", "`unique()` needs the result's size on the host"},
	    {"aten::equal", "`torch.equal` returns a host bool"},
	    {"aten::tolist", "`.tolist()` copies to the host"},
	    {"aten::to", "`.cpu()` / `.to('cpu')` / `.numpy()` copies to the host and waits"},
	    {"aten::_to_copy", "`.cpu()` / `.to('cpu')` copies to the host and waits"},
	    {"aten::copy_", "a copy to the host (`.cpu()`, `.copy_()` into a CPU tensor) waits"},
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(outer, map[i].op))
			return map[i].hint;
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(inner, map[i].op))
			return map[i].hint;
	if (!strncmp(inner, "aten::cudnn_convolution", 23) ||
	    !strncmp(outer, "aten::cudnn_convolution", 23))
		return "cuDNN convolutions; waits inside them are usually cuDNN's algorithm search "
		       "(torch.backends.cudnn.benchmark=True), which should stop after the first "
		       "steps "
		       "of each input shape - if it goes on, the input shapes keep changing (pad "
		       "or "
		       "bucket them)";
	return NULL;
}

static void rule_sync(struct ctx *c)
{
	const struct pt_advisor_facts *f = c->f;
	if (!f || !f->scanned || !f->sync_ns || !c->step_ns)
		return;
	double v = pct(f->sync_ns, c->step_ns), th = c->o->sync_share_pct;
	if (v < th)
		return;
	/* the two costliest call sites */
	const struct pt_sync_site *top[2] = {NULL, NULL};
	for (size_t i = 0; i < f->nsites; i++) {
		const struct pt_sync_site *x = &f->sites[i];
		if (!top[0] || x->ns > top[0]->ns) {
			top[1] = top[0];
			top[0] = x;
		} else if (!top[1] || x->ns > top[1]->ns) {
			top[1] = x;
		}
	}
	struct pt_advice *a = emit(c, PT_ADV_SYNC, "synchronization: the host waits for the GPU", v,
				   th, "%", crit_high(c, v, th));
	put(a->evidence,
	    "synchronizing calls take %.1f%% of step time (threshold %g%%): %.2f ms in %" PRIu64
	    " calls",
	    v, th, ms(f->sync_ns), f->sync_calls);
	if (c->s->nsteps)
		put(a->evidence, ", %.2f ms per step", ms(f->sync_ns) / (double)c->s->nsteps);
	const char *hint = NULL;
	for (int k = 0; k < 2 && top[k]; k++) {
		char call[96], outer[128], inner[128];
		name_of(c, top[k]->call, call, sizeof call);
		put(a->evidence, k ? "; then %s" : "; most in %s", call);
		if (top[k]->outer_op) {
			name_of(c, top[k]->outer_op, outer, sizeof outer);
			name_of(c, top[k]->inner_op, inner, sizeof inner);
			if (top[k]->inner_op != top[k]->outer_op)
				put(a->evidence, " issued by %s > %s", outer, inner);
			else
				put(a->evidence, " issued by %s", outer);
			if (!k && c->t)
				hint = sync_hint(pt_trace_str(c->t, top[k]->outer_op),
						 pt_trace_str(c->t, top[k]->inner_op));
			if (!k && !hint) {
				put(a->suggestion, "The costliest waits come from %s. ", outer);
			}
		} else {
			put(a->evidence, " outside any operator");
			if (!k)
				hint =
				    "an explicit synchronize (torch.cuda.synchronize(), a blocking "
				    "cudaMemcpy) outside any operator";
		}
		put(a->evidence, " (%" PRIu64 " calls, %.2f ms)", top[k]->calls, ms(top[k]->ns));
	}
	if (hint)
		put(a->suggestion, "Most waits come from %s. ", hint);
	put(a->suggestion,
	    "Each one stalls the host until the GPU drains its queue, so the next kernels are "
	    "launched late: keep values on the GPU (accumulate loss and metrics as tensors, read "
	    "them every N steps), avoid .item() / .cpu() / print of CUDA tensors inside the step, "
	    "copy with non_blocking=True into pinned memory, and drop explicit synchronizes "
	    "outside "
	    "timing code.");
}

static void rule_comm(struct ctx *c)
{
	const struct pt_distributed *d = &c->s->dist;
	/* host-only communication (gloo, no device activity) has no
	 * computation to overlap with: the overlap is not measurable */
	if (!d->comm_ns || d->comm_from_host || !d->step_ns)
		return;
	double share = pct(d->comm_ns, d->step_ns), ov = pct(d->overlap_ns, d->comm_ns);
	double th = c->o->comm_share_pct;
	if (share < th || ov >= c->o->comm_overlap_low_pct)
		return;
	struct pt_advice *a = emit(c, PT_ADV_COMM_BOUND,
				   "communication-bound: collectives are not hidden behind compute",
				   share, th, "%", crit_high(c, share, th));
	uint64_t exposed = d->comm_ns > d->overlap_ns ? d->comm_ns - d->overlap_ns : 0;
	put(a->evidence,
	    "communication %.1f%% of step time (threshold %g%%): %.2f ms of %.2f ms, only %.1f%% "
	    "of it overlapped with computation (threshold %g%%), %.1f%% of step time exposed",
	    share, th, ms(d->comm_ns), ms(d->step_ns), ov, c->o->comm_overlap_low_pct,
	    pct(exposed, d->step_ns));
	put(a->suggestion,
	    "Overlap the gradient all-reduce with the backward pass: tune DDP's bucket_cap_mb "
	    "(default 25; larger buckets mean fewer, bigger collectives, smaller ones start "
	    "sooner), set gradient_as_bucket_view=True, avoid find_unused_parameters=True unless "
	    "needed, use no_sync() while accumulating gradients; with FSDP enable backward and "
	    "forward prefetch. If the collectives themselves are slow, check the interconnect "
	    "(NCCL_DEBUG=INFO) and consider gradient compression or a larger per-GPU batch.");
}

static void rule_pageable(struct ctx *c)
{
	const struct pt_table *m = &c->s->memory;
	uint64_t ns = 0, calls = 0;
	const struct pt_row *top[2] = {NULL, NULL};
	for (size_t i = 0; i < m->n; i++) {
		const struct pt_row *r = &m->rows[i];
		if (!r->is_device || !c->t)
			continue;
		/* Kineto names the host side: "Memcpy HtoD (Pageable -> Device)",
		 * "Memcpy DtoH (Device -> Pageable)" */
		if (!strstr(pt_trace_str(c->t, r->name_id), "Pageable"))
			continue;
		ns += r->gpu.total_ns;
		calls += r->gpu.n;
		if (!top[0] || r->gpu.total_ns > top[0]->gpu.total_ns) {
			top[1] = top[0];
			top[0] = r;
		} else if (!top[1] || r->gpu.total_ns > top[1]->gpu.total_ns) {
			top[1] = r;
		}
	}
	double v = pct(ns, c->step_ns), th = c->o->pageable_share_pct;
	if (!ns || v < th)
		return;
	struct pt_advice *a =
	    emit(c, PT_ADV_MEMCPY_PAGEABLE, "memcpy-heavy: copies go through pageable host memory",
		 v, th, "%", crit_high(c, v, th));
	put(a->evidence,
	    "copies to or from pageable host memory take %.1f%% of step time (threshold %g%%): "
	    "%.2f ms of device time in %" PRIu64 " copies",
	    v, th, ms(ns), calls);
	for (int k = 0; k < 2 && top[k]; k++) {
		char nm[96];
		name_of(c, top[k]->name_id, nm, sizeof nm);
		put(a->evidence, "%s%s %.2f ms / %" PRIu64, k ? ", " : "; ", nm,
		    ms(top[k]->gpu.total_ns), top[k]->gpu.n);
	}
	put(a->suggestion,
	    "Copy from page-locked memory: DataLoader(pin_memory=True) or tensor.pin_memory(), "
	    "then "
	    ".to(device, non_blocking=True), so the copy runs asynchronously at full bus speed "
	    "and overlaps compute; a pageable copy is staged through a bounce buffer and blocks "
	    "the "
	    "host. For results read back every step, copy into a preallocated pinned buffer.");
}

/* With collectives: the rank the others wait for, and the hang (colls.h). */
static int rule_collectives(struct ctx *c)
{
	const struct pt_trace *t = c->t;
	if (!t || !t->colls.n)
		return 0;
	struct pt_coll_stats cs;
	struct pt_straggler sg;
	pt_coll_stats_compute(t, 0, t->last_ns, c->o->hang_after_ns, &cs);
	pt_straggler_find(c->r, &cs, &sg);
	if (cs.hang.active) {
		struct pt_advice *a =
		    emit(c, PT_ADV_HANG, "hang: ranks wait in a collective that others never entered",
			 cs.hang.since_s, (double)(c->o->hang_after_ns ? c->o->hang_after_ns
								   : PT_HANG_AFTER_DEFAULT_NS) / 1e9,
			 "s", 1);
		char line[PT_ADVICE_TEXT];
		pt_coll_hang_line(&cs.hang, line, sizeof line);
		put(a->evidence, "%s", line);
		put(a->suggestion,
		    "Look at what the missing ranks are doing (their open ranges above; py-spy dump "
		    "--pid on each): a rank stuck in its data loading or in a branch the others did not "
		    "take (an early exit, a different number of batches per rank, a collective inside "
		    "an if) leaves the others waiting until the process group's timeout. A rank that "
		    "died leaves them waiting on a dead peer: restart the job.");
	}
	int named = 0;
	if (sg.valid && sg.by_collectives && c->r) {
		struct pt_advice *a =
		    emit(c, PT_ADV_STRAGGLER, "straggler rank: one rank holds the others back",
			 sg.late_ms_avg, 0, "ms", 100 * sg.last_share >= 90);
		put(a->evidence, "%s", sg.reason);
		put(a->suggestion,
		    "Every collective waits for the last rank, so the job runs at its pace: make that "
		    "rank's longer phase cheaper (its data loading: more workers, faster storage; its "
		    "compute: host contention, CPU affinity, a throttled GPU), or balance the work "
		    "between ranks (uneven shards, sequence lengths).");
		named = 1;
	}
	pt_coll_stats_free(&cs);
	return named;
}

static void rule_straggler(struct ctx *c)
{
	const struct pt_ranks *r = c->r;
	if (rule_collectives(c))
		return; /* the collectives named it, with why */
	if (!r || r->n < 2 || r->spread <= 0.0 || r->median_step_ms <= 0.0)
		return;
	double th = c->o->straggler_spread;
	if (r->spread < th)
		return;
	const struct pt_rank_stat *sl = &r->r[r->slowest];
	size_t with_steps = 0;
	for (size_t i = 0; i < r->n; i++)
		with_steps += r->r[i].steps > 0;
	struct pt_advice *a =
	    emit(c, PT_ADV_STRAGGLER, "straggler rank: one rank holds the others back", r->spread,
		 th, "x", crit_ratio(c, r->spread, th));
	char host[80] = "";
	if (sl->host[0])
		snprintf(host, sizeof host, " on %s", sl->host);
	put(a->evidence,
	    "%s%s: step %.2f ms vs the median %.2f ms of %zu ranks (%.2fx, threshold %.2fx); its "
	    "reader ratio %.1f%%",
	    sl->name, host, sl->step_avg_ms, r->median_step_ms, with_steps, r->spread, th,
	    sl->reader_ratio * 100.0);
	if (sl->gpu_util_pct >= 0)
		put(a->evidence, ", GPU %.1f%%", sl->gpu_util_pct);
	if (sl->comm_share > 0)
		put(a->evidence, ", communication %.1f%% of its step", sl->comm_share * 100.0);
	put(a->suggestion,
	    "Every collective waits for the slowest rank, so the job runs at its pace. Compare it "
	    "with the others (proftop view: r filters to one rank): a higher reader ratio points "
	    "at "
	    "its input pipeline or storage, lower GPU utilization at host contention (other "
	    "processes, CPU affinity, NUMA) or a throttled GPU (nvidia-smi -q -d PERFORMANCE), "
	    "and uneven shards or sequence lengths at the sampler (balance or bucket them).");
}

/* Jitter figures of one summary's steps (jit.v = 0 when too few steps). */
struct jitter {
	double v;
	uint64_t p50, p99;
	size_t n, nslow;
	const struct pt_step *slowest;
};

static struct jitter jitter_of(const struct ctx *c, const struct pt_summary *s)
{
	struct jitter j = {0};
	size_t n = 0, slow = SIZE_MAX;
	uint64_t *d = pt_xmalloc((s->nsteps ? s->nsteps : 1) * sizeof *d);
	/* The window's first step is left out once there are enough: after
	 * a start it is the warm-up step (allocator, autotuning, the loader
	 * filling its queue), which says nothing about steady-state jitter. */
	size_t from = s->nsteps > c->o->jitter_min_steps ? 1 : 0;
	for (size_t i = from; i < s->nsteps; i++) {
		if (!s->steps[i].dur_ns)
			continue;
		if (s->perf.compile_left_out && s->steps[i].compile_ns)
			continue; /* torch.compile's steps: the recompile rule's */
		if (slow == SIZE_MAX)
			slow = i;
		d[n++] = s->steps[i].dur_ns;
		if (s->steps[i].dur_ns > s->steps[slow].dur_ns)
			slow = i;
	}
	if (n < c->o->jitter_min_steps || n < 2)
		goto out;
	qsort(d, n, sizeof *d, pt_u64_cmp);
	j.p50 = pt_pct_nearest(d, n, 50);
	j.p99 = pt_pct_nearest(d, n, 99);
	j.v = j.p50 ? (double)j.p99 / (double)j.p50 : 0.0;
	j.n = n;
	j.slowest = &s->steps[slow];
	/* one slow step is not jitter: an outlier (and often what is left
	 * of the warm-up) */
	for (size_t i = 0; i < n; i++)
		j.nslow += (double)d[i] >= c->o->jitter_ratio * (double)j.p50;
out:
	free(d);
	return j;
}

static void rule_jitter(struct ctx *c)
{
	/* With several ranks each rank's steps are judged apart: merged, a
	 * slow rank's steps would read as jitter (that is the straggler rule). */
	struct jitter j = {0};
	const char *who = NULL;
	if (c->r) {
		for (size_t i = 0; i < c->r->n; i++) {
			if (!c->r->r[i].summary)
				continue;
			struct jitter x = jitter_of(c, c->r->r[i].summary);
			if (x.nslow >= c->o->jitter_min_slow && x.v > j.v) {
				j = x;
				who = c->r->r[i].name;
			}
		}
	} else {
		j = jitter_of(c, c->s);
	}
	double th = c->o->jitter_ratio;
	if (!j.slowest || j.v < th || j.nslow < c->o->jitter_min_slow)
		return;
	const struct pt_step *st = j.slowest;
	struct pt_advice *a =
	    emit(c, PT_ADV_STEP_JITTER, "step-time jitter: some steps are much slower", j.v, th,
		 "x", crit_ratio(c, j.v, th));
	if (who)
		put(a->evidence, "%s: ", who);
	put(a->evidence,
	    "p99 step %.2f ms vs p50 %.2f ms (%.2fx, threshold %.2fx) over %zu steps, %zu of them "
	    "%.2fx the median or slower; the slowest, step %" PRId64 ", took %.2f ms",
	    ms(j.p99), ms(j.p50), j.v, th, j.n, j.nslow, th, st->number, ms(st->dur_ns));
	if (st->cpu_ns[PT_MS_DATALOADER] >= 10000) /* 0.01 ms: shown as a number */
		put(a->evidence, " of which Dataloader %.2f ms", ms(st->cpu_ns[PT_MS_DATALOADER]));
	put(a->suggestion,
	    "Look at what the slow steps do (Timeline: [ and ] jump between steps). A Dataloader "
	    "time that spikes means the reader falls behind now and then (more workers, "
	    "prefetch, faster storage); otherwise suspect Python garbage collection (gc.freeze() "
	    "after setup, or gc.disable() with a periodic gc.collect()), checkpointing or "
	    "evaluation every N steps (make it asynchronous or time it apart), logging that "
	    "synchronizes, host memory pressure, or other processes competing for the CPU "
	    "(the step times of an overloaded machine scatter the same way).");
}

/* torch.compile recompiling again and again: each recompile stalls a step
 * for the compiler's time. The compiled model is named from its operator
 * ("(compiled Net)", "encoder (compiled Encoder)"). */
static void rule_recompile(struct ctx *c)
{
	const struct pt_summary *s = c->s;
	const struct pt_perf *p = &s->perf;
	size_t steps_rc = 0;
	const struct pt_step *last = NULL;
	for (size_t i = 0; i < s->nsteps; i++)
		if (s->steps[i].recompiles) {
			steps_rc++;
			last = &s->steps[i];
		}
	if (!s->nsteps || p->recompiles < c->o->recompile_min || steps_rc < c->o->recompile_min)
		return;
	double v = pct(steps_rc, s->nsteps);
	double th = c->o->recompile_step_pct;
	if (v < th)
		return;
	char model[NAME_COLS + 8] = "the compiled model";
	for (size_t i = 0; i < s->operators.n; i++) {
		const char *n = c->t ? pt_trace_str(c->t, s->operators.rows[i].name_id) : "";
		if (strstr(n, "(compiled ")) {
			name_of(c, s->operators.rows[i].name_id, model, sizeof model);
			break;
		}
	}
	struct pt_advice *a = emit(c, PT_ADV_RECOMPILE,
				   "torch.compile recompiles again and again", v, th, "%",
				   crit_high(c, v, th));
	put(a->evidence,
	    "model %s recompiled in %zu of %zu steps (%.1f%%, threshold %.0f%%): %" PRIu64
	    " recompiles, %.2f s compiling in all; the last in step %" PRId64 " (%.2f ms)",
	    model, steps_rc, s->nsteps, v, th, p->recompiles, (double)p->compile_ns / 1e9,
	    last->number, ms(last->dur_ns));
	put(a->suggestion,
	    "Its guards keep failing: see why with TORCH_LOGS=recompiles. Shapes that change "
	    "(the last batch, sequence lengths) want dynamic=True or padding to a few sizes; "
	    "Python values read in forward (a step counter, a flag) become constants each "
	    "compile: pass them as tensors. torch._dynamo.config.cache_size_limit caps the "
	    "recompiles, after which the frame runs eagerly.");
}

/* The data pipeline: which part of making batches keeps the training waiting. */
static void stage_name(const struct ctx *c, uint32_t id, char *buf, size_t cap)
{
	const char *s = c->t && id ? pt_trace_str(c->t, id) : "?";
	size_t skip = strlen(PT_DP_PREFIX);
	if (strncmp(s, PT_DP_PREFIX, skip) == 0)
		s += skip;
	pt_escape_term(buf, cap, s, strlen(s), NAME_COLS, 0);
}

static void rule_data(struct ctx *c)
{
	const struct pt_advisor_facts *f = c->f;
	if (!f || !f->dp_present)
		return;
	const struct pt_perf *p = &c->s->perf;
	double rr = p->steps ? fin(p->reader_ratio_pct) : 0.0;
	char slow[NAME_COLS * 4 + 8] = "";
	if (f->dp_slowest)
		stage_name(c, f->dp_slowest, slow, sizeof slow);
	const struct pt_advisor_opts *o = c->o;
	struct pt_advice *a;
	int empty = f->dp_queue_samples && f->dp_empty_pct >= o->data_empty_pct;
	/* saturated: busy workers, and the training finds the queue empty or
	 * waits for it (two workers finishing together leave a batch for every
	 * other fetch, yet each waits) */
	int sat = f->dp_queue_samples && f->dp_workers &&
		  f->dp_workers_busy_pct >= o->data_busy_pct && (empty || rr >= o->input_ratio_pct);
	int idle = empty && f->dp_workers && f->dp_workers_busy_pct < o->data_idle_pct;
	if (sat || idle) {
		a = emit(c, PT_ADV_DATA_PIPELINE,
			 sat ? "data pipeline: the loader's workers are saturated"
			     : "data pipeline: the queue is empty while the workers idle",
			 sat ? f->dp_workers_busy_pct : f->dp_empty_pct,
			 sat ? o->data_busy_pct : o->data_empty_pct, "%",
			 sat ? rr >= o->input_ratio_pct * c->o->critical_factor
			     : crit_high(c, f->dp_empty_pct, o->data_empty_pct));
		put(a->evidence,
		    "%.1f%% of %" PRIu64 " fetches found the loader's queue empty (threshold %g%%), "
		    "%.2f batches ready on average",
		    f->dp_empty_pct, f->dp_queue_samples, o->data_empty_pct, f->dp_queue_mean);
		if (f->dp_capacity > 0)
			put(a->evidence, " of %.0f", f->dp_capacity);
		put(a->evidence, "; %zu worker%s busy %.1f%% of their time (%s %g%%)", f->dp_workers,
		    f->dp_workers == 1 ? "" : "s", f->dp_workers_busy_pct,
		    sat ? "saturated at" : "idle below", sat ? o->data_busy_pct : o->data_idle_pct);
		if (sat)
			put(a->evidence, "; reader ratio %.1f%%", rr);
		if (sat && f->dp_slowest)
			put(a->evidence, "; slowest stage %s: %.1f%% of their busy time, %.3f ms per sample",
			    slow, f->dp_slowest_share_pct, f->dp_slowest_per_sample_ms);
		if (sat)
			put(a->suggestion,
			    "The workers cannot keep up: add workers (num_workers %zu -> %zu, while "
			    "there are cores for them) or make %s%s cheaper (decode or augment less per "
			    "sample, cache what does not change, move it to the GPU).",
			    f->dp_workers, 2 * f->dp_workers, f->dp_slowest ? "the stage " : "the stages",
			    f->dp_slowest ? slow : "");
		else
			put(a->suggestion,
			    "The workers wait for work, not the other way round: the sampler, the "
			    "batches' hand-over or the main process is the bottleneck (a busy training "
			    "thread, a slow sampler or batch_sampler, large batches pickled between "
			    "processes). Raise prefetch_factor, use persistent_workers=True, and look at "
			    "the main thread's Dataloader time in the Timeline.");
		return;
	}
	if (f->dp_queue_samples && f->dp_empty_pct < o->data_full_pct && rr >= o->input_ratio_pct) {
		a = emit(c, PT_ADV_DATA_PIPELINE,
			 "data pipeline: batches are ready but the training still waits", rr,
			 o->input_ratio_pct, "%", crit_high(c, rr, o->input_ratio_pct));
		put(a->evidence,
		    "only %.1f%% of %" PRIu64 " fetches found the queue empty (below %g%%), %.2f "
		    "batches ready on average, yet the reader ratio is %.1f%% (threshold %g%%)",
		    f->dp_empty_pct, f->dp_queue_samples, o->data_full_pct, f->dp_queue_mean, rr,
		    o->input_ratio_pct);
		if (f->dp_pin)
			put(a->evidence, "; pin_memory %.3f ms per batch", f->dp_pin_per_batch_ms);
		put(a->suggestion,
		    "Handing a ready batch over costs the time: the transfer (pin memory, the "
		    "host-to-device copy, unpickling a large batch from a worker). Use "
		    "pin_memory=True with non_blocking copies, smaller or fewer tensors per batch, "
		    "or move the copy out of the step (a CUDA stream prefetcher).");
		return;
	}
	if (!f->dp_queue_samples && f->dp_on_training && !f->dp_workers &&
	    rr >= o->input_ratio_pct && f->dp_slowest) {
		a = emit(c, PT_ADV_DATA_PIPELINE,
			 "data pipeline: batches are made on the training thread", rr,
			 o->input_ratio_pct, "%", crit_high(c, rr, o->input_ratio_pct));
		put(a->evidence,
		    "the loader has no workers (no queue), reader ratio %.1f%% (threshold %g%%); "
		    "slowest stage %s: %.1f%% of the loading time, %.3f ms per sample",
		    rr, o->input_ratio_pct, slow, f->dp_slowest_share_pct,
		    f->dp_slowest_per_sample_ms);
		put(a->suggestion,
		    "Make batches in worker processes (num_workers 0 -> 4 or more), so %s runs "
		    "while the model trains, or make it cheaper.",
		    slow);
	}
}

void pt_advise(const struct pt_trace *t, const struct pt_summary *s, const struct pt_ranks *r,
	       const struct pt_advisor_facts *f, const struct pt_advisor_opts *o,
	       struct pt_advice_list *out)
{
	struct pt_advisor_opts defaults;
	if (!o) {
		pt_advisor_opts_init(&defaults);
		o = &defaults;
	}
	memset(out, 0, sizeof *out);
	if (!s)
		return;
	struct ctx c = {t, s, r && r->n >= 2 ? r : NULL, f, o, out, 0};
	c.step_ns = s->model[PT_MS_STEP].cpu.total_ns;
	if (!c.step_ns)
		c.step_ns = s->t1_ns > s->t0_ns ? s->t1_ns - s->t0_ns : 0;
	rule_input(&c);
	rule_gpu_starved(&c);
	rule_sync(&c);
	rule_comm(&c);
	rule_pageable(&c);
	rule_straggler(&c);
	rule_jitter(&c);
	rule_data(&c);
	rule_recompile(&c);
	/* stable: critical first, rule order within a severity */
	for (size_t i = 1; i < out->n; i++) {
		struct pt_advice x = out->v[i];
		size_t j = i;
		while (j > 0 && out->v[j - 1].severity < x.severity) {
			out->v[j] = out->v[j - 1];
			j--;
		}
		out->v[j] = x;
	}
}
