/*
 * test_ranks.c - per-rank figures (ranks.h): synthetic multi-process traces
 * whose answers are worked out by hand (one rank slowed down: it must be
 * the slowest and the spread must say by how much), the Kineto layout (GPU
 * rows under pid = device index, "Spans" pseudo processes) folding into one
 * rank, step windows per rank, and real shared traces: a single-rank Kineto
 * file is one rank whose step figures equal pt_summarize's. Also the merge
 * (merge.h) that makes multi-rank traces: lanes, clock alignment, fresh
 * correlation ids, and the ranks surviving an export and a read back. A
 * growing trace's per-rank figures are test_ranks_live.c's.
 */
#include "ranks_util.h"

static void test_slow_rank(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(0);
	for (int r = 3; r >= 0; r--) {
		struct work w = {
		    1000 + r * 10,	  -1,	10,   5e6 + r * 333, r == 2 ? 150e3 : 100e3,
		    r == 2 ? 60e3 : 20e3, 40e3, 10e3, 50.0 + r,	     1};
		add_rank(t, &w);
		char host[32];
		snprintf(host, sizeof host, "node%d", r / 2);
		pt_trace_set_proc(t, w.pid, r, host);
	}
	struct pt_ranks rk;
	assert_int_equal(pt_ranks_compute(t, NULL, &rk), 0);
	assert_int_equal(rk.n, 4);
	for (size_t i = 0; i < 4; i++) {
		const struct pt_rank_stat *s = &rk.r[i];
		char want[32];
		snprintf(want, sizeof want, "rank %zu", i);
		assert_string_equal(s->name, want);
		assert_int_equal(s->rank, (int64_t)i);
		assert_int_equal(s->pid, 1000 + (int64_t)i * 10);
		assert_string_equal(s->host, i < 2 ? "node0" : "node1");
		assert_int_equal(s->steps, 10);
		assert_int_equal(s->last_step, 10);
		double step = i == 2 ? 150 : 100, dl = i == 2 ? 60 : 20;
		near(s->step_avg_ms, step, 1e-9, "step avg");
		near(s->step_p50_ms, step, 1e-9, "p50");
		near(s->step_p99_ms, step, 1e-9, "p99");
		near(s->step_max_ms, step, 1e-9, "max");
		near(s->ips, 1000.0 / step, 1e-9, "ips");
		near(s->samples_per_s, 0, 0, "samples/s");
		near(s->reader_ratio, dl / step, 1e-9, "reader ratio");
		near(s->phase_share[PT_RANK_DATALOADER], dl / step, 1e-9, "dataloader share");
		/* 10 ms NCCL per step, none of it overlapped by the gemm */
		near(s->comm_share, 10.0 / step, 1e-6, "comm share");
		near(s->comm_overlap, 0, 1e-9, "overlap");
		assert_true(s->gpu_util_pct > 0 && s->gpu_util_pct <= 100);
		near(s->cpu_util_pct, 50.0 + (double)i, 1e-9, "cpu util");
		assert_non_null(s->summary);
		assert_int_equal(s->summary->nsteps, 10);
		/* 10 steps x (step, dataloader, op, kernel, nccl, counter) */
		assert_int_equal(s->events, 60);
	}
	assert_int_equal(rk.slowest, 2);
	near(rk.median_step_ms, 100, 1e-9, "median");
	near(rk.spread, 1.5, 1e-9, "spread");
	pt_ranks_free(&rk);
	assert_null(rk.r);
	pt_trace_free(t);
}

