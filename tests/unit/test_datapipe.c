/*
 * test_datapipe.c - the data pipeline's figures (datapipe.h) and the
 * advisor's data_pipeline rule over small traces whose answers are worked
 * out by hand: the queue's empty share and mean, stages with nested stages
 * (self time, per sample over __getitem__ calls), worker lanes against the
 * training thread, shares that never pass 100 %, and each verdict.
 */
#include "testutil.h"

#include "proftop/advisor.h"
#include "proftop/agg.h"
#include "proftop/datapipe.h"
#include "proftop/store.h"
#include "proftop/strtab.h"

static struct pt_summary *summarize_all(struct pt_trace *t)
{
	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	return pt_summarize(t, &o);
}

static void counter(struct pt_trace *t, uint32_t track, const char *name, double us, double v)
{
	struct pt_event ev = {0};
	ev.start_ns = US(us);
	ev.name_id = pt_trace_intern(t, name, strlen(name));
	ev.track_id = track;
	ev.kind = PT_KIND_COUNTER;
	memcpy(&ev.arg, &v, sizeof v);
	pt_trace_add(t, &ev);
}

static void step(struct pt_trace *t, uint32_t m, double start, double dur, double dl)
{
	struct pt_event ev = {0};
	ev.start_ns = US(start);
	ev.dur_ns = US(dur);
	ev.name_id = pt_trace_intern(t, "ProfilerStep", 12);
	ev.track_id = m;
	ev.kind = PT_KIND_PROFILE_STEP;
	ev.arg = 4; /* samples */
	pt_trace_add(t, &ev);
	if (dl > 0)
		tu_ev(t, m, PT_KIND_DATALOADER, "Dataloader", start, dl, 0);
	tu_ev(t, m, PT_KIND_FORWARD, "Forward", start + dl, dur - dl, 0);
}

static const struct pt_dp_stage *stage(const struct pt_trace *t, const struct pt_datapipe *dp,
				       const char *name)
{
	uint32_t id = pt_strtab_find(t->strings, name, strlen(name));
	for (size_t i = 0; i < dp->nstages; i++)
		if (dp->stages[i].name_id == id)
			return &dp->stages[i];
	fail_msg("no stage %s", name);
	return NULL;
}

/* One batch of 4 samples on a lane from `at`: each __getitem__ 20 us with a
 * 15 us Resize inside, then a 15 us collate; the batch takes 100 us. */
static void batch(struct pt_trace *t, uint32_t w, double at)
{
	tu_ev(t, w, PT_KIND_USER_DEFINED, "data: batch", at, 100, 0);
	for (int i = 0; i < 4; i++) {
		tu_ev(t, w, PT_KIND_USER_DEFINED, "data: DS.__getitem__", at + 1 + 20 * i, 20, 0);
		tu_ev(t, w, PT_KIND_USER_DEFINED, "data: Resize", at + 2 + 20 * i, 15, 0);
	}
	tu_ev(t, w, PT_KIND_USER_DEFINED, "data: collate_fn", at + 82, 15, 0);
}

static const struct pt_advice *find_advice(const struct pt_advice_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].key == PT_ADV_DATA_PIPELINE)
			return &l->v[i];
	return NULL;
}

