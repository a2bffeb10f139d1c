/*
 * test_capture_group.c - captures of the same steps on every rank: the
 * request that names a step (shm.h's PT_SHM_CTL_AT_STEP), a group's line
 * as it goes, saving it (a file per rank that `proftop merge` reads back
 * as that rank, one of every rank; nothing half left when it cannot be
 * saved), and the live loop's step watch: the step the group starts at,
 * and the straggler that asks for one by itself.
 */
#include "testutil.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "live/live_steps.h"
#include "proftop/capture.h"
#include "proftop/chrome.h"
#include "proftop/error.h"
#include "proftop/shm.h"

/* nsteps steps of step_us from t0_us on pid's thread 1 (an op inside each). */
static uint32_t add_steps(struct pt_trace *t, int64_t pid, int nsteps, double t0_us,
			  double step_us)
{
	uint32_t tr = tu_track(t, pid, 1, -1);
	for (int i = 0; i < nsteps; i++) {
		double s = t0_us + i * step_us;
		tu_ev(t, tr, PT_KIND_PROFILE_STEP, "ProfileStep", s, step_us, 0);
		tu_ev(t, tr, PT_KIND_OPERATOR, "aten::mm", s + 1, step_us / 2, 0);
	}
	return tr;
}

static void test_request_names_a_step(void **state)
{
	(void)state;
	struct pt_shm_header *h = calloc(1, sizeof *h);
	uint32_t seq = 0;
	char why[200];
	h->ctl.caps = PT_SHM_CAP_CAPTURE;
	assert_int_equal(pt_shm_ctl_request(h, 3, 0, 42, getpid(), 1, &seq, why, sizeof why), 0);
	assert_int_equal(seq, 1);
	assert_true(PT_SHM_CTL_REQ_FLAGS(h->ctl.request) & PT_SHM_CTL_AT_STEP);
	assert_int_equal(h->ctl_at_step, 42);
	/* the helper answers that it waits for the step: a second asker is told */
	h->ctl.state = PT_SHM_CTL_STATE(1, PT_SHM_CTL_ACCEPTED, 0);
	assert_int_equal(pt_shm_ctl_request(h, 3, 0, 0, getpid(), 2, &seq, why, sizeof why),
			 PT_EEXIST);
	/* over: the next request at the next boundary carries no step */
	h->ctl.state = PT_SHM_CTL_STATE(1, PT_SHM_CTL_DONE, 3);
	assert_int_equal(pt_shm_ctl_request(h, 3, 0, 0, getpid(), 3, &seq, why, sizeof why), 0);
	assert_false(PT_SHM_CTL_REQ_FLAGS(h->ctl.request) & PT_SHM_CTL_AT_STEP);
	assert_int_equal(h->ctl_at_step, 0);
	free(h);
}

/* Two ranks (pids 501, 502 as ranks 0, 1) of 20 steps of 10 ms, a group of
 * captures of their steps 12-14 merged (state set as the reader sets it). */
static struct pt_trace *two_ranks(struct pt_capture_group **gp)
{
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	pt_trace_set_proc(t, 501, 0, "node-a");
	pt_trace_set_proc(t, 502, 1, "node-a");
	add_steps(t, 501, 20, 1000, 10000);
	add_steps(t, 502, 20, 1500, 10000);
	struct pt_capture_group *g = pt_capture_group_new(t, 12, 3, "key T");
	pt_capture_group_add(t, g, 501, 1, NULL);
	pt_capture_group_add(t, g, 502, 4, NULL);
	*gp = g;
	return t;
}

static void merge_as_done(struct pt_trace *t, int64_t pid, uint32_t seq, double t0_us)
{
	struct pt_capture *c = pt_capture_get(t, pid, seq, 0);
	assert_non_null(c);
	c->state = PT_CAPTURE_MERGED;
	c->t0_ns = US(t0_us + 12 * 10000);
	c->t1_ns = US(t0_us + 15 * 10000);
	c->job_first_step = 12;
	pt_capture_cost(t, c, 1);
}

