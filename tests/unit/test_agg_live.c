/*
 * test_agg_live.c - the live summary (pt_agg_live_summary) against
 * pt_summarize, figure for figure, while a trace grows. Real traces (the
 * bundled ResNet50 pair, the dialect fixtures, the shared traces when
 * present) are replayed into a fresh trace in the order a live session
 * receives them: each event when it ends (a probe records a range when it
 * closes), device activities in late batches (CUPTI flushes its buffers
 * every so often), or in start order (a file). After every batch both
 * summaries are taken and compared whole. Synthetic traces cover what must
 * rebuild: a range that encloses the whole run and arrives last, and the
 * store's cap dropping old events. Last, pt_summarize with its interval
 * lists built on a thread of their own (agg_pipe.c) against the calling
 * thread alone, on the same traces and on one that meets every rule by
 * which the feed picks a list.
 */
#include "testutil.h"

#include "proftop/agg.h"

/* ---- comparing two summaries whole ---- */

static void same_stat(const struct pt_stat *a, const struct pt_stat *b, const char *what)
{
	if (a->n != b->n || a->total_ns != b->total_ns || a->max_ns != b->max_ns ||
	    (a->n && a->min_ns != b->min_ns))
		fail_msg("%s: n %llu/%llu total %llu/%llu max %llu/%llu min %llu/%llu", what,
			 (unsigned long long)a->n, (unsigned long long)b->n,
			 (unsigned long long)a->total_ns, (unsigned long long)b->total_ns,
			 (unsigned long long)a->max_ns, (unsigned long long)b->max_ns,
			 (unsigned long long)a->min_ns, (unsigned long long)b->min_ns);
}

static void same_table(const struct pt_table *a, const struct pt_table *b, const char *what)
{
	if (a->n != b->n)
		fail_msg("%s: %zu rows, want %zu", what, a->n, b->n);
	assert_int_equal(a->cpu_base_ns, b->cpu_base_ns);
	assert_int_equal(a->gpu_base_ns, b->gpu_base_ns);
	assert_int_equal(a->threads, b->threads);
	for (size_t i = 0; i < a->n; i++) {
		const struct pt_row *x = &a->rows[i], *y = &b->rows[i];
		if (x->name_id != y->name_id || x->kind != y->kind ||
		    x->is_device != y->is_device || x->depth != y->depth || x->parent != y->parent)
			fail_msg("%s row %zu: name %u/%u kind %d/%d depth %d/%d parent %u/%u", what,
				 i, x->name_id, y->name_id, x->kind, y->kind, x->depth, y->depth,
				 x->parent, y->parent);
		same_stat(&x->cpu, &y->cpu, what);
		same_stat(&x->gpu, &y->gpu, what);
		assert_int_equal(x->cpu_self_ns, y->cpu_self_ns);
		assert_int_equal(x->cpu_ratio_ns, y->cpu_ratio_ns);
		assert_int_equal(x->gpu_ratio_ns, y->gpu_ratio_ns);
	}
}

