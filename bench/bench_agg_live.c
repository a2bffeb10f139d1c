/*
 * bench_agg_live.c - the live summary's refresh (pt_agg_live_summary) on a
 * session that grows to N events (default 1,000,000; argv[1] overrides),
 * beside the full rebuild (pt_summarize) at the same moments, as a ratio.
 * The events are bench_agg's synthetic PyTorch-like steps, received as a
 * probe sends them: each when it ends. The session grows in twentieths,
 * then takes 12 refreshes of B new events each (argv[2], default 25,000:
 * 100,000 events/s at the screen's 250 ms); the figures are the medians of
 * the last 9. The share of a core is the refresh cost over 250 ms.
 *
 * With argv[3] = R >= 2, the session is R ranks (processes with a rank
 * each, as live sessions of torchrun's ranks; the same correlation ids in
 * every rank) sharing the N events, and what is measured is the per-rank
 * figures' refresh (pt_ranks_live_compute) beside pt_ranks_compute.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/agg.h"
#include "proftop/ranks.h"
#include "proftop/trace.h"
#include "model/util.h"

#include "synth.h"

struct arrival {
	uint64_t at;
	struct pt_event ev;
};

static int arrival_cmp(const void *pa, const void *pb)
{
	const struct arrival *a = pa, *b = pb;
	if (a->at != b->at)
		return a->at < b->at ? -1 : 1;
	if (a->ev.start_ns != b->ev.start_ns)
		return a->ev.start_ns > b->ev.start_ns ? -1 : 1;
	return a->ev.dur_ns < b->ev.dur_ns ? -1 : a->ev.dur_ns > b->ev.dur_ns;
}

struct collect {
	struct arrival *v;
	size_t n;
};

static int collect_one(void *ctx, struct pt_event *ev)
{
	struct collect *c = ctx;
	c->v[c->n++] = (struct arrival){pt_event_end(ev), *ev};
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof *v, u64_cmp);
	return v[n / 2];
}

/* One refresh: the kept figures and the full ones at the same moment. */
struct refresh {
	uint64_t live_ns, full_ns, fed, tail;
};

static void sum_refresh(struct pt_agg_live *l, struct pt_trace *t, struct refresh *out)
{
	uint64_t t0 = pt_now_ns();
	struct pt_summary *a = pt_agg_live_summary(l, t);
	uint64_t t1 = pt_now_ns();
	struct pt_summary *b = pt_summarize(t, NULL);
	uint64_t t2 = pt_now_ns();
	if (a->events != b->events || a->nsteps != b->nsteps ||
	    a->model[PT_MS_STEP].cpu.total_ns != b->model[PT_MS_STEP].cpu.total_ns) {
		fprintf(stderr, "bench_agg_live: the live summary differs from pt_summarize\n");
		exit(1);
	}
	pt_summary_free(a);
	pt_summary_free(b);
	struct pt_agg_live_stats st;
	pt_agg_live_stats(l, &st);
	*out = (struct refresh){t1 - t0, t2 - t1, st.fed_events, st.tail_events};
}

static void ranks_refresh(struct pt_ranks_live *rl, struct pt_trace *t, struct refresh *out)
{
	struct pt_ranks a, b;
	uint64_t t0 = pt_now_ns();
	int ra = pt_ranks_live_compute(rl, t, &a);
	uint64_t t1 = pt_now_ns();
	int rb = pt_ranks_compute(t, NULL, &b);
	uint64_t t2 = pt_now_ns();
	int same = ra == rb && a.n == b.n;
	for (size_t i = 0; same && i < a.n; i++)
		same = a.r[i].events == b.r[i].events && a.r[i].steps == b.r[i].steps &&
		       a.r[i].step_avg_ms == b.r[i].step_avg_ms;
	if (!same) {
		fprintf(stderr, "bench_agg_live: the live per-rank figures differ\n");
		exit(1);
	}
	pt_ranks_free(&a);
	pt_ranks_free(&b);
	struct pt_agg_live_stats st;
	pt_ranks_live_stats(rl, &st);
	*out = (struct refresh){t1 - t0, t2 - t1, st.fed_events, st.tail_events};
}

