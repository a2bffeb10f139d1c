/*
 * bench_cupti.c - speed of the CUPTI translation (backends/probe_cupti_xlate.c
 * and the clock map of probe_cupti_clock.c, included here): synthetic CUDA 13
 * activity records (kernels over 256 kernel names, 1 in 20 an NCCL kernel,
 * copies, memsets, external correlation), read through the CUPTI 13.0
 * layout and checked against their launch in the launch table, translated
 * into 32-byte session records written to a 16384-slot ring, beside a
 * reference that only copies 64 bytes per record into the same ring.
 * Target: >= 20 M records/s. Needs the CUDA headers (built with
 * -DPT_HAVE_CUDA_HEADERS -I$CUDA_HOME/include); prints "skipped" without them.
 *   bench_cupti [records] [runs]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../backends/probe_cupti_clock.c"
#include "../backends/probe_cupti_xlate.c"
#ifdef PT_HAVE_CUDA_HEADERS
#include <cupti.h>
#endif

#ifndef PT_HAVE_CUDA_HEADERS
int main(void)
{
	printf("bench_cupti: skipped (built without the CUDA headers)\n");
	return 0;
}
#else

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t g_next = 8;
static uint32_t bench_intern(void *ctx, const char *s, size_t len)
{
	(void)ctx;
	(void)s;
	uint32_t off = g_next;
	g_next += (uint32_t)((len + 16) & ~7u);
	return off;
}

#define RING 16384u

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	if (n < 100)
		n = 100;
	/* one buffer of mixed records, as CUPTI hands them over */
	const void **recs = malloc(n * sizeof *recs);
	CUpti_ActivityKernel10 *k = calloc(n, sizeof *k);
	CUpti_ActivityMemcpy6 *m = calloc(n, sizeof *m);
	CUpti_ActivityMemset4 *s = calloc(n, sizeof *s);
	CUpti_ActivityExternalCorrelation *e = calloc(n, sizeof *e);
	static char names[256][96];
	for (int i = 0; i < 256; i++)
		snprintf(names[i], sizeof names[i], i % 20 == 0 ? "ncclDevKernel_AllReduce_%d"
							     : "_Z%dvoid_gemm_kernel_variant_%dPfS_i",
			 i, i);
	/* records on the session clock, each launched 1 us before it starts */
	static struct pt_cupti_launch launches[PT_CUPTI_LAUNCHES];
	const uint64_t first = now_ns();
	uint64_t t = first;
	for (size_t i = 0; i < n; i++) {
		pt_cupti_launch_note(launches, (uint32_t)i + 1, t - 1000);
		uint32_t corr = (uint32_t)i + 1;
		switch (i % 20) {
		case 0: case 1: case 2:
			m[i].kind = CUPTI_ACTIVITY_KIND_MEMCPY;
			m[i].copyKind = (uint8_t)(1 + i % 2);
			m[i].bytes = 4096;
			m[i].start = t;
			m[i].end = t + 500;
			m[i].correlationId = corr;
			m[i].streamId = 7;
			recs[i] = &m[i];
			break;
		case 3: case 4:
			s[i].kind = CUPTI_ACTIVITY_KIND_MEMSET;
			s[i].bytes = 512;
			s[i].start = t;
			s[i].end = t + 100;
			s[i].correlationId = corr;
			recs[i] = &s[i];
			break;
		case 5:
			e[i].kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
			e[i].externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
			e[i].externalId = i;
			e[i].correlationId = corr + 1;
			recs[i] = &e[i];
			break;
		default:
			k[i].kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
			k[i].name = names[(i * 7) & 255];
			k[i].start = t;
			k[i].end = t + 3000;
			k[i].deviceId = (uint32_t)(i & 1);
			k[i].streamId = 7 + (uint32_t)(i & 3);
			k[i].correlationId = corr;
			recs[i] = &k[i];
			break;
		}
		t += 1000;
	}
	struct pt_shm_rec *ring = calloc(RING, sizeof *ring);
	static struct pt_cupti_xlate x;
	static struct pt_cupti_clock clock;
	pt_cupti_clock_init(&clock, launches, first, PT_CLK_MONO);
	pt_cupti_xlate_init(&x, pt_cupti_layout_for(130001, NULL), &clock, bench_intern, NULL, NULL);
	pt_cupti_xlate_buffer(&x, t);
	double best = 0, best_ref = 0;
	uint64_t sink = 0;
	for (int r = 0; r < runs; r++) {
		uint64_t head = 0, t0 = now_ns();
		for (size_t i = 0; i < n; i++) {
			struct pt_shm_rec out[2];
			int c = pt_cupti_xlate(&x, recs[i], out);
			for (int j = 0; j < c; j++)
				ring[head++ & (RING - 1)] = out[j];
		}
		uint64_t t1 = now_ns();
		sink += head;
		double rate = (double)n / ((double)(t1 - t0) / 1e9);
		if (rate > best)
			best = rate;
		/* reference: touch each record and store two records' worth of bytes */
		head = 0;
		t0 = now_ns();
		for (size_t i = 0; i < n; i++) {
			const struct pt_shm_rec *src = recs[i];
			ring[head++ & (RING - 1)] = src[0];
			ring[head++ & (RING - 1)] = src[1];
		}
		t1 = now_ns();
		sink += ring[(head - 1) & (RING - 1)].arg;
		rate = (double)n / ((double)(t1 - t0) / 1e9);
		if (rate > best_ref)
			best_ref = rate;
	}
	printf("cupti translation: %.1f M records/s (best of %d runs of %zu records; target >= 20)\n",
	       best / 1e6, runs, n);
	printf("reference copy:    %.1f M records/s  ratio %.2f  [kernels %llu comm %llu memcpy %llu "
	       "memset %llu ext %llu bad %llu] %llu\n",
	       best_ref / 1e6, best / best_ref, (unsigned long long)x.kernels,
	       (unsigned long long)x.comms, (unsigned long long)x.memcpys,
	       (unsigned long long)x.memsets, (unsigned long long)x.ext_records,
	       (unsigned long long)x.bad_ts, (unsigned long long)(sink & 1));
	free(ring);
	free(recs);
	free(k);
	free(m);
	free(s);
	free(e);
	return 0;
}
#endif
