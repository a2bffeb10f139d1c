/*
 * test_agg.c - the aggregator on small hand-built traces whose answers are
 * computed by hand (times in µs, asserted in ns): Overview unions across
 * threads (Paddle's "After merged" example), nesting and self time with the
 * legacy 1 µs overhang, the op-detail tree order, GPU time by correlation
 * (activity before and after its launch, unknown corr), user-defined ranges
 * and PyTorch-style steps, fed in any order. Steps and their figures are
 * test_agg_steps.c's, the rules checked against brute force test_agg_rules.c's.
 */
#include "agg_util.h"

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
	    cmocka_unit_test(test_feed_interleaved),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