static void test_group_line(void **state)
{
	(void)state;
	struct pt_capture_group *g;
	struct pt_trace *t = two_ranks(&g);
	char line[600];
	assert_false(pt_capture_group_over(t, g));
	pt_capture_group_describe(t, g, line, sizeof line, 1);
	assert_string_equal(line, "capture of steps 12-14 on 2 ranks: 2 waiting for step 12");
	pt_capture_get(t, 501, 1, 0)->state = PT_CAPTURE_RUNNING;
	pt_capture_group_describe(t, g, line, sizeof line, 1);
	assert_string_equal(line,
			    "capture of steps 12-14 on 2 ranks: 1 waiting for step 12, 1 running");
	merge_as_done(t, 501, 1, 1000);
	/* rank 1 refuses: past the step */
	struct pt_capture *c = pt_capture_get(t, 502, 4, 0);
	c->state = PT_CAPTURE_FAILED;
	snprintf(c->msg, sizeof c->msg, "step 12 had begun already: this rank is at step 13\x1b[2J");
	assert_true(pt_capture_group_over(t, g));
	pt_capture_group_describe(t, g, line, sizeof line, 0);
	/* raw text from the job is escaped */
	assert_non_null(strstr(line, "1 of 2 merged; rank 1 failed: step 12 had begun already: "
				     "this rank is at step 13\\e[2J (asked: key T)"));
	assert_null(strchr(line, '\x1b'));
	/* a refusal counts as a member that is over */
	struct pt_capture_group *g2 = pt_capture_group_new(t, -1, 5, "key T");
	pt_capture_group_add(t, g2, 501, 0, "no PyTorch helper answers in this process");
	assert_true(pt_capture_group_over(t, g2));
	assert_ptr_equal(pt_capture_group_latest(t), g2);
	pt_capture_group_describe(t, g2, line, sizeof line, 1);
	assert_non_null(strstr(line, "capture of steps (next 5) on 1 ranks: 0 of 1 merged; rank 0 "
				     "not asked: no PyTorch helper"));
	pt_trace_free(t);
}

static size_t files_in(const char *dir, char names[][64], size_t max)
{
	DIR *d = opendir(dir);
	size_t n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.' && n < max)
			snprintf(names[n++], 64, "%.63s", e->d_name);
	if (d)
		closedir(d);
	return n;
}

