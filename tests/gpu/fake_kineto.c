/*
 * fake_kineto.c - what torch.profiler's Kineto does with CUPTI, for
 * tests/e2e/test_cupti.sh: linked against libcupti.so.12 (the fake), so its
 * calls go through the dynamic linker and reach a preloaded probe's cupti*
 * symbols first, as libkineto's do. A trace window registers its TSC clock,
 * its buffer callbacks and the kinds it wants; stopping disables them all and
 * forces a flush. It counts the kernels it got and checks their timestamps
 * lie inside its window on its own clock.
 *   cc -shared -fPIC -I$CUDA_HOME/include -o DIR/libfake_kineto.so fake_kineto.c \
 *      -LDIR -l:libcupti.so.12 -Wl,-rpath,'$ORIGIN'
 */
#include <cupti.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define EXPORT __attribute__((visibility("default")))

static uint64_t g_kernels, g_outside, g_w0, g_w1;

static uint64_t CUPTIAPI k_clock(void)
{
#if defined(__x86_64__)
	return __rdtsc();
#else
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) * 3 + 12345;
#endif
}

static void CUPTIAPI k_req(uint8_t **b, size_t *size, size_t *max)
{
	*size = 64 << 10;
	*b = aligned_alloc(8, *size);
	*max = 0;
}

static void CUPTIAPI k_done(CUcontext c, uint32_t s, uint8_t *b, size_t size, size_t valid)
{
	(void)c;
	(void)s;
	(void)size;
	CUpti_Activity *r = NULL;
	while (cuptiActivityGetNextRecord(b, valid, &r) == CUPTI_SUCCESS) {
		if (r->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			continue;
		uint64_t start;
		memcpy(&start, (uint8_t *)r + 16, 8);
		/* like Kineto, it keeps what lies in its window (others are not errors) */
		if (start >= g_w0 && (!g_w1 || start <= g_w1))
			g_kernels++;
		else
			g_outside++;
	}
	free(b);
}

EXPORT void kineto_start(void)
{
	cuptiActivityRegisterTimestampCallback(k_clock);
	g_w0 = k_clock();
	g_w1 = 0;
	cuptiActivityRegisterCallbacks(k_req, k_done);
	cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
}

/* Returns the kernels of its windows so far. */
EXPORT uint64_t kineto_stop(void)
{
	g_w1 = k_clock();
	cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	return g_kernels;
}
