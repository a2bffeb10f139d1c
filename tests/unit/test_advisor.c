/*
 * test_advisor.c - the bottleneck advisor: every rule fires on a trace that
 * has its problem and stays quiet on one that does not (no false alarms on
 * the healthy resnet50 num_workers=4 trace, on which no rule may fire).
 * Real traces from fixtures/traces where one shows the problem (resnet50
 * workers0: input-bound at 39.64 %; HTA's sampled NCCL rank: communication
 * 32 % with 15 % overlap; the legacy autograd trace: cudaEventSynchronize
 * inside cuDNN convolutions), hand-built ones elsewhere (times in µs).
 * Also: thresholds from the opts struct, severity order, the sync rule
 * naming `.item()`, escaping of names, the text section and the JSON array.
 */
#include "testutil.h"

#include <math.h>

#include "output/advisor_int.h"
#include "proftop/advisor.h"
#include "proftop/agg.h"
#include "proftop/chrome.h"
#include "proftop/ranks.h"
#include "proftop/report.h"

static struct pt_trace *load(const char *dir, const char *rel)
{
	return tu_load_trace(dir, rel);
}

static struct pt_summary *summarize_all(struct pt_trace *t)
{
	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	return pt_summarize(t, &o);
}

static void ev_full(struct pt_trace *t, uint32_t track, enum pt_kind kind, const char *name,
		    double start_us, double dur_us, uint32_t corr, uint8_t flags, uint64_t arg)
{
	struct pt_event ev = {0};
	ev.start_ns = US(start_us);
	ev.dur_ns = US(dur_us);
	ev.name_id = pt_trace_intern(t, name, strlen(name));
	ev.track_id = track;
	ev.corr = corr;
	ev.kind = (uint8_t)kind;
	ev.flags = flags;
	ev.arg = arg;
	pt_trace_add(t, &ev);
}

/* Advice over the whole trace (scan included), ranks when two or more. */
static void advise_all(struct pt_trace *t, const struct pt_advisor_opts *o,
		       struct pt_advice_list *out)
{
	struct pt_summary *s = summarize_all(t);
	struct pt_ranks r = {0};
	int have = pt_ranks_possible(t) && pt_ranks_compute(t, NULL, &r) == 0 && r.n >= 2;
	pt_advise_trace(t, s, have ? &r : NULL, -1, o, out);
	pt_ranks_free(&r);
	pt_summary_free(s);
}

static const struct pt_advice *find(const struct pt_advice_list *l, enum pt_advice_key k)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].key == k)
			return &l->v[i];
	return NULL;
}

static void dump(const struct pt_advice_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		print_message("#   %s %.3f: %s\n", pt_advice_key_name(l->v[i].key), l->v[i].value,
			      l->v[i].evidence);
}

#define HAS(l, k) (find((l), (k)) != NULL)

/* ---- synthetic traces ---- */

/*
 * n steps of step_us on one host thread: a Dataloader of dl_us at the
 * start, a Forward op with one kernel launch (launch_us) whose kernel runs
 * kern_us on GPU 0, the rest idle.
 */
static struct pt_trace *simple_steps(int n, double step_us, double dl_us, double launch_us,
				     double kern_us)
{
	struct pt_trace *t = pt_trace_new(64 << 20);
	uint32_t h = tu_track(t, 1, 1, -1), g = tu_track(t, 1, 7, 0);
	for (int i = 0; i < n; i++) {
		double s = i * step_us;
		char nm[32];
		snprintf(nm, sizeof nm, "ProfilerStep#%d", i);
		tu_ev(t, h, PT_KIND_PROFILE_STEP, nm, s, step_us, 0);
		if (dl_us > 0)
			tu_ev(t, h, PT_KIND_DATALOADER, "enumerate(DataLoader)", s, dl_us, 0);
		double f0 = s + dl_us + 1;
		tu_ev(t, h, PT_KIND_FORWARD, "## forward ##", f0, launch_us + 20, 0);
		tu_ev(t, h, PT_KIND_OPERATOR, "aten::mm", f0 + 1, launch_us + 10, 0);
		tu_ev(t, h, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", f0 + 2, launch_us,
		      (uint32_t)(i + 1));
		tu_ev(t, g, PT_KIND_KERNEL, "gemm", f0 + 2 + launch_us, kern_us, (uint32_t)(i + 1));
	}
	return t;
}

