/*
 * test_agg_rules.c - the aggregator's rules where they are easy to get
 * wrong: unions and GPU-to-step attribution against brute force on random
 * intervals, step ordinals, autograd nodes as Backward, the overhang's
 * parent, nested operators of one name counted once, user ranges over
 * threads, work outside the steps, the Backward span and its busy time, and
 * torch.compile's steps.
 */
#include "agg_util.h"

static void test_union_random(void **state)
{
	(void)state;
	srand(12345);
	for (int round = 0; round < 20; round++) {
		struct pt_trace *t = new_trace();
		static unsigned char cover[2000];
		memset(cover, 0, sizeof cover);
		for (int k = 0; k < 3; k++) {
			uint32_t tr = tu_track(t, 0, k, 0);
			int pos = 0;
			for (int i = 0; i < 40; i++) {
				pos += rand() % 30;
				int len = rand() % 40;
				if (pos + len >= 2000)
					break;
				tu_ev(t, tr, PT_KIND_KERNEL, "k", pos, len, 0);
				for (int x = pos; x < pos + len; x++)
					cover[x] = 1;
			}
		}
		uint64_t want = 0;
		for (int x = 0; x < 2000; x++)
			want += cover[x];
		struct pt_summary *s = summarize_all(t);
		assert_int_equal(s->overview[PT_KIND_KERNEL].union_ns, US(want));
		assert_int_equal(s->dist.comp_ns, US(want));
		pt_summary_free(s);
		pt_trace_free(t);
	}
}

/* GPU time goes to the step holding its launch's start (an orphan's own
 * start): the latest-starting of the steps that hold it. Steps on two
 * threads overlap; launches on three threads are settled a thread at a
 * time, so the times asked about jump back at each thread. Orphans (no
 * launch) count as their union on the device per step. Against a
 * brute-force search over the steps and a bitmap of each step's orphans. */
static void test_gpu_to_steps_random(void **state)
{
	(void)state;
	srand(4242);
	for (int round = 0; round < 20; round++) {
		struct pt_trace *t = new_trace();
		uint32_t st_tr[2] = {tu_track(t, 1, 1, -1), tu_track(t, 1, 2, -1)};
		uint32_t host[3] = {st_tr[0], st_tr[1], tu_track(t, 1, 3, -1)};
		uint32_t g = tu_track(t, 0, 7, 0);
		enum { MAXS = 64 };
		uint64_t ss[MAXS], se[MAXS], want[MAXS];
		static unsigned char orph[MAXS][4100 * 4]; /* quarter-microsecond cells */
		memset(orph, 0, sizeof orph);
		int ns = 0;
		for (int k = 0; k < 2; k++) { /* odd starts on one thread, even on the other */
			int pos = k;
			while (ns < MAXS) {
				pos += 2 * (rand() % 20);
				int len = 2 + 2 * (rand() % 40);
				if (pos + len >= 4000)
					break;
				char name[32];
				snprintf(name, sizeof name, "ProfilerStep#%d", ns);
				tu_ev(t, st_tr[k], PT_KIND_PROFILE_STEP, name, pos, len, 0);
				ss[ns] = US(pos);
				se[ns] = US(pos + len);
				want[ns++] = 0;
				pos += len;
			}
		}
		uint32_t corr = 1;
		for (int i = 0; i < 300; i++) {
			double at = rand() % 4000 + 0.25;
			double dur = 1 + rand() % 9;
			uint32_t c = rand() % 8 ? corr++ : 0; /* some kernels have no launch */
			if (c)
				tu_ev(t, host[rand() % 3], PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel",
				      at, 0.5, c);
			tu_ev(t, g, PT_KIND_KERNEL, "k", at + 0.5, dur, c);
			/* the step holding the launch's start (an orphan's own) */
			uint64_t x = c ? US(at) : US(at + 0.5);
			int best = -1;
			for (int j = 0; j < ns; j++)
				if (ss[j] <= x && x < se[j] && (best < 0 || ss[j] > ss[best]))
					best = j;
			if (best >= 0 && c)
				want[best] += US(dur);
			else if (best >= 0)
				for (int q = (int)((at + 0.5) * 4); q < (int)((at + 0.5 + dur) * 4); q++)
					orph[best][q] = 1;
		}
		for (int j = 0; j < ns; j++)
			for (int q = 0; q < 4100 * 4; q++)
				want[j] += orph[j][q] ? 250 : 0;
		struct pt_summary *s = summarize_all(t);
		assert_int_equal(s->nsteps, ns);
		for (size_t i = 0; i < s->nsteps; i++) {
			int j = (int)s->steps[i].number;
			assert_true(j >= 0 && j < ns);
			assert_int_equal(s->steps[i].start_ns, ss[j]);
			assert_int_equal(s->steps[i].gpu_ns[PT_MS_STEP], want[j]);
		}
		pt_summary_free(s);
		pt_trace_free(t);
	}
}

