/*
 * bench_tui_draw.c - whole frames of the real screen, terminal output
 * included: the screen is opened by curses on an xterm-256color terminal
 * that writes to /dev/null (tui_open_on), 200x60, over about N events
 * (default 1,000,000; argv[1] overrides) on 60 lanes: 4 host threads with
 * steps, phases, operators nested three deep and launches, 56 device
 * streams of kernels (the data of bench_timeline). Each frame draws into
 * the canvas and sends what changed through curses (tui_frame).
 *
 * Timeline figures (CPU time of this thread, medians):
 *   - the first frame after the data changed: a step's worth of new events
 *     (4 threads x 500 operators) appended, then one frame: the index is
 *     updated incrementally and the rows in view bucketed again (target
 *     <= 5 ms); reference: rebuilding the index from scratch, which is what
 *     that frame cost before the index was incremental;
 *   - every other frame (nothing changed; and after a pan, a new range):
 *     target <= 2 ms; reference: iterating the store's events once;
 *   - the very first frame, which builds the index (once per trace).
 * Also the median redraw of every other view.
 *
 *   build/bench/bench_tui_draw [EVENTS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "proftop/store.h"
#include "model/util.h"

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_dbl);
	return v[n / 2];
}

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

static uint32_t lanes[NHOST + NDEV], names[64], step_name;
static uint64_t now_ns = 1000000, dev_free[NDEV];
static uint32_t corr = 1;

/* One 20 ms step on every host thread (ops nested 3 deep, launches, kernels);
 * ops_per_thread caps the operators (0: as many as fit). Returns events added. */
static uint64_t add_step(struct pt_trace *t, int ops_per_thread)
{
	uint64_t step0 = now_ns, step_len = 20000000, events = 0;
	for (int h = 0; h < NHOST; h++) {
		add(t, lanes[h], PT_KIND_PROFILE_STEP, step_name, step0, step_len, 0);
		add(t, lanes[h], PT_KIND_FORWARD, names[2], step0 + 500, step_len - 1000, 0);
		events += 2;
		uint64_t c = step0 + 1000;
		int ops = 0;
		while (c + 60000 < step0 + step_len - 1000 &&
		       (!ops_per_thread || ops < ops_per_thread)) {
			uint64_t op = 20000 + rnd(40000);
			add(t, lanes[h], PT_KIND_OPERATOR, names[rnd(64)], c, op, 0);
			uint64_t in = c + 500;
			while (in + 3000 < c + op) {
				uint64_t il = 1000 + rnd(2000);
				add(t, lanes[h], PT_KIND_OPERATOR_INNER, names[rnd(64)], in, il, 0);
				add(t, lanes[h], PT_KIND_CUDA_RUNTIME, names[1], in + 100, 300,
				    corr);
				int d = (int)rnd(NDEV);
				uint64_t ks = in + 5000 > dev_free[d] ? in + 5000 : dev_free[d];
				uint64_t kl = 2000 + rnd(30000);
				add(t, lanes[NHOST + d], PT_KIND_KERNEL, names[rnd(64)], ks, kl,
				    corr);
				dev_free[d] = ks + kl + 500;
				corr++;
				events += 3;
				in += il + 200;
			}
			events++;
			ops++;
			c += op + 500;
		}
	}
	now_ns = step0 + step_len + 100000;
	return events;
}