/* ---- input_bound ---- */

static void test_input_bound_real_workers0(void **state)
{
	(void)state;
	struct pt_trace *t = load(tu_fixtures(), "pytorch/resnet50_workers0.pt.trace.json.gz");
	if (!t)
		skip();
	struct pt_advice_list l;
	advise_all(t, NULL, &l);
	dump(&l);
	const struct pt_advice *a = find(&l, PT_ADV_INPUT_BOUND);
	assert_non_null(a);
	assert_true(fabs(a->value - 39.64) < 0.01); /* SOURCES.md: 39.6 % */
	assert_true(a->threshold == 20.0);
	assert_int_equal(a->severity, PT_ADV_WARNING);
	assert_non_null(strstr(a->evidence, "reader ratio 39.64%"));
	assert_non_null(strstr(a->evidence, "69.30 ms")); /* DataLoader avg 69,299 us */
	assert_non_null(strstr(a->suggestion, "num_workers"));
	assert_non_null(strstr(a->suggestion, "ips 30 -> 101"));
	/* it is the only problem: the GPU is busy outside the loader */
	assert_int_equal(l.n, 1);
	pt_trace_free(t);
}

/* The healthy run: no rule may fire. */
static void test_healthy_real_workers4(void **state)
{
	(void)state;
	struct pt_trace *t = load(tu_fixtures(), "pytorch/resnet50_workers4.pt.trace.json.gz");
	if (!t)
		skip();
	struct pt_advice_list l;
	advise_all(t, NULL, &l);
	dump(&l);
	assert_int_equal(l.n, 0);
	pt_trace_free(t);
}

static void test_input_bound_synthetic_and_threshold(void **state)
{
	(void)state;
	/* 10 steps of 10 ms with 2.5 ms of loading: 25 % */
	struct pt_trace *t = simple_steps(10, 10000, 2500, 5, 5000);
	struct pt_advice_list l;
	advise_all(t, NULL, &l);
	const struct pt_advice *a = find(&l, PT_ADV_INPUT_BOUND);
	assert_non_null(a);
	assert_true(fabs(a->value - 25.0) < 1e-6);
	/* a higher threshold keeps it quiet; a low one makes it critical */
	struct pt_advisor_opts o;
	pt_advisor_opts_init(&o);
	o.input_ratio_pct = 30;
	advise_all(t, &o, &l);
	assert_false(HAS(&l, PT_ADV_INPUT_BOUND));
	o.input_ratio_pct = 10;
	advise_all(t, &o, &l);
	assert_int_equal(find(&l, PT_ADV_INPUT_BOUND)->severity, PT_ADV_CRITICAL);
	pt_trace_free(t);
	/* 1 % of loading: quiet */
	t = simple_steps(10, 10000, 100, 5, 9000);
	advise_all(t, NULL, &l);
	assert_int_equal(l.n, 0);
	pt_trace_free(t);
}

/* ---- gpu_starved ---- */

static void test_gpu_starved(void **state)
{
	(void)state;
	/* 2 ms launches feeding 100 µs kernels in 5 ms steps: GPU 2 % busy,
	 * launches 40 % of step time */
	struct pt_trace *t = simple_steps(24, 5000, 0, 2000, 100);
	struct pt_advice_list l;
	advise_all(t, NULL, &l);
	dump(&l);
	const struct pt_advice *a = find(&l, PT_ADV_GPU_STARVED);
	assert_non_null(a);
	assert_true(a->value < 5.0);
	assert_int_equal(a->severity, PT_ADV_CRITICAL);
	assert_non_null(strstr(a->evidence, "kernel launches take 40.0% of step time"));
	assert_non_null(strstr(a->suggestion, "CUDA graphs"));
	pt_trace_free(t);
	/* the same launches feeding 4.5 ms kernels: busy, quiet */
	t = simple_steps(24, 5000, 0, 2000, 4500);
	advise_all(t, NULL, &l);
	dump(&l);
	assert_false(HAS(&l, PT_ADV_GPU_STARVED));
	pt_trace_free(t);
	/* idle GPU because of the loader is the input rule's, not this one */
	t = simple_steps(24, 10000, 8000, 5, 1900);
	advise_all(t, NULL, &l);
	dump(&l);
	assert_true(HAS(&l, PT_ADV_INPUT_BOUND));
	assert_false(HAS(&l, PT_ADV_GPU_STARVED));
	pt_trace_free(t);
	/* too few kernels to judge: 8 */
	t = simple_steps(8, 5000, 0, 2000, 100);
	advise_all(t, NULL, &l);
	assert_false(HAS(&l, PT_ADV_GPU_STARVED));
	pt_trace_free(t);
	/* (the loader-bound case once more with the kernel count met) */
	t = simple_steps(24, 10000, 8000, 5, 1900);
	advise_all(t, NULL, &l);
	dump(&l);
	assert_true(HAS(&l, PT_ADV_INPUT_BOUND));
	assert_false(HAS(&l, PT_ADV_GPU_STARVED));
	pt_trace_free(t);
}