/* Steps of unequal length within a rank: percentiles and max. */
static void test_percentiles(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(0);
	uint32_t host = tu_track(t, 7, 7, -1);
	double s = 0;
	for (int i = 0; i < 100; i++) {
		double d = 1000.0 * (i + 1); /* 1 ms .. 100 ms */
		char name[32];
		snprintf(name, sizeof name, "ProfilerStep#%d", i);
		tu_ev(t, host, PT_KIND_PROFILE_STEP, name, s, d, 0);
		s += d;
	}
	struct pt_ranks rk;
	assert_int_equal(pt_ranks_compute(t, NULL, &rk), 0);
	assert_int_equal(rk.n, 1);
	assert_string_equal(rk.r[0].name, "pid 7");
	assert_int_equal(rk.r[0].rank, -1);
	near(rk.r[0].step_p50_ms, 50, 1e-9, "p50");
	near(rk.r[0].step_p99_ms, 99, 1e-9, "p99");
	near(rk.r[0].step_max_ms, 100, 1e-9, "max");
	near(rk.r[0].step_avg_ms, 50.5, 1e-9, "avg");
	assert_int_equal(rk.r[0].last_step, 99);
	near(rk.r[0].gpu_util_pct, -1, 0, "no device");
	near(rk.r[0].cpu_util_pct, -1, 0, "no cpu samples");
	near(rk.spread, 0, 0, "one rank: no spread");
	pt_ranks_free(&rk);
	pt_trace_free(t);
}

/* Kineto's layout: host pid 4242, GPU rows under pid 0, a "Spans" pseudo
 * process, rank from distributedInfo: one rank, everything in it. */
static void test_kineto_layout(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(0);
	t->rank = 5;
	struct work w = {4242, 0, 4, 1000, 100e3, 10e3, 30e3, 5e3, 10, 100};
	add_rank(t, &w);
	struct pt_track_key sk = {0, 0, pt_trace_intern(t, "Spans", 5), 0};
	uint32_t spans = pt_trace_track(t, &sk);
	tu_ev(t, spans, PT_KIND_USER_DEFINED, "PyTorch Profiler", 0, 1000, 0);
	struct pt_ranks rk;
	assert_int_equal(pt_ranks_compute(t, NULL, &rk), 0);
	assert_int_equal(rk.n, 1);
	assert_int_equal(rk.r[0].pid, 4242);
	assert_int_equal(rk.r[0].rank, 5);
	assert_string_equal(rk.r[0].name, "rank 5");
	assert_int_equal(rk.r[0].steps, 4);
	assert_int_equal(rk.r[0].events, pt_store_count(t->store));
	assert_true(rk.r[0].gpu_util_pct > 0);
	struct pt_summary *s = pt_summarize(t, NULL);
	assert_int_equal(s->events, rk.r[0].summary->events);
	assert_int_equal(s->dist.comm_ns, rk.r[0].summary->dist.comm_ns);
	pt_summary_free(s);
	pt_ranks_free(&rk);
	pt_trace_free(t);
}

/* No process table, two stepping host processes and a helper process
 * without steps: two ranks named by pid, the helper in none. */
static void test_no_table(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(0);
	struct work a = {300, -1, 3, 0, 100e3, 10e3, 30e3, 5e3, 10, 1};
	struct work b = {200, -1, 3, 0, 120e3, 10e3, 30e3, 5e3, 10, 1};
	add_rank(t, &a);
	add_rank(t, &b);
	uint32_t helper = tu_track(t, 999, 1, -1);
	tu_ev(t, helper, PT_KIND_USER_DEFINED, "log", 5, 5, 0);
	struct pt_ranks rk;
	assert_int_equal(pt_ranks_compute(t, NULL, &rk), 0);
	assert_int_equal(rk.n, 2);
	assert_string_equal(rk.r[0].name, "pid 200");
	assert_string_equal(rk.r[1].name, "pid 300");
	assert_int_equal(rk.slowest, 0);
	near(rk.spread, 120.0 / 110.0, 1e-9, "spread");
	pt_ranks_free(&rk);
	pt_trace_free(t);
}

/* A step range is a window per rank: ranks whose clocks differ still each
 * get their steps 3..4. */
static void test_step_window(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(0);
	struct work a = {10, -1, 6, 0, 100e3, 10e3, 30e3, 5e3, 10, 1};
	struct work b = {20, -1, 6, 9e6, 200e3, 10e3, 30e3, 5e3, 10, 1};
	add_rank(t, &a);
	add_rank(t, &b);
	pt_trace_set_proc(t, 10, 0, NULL);
	pt_trace_set_proc(t, 20, 1, NULL);
	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	o.step_first = 3;
	o.step_last = 4;
	struct pt_ranks rk;
	assert_int_equal(pt_ranks_compute(t, &o, &rk), 0);
	assert_int_equal(rk.n, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rk.r[i].steps, 2);
		assert_int_equal(rk.r[i].last_step, 4);
		assert_int_equal(rk.r[i].summary->steps[0].number, 3);
	}
	near(rk.r[1].step_avg_ms, 200, 1e-9, "rank 1 window");
	pt_ranks_free(&rk);
	pt_trace_free(t);
}