static void same_summary(const struct pt_summary *a, const struct pt_summary *b)
{
	assert_int_equal(a->t0_ns, b->t0_ns);
	assert_int_equal(a->t1_ns, b->t1_ns);
	assert_int_equal(a->events, b->events);
	assert_int_equal(a->has_gpu, b->has_gpu);
	assert_int_equal(a->nsteps, b->nsteps);
	for (size_t i = 0; i < a->nsteps; i++) {
		const struct pt_step *x = &a->steps[i], *y = &b->steps[i];
		assert_int_equal(x->number, y->number);
		assert_int_equal(x->start_ns, y->start_ns);
		assert_int_equal(x->dur_ns, y->dur_ns);
		assert_int_equal(x->samples, y->samples);
		assert_int_equal(x->track, y->track);
		assert_memory_equal(x->cpu_ns, y->cpu_ns, sizeof x->cpu_ns);
		assert_memory_equal(x->gpu_ns, y->gpu_ns, sizeof x->gpu_ns);
	}
	for (int r = 0; r < PT_MS__COUNT; r++) {
		assert_int_equal(a->model[r].calls, b->model[r].calls);
		same_stat(&a->model[r].cpu, &b->model[r].cpu, "model cpu");
		same_stat(&a->model[r].gpu, &b->model[r].gpu, "model gpu");
	}
	assert_int_equal(a->perf.steps, b->perf.steps);
	assert_int_equal(a->perf.has_reader, b->perf.has_reader);
	assert_true(a->perf.reader_ratio_pct == b->perf.reader_ratio_pct);
	assert_true(a->perf.ips_avg == b->perf.ips_avg);
	assert_true(a->perf.ips_max == b->perf.ips_max);
	assert_true(a->perf.ips_min == b->perf.ips_min);
	for (int k = 0; k < PT_KIND__COUNT; k++) {
		assert_int_equal(a->overview[k].calls, b->overview[k].calls);
		assert_int_equal(a->overview[k].union_ns, b->overview[k].union_ns);
		assert_int_equal(a->overview[k].ratio_base_ns, b->overview[k].ratio_base_ns);
	}
	assert_int_equal(a->backward_busy_ns, b->backward_busy_ns);
	assert_int_equal(a->dist.step_ns, b->dist.step_ns);
	assert_int_equal(a->dist.comm_ns, b->dist.comm_ns);
	assert_int_equal(a->dist.comp_ns, b->dist.comp_ns);
	assert_int_equal(a->dist.overlap_ns, b->dist.overlap_ns);
	assert_int_equal(a->dist.comm_from_host, b->dist.comm_from_host);
	assert_int_equal(a->dist.has_vendor, b->dist.has_vendor);
	assert_int_equal(a->dist.vendor_comp_ns, b->dist.vendor_comp_ns);
	assert_int_equal(a->dist.vendor_comm_ns, b->dist.vendor_comm_ns);
	assert_int_equal(a->dist.vendor_exposed_ns, b->dist.vendor_exposed_ns);
	assert_int_equal(a->ndevices, b->ndevices);
	for (size_t i = 0; i < a->ndevices; i++) {
		const struct pt_device_row *x = &a->devices[i], *y = &b->devices[i];
		assert_int_equal(x->device, y->device);
		assert_int_equal(x->busy_ns, y->busy_ns);
		assert_int_equal(x->span_ns, y->span_ns);
		assert_int_equal(x->kernels, y->kernels);
		assert_int_equal(x->memcpys, y->memcpys);
		assert_int_equal(x->memsets, y->memsets);
		assert_int_equal(x->memcpy_bytes, y->memcpy_bytes);
	}
	same_table(&a->operators, &b->operators, "operators");
	same_table(&a->op_detail, &b->op_detail, "op_detail");
	same_table(&a->kernels, &b->kernels, "kernels");
	same_table(&a->memory, &b->memory, "memory");
	same_table(&a->user_defined, &b->user_defined, "user_defined");
}

/* ---- replaying a trace as a live session receives it ---- */

struct replay_result {
	uint64_t refreshes, rebuilds, incremental; /* refreshes that fed P without rebuilding */
	uint64_t folded_ns, violations;		   /* at the end */
	int full;
	size_t mem_quarter, mem_end; /* the kept aggregator's bytes a quarter in, at the end */
};

/* Replays src into a fresh trace in `batches` batches, comparing the live
 * summary with pt_summarize after each. */
static struct replay_result replay(struct pt_trace *src, enum tu_order order, size_t batches,
				   size_t max_mem)
{
	struct tu_arrivals c = tu_arrivals(src, order);
	struct pt_trace *t = tu_shell_of(src, max_mem);
	struct pt_agg_live *l = pt_agg_live_new();
	struct replay_result r = {0};
	size_t per = c.n / batches + 1;
	for (size_t i = 0; i < c.n;) {
		size_t end = i + per < c.n ? i + per : c.n;
		for (; i < end; i++)
			pt_trace_add(t, &c.v[i].ev);
		struct pt_agg_live_stats before, after;
		pt_agg_live_stats(l, &before);
		struct pt_summary *live = pt_agg_live_summary(l, t);
		pt_agg_live_stats(l, &after);
		struct pt_summary *full = pt_summarize(t, NULL);
		same_summary(live, full);
		if (after.rebuilds == before.rebuilds && after.fed_events)
			r.incremental++;
		if (!r.mem_quarter && i >= c.n / 4)
			r.mem_quarter = after.mem_bytes;
		pt_summary_free(live);
		pt_summary_free(full);
	}
	struct pt_agg_live_stats st;
	pt_agg_live_stats(l, &st);
	r.refreshes = st.refreshes;
	r.rebuilds = st.rebuilds;
	r.folded_ns = st.folded_ns;
	r.violations = st.violations;
	r.full = st.full;
	r.mem_end = st.mem_bytes;
	pt_agg_live_free(l);
	pt_trace_free(t);
	free(c.v);
	return r;
}

