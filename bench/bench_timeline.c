/*
 * bench_timeline.c - one timeline frame over about N events (default
 * 1,000,000; argv[1] overrides) on 60 lanes: 4 host threads with steps,
 * phases, nested operators and launches, and 56 device streams of kernels.
 * Times bucketing every row of every lane at width 200, zoomed out (the
 * whole trace) and zoomed in (a 1 ms window), with the index built; prints
 * ms per frame beside a reference: iterating the same events once out of
 * the store without bucketing, as a ratio. Also prints the one-off index
 * build, and the incremental update after a step's worth of new events
 * (what a live session pays per refresh). bench_tui_draw times whole
 * frames, terminal output included.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/timeline.h"
#include "proftop/trace.h"
#include "model/util.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

static void add(struct pt_trace *t, uint32_t track, uint8_t kind, uint32_t nm, uint64_t start,
		uint64_t dur, uint32_t corr)
{
	struct pt_event ev = {0};
	ev.start_ns = start;
	ev.dur_ns = dur;
	ev.name_id = nm;
	ev.track_id = track;
	ev.kind = kind;
	ev.corr = corr;
	pt_trace_add(t, &ev);
}

#define NHOST 4
#define NDEV  56

static struct pt_trace *build(uint64_t target, uint32_t *lanes)
{
	struct pt_trace *t = pt_trace_new((size_t)4 << 30);
	for (int h = 0; h < NHOST; h++) {
		struct pt_track_key k = {1, 100 + h, 0, 0};
		lanes[h] = pt_trace_track(t, &k);
	}
	for (int d = 0; d < NDEV; d++) {
		struct pt_track_key k = {0, 7 + d, 0, 0};
		lanes[NHOST + d] = pt_trace_track(t, &k);
		pt_trace_track_device(t, lanes[NHOST + d], d / 7, 7 + d);
	}
	uint32_t nm[64];
	char buf[64];
	for (int i = 0; i < 64; i++) {
		snprintf(buf, sizeof buf, "aten::op%d", i);
		nm[i] = pt_trace_intern(t, buf, strlen(buf));
	}
	uint64_t now = 1000000, events = 0;
	uint32_t corr = 1;
	uint64_t dev_free[NDEV] = {0};
	while (events < target) {
		/* one step: 20 ms on each host thread, ops nested 3 deep */
		uint64_t step0 = now, step_len = 20000000;
		for (int h = 0; h < NHOST; h++) {
			add(t, lanes[h], PT_KIND_PROFILE_STEP, nm[0], step0, step_len, 0);
			events++;
			uint64_t c = step0 + 1000;
			while (c + 60000 < step0 + step_len && events < target) {
				uint64_t op = 20000 + rnd(40000);
				add(t, lanes[h], PT_KIND_OPERATOR, nm[rnd(64)], c, op, 0);
				uint64_t in = c + 500;
				while (in + 3000 < c + op) {
					uint64_t il = 1000 + rnd(2000);
					add(t, lanes[h], PT_KIND_OPERATOR_INNER, nm[rnd(64)], in,
					    il, 0);
					add(t, lanes[h], PT_KIND_CUDA_RUNTIME, nm[1], in + 100, 300,
					    corr);
					int d = (int)rnd(NDEV);
					uint64_t ks =
					    in + 5000 > dev_free[d] ? in + 5000 : dev_free[d];
					uint64_t kl = 2000 + rnd(30000);
					add(t, lanes[NHOST + d], PT_KIND_KERNEL, nm[rnd(64)], ks,
					    kl, corr);
					dev_free[d] = ks + kl + 500;
					corr++;
					events += 3;
					in += il + 200;
				}
				events++;
				c += op + 500;
			}
		}
		now = step0 + step_len + 100000;
	}
	return t;
}

/* Buckets every row of every lane over [t0, t1); returns events/blocks visited. */
static size_t frame(struct pt_timeline_cache *c, struct pt_trace *t, const struct pt_lane *lanes,
		    size_t nl, uint64_t t0, uint64_t t1, struct pt_cell *cells, size_t w)
{
	size_t visited = 0;
	for (size_t i = 0; i < nl; i++)
		for (unsigned d = 0; d < lanes[i].nrows; d++)
			visited += pt_timeline_bucket(c, t, lanes[i].track, d, t0, t1, cells, w);
	return visited;
}