static void test_empty(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(0);
	struct pt_ranks rk;
	assert_int_equal(pt_ranks_compute(t, NULL, &rk), 0);
	assert_int_equal(rk.n, 0);
	pt_ranks_free(&rk);
	pt_trace_free(t);
}

/* Many processes with many threads: each rank's state holds its own tracks
 * (it used to be sized for every track of the trace: N x T x 1.1 KB), and a
 * cap too small for the ranks' state gives PT_ENOMEM, not more memory. */
static void test_many_ranks_sized_by_rank(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new((size_t)256 << 20);
	const int npids = 300, nthreads = 20;
	for (int p = 0; p < npids; p++)
		for (int th = 0; th < nthreads; th++) {
			uint32_t tr = tu_track(t, 1000 + p, (1000 + p) * 100 + th, -1);
			tu_ev(t, tr, PT_KIND_OPERATOR, "op", p * nthreads + th, 1, 0);
		}
	struct pt_ranks rk;
	assert_int_equal(pt_ranks_compute(t, NULL, &rk), 0);
	assert_int_equal(rk.n, (size_t)npids);
	/* measured 19 KB a rank of 20 tracks; sized for the trace it was 6,000 x 1.1 KB */
	print_message("# ranks held %zu bytes\n", rk.mem_bytes);
	assert_true(rk.mem_bytes < (size_t)npids * 65536);
	pt_ranks_free(&rk);
	pt_trace_free(t);

	t = pt_trace_new((size_t)1 << 20);
	for (int p = 0; p < npids; p++)
		tu_ev(t, tu_track(t, 1000 + p, 1, -1), PT_KIND_OPERATOR, "op", p, 1, 0);
	assert_int_equal(pt_ranks_compute(t, NULL, &rk), PT_ENOMEM);
	assert_int_equal(rk.n, 0);
	pt_ranks_free(&rk);
	pt_trace_free(t);
}


/* The ranks on 2, 3 and 8 threads are the ranks on one: the same ranks in
 * the same order, each with the same summary, and the same memory held. */
static void check_threads_same(struct pt_trace *t, const struct pt_agg_opts *o, size_t want_n)
{
	struct pt_ranks one;
	assert_int_equal(pt_ranks_compute_threads(t, o, 1, &one), 0);
	assert_int_equal(one.n, want_n);
	char **js = test_calloc(one.n, sizeof *js);
	for (size_t i = 0; i < one.n; i++)
		js[i] = summary_json(t, one.r[i].summary);
	const int counts[] = {2, 3, 8};
	for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
		struct pt_ranks rk;
		assert_int_equal(pt_ranks_compute_threads(t, o, counts[c], &rk), 0);
		assert_int_equal(rk.n, one.n);
		assert_int_equal(rk.slowest, one.slowest);
		assert_int_equal(rk.mem_bytes, one.mem_bytes);
		near(rk.spread, one.spread, 0, "spread");
		near(rk.median_step_ms, one.median_step_ms, 0, "median step");
		for (size_t i = 0; i < rk.n; i++) {
			assert_int_equal(rk.r[i].pid, one.r[i].pid);
			assert_string_equal(rk.r[i].name, one.r[i].name);
			assert_int_equal(rk.r[i].events, one.r[i].events);
			near(rk.r[i].cpu_util_pct, one.r[i].cpu_util_pct, 0, "cpu util");
			char *j = summary_json(t, rk.r[i].summary);
			assert_string_equal(j, js[i]);
			free(j);
		}
		pt_ranks_free(&rk);
	}
	for (size_t i = 0; i < one.n; i++)
		free(js[i]);
	test_free(js);
	pt_ranks_free(&one);
}

