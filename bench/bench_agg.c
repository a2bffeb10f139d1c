/*
 * bench_agg.c - pt_summarize over a synthetic PyTorch-like trace of about
 * N events (default 1,000,000; argv[1] overrides): steps with a
 * dataloader, nested operators launching kernels on two streams, backward
 * on an autograd thread, an optimizer step. Prints ns per event beside a
 * reference: the same events only iterated out of the store (the floor any
 * consumer pays), as a ratio; and beside pt_summarize on the calling thread
 * alone (its interval lists not on a thread of their own).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/agg.h"
#include "proftop/trace.h"
#include "model/util.h"

#include "synth.h"

int main(int argc, char **argv)
{
	uint64_t target = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	struct pt_trace *t = build(target);
	uint64_t n = pt_store_count(t->store);
	pt_store_sort(t->store);

	/* reference: iterate every track out of the store */
	uint64_t r0 = pt_now_ns(), sink = 0;
	for (uint32_t i = 0; i < t->ntracks; i++) {
		struct pt_store_iter it;
		pt_store_iter_init(&it, t->store, i, 0, UINT64_MAX);
		struct pt_event *ev;
		while ((ev = pt_store_iter_next(&it)))
			sink += ev->dur_ns;
		pt_store_iter_done(&it);
	}
	uint64_t ref_ns = pt_now_ns() - r0;

	/* pt_summarize as it runs (its interval lists on a thread of their
	 * own, agg_pipe.c) and on the calling thread alone, alternately:
	 * medians of 5 of the wall time and of the cores used (CPU / wall) */
	enum { REPS = 5 };
	uint64_t dts[2][REPS];
	double cores[2][REPS];
	struct pt_summary *s = NULL;
	for (int rep = 0; rep < REPS; rep++)
		for (int way = 0; way < 2; way++) {
			struct pt_agg_opts o;
			pt_agg_opts_init(&o);
			o.lists_thread = way ? 1 : 2;
			uint64_t t0 = pt_now_ns(), c0 = pt_cpu_ns();
			struct pt_summary *x = pt_summarize(t, &o);
			uint64_t dt = pt_now_ns() - t0, dc = pt_cpu_ns() - c0;
			dts[way][rep] = dt;
			cores[way][rep] = dt ? (double)dc / (double)dt : 0;
			if (s)
				pt_summary_free(s);
			s = x;
		}
	for (int w = 0; w < 2; w++)
		for (int i = 1; i < REPS; i++)
			for (int j = i; j > 0 && dts[w][j - 1] > dts[w][j]; j--) {
				uint64_t x = dts[w][j];
				dts[w][j] = dts[w][j - 1];
				dts[w][j - 1] = x;
				double y = cores[w][j];
				cores[w][j] = cores[w][j - 1];
				cores[w][j - 1] = y;
			}
	for (int w = 0; w < 2; w++) /* cores: their own median */
		for (int i = 1; i < REPS; i++)
			for (int j = i; j > 0 && cores[w][j - 1] > cores[w][j]; j--) {
				double y = cores[w][j];
				cores[w][j] = cores[w][j - 1];
				cores[w][j - 1] = y;
			}
	uint64_t best = dts[0][REPS / 2], one = dts[1][REPS / 2];
	printf("events            %llu (%zu steps, %zu op rows, %zu kernel rows)\n",
	       (unsigned long long)n, s->nsteps, s->operators.n, s->kernels.n);
	printf("pt_summarize      %.1f ms, %.1f ns/event, %.2f cores (median of %d)\n", best / 1e6,
	       (double)best / (double)n, cores[0][REPS / 2], REPS);
	printf("  one thread      %.1f ms, %.1f ns/event, %.2f cores (lists_thread = 1; ratio "
	       "%.2fx)\n",
	       one / 1e6, (double)one / (double)n, cores[1][REPS / 2],
	       one ? (double)best / (double)one : 0.0);
	printf("reference (iter)  %.1f ms, %.1f ns/event (checksum %llu)\n", ref_ns / 1e6,
	       (double)ref_ns / (double)n, (unsigned long long)(sink & 0xff));
	printf("ratio             %.2fx\n", ref_ns ? (double)best / (double)ref_ns : 0.0);
	pt_summary_free(s);
	pt_trace_free(t);
	return 0;
}
