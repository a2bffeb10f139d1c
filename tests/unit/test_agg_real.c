/*
 * test_agg_real.c - the aggregator on real traces read by pt_chrome_read:
 * the kineto tb_plugin ResNet50 reader-ratio pair (ground truth from
 * fixtures/traces/SOURCES.md: step avg 174,829 µs and DataLoader avg
 * 69,299 µs = 39.6% with num_workers=0; 139,692 µs and 1,420 µs = 1.02%
 * with num_workers=4, backward on an autograd thread), and HTA's trimmed
 * backward-thread trace whose phases are worked out by hand below. Each
 * test skips when the file is absent or the reader refuses it.
 */
#include "testutil.h"

#include <math.h>

#include "proftop/agg.h"
#include "proftop/chrome.h"

static struct pt_trace *load_in(const char *dir, const char *rel)
{
	return tu_load_trace(dir, rel);
}

static struct pt_trace *load(const char *rel)
{
	return load_in(tu_traces(), rel);
}

static double avg_us(const struct pt_stat *s)
{
	return s->n ? (double)s->total_ns / (double)s->n / 1000.0 : 0.0;
}

static void check_close(double got, double want, double rel_tol, const char *what)
{
	if (fabs(got - want) > fabs(want) * rel_tol)
		fail_msg("%s: got %.3f, want %.3f (±%.2f%%)", what, got, want, rel_tol * 100);
}

/* Sanity every real summary must pass. */
static void check_consistent(const struct pt_summary *s)
{
	for (size_t i = 0; i < s->nsteps; i++) {
		const struct pt_step *st = &s->steps[i];
		uint64_t sum = 0, gsum = 0;
		for (int r = PT_MS_DATALOADER; r <= PT_MS_OTHERS; r++) {
			sum += st->cpu_ns[r];
			gsum += st->gpu_ns[r];
		}
		/* Others is the remainder: phases + Others = step (unless the
		 * phases overfill the step, which real traces do not). */
		assert_int_equal(sum, st->dur_ns);
		assert_int_equal(gsum, st->gpu_ns[PT_MS_STEP]);
		if (i)
			assert_true(st->start_ns >= s->steps[i - 1].start_ns);
	}
	for (size_t i = 0; i < s->ndevices; i++)
		assert_true(s->devices[i].util_pct >= 0.0 && s->devices[i].util_pct <= 100.0);
	for (size_t i = 0; i < s->op_detail.n; i++) {
		const struct pt_row *r = &s->op_detail.rows[i];
		if (r->parent != UINT32_MAX) {
			assert_true(r->parent < i);
			assert_int_equal(r->depth, s->op_detail.rows[r->parent].depth + 1);
		} else {
			assert_int_equal(r->depth, 0);
		}
	}
	assert_true(s->dist.overlap_ns <= s->dist.comm_ns);
	assert_true(s->dist.overlap_ns <= s->dist.comp_ns);
}

static void run_resnet(const char *rel, double step_avg_us, double dl_avg_us, double ratio_pct)
{
	struct pt_trace *t = load(rel);
	if (!t) {
		skip();
		return;
	}
	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	struct pt_summary *s = pt_summarize(t, &o);
	assert_int_equal(s->nsteps, 6);
	for (size_t i = 0; i < s->nsteps; i++)
		assert_int_equal(s->steps[i].number, (int64_t)(5 + i));
	print_message("# %s: step avg %.0f us, dataloader avg %.0f us, ratio %.2f%%\n", rel,
		      avg_us(&s->perf.batch), avg_us(&s->perf.reader), s->perf.reader_ratio_pct);
	print_message("#   forward avg %.0f backward avg %.0f optimizer avg %.0f others avg %.0f"
		      " (us); gpu/step %.0f us; util %.1f%%\n",
		      avg_us(&s->model[PT_MS_FORWARD].cpu), avg_us(&s->model[PT_MS_BACKWARD].cpu),
		      avg_us(&s->model[PT_MS_OPTIMIZATION].cpu),
		      avg_us(&s->model[PT_MS_OTHERS].cpu), avg_us(&s->model[PT_MS_STEP].gpu),
		      s->ndevices ? s->devices[0].util_pct : 0.0);
	check_close(avg_us(&s->perf.batch), step_avg_us, 0.001, "step avg");
	check_close(avg_us(&s->perf.reader), dl_avg_us, 0.01, "dataloader avg");
	check_close(s->perf.reader_ratio_pct, ratio_pct, 0.01, "reader ratio");
	/* These 2021 traces name backward ops "XxxBackward" with no
	 * evaluate_function wrapper, so no event is classified Backward and
	 * backward time lands in Others; Forward is derived up to the first
	 * optimizer call after the data (zero_grad). */
	assert_int_equal(s->model[PT_MS_FORWARD].calls, 6);
	assert_int_equal(s->model[PT_MS_OPTIMIZATION].calls, 6);
	assert_true(s->has_gpu);
	assert_true(s->kernels.n > 10);
	assert_true(s->model[PT_MS_STEP].gpu.total_ns > 0);
	assert_true(s->model[PT_MS_FORWARD].gpu.total_ns > 0);
	assert_int_equal(s->model[PT_MS_DATALOADER].gpu.total_ns, 0);
	check_consistent(s);
	pt_summary_free(s);

	/* a step window: steps 6..7 only */
	o.step_first = 6;
	o.step_last = 7;
	s = pt_summarize(t, &o);
	assert_int_equal(s->nsteps, 2);
	assert_int_equal(s->steps[0].number, 6);
	assert_int_equal(s->steps[1].number, 7);
	check_consistent(s);
	pt_summary_free(s);
	pt_trace_free(t);
}