/* ---- sync ---- */

/*
 * Steps of 10 ms: `.item()` - aten::item > aten::_local_scalar_dense >
 * cudaMemcpyAsync + cudaStreamSynchronize (sync_us) - plus a bare
 * cudaDeviceSynchronize of 100 µs outside any operator.
 */
static struct pt_trace *item_steps(double sync_us, int nsteps)
{
	struct pt_trace *t = pt_trace_new(256 << 20);
	uint32_t h = tu_track(t, 1, 1, -1), g = tu_track(t, 1, 7, 0);
	for (int i = 0; i < nsteps; i++) {
		double s = i * 10000.0;
		char nm[32];
		snprintf(nm, sizeof nm, "ProfilerStep#%d", i);
		tu_ev(t, h, PT_KIND_PROFILE_STEP, nm, s, 10000, 0);
		tu_ev(t, h, PT_KIND_OPERATOR, "aten::mm", s + 10, 100, 0);
		tu_ev(t, h, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", s + 20, 5, (uint32_t)(i + 1));
		tu_ev(t, g, PT_KIND_KERNEL, "gemm", s + 30, 9000, (uint32_t)(i + 1));
		tu_ev(t, h, PT_KIND_OPERATOR, "aten::item", s + 200, sync_us + 50, 0);
		tu_ev(t, h, PT_KIND_OPERATOR, "aten::_local_scalar_dense", s + 201, sync_us + 40,
		      0);
		tu_ev(t, h, PT_KIND_CUDA_RUNTIME, "cudaMemcpyAsync", s + 202, 10, 0);
		ev_full(t, h, PT_KIND_CUDA_RUNTIME, "cudaStreamSynchronize", s + 220, sync_us, 0,
			PT_EVF_SYNC, 0);
		tu_ev(t, h, PT_KIND_CUDA_RUNTIME, "cudaDeviceSynchronize", s + 9800, 100, 0);
	}
	return t;
}

static struct pt_trace *item_trace(double sync_us)
{
	return item_steps(sync_us, 6);
}

static void test_sync_names_item(void **state)
{
	(void)state;
	struct pt_trace *t = item_trace(3000);
	struct pt_advice_list l;
	advise_all(t, NULL, &l);
	dump(&l);
	const struct pt_advice *a = find(&l, PT_ADV_SYNC);
	assert_non_null(a);
	assert_true(fabs(a->value - 31.0) < 1e-6); /* (3000 + 100) / 10000 */
	assert_int_equal(a->severity, PT_ADV_CRITICAL);
	assert_non_null(strstr(a->evidence, "most in cudaStreamSynchronize issued by aten::item > "
					    "aten::_local_scalar_dense (6 calls, 18.00 ms)"));
	assert_non_null(strstr(a->evidence, "then cudaDeviceSynchronize outside any operator"));
	assert_non_null(strstr(a->suggestion, "`.item()`"));
	pt_trace_free(t);
	/* 100 µs waits: 2 % of the step, quiet */
	t = item_trace(100);
	advise_all(t, NULL, &l);
	dump(&l);
	assert_false(HAS(&l, PT_ADV_SYNC));
	pt_trace_free(t);
}

static void test_sync_scan_facts(void **state)
{
	(void)state;
	struct pt_trace *t = item_trace(3000);
	struct pt_summary *s = summarize_all(t);
	struct pt_advisor_facts f;
	pt_advisor_scan(t, 0, UINT64_MAX, -1, &f);
	assert_int_equal(f.sync_calls, 12);
	assert_int_equal(f.sync_ns, US(6 * 3100));
	assert_int_equal(f.launch_calls, 6);
	assert_int_equal(f.launch_ns, US(30));
	assert_int_equal(f.nsites, 2);
	/* another process's tracks only: nothing */
	pt_advisor_scan(t, 0, UINT64_MAX, 99, &f);
	assert_int_equal(f.sync_calls, 0);
	/* without the scan the rule cannot tell */
	struct pt_advice_list l;
	pt_advise(t, s, NULL, NULL, NULL, &l);
	assert_false(HAS(&l, PT_ADV_SYNC));
	pt_summary_free(s);
	pt_trace_free(t);
}

/* Two advice lists alike, finding for finding. */
static void same_advice(const struct pt_advice_list *a, const struct pt_advice_list *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		assert_int_equal(a->v[i].key, b->v[i].key);
		assert_int_equal(a->v[i].severity, b->v[i].severity);
		assert_true(a->v[i].value == b->v[i].value);
		assert_string_equal(a->v[i].evidence, b->v[i].evidence);
		assert_string_equal(a->v[i].suggestion, b->v[i].suggestion);
	}
}