/* A window from t0 (the screen's "last 30 s" keeps three, made as the
 * window moves on): the live summary from t0 is pt_summarize over the
 * window with the job's step ordinals, at every refresh; refreshes in
 * between only advance it (a window kept up to date before it is shown). */
static void replay_window(struct pt_trace *src, enum tu_order order, size_t batches, double frac)
{
	struct tu_arrivals c = tu_arrivals(src, order);
	struct pt_trace *t = tu_shell_of(src, 0);
	uint64_t t0 = src->first_ns + (uint64_t)((double)(src->last_ns - src->first_ns) * frac);
	if (!t0)
		t0 = 1;
	struct pt_agg_live *l = pt_agg_live_new_from(t0);
	size_t per = c.n / batches + 1, k = 0;
	for (size_t i = 0; i < c.n; k++) {
		size_t end = i + per < c.n ? i + per : c.n;
		for (; i < end; i++)
			pt_trace_add(t, &c.v[i].ev);
		if (k % 3 == 1 && i < c.n) {
			pt_agg_live_advance(l, t);
			continue;
		}
		struct pt_summary *live = pt_agg_live_summary(l, t);
		struct pt_agg_opts o;
		pt_agg_opts_init(&o);
		o.t0_ns = t0;
		o.step_ordinal0 =
		    (int64_t)pt_store_dropped_steps(t->store) + (int64_t)tu_steps_before(t, t0);
		struct pt_summary *full = pt_summarize(t, &o);
		same_summary(live, full);
		pt_summary_free(live);
		pt_summary_free(full);
	}
	pt_agg_live_free(l);
	pt_trace_free(t);
	free(c.v);
}

static void replay_all_orders(struct pt_trace *src, const char *what)
{
	static const char *const names[] = {"by end", "device late", "by start"};
	for (int o = TU_BY_END; o <= TU_BY_START; o++) {
		struct replay_result r = replay(src, (enum tu_order)o, 40, 0);
		print_message("# %s, %s: %llu refreshes, %llu rebuilds, %llu incremental\n", what,
			      names[o], (unsigned long long)r.refreshes,
			      (unsigned long long)r.rebuilds, (unsigned long long)r.incremental);
		assert_true(r.refreshes >= 2);
		replay_window(src, (enum tu_order)o, 30, 0.4);
	}
}

/* The bundled ResNet50 traces (always present): exact at every refresh,
 * and most refreshes only feed what is new. */
static void test_resnet_fixtures(void **state)
{
	(void)state;
	static const char *const files[] = {"pytorch/resnet50_workers0.pt.trace.json.gz",
					    "pytorch/resnet50_workers4.pt.trace.json.gz"};
	for (size_t f = 0; f < 2; f++) {
		if (!tu_sampled(f, 2))
			continue;
		struct pt_trace *src = tu_load_trace(tu_fixtures(), files[f]);
		assert_non_null(src);
		replay_all_orders(src, files[f]);
		/* received as a probe sends it: after the first refreshes have
		 * measured how far back arrivals reach, P is kept */
		struct replay_result r = replay(src, TU_BY_END, 40, 0);
		assert_true(r.incremental >= r.refreshes / 2);
		assert_true(r.rebuilds <= r.refreshes / 4);
		assert_true(r.folded_ns > 0); /* finished steps were settled for good */
		pt_trace_free(src);
	}
}

static void test_dialect_fixtures(void **state)
{
	(void)state;
	static const char *const files[] = {
	    "dialects/mindspore_gpu.json",  "dialects/msprof.json",
	    "dialects/paddle.json",	    "dialects/proftop_export.json",
	    "dialects/pytorch_legacy.json", "dialects/pytorch_legacy_nesting.json"};
	for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
		if (!tu_sampled(f, 3))
			continue;
		struct pt_trace *src = tu_load_trace(tu_fixtures(), files[f]);
		assert_non_null(src);
		replay_all_orders(src, files[f]);
		pt_trace_free(src);
	}
}

/* Real traces of other tools, when the shared set is there. */
static void test_shared_traces(void **state)
{
	(void)state;
	static const char *const files[] = {
	    "hta/call_stack__backward_thread.json",
	    "hta/critical_path__cuda_event_sync_multi_stream__event_sync_trace.json.gz",
	    "hta/triton_example__triton_example.json.gz",
	    "hta/nccl_parser_config__nccl_data.json.gz",
	    "hta/amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz",
	    "mindinsight/gpu_timeline_display_0.json",
	    "mindinsight/ascend_timeline_display_0.json"};
	int seen = 0;
	for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
		struct pt_trace *src = tu_load_trace(tu_traces(), files[f]);
		if (!src)
			continue;
		seen++;
		replay_all_orders(src, files[f]);
		pt_trace_free(src);
	}
	if (!seen)
		skip();
}