/* Two workers busy all the time, the queue empty at 3 of 4 fetches. */
static void test_saturated(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(64 << 20);
	uint32_t m = tu_track(t, 1, 1, -1);
	uint32_t w0 = tu_track(t, 1, 100, -1), w1 = tu_track(t, 1, 101, -1);
	for (int i = 0; i < 4; i++) {
		step(t, m, 100.0 * i, 100, 60);
		counter(t, m, PT_DP_QUEUE, 100.0 * i + 1, i == 2 ? 2 : 0);
		batch(t, w0, 100.0 * i);
		batch(t, w1, 100.0 * i);
	}
	counter(t, m, PT_DP_QUEUE_CAP, 1, 4);
	struct pt_summary *s = summarize_all(t);
	struct pt_datapipe dp;
	pt_datapipe_compute(t, s, &dp);
	assert_int_equal(dp.queue_samples, 4);
	assert_int_equal(dp.queue_empty, 3);
	assert_true(dp.queue_empty_pct > 74.9 && dp.queue_empty_pct < 75.1);
	assert_true(dp.queue_mean > 0.49 && dp.queue_mean < 0.51);
	assert_true(dp.queue_capacity == 4);
	assert_int_equal(dp.nsteps, 4);
	assert_int_equal(dp.step_ready[0], 0);
	assert_int_equal(dp.step_ready[2], 2);
	assert_int_equal(dp.workers, 2);
	assert_int_equal(dp.nlanes, 2);
	assert_false(dp.on_training);
	assert_true(dp.workers_busy_pct > 99.9);
	assert_int_equal(dp.samples_from, 1);
	assert_int_equal(dp.samples, 32);
	const struct pt_dp_stage *g = stage(t, &dp, "data: DS.__getitem__");
	const struct pt_dp_stage *r = stage(t, &dp, "data: Resize");
	const struct pt_dp_stage *c = stage(t, &dp, "data: collate_fn");
	const struct pt_dp_stage *b = stage(t, &dp, "data: batch");
	assert_int_equal(g->calls, 32);
	assert_int_equal(g->total_ns, US(32 * 20));
	assert_int_equal(g->self_ns, US(32 * 5));
	assert_int_equal(r->self_ns, US(32 * 15));
	assert_int_equal(c->total_ns, US(8 * 15));
	assert_int_equal(b->self_ns, US(8 * (100 - 80 - 15)));
	assert_true(r->per_sample_ms > 0.01499 && r->per_sample_ms < 0.01501);
	assert_true(b->busy_pct > 99.9 && b->busy_pct <= 100.0);
	assert_true(g->busy_pct > 79.9 && g->busy_pct < 80.1);
	assert_true(dp.slowest >= 0);
	assert_int_equal(dp.stages[dp.slowest].name_id, r->name_id);
	for (size_t i = 0; i < dp.nstages; i++)
		assert_true(dp.stages[i].busy_pct <= 100.0);

	struct pt_advice_list al;
	pt_advise_trace(t, s, NULL, -1, NULL, &al);
	const struct pt_advice *a = find_advice(&al);
	assert_non_null(a);
	assert_non_null(strstr(a->title, "saturated"));
	assert_non_null(strstr(a->evidence, "Resize"));
	assert_non_null(strstr(a->suggestion, "Resize"));
	pt_datapipe_free(&dp);
	pt_summary_free(s);
	pt_trace_free(t);
}

/* Workers busy a tenth of the time and still the queue is empty. */
static void test_idle(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(64 << 20);
	uint32_t m = tu_track(t, 1, 1, -1);
	uint32_t w0 = tu_track(t, 1, 100, -1);
	for (int i = 0; i < 4; i++) {
		step(t, m, 1000.0 * i, 1000, 600);
		counter(t, m, PT_DP_QUEUE, 1000.0 * i + 1, 0);
		batch(t, w0, 1000.0 * i);
	}
	struct pt_summary *s = summarize_all(t);
	struct pt_datapipe dp;
	pt_datapipe_compute(t, s, &dp);
	assert_int_equal(dp.workers, 1);
	assert_true(dp.workers_busy_pct < 20.0);
	assert_true(dp.queue_empty_pct > 99.9);
	struct pt_advice_list al;
	pt_advise_trace(t, s, NULL, -1, NULL, &al);
	const struct pt_advice *a = find_advice(&al);
	assert_non_null(a);
	assert_non_null(strstr(a->title, "idle"));
	assert_non_null(strstr(a->suggestion, "sampler"));
	pt_datapipe_free(&dp);
	pt_summary_free(s);
	pt_trace_free(t);
}