/*
 * The store scan made on the summary's second thread (pt_agg_opts.spare)
 * covers the span the summary's steps cover, the whole run's or a step
 * range's, and gives the advice the scan after the summary gives. It is
 * used only where its span is the summary's: facts emptied on purpose
 * change the advice under the right span and nothing under another.
 */
static void test_prescan_beside_summary(void **state)
{
	(void)state;
	struct pt_trace *t = item_trace(3000);
	for (int range = 0; range < 2; range++) {
		struct pt_advisor_prescan pre = {0};
		pre.t = t;
		struct pt_agg_opts o;
		pt_agg_opts_init(&o);
		if (range) {
			o.step_first = 2;
			o.step_last = 3;
		}
		o.lists_thread = 2;
		o.spare = pt_advisor_prescan_spare;
		o.spare_arg = &pre;
		struct pt_summary *s = pt_summarize(t, &o);
		assert_int_equal(s->nsteps, range ? 2 : 6);
		assert_true(pre.done);
		assert_int_equal(pre.t0_ns, US(range ? 20000 : 0));
		assert_int_equal(pre.t1_ns, US(range ? 40000 : 60000));
		assert_int_equal(pre.f.sync_calls, range ? 4 : 12);
		struct pt_advice_list want, got;
		pt_advise_trace(t, s, NULL, -1, NULL, &want);
		assert_non_null(find(&want, PT_ADV_SYNC));
		pt_advise_trace_pre(t, s, NULL, -1, NULL, &got, NULL, &pre);
		same_advice(&want, &got);
		/* emptied facts: used under the summary's span (no sync
		 * finding), scanned again under any other */
		struct pt_advisor_prescan empty = pre;
		memset(&empty.f, 0, sizeof empty.f);
		empty.f.scanned = 1;
		pt_advise_trace_pre(t, s, NULL, -1, NULL, &got, NULL, &empty);
		assert_null(find(&got, PT_ADV_SYNC));
		empty.t1_ns--;
		pt_advise_trace_pre(t, s, NULL, -1, NULL, &got, NULL, &empty);
		same_advice(&want, &got);
		empty.t1_ns++;
		empty.done = 0; /* never made */
		pt_advise_trace_pre(t, s, NULL, -1, NULL, &got, NULL, &empty);
		same_advice(&want, &got);
		empty.done = 1; /* one process's advice scans that process */
		pt_advise_trace_pre(t, s, NULL, 1, NULL, &got, NULL, &empty);
		assert_non_null(find(&got, PT_ADV_SYNC));
		pt_summary_free(s);
		/* the summary on one thread: spare is not called */
		struct pt_advisor_prescan none = {0};
		none.t = t;
		o.lists_thread = 1;
		o.spare_arg = &none;
		s = pt_summarize(t, &o);
		assert_false(none.done);
		pt_summary_free(s);
	}
	pt_trace_free(t);
}