/* ---- synthetic: what makes the kept aggregator start over ---- */

static void add(struct pt_trace *t, uint32_t track, uint8_t kind, uint32_t name, uint64_t start,
		uint64_t dur, uint32_t corr)
{
	struct pt_event ev = {0};
	ev.start_ns = start;
	ev.dur_ns = dur;
	ev.name_id = name;
	ev.track_id = track;
	ev.kind = kind;
	ev.corr = corr;
	pt_trace_add(t, &ev);
}

/*
 * Steps of a forward op launching a kernel; a range around all of them
 * (enclosing); from the second half on, kernels that start `queue` steps
 * after their launch (the host running ahead of the device); `ranks`
 * processes with the same correlation ids (each process has its own CUPTI),
 * or with tagged: each process's ids tagged apart, as a multi-session loop
 * has them (pt_session_set_corr_tag).
 */
static struct pt_trace *synthetic_ex(int steps, int enclosing, int queue, int ranks, int tagged)
{
	struct pt_trace *t = pt_trace_new(0);
	uint32_t n_step = pt_trace_intern(t, "ProfilerStep#1", 14);
	uint32_t n_dl = pt_trace_intern(t, "enumerate(DataLoader)", 21);
	uint32_t n_op = pt_trace_intern(t, "aten::mm", 8);
	uint32_t n_launch = pt_trace_intern(t, "cudaLaunchKernel", 16);
	uint32_t n_k = pt_trace_intern(t, "gemm", 4);
	uint64_t t0 = 1000000, step = 100000;
	for (int r = 0; r < ranks; r++) {
		struct pt_track_key kh = {100 + r, 1, 0, 0}, kd = {200 + r, 7, 0, 0};
		uint32_t host = pt_trace_track(t, &kh), dev = pt_trace_track(t, &kd);
		pt_trace_track_device(t, dev, r, 7);
		uint64_t off = (uint64_t)r * 3000; /* the ranks a little apart */
		for (int i = 0; i < steps; i++) {
			uint64_t s = t0 + off + step * (uint64_t)i;
			add(t, host, PT_KIND_PROFILE_STEP, n_step, s, step - 1000, 0);
			add(t, host, PT_KIND_DATALOADER, n_dl, s + 100, 20000, 0);
			for (int u = 0; u < 5; u++) {
				uint64_t o = s + 30000 + (uint64_t)u * 12000;
				uint32_t corr = (uint32_t)(i * 5 + u + 1);
				if (tagged)
					corr |= (uint32_t)(r + 1) << 27;
				add(t, host, PT_KIND_OPERATOR, n_op, o, 10000, 0);
				add(t, host, PT_KIND_CUDA_RUNTIME, n_launch, o + 1000, 2000, corr);
				uint64_t q = i >= steps / 2 ? (uint64_t)queue * step : 0;
				add(t, dev, PT_KIND_KERNEL, n_k, o + 4000 + q, 11000, corr);
			}
		}
	}
	return t;
}

/* Steps of a forward op launching a kernel; a range around all of them. */
static struct pt_trace *synthetic(int steps, int enclosing)
{
	struct pt_trace *t = pt_trace_new(0);
	struct pt_track_key kh = {1, 1, 0, 0}, kd = {0, 7, 0, 0};
	uint32_t host = pt_trace_track(t, &kh), dev = pt_trace_track(t, &kd);
	pt_trace_track_device(t, dev, 0, 7);
	uint32_t n_step = pt_trace_intern(t, "ProfilerStep#1", 14);
	uint32_t n_dl = pt_trace_intern(t, "enumerate(DataLoader)", 21);
	uint32_t n_op = pt_trace_intern(t, "aten::mm", 8);
	uint32_t n_launch = pt_trace_intern(t, "cudaLaunchKernel", 16);
	uint32_t n_k = pt_trace_intern(t, "gemm", 4);
	uint32_t n_run = pt_trace_intern(t, "train", 5);
	uint64_t t0 = 1000000, step = 100000;
	if (enclosing)
		add(t, host, PT_KIND_USER_DEFINED, n_run, t0 - 10, step * (uint64_t)steps + 20, 0);
	for (int i = 0; i < steps; i++) {
		uint64_t s = t0 + step * (uint64_t)i;
		add(t, host, PT_KIND_PROFILE_STEP, n_step, s, step - 1000, 0);
		add(t, host, PT_KIND_DATALOADER, n_dl, s + 100, 20000, 0);
		for (int u = 0; u < 5; u++) {
			uint64_t o = s + 30000 + (uint64_t)u * 12000;
			uint32_t corr = (uint32_t)(i * 5 + u + 1);
			add(t, host, PT_KIND_OPERATOR, n_op, o, 10000, 0);
			add(t, host, PT_KIND_CUDA_RUNTIME, n_launch, o + 1000, 2000, corr);
			add(t, dev, PT_KIND_KERNEL, n_k, o + 4000, 15000,
			    corr); /* runs past the op */
		}
	}
	return t;
}