static void test_threads_same(void **state)
{
	(void)state;
	/* four ranks with device rows and counters, whole and in a step range */
	struct pt_trace *t = pt_trace_new(0);
	for (int r = 0; r < 4; r++) {
		struct work w = {1000 + r * 10, -1,   12,   5e6 + r * 333, 100e3 + r * 7e3,
				 20e3,		40e3, 10e3, 50.0 + r,	   1};
		add_rank(t, &w);
		pt_trace_set_proc(t, w.pid, r, NULL);
	}
	check_threads_same(t, NULL, 4);
	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	o.step_first = 3;
	o.step_last = 7;
	check_threads_same(t, &o, 4);
	pt_trace_free(t);

	/* 300 processes of 20 threads */
	t = pt_trace_new((size_t)256 << 20);
	for (int p = 0; p < 300; p++)
		for (int th = 0; th < 20; th++)
			tu_ev(t, tu_track(t, 1000 + p, (1000 + p) * 100 + th, -1), PT_KIND_OPERATOR,
			      th % 2 ? "op" : "other", p * 20 + th, 1, 0);
	check_threads_same(t, NULL, 300);
	pt_trace_free(t);

	/* two real Kineto files: GPU rows under pid 0, shared correlation ids */
	t = load("kineto_tb_plugin/"
		 "samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz");
	if (!t)
		return;
	struct pt_read_opts ro = {0};
	char err[512] = "";
	if (pt_chrome_read(t,
			   tu_path(tu_traces(),
				   "kineto_tb_plugin/samples__resnet50_num_workers_4__worker0."
				   "1623212756351.pt.trace.json.gz"),
			   &ro, err, sizeof err) == 0) {
		pt_trace_set_proc(t, 25738, 0, NULL);
		pt_trace_set_proc(t, 5555, 1, NULL);
		check_threads_same(t, NULL, 3);
	}
	pt_trace_free(t);
}

/* Past the cap on several threads: PT_ENOMEM, nothing kept, nothing leaked. */
static void test_threads_cap(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new((size_t)4 << 20);
	for (int p = 0; p < 64; p++)
		for (int i = 0; i < 400; i++) {
			char name[32];
			snprintf(name, sizeof name, "op%d.%d", p,
				 i); /* a row each: the tables grow */
			tu_ev(t, tu_track(t, 1000 + p, 1, -1), PT_KIND_OPERATOR, name, p * 1000 + i,
			      1, 0);
		}
	struct pt_ranks rk;
	for (int th = 1; th <= 4; th++) {
		assert_int_equal(pt_ranks_compute_threads(t, NULL, th, &rk), PT_ENOMEM);
		assert_int_equal(rk.n, 0);
		assert_null(rk.r);
		pt_ranks_free(&rk);
	}
	pt_trace_free(t);
}

/* A single-rank Kineto file: one rank, the same step figures as pt_summarize. */
static void check_single(const char *rel, int64_t want_rank, uint64_t want_steps)
{
	struct pt_trace *t = load(rel);
	if (!t) {
		print_message("# skip: %s not readable\n", rel);
		return;
	}
	struct pt_summary *s = pt_summarize(t, NULL);
	struct pt_ranks rk;
	assert_int_equal(pt_ranks_compute(t, NULL, &rk), 0);
	assert_int_equal(rk.n, 1);
	const struct pt_rank_stat *r = &rk.r[0];
	assert_int_equal(r->rank, want_rank);
	assert_int_equal(r->steps, s->nsteps);
	assert_int_equal(r->steps, want_steps);
	assert_int_equal(r->events, s->events);
	const struct pt_summary *rs = r->summary;
	assert_int_equal(rs->perf.batch.total_ns, s->perf.batch.total_ns);
	assert_int_equal(rs->perf.reader.total_ns, s->perf.reader.total_ns);
	for (size_t i = 0; i < s->nsteps; i++) {
		assert_int_equal(rs->steps[i].number, s->steps[i].number);
		assert_int_equal(rs->steps[i].dur_ns, s->steps[i].dur_ns);
		for (int k = 0; k < PT_MS__COUNT; k++) {
			assert_int_equal(rs->steps[i].cpu_ns[k], s->steps[i].cpu_ns[k]);
			assert_int_equal(rs->steps[i].gpu_ns[k], s->steps[i].gpu_ns[k]);
		}
	}
	near(r->reader_ratio * 100, s->perf.reader_ratio_pct, 1e-9, "reader ratio");
	assert_int_equal(rs->dist.comm_ns, s->dist.comm_ns);
	assert_int_equal(rs->ndevices, s->ndevices);
	assert_int_equal(rk.slowest, 0);
	pt_summary_free(s);
	pt_ranks_free(&rk);
	pt_trace_free(t);
}