static void test_resnet_workers0(void **state)
{
	(void)state;
	run_resnet("kineto_tb_plugin/"
		   "samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz",
		   174829, 69299, 39.6);
}

static void test_resnet_workers4(void **state)
{
	(void)state;
	run_resnet("kineto_tb_plugin/"
		   "samples__resnet50_num_workers_4__worker0.1623212756351.pt.trace.json.gz",
		   139692, 1420, 1.02);
}

/*
 * HTA call_stack/backward_thread (µs from the step's start): ProfilerStep#552
 * [0, 413451) on the main thread with a direct child "## backward ##"
 * (user annotation) at [254455, 362443); evaluate_function on thread 24922
 * at [331122, 331267) launches (corr 2131433) a 45 µs cutlass kernel. No
 * dataloader: data_end = step start; bwd_start = 331122; derived Forward =
 * the annotation's part before it = 331122 - 254455 = 76667; Backward = 145;
 * Others = 413451 - 76667 - 145 = 336639. GPU: 45 µs, all Backward.
 */
static void test_hta_backward_thread(void **state)
{
	(void)state;
	struct pt_trace *t = load("hta/call_stack__backward_thread.json");
	if (!t) {
		skip();
		return;
	}
	struct pt_summary *s = pt_summarize(t, NULL);
	assert_int_equal(s->nsteps, 1);
	const struct pt_step *st = &s->steps[0];
	assert_int_equal(st->number, 552);
	assert_int_equal(st->dur_ns, US(413451));
	assert_int_equal(st->cpu_ns[PT_MS_DATALOADER], 0);
	assert_int_equal(st->cpu_ns[PT_MS_FORWARD], US(76667));
	assert_int_equal(st->cpu_ns[PT_MS_BACKWARD], US(145));
	assert_int_equal(st->cpu_ns[PT_MS_OPTIMIZATION], 0);
	assert_int_equal(st->cpu_ns[PT_MS_OTHERS], US(336639));
	assert_int_equal(st->gpu_ns[PT_MS_STEP], US(45));
	assert_int_equal(st->gpu_ns[PT_MS_BACKWARD], US(45));
	assert_int_equal(s->kernels.n, 1);
	assert_int_equal(s->kernels.rows[0].gpu.total_ns, US(45));
	/* AddmmBackward0 > aten::mm > cudaLaunchKernel: both ops get the kernel */
	uint32_t mm = pt_strtab_find(t->strings, "aten::mm", 8);
	int found = 0;
	for (size_t i = 0; i < s->operators.n; i++)
		if (s->operators.rows[i].name_id == mm) {
			assert_int_equal(s->operators.rows[i].gpu.total_ns, US(45));
			found = 1;
		}
	assert_true(found);
	check_consistent(s);
	pt_summary_free(s);
	pt_trace_free(t);
}

/*
 * msprof (Ascend) timelines carry msprof's own Overlap Analysis (Computing,
 * Communication, Communication(Not Overlapped)); proftop's Distributed
 * figures must agree within 10%. For msprof_0_2_1.json msprof says
 * Computing 5.915 ms and Communication = not overlapped = 41.53 ms: HCCL's
 * NOTIFY_WAIT tasks are communication (not compute), each task counts once
 * (the HCCL lane's Notify_Wait copies do not), and the HCCL lane is no
 * device of its own. The step trace's phases: FP_BP is Forward (msprof's
 * FP_BP average 4.27 ms), Iteration Refresh is Optimization.
 */
