/*
 * bench_tui_draw.c - one full redraw of each view into the in-memory canvas at
 * 200x60 with one million events in the store (timeline included), after
 * the model is built. Prints the median and worst of 20 redraws per view
 * and the model build time. Target: at most 5 ms per redraw.
 *
 *   build/bench/bench_tui_draw [EVENTS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "proftop/store.h"
#include "util.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	uint64_t nev = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	struct pt_trace *t = pt_trace_new((size_t)2 << 30);
	struct pt_track_key hk = {1, 1, 0, 0}, gk = {1, 7, 0, 0};
	uint32_t host = pt_trace_track(t, &hk), gpu = pt_trace_track(t, &gk);
	pt_trace_track_device(t, gpu, 0, 7);
	char name[64];
	uint32_t names[200];
	for (int i = 0; i < 200; i++) {
		int n = snprintf(name, sizeof name, "aten::op_%d", i);
		names[i] = pt_trace_intern(t, name, (size_t)n);
	}
	uint32_t step = pt_trace_intern(t, "ProfilerStep#", 13);
	uint64_t ts = 0, made = 0;
	/* steps of 1000 ops, each with a kernel */
	while (made < nev) {
		struct pt_event s = {ts, 1000 * 10000ull, 0, step, host, 0, PT_KIND_PROFILE_STEP, 0, 0};
		pt_trace_add(t, &s);
		made++;
		for (int i = 0; i < 1000 && made + 2 <= nev; i++) {
			uint64_t st = ts + (uint64_t)i * 10000ull;
			struct pt_event op = {st, 8000, 0, names[i % 200], host, (uint32_t)made, PT_KIND_OPERATOR, 0, 0};
			struct pt_event k = {st + 2000, 7000, 0, names[(i * 7) % 200], gpu, (uint32_t)made, PT_KIND_KERNEL, 0, 0};
			pt_trace_add(t, &op);
			pt_trace_add(t, &k);
			made += 2;
		}
		ts += 1000 * 10000ull;
	}
	struct tui_opts o;
	tui_opts_init(&o);
	struct tui_app a;
	uint64_t b0 = pt_now_ns();
	tui_app_init(&a, t, &o);
	uint64_t b1 = pt_now_ns();
	printf("events %llu, model build (pt_summarize + meters) %.1f ms\n",
	       (unsigned long long)pt_store_count(t->store), (double)(b1 - b0) / 1e6);
	struct tui_canvas c;
	tui_canvas_init(&c, 200, 60, 0);
	double worst_med = 0;
	for (int v = 0; v < TUI_V__COUNT; v++) {
		tui_app_key(&a, '1' + v);
		uint64_t d[20];
		if (v == TUI_V_TIMELINE) { /* cold: nothing cached for this range */
			uint64_t f0 = pt_now_ns();
			tui_app_draw(&a, &c);
			printf("Timeline     first frame (builds the per-lane index once per data "
			       "change) %.3f ms\n",
			       (double)(pt_now_ns() - f0) / 1e6);
			tui_app_key(&a, 's');
			uint64_t s0 = pt_now_ns();
			tui_app_draw(&a, &c);
			printf("Timeline     cold redraw (new range, all events) %.3f ms\n",
			       (double)(pt_now_ns() - s0) / 1e6);
		}
		for (int i = 0; i < 20; i++) {
			uint64_t s0 = pt_now_ns();
			tui_app_draw(&a, &c);
			d[i] = pt_now_ns() - s0;
		}
		qsort(d, 20, sizeof d[0], cmp_u64);
		printf("%-12s redraw median %.3f ms, max %.3f ms\n", tui_view_name(v), (double)d[10] / 1e6,
		       (double)d[19] / 1e6);
		if ((double)d[10] / 1e6 > worst_med)
			worst_med = (double)d[10] / 1e6;
	}
	/* the timeline zoomed in to one step (the usual case) */
	tui_app_key(&a, '4');
	tui_app_key(&a, ']');
	uint64_t s0 = pt_now_ns();
	tui_app_draw(&a, &c);
	printf("Timeline (one step) redraw %.3f ms\n", (double)(pt_now_ns() - s0) / 1e6);
	printf("worst median redraw %.3f ms (target <= 5 ms)\n", worst_med);
	tui_canvas_free(&c);
	tui_app_free(&a);
	pt_trace_free(t);
	return 0;
}
