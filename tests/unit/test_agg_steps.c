/*
 * test_agg_steps.c - steps and the figures over them, on hand-built traces:
 * Paddle-style steps (phases, GPU per phase) and the Perf Summary, gradient
 * accumulation, IPS extremes, tokens per step, ranks keeping their phases,
 * step and time windows, Distributed and Device figures, empty and step-less
 * traces.
 */
#include "agg_util.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