static void check_msprof(const char *rel, double fp_bp_ms)
{
	struct pt_trace *t = load(rel);
	if (!t) {
		skip();
		return;
	}
	struct pt_summary *s = pt_summarize(t, NULL);
	const struct pt_distributed *d = &s->dist;
	assert_true(d->has_vendor);
	print_message("# %s: computation %.3f (msprof %.3f), communication %.3f (%.3f), "
		      "not overlapped %.3f (%.3f) ms\n",
		      rel, d->comp_ns / 1e6, d->vendor_comp_ns / 1e6, d->comm_ns / 1e6,
		      d->vendor_comm_ns / 1e6, (d->comm_ns - d->overlap_ns) / 1e6,
		      d->vendor_exposed_ns / 1e6);
	check_close((double)d->comp_ns, (double)d->vendor_comp_ns, 0.10, "computation");
	check_close((double)d->comm_ns, (double)d->vendor_comm_ns, 0.10, "communication");
	check_close((double)(d->comm_ns - d->overlap_ns), (double)d->vendor_exposed_ns, 0.10,
		    "communication not overlapped");
	assert_int_equal(s->ndevices, 1);
	assert_int_equal(s->nsteps, 1);
	check_close(avg_us(&s->model[PT_MS_FORWARD].cpu) / 1000.0, fp_bp_ms, 0.01, "FP_BP");
	check_consistent(s);
	pt_summary_free(s);
	pt_trace_free(t);
}

static void test_msprof_overlap_analysis(void **state)
{
	(void)state;
	check_msprof("mindinsight/msprof_rank0/msprof_0_2_1.json", 4.2361);
	check_msprof("mindinsight/msprof_rank1/msprof_1_0_1.json", 4.2476);
}

/* step_trace_0_2_1.json: 10 iterations; msprof's FP_BP averages 4.27 ms and
 * Iteration Refresh 14.72 ms (args "FP_BP Time(ns)", "Iteration
 * Refresh(ns)"): Forward and Optimization, not all of it in Forward. */
static void test_msprof_step_trace(void **state)
{
	(void)state;
	struct pt_trace *t = load("mindinsight/msprof_rank0/step_trace_0_2_1.json");
	if (!t) {
		skip();
		return;
	}
	struct pt_summary *s = pt_summarize(t, NULL);
	assert_int_equal(s->nsteps, 10);
	check_close(avg_us(&s->model[PT_MS_FORWARD].cpu), 4267.574, 0.001, "FP_BP avg");
	check_close(avg_us(&s->model[PT_MS_OPTIMIZATION].cpu), 14721.487, 0.001,
		    "Iteration Refresh avg");
	assert_true(s->model[PT_MS_OTHERS].cpu.total_ns < s->model[PT_MS_STEP].cpu.total_ns / 100);
	/* the Reduce_N_M spans are host-side communication */
	assert_true(s->dist.comm_from_host);
	assert_true(s->dist.comm_ns > 0);
	check_consistent(s);
	pt_summary_free(s);
	pt_trace_free(t);
}

/*
 * fixtures/dialects/pytorch_legacy_nesting.json: a legacy (integer µs)
 * export where, nine times, an aten::empty_like starts 1 µs before its
 * neighbour aten::empty ends and ends 1 µs after it. Both belong to the
 * aten::batch_norm around them; aten::empty has no child, so its self time
 * is its whole time (nested under it, empty_like made it 0). aten::addmm
 * overhangs aten::linear by 1 µs and stays its child.
 */
static void test_legacy_empty_like_fixture(void **state)
{
	(void)state;
	struct pt_trace *t = load_in(tu_fixtures(), "dialects/pytorch_legacy_nesting.json");
	assert_non_null(t);
	struct pt_summary *s = pt_summarize(t, NULL);
	uint32_t empty = pt_strtab_find(t->strings, "aten::empty", 11);
	uint32_t bn = pt_strtab_find(t->strings, "aten::batch_norm", 16);
	uint32_t like = pt_strtab_find(t->strings, "aten::empty_like", 16);
	int seen = 0;
	for (size_t i = 0; i < s->operators.n; i++) {
		const struct pt_row *r = &s->operators.rows[i];
		if (r->name_id == empty) {
			assert_int_equal(r->cpu.n, 9);
			assert_int_equal(r->cpu_self_ns, r->cpu.total_ns);
			seen++;
		} else if (r->name_id == bn) {
			assert_int_equal(r->cpu_self_ns, US(9 * (50 - 2 - 2 - 34)));
			seen++;
		}
	}
	assert_int_equal(seen, 2);
	for (size_t i = 0; i < s->op_detail.n; i++) {
		const struct pt_row *r = &s->op_detail.rows[i];
		if (r->name_id == like) {
			assert_int_equal(r->depth, 1);
			assert_int_equal(s->op_detail.rows[r->parent].name_id, bn);
		}
	}
	check_consistent(s);
	pt_summary_free(s);
	pt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hta_backward_thread),
	    cmocka_unit_test(test_resnet_workers0),
	    cmocka_unit_test(test_resnet_workers4),
	    cmocka_unit_test(test_legacy_empty_like_fixture),
	    cmocka_unit_test(test_msprof_overlap_analysis),
	    cmocka_unit_test(test_msprof_step_trace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