/* A `.cpu()` inside the step: aten::to > aten::copy_ with a blocking cudaMemcpy. */
static void test_sync_names_cpu(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(64 << 20);
	uint32_t h = tu_track(t, 1, 1, -1);
	for (int i = 0; i < 5; i++) {
		double s = i * 1000.0;
		tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfilerStep", s, 1000, 0);
		tu_ev(t, h, PT_KIND_OPERATOR, "aten::to", s + 100, 300, 0);
		tu_ev(t, h, PT_KIND_OPERATOR, "aten::copy_", s + 110, 250, 0);
		/* no flag: recognised by name (a source that sets none) */
		tu_ev(t, h, PT_KIND_CUDA_RUNTIME, "cudaMemcpy", s + 120, 200, 0);
	}
	struct pt_advice_list l;
	advise_all(t, NULL, &l);
	dump(&l);
	const struct pt_advice *a = find(&l, PT_ADV_SYNC);
	assert_non_null(a);
	assert_non_null(strstr(a->evidence, "cudaMemcpy issued by aten::to > aten::copy_"));
	assert_non_null(strstr(a->suggestion, "`.cpu()`"));
	pt_trace_free(t);
}

static void test_sync_real_autograd(void **state)
{
	(void)state;
	struct pt_trace *t =
	    load(tu_traces(), "kineto_tb_plugin/"
			      "samples__resnet50_autograd_api_num_workers_0__worker0."
			      "pt.trace.json.gz");
	if (!t)
		skip();
	struct pt_advice_list l;
	advise_all(t, NULL, &l);
	dump(&l);
	const struct pt_advice *a = find(&l, PT_ADV_SYNC);
	assert_non_null(a);
	assert_non_null(strstr(a->evidence, "cudaEventSynchronize issued by aten::conv2d"));
	pt_trace_free(t);
}

/* ---- comm_bound ---- */

static void test_comm_real(void **state)
{
	(void)state;
	struct pt_trace *t = load(tu_traces(), "hta/trace_filter__sampled_rank-0.json.gz");
	if (!t)
		skip();
	struct pt_advice_list l;
	advise_all(t, NULL, &l);
	dump(&l);
	const struct pt_advice *a = find(&l, PT_ADV_COMM_BOUND);
	assert_non_null(a);
	assert_true(fabs(a->value - 32.2) < 0.1);
	assert_non_null(strstr(a->evidence, "only 14.9% of it overlapped"));
	assert_non_null(strstr(a->suggestion, "bucket_cap_mb"));
	pt_trace_free(t);
	/* 7 % communication: quiet */
	t = load(tu_traces(), "hta/nccl_parser_config__nccl_data.json.gz");
	if (!t)
		skip();
	advise_all(t, NULL, &l);
	dump(&l);
	assert_false(HAS(&l, PT_ADV_COMM_BOUND));
	pt_trace_free(t);
}

/* Communication overlapped by compute (or short) does not fire. */
static void test_comm_synthetic(void **state)
{
	(void)state;
	for (int overlapped = 0; overlapped < 2; overlapped++) {
		struct pt_trace *t = pt_trace_new(64 << 20);
		uint32_t h = tu_track(t, 1, 1, -1), g = tu_track(t, 1, 7, 0),
			 c = tu_track(t, 1, 8, 0);
		for (int i = 0; i < 5; i++) {
			double s = i * 10000.0;
			tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfilerStep", s, 10000, 0);
			tu_ev(t, g, PT_KIND_KERNEL, "gemm", s + 100, 5000, 0);
			/* 4 ms of all-reduce after (or during) the compute */
			tu_ev(t, c, PT_KIND_COMMUNICATION, "ncclAllReduce",
			      s + (overlapped ? 500 : 5200), 4000, 0);
		}
		struct pt_advice_list l;
		advise_all(t, NULL, &l);
		dump(&l);
		assert_int_equal(HAS(&l, PT_ADV_COMM_BOUND), !overlapped);
		if (!overlapped) {
			assert_true(fabs(find(&l, PT_ADV_COMM_BOUND)->value - 40.0) < 1e-6);
			assert_int_equal(find(&l, PT_ADV_COMM_BOUND)->severity, PT_ADV_CRITICAL);
		}
		pt_trace_free(t);
	}
}

/* ---- memcpy_pageable ---- */

