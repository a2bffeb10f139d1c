/*
 * bench_tui_ranks.c - the screen over a trace of several ranks: N ranks
 * (default 8) of steps of 1000 operators with a kernel each, EVENTS in all
 * (default one million). Prints what a model refresh costs without the
 * per-rank pass (a view that does not need it), with it (Ranks view or a
 * rank filter on), and the median and worst of 20 redraws of the Ranks
 * view and of every view filtered to one rank, at 200x60. Targets: a redraw
 * at most 1 ms outside the timeline's first frame; the refresh cost is what
 * the adaptive period (TUI_MODEL_BUDGET_DIV) stretches on.
 *
 *   build/bench/bench_tui_ranks [EVENTS] [RANKS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "proftop/store.h"
#include "model/util.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static double median_redraw(struct tui_app *a, struct tui_canvas *c, double *worst)
{
	uint64_t d[20];
	for (int i = 0; i < 20; i++) {
		uint64_t s0 = pt_now_ns();
		tui_app_draw(a, c);
		d[i] = pt_now_ns() - s0;
	}
	qsort(d, 20, sizeof d[0], cmp_u64);
	*worst = (double)d[19] / 1e6;
	return (double)d[10] / 1e6;
}

int main(int argc, char **argv)
{
	uint64_t nev = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	int nranks = argc > 2 ? atoi(argv[2]) : 8;
	if (nranks < 2)
		nranks = 2;
	struct pt_trace *t = pt_trace_new((size_t)2 << 30);
	char name[64];
	uint32_t names[200];
	for (int i = 0; i < 200; i++) {
		int n = snprintf(name, sizeof name, "aten::op_%d", i);
		names[i] = pt_trace_intern(t, name, (size_t)n);
	}
	uint32_t step = pt_trace_intern(t, "ProfilerStep#", 13);
	uint64_t per_rank = nev / (uint64_t)nranks;
	for (int r = 0; r < nranks; r++) {
		int64_t pid = 1000 + r;
		struct pt_track_key hk = {pid, 1, 0, 0}, gk = {pid, 7, 0, 0};
		uint32_t host = pt_trace_track(t, &hk), gpu = pt_trace_track(t, &gk);
		pt_trace_track_device(t, gpu, r, 7);
		pt_trace_set_proc(t, pid, r, "node0");
		uint64_t ts = (uint64_t)r * 1000, made = 0;
		/* rank 3 is 20 % slower */
		uint64_t op_ns = r == 3 ? 12000 : 10000;
		while (made < per_rank) {
			struct pt_event s = {ts, 1000 * op_ns, 0, step, host, 0, PT_KIND_PROFILE_STEP, 0, 0};
			pt_trace_add(t, &s);
			made++;
			for (int i = 0; i < 1000 && made + 2 <= per_rank; i++) {
				uint64_t st = ts + (uint64_t)i * op_ns;
				struct pt_event op = {st, 8000, 0, names[i % 200], host, (uint32_t)made,
						      PT_KIND_OPERATOR, 0, 0};
				struct pt_event k = {st + 2000, 7000, 0, names[(i * 7) % 200], gpu,
						     (uint32_t)made, PT_KIND_KERNEL, 0, 0};
				pt_trace_add(t, &op);
				pt_trace_add(t, &k);
				made += 2;
			}
			ts += 1000 * op_ns;
		}
	}
	struct tui_opts o;
	tui_opts_init(&o);
	struct tui_app a;
	uint64_t b0 = pt_now_ns();
	tui_app_init(&a, t, &o);
	uint64_t b1 = pt_now_ns();
	printf("events %llu in %d ranks; first model build (summary + ranks) %.1f ms\n",
	       (unsigned long long)pt_store_count(t->store), nranks, (double)(b1 - b0) / 1e6);
	printf("refresh without the per-rank pass: pt_summarize %.1f ms\n",
	       (double)a.model.sum_cost_ns / 1e6);
	printf("per-rank pass (pt_ranks_compute) %.1f ms; refresh with it %.1f ms\n",
	       (double)a.model.ranks_cost_ns / 1e6,
	       (double)(a.model.sum_cost_ns + a.model.ranks_cost_ns) / 1e6);
	struct tui_canvas c;
	tui_canvas_init(&c, 200, 60, 0);
	double worst, med, worst_med = 0;
	tui_app_key(&a, '8');
	med = median_redraw(&a, &c, &worst);
	printf("%-24s redraw median %.3f ms, max %.3f ms\n", "Ranks", med, worst);
	worst_med = med;
	tui_app_key(&a, 'r'); /* rank 0 */
	for (int v = 0; v < TUI_V_RANKS; v++) {
		tui_app_key(&a, '1' + v);
		if (v == TUI_V_TIMELINE)
			tui_app_draw(&a, &c); /* the first frame builds the lane index */
		med = median_redraw(&a, &c, &worst);
		char lab[48];
		snprintf(lab, sizeof lab, "%s (rank 0)", tui_view_name(v));
		printf("%-24s redraw median %.3f ms, max %.3f ms\n", lab, med, worst);
		if (med > worst_med)
			worst_med = med;
	}
	/* what a key costs that moves the filter (no data change: no pass) */
	uint64_t k0 = pt_now_ns();
	tui_app_key(&a, 'r');
	tui_app_draw(&a, &c);
	printf("r (next rank) + redraw %.3f ms\n", (double)(pt_now_ns() - k0) / 1e6);
	printf("worst median redraw %.3f ms (target <= 1 ms)\n", worst_med);
	tui_canvas_free(&c);
	tui_app_free(&a);
	pt_trace_free(t);
	return 0;
}