static void test_real_single(void **state)
{
	(void)state;
	check_single("kineto_tb_plugin/"
		     "samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz",
		     -1, 6);
	check_single("hta/trace_filter__sampled_rank-1.json.gz", 1, 2);
	check_single("hta/cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", 34, 1);
	check_single("hta/triton_example__triton_example.json.gz", -1, 1);
	check_single("hta/nccl_parser_config__nccl_data.json.gz", 0, 3);
	/* a single process whose GPU rows (pid 0) also carry host-kind markers
	 * (cuda_sync) and no steps anywhere: still one rank, not two */
	check_single(
	    "hta/critical_path__alexnet__benchmark_result_2869224_1695835535_trace.json.gz", 0, 0);
	check_single("kineto_tb_plugin/"
		     "samples__resnet50_autograd_api_num_workers_0__worker0.pt.trace.json.gz",
		     -1, 0);
	check_single("hta/trace_file_list__inference_rank_1.json.gz", 1, 0);
}

/* The same layout made by hand: a host process without steps and pid 0
 * holding a GPU stream plus a few host-kind events is one rank. */
static void test_gpu_pid_not_a_rank(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(0);
	uint32_t host = tu_track(t, 4242, 1, -1), gpu = tu_track(t, 0, 7, 0);
	uint32_t sync = tu_track(t, 0, 99, -1);
	for (int i = 0; i < 20; i++) {
		tu_ev(t, host, PT_KIND_OPERATOR, "aten::mm", i * 100, 50, (uint32_t)i + 1);
		tu_ev(t, gpu, PT_KIND_KERNEL, "gemm", i * 100 + 10, 60, (uint32_t)i + 1);
	}
	tu_ev(t, sync, PT_KIND_OTHER, "cuda_sync", 5, 1, 0);
	struct pt_ranks rk;
	assert_int_equal(pt_ranks_compute(t, NULL, &rk), 0);
	assert_int_equal(rk.n, 1);
	assert_int_equal(rk.r[0].pid, 4242);
	assert_int_equal(rk.r[0].events, pt_store_count(t->store));
	pt_ranks_free(&rk);
	pt_trace_free(t);
}

/* A window that starts later than the data keeps unnumbered steps' own
 * ordinals per rank (the screen's "last 10 steps"). */
static void test_window_ordinals(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(0);
	for (int r = 0; r < 2; r++) {
		uint32_t h = tu_track(t, 10 + r, 1, -1);
		for (int i = 0; i < 30; i++)
			tu_ev(t, h, PT_KIND_PROFILE_STEP, "step", i * 1000 + r * 10, 900, 0);
		pt_trace_set_proc(t, 10 + r, r, NULL);
	}
	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	o.t0_ns = US(20000);
	struct pt_ranks rk;
	assert_int_equal(pt_ranks_compute(t, &o, &rk), 0);
	assert_int_equal(rk.n, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rk.r[i].steps, 10);
		assert_int_equal(rk.r[i].summary->steps[0].number, 20);
		assert_int_equal(rk.r[i].last_step, 29);
	}
	pt_ranks_free(&rk);
	pt_trace_free(t);
}

/* The resnet pair read into one trace as two processes (pids differ):
 * two ranks once the process table names them, and the slower one (no
 * DataLoader workers: 174.8 ms vs 139.7 ms) is the slowest. */
