/*
 * test_agg.c - the aggregator on small hand-built traces whose answers are
 * computed by hand (times in µs, asserted in ns): Overview unions across
 * threads (Paddle's "After merged" example), nesting and self time with the
 * legacy 1 µs overhang, the op-detail tree order, GPU time by correlation
 * (activity before and after its launch, unknown corr), PyTorch-style and
 * Paddle-style steps (phases, GPU per phase), the Perf Summary, step and
 * time windows, Distributed and Device figures, empty and step-less traces.
 */
#include "testutil.h"

#include <math.h>

#include "proftop/advisor.h"
#include "proftop/agg.h"

static struct pt_trace *new_trace(void)
{
	return pt_trace_new(64 << 20);
}

/* Adds an event with flags and an argument. */
static void ev_full(struct pt_trace *t, uint32_t track, enum pt_kind kind, const char *name,
		    double start_us, double dur_us, uint32_t corr, uint8_t flags, uint64_t arg)
{
	struct pt_event ev = {0};
	ev.start_ns = US(start_us);
	ev.dur_ns = US(dur_us);
	ev.name_id = pt_trace_intern(t, name, strlen(name));
	ev.track_id = track;
	ev.corr = corr;
	ev.kind = (uint8_t)kind;
	ev.flags = flags;
	ev.arg = arg;
	pt_trace_add(t, &ev);
}

static struct pt_summary *summarize_all(struct pt_trace *t)
{
	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	return pt_summarize(t, &o);
}

static const struct pt_row *find_row(struct pt_trace *t, const struct pt_table *tb,
				     const char *name, int is_device)
{
	uint32_t id = pt_strtab_find(t->strings, name, strlen(name));
	for (size_t i = 0; i < tb->n; i++)
		if (tb->rows[i].name_id == id && tb->rows[i].is_device == is_device)
			return &tb->rows[i];
	fail_msg("row %s not found", name);
	return NULL;
}

static const char *row_name(struct pt_trace *t, const struct pt_row *r)
{
	return pt_trace_str(t, r->name_id);
}

/* Paddle's Overview example: thread 1 ops [0,10) [14,20), thread 2
 * [2,12) [18,19): merged [0,12) [14,20) = 18 µs. */
static void test_overview_union_across_threads(void **state)
{
	(void)state;
	struct pt_trace *t = new_trace();
	uint32_t t1 = tu_track(t, 1, 1, -1), t2 = tu_track(t, 1, 2, -1);
	tu_ev(t, t1, PT_KIND_OPERATOR, "op", 0, 10, 0);
	tu_ev(t, t1, PT_KIND_OPERATOR, "op", 14, 6, 0);
	tu_ev(t, t2, PT_KIND_OPERATOR, "op", 2, 10, 0);
	tu_ev(t, t2, PT_KIND_OPERATOR, "op", 18, 1, 0);
	struct pt_summary *s = summarize_all(t);
	assert_int_equal(s->overview[PT_KIND_OPERATOR].calls, 4);
	assert_int_equal(s->overview[PT_KIND_OPERATOR].union_ns, US(18));
	assert_int_equal(s->events, 4);
	assert_int_equal(s->t0_ns, 0);
	assert_int_equal(s->t1_ns, US(20));
	assert_int_equal(s->operators.n, 1);
	const struct pt_row *r = find_row(t, &s->operators, "op", 0);
	assert_int_equal(r->cpu.n, 4);
	assert_int_equal(r->cpu.total_ns, US(27));
	assert_int_equal(r->cpu.max_ns, US(10));
	assert_int_equal(r->cpu.min_ns, US(1));
	assert_int_equal(r->cpu_self_ns, US(27));
	assert_int_equal(s->operators.cpu_base_ns, US(27));
	assert_int_equal(s->has_gpu, 0);
	pt_summary_free(s);
	pt_trace_free(t);
}

/*
 * A [0,100) > B [10,40) > C [15,25) > launch [16,17) -> kernel K 5 µs;
 * A > D (OperatorInner) [50,60); A [200,250) > D [205,225); E [300,400).
 */