/* Steps without a number in their name (a loop the zero-code helper
 * cuts): a window numbers them as the job does, from the steps before it. */
static void test_window_unnumbered_steps(void **state)
{
	(void)state;
	struct pt_trace *src = pt_trace_new(0);
	struct pt_track_key kh = {1, 1, 0, 0};
	uint32_t host = pt_trace_track(src, &kh);
	uint32_t n_step = pt_trace_intern(src, "step", 4);
	uint32_t n_op = pt_trace_intern(src, "aten::add", 9);
	for (int i = 0; i < 400; i++) {
		uint64_t s = 1000000 + 50000 * (uint64_t)i;
		add(src, host, PT_KIND_PROFILE_STEP, n_step, s, 49000, 0);
		add(src, host, PT_KIND_FORWARD, pt_trace_intern(src, "forward", 7), s + 1000, 20000, 0);
		add(src, host, PT_KIND_OPERATOR, n_op, s + 2000, 10000, 0);
	}
	for (int o = TU_BY_END; o <= TU_BY_START; o++) {
		replay_window(src, (enum tu_order)o, 25, 0.5);
		replay_window(src, (enum tu_order)o, 25, 0.9);
	}
	pt_trace_free(src);
}

/* A range around the whole run arrives last: everything before it is fed
 * already, so that refresh rebuilds, and the figures stay exact. */
static void test_enclosing_range_rebuilds(void **state)
{
	(void)state;
	struct pt_trace *src = synthetic(200, 1);
	struct replay_result r = replay(src, TU_BY_END, 50, 0);
	assert_true(r.rebuilds >= 2); /* the first refresh, and the range */
	assert_true(r.incremental >= r.refreshes / 2);
	replay_all_orders(src, "enclosing range");
	pt_trace_free(src);
}

/* The store's cap drops the oldest events: the summary is of what is kept,
 * as pt_summarize's, so it rebuilds. */
static void test_store_cap(void **state)
{
	(void)state;
	struct pt_trace *src = synthetic(8000, 0); /* about 130,000 events */
	struct replay_result r = replay(src, TU_BY_END, 30, PT_STORE_MIN_MAX_BYTES * 2);
	assert_true(r.rebuilds >= 2);
	pt_trace_free(src);
}

/* Halfway through, kernels start three steps after their launch: the first
 * of them find their launch folded already (a violation: the aggregator
 * starts over), then folding keeps twice that lag behind the frontier.
 * Exact all along, and incremental again after. */
static void test_device_queue_lag(void **state)
{
	(void)state;
	struct pt_trace *src = synthetic_ex(300, 0, 3, 1, 0);
	struct replay_result r = replay(src, TU_BY_END, 60, 0);
	print_message("# queue lag: %llu refreshes, %llu rebuilds, %llu violations\n",
		      (unsigned long long)r.refreshes, (unsigned long long)r.rebuilds,
		      (unsigned long long)r.violations);
	assert_true(r.violations >= 1);
	assert_true(r.folded_ns > 0);
	assert_int_equal(r.full, 0);
	assert_true(r.incremental >= r.refreshes / 2);
	replay_all_orders(src, "queue lag");
	pt_trace_free(src);
}

/* Two processes with the same correlation ids: which kernel joins which
 * launch depends on the order fed, so the live summary gives up keeping an
 * aggregator and takes pt_summarize's. Exact all along. */
static void test_corr_ids_shared_by_ranks(void **state)
{
	(void)state;
	struct pt_trace *src = synthetic_ex(200, 0, 0, 2, 0);
	struct replay_result r = replay(src, TU_BY_END, 60, 0);
	assert_int_equal(r.full, 1);
	print_message("# two ranks: %llu refreshes, %llu rebuilds, %llu violations\n",
		      (unsigned long long)r.refreshes, (unsigned long long)r.rebuilds,
		      (unsigned long long)r.violations);
	replay_all_orders(src, "two ranks");
	pt_trace_free(src);
}