static void test_memcpy_pageable(void **state)
{
	(void)state;
	for (int pinned = 0; pinned < 2; pinned++) {
		struct pt_trace *t = simple_steps(5, 10000, 0, 10, 8000);
		uint32_t h = tu_track(t, 1, 1, -1), g = tu_track(t, 1, 9, 0);
		const char *nm =
		    pinned ? "Memcpy HtoD (Pinned -> Device)" : "Memcpy HtoD (Pageable -> Device)";
		for (int i = 0; i < 5; i++) {
			double s = i * 10000.0 + 9000;
			tu_ev(t, h, PT_KIND_CUDA_RUNTIME, "cudaMemcpyAsync", s, 700,
			      (uint32_t)(100 + i));
			ev_full(t, g, PT_KIND_MEMCPY, nm, s + 5, 700, (uint32_t)(100 + i), 0,
				1 << 20);
		}
		struct pt_advice_list l;
		advise_all(t, NULL, &l);
		dump(&l);
		assert_int_equal(HAS(&l, PT_ADV_MEMCPY_PAGEABLE), !pinned);
		if (!pinned) {
			const struct pt_advice *a = find(&l, PT_ADV_MEMCPY_PAGEABLE);
			assert_true(fabs(a->value - 7.0) < 1e-6);
			assert_non_null(
			    strstr(a->evidence, "Memcpy HtoD (Pageable -> Device) 3.50 ms / 5"));
			assert_non_null(strstr(a->suggestion, "pin_memory=True"));
		}
		pt_trace_free(t);
	}
	/* the real workers0 trace copies from pageable memory too, 1.1 % of
	 * the step: quiet (checked by test_input_bound_real_workers0's n == 1) */
}

/* ---- straggler ---- */

static struct pt_trace *ranks_trace(double slow_step_us)
{
	struct pt_trace *t = pt_trace_new(64 << 20);
	for (int r = 0; r < 4; r++) {
		int64_t pid = 100 + r;
		pt_trace_set_proc(t, pid, r, "node0");
		uint32_t h = tu_track(t, pid, pid, -1);
		double step = r == 2 ? slow_step_us : 10000;
		for (int i = 0; i < 6; i++) {
			tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfilerStep", i * step, step, 0);
			tu_ev(t, h, PT_KIND_DATALOADER, "enumerate(DataLoader)", i * step,
			      step / 10, 0);
		}
	}
	return t;
}

static void test_straggler(void **state)
{
	(void)state;
	struct pt_trace *t = ranks_trace(15000);
	struct pt_advice_list l;
	advise_all(t, NULL, &l);
	dump(&l);
	const struct pt_advice *a = find(&l, PT_ADV_STRAGGLER);
	assert_non_null(a);
	assert_true(fabs(a->value - 1.5) < 1e-6);
	assert_int_equal(a->severity, PT_ADV_CRITICAL); /* 0.5 >= 2 x 0.2 */
	assert_non_null(strstr(a->evidence,
			       "rank 2 on node0: step 15.00 ms vs the median 10.00 ms of 4 ranks"));
	pt_trace_free(t);
	/* 5 % slower: within the spread allowed */
	t = ranks_trace(10500);
	advise_all(t, NULL, &l);
	dump(&l);
	assert_false(HAS(&l, PT_ADV_STRAGGLER));
	pt_trace_free(t);
	/* one rank: nothing to compare */
	struct pt_ranks r = {0};
	t = simple_steps(6, 10000, 100, 5, 9000);
	struct pt_summary *s = summarize_all(t);
	pt_advise(t, s, &r, NULL, NULL, &l);
	assert_false(HAS(&l, PT_ADV_STRAGGLER));
	pt_summary_free(s);
	pt_trace_free(t);
}

/* ---- step_jitter ---- */

static struct pt_trace *jitter_trace(int nslow, double slow_us)
{
	struct pt_trace *t = pt_trace_new(64 << 20);
	uint32_t h = tu_track(t, 1, 1, -1);
	double at = 0;
	for (int i = 0; i < 12; i++) {
		/* the slow ones are spread out, and step 0 is always slow:
		 * the warm-up must not count */
		double d = i == 0 || (i % 4 == 2 && (i / 4) < nslow) ? slow_us : 10000;
		char nm[32];
		snprintf(nm, sizeof nm, "ProfilerStep#%d", i);
		tu_ev(t, h, PT_KIND_PROFILE_STEP, nm, at, d, 0);
		at += d;
	}
	return t;
}