/* PyTorch before 1.9: no evaluate_function wrapper, only the autograd
 * nodes (flag PT_EVF_AUTOGRAD) on the autograd thread. Step [0,100):
 * dataloader [0,20), forward ops [20,45), nodes [50,60) and [65,80) on
 * thread 2 (span 30), optimizer [85,95). The nodes stay operators. */
/* Steps without a number in their name keep the job's ordinals: in a window
 * that starts later (step_ordinal0), and after the cap dropped the first. */
static void test_step_ordinals(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(0);
	uint32_t h = tu_track(t, 1, 1, -1);
	for (int i = 0; i < 30; i++)
		tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfileStep", i * 100, 90, 0);
	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	o.t0_ns = US(2000);
	o.step_ordinal0 = 20;
	struct pt_summary *s = pt_summarize(t, &o);
	assert_int_equal(s->nsteps, 10);
	assert_int_equal(s->steps[0].number, 20);
	assert_int_equal(s->steps[9].number, 29);
	pt_summary_free(s);
	pt_trace_free(t);

	t = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	h = tu_track(t, 1, 1, -1);
	uint32_t o2 = tu_track(t, 1, 2, -1);
	for (int i = 0; i < 100; i++)
		tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfileStep", i * 100, 90, 0);
	for (int i = 0; i < 40000; i++)
		tu_ev(t, o2, PT_KIND_OPERATOR, "filler", 20000 + i * 0.1, 0.05, 0);
	for (int i = 100; i < 110; i++)
		tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfileStep", 30000 + i * 100, 90, 0);
	assert_true(pt_store_dropped_steps(t->store) > 0);
	s = pt_summarize(t, NULL);
	assert_true(s->nsteps > 0);
	assert_int_equal(s->steps[s->nsteps - 1].number, 109);
	pt_summary_free(s);
	pt_trace_free(t);
}