static void rm_tree(const char *dir)
{
	char names[16][64], p[700];
	size_t n = files_in(dir, names, 16);
	for (size_t i = 0; i < n; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
}

static char g_tmp[] = "/tmp/proftop-capgroup.XXXXXX";

/* Whatever a failed check left: the test's folder goes in any case. */
static int remove_tmp(void **state)
{
	(void)state;
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
	return system(cmd) != 0;
}

static void test_group_save(void **state)
{
	(void)state;
	struct pt_capture_group *g;
	struct pt_trace *t = two_ranks(&g);
	merge_as_done(t, 501, 1, 1000);
	merge_as_done(t, 502, 4, 1500);
	char *tmp = g_tmp, err[200], line[900];
	assert_non_null(mkdtemp(tmp));
	assert_int_equal(pt_capture_group_save(t, g, tmp, err, sizeof err), 0);
	char want[600];
	snprintf(want, sizeof want, "%s/proftop-capture-steps-12-14", tmp);
	assert_string_equal(g->saved, want);
	char names[16][64];
	assert_int_equal(files_in(g->saved, names, 16), 3);
	/* each rank's file: its own process, its three steps, its rank */
	for (int r = 0; r < 2; r++) {
		char p[700];
		snprintf(p, sizeof p, "%s/rank-%d.json", g->saved, r);
		assert_string_equal(pt_capture_get(t, 501 + r, r ? 4 : 1, 0)->saved, p);
		struct pt_trace *back = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
		assert_int_equal(pt_chrome_read(back, p, NULL, err, sizeof err), 0);
		assert_int_equal(back->rank, r);
		uint64_t steps = 0, other = 0;
		for (uint32_t i = 0; i < back->ntracks; i++) {
			steps += back->tracks[i].steps;
			other += back->tracks[i].key.pid != 501 + r;
		}
		assert_int_equal(steps, 3);
		assert_int_equal(other, 0);
		pt_trace_free(back);
	}
	/* every rank in one file */
	char p[700];
	snprintf(p, sizeof p, "%s/all-ranks.json", g->saved);
	struct pt_trace *all = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	assert_int_equal(pt_chrome_read(all, p, NULL, err, sizeof err), 0);
	uint64_t steps = 0;
	for (uint32_t i = 0; i < all->ntracks; i++)
		steps += all->tracks[i].steps;
	assert_true(steps >= 6);
	assert_int_equal(all->nprocs, 2);
	pt_trace_free(all);
	pt_capture_group_describe(t, g, line, sizeof line, 1);
	assert_non_null(strstr(line, "capture of steps 12-14 on 2 ranks: saved "
				     "proftop-capture-steps-12-14/, step time x1.00 (10.0 ms vs "
				     "10.0 ms before"));
	/* a second group of the same steps: a folder of its own */
	struct pt_capture_group *g2 = pt_capture_group_new(t, 12, 3, "key T");
	pt_capture_group_add(t, g2, 501, 1, NULL); /* the same capture, for the test */
	pt_capture_get(t, 501, 1, 0)->group = g2->id;
	assert_int_equal(pt_capture_group_save(t, g2, tmp, err, sizeof err), 0);
	assert_non_null(strstr(g2->saved, "proftop-capture-steps-12-14-2"));
	rm_tree(g2->saved);
	rm_tree(g->saved);
	/* a folder that cannot be made: failed with the reason, nothing left */
	struct pt_capture_group *g3 = pt_capture_group_new(t, 12, 3, "key T");
	pt_capture_get(t, 502, 4, 0)->group = g3->id;
	snprintf(p, sizeof p, "%s/missing/deeper", tmp);
	assert_int_not_equal(pt_capture_group_save(t, g3, p, err, sizeof err), 0);
	assert_true(g3->save_failed);
	assert_non_null(strstr(g3->save_err, "No such file"));
	assert_int_equal(files_in(tmp, names, 16), 0);
	pt_capture_group_describe(t, g3, line, sizeof line, 1);
	assert_non_null(strstr(line, "1 merged, not saved: "));
	rmdir(tmp);
	pt_trace_free(t);
}

static void test_live_steps(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	int32_t pids[2] = {601, 602};
	add_steps(t, 601, 20, 1000, 10000); /* 10 ms steps */
	add_steps(t, 602, 18, 1000, 10000);
	struct pt_live_steps *s = pt_live_steps_new();
	pt_live_steps_update(s, t, pids, 2);
	/* the furthest rank's newest step is 19; a second of 10 ms steps ahead */
	assert_int_equal(pt_live_capture_at_step(s, pids, 2), 19 + 100);
	struct pt_live_straggler st;
	assert_false(pt_live_straggler_check(s, pids, 2, 3.0, 0, &st));
	/* rank 602's next step takes 100 ms: 10x the median */
	uint32_t tr = tu_track(t, 602, 1, -1);
	tu_ev(t, tr, PT_KIND_PROFILE_STEP, "ProfileStep", 1000 + 18 * 10000, 100000, 0);
	pt_live_steps_update(s, t, pids, 2);
	assert_true(pt_live_straggler_check(s, pids, 2, 3.0, 0, &st));
	assert_int_equal(st.pid, 602);
	assert_int_equal(st.step, 18);
	assert_int_equal(st.step_ns, 100000000);
	assert_int_equal(st.median_ns, 10000000);
	assert_true(st.ratio > 9.99 && st.ratio < 10.01);
	assert_false(pt_live_straggler_check(s, pids, 2, 20.0, 0, &st));
	/* only steps newer than since count */
	assert_false(pt_live_straggler_check(s, pids, 2, 3.0, US(1000 + 18 * 10000 + 100000), &st));
	/* an update with nothing new changes nothing */
	pt_live_steps_update(s, t, pids, 2);
	assert_true(pt_live_straggler_check(s, pids, 2, 3.0, 0, &st));
	/* long steps: never less than two steps ahead */
	assert_int_equal(pt_live_capture_at_step(s, pids, 2), 19 + 100);
	struct pt_trace *t2 = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	add_steps(t2, 601, 3, 1000, 2000000); /* 2 s steps */
	struct pt_live_steps *s2 = pt_live_steps_new();
	pt_live_steps_update(s2, t2, pids, 1);
	assert_int_equal(pt_live_capture_at_step(s2, pids, 1), 2 + PT_LIVE_CAPTURE_AHEAD_STEPS);
	/* too few steps for a median: no straggler; no steps: no start */
	assert_false(pt_live_straggler_check(s2, pids, 1, 1.1, 0, &st));
	assert_int_equal(pt_live_capture_at_step(s2, pids + 1, 1), -1);
	pt_live_steps_free(s2);
	pt_trace_free(t2);
	pt_live_steps_free(s);
	pt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_request_names_a_step),
	    cmocka_unit_test(test_group_line),
	    cmocka_unit_test_teardown(test_group_save, remove_tmp),
	    cmocka_unit_test(test_live_steps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