/* Batches always ready, the training still waits half of each step. */
static void test_full_queue_waits(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(64 << 20);
	uint32_t m = tu_track(t, 1, 1, -1);
	uint32_t w0 = tu_track(t, 1, 100, -1), pin = tu_track(t, 1, 2, -1);
	for (int i = 0; i < 4; i++) {
		step(t, m, 200.0 * i, 200, 100);
		counter(t, m, PT_DP_QUEUE, 200.0 * i + 1, 3);
		batch(t, w0, 200.0 * i);
		tu_ev(t, pin, PT_KIND_USER_DEFINED, "data: pin_memory", 200.0 * i + 100, 90, 0);
	}
	struct pt_summary *s = summarize_all(t);
	struct pt_datapipe dp;
	pt_datapipe_compute(t, s, &dp);
	assert_int_equal(dp.workers, 1); /* the pin-memory thread is not a worker */
	assert_int_equal(dp.nlanes, 2);
	assert_true(dp.queue_empty_pct == 0.0);
	assert_int_not_equal(dp.stages[dp.slowest].name_id,
			     stage(t, &dp, "data: pin_memory")->name_id);
	struct pt_advice_list al;
	pt_advise_trace(t, s, NULL, -1, NULL, &al);
	const struct pt_advice *a = find_advice(&al);
	assert_non_null(a);
	assert_non_null(strstr(a->title, "still waits"));
	assert_non_null(strstr(a->evidence, "pin_memory"));
	pt_datapipe_free(&dp);
	pt_summary_free(s);
	pt_trace_free(t);
}

/* No workers: the stages run inside the training thread's Dataloader
 * phase, there is no queue, and the verdict names the slowest stage. */
static void test_no_workers(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(64 << 20);
	uint32_t m = tu_track(t, 1, 1, -1);
	for (int i = 0; i < 4; i++) {
		step(t, m, 200.0 * i, 200, 100);
		batch(t, m, 200.0 * i);
	}
	struct pt_summary *s = summarize_all(t);
	struct pt_datapipe dp;
	pt_datapipe_compute(t, s, &dp);
	assert_int_equal(dp.queue_samples, 0);
	assert_int_equal(dp.workers, 0);
	assert_true(dp.on_training);
	assert_int_equal(dp.nstages, 4);
	assert_int_equal(dp.step_ready, NULL);
	struct pt_advice_list al;
	pt_advise_trace(t, s, NULL, -1, NULL, &al);
	const struct pt_advice *a = find_advice(&al);
	assert_non_null(a);
	assert_non_null(strstr(a->title, "training thread"));
	assert_non_null(strstr(a->evidence, "Resize"));
	pt_datapipe_free(&dp);
	pt_summary_free(s);
	pt_trace_free(t);
}

/* Overlapping and self-nested stages on one lane: busy is merged, a name
 * nested in itself counts once, so no share passes 100 %. */
static void test_shares_bounded(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(64 << 20);
	uint32_t w = tu_track(t, 1, 100, -1);
	tu_ev(t, w, PT_KIND_USER_DEFINED, "data: Compose", 0, 100, 0);
	tu_ev(t, w, PT_KIND_USER_DEFINED, "data: Compose", 10, 50, 0);
	tu_ev(t, w, PT_KIND_USER_DEFINED, "data: odd", 90, 50, 0); /* overhangs its parent */
	tu_ev(t, w, PT_KIND_USER_DEFINED, "not a stage", 0, 500, 0);
	counter(t, w, PT_DP_QUEUE, 5, -1);  /* negative: ignored */
	counter(t, w, PT_DP_QUEUE, 6, 1.0 / 0.0);
	struct pt_datapipe dp;
	pt_datapipe_compute(t, NULL, &dp);
	assert_int_equal(dp.queue_samples, 0);
	assert_int_equal(dp.nstages, 2);
	assert_int_equal(dp.busy_ns, US(100));
	assert_int_equal(dp.lanes[0].wall_ns, US(140));
	const struct pt_dp_stage *c = stage(t, &dp, "data: Compose");
	assert_int_equal(c->calls, 2);
	assert_int_equal(c->total_ns, US(100));
	for (size_t i = 0; i < dp.nstages; i++) {
		assert_true(dp.stages[i].busy_pct <= 100.0);
		assert_true(dp.stages[i].self_ns <= dp.stages[i].total_ns);
	}
	assert_true(dp.lanes[0].busy_pct <= 100.0);
	pt_datapipe_free(&dp);
	pt_datapipe_free(&dp); /* twice is harmless */
	pt_trace_free(t);
}