static void test_autograd_nodes_mark_backward(void **state)
{
	(void)state;
	struct pt_trace *t = new_trace();
	uint32_t m = tu_track(t, 1, 1, -1), bw = tu_track(t, 1, 2, -1), g = tu_track(t, 0, 7, 0);
	tu_ev(t, m, PT_KIND_PROFILE_STEP, "ProfilerStep#3", 0, 100, 0);
	tu_ev(t, m, PT_KIND_DATALOADER, "enumerate(DataLoader)#x", 0, 20, 0);
	tu_ev(t, m, PT_KIND_OPERATOR, "aten::conv2d", 20, 25, 0);
	tu_ev(t, m, PT_KIND_OPTIMIZATION, "Optimizer.step#SGD.step", 85, 10, 0);
	ev_full(t, bw, PT_KIND_OPERATOR, "CudnnConvolutionBackward", 50, 10, 0, PT_EVF_AUTOGRAD, 0);
	tu_ev(t, bw, PT_KIND_OPERATOR, "aten::cudnn_convolution_backward", 51, 8, 0);
	tu_ev(t, bw, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", 52, 1, 9);
	ev_full(t, bw, PT_KIND_OPERATOR, "ReluBackward1", 65, 15, 0, PT_EVF_AUTOGRAD, 0);
	tu_ev(t, g, PT_KIND_KERNEL, "wgrad", 53, 4, 9);
	struct pt_summary *s = summarize_all(t);
	assert_int_equal(s->nsteps, 1);
	assert_int_equal(s->steps[0].cpu_ns[PT_MS_BACKWARD], US(30));
	assert_int_equal(s->steps[0].cpu_ns[PT_MS_FORWARD], US(25));
	assert_int_equal(s->steps[0].cpu_ns[PT_MS_OTHERS], US(100 - 20 - 25 - 30 - 10));
	assert_int_equal(s->steps[0].gpu_ns[PT_MS_BACKWARD], US(4));
	const struct pt_row *r = find_row(t, &s->operators, "CudnnConvolutionBackward", 0);
	assert_int_equal(r->cpu.n, 1);
	assert_int_equal(r->gpu.total_ns, US(4));
	pt_summary_free(s);
	pt_trace_free(t);
}

/* A legacy export rounds start and duration apart: an aten::empty_like
 * that starts 1 µs before its neighbour aten::empty ends and ends 1 µs
 * after it is the neighbour's sibling (as much of it lies outside as
 * inside), under the batch_norm that contains both exactly; a child that
 * only overhangs its parent's end by a rounding stays its child. */
static void test_overhang_picks_the_right_parent(void **state)
{
	(void)state;
	struct pt_trace *t = new_trace();
	uint32_t h = tu_track(t, 1, 1, -1);
	tu_ev(t, h, PT_KIND_OPERATOR, "aten::batch_norm", 100, 50, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "aten::empty", 102, 2, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "aten::empty_like", 103, 2, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "aten::empty_strided", 103, 1, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "aten::linear", 200, 50, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "aten::addmm", 210, 41, 0); /* 1 µs past its parent */
	struct pt_summary *s = summarize_all(t);
	assert_int_equal(find_row(t, &s->operators, "aten::empty", 0)->cpu_self_ns, US(2));
	assert_int_equal(find_row(t, &s->operators, "aten::batch_norm", 0)->cpu_self_ns, US(46));
	assert_int_equal(find_row(t, &s->operators, "aten::empty_like", 0)->cpu_self_ns, US(1));
	assert_int_equal(find_row(t, &s->operators, "aten::linear", 0)->cpu_self_ns, US(9));
	/* op detail: empty_like sits under batch_norm, next to empty */
	const struct pt_table *d = &s->op_detail;
	for (size_t i = 0; i < d->n; i++) {
		const char *n = row_name(t, &d->rows[i]);
		if (!strcmp(n, "aten::empty_like") || !strcmp(n, "aten::empty"))
			assert_string_equal(row_name(t, &d->rows[d->rows[i].parent]),
					    "aten::batch_norm");
		if (!strcmp(n, "aten::addmm"))
			assert_string_equal(row_name(t, &d->rows[d->rows[i].parent]),
					    "aten::linear");
	}
	/* the overhang is cut for the ratio: addmm is 40 of linear's 50 µs */
	assert_int_equal(find_row(t, &s->operators, "aten::addmm", 0)->cpu_ratio_ns, US(40));
	pt_summary_free(s);
	pt_trace_free(t);
}

/* A call nested in a call of its own name (the legacy API records
 * aten::cudnn_convolution_backward twice, one inside the other) counts once
 * in the row's ratio, so no ratio can pass 100%. */
static void test_ratio_counts_nested_same_name_once(void **state)
{
	(void)state;
	struct pt_trace *t = new_trace();
	uint32_t h = tu_track(t, 1, 1, -1), g = tu_track(t, 0, 7, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "conv_bwd", 0, 100, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "conv_bwd", 10, 80, 0);
	tu_ev(t, h, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", 20, 2, 5);
	tu_ev(t, g, PT_KIND_KERNEL, "wgrad", 30, 60, 5);
	struct pt_summary *s = summarize_all(t);
	const struct pt_row *r = find_row(t, &s->operators, "conv_bwd", 0);
	assert_int_equal(r->cpu.n, 2);
	assert_int_equal(r->cpu.total_ns, US(180)); /* per call, as key_averages */
	assert_int_equal(r->gpu.total_ns, US(120));
	assert_int_equal(r->cpu_ratio_ns, US(100));
	assert_int_equal(r->gpu_ratio_ns, US(60));
	assert_int_equal(s->operators.cpu_base_ns, US(100));
	assert_int_equal(s->operators.gpu_base_ns, US(60));
	pt_summary_free(s);
	pt_trace_free(t);
}

/* read_batch on four loader threads, each busy the whole span: a share of
 * four threads' wall time (100%), not of one (400%). */
static void test_user_defined_over_threads(void **state)
{
	(void)state;
	struct pt_trace *t = new_trace();
	uint32_t m = tu_track(t, 1, 1, -1);
	tu_ev(t, m, PT_KIND_PROFILE_STEP, "ProfilerStep#1", 0, 100, 0);
	for (int i = 0; i < 4; i++) {
		uint32_t w = tu_track(t, 1, 10 + i, -1);
		tu_ev(t, w, PT_KIND_USER_DEFINED, "read_batch", 0, 100, 0);
	}
	struct pt_summary *s = summarize_all(t);
	assert_int_equal(s->user_defined.threads, 4);
	assert_int_equal(s->user_defined.cpu_base_ns, US(400));
	const struct pt_row *r = find_row(t, &s->user_defined, "read_batch", 0);
	assert_int_equal(r->cpu_ratio_ns, US(400));
	pt_summary_free(s);
	pt_trace_free(t);
}

/*
 * Events outside the steps count in neither the numerator nor the
 * denominator of the Overview and the Distributed Summary: a kernel still
 * running after the step, a collective between steps, and Kineto's span of
 * the whole profiling session (an internal event, in no summary at all).
 */
static void test_outside_steps_consistent(void **state)
{
	(void)state;
	struct pt_trace *t = new_trace();
	uint32_t m = tu_track(t, 1, 1, -1), o = tu_track(t, 1, 2, -1);
	uint32_t g = tu_track(t, 0, 7, 0), sp = tu_track(t, 1, 99, -1);
	ev_full(t, sp, PT_KIND_OTHER, "PyTorch Profiler (0)", 0, 1000, 0, PT_EVF_INTERNAL, 0);
	tu_ev(t, m, PT_KIND_PROFILE_STEP, "ProfilerStep#1", 100, 100, 0);
	tu_ev(t, m, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", 150, 2, 3);
	tu_ev(t, g, PT_KIND_KERNEL, "k", 160, 90, 3); /* 40 µs in the step, 50 after */
	ev_full(t, o, PT_KIND_USER_DEFINED, "gloo:all_reduce", 50, 300, 0, PT_EVF_COMM, 0);
	struct pt_summary *s = summarize_all(t);
	/* the internal span is not in the profiled span */
	assert_int_equal(s->t0_ns, US(50));
	assert_int_equal(s->t1_ns, US(350));
	assert_int_equal(s->overview[PT_KIND_OTHER].calls, 0);
	assert_int_equal(s->overview[PT_KIND_KERNEL].union_ns, US(40));
	assert_int_equal(s->overview[PT_KIND_KERNEL].ratio_base_ns, US(100));
	assert_int_equal(s->overview[PT_KIND_KERNEL].calls, 1);
	assert_int_equal(s->overview[PT_KIND_USER_DEFINED].union_ns, US(100));
	assert_int_equal(s->dist.step_ns, US(100));
	assert_int_equal(s->dist.comm_ns, US(100));
	assert_int_equal(s->dist.comp_ns, US(40));
	assert_int_equal(s->dist.overlap_ns, US(40));
	assert_true(s->dist.comm_from_host);
	/* the kernel's whole time still goes to the step that launched it */
	assert_int_equal(s->model[PT_MS_STEP].gpu.total_ns, US(90));
	/* UserDefined: its whole 300 µs of the one thread's 300 µs span */
	assert_int_equal(s->user_defined.cpu_base_ns, US(300));
	pt_summary_free(s);
	pt_trace_free(t);
}

/* Backward is a span per step (as Paddle times it); the time its events
 * take is the other figure, Backward busy. No Dataloader: the reader
 * figures are not applicable. */
static void test_backward_span_and_busy(void **state)
{
	(void)state;
	struct pt_trace *t = new_trace();
	uint32_t m = tu_track(t, 1, 1, -1), bw = tu_track(t, 1, 2, -1);
	tu_ev(t, m, PT_KIND_PROFILE_STEP, "ProfilerStep#1", 0, 100, 0);
	tu_ev(t, m, PT_KIND_OPERATOR, "aten::mm", 5, 10, 0);
	tu_ev(t, bw, PT_KIND_BACKWARD, "autograd::engine::evaluate_function: A", 20, 10, 0);
	tu_ev(t, bw, PT_KIND_BACKWARD, "autograd::engine::evaluate_function: B", 40, 10, 0);
	tu_ev(t, bw, PT_KIND_BACKWARD, "autograd::engine::evaluate_function: C", 45, 15, 0);
	struct pt_summary *s = summarize_all(t);
	assert_int_equal(s->model[PT_MS_BACKWARD].cpu.total_ns, US(40)); /* [20, 60) */
	assert_int_equal(s->backward_busy_ns, US(30));			 /* 10 + [40, 60) */
	assert_int_equal(s->overview[PT_KIND_BACKWARD].union_ns, US(40));
	assert_int_equal(s->overview[PT_KIND_BACKWARD].calls, 1);
	assert_int_equal(s->perf.has_reader, 0);
	pt_summary_free(s);
	pt_trace_free(t);
}

/* torch.compile (the Python helper's ranges): steps 0, 2 and 3 compile,
 * step 1 does not, step 4 neither; the compiling steps are left out of the
 * Model and Perf Summaries unless with_compile, counted per step; every step
 * compiling leaves them in; the advisor names the model that recompiles. */
static struct pt_trace *compile_trace(int all)
{
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	uint32_t h = tu_track(t, 1, 1, -1);
	ev_full(t, h, PT_KIND_PROFILE_STEP, "ProfileStep", 0, 1000, 0, 0, 10);
	ev_full(t, h, PT_KIND_FORWARD, "Forward", 0, 950, 0, 0, 0);
	ev_full(t, h, PT_KIND_OPERATOR, "(compiled Net)", 0, 950, 0, 0, 0);
	ev_full(t, h, PT_KIND_USER_DEFINED, "torch.compile: compile", 10, 890, 0, 0, 0);
	ev_full(t, h, PT_KIND_USER_DEFINED, "torch.compile: graph break", 900, 0, 0, 0, 0);
	ev_full(t, h, PT_KIND_USER_DEFINED, "torch.compile: compile", 910, 30, 0, 0, 0);
	ev_full(t, h, PT_KIND_PROFILE_STEP, "ProfileStep", 1000, 100, 0, 0, 10);
	ev_full(t, h, PT_KIND_FORWARD, "Forward", 1000, 50, 0, 0, 0);
	ev_full(t, h, PT_KIND_OPERATOR, "(compiled Net)", 1000, 50, 0, 0, 0);
	if (all)
		ev_full(t, h, PT_KIND_USER_DEFINED, "torch.compile: recompile", 1010, 10, 0, 0, 0);
	ev_full(t, h, PT_KIND_USER_DEFINED, "data: batch", 1060, 10, 0, 0, 0); /* not compile's */
	ev_full(t, h, PT_KIND_PROFILE_STEP, "ProfileStep", 1100, 200, 0, 0, 10);
	ev_full(t, h, PT_KIND_USER_DEFINED, "torch.compile: recompile", 1110, 140, 0, 0, 0);
	ev_full(t, h, PT_KIND_PROFILE_STEP, "ProfileStep", 1300, 150, 0, 0, 10);
	ev_full(t, h, PT_KIND_USER_DEFINED, "torch.compile: recompile", 1310, 40, 0, 0, 0);
	ev_full(t, h, PT_KIND_PROFILE_STEP, "ProfileStep", 1450, 100, 0, 0, 10);
	if (all)
		ev_full(t, h, PT_KIND_USER_DEFINED, "torch.compile: compile", 1460, 10, 0, 0, 0);
	return t;
}

static void test_compile_steps(void **state)
{
	(void)state;
	struct pt_trace *t = compile_trace(0);
	struct pt_summary *s = summarize_all(t);
	assert_int_equal(s->nsteps, 5);
	const struct pt_step *st = s->steps;
	assert_int_equal(st[0].compile_ns, US(920));
	assert_int_equal(st[0].compiles, 2);
	assert_int_equal(st[0].recompiles, 0);
	assert_int_equal(st[0].graph_breaks, 1);
	assert_int_equal(st[1].compile_ns, 0);
	assert_int_equal(st[2].compile_ns, US(140));
	assert_int_equal(st[2].recompiles, 1);
	assert_int_equal(st[4].compile_ns, 0);
	const struct pt_perf *p = &s->perf;
	assert_int_equal(p->compile_steps, 3);
	assert_int_equal(p->compile_left_out, 1);
	assert_int_equal(p->compile_step_ns, US(1000 + 200 + 150));
	assert_int_equal(p->compile_ns, US(920 + 140 + 40));
	assert_int_equal(p->compiles, 4);
	assert_int_equal(p->recompiles, 2);
	assert_int_equal(p->graph_breaks, 1);
	/* the figures: steps 1 and 4 only */
	assert_int_equal(p->steps, 2);
	assert_int_equal(p->batch.total_ns, US(200));
	assert_int_equal(p->batch.max_ns, US(100));
	assert_true(p->ips_avg > 99999.9 && p->ips_avg < 100000.1); /* 20 samples / 200 µs */
	assert_int_equal(s->model[PT_MS_STEP].calls, 2);
	assert_int_equal(s->model[PT_MS_FORWARD].cpu.total_ns, US(50));
	char line[PT_COMPILE_LINE_MAX];
	assert_int_equal(pt_compile_line(s, line, sizeof line, 0), 1);
	assert_string_equal(line, "torch.compile: 3 of 5 steps compiled (#0 #2 #3, 1.4 ms; 1.1 ms "
				  "compiling), left out of the figures; 4 compiles (2 recompiles), "
				  "1 graph break");
	assert_true(pt_compile_line(s, line, sizeof line, 1) && strlen(line) < 80);
	/* the advisor: recompiles in 2 of 5 steps, naming the compiled model */
	struct pt_advice_list adv;
	pt_advise(t, s, NULL, NULL, NULL, &adv);
	const struct pt_advice *rc = NULL;
	for (size_t i = 0; i < adv.n; i++)
		if (adv.v[i].key == PT_ADV_RECOMPILE)
			rc = &adv.v[i];
	assert_non_null(rc);
	assert_non_null(strstr(rc->evidence, "model (compiled Net) recompiled in 2 of 5 steps"));
	pt_summary_free(s);

	/* --with-compile: every step counts */
	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	o.with_compile = 1;
	s = pt_summarize(t, &o);
	assert_int_equal(s->perf.compile_steps, 3);
	assert_int_equal(s->perf.compile_left_out, 0);
	assert_int_equal(s->perf.steps, 5);
	assert_int_equal(s->model[PT_MS_STEP].cpu.total_ns, US(1550));
	pt_summary_free(s);
	pt_trace_free(t);

	/* every step compiled: nothing would be left, so they all count */
	t = compile_trace(1);
	s = summarize_all(t);
	assert_int_equal(s->perf.compile_steps, 5);
	assert_int_equal(s->perf.compile_left_out, 0);
	assert_int_equal(s->perf.steps, 5);
	assert_int_equal(pt_compile_line(s, line, sizeof line, 0), 1);
	assert_non_null(strstr(line, "in the figures (every step compiled)"));
	pt_summary_free(s);
	pt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_autograd_nodes_mark_backward),
	    cmocka_unit_test(test_union_random),
	    cmocka_unit_test(test_gpu_to_steps_random),
	    cmocka_unit_test(test_overhang_picks_the_right_parent),
	    cmocka_unit_test(test_ratio_counts_nested_same_name_once),
	    cmocka_unit_test(test_user_defined_over_threads),
	    cmocka_unit_test(test_outside_steps_consistent),
	    cmocka_unit_test(test_backward_span_and_busy),
	    cmocka_unit_test(test_step_ordinals),
	    cmocka_unit_test(test_compile_steps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