static void test_real_pair(void **state)
{
	(void)state;
	const char *a = "kineto_tb_plugin/"
			"samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz";
	const char *b = "kineto_tb_plugin/"
			"samples__resnet50_num_workers_4__worker0.1623212756351.pt.trace.json.gz";
	struct pt_trace *t = load(a);
	if (!t) {
		skip();
		return;
	}
	struct pt_read_opts ro = {0};
	char err[512] = "";
	if (pt_chrome_read(t, tu_path(tu_traces(), b), &ro, err, sizeof err) < 0) {
		pt_trace_free(t);
		skip();
		return;
	}
	/* both files put their GPU rows under pid 0: without a table, GPU
	 * rows of unknown owner are a "rank" of their own */
	pt_trace_set_proc(t, 25738, 0, NULL);
	pt_trace_set_proc(t, 5555, 1, NULL);
	struct pt_ranks rk;
	assert_int_equal(pt_ranks_compute(t, NULL, &rk), 0);
	assert_int_equal(rk.n, 3);
	assert_string_equal(rk.r[0].name, "rank 0");
	assert_string_equal(rk.r[1].name, "rank 1");
	assert_int_equal(rk.r[0].steps, 6);
	assert_int_equal(rk.r[1].steps, 6);
	assert_int_equal(rk.slowest, 0);
	near(rk.r[0].step_avg_ms, 174.829, 0.01, "workers0 step");
	near(rk.r[1].step_avg_ms, 139.692, 0.01, "workers4 step");
	near(rk.r[0].reader_ratio, 0.396, 0.002, "workers0 reader ratio");
	near(rk.spread, 174.829 / ((174.829 + 139.692) / 2), 0.001, "spread");
	pt_ranks_free(&rk);
	pt_trace_free(t);
}

/* A Kineto-like rank: host pid `pid` thread tid, GPU rows under pid 0 stream
 * 7, nsteps steps of step_us from t0_us, each launching one kernel (corr
 * 1..nsteps, the same ids in every rank, as real ranks have). */
static struct pt_trace *kineto_rank(int64_t pid, int64_t tid, int64_t rank, double t0_us,
				    double step_us, int nsteps)
{
	struct pt_trace *t = pt_trace_new(0);
	t->rank = rank;
	uint32_t host = tu_track(t, pid, tid, -1);
	uint32_t dev = tu_track(t, 0, 7, 0);
	for (int i = 0; i < nsteps; i++) {
		double s = t0_us + i * step_us;
		char name[32];
		snprintf(name, sizeof name, "ProfilerStep#%d", 10 + i);
		tu_ev(t, host, PT_KIND_PROFILE_STEP, name, s, step_us, 0);
		tu_ev(t, host, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", s + 10, 5,
		      (uint32_t)i + 1);
		tu_ev(t, dev, PT_KIND_KERNEL, "gemm", s + 20, step_us / 2, (uint32_t)i + 1);
	}
	return t;
}

static uint64_t first_step_start(const struct pt_rank_stat *r)
{
	return r->summary->nsteps ? r->summary->steps[0].start_ns : 0;
}

/* Two ranks whose clocks differ by 5000 s, the same host pid in both and a
 * host tid equal to the stream id: two lanes, distinct pids, the second
 * shifted so its steps line up, tids kept apart, corr ids re-keyed. */