/* A trace with none of it: empty, and the advisor stays quiet. */
static void test_absent(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(64 << 20);
	uint32_t m = tu_track(t, 1, 1, -1);
	step(t, m, 0, 100, 50);
	struct pt_summary *s = summarize_all(t);
	struct pt_datapipe dp;
	pt_datapipe_compute(t, s, &dp);
	assert_true(pt_datapipe_empty(&dp));
	struct pt_advice_list al;
	pt_advise_trace(t, s, NULL, -1, NULL, &al);
	assert_null(find_advice(&al));
	pt_datapipe_free(&dp);
	pt_summary_free(s);
	pt_trace_free(t);
}

/* A store of PT_SUMMARIZE_PIPE_EVENTS events or more: the advice computes
 * the data pipeline on a thread of its own, beside its scan; the figures
 * it hands back are those of pt_datapipe_compute on the caller's thread. */
static void test_large_store_same(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(256 << 20);
	uint32_t m = tu_track(t, 1, 1, -1);
	uint32_t w0 = tu_track(t, 1, 100, -1), w1 = tu_track(t, 1, 101, -1);
	for (int i = 0; i < 4000; i++) {
		step(t, m, 100.0 * i, 100, i % 3 ? 60 : 10);
		counter(t, m, PT_DP_QUEUE, 100.0 * i + 1, i % 4);
		batch(t, w0, 100.0 * i);
		if (i % 2)
			batch(t, w1, 100.0 * i + 5);
		tu_ev(t, m, PT_KIND_CUDA_RUNTIME, "cudaStreamSynchronize", 100.0 * i + 70, 3, 0);
	}
	counter(t, m, PT_DP_QUEUE_CAP, 1, 4);
	assert_true(pt_store_count(t->store) >= PT_SUMMARIZE_PIPE_EVENTS);
	struct pt_summary *s = summarize_all(t);
	struct pt_datapipe ref, dp;
	pt_datapipe_compute(t, s, &ref);
	struct pt_advice_list al;
	pt_advise_trace_dp(t, s, NULL, -1, NULL, &al, &dp);
	assert_int_equal(dp.queue_samples, ref.queue_samples);
	assert_int_equal(dp.queue_empty, ref.queue_empty);
	assert_true(dp.queue_mean == ref.queue_mean && dp.queue_capacity == ref.queue_capacity);
	assert_int_equal(dp.nsteps, 4000);
	assert_int_equal(dp.nsteps, ref.nsteps);
	assert_memory_equal(dp.step_ready, ref.step_ready, dp.nsteps * sizeof *dp.step_ready);
	assert_int_equal(dp.nstages, 4);
	assert_int_equal(dp.nstages, ref.nstages);
	assert_memory_equal(dp.stages, ref.stages, dp.nstages * sizeof *dp.stages);
	assert_int_equal(dp.nlanes, 2);
	assert_int_equal(dp.nlanes, ref.nlanes);
	assert_memory_equal(dp.lanes, ref.lanes, dp.nlanes * sizeof *dp.lanes);
	assert_int_equal(dp.workers, ref.workers);
	assert_int_equal(dp.busy_ns, ref.busy_ns);
	assert_int_equal(dp.samples, ref.samples);
	assert_int_equal(dp.slowest, ref.slowest);
	pt_datapipe_free(&dp);
	pt_datapipe_free(&ref);
	pt_summary_free(s);
	pt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_saturated),	     cmocka_unit_test(test_idle),
	    cmocka_unit_test(test_full_queue_waits), cmocka_unit_test(test_no_workers),
	    cmocka_unit_test(test_shares_bounded),   cmocka_unit_test(test_absent),
	    cmocka_unit_test(test_large_store_same),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
