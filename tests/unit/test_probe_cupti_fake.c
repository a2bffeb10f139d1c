/*
 * test_probe_cupti_fake.c - the CUPTI backend against a fake libcupti
 * (tests/gpu/fake_cupti.c, built into a temporary directory) driving
 * subscribe / buffers / flush / stop for CUPTI 11.8, 12.4, 12.8, 13.0 and
 * 13.1: every kernel launched arrives, attributed, after its launch; a clock
 * that is not CLOCK_MONOTONIC; another profiler taking the activity API
 * mid-run, through the probe's cupti* symbols (shared) and around them (the
 * watchdog says so); a reader slower than the records (the ring never
 * overflows); kernels still running at the stop (counted as dropped). Built
 * three times, as test_probe_cupti.c is.
 */
#include "cupti_util.h"

#if HAVE_STRUCTS
/* ---- a fake libcupti: the probe's own start, buffers, flushes, stop ---- */

struct fake {
	void *h;
	uint32_t (*launch)(int api, const char *name, uint32_t dev, uint32_t stream, uint64_t dur,
			   int n);
	uint32_t (*copy)(uint64_t bytes, uint32_t dev, uint32_t stream);
	void (*finish)(void);
	void (*reset)(uint32_t version, int refuse_clock);
	void (*foreign_start)(void);
	uint64_t (*foreign_stop)(void);
	int (*has_clock)(void);
	uint64_t (*kinds)(void);
	CUptiResult (*flush)(uint32_t);
	CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
} F;

static int fake_ready(void)
{
	if (!g_fake[0])
		return 0;
	if (F.h)
		return 1;
	F.h = dlopen(g_fake, RTLD_NOW | RTLD_LOCAL);
	if (!F.h)
		return 0;
	*(void **)&F.launch = dlsym(F.h, "fake_cupti_launch");
	*(void **)&F.copy = dlsym(F.h, "fake_cupti_memcpy");
	*(void **)&F.finish = dlsym(F.h, "fake_cupti_gpu_finish");
	*(void **)&F.reset = dlsym(F.h, "fake_cupti_reset");
	*(void **)&F.foreign_start = dlsym(F.h, "fake_cupti_foreign_start");
	*(void **)&F.foreign_stop = dlsym(F.h, "fake_cupti_foreign_stop");
	*(void **)&F.has_clock = dlsym(F.h, "fake_cupti_has_clock");
	*(void **)&F.kinds = dlsym(F.h, "fake_cupti_kinds");
	*(void **)&F.flush = dlsym(F.h, "cuptiActivityFlushAll");
	*(void **)&F.next = dlsym(F.h, "cuptiActivityGetNextRecord");
	return F.launch && F.reset && F.flush;
}