int main(int argc, char **argv)
{
	uint64_t target = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	uint32_t tracks[NHOST + NDEV];
	struct pt_trace *t = build(target, tracks);
	pt_store_sort(t->store);
	uint64_t first = pt_store_first_ns(t->store), last = pt_store_last_ns(t->store);
	printf("%" PRIu64 " events on %u tracks over %.1f s\n", pt_store_count(t->store),
	       t->ntracks, (last - first) / 1e9);
	struct pt_lane lanes[128];
	struct pt_timeline_cache *c = pt_timeline_cache_new();
	uint64_t a = pt_now_ns();
	pt_timeline_update(c, t);
	uint64_t b = pt_now_ns();
	printf("index build from scratch (once per trace): %.1f ms\n", (b - a) / 1e6);
	size_t nl = pt_timeline_lanes(c, t, lanes, 128);
	size_t rows = 0;
	for (size_t i = 0; i < nl; i++)
		rows += lanes[i].nrows;
	printf("lanes: %zu with %zu rows in all (first: %s)\n", nl, rows, lanes[0].label);
	enum { W = 200 };
	static struct pt_cell cells[W];

	/* reference: every event out of the store once, no bucketing */
	double ref = 1e9;
	for (int r = 0; r < 3; r++) {
		uint64_t t0 = pt_now_ns(), sum = 0;
		for (size_t i = 0; i < nl; i++) {
			struct pt_store_iter it;
			pt_store_iter_init(&it, t->store, lanes[i].track, 0, UINT64_MAX);
			struct pt_event *ev;
			while ((ev = pt_store_iter_next(&it)))
				sum += ev->dur_ns;
			pt_store_iter_done(&it);
		}
		double ms = (pt_now_ns() - t0) / 1e6;
		if (ms < ref)
			ref = ms;
		if (sum == 42)
			printf(" ");
	}
	struct {
		const char *what;
		uint64_t t0, t1;
	} views[] = {
	    {"zoomed out (all events)", first, last + 1},
	    {"zoomed in (1 ms window)", first + (last - first) / 2,
	     first + (last - first) / 2 + 1000000},
	};
	for (size_t v = 0; v < 2; v++) {
		double best = 1e9;
		size_t visited = 0;
		for (int r = 0; r < 5; r++) {
			uint64_t t0 = pt_now_ns();
			visited = frame(c, t, lanes, nl, views[v].t0, views[v].t1, cells, W);
			double ms = (pt_now_ns() - t0) / 1e6;
			if (ms < best)
				best = ms;
		}
		printf("%-24s every row (%zu) x %d cells: %.3f ms per frame (%zu events/blocks "
		       "visited); "
		       "reference (iterate all events) %.2f ms; ratio %.3fx\n",
		       views[v].what, rows, W, best, visited, ref, best / ref);
	}
	/* live: a step's worth of new events on every host thread, then the update */
	uint64_t now = last + 100000;
	double upd[9];
	for (int r = 0; r < 9; r++) {
		for (int h = 0; h < NHOST; h++)
			for (int i = 0; i < 500; i++)
				add(t, tracks[h], PT_KIND_OPERATOR, 1, now + (uint64_t)i * 2000,
				    1500, 0);
		now += 1000000;
		uint64_t t0 = pt_now_ns();
		size_t got = pt_timeline_update(c, t);
		upd[r] = (pt_now_ns() - t0) / 1e6;
		if (r == 0)
			printf("update after 2000 new events: %zu events indexed again\n", got);
	}
	for (int i = 1; i < 9; i++)
		for (int j = i; j > 0 && upd[j - 1] > upd[j]; j--) {
			double x = upd[j];
			upd[j] = upd[j - 1];
			upd[j - 1] = x;
		}
	printf("incremental update after 2000 new events: median %.3f ms (a rebuild from scratch: "
	       "see above)\n",
	       upd[4]);
	pt_timeline_cache_free(c);
	pt_trace_free(t);
	return 0;
}