/* The same two processes with their ids tagged apart, as several live
 * sessions give them: the aggregator is kept and most refreshes only feed
 * what is new. Exact all along. */
static void test_tagged_corr_ids_stay_incremental(void **state)
{
	(void)state;
	struct pt_trace *src = synthetic_ex(200, 0, 0, 2, 1);
	struct replay_result r = replay(src, TU_BY_END, 60, 0);
	print_message("# two ranks, ids tagged: %llu refreshes, %llu rebuilds, %llu incremental\n",
		      (unsigned long long)r.refreshes, (unsigned long long)r.rebuilds,
		      (unsigned long long)r.incremental);
	assert_int_equal(r.full, 0);
	assert_true(r.incremental >= r.refreshes / 2);
	replay_all_orders(src, "two ranks, ids tagged");
	pt_trace_free(src);
}

/* What the kept aggregator holds follows what is in flight, not the
 * session: at the end of a long replay it is about what it was a quarter
 * in (one settled record per finished step is all that grows). */
static void test_kept_state_bounded(void **state)
{
	(void)state;
	struct pt_trace *src = synthetic_ex(4000, 0, 0, 1, 0); /* 84,000 events */
	struct replay_result r = replay(src, TU_BY_END, 80, 0);
	print_message("# kept aggregator: %zu bytes a quarter in, %zu at the end\n", r.mem_quarter,
		      r.mem_end);
	assert_true(r.mem_quarter > 0);
	assert_true(r.mem_end < 2 * r.mem_quarter + 4000 * 2 * sizeof(struct pt_step));
	pt_trace_free(src);
}

/* Refreshing with nothing new costs nothing new and changes nothing. */
static void test_idle_refresh(void **state)
{
	(void)state;
	struct pt_trace *t = synthetic(50, 0);
	struct pt_agg_live *l = pt_agg_live_new();
	struct pt_summary *a = pt_agg_live_summary(l, t);
	struct pt_summary *b = pt_agg_live_summary(l, t);
	same_summary(a, b);
	struct pt_agg_live_stats st;
	pt_agg_live_stats(l, &st);
	assert_int_equal(st.rebuilds, 1);
	assert_int_equal(st.fed_events, 0);
	assert_true(st.mem_bytes > 0);
	pt_summary_free(a);
	pt_summary_free(b);
	pt_agg_live_free(l);
	pt_trace_free(t);
}

/* ---- the interval lists' thread (agg_pipe.c) ---- */

/* What pt_agg_opts.spare was given, and how often. */
struct spare_rec {
	int calls;
	uint64_t t0, t1;
};

static void spare_record(void *arg, uint64_t t0, uint64_t t1)
{
	struct spare_rec *r = arg;
	r->calls++;
	r->t0 = t0;
	r->t1 = t1;
}

/* The span spare must be given for summary s: its steps' (the first start,
 * the latest end), else its own. */
static void assert_spare_span(const struct spare_rec *r, const struct pt_summary *s)
{
	uint64_t t0 = s->t0_ns, t1 = s->t1_ns;
	if (s->nsteps) {
		t0 = UINT64_MAX;
		t1 = 0;
		for (size_t i = 0; i < s->nsteps; i++) {
			if (s->steps[i].start_ns < t0)
				t0 = s->steps[i].start_ns;
			if (s->steps[i].start_ns + s->steps[i].dur_ns > t1)
				t1 = s->steps[i].start_ns + s->steps[i].dur_ns;
		}
	}
	assert_int_equal(r->calls, 1);
	assert_int_equal(r->t0, t0);
	assert_int_equal(r->t1, t1);
}

/* pt_summarize with the interval lists built on a thread of their own,
 * against the calling thread alone: the whole trace, a step range, and a
 * window of the middle of the span. The thread's Overview as it runs, only
 * as it settles it early (from its own counts), and only after the feed.
 * The thread hands spare the span the summary's steps cover; without the
 * thread spare is never called. */
static void lists_thread_same(struct pt_trace *t)
{
	uint64_t lo = pt_store_first_ns(t->store), hi = pt_store_last_ns(t->store);
	for (int w = 0; w < 3; w++) {
		struct pt_agg_opts o;
		pt_agg_opts_init(&o);
		if (w == 1) {
			o.step_first = 2;
			o.step_last = 4;
		} else if (w == 2) {
			o.t0_ns = lo + (hi - lo) / 3;
			o.t1_ns = hi - (hi - lo) / 3;
		}
		o.lists_thread = 1;
		struct spare_rec rec = {0};
		o.spare = spare_record;
		o.spare_arg = &rec;
		struct pt_summary *want = pt_summarize(t, &o);
		assert_int_equal(rec.calls, 0);
		for (int mode = 2; mode <= 4; mode++) {
			o.lists_thread = mode;
			rec.calls = 0;
			struct pt_summary *got = pt_summarize(t, &o);
			same_summary(want, got);
			assert_spare_span(&rec, got);
			pt_summary_free(got);
		}
		pt_summary_free(want);
	}
}