static void test_step_jitter(void **state)
{
	(void)state;
	struct pt_trace *t = jitter_trace(3, 25000);
	struct pt_advice_list l;
	advise_all(t, NULL, &l);
	dump(&l);
	const struct pt_advice *a = find(&l, PT_ADV_STEP_JITTER);
	assert_non_null(a);
	assert_true(fabs(a->value - 2.5) < 1e-6);
	assert_non_null(strstr(a->evidence, "over 11 steps, 3 of them"));
	assert_non_null(strstr(a->evidence, "step 2, took 25.00 ms"));
	assert_non_null(strstr(a->suggestion, "gc.freeze()"));
	pt_trace_free(t);
	/* only the warm-up step and one more are slow: quiet */
	t = jitter_trace(1, 25000);
	advise_all(t, NULL, &l);
	dump(&l);
	assert_false(HAS(&l, PT_ADV_STEP_JITTER));
	pt_trace_free(t);
	/* 20 % slower steps: quiet */
	t = jitter_trace(3, 12000);
	advise_all(t, NULL, &l);
	assert_false(HAS(&l, PT_ADV_STEP_JITTER));
	pt_trace_free(t);
}

/* ---- order, escaping, output ---- */

static void test_order_by_severity(void **state)
{
	(void)state;
	/* input at 25 % (warning) and sync at 31 % (critical): sync first
	 * although input comes first in rule order */
	struct pt_trace *t = item_trace(3000);
	uint32_t h = tu_track(t, 1, 1, -1);
	for (int i = 0; i < 6; i++)
		tu_ev(t, h, PT_KIND_DATALOADER, "enumerate(DataLoader)", i * 10000.0 + 1, 190, 0);
	struct pt_advisor_opts o;
	pt_advisor_opts_init(&o);
	o.input_ratio_pct = 1.5; /* 1.9 %: a warning */
	struct pt_advice_list l;
	advise_all(t, &o, &l);
	dump(&l);
	assert_true(l.n >= 2);
	assert_int_equal(l.v[0].key, PT_ADV_SYNC);
	assert_int_equal(l.v[0].severity, PT_ADV_CRITICAL);
	for (size_t i = 1; i < l.n; i++)
		assert_true(l.v[i - 1].severity >= l.v[i].severity);
	assert_true(HAS(&l, PT_ADV_INPUT_BOUND));
	pt_trace_free(t);
}

static void test_names_escaped_and_outputs(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(64 << 20);
	uint32_t h = tu_track(t, 1, 1, -1);
	for (int i = 0; i < 5; i++) {
		double s = i * 1000.0;
		tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfilerStep", s, 1000, 0);
		tu_ev(t, h, PT_KIND_OPERATOR, "evil\x1b]0;pwned\x07op\"q", s + 100, 300, 0);
		tu_ev(t, h, PT_KIND_CUDA_RUNTIME, "cudaDeviceSynchronize", s + 120, 200, 0);
	}
	struct pt_advice_list l;
	advise_all(t, NULL, &l);
	const struct pt_advice *a = find(&l, PT_ADV_SYNC);
	assert_non_null(a);
	assert_null(strchr(a->evidence, '\x1b'));
	assert_null(strchr(a->suggestion, '\x1b'));
	assert_non_null(strstr(a->evidence, "evil\\e]0;pwned\\x07op\"q"));

	/* text: the Advice box */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	pt_advice_text(f, &l);
	fclose(f);
	assert_non_null(strstr(buf, "======Advice======"));
	assert_non_null(strstr(buf, "1. [critical] synchronization"));
	assert_non_null(strstr(buf, "   Evidence:   "));
	assert_null(strchr(buf, '\x1b'));
	for (char *p = buf, *e; *p; p = e + 1) { /* wrapped to the box (a long word may overflow) */
		e = strchr(p, '\n');
		assert_non_null(e);
		assert_true(e - p <= 110);
	}
	free(buf);

	/* JSON: the array, the quote escaped */
	struct pt_buf b = {0};
	pt_advice_json_buf(&b, &l);
	pt_buf_putc(&b, 0);
	assert_non_null(strstr(b.p, "\"advice\": ["));
	assert_non_null(strstr(b.p, "\"key\":\"sync\",\"severity\":\"critical\""));
	assert_non_null(strstr(b.p, "op\\\"q"));
	assert_non_null(strstr(b.p, "\"value\":20,\"threshold\":5,\"unit\":\"%\"}"));
	pt_buf_free(&b);
	struct pt_advice_list none = {.n = 0};
	pt_advice_json_buf(&b, &none);
	pt_buf_putc(&b, 0);
	assert_string_equal(b.p, ",\n  \"advice\": []");
	pt_buf_free(&b);
	pt_trace_free(t);
}