static void test_merge_offset(void **state)
{
	(void)state;
	struct pt_trace *a = kineto_rank(100, 100, 0, 1e6, 100e3, 5);
	struct pt_trace *b = kineto_rank(100, 7, 1, 1e6 + 5000e6 + 123, 150e3, 5);
	struct pt_merge_opts mo = {0};
	struct pt_merge *m = pt_merge_new(&mo);
	pt_merge_add(m, a, "a.json");
	pt_merge_add(m, b, "b.json");
	pt_merge_finish(m);
	assert_int_equal(m->nlanes, 2);
	assert_true(m->lanes[0].pid != m->lanes[1].pid);
	assert_int_equal(m->lanes[0].rank, 0);
	assert_int_equal(m->lanes[1].rank, 1);
	assert_int_equal(m->ranks_from_order, 0);
	assert_int_equal(m->in[0].how, PT_MERGE_REFERENCE);
	assert_int_equal(m->in[1].how, PT_MERGE_BY_STEP);
	assert_int_equal(m->in[1].step, 10);
	assert_true(m->in[1].shifted);
	assert_int_equal(m->in[1].offset_ns, -(int64_t)US(5000e6 + 123));
	assert_non_null(
	    strstr(m->other_json, "\"clock_offsets_ns\":{\"rank 0\":0,\"rank 1\":-5000000123000}"));
	struct pt_trace *t = m->t;
	assert_int_equal(t->ntracks, 4);
	int dev = 0;
	for (uint32_t i = 0; i < t->ntracks; i++)
		dev += pt_track_is_device(&t->tracks[i]);
	assert_int_equal(dev, 2);
	assert_int_equal(pt_store_count(t->store), 30);

	struct pt_ranks rk;
	assert_int_equal(pt_ranks_compute(t, NULL, &rk), 0);
	assert_int_equal(rk.n, 2);
	assert_string_equal(rk.r[0].name, "rank 0");
	assert_string_equal(rk.r[1].name, "rank 1");
	assert_int_equal(first_step_start(&rk.r[0]), first_step_start(&rk.r[1]));
	assert_int_equal(rk.slowest, 1);
	near(rk.r[1].step_avg_ms, 150, 1e-9, "rank 1 step");
	near(rk.spread, 150.0 / 125.0, 1e-9, "spread");
	/* corr re-keyed: each launch still finds its own kernel (GPU time per step) */
	for (int r = 0; r < 2; r++)
		for (size_t i = 0; i < rk.r[r].summary->nsteps; i++)
			assert_int_equal(rk.r[r].summary->steps[i].gpu_ns[PT_MS_STEP],
					 US(r ? 75e3 : 50e3));
	pt_ranks_free(&rk);

	/* export and read back: the process table comes back from otherData */
	char path[] = "/tmp/proftop-test-merge-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct pt_export_opts eo = {0};
	eo.force = 1;
	eo.other_json = m->other_json;
	char err[512] = "";
	assert_int_equal(pt_chrome_export(t, path, &eo, err, sizeof err), 0);
	struct pt_trace *back = pt_trace_new(0);
	struct pt_read_opts ro = {0};
	assert_int_equal(pt_chrome_read(back, path, &ro, err, sizeof err), 0);
	unlink(path);
	assert_int_equal(back->nprocs, 2);
	assert_int_equal(pt_trace_warn_total(back), 0);
	assert_int_equal(pt_trace_proc(back, m->lanes[1].pid)->rank, 1);
	assert_int_equal(pt_ranks_compute(back, NULL, &rk), 0);
	assert_int_equal(rk.n, 2);
	assert_int_equal(rk.slowest, 1);
	near(rk.r[0].step_avg_ms, 100, 1e-9, "read back rank 0");
	assert_int_equal(rk.r[1].summary->steps[0].gpu_ns[PT_MS_STEP], US(75e3));
	pt_ranks_free(&rk);

	/* merging the merged trace again keeps its two ranks */
	struct pt_merge *m2 = pt_merge_new(&mo);
	pt_merge_add(m2, back, "merged.json");
	pt_merge_finish(m2);
	assert_int_equal(m2->nlanes, 2);
	assert_int_equal(m2->lanes[1].rank, 1);
	pt_merge_free(m2);

	pt_trace_free(back);
	pt_merge_free(m);
	pt_trace_free(a);
	pt_trace_free(b);
}

/* One clock (a difference under a second is the ranks' own skew), --align
 * none, and ranks missing: nothing shifted, ranks from the inputs' order. */