/* lists_thread_same on each of the n files under dir; a missing one fails
 * when required, else is left out. */
static void lists_thread_files(const char *dir, const char *const *files, size_t n, int required)
{
	for (size_t f = 0; f < n; f++) {
		struct pt_trace *t = tu_load_trace(dir, files[f]);
		if (required)
			assert_non_null(t);
		if (!t)
			continue;
		lists_thread_same(t);
		pt_trace_free(t);
	}
}

static void test_lists_thread_files(void **state)
{
	(void)state;
	static const char *const fixtures[] = {"pytorch/resnet50_workers0.pt.trace.json.gz",
					       "dialects/mindspore_gpu.json",
					       "dialects/msprof.json",
					       "dialects/paddle.json",
					       "dialects/proftop_export.json",
					       "dialects/pytorch_legacy.json",
					       "dialects/pytorch_legacy_nesting.json"};
	lists_thread_files(tu_fixtures(), fixtures, sizeof fixtures / sizeof *fixtures, 1);
	static const char *const shared[] = {
	    "hta/call_stack__backward_thread.json",
	    "hta/nccl_parser_config__nccl_data.json.gz",
	    "hta/amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz",
	    "hta/trace_diff__control__control.json.gz",
	    "mindinsight/msprof_rank0/msprof_0_2_1.json",
	    "mindinsight/gpu_timeline_display_0.json"};
	lists_thread_files(tu_traces(), shared, sizeof shared / sizeof *shared, 0);
}

/*
 * Every rule by which the feed picks a list: operators inside operators
 * (OperatorInner), a child overhanging its parent by less than the
 * tolerance (still a child) and one by more (it straddles: the parent is
 * closed), host communication calls, the profiler's own spans (left out),
 * instants and counters (no list), a copy recorded on a host thread (a
 * runtime call there), a host call on a device stream (never nested),
 * collectives (without them, the host calls stand in for them), two
 * devices, and msprof's Overlap Analysis lanes.
 */
static struct pt_trace *every_list_rule(int steps, int collectives)
{
	struct pt_trace *t = pt_trace_new(0);
	uint32_t host = tu_track(t, 1, 1, -1), loader = tu_track(t, 1, 2, -1);
	uint32_t s0 = tu_track(t, 0, 7, 0), s1 = tu_track(t, 0, 8, 1);
	uint32_t lane = tu_track(t, 9, 1, -1);
	struct pt_track_key kl = {9, 1, 0, 0};
	pt_trace_set_process_label(t, &kl, pt_trace_intern(t, "Overlap Analysis", 16));
	for (int i = 0; i < steps; i++) {
		double s = 1000.0 + 1000.0 * i;
		char step[32];
		snprintf(step, sizeof step, "ProfilerStep#%d", i);
		tu_ev(t, host, PT_KIND_PROFILE_STEP, step, s, 900, 0);
		tu_ev(t, host, PT_KIND_OPERATOR, "aten::linear", s + 10, 100, 0);
		tu_ev(t, host, PT_KIND_OPERATOR, "aten::addmm", s + 20, 50, 0);
		tu_ev(t, host, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", s + 30, 5,
		      (uint32_t)(3 * i + 1));
		/* overhangs aten::linear by 0.5 us (a child), then one by 30 us */
		tu_ev(t, host, PT_KIND_OPERATOR, "aten::relu", s + 80, 30.5, 0);
		tu_ev(t, host, PT_KIND_OPERATOR, "aten::add", s + 200, 50, 0);
		tu_ev(t, host, PT_KIND_OPERATOR, "aten::mul", s + 240, 40, 0);
		tu_ev(t, host, PT_KIND_MEMCPY, "GpuMemcpySync", s + 300, 10, 0);
		tu_ev(t, host, PT_KIND_INSTANT, "mark", s + 310, 0, 0);
		struct pt_event ev = {0};
		ev.start_ns = US(s + 320);
		ev.dur_ns = US(40);
		ev.name_id = pt_trace_intern(t, "nccl:all_reduce", 15);
		ev.track_id = host;
		ev.kind = PT_KIND_USER_DEFINED;
		ev.flags = PT_EVF_COMM;
		pt_trace_add(t, &ev);
		ev.start_ns = US(s + 400);
		ev.name_id = pt_trace_intern(t, "PyTorch Profiler (0)", 20);
		ev.kind = PT_KIND_USER_DEFINED;
		ev.flags = PT_EVF_INTERNAL;
		pt_trace_add(t, &ev);
		ev.start_ns = US(s + 5);
		ev.dur_ns = 0;
		ev.name_id = pt_trace_intern(t, "CPU(Process)", 12);
		ev.kind = PT_KIND_COUNTER;
		ev.flags = 0;
		double pct = 50.0 + i;
		memcpy(&ev.arg, &pct, sizeof pct);
		pt_trace_add(t, &ev);
		tu_ev(t, loader, PT_KIND_DATALOADER, "enumerate(DataLoader)", s + 1, 60, 0);
		tu_ev(t, loader, PT_KIND_OPERATOR, "aten::stack", s + 2, 20, 0);
		tu_ev(t, s0, PT_KIND_KERNEL, "gemm", s + 40, 60, (uint32_t)(3 * i + 1));
		tu_ev(t, s0, PT_KIND_OPERATOR, "aten::host_on_stream", s + 50, 100, 0);
		tu_ev(t, s0, PT_KIND_MEMSET, "memset", s + 150, 10, 0);
		if (collectives)
			tu_ev(t, s1, PT_KIND_COMMUNICATION, "ncclAllReduce", s + 330, 80, 0);
		tu_ev(t, s1, PT_KIND_MEMCPY, "Memcpy HtoD", s + 500, 20, 0);
		tu_ev(t, lane, PT_KIND_OTHER, "Computing", s + 40, 60, 0);
		tu_ev(t, lane, PT_KIND_OTHER, "Communication", s + 330, 80, 0);
		tu_ev(t, lane, PT_KIND_OTHER, "Communication(Not Overlapped)", s + 390, 20, 0);
	}
	return t;
}