#define NEED_FAKE()                                                                                \
	do {                                                                                       \
		if (!fake_ready()) {                                                               \
			fprintf(stderr, "skipped: no fake libcupti (no compiler?)\n");             \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

/* The version the fake plays in the tests below: one whose records this header set declares. */
#if CUPTI_API_VERSION >= 130000
#define TEST_VERSION 130100
#else
#define TEST_VERSION 18
#endif

static void start_fake(uint32_t version, int refuse_clock)
{
	char why[256];
	drain(NULL); /* what earlier tests left */
	pt_cupti_reset_for_test();
	F.reset(version, refuse_clock);
	assert_int_equal(pt_cupti_start(g_fake, 0, why, sizeof why), 0);
	assert_int_equal(pt_cupti_state(), PT_CUPTI_ON);
}

/* Every way a kernel gets launched, once, each in an op of its own. */
static uint32_t launch_all_ways(void)
{
	proftop_op_push("op::runtime");
	F.launch(0, "_Z4gemmv", 0, 7, 5000, 1);
	proftop_op_pop();
	proftop_op_push("op::triton");
	F.launch(1, "triton_poi_fused_add_0", 0, 7, 3000, 1);
	proftop_op_pop();
	proftop_op_push("op::cluster");
	F.launch(2, "cutlass_sm90_gemm", 1, 9, 3000, 1);
	proftop_op_pop();
	proftop_op_push("op::graph");
	F.launch(3, "graph_kernel", 0, 11, 1000, 3);
	proftop_op_pop();
	proftop_op_push("op::copy");
	F.copy(4096, 0, 7);
	proftop_op_pop();
	return 6; /* kernels */
}

static void check_ops(struct pt_trace *t)
{
	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	struct pt_summary *sum = pt_summarize(t, &o);
	static const char *const ops[] = {"op::runtime", "op::triton", "op::cluster", "op::graph",
					  "op::copy"};
	for (size_t i = 0; i < 5; i++) {
		const struct pt_row *r = row_named(t, &sum->operators, ops[i]);
		assert_non_null(r);
		assert_true(r->gpu.total_ns > 0); /* its kernels found their launch */
	}
	pt_summary_free(sum);
}

static void fake_version(uint32_t version, int refuse_clock, int callback_expected)
{
	start_fake(version, refuse_clock);
	assert_int_equal(F.has_clock(), callback_expected);
	uint64_t dropped0 = source_dropped();
	uint32_t want = launch_all_ways();
	F.finish();
	assert_int_equal(pt_cupti_stop(5000), 0);
	assert_int_equal(pt_cupti_state(), PT_CUPTI_STOPPED);
	/* stopped: nothing of ours is enabled any more */
	assert_int_equal(F.kinds() & (1ull << CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), 0);
	struct pt_trace *t = drain(NULL);
	struct seen *s = malloc(sizeof *s);
	collect(t, s);
	assert_int_equal(s->nkernels, want);
	assert_int_equal(s->nmemcpy, 1);
	assert_int_equal(count_runtime(s, "cuLaunchKernel"), 1);
	assert_int_equal(count_runtime(s, "cuLaunchKernelEx"), 1);
	assert_int_equal(count_runtime(s, "cudaGraphLaunch"), 1);
	assert_kernels_after_launch(s);
	check_ops(t);
	assert_int_equal(pt_session_stats(g_sess)->source_dropped, dropped0);
	free(s);
}

static void test_fake_cupti_118(void **state)
{
	NEED_FAKE();
	fake_version(18, 0, 1);
}

#if CUPTI_API_VERSION >= 130000 /* the fake writes 12.x and 13.x records with these structs */
static void test_fake_cupti_12(void **state)
{
	NEED_FAKE();
	fake_version(22, 0, 1); /* 12.4: the timestamp callback is used */
	fake_version(26, 0, 0); /* 12.8: zero-timestamp bug, CUPTI's clock converted */
}

static void test_fake_cupti_13(void **state)
{
	NEED_FAKE();
	fake_version(130001, 0, 0); /* 13.0: zero-timestamp bug, CUPTI's clock converted */
	fake_version(130100, 0, 1); /* 13.1: fixed */
}
#endif

/* An old libcupti that refuses the timestamp callback: CLOCK_REALTIME records. */
static void test_fake_refused_clock(void **state)
{
	NEED_FAKE();
	fake_version(18, 1, 0);
}

/* torch.profiler's Kineto, calling the activity API through the probe's symbols */
static uint64_t g_k_kernels, g_k_bad, g_k_reqs, g_k_min, g_k_max;

static uint64_t CUPTIAPI k_clock(void)
{
#if defined(__x86_64__)
	return __builtin_ia32_rdtsc();
#else
	return pt_clock_mono_ns() * 3 + 12345;
#endif
}

static void CUPTIAPI k_req(uint8_t **b, size_t *size, size_t *max)
{
	*size = 32 << 10;
	*b = aligned_alloc(8, *size);
	*max = 0;
	g_k_reqs++;
}

static void CUPTIAPI k_done(CUcontext c, uint32_t st, uint8_t *b, size_t size, size_t valid)
{
	CUpti_Activity *r = NULL;
	while (F.next(b, valid, &r) == CUPTI_SUCCESS && r) {
		if (r->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			continue;
		uint64_t start;
		memcpy(&start, (uint8_t *)r + 16, 8);
		if (!start) {
			g_k_bad++;
			continue;
		}
		g_k_kernels++;
		if (!g_k_min || start < g_k_min)
			g_k_min = start;
		if (start > g_k_max)
			g_k_max = start;
	}
	free(b);
}

static void test_fake_shared_with_kineto(void **state)
{
	NEED_FAKE();
	start_fake(TEST_VERSION, 0);
	assert_true(F.has_clock());
	uint64_t dropped0 = source_dropped();
	uint32_t want = 0;
	want += F.launch(0, "_Z4gemmv", 0, 7, 2000, 1) ? 1 : 0;
	want += F.launch(1, "triton_a", 0, 7, 2000, 1) ? 1 : 0;
	F.finish();
	/* its trace starts: clock, buffer callbacks, kinds */
	assert_int_equal(cuptiActivityRegisterTimestampCallback(k_clock), CUPTI_SUCCESS);
	assert_int_equal(cuptiActivityRegisterCallbacks(k_req, k_done), CUPTI_SUCCESS);
	assert_int_equal(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
	assert_int_equal(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
	uint64_t w0 = k_clock();
	for (int i = 0; i < 3; i++)
		want += F.launch(0, "_Z10in_windowv", 0, 7, 2000, 1) ? 1 : 0;
	F.finish();
	uint64_t w1 = k_clock();
	/* ... and stops: every kind off, a forced flush */
	assert_int_equal(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
	assert_int_equal(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
	assert_int_equal(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
	/* it got its window's kernels, on its own clock */
	assert_true(g_k_reqs > 0);
	assert_true(g_k_kernels >= 3);
	assert_int_equal(g_k_bad, 0);
	assert_true(g_k_max >= w0 && g_k_max <= w1);
	/* proftop kept its kinds, and its clock is back */
	assert_true(F.kinds() & (1ull << CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	assert_false(F.kinds() & (1ull << CUPTI_ACTIVITY_KIND_RUNTIME));
	want += F.launch(0, "_Z5afterv", 0, 7, 2000, 1) ? 1 : 0;
	want += F.launch(2, "after_ex", 0, 7, 2000, 1) ? 1 : 0;
	F.finish();
	/* a second window, to see it come and go again */
	cuptiActivityRegisterTimestampCallback(k_clock);
	cuptiActivityRegisterCallbacks(k_req, k_done);
	cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	want += F.launch(1, "triton_b", 0, 7, 2000, 1) ? 1 : 0;
	F.finish();
	cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	/* a finalize while proftop traces is not passed on */
	assert_int_equal(cuptiFinalize(), CUPTI_SUCCESS);
	assert_true(F.kinds() & (1ull << CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	want += F.launch(0, "_Z4lastv", 0, 7, 2000, 1) ? 1 : 0;
	F.finish();
	assert_int_equal(pt_cupti_stop(5000), 0);
	struct pt_trace *t = drain(NULL);
	struct seen *s = malloc(sizeof *s);
	collect(t, s);
	assert_int_equal(s->nkernels, want); /* before, during and after its windows */
	assert_kernels_after_launch(s);    /* its TSC timestamps converted back */
	assert_true(has_note(s, "started collecting GPU activity"));
	assert_true(has_note(s, "GPU collection ended"));
	assert_true(has_note(s, "cuptiFinalize"));
	assert_int_equal(pt_session_stats(g_sess)->source_dropped, dropped0);
	free(s);
	/* with the probe stopped, the calls go straight to CUPTI */
	assert_int_equal(cuptiActivityRegisterCallbacks(k_req, k_done), CUPTI_SUCCESS);
	assert_int_equal(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
}

/* Another component takes the activity API without the probe in the way. */
static void test_fake_taken_unseen(void **state)
{
	NEED_FAKE();
	start_fake(TEST_VERSION, 0);
	F.launch(0, "_Z6beforev", 0, 7, 2000, 1);
	F.finish();
	F.foreign_start();
	for (int i = 0; i < 4; i++)
		F.launch(0, "_Z6takenv", 0, 7, 2000, 1);
	F.finish();
	/* the watchdog (300 ms here) speaks within a few of its periods */
	struct seen *s = malloc(sizeof *s);
	struct pt_trace *t = NULL;
	for (int i = 0; i < 600; i++) {
		F.launch(0, "_Z6takenv", 0, 7, 2000, 1);
		usleep(50000);
		t = drain(t);
		collect(t, s);
		if (has_note(s, "may have taken CUPTI's activity buffers"))
			break;
	}
	assert_true(has_note(s, "may have taken CUPTI's activity buffers"));
	assert_true(F.foreign_stop() >= 4);
	assert_int_equal(pt_cupti_stop(5000), 0);
	free(s);
}

/* Records dropped by the CUPTI thread's ring so far. */
static uint64_t cupti_ring_dropped(void)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < G.nrings; i++) {
		struct pt_shm_ring *r = pt_shm_ring_at(G.base, G.hdr, i);
		if (!strcmp(r->thread_name, "proftop-cupti"))
			n += __atomic_load_n(&r->dropped, __ATOMIC_RELAXED);
	}
	return n;
}

/* Keeps a reader slot's heartbeat fresh, as a reader's own thread would,
 * so that the reader stays attached however long the draining thread is
 * kept off the CPU: on a loaded machine the test thread once went more
 * than the 2 s timeout between drains, and the probe rightly went back to
 * flight recording, overwriting what nobody was reading. */
struct keeper {
	struct pt_shm_reader *slot;
	int stop;
};

static void *keep_attached(void *arg)
{
	struct keeper *k = arg;
	while (!__atomic_load_n(&k->stop, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&k->slot->heartbeat_ns, pt_clock_mono_ns(), __ATOMIC_RELEASE);
		usleep(10000);
	}
	return NULL;
}

/* A burst larger than the ring, a reader draining every 20 ms: the CUPTI
 * thread waits for room (the ring never overflows) and every kernel arrives. */
static void test_fake_no_overflow(void **state)
{
	NEED_FAKE();
	start_fake(TEST_VERSION, 0);
	uint64_t ring_dropped0 = cupti_ring_dropped();
	struct pt_trace *t = drain(NULL); /* attached from here on */
	assert_true(g_sess->slot >= 0);
	struct keeper k = {&g_sess->h->readers[g_sess->slot], 0};
	pthread_t keeper;
	assert_int_equal(pthread_create(&keeper, NULL, keep_attached, &k), 0);
	/* 24000 (6000 under valgrind) slots for a 4096-slot ring */
	const uint32_t n = getenv("PT_UNDER_VALGRIND") ? 3000 : 12000;
	for (uint32_t i = 0; i < n; i++) {
		F.launch(0, "_Z4gemmv", 0, 7, 100, 1);
		if (i % 1000 == 999)
			t = drain(t); /* the heartbeat, and the launching thread's own ring */
	}
	uint64_t t0 = pt_clock_mono_ns();
	F.finish(); /* ten buffers complete at once */
	struct seen *s = malloc(sizeof *s);
	for (int i = 0; i < 3000; i++) { /* at most a minute: valgrind is slow */
		usleep(20000);
		t = drain(t);
		collect(t, s);
		if (s->nkernels >= n)
			break;
	}
	__atomic_store_n(&k.stop, 1, __ATOMIC_RELEASE);
	pthread_join(keeper, NULL);
	print_message("# %u of %u kernels in %.0f ms; ring dropped %llu, source lost %llu\n",
		      (unsigned)s->nkernels, n, (double)(pt_clock_mono_ns() - t0) / 1e6,
		      (unsigned long long)(cupti_ring_dropped() - ring_dropped0),
		      (unsigned long long)pt_trace_source_lost(t));
	assert_int_equal(s->nkernels, n);
	assert_int_equal(cupti_ring_dropped(), ring_dropped0);
	assert_int_equal(pt_cupti_stop(5000), 0);
	free(s);
}

/* A finished kernel in a buffer far from full reaches the reader while the
 * job runs (the periodic flush), not at the end. */
static void test_fake_periodic(void **state)
{
	NEED_FAKE();
	start_fake(TEST_VERSION, 0);
	F.launch(0, "_Z4soonv", 0, 7, 1000, 1);
	F.finish();
	struct pt_trace *t = drain(NULL);
	struct seen *s = malloc(sizeof *s);
	for (int i = 0; i < 500; i++) {
		collect(t, s);
		if (s->nkernels)
			break;
		usleep(20000);
		t = drain(t);
	}
	assert_int_equal(s->nkernels, 1);
	assert_int_equal(pt_cupti_state(), PT_CUPTI_ON); /* still tracing */
	assert_int_equal(pt_cupti_stop(5000), 0);
	free(s);
}

/* Kernels still running at the stop come back unfinished: counted as dropped. */
static void test_fake_stop_unfinished(void **state)
{
	NEED_FAKE();
	start_fake(TEST_VERSION, 0);
	uint64_t dropped0 = source_dropped();
	for (int i = 0; i < 5; i++)
		F.launch(0, "_Z4donev", 0, 7, 1000, 1);
	F.finish();
	for (int i = 0; i < 3; i++)
		F.launch(0, "_Z7runningv", 0, 7, 1000, 1);
	assert_int_equal(pt_cupti_stop(5000), 0);
	assert_int_equal(pt_cupti_stop(5000), 0); /* again: nothing more happens */
	struct pt_trace *t = drain(NULL);
	struct seen *s = malloc(sizeof *s);
	collect(t, s);
	assert_int_equal(s->nkernels, 5);
	assert_int_equal(pt_session_stats(g_sess)->source_dropped, dropped0 + 3);
	free(s);
}

#endif /* HAVE_STRUCTS */

int main(void)
{
	const struct CMUnitTest tests[] = {
#if HAVE_STRUCTS
		cmocka_unit_test(test_fake_cupti_118),
#if CUPTI_API_VERSION >= 130000
		cmocka_unit_test(test_fake_cupti_12),
		cmocka_unit_test(test_fake_cupti_13),
#endif
		cmocka_unit_test(test_fake_refused_clock),
		cmocka_unit_test(test_fake_shared_with_kineto),
		cmocka_unit_test(test_fake_taken_unseen),
		cmocka_unit_test(test_fake_no_overflow),
		cmocka_unit_test(test_fake_periodic),
		cmocka_unit_test(test_fake_stop_unfinished),
#else
		cmocka_unit_test(test_no_cuda_headers),
#endif
	};
	return cupti_tests_done(cmocka_run_group_tests(tests, build_fake, NULL));
}