int main(int argc, char **argv)
{
	pt_mem_tune(); /* memory as proftop has it (util.c) */
	uint64_t target = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	size_t batch = argc > 2 ? strtoull(argv[2], NULL, 10) : 25000;
	unsigned nranks = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 1;
	if (nranks < 1)
		nranks = 1;
	struct pt_trace *src = build(target / nranks);
	size_t nsrc = pt_store_count(src->store);
	struct collect c = {pt_xmalloc(nsrc * nranks * sizeof *c.v), 0};
	pt_store_foreach(src->store, collect_one, &c);

	/* the live trace: the same names and tracks (per rank: its own
	 * process), events as they arrive */
	struct pt_trace *t = pt_trace_new((size_t)4 << 30);
	for (uint32_t id = 1; id < pt_strtab_count(src->strings); id++)
		pt_trace_intern(t, pt_trace_str(src, id), strlen(pt_trace_str(src, id)));
	for (unsigned r = 0; r < nranks; r++) {
		for (uint32_t i = 0; i < src->ntracks; i++) {
			struct pt_track_key k = src->tracks[i].key;
			if (nranks > 1)
				k.pid = 1000 + r;
			uint32_t id = pt_trace_track(t, &k);
			if (src->tracks[i].device >= 0)
				pt_trace_track_device(t, id, src->tracks[i].device,
						      src->tracks[i].stream);
		}
		if (nranks > 1)
			pt_trace_set_proc(t, 1000 + r, r, "node-0");
	}
	for (unsigned r = 1; r < nranks; r++) /* the ranks a little apart */
		for (size_t j = 0; j < nsrc; j++) {
			struct arrival a = c.v[j];
			a.ev.track_id += r * src->ntracks;
			a.ev.start_ns += r * 333;
			a.at += r * 333;
			c.v[c.n++] = a;
		}
	qsort(c.v, c.n, sizeof *c.v, arrival_cmp);
	enum { ROUNDS = 12, KEEP = 9 };
	size_t warm_end = c.n > (size_t)ROUNDS * batch ? c.n - (size_t)ROUNDS * batch : 0;
	size_t step = warm_end / 20 + 1, i = 0;
	struct pt_agg_live *l = nranks > 1 ? NULL : pt_agg_live_new();
	struct pt_ranks_live *rl = nranks > 1 ? pt_ranks_live_new() : NULL;
	struct refresh one;
	while (i < warm_end) { /* the session so far, refreshed now and then */
		size_t end = i + step < warm_end ? i + step : warm_end;
		for (; i < end; i++)
			pt_trace_add(t, &c.v[i].ev);
		if (rl) {
			struct pt_ranks rk;
			pt_ranks_live_compute(rl, t, &rk);
			pt_ranks_free(&rk);
		} else {
			pt_summary_free(pt_agg_live_summary(l, t));
		}
	}
	uint64_t live[ROUNDS], full[ROUNDS], tail[ROUNDS], fed[ROUNDS];
	size_t nr = 0;
	struct pt_agg_live_stats st0, st;
	if (rl)
		pt_ranks_live_stats(rl, &st0);
	else
		pt_agg_live_stats(l, &st0);
	for (int r = 0; r < ROUNDS && i < c.n; r++) {
		size_t end = i + batch < c.n ? i + batch : c.n;
		for (; i < end; i++)
			pt_trace_add(t, &c.v[i].ev);
		if (rl)
			ranks_refresh(rl, t, &one);
		else
			sum_refresh(l, t, &one);
		live[nr] = one.live_ns;
		full[nr] = one.full_ns;
		tail[nr] = one.tail;
		fed[nr] = one.fed;
		nr++;
	}
	if (rl)
		pt_ranks_live_stats(rl, &st);
	else
		pt_agg_live_stats(l, &st);
	size_t k = nr > KEEP ? KEEP : nr, off = nr - k;
	uint64_t lm = median(live + off, k), fm = median(full + off, k);
	uint64_t tm = median(tail + off, k), dm = median(fed + off, k);
	printf("session           %llu events%s%.0u%s, refreshes of %zu new events\n",
	       (unsigned long long)pt_store_count(t->store), rl ? " in " : "", rl ? nranks : 0,
	       rl ? " ranks (per-rank figures)" : "", batch);
	printf("live refresh      %.2f ms (median of %zu; fed %llu, tail %llu events; %.1f %% of a "
	       "core at 250 ms)\n",
	       lm / 1e6, k, (unsigned long long)dm, (unsigned long long)tm,
	       100.0 * (double)lm / 250e6);
	printf("%-17s %.2f ms (median of %zu, same moments)\n",
	       rl ? "pt_ranks_compute" : "pt_summarize", fm / 1e6, k);
	printf("ratio             %.3fx (live / full); rebuilds in the measured refreshes: %llu; "
	       "kept aggregator%s %.1f MB\n",
	       fm ? (double)lm / (double)fm : 0.0, (unsigned long long)(st.rebuilds - st0.rebuilds),
	       rl ? "s" : "", (double)st.mem_bytes / 1e6);
	pt_agg_live_free(l);
	pt_ranks_live_free(rl);
	pt_trace_free(t);
	pt_trace_free(src);
	free(c.v);
	return 0;
}