static void test_lists_thread_rules(void **state)
{
	(void)state;
	for (int coll = 0; coll < 2; coll++) {
		struct pt_trace *t = every_list_rule(12, coll);
		lists_thread_same(t);
		/* the rules are all met: inner operators, host and vendor lanes */
		struct pt_agg_opts o;
		pt_agg_opts_init(&o);
		o.lists_thread = 2;
		struct pt_summary *s = pt_summarize(t, &o);
		assert_true(s->overview[PT_KIND_OPERATOR_INNER].union_ns > 0);
		assert_true(s->dist.comm_ns > 0);
		assert_int_equal(s->dist.comm_from_host, !coll);
		assert_true(s->dist.has_vendor);
		assert_true(s->dist.vendor_exposed_ns > 0);
		assert_int_equal(s->ndevices, 2);
		assert_true(s->devices[0].busy_ns > 0);
		assert_int_equal(s->devices[1].busy_ns > 0, coll);
		pt_summary_free(s);
		pt_trace_free(t);
	}
}

/* Large enough that pt_summarize takes the thread of its own accord. */
static void test_lists_thread_default(void **state)
{
	(void)state;
	struct pt_trace *t = every_list_rule(PT_SUMMARIZE_PIPE_EVENTS / 20 + 1, 1);
	assert_true(pt_store_count(t->store) >= PT_SUMMARIZE_PIPE_EVENTS);
	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	o.lists_thread = 1;
	struct pt_summary *want = pt_summarize(t, &o);
	struct pt_summary *got = pt_summarize(t, NULL);
	same_summary(want, got);
	pt_summary_free(got);
	pt_summary_free(want);
	pt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_resnet_fixtures),
	    cmocka_unit_test(test_dialect_fixtures),
	    cmocka_unit_test(test_shared_traces),
	    cmocka_unit_test(test_enclosing_range_rebuilds),
	    cmocka_unit_test(test_window_unnumbered_steps),
	    cmocka_unit_test(test_store_cap),
	    cmocka_unit_test(test_idle_refresh),
	    cmocka_unit_test(test_device_queue_lag),
	    cmocka_unit_test(test_corr_ids_shared_by_ranks),
	    cmocka_unit_test(test_tagged_corr_ids_stay_incremental),
	    cmocka_unit_test(test_kept_state_bounded),
	    cmocka_unit_test(test_lists_thread_files),
	    cmocka_unit_test(test_lists_thread_rules),
	    cmocka_unit_test(test_lists_thread_default),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