int main(int argc, char **argv)
{
	uint64_t target = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	struct pt_trace *t = pt_trace_new((size_t)4 << 30);
	for (int h = 0; h < NHOST; h++) {
		struct pt_track_key k = {1, 100 + h, 0, 0};
		lanes[h] = pt_trace_track(t, &k);
	}
	for (int d = 0; d < NDEV; d++) {
		struct pt_track_key k = {1, 1000 + d, 0, 0};
		lanes[NHOST + d] = pt_trace_track(t, &k);
		pt_trace_track_device(t, lanes[NHOST + d], d / 7, 7 + d);
	}
	char buf[64];
	for (int i = 0; i < 64; i++) {
		snprintf(buf, sizeof buf, "aten::op%d", i);
		names[i] = pt_trace_intern(t, buf, strlen(buf));
	}
	step_name = pt_trace_intern(t, "ProfileStep", 11);
	uint64_t events = 0;
	while (events < target)
		events += add_step(t, 0);
	pt_store_sort(t->store);
	printf("%llu events on %u lanes (%d host threads, %d GPU streams)\n",
	       (unsigned long long)pt_store_count(t->store), t->ntracks, NHOST, NDEV);

	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	struct tui_opts o;
	tui_opts_init(&o);
	double b0 = cpu_ms();
	struct tui *u = tui_open_on(t, &o, "xterm-256color", out, in, 200, 60);
	double b1 = cpu_ms();
	if (!u) {
		fprintf(stderr, "bench_tui_draw: no xterm-256color terminfo\n");
		return 1;
	}
	struct tui_app *a = tui_app_of(u);
	printf("opening the screen (the summary, meters and advice; a refresh with new data redoes "
	       "them): %.1f ms\n",
	       b1 - b0);

	/* reference: every event out of the store once */
	double ref = 1e9;
	for (int r = 0; r < 3; r++) {
		double s0 = cpu_ms();
		uint64_t sum = 0;
		for (uint32_t i = 0; i < t->ntracks; i++) {
			struct pt_store_iter it;
			pt_store_iter_init(&it, t->store, i, 0, UINT64_MAX);
			struct pt_event *ev;
			while ((ev = pt_store_iter_next(&it)))
				sum += ev->dur_ns;
			pt_store_iter_done(&it);
		}
		double ms = cpu_ms() - s0;
		if (ms < ref)
			ref = ms;
		if (sum == 42)
			printf(" ");
	}
	/* every view but the Timeline */
	double worst = 0;
	for (int v = 0; v < TUI_V__COUNT; v++) {
		if (v == TUI_V_TIMELINE || v == TUI_V_RANKS)
			continue;
		tui_app_key(a, '1' + v);
		double d[21];
		for (int i = 0; i < 21; i++) {
			double s0 = cpu_ms();
			tui_frame(u);
			d[i] = cpu_ms() - s0;
		}
		double m = median(d, 21);
		printf("%-12s frame median %.3f ms\n", tui_view_name(v), m);
		if (m > worst)
			worst = m;
	}
	/* the Timeline: its first frame builds the index */
	tui_app_key(a, '4');
	double f0 = cpu_ms();
	size_t bytes = tui_frame(u);
	printf("Timeline first frame ever (builds the index, once per trace): %.1f ms, ~%zu bytes "
	       "sent\n",
	       cpu_ms() - f0, bytes);
	tui_app_key(a, 'S'); /* zoomed to one step, nested rows in view */
	tui_frame(u);
	double d[21];
	for (int i = 0; i < 21; i++) {
		double s0 = cpu_ms();
		tui_frame(u);
		d[i] = cpu_ms() - s0;
	}
	double same = median(d, 21);
	for (int i = 0; i < 21; i++) {
		tui_app_key(a, i % 2 ? 'a' : 'd');
		double s0 = cpu_ms();
		tui_frame(u);
		d[i] = cpu_ms() - s0;
	}
	double panned = median(d, 21);
	tui_app_key(a, '0'); /* everything in view */
	tui_frame(u);
	double fit[21];
	for (int i = 0; i < 21; i++) {
		tui_app_key(a, i % 2 ? 's' : 'w');
		double s0 = cpu_ms();
		tui_frame(u);
		fit[i] = cpu_ms() - s0;
	}
	double zoom = median(fit, 21);
	printf(
	    "Timeline frame, nothing changed: median %.3f ms; after a pan (a new range): %.3f ms; "
	    "after w/s zoomed out: %.3f ms (target <= 2 ms); reference (iterate all events) %.2f "
	    "ms\n",
	    same, panned, zoom, ref);
	/* the first frame after the data changed: a step's worth appended (the
	 * live refresh), the view following the newest data */
	tui_app_key(a, 'f');
	double chg[21], full[5];
	size_t added = 0;
	for (int i = 0; i < 21; i++) {
		added = add_step(t, 50);
		double s0 = cpu_ms();
		tui_frame(u);
		chg[i] = cpu_ms() - s0;
	}
	for (int i = 0; i < 5; i++) { /* what that frame would cost with a rebuilt index */
		struct pt_timeline_cache *c = pt_timeline_cache_new();
		double s0 = cpu_ms();
		pt_timeline_update(c, t);
		full[i] = cpu_ms() - s0;
		pt_timeline_cache_free(c);
	}
	double m = median(chg, 21), mf = median(full, 5);
	qsort(chg, 21, sizeof *chg, cmp_dbl);
	printf(
	    "Timeline first frame after the data changed (%zu new events): median %.3f ms, 90th "
	    "percentile %.3f ms, max %.3f ms (target <= 5 ms); reference: the index rebuilt from "
	    "scratch %.1f ms; ratio %.3fx\n",
	    added, m, chg[18], chg[20], mf, m / mf);
	printf("worst median frame of the other views %.3f ms\n", worst);
	tui_close(u);
	fclose(out);
	fclose(in);
	pt_trace_free(t);
	return 0;
}