/* The report carries the section, and --no-advice (opts) removes it. */
static void test_report_section(void **state)
{
	(void)state;
	struct pt_trace *t = simple_steps(10, 10000, 2500, 5, 5000);
	struct pt_summary *s = summarize_all(t);
	struct pt_report_opts ro;
	pt_report_opts_init(&ro);
	for (int no = 0; no < 2; no++) {
		ro.no_advice = no;
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		assert_int_equal(pt_report_text(f, t, s, &ro), 0);
		fclose(f);
		char *perf = strstr(buf, "Perf Summary"), *adv = strstr(buf, "=Advice=");
		assert_non_null(perf);
		if (no) {
			assert_null(adv);
		} else {
			assert_non_null(adv);
			assert_true(adv > perf);
			assert_non_null(strstr(adv, "(input_bound)"));
		}
		free(buf);
		buf = NULL;
		f = open_memstream(&buf, &len);
		assert_int_equal(pt_report_json(f, t, s, &ro), 0);
		fclose(f);
		assert_int_equal(strstr(buf, "\"key\":\"input_bound\"") != NULL, !no);
		assert_non_null(strstr(buf, "\"advice\": ["));
		free(buf);
	}
	pt_summary_free(s);
	pt_trace_free(t);
}

/* The report of a trace large enough for the summary's second thread and
 * the report's own (the data pipeline and the advice worked out while the
 * tables are written): the same text and JSON with the scan made beside
 * the summary as with the scan made after it. */
static void test_report_prescan_large(void **state)
{
	(void)state;
	struct pt_trace *t = item_steps(3000, PT_SUMMARIZE_PIPE_EVENTS / 9 + 1);
	assert_true(pt_store_count(t->store) >= PT_SUMMARIZE_PIPE_EVENTS);
	struct pt_advisor_prescan pre = {0};
	pre.t = t;
	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	o.spare = pt_advisor_prescan_spare;
	o.spare_arg = &pre;
	struct pt_summary *s1 = pt_summarize(t, &o);
	assert_true(pre.done);
	struct pt_summary *s0 = summarize_all(t);
	for (int json = 0; json < 2; json++) {
		char *out[2];
		for (int with = 0; with < 2; with++) {
			struct pt_report_opts ro;
			pt_report_opts_init(&ro);
			ro.prescan = with ? &pre : NULL;
			size_t len = 0;
			out[with] = NULL;
			FILE *f = open_memstream(&out[with], &len);
			assert_int_equal(json ? pt_report_json(f, t, with ? s1 : s0, &ro)
					      : pt_report_text(f, t, with ? s1 : s0, &ro),
					 0);
			fclose(f);
		}
		assert_string_equal(out[0], out[1]);
		assert_non_null(strstr(out[1], json ? "\"key\":\"sync\"" : "(sync)"));
		free(out[0]);
		free(out[1]);
	}
	pt_summary_free(s0);
	pt_summary_free(s1);
	pt_trace_free(t);
}

static void test_empty(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(64 << 20);
	struct pt_advice_list l;
	advise_all(t, NULL, &l);
	assert_int_equal(l.n, 0);
	pt_advise(NULL, NULL, NULL, NULL, NULL, &l);
	assert_int_equal(l.n, 0);
	for (int k = 0; k < PT_ADV__COUNT; k++)
		assert_string_not_equal(pt_advice_key_name((enum pt_advice_key)k), "?");
	pt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_input_bound_real_workers0),
	    cmocka_unit_test(test_healthy_real_workers4),
	    cmocka_unit_test(test_input_bound_synthetic_and_threshold),
	    cmocka_unit_test(test_gpu_starved),
	    cmocka_unit_test(test_sync_names_item),
	    cmocka_unit_test(test_sync_scan_facts),
	    cmocka_unit_test(test_prescan_beside_summary),
	    cmocka_unit_test(test_report_prescan_large),
	    cmocka_unit_test(test_sync_names_cpu),
	    cmocka_unit_test(test_sync_real_autograd),
	    cmocka_unit_test(test_comm_real),
	    cmocka_unit_test(test_comm_synthetic),
	    cmocka_unit_test(test_memcpy_pageable),
	    cmocka_unit_test(test_straggler),
	    cmocka_unit_test(test_step_jitter),
	    cmocka_unit_test(test_order_by_severity),
	    cmocka_unit_test(test_names_escaped_and_outputs),
	    cmocka_unit_test(test_report_section),
	    cmocka_unit_test(test_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