static void test_merge_same_clock(void **state)
{
	(void)state;
	struct pt_trace *a = kineto_rank(100, 100, -1, 1e6, 100e3, 3);
	struct pt_trace *b = kineto_rank(200, 200, -1, 1e6 + 200e3, 100e3, 3);
	struct pt_merge_opts mo = {0};
	struct pt_merge *m = pt_merge_new(&mo);
	pt_merge_add(m, a, "a");
	pt_merge_add(m, b, "b");
	pt_merge_finish(m);
	assert_false(m->in[1].shifted);
	assert_int_equal(m->in[1].diff_ns, -(int64_t)US(200e3));
	assert_int_equal(m->ranks_from_order, 1);
	assert_int_equal(m->lanes[0].pid, 100);
	assert_int_equal(m->lanes[1].pid, 200);
	assert_int_equal(pt_trace_proc(m->t, 200)->rank, 1);
	pt_merge_free(m);

	struct pt_trace *c = kineto_rank(300, 300, 2, 1e6 + 9000e6, 100e3, 3);
	mo.align = PT_MERGE_ALIGN_NONE;
	m = pt_merge_new(&mo);
	pt_merge_add(m, a, "a");
	pt_merge_add(m, c, "c");
	pt_merge_finish(m);
	assert_false(m->in[1].shifted);
	assert_int_equal(m->in[1].how, PT_MERGE_NOT_ALIGNED);
	pt_merge_free(m);

	/* no steps in the second: lined up on the first events */
	struct pt_trace *d = pt_trace_new(0);
	uint32_t tr = tu_track(d, 400, 400, -1);
	tu_ev(d, tr, PT_KIND_OPERATOR, "aten::mm", 1e6 + 7000e6, 10, 0);
	mo.align = PT_MERGE_ALIGN_STEPS;
	m = pt_merge_new(&mo);
	pt_merge_add(m, a, "a");
	pt_merge_add(m, d, "d");
	pt_merge_finish(m);
	assert_int_equal(m->in[1].how, PT_MERGE_BY_FIRST_EVENT);
	assert_true(m->in[1].shifted);
	assert_int_equal(m->in[1].offset_ns, -(int64_t)US(7000e6));
	pt_merge_free(m);

	pt_trace_free(a);
	pt_trace_free(b);
	pt_trace_free(c);
	pt_trace_free(d);
}

/* The two sampled ranks of HTA's 128-rank job, merged: two ranks, 0 and 1,
 * each with the figures it has alone. */
static void test_merge_real(void **state)
{
	(void)state;
	struct pt_trace *a = load("hta/trace_filter__sampled_rank-0.json.gz");
	struct pt_trace *b = load("hta/trace_filter__sampled_rank-1.json.gz");
	if (!a || !b) {
		pt_trace_free(a);
		pt_trace_free(b);
		skip();
		return;
	}
	struct pt_ranks ra, rb, rm;
	assert_int_equal(pt_ranks_compute(a, NULL, &ra), 0);
	assert_int_equal(pt_ranks_compute(b, NULL, &rb), 0);
	struct pt_merge *m = pt_merge_new(NULL);
	pt_merge_add(m, b, "rank-1"); /* out of order: the ranks sort it */
	pt_merge_add(m, a, "rank-0");
	pt_merge_finish(m);
	assert_false(m->in[1].shifted); /* same job, one clock: 0.19 ms apart */
	assert_int_equal(pt_ranks_compute(m->t, NULL, &rm), 0);
	assert_int_equal(rm.n, 2);
	const struct pt_ranks *alone[2] = {&ra, &rb};
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rm.r[i].rank, i);
		assert_int_equal(rm.r[i].steps, alone[i]->r[0].steps);
		assert_int_equal(rm.r[i].events, alone[i]->r[0].events);
		near(rm.r[i].step_avg_ms, alone[i]->r[0].step_avg_ms, 1e-9, "step avg");
		near(rm.r[i].comm_share, alone[i]->r[0].comm_share, 1e-9, "comm");
		near(rm.r[i].gpu_util_pct, alone[i]->r[0].gpu_util_pct, 1e-9, "gpu util");
	}
	pt_ranks_free(&ra);
	pt_ranks_free(&rb);
	pt_ranks_free(&rm);
	pt_merge_free(m);
	pt_trace_free(a);
	pt_trace_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_slow_rank),
	    cmocka_unit_test(test_percentiles),
	    cmocka_unit_test(test_kineto_layout),
	    cmocka_unit_test(test_no_table),
	    cmocka_unit_test(test_step_window),
	    cmocka_unit_test(test_empty),
	    cmocka_unit_test(test_real_single),
	    cmocka_unit_test(test_real_pair),
	    cmocka_unit_test(test_merge_offset),
	    cmocka_unit_test(test_merge_same_clock),
	    cmocka_unit_test(test_merge_real),
	    cmocka_unit_test(test_gpu_pid_not_a_rank),
	    cmocka_unit_test(test_window_ordinals),
	    cmocka_unit_test(test_many_ranks_sized_by_rank),
	    cmocka_unit_test(test_threads_same),
	    cmocka_unit_test(test_threads_cap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
