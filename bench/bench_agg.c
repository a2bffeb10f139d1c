/*
 * bench_agg.c - pt_summarize over a synthetic PyTorch-like trace of about
 * N events (default 1,000,000; argv[1] overrides): steps with a
 * dataloader, nested operators launching kernels on two streams, backward
 * on an autograd thread, an optimizer step. Prints ns per event beside a
 * reference: the same events only iterated out of the store (the floor any
 * consumer pays), as a ratio.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/agg.h"
#include "proftop/trace.h"
#include "util.h"

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

	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	/* median of 5 */
	uint64_t dts[5];
	struct pt_summary *s = NULL;
	for (int rep = 0; rep < 5; rep++) {
		uint64_t t0 = pt_now_ns();
		s = pt_summarize(t, &o);
		dts[rep] = pt_now_ns() - t0;
		if (rep < 4)
			pt_summary_free(s);
	}
	for (int i = 1; i < 5; i++)
		for (int j = i; j > 0 && dts[j - 1] > dts[j]; j--) {
			uint64_t x = dts[j];
			dts[j] = dts[j - 1];
			dts[j - 1] = x;
		}
	uint64_t best = dts[2];
	printf("events            %llu (%zu steps, %zu op rows, %zu kernel rows)\n",
	       (unsigned long long)n, s->nsteps, s->operators.n, s->kernels.n);
	printf("pt_summarize      %.1f ms, %.1f ns/event (median of 5)\n", best / 1e6, (double)best / (double)n);
	printf("reference (iter)  %.1f ms, %.1f ns/event (checksum %llu)\n", ref_ns / 1e6,
	       (double)ref_ns / (double)n, (unsigned long long)(sink & 0xff));
	printf("ratio             %.2fx\n", ref_ns ? (double)best / (double)ref_ns : 0.0);
	pt_summary_free(s);
	pt_trace_free(t);
	return 0;
}