static void test_nested_ops_and_detail_tree(void **state)
{
	(void)state;
	struct pt_trace *t = new_trace();
	uint32_t h = tu_track(t, 1, 1, -1), g = tu_track(t, 0, 7, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "A", 0, 100, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "B", 10, 30, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "C", 15, 10, 0);
	tu_ev(t, h, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", 16, 1, 1);
	tu_ev(t, h, PT_KIND_OPERATOR_INNER, "D", 50, 10, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "A", 200, 50, 0);
	tu_ev(t, h, PT_KIND_OPERATOR_INNER, "D", 205, 20, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "E", 300, 100, 0);
	tu_ev(t, g, PT_KIND_KERNEL, "K", 30, 5, 1);
	struct pt_summary *s = summarize_all(t);

	const struct pt_row *a = find_row(t, &s->operators, "A", 0);
	assert_int_equal(a->cpu.n, 2);
	assert_int_equal(a->cpu.total_ns, US(150));
	assert_int_equal(a->cpu_self_ns, US(60 + 30)); /* 100-30-10, 50-20 */
	assert_int_equal(a->gpu.n, 2);
	assert_int_equal(a->gpu.total_ns, US(5));
	assert_int_equal(a->gpu.max_ns, US(5));
	assert_int_equal(a->gpu.min_ns, 0);
	const struct pt_row *b = find_row(t, &s->operators, "B", 0);
	assert_int_equal(b->cpu_self_ns, US(20));
	assert_int_equal(b->gpu.total_ns, US(5));
	const struct pt_row *c = find_row(t, &s->operators, "C", 0);
	assert_int_equal(c->cpu_self_ns, US(9)); /* minus the runtime call */
	assert_int_equal(c->gpu.total_ns, US(5));
	assert_int_equal(s->operators.n, 4); /* A B C E; D is OperatorInner */
	assert_string_equal(row_name(t, &s->operators.rows[0]), "A"); /* CPU desc */
	assert_int_equal(s->operators.cpu_base_ns, US(250));	      /* top-level A, A, E */
	assert_int_equal(s->operators.gpu_base_ns, US(5));

	/* Overview: only top-level operators are Operator; B, C (ops inside
	 * an op) and D are OperatorInner. */
	assert_int_equal(s->overview[PT_KIND_OPERATOR].calls, 3);
	assert_int_equal(s->overview[PT_KIND_OPERATOR].union_ns, US(250));
	assert_int_equal(s->overview[PT_KIND_OPERATOR_INNER].calls, 4);
	assert_int_equal(s->overview[PT_KIND_OPERATOR_INNER].union_ns, US(30 + 10 + 20));
	assert_int_equal(s->overview[PT_KIND_KERNEL].calls, 1);

	/* Op detail, pre-order: A, B, C, [K], D, E. */
	const struct pt_table *d = &s->op_detail;
	assert_int_equal(d->n, 6);
	const char *names[] = {"A", "B", "C", "K", "D", "E"};
	const uint16_t depth[] = {0, 1, 2, 3, 1, 0};
	const uint32_t parent[] = {UINT32_MAX, 0, 1, 2, 0, UINT32_MAX};
	for (int i = 0; i < 6; i++) {
		assert_string_equal(row_name(t, &d->rows[i]), names[i]);
		assert_int_equal(d->rows[i].depth, depth[i]);
		assert_int_equal(d->rows[i].parent, parent[i]);
	}
	assert_int_equal(d->rows[3].is_device, 1);
	assert_int_equal(d->rows[3].kind, PT_KIND_KERNEL);
	assert_int_equal(d->rows[3].gpu.n, 1);
	assert_int_equal(d->rows[3].gpu.total_ns, US(5));
	assert_int_equal(d->rows[3].cpu.total_ns, 0);
	/* D under A: two calls, 30 µs */
	assert_int_equal(d->rows[4].cpu.n, 2);
	assert_int_equal(d->rows[4].cpu.total_ns, US(30));
	assert_int_equal(d->rows[4].kind, PT_KIND_OPERATOR_INNER);
	assert_int_equal(d->rows[0].cpu.total_ns, US(150));
	assert_int_equal(d->rows[0].cpu_self_ns, US(90));
	assert_int_equal(d->rows[0].gpu.total_ns, US(5));
	assert_int_equal(d->rows[1].gpu.total_ns, US(5));
	pt_summary_free(s);
	pt_trace_free(t);
}

/* Legacy exports: a child ending up to 1 µs after its parent nests; one
 * straddling further is a sibling. */
static void test_overhang_tolerance(void **state)
{
	(void)state;
	struct pt_trace *t = new_trace();
	uint32_t h = tu_track(t, 1, 1, -1);
	tu_ev(t, h, PT_KIND_OPERATOR, "P", 0, 10, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "child", 5, 5.5, 0); /* ends at 10.5 */
	tu_ev(t, h, PT_KIND_OPERATOR, "Q", 20, 10, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "X", 25, 15, 0); /* ends 40: straddles Q */
	struct pt_summary *s = summarize_all(t);
	assert_int_equal(find_row(t, &s->operators, "P", 0)->cpu_self_ns, US(4.5));
	assert_int_equal(find_row(t, &s->operators, "Q", 0)->cpu_self_ns, US(10));
	assert_int_equal(find_row(t, &s->operators, "X", 0)->cpu_self_ns, US(15));
	assert_int_equal(s->overview[PT_KIND_OPERATOR].calls, 3); /* P Q X */
	assert_int_equal(s->overview[PT_KIND_OPERATOR_INNER].calls, 1);
	assert_int_equal(s->overview[PT_KIND_OPERATOR].union_ns, US(10 + 20));
	assert_int_equal(s->operators.cpu_base_ns, US(10 + 10 + 15));
	pt_summary_free(s);
	pt_trace_free(t);
}

/*
 * Outer [0,100) > Inner [10,50) > launch corr 7 [20,22) -> K1 10 µs;
 * Outer > launch corr 8 [60,62) -> K2 4 µs; Outer > cudaMemcpyAsync corr 9
 * [70,72) -> memcpy 2 µs (1024 bytes, another stream); K3 corr 99 (never
 * launched) 3 µs; K4 no corr 1 µs.
 */
static struct pt_trace *corr_trace(void)
{
	struct pt_trace *t = new_trace();
	uint32_t h = tu_track(t, 1, 1, -1);
	uint32_t s7 = tu_track(t, 0, 7, 0), s8 = tu_track(t, 0, 8, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "Outer", 0, 100, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "Inner", 10, 40, 0);
	tu_ev(t, h, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", 20, 2, 7);
	tu_ev(t, h, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", 60, 2, 8);
	tu_ev(t, h, PT_KIND_CUDA_RUNTIME, "cudaMemcpyAsync", 70, 2, 9);
	tu_ev(t, s7, PT_KIND_KERNEL, "K1", 30, 10, 7);
	tu_ev(t, s7, PT_KIND_KERNEL, "K2", 65, 4, 8);
	ev_full(t, s8, PT_KIND_MEMCPY, "Memcpy HtoD", 80, 2, 9, 0, 1024);
	tu_ev(t, s7, PT_KIND_KERNEL, "K3", 90, 3, 99);
	tu_ev(t, s7, PT_KIND_KERNEL, "K4", 95, 1, 0);
	return t;
}

static void check_corr_summary(struct pt_trace *t, struct pt_summary *s)
{
	const struct pt_row *outer = find_row(t, &s->operators, "Outer", 0);
	assert_int_equal(outer->gpu.n, 1);
	assert_int_equal(outer->gpu.total_ns, US(16));
	const struct pt_row *inner = find_row(t, &s->operators, "Inner", 0);
	assert_int_equal(inner->gpu.total_ns, US(10));
	assert_int_equal(s->operators.gpu_base_ns, US(20));

	assert_int_equal(s->kernels.n, 4);
	assert_string_equal(row_name(t, &s->kernels.rows[0]), "K1"); /* GPU desc */
	assert_int_equal(s->kernels.rows[0].is_device, 1);
	assert_int_equal(find_row(t, &s->kernels, "K3", 1)->gpu.total_ns, US(3));
	assert_int_equal(s->kernels.gpu_base_ns, US(18));

	assert_int_equal(s->memory.n, 2);
	const struct pt_row *mh = find_row(t, &s->memory, "cudaMemcpyAsync", 0);
	assert_int_equal(mh->cpu.total_ns, US(2));
	assert_int_equal(mh->gpu.n, 1);
	assert_int_equal(mh->gpu.total_ns, US(2));
	const struct pt_row *md = find_row(t, &s->memory, "Memcpy HtoD", 1);
	assert_int_equal(md->gpu.total_ns, US(2));
	assert_int_equal(md->kind, PT_KIND_MEMCPY);

	/* detail: Outer, Inner, K1, K2, Memcpy */
	const struct pt_table *d = &s->op_detail;
	assert_int_equal(d->n, 5);
	const char *names[] = {"Outer", "Inner", "K1", "K2", "Memcpy HtoD"};
	const uint32_t parent[] = {UINT32_MAX, 0, 1, 0, 0};
	for (int i = 0; i < 5; i++) {
		assert_string_equal(row_name(t, &d->rows[i]), names[i]);
		assert_int_equal(d->rows[i].parent, parent[i]);
	}

	assert_int_equal(s->ndevices, 1);
	assert_int_equal(s->devices[0].device, 0);
	assert_int_equal(s->devices[0].kernels, 4);
	assert_int_equal(s->devices[0].memcpys, 1);
	assert_int_equal(s->devices[0].memcpy_bytes, 1024);
	assert_int_equal(s->devices[0].busy_ns, US(18));
	assert_int_equal(s->devices[0].span_ns, US(100));
	assert_true(s->devices[0].util_pct > 17.999 && s->devices[0].util_pct < 18.001);
	assert_int_equal(s->has_gpu, 1);
	assert_int_equal(s->overview[PT_KIND_MEMCPY].union_ns, US(2));
}

static void test_gpu_by_correlation(void **state)
{
	(void)state;
	struct pt_trace *t = corr_trace();
	struct pt_summary *s = summarize_all(t);
	check_corr_summary(t, s);
	pt_summary_free(s);
	pt_trace_free(t);
}

/* Same trace, device tracks fed before the host: pending activities are
 * resolved at finish and every figure matches. */
static void test_gpu_activity_before_launch(void **state)
{
	(void)state;
	struct pt_trace *t = corr_trace();
	pt_store_sort(t->store);
	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	struct pt_agg *a = pt_agg_new(t, &o);
	for (int pass = 1; pass >= 0; pass--)
		for (uint32_t i = 0; i < t->ntracks; i++) {
			if (pt_track_is_device(&t->tracks[i]) != pass)
				continue;
			struct pt_store_iter it;
			pt_store_iter_init(&it, t->store, i, 0, UINT64_MAX);
			struct pt_event *ev;
			while ((ev = pt_store_iter_next(&it)))
				pt_agg_feed(a, ev);
			pt_store_iter_done(&it);
		}
	struct pt_summary *s = pt_agg_finish(a);
	check_corr_summary(t, s);
	pt_summary_free(s);
	pt_trace_free(t);
}

/* User annotations: CPU, self and the GPU time launched inside. */
static void test_user_defined(void **state)
{
	(void)state;
	struct pt_trace *t = new_trace();
	uint32_t h = tu_track(t, 1, 1, -1), g = tu_track(t, 0, 7, 0);
	tu_ev(t, h, PT_KIND_USER_DEFINED, "MyRecord", 0, 10, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "op", 2, 4, 0);
	tu_ev(t, h, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", 3, 1, 5);
	tu_ev(t, h, PT_KIND_USER_DEFINED, "MyRecord", 20, 6, 0);
	tu_ev(t, g, PT_KIND_KERNEL, "k", 4, 3, 5);
	struct pt_summary *s = summarize_all(t);
	const struct pt_row *r = find_row(t, &s->user_defined, "MyRecord", 0);
	assert_int_equal(r->cpu.n, 2);
	assert_int_equal(r->cpu.total_ns, US(16));
	assert_int_equal(r->cpu_self_ns, US(12));
	assert_int_equal(r->gpu.n, 2);
	assert_int_equal(r->gpu.total_ns, US(3));
	assert_int_equal(r->gpu.max_ns, US(3));
	assert_int_equal(r->gpu.min_ns, 0);
	assert_int_equal(s->user_defined.cpu_base_ns, US(26)); /* span without steps */
	/* the op inside a user annotation is still top-level */
	assert_int_equal(s->overview[PT_KIND_OPERATOR].calls, 1);
	assert_int_equal(s->op_detail.n, 2);
	pt_summary_free(s);
	pt_trace_free(t);
}

/*
 * PyTorch-style step. Main thread: ProfilerStep#7 [0,100) >
 * "## load ##" [0,20) and enumerate(DataLoader) [0,20) (launch corr 6 ->
 * memcpy 4) ; aten::a [20,22) ; Optimizer.zero_grad [22,24) (launch corr 2
 * -> kernel 1) ; aten::b [24,50) (launch corr 1 -> kernel 5) ;
 * Optimizer.step [85,95) (launch corr 4 -> kernel 2) ; launch corr 5
 * [96,97) -> kernel 3. Autograd thread: evaluate_function [50,80) (launch
 * corr 3 -> kernel 7). Kernel with no corr [98,99).
 */
static struct pt_trace *pytorch_trace(void)
{
	struct pt_trace *t = new_trace();
	uint32_t m = tu_track(t, 1, 1, -1), bw = tu_track(t, 1, 2, -1);
	uint32_t g = tu_track(t, 0, 7, 0);
	tu_ev(t, m, PT_KIND_PROFILE_STEP, "ProfilerStep#7", 0, 100, 0);
	tu_ev(t, m, PT_KIND_USER_DEFINED, "## load ##", 0, 20, 0);
	tu_ev(t, m, PT_KIND_DATALOADER, "enumerate(DataLoader)#_SingleProcessDataLoaderIter", 0, 20,
	      0);
	tu_ev(t, m, PT_KIND_CUDA_RUNTIME, "cudaMemcpyAsync", 5, 1, 6);
	tu_ev(t, m, PT_KIND_OPERATOR, "aten::a", 20, 2, 0);
	tu_ev(t, m, PT_KIND_OPTIMIZATION, "Optimizer.zero_grad#SGD.zero_grad", 22, 2, 0);
	tu_ev(t, m, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", 23, 0.5, 2);
	tu_ev(t, m, PT_KIND_OPERATOR, "aten::b", 24, 26, 0);
	tu_ev(t, m, PT_KIND_OPERATOR, "aten::b_inner", 25, 10, 0);
	tu_ev(t, m, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", 30, 1, 1);
	tu_ev(t, m, PT_KIND_OPTIMIZATION, "Optimizer.step#SGD.step", 85, 10, 0);
	tu_ev(t, m, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", 86, 1, 4);
	tu_ev(t, m, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", 96, 1, 5);
	tu_ev(t, bw, PT_KIND_BACKWARD, "autograd::engine::evaluate_function: AddmmBackward0", 50,
	      30, 0);
	tu_ev(t, bw, PT_KIND_OPERATOR, "AddmmBackward0", 51, 28, 0);
	tu_ev(t, bw, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", 60, 1, 3);
	tu_ev(t, g, PT_KIND_MEMCPY, "Memcpy HtoD", 7, 4, 6);
	tu_ev(t, g, PT_KIND_KERNEL, "k_zero", 24, 1, 2);
	tu_ev(t, g, PT_KIND_KERNEL, "k_fwd", 32, 5, 1);
	tu_ev(t, g, PT_KIND_KERNEL, "k_bwd", 62, 7, 3);
	tu_ev(t, g, PT_KIND_KERNEL, "k_opt", 88, 2, 4);
	tu_ev(t, g, PT_KIND_KERNEL, "k_other", 96.5, 1.5, 5); /* ends 98 */
	tu_ev(t, g, PT_KIND_KERNEL, "k_orphan", 98, 1, 0);
	return t;
}

static void test_pytorch_step(void **state)
{
	(void)state;
	struct pt_trace *t = pytorch_trace();
	uint32_t m = 0; /* the main thread is the first track */
	struct pt_summary *s = summarize_all(t);

	assert_int_equal(s->nsteps, 1);
	const struct pt_step *st = &s->steps[0];
	assert_int_equal(st->number, 7);
	assert_int_equal(st->start_ns, 0);
	assert_int_equal(st->dur_ns, US(100));
	assert_int_equal(st->track, m);
	assert_int_equal(st->cpu_ns[PT_MS_STEP], US(100));
	assert_int_equal(st->cpu_ns[PT_MS_DATALOADER], US(20));
	assert_int_equal(st->cpu_ns[PT_MS_FORWARD], US(28)); /* [20,50) minus zero_grad */
	assert_int_equal(st->cpu_ns[PT_MS_BACKWARD], US(30));
	assert_int_equal(st->cpu_ns[PT_MS_OPTIMIZATION], US(12));
	assert_int_equal(st->cpu_ns[PT_MS_OTHERS], US(10));
	assert_int_equal(st->gpu_ns[PT_MS_STEP], US(21.5));
	assert_int_equal(st->gpu_ns[PT_MS_DATALOADER], US(4));
	assert_int_equal(st->gpu_ns[PT_MS_FORWARD], US(5));
	assert_int_equal(st->gpu_ns[PT_MS_BACKWARD], US(7));
	assert_int_equal(st->gpu_ns[PT_MS_OPTIMIZATION], US(3));
	assert_int_equal(st->gpu_ns[PT_MS_OTHERS], US(2.5)); /* k_other + k_orphan */

	assert_int_equal(s->model[PT_MS_STEP].calls, 1);
	assert_int_equal(s->model[PT_MS_FORWARD].calls, 1);
	assert_int_equal(s->model[PT_MS_FORWARD].cpu.total_ns, US(28));
	assert_int_equal(s->model[PT_MS_OTHERS].calls, 1);
	assert_int_equal(s->model[PT_MS_OTHERS].gpu.total_ns, US(2.5));

	assert_int_equal(s->perf.steps, 1);
	assert_int_equal(s->perf.ips_samples, 0);
	assert_true(s->perf.reader_ratio_pct > 19.999 && s->perf.reader_ratio_pct < 20.001);
	assert_true(s->perf.ips_avg > 9999.9 && s->perf.ips_avg < 10000.1); /* 1 / 100 µs */
	assert_int_equal(s->perf.reader.total_ns, US(20));
	assert_int_equal(s->perf.batch.total_ns, US(100));

	/* aten ops on both threads are top-level; the backward op too */
	assert_int_equal(s->overview[PT_KIND_OPERATOR].calls, 3);
	assert_int_equal(s->overview[PT_KIND_OPERATOR_INNER].calls, 1);
	assert_int_equal(s->overview[PT_KIND_DATALOADER].union_ns, US(20));
	assert_int_equal(s->overview[PT_KIND_PROFILE_STEP].calls, 1);
	assert_int_equal(s->dist.step_ns, US(100));
	pt_summary_free(s);
	pt_trace_free(t);
}

static void assert_same_summary(const struct pt_summary *a, const struct pt_summary *b)
{
	assert_int_equal(a->events, b->events);
	assert_int_equal(a->t0_ns, b->t0_ns);
	assert_int_equal(a->t1_ns, b->t1_ns);
	assert_int_equal(a->nsteps, b->nsteps);
	for (size_t i = 0; i < a->nsteps; i++) {
		assert_memory_equal(a->steps[i].cpu_ns, b->steps[i].cpu_ns,
				    sizeof a->steps[i].cpu_ns);
		assert_memory_equal(a->steps[i].gpu_ns, b->steps[i].gpu_ns,
				    sizeof a->steps[i].gpu_ns);
	}
	assert_memory_equal(a->model, b->model, sizeof a->model);
	assert_memory_equal(a->overview, b->overview, sizeof a->overview);
	assert_memory_equal(&a->dist, &b->dist, sizeof a->dist);
	const struct pt_table *ta[] = {&a->operators, &a->op_detail, &a->kernels, &a->memory,
				       &a->user_defined};
	const struct pt_table *tb[] = {&b->operators, &b->op_detail, &b->kernels, &b->memory,
				       &b->user_defined};
	for (int k = 0; k < 5; k++) {
		assert_int_equal(ta[k]->n, tb[k]->n);
		assert_int_equal(ta[k]->cpu_base_ns, tb[k]->cpu_base_ns);
		assert_int_equal(ta[k]->gpu_base_ns, tb[k]->gpu_base_ns);
		if (ta[k]->n)
			assert_memory_equal(ta[k]->rows, tb[k]->rows,
					    ta[k]->n * sizeof *ta[k]->rows);
	}
}

/* Tracks interleaved arbitrarily (all events in global start order; whole
 * tracks in reverse order, so device activities come before their
 * launches) give the same summary as pt_summarize's host-first feeding. */
static void test_feed_interleaved(void **state)
{
	(void)state;
	struct pt_trace *t = pytorch_trace();
	struct pt_summary *want = summarize_all(t);
	/* collect every track's events in its own order */
	struct pt_event *all = NULL;
	size_t n = 0;
	for (uint32_t i = 0; i < t->ntracks; i++) {
		struct pt_store_iter it;
		pt_store_iter_init(&it, t->store, i, 0, UINT64_MAX);
		struct pt_event *ev;
		while ((ev = pt_store_iter_next(&it))) {
			all = realloc(all, (n + 1) * sizeof *all);
			all[n++] = *ev;
		}
		pt_store_iter_done(&it);
	}
	/* global start order, stable per track (insertion sort) */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && all[j - 1].start_ns > all[j].start_ns; j--) {
			struct pt_event tmp = all[j];
			all[j] = all[j - 1];
			all[j - 1] = tmp;
		}
	struct pt_agg *a = pt_agg_new(t, NULL);
	for (size_t i = 0; i < n; i++)
		pt_agg_feed(a, &all[i]);
	struct pt_summary *got = pt_agg_finish(a);
	assert_same_summary(want, got);
	pt_summary_free(got);

	/* whole tracks, last track first */
	a = pt_agg_new(t, NULL);
	for (uint32_t tr = t->ntracks; tr-- > 0;)
		for (size_t i = 0; i < n; i++)
			if (all[i].track_id == tr)
				pt_agg_feed(a, &all[i]);
	got = pt_agg_finish(a);
	assert_same_summary(want, got);
	pt_summary_free(got);
	free(all);
	pt_summary_free(want);
	pt_trace_free(t);
}

/*
 * Paddle-style steps with explicit phases (two threads run Forward in step
 * 2, overlapping: merged). Step 1 [0,100): DL [0,10), F [10,50), B
 * [50,80), O [80,90). Step 2 [100,300): DL [100,150), F [150,180) and
 * [175,200) on thread 3, B [200,260), O [260,280). Samples 32 each.
 */
static struct pt_trace *paddle_trace(uint64_t samples2)
{
	struct pt_trace *t = new_trace();
	uint32_t m = tu_track(t, 1, 1, -1), th3 = tu_track(t, 1, 3, -1);
	uint32_t g = tu_track(t, 0, 7, 0);
	ev_full(t, m, PT_KIND_PROFILE_STEP, "ProfileStep#1", 0, 100, 0, 0, 32);
	tu_ev(t, m, PT_KIND_DATALOADER, "Dataloader", 0, 10, 0);
	tu_ev(t, m, PT_KIND_FORWARD, "Forward", 10, 40, 0);
	tu_ev(t, m, PT_KIND_OPERATOR, "matmul", 12, 10, 0);
	tu_ev(t, m, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", 13, 1, 1);
	tu_ev(t, m, PT_KIND_BACKWARD, "Backward", 50, 30, 0);
	tu_ev(t, m, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", 55, 1, 2);
	tu_ev(t, m, PT_KIND_OPTIMIZATION, "Optimization", 80, 10, 0);
	ev_full(t, m, PT_KIND_PROFILE_STEP, "ProfileStep#2", 100, 200, 0, 0, samples2);
	tu_ev(t, m, PT_KIND_DATALOADER, "Dataloader", 100, 50, 0);
	tu_ev(t, m, PT_KIND_FORWARD, "Forward", 150, 30, 0);
	tu_ev(t, th3, PT_KIND_FORWARD, "Forward", 175, 25, 0);
	tu_ev(t, th3, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", 176, 1, 3);
	tu_ev(t, m, PT_KIND_BACKWARD, "Backward", 200, 60, 0);
	tu_ev(t, m, PT_KIND_OPTIMIZATION, "Optimization", 260, 20, 0);
	tu_ev(t, g, PT_KIND_KERNEL, "gemm", 14, 6, 1);
	tu_ev(t, g, PT_KIND_KERNEL, "gemm_grad", 56, 8, 2);
	tu_ev(t, g, PT_KIND_KERNEL, "gemm", 177, 4, 3);
	return t;
}

static void test_paddle_steps_and_perf(void **state)
{
	(void)state;
	struct pt_trace *t = paddle_trace(32);
	struct pt_summary *s = summarize_all(t);
	assert_int_equal(s->nsteps, 2);
	const uint64_t cpu1[] = {100, 10, 40, 30, 10, 10}, cpu2[] = {200, 50, 50, 60, 20, 20};
	for (int r = 0; r < PT_MS__COUNT; r++) {
		assert_int_equal(s->steps[0].cpu_ns[r], US(cpu1[r]));
		assert_int_equal(s->steps[1].cpu_ns[r], US(cpu2[r]));
	}
	assert_int_equal(s->steps[0].number, 1);
	assert_int_equal(s->steps[1].number, 2);
	assert_int_equal(s->steps[0].gpu_ns[PT_MS_FORWARD], US(6));
	assert_int_equal(s->steps[0].gpu_ns[PT_MS_BACKWARD], US(8));
	assert_int_equal(s->steps[0].gpu_ns[PT_MS_STEP], US(14));
	assert_int_equal(s->steps[1].gpu_ns[PT_MS_FORWARD], US(4));
	assert_int_equal(s->steps[1].gpu_ns[PT_MS_OTHERS], 0);

	const struct pt_model_row *st = &s->model[PT_MS_STEP];
	assert_int_equal(st->calls, 2);
	assert_int_equal(st->cpu.total_ns, US(300));
	assert_int_equal(st->cpu.max_ns, US(200));
	assert_int_equal(st->cpu.min_ns, US(100));
	assert_int_equal(st->gpu.total_ns, US(18));
	const struct pt_model_row *dl = &s->model[PT_MS_DATALOADER];
	assert_int_equal(dl->calls, 2);
	assert_int_equal(dl->cpu.total_ns, US(60));
	assert_int_equal(dl->cpu.max_ns, US(50));
	assert_int_equal(dl->cpu.min_ns, US(10));
	assert_int_equal(dl->gpu.total_ns, 0);
	const struct pt_model_row *fw = &s->model[PT_MS_FORWARD];
	assert_int_equal(fw->gpu.total_ns, US(10));
	assert_int_equal(fw->gpu.max_ns, US(6));
	assert_int_equal(fw->gpu.min_ns, US(4));
	assert_int_equal(s->model[PT_MS_OTHERS].calls, 2);
	assert_int_equal(s->model[PT_MS_OTHERS].cpu.total_ns, US(30));
	/* Backward GPU only in step 1, but Backward CPU in both */
	assert_int_equal(s->model[PT_MS_BACKWARD].calls, 2);
	assert_int_equal(s->model[PT_MS_BACKWARD].gpu.min_ns, 0);

	/* Perf: reader 60 / batch 300 = 20%; 32 samples per step. */
	const struct pt_perf *p = &s->perf;
	assert_int_equal(p->steps, 2);
	assert_true(p->reader_ratio_pct > 19.999 && p->reader_ratio_pct < 20.001);
	assert_int_equal(p->ips_samples, 1);
	assert_true(p->ips_max > 319999.9 && p->ips_max < 320000.1); /* 32 / 100 µs */
	assert_true(p->ips_min > 159999.9 && p->ips_min < 160000.1); /* 32 / 200 µs */
	assert_true(p->ips_avg > 213333.3 && p->ips_avg < 213333.4); /* 64 / 300 µs */
	assert_int_equal(p->reader.max_ns, US(50));
	assert_int_equal(p->reader.min_ns, US(10));
	assert_int_equal(p->batch.max_ns, US(200));
	assert_int_equal(p->batch.min_ns, US(100));
	/* Overview Forward: the Model Summary's figure (merged across the two
	 * threads within each step), calls = steps with a Forward */
	assert_int_equal(s->overview[PT_KIND_FORWARD].union_ns, US(40 + 50));
	assert_int_equal(s->overview[PT_KIND_FORWARD].calls, 2);
	assert_int_equal(s->overview[PT_KIND_FORWARD].ratio_base_ns, US(300));
	assert_int_equal(s->overview[PT_KIND_DATALOADER].calls, s->model[PT_MS_DATALOADER].calls);
	/* no thread made memory calls: no CPU base for that table */
	assert_int_equal(s->memory.threads, 0);
	assert_int_equal(s->memory.cpu_base_ns, 0);
	pt_summary_free(s);
	pt_trace_free(t);
}

/* One step without a sample count: ips falls back to steps/s. */
/* Gradient accumulation with explicit phases (the Python helper, the C
 * API): forward, backward, forward, backward, optimizer in one step.
 * Backward is the union of the backward events (10 + 12), not the span from
 * the first to the last (which would hold the second forward and the loss). */
static void test_accumulation_backward_union(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	uint32_t h = tu_track(t, 1, 1, -1);
	tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfileStep", 0, 100, 0);
	tu_ev(t, h, PT_KIND_FORWARD, "Forward", 0, 20, 0);
	tu_ev(t, h, PT_KIND_BACKWARD, "Backward", 25, 10, 0);
	tu_ev(t, h, PT_KIND_FORWARD, "Forward", 40, 20, 0);
	tu_ev(t, h, PT_KIND_BACKWARD, "Backward", 65, 12, 0);
	tu_ev(t, h, PT_KIND_OPTIMIZATION, "Optimization", 80, 15, 0);
	struct pt_summary *s = summarize_all(t);
	assert_int_equal(s->nsteps, 1);
	assert_int_equal(s->steps[0].cpu_ns[PT_MS_BACKWARD], US(22));
	assert_int_equal(s->steps[0].cpu_ns[PT_MS_FORWARD], US(40));
	assert_int_equal(s->steps[0].cpu_ns[PT_MS_OTHERS], US(100 - 40 - 22 - 15));
	pt_summary_free(s);
	pt_trace_free(t);
}

/* A job that loads data: a short step that fetched no batch (a split-off
 * tail of an iteration) is in the average ips, not in its max or min. */
static void test_ips_extremes_need_a_fetch(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	uint32_t h = tu_track(t, 1, 1, -1);
	ev_full(t, h, PT_KIND_PROFILE_STEP, "ProfileStep#1", 0, 100, 0, 0, 32);
	tu_ev(t, h, PT_KIND_DATALOADER, "Dataloader", 0, 10, 0);
	ev_full(t, h, PT_KIND_PROFILE_STEP, "ProfileStep#2", 100, 200, 0, 0, 32);
	tu_ev(t, h, PT_KIND_DATALOADER, "Dataloader", 100, 20, 0);
	ev_full(t, h, PT_KIND_PROFILE_STEP, "ProfileStep#3", 300, 1, 0, 0, 32);
	struct pt_summary *s = summarize_all(t);
	const struct pt_perf *p = &s->perf;
	assert_int_equal(s->nsteps, 3);
	assert_int_equal(p->ips_samples, 1);
	assert_true(p->ips_max > 319999.9 && p->ips_max < 320000.1); /* 32 / 100 us, not 32 / 1 us */
	assert_true(p->ips_min > 159999.9 && p->ips_min < 160000.1); /* 32 / 200 us */
	assert_true(p->ips_avg > 96.0 / 301e-6 * 0.999 && p->ips_avg < 96.0 / 301e-6 * 1.001);
	pt_summary_free(s);
	pt_trace_free(t);
}

/* A language model's steps carry their tokens (a PT_STEP_TOKENS counter at
 * each step's start): per step, and tokens/s = all tokens / those steps'
 * time; a step without a count is not in it. */
static void tokens_ev(struct pt_trace *t, uint32_t track, double at_us, double tokens)
{
	uint64_t bits;
	memcpy(&bits, &tokens, sizeof bits);
	ev_full(t, track, PT_KIND_COUNTER, PT_STEP_TOKENS, at_us, 0, 0, 0, bits);
}

static void test_tokens_per_step(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	uint32_t h = tu_track(t, 1, 1, -1);
	ev_full(t, h, PT_KIND_PROFILE_STEP, "ProfileStep#1", 0, 100, 0, 0, 8);
	tokens_ev(t, h, 0, 4096);
	ev_full(t, h, PT_KIND_PROFILE_STEP, "ProfileStep#2", 100, 300, 0, 0, 8);
	tokens_ev(t, h, 100, 4096);
	ev_full(t, h, PT_KIND_PROFILE_STEP, "ProfileStep#3", 400, 100, 0, 0, 8);
	struct pt_summary *s = summarize_all(t);
	assert_int_equal(s->nsteps, 3);
	assert_int_equal(s->steps[0].tokens, 4096);
	assert_int_equal(s->steps[1].tokens, 4096);
	assert_int_equal(s->steps[2].tokens, 0);
	const struct pt_perf *p = &s->perf;
	assert_int_equal(p->has_tokens, 1);
	assert_true(fabs(p->tokens_avg - 8192.0 / 400e-6) < 1e-3); /* 20.48 M tokens/s */
	assert_true(fabs(p->tokens_max - 4096.0 / 100e-6) < 1e-3);
	assert_true(fabs(p->tokens_min - 4096.0 / 300e-6) < 1e-3);
	pt_summary_free(s);
	pt_trace_free(t);
}

/* Two ranks merged (two processes, steps over the same time): each step
 * takes only its own process's phases and launches, never the other
 * rank's (they took each other's: Forward 1,530 ms in 1,239 ms steps). */
static void test_ranks_keep_their_phases(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	uint32_t r0 = tu_track(t, 100, 1, -1), r1 = tu_track(t, 200, 1, -1);
	uint32_t g1 = tu_track(t, 200, 7, 0);
	tu_ev(t, r0, PT_KIND_PROFILE_STEP, "ProfileStep#1", 0, 100, 0);
	tu_ev(t, r1, PT_KIND_PROFILE_STEP, "ProfileStep#1", 0, 100, 0);
	tu_ev(t, r0, PT_KIND_FORWARD, "Forward", 10, 50, 0);
	tu_ev(t, r1, PT_KIND_FORWARD, "Forward", 20, 10, 0);
	tu_ev(t, r1, PT_KIND_OPTIMIZATION, "Optimization", 80, 10, 0);
	tu_ev(t, r1, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", 25, 1, 9);
	tu_ev(t, g1, PT_KIND_KERNEL, "k", 30, 5, 9);
	struct pt_summary *s = summarize_all(t);
	assert_int_equal(s->nsteps, 2);
	for (size_t i = 0; i < 2; i++) {
		const struct pt_step *st = &s->steps[i];
		int rank1 = t->tracks[st->track].key.pid == 200;
		assert_int_equal(st->cpu_ns[PT_MS_FORWARD], rank1 ? US(10) : US(50));
		assert_int_equal(st->cpu_ns[PT_MS_OPTIMIZATION], rank1 ? US(10) : 0);
		assert_int_equal(st->gpu_ns[PT_MS_STEP], rank1 ? US(5) : 0);
	}
	assert_int_equal(s->model[PT_MS_FORWARD].cpu.total_ns, US(60));
	assert_int_equal(s->model[PT_MS_STEP].cpu.total_ns, US(200));
	pt_summary_free(s);
	pt_trace_free(t);
}

static void test_perf_without_samples(void **state)
{
	(void)state;
	struct pt_trace *t = paddle_trace(0);
	struct pt_summary *s = summarize_all(t);
	const struct pt_perf *p = &s->perf;
	assert_int_equal(p->ips_samples, 0);
	assert_true(p->ips_avg > 6666.66 && p->ips_avg < 6666.67); /* 2 / 300 µs */
	assert_true(p->ips_max > 9999.99 && p->ips_max < 10000.01);
	assert_true(p->ips_min > 4999.99 && p->ips_min < 5000.01);
	pt_summary_free(s);
	pt_trace_free(t);
}

/* Steps #1..#3 [0,100) [100,200) [200,300), each with one op, and steps
 * named without a number use their ordinal. */
static struct pt_trace *three_steps(int numbered)
{
	struct pt_trace *t = new_trace();
	uint32_t m = tu_track(t, 1, 1, -1);
	char name[64];
	for (int i = 0; i < 3; i++) {
		if (numbered)
			snprintf(name, sizeof name, "ProfilerStep#%d", i + 1);
		else
			snprintf(name, sizeof name, "train step");
		tu_ev(t, m, PT_KIND_PROFILE_STEP, name, 100 * i, 100, 0);
		tu_ev(t, m, PT_KIND_OPERATOR, "op", 100 * i + 10, 10 * (i + 1), 0);
	}
	return t;
}

static void test_step_window(void **state)
{
	(void)state;
	struct pt_trace *t = three_steps(1);
	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	o.step_first = 2;
	o.step_last = 2;
	struct pt_summary *s = pt_summarize(t, &o);
	assert_int_equal(s->nsteps, 1);
	assert_int_equal(s->steps[0].number, 2);
	assert_int_equal(s->events, 2);
	assert_int_equal(find_row(t, &s->operators, "op", 0)->cpu.total_ns, US(20));
	assert_int_equal(s->t0_ns, US(100));
	assert_int_equal(s->t1_ns, US(200));
	pt_summary_free(s);

	o.step_last = INT64_MAX; /* steps 2 and 3 */
	s = pt_summarize(t, &o);
	assert_int_equal(s->nsteps, 2);
	assert_int_equal(find_row(t, &s->operators, "op", 0)->cpu.total_ns, US(50));
	pt_summary_free(s);

	o.step_first = 7; /* none */
	s = pt_summarize(t, &o);
	assert_int_equal(s->nsteps, 0);
	assert_int_equal(s->events, 0);
	pt_summary_free(s);

	/* time window on event start: [150,250) holds step 3 and op 2 */
	pt_agg_opts_init(&o);
	o.t0_ns = US(150);
	o.t1_ns = US(250);
	s = pt_summarize(t, &o);
	assert_int_equal(s->nsteps, 1);
	assert_int_equal(s->steps[0].number, 3);
	assert_int_equal(s->events, 1 + 1);
	assert_int_equal(s->operators.n, 1);
	assert_int_equal(find_row(t, &s->operators, "op", 0)->cpu.total_ns, US(30));
	pt_summary_free(s);
	pt_trace_free(t);

	/* No number in the names: ordinals, also for the selection. */
	t = three_steps(0);
	pt_agg_opts_init(&o);
	o.step_first = 1;
	o.step_last = 2;
	s = pt_summarize(t, &o);
	assert_int_equal(s->nsteps, 2);
	assert_int_equal(s->steps[0].number, 1);
	assert_int_equal(s->steps[1].number, 2);
	assert_int_equal(s->steps[0].start_ns, US(100));
	pt_summary_free(s);
	pt_trace_free(t);
}

/* comm [10,30) [50,60), compute [0,20) [25,55): comm 30, comp 50,
 * overlap [10,20)+[25,30)+[50,55) = 20. */
static void test_distributed(void **state)
{
	(void)state;
	struct pt_trace *t = new_trace();
	uint32_t s1 = tu_track(t, 0, 1, 0), s2 = tu_track(t, 0, 2, 0);
	tu_ev(t, s2, PT_KIND_COMMUNICATION, "ncclAllReduce", 10, 20, 0);
	tu_ev(t, s2, PT_KIND_COMMUNICATION, "ncclAllReduce", 50, 10, 0);
	tu_ev(t, s1, PT_KIND_KERNEL, "gemm", 0, 20, 0);
	tu_ev(t, s1, PT_KIND_KERNEL, "gemm", 25, 30, 0);
	struct pt_summary *s = summarize_all(t);
	assert_int_equal(s->dist.comm_ns, US(30));
	assert_int_equal(s->dist.comp_ns, US(50));
	assert_int_equal(s->dist.overlap_ns, US(20));
	assert_int_equal(s->dist.step_ns, US(60)); /* no steps: the span */
	assert_int_equal(s->dist.comm_from_host, 0);
	/* communication kernels are in the kernel table */
	assert_int_equal(find_row(t, &s->kernels, "ncclAllReduce", 1)->kind, PT_KIND_COMMUNICATION);
	assert_int_equal(s->kernels.gpu_base_ns, US(80));
	assert_int_equal(s->devices[0].busy_ns, US(60));
	pt_summary_free(s);
	pt_trace_free(t);

	/* Host-only communication (gloo): used when no device collective. */
	t = new_trace();
	uint32_t h = tu_track(t, 1, 1, -1), h2 = tu_track(t, 1, 2, -1);
	s1 = tu_track(t, 0, 1, 0);
	ev_full(t, h, PT_KIND_USER_DEFINED, "gloo:all_reduce", 0, 10, 0, PT_EVF_COMM, 0);
	ev_full(t, h2, PT_KIND_USER_DEFINED, "gloo:all_reduce", 5, 10, 0, PT_EVF_COMM, 0);
	tu_ev(t, s1, PT_KIND_KERNEL, "gemm", 12, 8, 0);
	s = summarize_all(t);
	assert_int_equal(s->dist.comm_from_host, 1);
	assert_int_equal(s->dist.comm_ns, US(15));
	assert_int_equal(s->dist.comp_ns, US(8));
	assert_int_equal(s->dist.overlap_ns, US(3));
	pt_summary_free(s);
	pt_trace_free(t);
}

/* Device 0: kernels [0,10) on stream 7, [5,15) on stream 8, [30,40) on 7,
 * a memset; device 1: [0,50). Span 0..100 (a host event). */
static void test_device_util(void **state)
{
	(void)state;
	struct pt_trace *t = new_trace();
	uint32_t h = tu_track(t, 1, 1, -1);
	uint32_t d1 = tu_track(t, 1, 9, 1); /* created first: output sorts by id */
	uint32_t a7 = tu_track(t, 0, 7, 0), a8 = tu_track(t, 0, 8, 0);
	tu_ev(t, h, PT_KIND_OTHER, "host", 0, 100, 0);
	tu_ev(t, a7, PT_KIND_KERNEL, "k", 0, 10, 0);
	tu_ev(t, a8, PT_KIND_KERNEL, "k", 5, 10, 0);
	tu_ev(t, a7, PT_KIND_KERNEL, "k", 30, 10, 0);
	tu_ev(t, a7, PT_KIND_MEMSET, "Memset", 50, 10, 0);
	tu_ev(t, d1, PT_KIND_KERNEL, "k", 0, 50, 0);
	struct pt_summary *s = summarize_all(t);
	assert_int_equal(s->ndevices, 2);
	assert_int_equal(s->devices[0].device, 0);
	assert_int_equal(s->devices[0].busy_ns, US(25));
	assert_int_equal(s->devices[0].span_ns, US(100));
	assert_true(s->devices[0].util_pct > 24.999 && s->devices[0].util_pct < 25.001);
	assert_int_equal(s->devices[0].kernels, 3);
	assert_int_equal(s->devices[0].memsets, 1);
	assert_int_equal(s->devices[1].device, 1);
	assert_int_equal(s->devices[1].busy_ns, US(50));
	assert_true(s->devices[1].util_pct > 49.999 && s->devices[1].util_pct < 50.001);
	assert_int_equal(s->overview[PT_KIND_KERNEL].union_ns, US(50));
	assert_int_equal(s->overview[PT_KIND_MEMSET].calls, 1);
	pt_summary_free(s);
	pt_trace_free(t);
}

static void test_empty_trace(void **state)
{
	(void)state;
	struct pt_trace *t = new_trace();
	struct pt_summary *s = summarize_all(t);
	assert_non_null(s);
	assert_int_equal(s->events, 0);
	assert_int_equal(s->t0_ns, 0);
	assert_int_equal(s->t1_ns, 0);
	assert_int_equal(s->nsteps, 0);
	assert_null(s->steps);
	assert_int_equal(s->ndevices, 0);
	assert_int_equal(s->operators.n, 0);
	assert_int_equal(s->op_detail.n, 0);
	assert_int_equal(s->kernels.n, 0);
	assert_int_equal(s->perf.steps, 0);
	assert_true(s->perf.ips_avg == 0.0);
	assert_int_equal(s->dist.step_ns, 0);
	for (int r = 0; r < PT_MS__COUNT; r++) {
		assert_int_equal(s->model[r].calls, 0);
		assert_int_equal(s->model[r].cpu.n, 0);
	}
	for (int k = 0; k < PT_KIND__COUNT; k++)
		assert_int_equal(s->overview[k].calls, 0);
	pt_summary_free(s);
	/* and through the incremental API with default options */
	struct pt_agg *a = pt_agg_new(t, NULL);
	s = pt_agg_finish(a);
	assert_int_equal(s->events, 0);
	pt_summary_free(s);
	pt_summary_free(NULL);
	pt_trace_free(t);
}

static void test_no_steps(void **state)
{
	(void)state;
	struct pt_trace *t = new_trace();
	uint32_t h = tu_track(t, 1, 1, -1);
	tu_ev(t, h, PT_KIND_OPERATOR, "op", 10, 10, 0);
	tu_ev(t, h, PT_KIND_DATALOADER, "enumerate(DataLoader)", 30, 5, 0);
	struct pt_summary *s = summarize_all(t);
	assert_int_equal(s->nsteps, 0);
	assert_int_equal(s->model[PT_MS_STEP].calls, 0);
	assert_int_equal(s->model[PT_MS_DATALOADER].calls, 0);
	assert_int_equal(s->perf.steps, 0);
	assert_int_equal(s->dist.step_ns, US(25));
	assert_int_equal(s->overview[PT_KIND_DATALOADER].union_ns, US(5));
	assert_int_equal(s->overview[PT_KIND_DATALOADER].ratio_base_ns, US(25));
	assert_int_equal(s->perf.has_reader, 0);
	pt_summary_free(s);
	pt_trace_free(t);
}

/* Random intervals on three streams against a brute-force bitmap. */
static void test_union_random(void **state)
{
	(void)state;
	srand(12345);
	for (int round = 0; round < 20; round++) {
		struct pt_trace *t = new_trace();
		static unsigned char cover[2000];
		memset(cover, 0, sizeof cover);
		for (int k = 0; k < 3; k++) {
			uint32_t tr = tu_track(t, 0, k, 0);
			int pos = 0;
			for (int i = 0; i < 40; i++) {
				pos += rand() % 30;
				int len = rand() % 40;
				if (pos + len >= 2000)
					break;
				tu_ev(t, tr, PT_KIND_KERNEL, "k", pos, len, 0);
				for (int x = pos; x < pos + len; x++)
					cover[x] = 1;
			}
		}
		uint64_t want = 0;
		for (int x = 0; x < 2000; x++)
			want += cover[x];
		struct pt_summary *s = summarize_all(t);
		assert_int_equal(s->overview[PT_KIND_KERNEL].union_ns, US(want));
		assert_int_equal(s->dist.comp_ns, US(want));
		pt_summary_free(s);
		pt_trace_free(t);
	}
}

/* GPU time goes to the step holding its launch's start (an orphan's own
 * start): the latest-starting of the steps that hold it. Steps on two
 * threads overlap; launches on three threads are settled a thread at a
 * time, so the times asked about jump back at each thread. Orphans (no
 * launch) count as their union on the device per step. Against a
 * brute-force search over the steps and a bitmap of each step's orphans. */
static void test_gpu_to_steps_random(void **state)
{
	(void)state;
	srand(4242);
	for (int round = 0; round < 20; round++) {
		struct pt_trace *t = new_trace();
		uint32_t st_tr[2] = {tu_track(t, 1, 1, -1), tu_track(t, 1, 2, -1)};
		uint32_t host[3] = {st_tr[0], st_tr[1], tu_track(t, 1, 3, -1)};
		uint32_t g = tu_track(t, 0, 7, 0);
		enum { MAXS = 64 };
		uint64_t ss[MAXS], se[MAXS], want[MAXS];
		static unsigned char orph[MAXS][4100 * 4]; /* quarter-microsecond cells */
		memset(orph, 0, sizeof orph);
		int ns = 0;
		for (int k = 0; k < 2; k++) { /* odd starts on one thread, even on the other */
			int pos = k;
			while (ns < MAXS) {
				pos += 2 * (rand() % 20);
				int len = 2 + 2 * (rand() % 40);
				if (pos + len >= 4000)
					break;
				char name[32];
				snprintf(name, sizeof name, "ProfilerStep#%d", ns);
				tu_ev(t, st_tr[k], PT_KIND_PROFILE_STEP, name, pos, len, 0);
				ss[ns] = US(pos);
				se[ns] = US(pos + len);
				want[ns++] = 0;
				pos += len;
			}
		}
		uint32_t corr = 1;
		for (int i = 0; i < 300; i++) {
			double at = rand() % 4000 + 0.25;
			double dur = 1 + rand() % 9;
			uint32_t c = rand() % 8 ? corr++ : 0; /* some kernels have no launch */
			if (c)
				tu_ev(t, host[rand() % 3], PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel",
				      at, 0.5, c);
			tu_ev(t, g, PT_KIND_KERNEL, "k", at + 0.5, dur, c);
			/* the step holding the launch's start (an orphan's own) */
			uint64_t x = c ? US(at) : US(at + 0.5);
			int best = -1;
			for (int j = 0; j < ns; j++)
				if (ss[j] <= x && x < se[j] && (best < 0 || ss[j] > ss[best]))
					best = j;
			if (best >= 0 && c)
				want[best] += US(dur);
			else if (best >= 0)
				for (int q = (int)((at + 0.5) * 4); q < (int)((at + 0.5 + dur) * 4); q++)
					orph[best][q] = 1;
		}
		for (int j = 0; j < ns; j++)
			for (int q = 0; q < 4100 * 4; q++)
				want[j] += orph[j][q] ? 250 : 0;
		struct pt_summary *s = summarize_all(t);
		assert_int_equal(s->nsteps, ns);
		for (size_t i = 0; i < s->nsteps; i++) {
			int j = (int)s->steps[i].number;
			assert_true(j >= 0 && j < ns);
			assert_int_equal(s->steps[i].start_ns, ss[j]);
			assert_int_equal(s->steps[i].gpu_ns[PT_MS_STEP], want[j]);
		}
		pt_summary_free(s);
		pt_trace_free(t);
	}
}

/* PyTorch before 1.9: no evaluate_function wrapper, only the autograd
 * nodes (flag PT_EVF_AUTOGRAD) on the autograd thread. Step [0,100):
 * dataloader [0,20), forward ops [20,45), nodes [50,60) and [65,80) on
 * thread 2 (span 30), optimizer [85,95). The nodes stay operators. */
/* Steps without a number in their name keep the job's ordinals: in a window
 * that starts later (step_ordinal0), and after the cap dropped the first. */
static void test_step_ordinals(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(0);
	uint32_t h = tu_track(t, 1, 1, -1);
	for (int i = 0; i < 30; i++)
		tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfileStep", i * 100, 90, 0);
	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	o.t0_ns = US(2000);
	o.step_ordinal0 = 20;
	struct pt_summary *s = pt_summarize(t, &o);
	assert_int_equal(s->nsteps, 10);
	assert_int_equal(s->steps[0].number, 20);
	assert_int_equal(s->steps[9].number, 29);
	pt_summary_free(s);
	pt_trace_free(t);

	t = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	h = tu_track(t, 1, 1, -1);
	uint32_t o2 = tu_track(t, 1, 2, -1);
	for (int i = 0; i < 100; i++)
		tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfileStep", i * 100, 90, 0);
	for (int i = 0; i < 40000; i++)
		tu_ev(t, o2, PT_KIND_OPERATOR, "filler", 20000 + i * 0.1, 0.05, 0);
	for (int i = 100; i < 110; i++)
		tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfileStep", 30000 + i * 100, 90, 0);
	assert_true(pt_store_dropped_steps(t->store) > 0);
	s = pt_summarize(t, NULL);
	assert_true(s->nsteps > 0);
	assert_int_equal(s->steps[s->nsteps - 1].number, 109);
	pt_summary_free(s);
	pt_trace_free(t);
}

static void test_autograd_nodes_mark_backward(void **state)
{
	(void)state;
	struct pt_trace *t = new_trace();
	uint32_t m = tu_track(t, 1, 1, -1), bw = tu_track(t, 1, 2, -1), g = tu_track(t, 0, 7, 0);
	tu_ev(t, m, PT_KIND_PROFILE_STEP, "ProfilerStep#3", 0, 100, 0);
	tu_ev(t, m, PT_KIND_DATALOADER, "enumerate(DataLoader)#x", 0, 20, 0);
	tu_ev(t, m, PT_KIND_OPERATOR, "aten::conv2d", 20, 25, 0);
	tu_ev(t, m, PT_KIND_OPTIMIZATION, "Optimizer.step#SGD.step", 85, 10, 0);
	ev_full(t, bw, PT_KIND_OPERATOR, "CudnnConvolutionBackward", 50, 10, 0, PT_EVF_AUTOGRAD, 0);
	tu_ev(t, bw, PT_KIND_OPERATOR, "aten::cudnn_convolution_backward", 51, 8, 0);
	tu_ev(t, bw, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", 52, 1, 9);
	ev_full(t, bw, PT_KIND_OPERATOR, "ReluBackward1", 65, 15, 0, PT_EVF_AUTOGRAD, 0);
	tu_ev(t, g, PT_KIND_KERNEL, "wgrad", 53, 4, 9);
	struct pt_summary *s = summarize_all(t);
	assert_int_equal(s->nsteps, 1);
	assert_int_equal(s->steps[0].cpu_ns[PT_MS_BACKWARD], US(30));
	assert_int_equal(s->steps[0].cpu_ns[PT_MS_FORWARD], US(25));
	assert_int_equal(s->steps[0].cpu_ns[PT_MS_OTHERS], US(100 - 20 - 25 - 30 - 10));
	assert_int_equal(s->steps[0].gpu_ns[PT_MS_BACKWARD], US(4));
	const struct pt_row *r = find_row(t, &s->operators, "CudnnConvolutionBackward", 0);
	assert_int_equal(r->cpu.n, 1);
	assert_int_equal(r->gpu.total_ns, US(4));
	pt_summary_free(s);
	pt_trace_free(t);
}

/* A legacy export rounds start and duration apart: an aten::empty_like
 * that starts 1 µs before its neighbour aten::empty ends and ends 1 µs
 * after it is the neighbour's sibling (as much of it lies outside as
 * inside), under the batch_norm that contains both exactly; a child that
 * only overhangs its parent's end by a rounding stays its child. */
static void test_overhang_picks_the_right_parent(void **state)
{
	(void)state;
	struct pt_trace *t = new_trace();
	uint32_t h = tu_track(t, 1, 1, -1);
	tu_ev(t, h, PT_KIND_OPERATOR, "aten::batch_norm", 100, 50, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "aten::empty", 102, 2, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "aten::empty_like", 103, 2, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "aten::empty_strided", 103, 1, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "aten::linear", 200, 50, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "aten::addmm", 210, 41, 0); /* 1 µs past its parent */
	struct pt_summary *s = summarize_all(t);
	assert_int_equal(find_row(t, &s->operators, "aten::empty", 0)->cpu_self_ns, US(2));
	assert_int_equal(find_row(t, &s->operators, "aten::batch_norm", 0)->cpu_self_ns, US(46));
	assert_int_equal(find_row(t, &s->operators, "aten::empty_like", 0)->cpu_self_ns, US(1));
	assert_int_equal(find_row(t, &s->operators, "aten::linear", 0)->cpu_self_ns, US(9));
	/* op detail: empty_like sits under batch_norm, next to empty */
	const struct pt_table *d = &s->op_detail;
	for (size_t i = 0; i < d->n; i++) {
		const char *n = row_name(t, &d->rows[i]);
		if (!strcmp(n, "aten::empty_like") || !strcmp(n, "aten::empty"))
			assert_string_equal(row_name(t, &d->rows[d->rows[i].parent]),
					    "aten::batch_norm");
		if (!strcmp(n, "aten::addmm"))
			assert_string_equal(row_name(t, &d->rows[d->rows[i].parent]),
					    "aten::linear");
	}
	/* the overhang is cut for the ratio: addmm is 40 of linear's 50 µs */
	assert_int_equal(find_row(t, &s->operators, "aten::addmm", 0)->cpu_ratio_ns, US(40));
	pt_summary_free(s);
	pt_trace_free(t);
}

/* A call nested in a call of its own name (the legacy API records
 * aten::cudnn_convolution_backward twice, one inside the other) counts once
 * in the row's ratio, so no ratio can pass 100%. */
static void test_ratio_counts_nested_same_name_once(void **state)
{
	(void)state;
	struct pt_trace *t = new_trace();
	uint32_t h = tu_track(t, 1, 1, -1), g = tu_track(t, 0, 7, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "conv_bwd", 0, 100, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "conv_bwd", 10, 80, 0);
	tu_ev(t, h, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", 20, 2, 5);
	tu_ev(t, g, PT_KIND_KERNEL, "wgrad", 30, 60, 5);
	struct pt_summary *s = summarize_all(t);
	const struct pt_row *r = find_row(t, &s->operators, "conv_bwd", 0);
	assert_int_equal(r->cpu.n, 2);
	assert_int_equal(r->cpu.total_ns, US(180)); /* per call, as key_averages */
	assert_int_equal(r->gpu.total_ns, US(120));
	assert_int_equal(r->cpu_ratio_ns, US(100));
	assert_int_equal(r->gpu_ratio_ns, US(60));
	assert_int_equal(s->operators.cpu_base_ns, US(100));
	assert_int_equal(s->operators.gpu_base_ns, US(60));
	pt_summary_free(s);
	pt_trace_free(t);
}

/* read_batch on four loader threads, each busy the whole span: a share of
 * four threads' wall time (100%), not of one (400%). */
static void test_user_defined_over_threads(void **state)
{
	(void)state;
	struct pt_trace *t = new_trace();
	uint32_t m = tu_track(t, 1, 1, -1);
	tu_ev(t, m, PT_KIND_PROFILE_STEP, "ProfilerStep#1", 0, 100, 0);
	for (int i = 0; i < 4; i++) {
		uint32_t w = tu_track(t, 1, 10 + i, -1);
		tu_ev(t, w, PT_KIND_USER_DEFINED, "read_batch", 0, 100, 0);
	}
	struct pt_summary *s = summarize_all(t);
	assert_int_equal(s->user_defined.threads, 4);
	assert_int_equal(s->user_defined.cpu_base_ns, US(400));
	const struct pt_row *r = find_row(t, &s->user_defined, "read_batch", 0);
	assert_int_equal(r->cpu_ratio_ns, US(400));
	pt_summary_free(s);
	pt_trace_free(t);
}

/*
 * Events outside the steps count in neither the numerator nor the
 * denominator of the Overview and the Distributed Summary: a kernel still
 * running after the step, a collective between steps, and Kineto's span of
 * the whole profiling session (an internal event, in no summary at all).
 */
static void test_outside_steps_consistent(void **state)
{
	(void)state;
	struct pt_trace *t = new_trace();
	uint32_t m = tu_track(t, 1, 1, -1), o = tu_track(t, 1, 2, -1);
	uint32_t g = tu_track(t, 0, 7, 0), sp = tu_track(t, 1, 99, -1);
	ev_full(t, sp, PT_KIND_OTHER, "PyTorch Profiler (0)", 0, 1000, 0, PT_EVF_INTERNAL, 0);
	tu_ev(t, m, PT_KIND_PROFILE_STEP, "ProfilerStep#1", 100, 100, 0);
	tu_ev(t, m, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", 150, 2, 3);
	tu_ev(t, g, PT_KIND_KERNEL, "k", 160, 90, 3); /* 40 µs in the step, 50 after */
	ev_full(t, o, PT_KIND_USER_DEFINED, "gloo:all_reduce", 50, 300, 0, PT_EVF_COMM, 0);
	struct pt_summary *s = summarize_all(t);
	/* the internal span is not in the profiled span */
	assert_int_equal(s->t0_ns, US(50));
	assert_int_equal(s->t1_ns, US(350));
	assert_int_equal(s->overview[PT_KIND_OTHER].calls, 0);
	assert_int_equal(s->overview[PT_KIND_KERNEL].union_ns, US(40));
	assert_int_equal(s->overview[PT_KIND_KERNEL].ratio_base_ns, US(100));
	assert_int_equal(s->overview[PT_KIND_KERNEL].calls, 1);
	assert_int_equal(s->overview[PT_KIND_USER_DEFINED].union_ns, US(100));
	assert_int_equal(s->dist.step_ns, US(100));
	assert_int_equal(s->dist.comm_ns, US(100));
	assert_int_equal(s->dist.comp_ns, US(40));
	assert_int_equal(s->dist.overlap_ns, US(40));
	assert_true(s->dist.comm_from_host);
	/* the kernel's whole time still goes to the step that launched it */
	assert_int_equal(s->model[PT_MS_STEP].gpu.total_ns, US(90));
	/* UserDefined: its whole 300 µs of the one thread's 300 µs span */
	assert_int_equal(s->user_defined.cpu_base_ns, US(300));
	pt_summary_free(s);
	pt_trace_free(t);
}

/* Backward is a span per step (as Paddle times it); the time its events
 * take is the other figure, Backward busy. No Dataloader: the reader
 * figures are not applicable. */
static void test_backward_span_and_busy(void **state)
{
	(void)state;
	struct pt_trace *t = new_trace();
	uint32_t m = tu_track(t, 1, 1, -1), bw = tu_track(t, 1, 2, -1);
	tu_ev(t, m, PT_KIND_PROFILE_STEP, "ProfilerStep#1", 0, 100, 0);
	tu_ev(t, m, PT_KIND_OPERATOR, "aten::mm", 5, 10, 0);
	tu_ev(t, bw, PT_KIND_BACKWARD, "autograd::engine::evaluate_function: A", 20, 10, 0);
	tu_ev(t, bw, PT_KIND_BACKWARD, "autograd::engine::evaluate_function: B", 40, 10, 0);
	tu_ev(t, bw, PT_KIND_BACKWARD, "autograd::engine::evaluate_function: C", 45, 15, 0);
	struct pt_summary *s = summarize_all(t);
	assert_int_equal(s->model[PT_MS_BACKWARD].cpu.total_ns, US(40)); /* [20, 60) */
	assert_int_equal(s->backward_busy_ns, US(30));			 /* 10 + [40, 60) */
	assert_int_equal(s->overview[PT_KIND_BACKWARD].union_ns, US(40));
	assert_int_equal(s->overview[PT_KIND_BACKWARD].calls, 1);
	assert_int_equal(s->perf.has_reader, 0);
	pt_summary_free(s);
	pt_trace_free(t);
}

/* torch.compile (the Python helper's ranges): steps 0, 2 and 3 compile,
 * step 1 does not, step 4 neither; the compiling steps are left out of the
 * Model and Perf Summaries unless with_compile, counted per step; every step
 * compiling leaves them in; the advisor names the model that recompiles. */
static struct pt_trace *compile_trace(int all)
{
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	uint32_t h = tu_track(t, 1, 1, -1);
	ev_full(t, h, PT_KIND_PROFILE_STEP, "ProfileStep", 0, 1000, 0, 0, 10);
	ev_full(t, h, PT_KIND_FORWARD, "Forward", 0, 950, 0, 0, 0);
	ev_full(t, h, PT_KIND_OPERATOR, "(compiled Net)", 0, 950, 0, 0, 0);
	ev_full(t, h, PT_KIND_USER_DEFINED, "torch.compile: compile", 10, 890, 0, 0, 0);
	ev_full(t, h, PT_KIND_USER_DEFINED, "torch.compile: graph break", 900, 0, 0, 0, 0);
	ev_full(t, h, PT_KIND_USER_DEFINED, "torch.compile: compile", 910, 30, 0, 0, 0);
	ev_full(t, h, PT_KIND_PROFILE_STEP, "ProfileStep", 1000, 100, 0, 0, 10);
	ev_full(t, h, PT_KIND_FORWARD, "Forward", 1000, 50, 0, 0, 0);
	ev_full(t, h, PT_KIND_OPERATOR, "(compiled Net)", 1000, 50, 0, 0, 0);
	if (all)
		ev_full(t, h, PT_KIND_USER_DEFINED, "torch.compile: recompile", 1010, 10, 0, 0, 0);
	ev_full(t, h, PT_KIND_USER_DEFINED, "data: batch", 1060, 10, 0, 0, 0); /* not compile's */
	ev_full(t, h, PT_KIND_PROFILE_STEP, "ProfileStep", 1100, 200, 0, 0, 10);
	ev_full(t, h, PT_KIND_USER_DEFINED, "torch.compile: recompile", 1110, 140, 0, 0, 0);
	ev_full(t, h, PT_KIND_PROFILE_STEP, "ProfileStep", 1300, 150, 0, 0, 10);
	ev_full(t, h, PT_KIND_USER_DEFINED, "torch.compile: recompile", 1310, 40, 0, 0, 0);
	ev_full(t, h, PT_KIND_PROFILE_STEP, "ProfileStep", 1450, 100, 0, 0, 10);
	if (all)
		ev_full(t, h, PT_KIND_USER_DEFINED, "torch.compile: compile", 1460, 10, 0, 0, 0);
	return t;
}

static void test_compile_steps(void **state)
{
	(void)state;
	struct pt_trace *t = compile_trace(0);
	struct pt_summary *s = summarize_all(t);
	assert_int_equal(s->nsteps, 5);
	const struct pt_step *st = s->steps;
	assert_int_equal(st[0].compile_ns, US(920));
	assert_int_equal(st[0].compiles, 2);
	assert_int_equal(st[0].recompiles, 0);
	assert_int_equal(st[0].graph_breaks, 1);
	assert_int_equal(st[1].compile_ns, 0);
	assert_int_equal(st[2].compile_ns, US(140));
	assert_int_equal(st[2].recompiles, 1);
	assert_int_equal(st[4].compile_ns, 0);
	const struct pt_perf *p = &s->perf;
	assert_int_equal(p->compile_steps, 3);
	assert_int_equal(p->compile_left_out, 1);
	assert_int_equal(p->compile_step_ns, US(1000 + 200 + 150));
	assert_int_equal(p->compile_ns, US(920 + 140 + 40));
	assert_int_equal(p->compiles, 4);
	assert_int_equal(p->recompiles, 2);
	assert_int_equal(p->graph_breaks, 1);
	/* the figures: steps 1 and 4 only */
	assert_int_equal(p->steps, 2);
	assert_int_equal(p->batch.total_ns, US(200));
	assert_int_equal(p->batch.max_ns, US(100));
	assert_true(p->ips_avg > 99999.9 && p->ips_avg < 100000.1); /* 20 samples / 200 µs */
	assert_int_equal(s->model[PT_MS_STEP].calls, 2);
	assert_int_equal(s->model[PT_MS_FORWARD].cpu.total_ns, US(50));
	char line[PT_COMPILE_LINE_MAX];
	assert_int_equal(pt_compile_line(s, line, sizeof line, 0), 1);
	assert_string_equal(line, "torch.compile: 3 of 5 steps compiled (#0 #2 #3, 1.4 ms; 1.1 ms "
				  "compiling), left out of the figures; 4 compiles (2 recompiles), "
				  "1 graph break");
	assert_true(pt_compile_line(s, line, sizeof line, 1) && strlen(line) < 80);
	/* the advisor: recompiles in 2 of 5 steps, naming the compiled model */
	struct pt_advice_list adv;
	pt_advise(t, s, NULL, NULL, NULL, &adv);
	const struct pt_advice *rc = NULL;
	for (size_t i = 0; i < adv.n; i++)
		if (adv.v[i].key == PT_ADV_RECOMPILE)
			rc = &adv.v[i];
	assert_non_null(rc);
	assert_non_null(strstr(rc->evidence, "model (compiled Net) recompiled in 2 of 5 steps"));
	pt_summary_free(s);

	/* --with-compile: every step counts */
	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	o.with_compile = 1;
	s = pt_summarize(t, &o);
	assert_int_equal(s->perf.compile_steps, 3);
	assert_int_equal(s->perf.compile_left_out, 0);
	assert_int_equal(s->perf.steps, 5);
	assert_int_equal(s->model[PT_MS_STEP].cpu.total_ns, US(1550));
	pt_summary_free(s);
	pt_trace_free(t);

	/* every step compiled: nothing would be left, so they all count */
	t = compile_trace(1);
	s = summarize_all(t);
	assert_int_equal(s->perf.compile_steps, 5);
	assert_int_equal(s->perf.compile_left_out, 0);
	assert_int_equal(s->perf.steps, 5);
	assert_int_equal(pt_compile_line(s, line, sizeof line, 0), 1);
	assert_non_null(strstr(line, "in the figures (every step compiled)"));
	pt_summary_free(s);
	pt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_overview_union_across_threads),
	    cmocka_unit_test(test_nested_ops_and_detail_tree),
	    cmocka_unit_test(test_overhang_tolerance),
	    cmocka_unit_test(test_gpu_by_correlation),
	    cmocka_unit_test(test_gpu_activity_before_launch),
	    cmocka_unit_test(test_user_defined),
	    cmocka_unit_test(test_pytorch_step),
	    cmocka_unit_test(test_autograd_nodes_mark_backward),
	    cmocka_unit_test(test_feed_interleaved),
	    cmocka_unit_test(test_paddle_steps_and_perf),
	    cmocka_unit_test(test_perf_without_samples),
	    cmocka_unit_test(test_ips_extremes_need_a_fetch),
	    cmocka_unit_test(test_ranks_keep_their_phases),
	    cmocka_unit_test(test_tokens_per_step),
	    cmocka_unit_test(test_accumulation_backward_union),
	    cmocka_unit_test(test_step_window),
	    cmocka_unit_test(test_distributed),
	    cmocka_unit_test(test_device_util),
	    cmocka_unit_test(test_empty_trace),
	    cmocka_unit_test(test_no_steps),
	    cmocka_unit_test(test_union_random),
	    cmocka_unit_test(test_gpu_to_steps_random),
	    cmocka_unit_test(test_overhang_picks_the_right_parent),
	    cmocka_unit_test(test_ratio_counts_nested_same_name_once),
	    cmocka_unit_test(test_user_defined_over_threads),
	    cmocka_unit_test(test_outside_steps_consistent),
	    cmocka_unit_test(test_backward_span_and_busy),
	    cmocka_unit_test(test_step_ordinals),
	    cmocka_unit_test(test_compile_steps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
