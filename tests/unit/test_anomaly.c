/*
 * test_anomaly.c - the anomaly recorder (src/analyze/anomaly.c) on small traces
 * built the way the probe delivers them (a step's children first, then the
 * step event), fed in pieces as polls would: the slow and reader rules,
 * waiting for the after-step, the window written (read back), bursts in one
 * file, --anomaly-keep, the wait limit, finish, tracks judged apart, and no
 * alarm on a steady run.
 */
#include "testutil.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proftop/anomaly.h"
#include "proftop/chrome.h"

struct fx {
	struct pt_trace *t;
	uint32_t track;
	double now_us; /* where the next step starts */
	char dir[64];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	f->t = pt_trace_new(0);
	f->track = tu_track(f->t, 100, 1, -1);
	f->now_us = 1000;
	snprintf(f->dir, sizeof f->dir, "/tmp/pt-anomaly-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	DIR *d = opendir(f->dir);
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			unlink(tu_path(f->dir, e->d_name));
	if (d)
		closedir(d);
	rmdir(f->dir);
	pt_trace_free(f->t);
	free(f);
	return 0;
}

/* One step on track tr of dur_us with dl_us of Dataloader, as the probe emits it. */
static void step_on(struct fx *f, uint32_t tr, double *now_us, double dur_us, double dl_us)
{
	double s = *now_us;
	if (dl_us > 0)
		tu_ev(f->t, tr, PT_KIND_DATALOADER, "Dataloader", s, dl_us, 0);
	tu_ev(f->t, tr, PT_KIND_FORWARD, "Forward", s + dl_us, dur_us - dl_us, 0);
	tu_ev(f->t, tr, PT_KIND_OPERATOR, "matmul", s + dl_us + 1, 10, 0);
	tu_ev(f->t, tr, PT_KIND_PROFILE_STEP, "ProfileStep", s, dur_us, 0);
	*now_us = s + dur_us;
}

static void step(struct fx *f, double dur_us, double dl_us)
{
	step_on(f, f->track, &f->now_us, dur_us, dl_us);
}

static size_t count_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* Steps in a written file: their count and the first start (µs). */
static size_t file_steps(const char *path, double *first_us, double *last_end_us)
{
	struct pt_trace *t = pt_trace_new(0);
	char err[256];
	assert_int_equal(pt_chrome_read(t, path, NULL, err, sizeof err), 0);
	size_t n = 0;
	uint64_t first = UINT64_MAX, last = 0;
	for (uint32_t tr = 0; tr < t->ntracks; tr++) {
		struct pt_store_iter it;
		pt_store_iter_init(&it, t->store, tr, 0, UINT64_MAX);
		const struct pt_event *ev;
		while ((ev = pt_store_iter_next(&it)))
			if (ev->kind == PT_KIND_PROFILE_STEP) {
				n++;
				if (ev->start_ns < first)
					first = ev->start_ns;
				if (pt_event_end(ev) > last)
					last = pt_event_end(ev);
			}
		pt_store_iter_done(&it);
	}
	pt_trace_free(t);
	*first_us = (double)first / 1000.0;
	*last_end_us = (double)last / 1000.0;
	return n;
}

static struct pt_anomaly *recorder(struct fx *f, struct pt_anomaly_opts *o)
{
	o->dir = f->dir;
	return pt_anomaly_new(o);
}

/* Step 30 of 40 takes 10 ms against 3 ms: one file, written once step 31
 * is in, holding steps 28..31 only. */
static void test_slow_step(void **state)
{
	struct fx *f = *state;
	struct pt_anomaly_opts o;
	pt_anomaly_opts_init(&o);
	o.factor = 2.0; /* the steps below are built around a factor of 2 */
	struct pt_anomaly *d = recorder(f, &o);
	double start30 = 0, start28 = 0;
	for (int i = 0; i <= 30; i++) {
		if (i == 28)
			start28 = f->now_us;
		if (i == 30)
			start30 = f->now_us;
		step(f, i == 30 ? 10000 : 3000, 500);
		if (i % 7 == 0) /* polls now and then */
			assert_int_equal(pt_anomaly_check(d, f->t, 0), 0);
	}
	/* the slow step is in, its after-step not yet: nothing written */
	assert_int_equal(pt_anomaly_check(d, f->t, 0), 0);
	assert_int_equal(pt_anomaly_found(d), 1);
	assert_int_equal(count_files(f->dir), 0);
	/* a poll in the middle of step 31: children in, the step event not */
	tu_ev(f->t, f->track, PT_KIND_DATALOADER, "Dataloader", f->now_us, 500, 0);
	assert_int_equal(pt_anomaly_check(d, f->t, 0), 0);
	tu_ev(f->t, f->track, PT_KIND_PROFILE_STEP, "ProfileStep", f->now_us, 3000, 0);
	double end31 = f->now_us + 3000;
	f->now_us = end31;
	assert_int_equal(pt_anomaly_check(d, f->t, 0), 1);
	pt_anomaly_flush(d);
	assert_int_equal(count_files(f->dir), 1);
	for (int i = 0; i < 8; i++)
		step(f, 3000, 500);
	assert_int_equal(pt_anomaly_finish(d, f->t), 0);

	const struct pt_anomaly_rec *v;
	assert_int_equal(pt_anomaly_files(d, &v), 1);
	assert_int_equal(v[0].step, 30);
	assert_int_equal(v[0].pid, 100);
	assert_int_equal(v[0].dur_ns, US(10000));
	assert_int_equal(v[0].median_ns, US(3000));
	assert_true(v[0].reasons == PT_ANOMALY_SLOW);
	assert_non_null(strstr(v[0].path, "/anomaly-100-step30-3.3x.json"));
	assert_int_equal(count_files(f->dir), 1);
	double first, last_end;
	assert_int_equal(file_steps(v[0].path, &first, &last_end), 4);
	assert_true(first == start28);
	assert_true(last_end == end31);
	(void)start30;
	/* the steps carry their numbers in the session */
	FILE *fp = fopen(v[0].path, "r");
	assert_non_null(fp);
	static char text[1 << 16];
	size_t n = fread(text, 1, sizeof text - 1, fp);
	fclose(fp);
	text[n] = 0;
	assert_non_null(strstr(text, "\"ProfileStep#28\""));
	assert_non_null(strstr(text, "\"ProfileStep#31\""));
	assert_null(strstr(text, "\"ProfileStep#27\""));
	assert_null(strstr(text, "\"ProfileStep#32\""));
	assert_non_null(strstr(text, "\"anomaly\":{\"pid\":100,\"step\":30,"));
	pt_anomaly_free(d);
}

/* Jitter of +-20% and the first steps' warm-up: no alarm. */
static void test_steady(void **state)
{
	struct fx *f = *state;
	struct pt_anomaly_opts o;
	pt_anomaly_opts_init(&o);
	o.factor = 2.0; /* the steps below are built around a factor of 2 */
	struct pt_anomaly *d = recorder(f, &o);
	step(f, 50000, 40000); /* a slow first step (warm-up): judged by no history */
	for (int i = 0; i < 300; i++) {
		step(f, 3000 + (i % 5 - 2) * 300, 400 + (i % 3) * 100);
		if (i % 10 == 0)
			pt_anomaly_check(d, f->t, 0);
	}
	assert_int_equal(pt_anomaly_finish(d, f->t), 0);
	assert_int_equal(pt_anomaly_found(d), 0);
	assert_int_equal(count_files(f->dir), 0);
	pt_anomaly_free(d);
}

/* The reader rule: a step only 1.7x the median, but its Dataloader took
 * 2.6 ms over its usual 0.5 ms (> half the median step). */
static void test_reader_stall(void **state)
{
	struct fx *f = *state;
	struct pt_anomaly_opts o;
	pt_anomaly_opts_init(&o);
	o.factor = 2.0; /* the steps below are built around a factor of 2 */
	struct pt_anomaly *d = recorder(f, &o);
	for (int i = 0; i < 20; i++)
		step(f, 3000, 500);
	step(f, 5100, 3100);
	step(f, 3000, 500);
	assert_int_equal(pt_anomaly_check(d, f->t, 0), 1);
	pt_anomaly_flush(d);
	const struct pt_anomaly_rec *v;
	assert_int_equal(pt_anomaly_files(d, &v), 1);
	assert_true(v[0].reasons == PT_ANOMALY_READER);
	assert_int_equal(v[0].step, 20);
	assert_int_equal(v[0].dataloader_ns, US(3100));
	pt_anomaly_free(d);

	/* reader_max_ns: any Dataloader range longer than 2 ms */
	pt_anomaly_opts_init(&o);
	o.factor = 2.0; /* the steps below are built around a factor of 2 */
	o.reader_frac = 0;
	o.reader_max_ns = US(2000);
	d = recorder(f, &o);
	step(f, 3000, 2500);
	step(f, 3000, 500);
	pt_anomaly_check(d, f->t, 0);
	/* a fresh recorder reads the whole track: step 20's 3.1 ms range too */
	assert_int_equal(pt_anomaly_found(d), 2);
	pt_anomaly_free(d);
}

/* Three slow steps in a row share one file, named after the worst. */
static void test_burst(void **state)
{
	struct fx *f = *state;
	struct pt_anomaly_opts o;
	pt_anomaly_opts_init(&o);
	o.factor = 2.0; /* the steps below are built around a factor of 2 */
	struct pt_anomaly *d = recorder(f, &o);
	for (int i = 0; i < 20; i++)
		step(f, 3000, 500);
	step(f, 9000, 500);
	step(f, 15000, 500);
	step(f, 7000, 500);
	step(f, 3000, 500);
	step(f, 3000, 500);
	assert_int_equal(pt_anomaly_check(d, f->t, 0), 1);
	pt_anomaly_flush(d);
	const struct pt_anomaly_rec *v;
	assert_int_equal(pt_anomaly_files(d, &v), 1);
	assert_int_equal(pt_anomaly_found(d), 3);
	assert_int_equal(v[0].steps, 3);
	assert_int_equal(v[0].step, 21);
	double first, last_end;
	assert_int_equal(file_steps(v[0].path, &first, &last_end), 2 + 3 + 1);
	pt_anomaly_free(d);
}

/* keep 2: the two newest stay; a file the recorder did not write stays too. */
static void test_keep(void **state)
{
	struct fx *f = *state;
	struct pt_anomaly_opts o;
	pt_anomaly_opts_init(&o);
	o.factor = 2.0; /* the steps below are built around a factor of 2 */
	o.keep = 2;
	FILE *other = fopen(tu_path(f->dir, "mine.json"), "w");
	assert_non_null(other);
	fclose(other);
	struct pt_anomaly *d = recorder(f, &o);
	for (int k = 0; k < 5; k++) {
		for (int i = 0; i < 15; i++)
			step(f, 3000, 500);
		step(f, 12000, 500);
		pt_anomaly_check(d, f->t, 0);
	}
	step(f, 3000, 500);
	pt_anomaly_finish(d, f->t);
	assert_int_equal(pt_anomaly_written(d), 5);
	const struct pt_anomaly_rec *v;
	assert_int_equal(pt_anomaly_files(d, &v), 2);
	assert_int_equal(v[0].step, 63);
	assert_int_equal(v[1].step, 79);
	assert_int_equal(count_files(f->dir), 3);
	assert_int_equal(access(v[1].path, R_OK), 0);
	assert_int_equal(access(tu_path(f->dir, "mine.json"), R_OK), 0);
	pt_anomaly_free(d);
}

/* The last step is slow: finish writes it without an after-step; a pending
 * file whose after-step is late is written once wait_ns has passed. */
static void test_finish_and_wait(void **state)
{
	struct fx *f = *state;
	struct pt_anomaly_opts o;
	pt_anomaly_opts_init(&o);
	o.factor = 2.0; /* the steps below are built around a factor of 2 */
	struct pt_anomaly *d = recorder(f, &o);
	for (int i = 0; i < 20; i++)
		step(f, 3000, 500);
	step(f, 20000, 500);
	uint64_t end_ns = US(f->now_us);
	assert_int_equal(pt_anomaly_check(d, f->t, end_ns + o.wait_ns - 1), 0);
	assert_int_equal(pt_anomaly_check(d, f->t, end_ns + o.wait_ns), 1);
	for (int i = 0; i < 20; i++)
		step(f, 3000, 500);
	step(f, 30000, 500);
	assert_int_equal(pt_anomaly_check(d, f->t, 0), 0);
	assert_int_equal(pt_anomaly_finish(d, f->t), 1);
	const struct pt_anomaly_rec *v;
	assert_int_equal(pt_anomaly_files(d, &v), 2);
	assert_int_equal(v[1].step, 41);
	double first, last_end;
	assert_int_equal(file_steps(v[1].path, &first, &last_end), 3);
	pt_anomaly_free(d);
}

/* Two threads, each against its own median: a 6 ms step is normal on the
 * slow thread and an anomaly on the fast one. Numbered names count. */
static void test_tracks_apart(void **state)
{
	struct fx *f = *state;
	struct pt_anomaly_opts o;
	pt_anomaly_opts_init(&o);
	o.factor = 2.0; /* the steps below are built around a factor of 2 */
	struct pt_anomaly *d = recorder(f, &o);
	uint32_t other = tu_track(f->t, 200, 7, -1);
	double other_now = 1000;
	for (int i = 0; i < 30; i++) {
		step(f, 3000, 0);
		step_on(f, other, &other_now, 6000, 0);
	}
	step(f, 6500, 0);
	step(f, 3000, 0);
	step_on(f, other, &other_now, 6500, 0);
	step_on(f, other, &other_now, 6000, 0);
	/* a named step: its number, not the ordinal */
	for (int i = 0; i < 10; i++)
		step(f, 3000, 0);
	tu_ev(f->t, f->track, PT_KIND_PROFILE_STEP, "ProfilerStep#552", f->now_us, 9000, 0);
	f->now_us += 9000;
	step(f, 3000, 0);
	pt_anomaly_check(d, f->t, 0);
	pt_anomaly_flush(d);
	const struct pt_anomaly_rec *v;
	assert_int_equal(pt_anomaly_files(d, &v), 2);
	assert_int_equal(v[0].pid, 100);
	assert_int_equal(v[0].step, 30);
	assert_int_equal(v[1].step, 552);
	pt_anomaly_free(d);
}

/* The median rolls: after 10 steps of 3 ms and 10 of 10 ms, a window of 10
 * holds only the 10 ms ones, so 7.5 ms is normal and 25 ms is slow. */
static void test_window_rolls(void **state)
{
	struct fx *f = *state;
	struct pt_anomaly_opts o;
	pt_anomaly_opts_init(&o);
	o.factor = 2.0; /* the steps below are built around a factor of 2 */
	o.window = 10;
	o.min_steps = 5;
	struct pt_anomaly *d = recorder(f, &o);
	for (int i = 0; i < 10; i++)
		step(f, 3000 + i, 0);
	pt_anomaly_check(d, f->t, 0);
	for (int i = 0; i < 10; i++)
		step(f, 10000 - i * 2, 0);
	step(f, 7500, 0);
	pt_anomaly_check(d, f->t, 0);
	/* the jump from 3 to 10 ms: slow until the 10 ms steps are the
	 * window's majority (steps 10..15, one file) */
	assert_int_equal(pt_anomaly_found(d), 6);
	step(f, 25000, 0);
	step(f, 10000, 0);
	pt_anomaly_check(d, f->t, 0);
	assert_int_equal(pt_anomaly_found(d), 7);
	pt_anomaly_flush(d);
	const struct pt_anomaly_rec *v;
	assert_int_equal(pt_anomaly_files(d, &v), 2);
	assert_int_equal(v[0].steps, 6);
	assert_int_equal(v[1].step, 21);
	/* steps 11..20: 7500 and 9982..9998; the lower middle one */
	assert_int_equal(v[1].median_ns, US(9988));
	pt_anomaly_free(d);
}

/* Device tracks are not read; no folder: detection only, nothing written. */
static void test_detect_only(void **state)
{
	struct fx *f = *state;
	struct pt_anomaly_opts o;
	pt_anomaly_opts_init(&o);
	o.factor = 2.0; /* the steps below are built around a factor of 2 */
	struct pt_anomaly *d = pt_anomaly_new(&o);
	uint32_t dev = tu_track(f->t, 100, 7, 0);
	tu_ev(f->t, dev, PT_KIND_PROFILE_STEP, "ProfileStep", 0, 100, 0);
	for (int i = 0; i < 20; i++)
		step(f, 3000, 500);
	step(f, 12000, 500);
	step(f, 3000, 500);
	assert_int_equal(pt_anomaly_check(d, f->t, 0), 0);
	assert_int_equal(pt_anomaly_found(d), 1);
	assert_int_equal(pt_anomaly_written(d), 0);
	assert_int_equal(count_files(f->dir), 0);
	pt_anomaly_free(d);
	pt_anomaly_free(NULL);
}

/* An unwritable folder: the error is kept, the recorder goes on. */
static void test_write_error(void **state)
{
	struct fx *f = *state;
	struct pt_anomaly_opts o;
	pt_anomaly_opts_init(&o);
	o.factor = 2.0; /* the steps below are built around a factor of 2 */
	char path[128];
	snprintf(path, sizeof path, "%s/file", f->dir);
	FILE *x = fopen(path, "w");
	assert_non_null(x);
	fclose(x);
	o.dir = path; /* a file, not a folder */
	struct pt_anomaly *d = pt_anomaly_new(&o);
	for (int i = 0; i < 20; i++)
		step(f, 3000, 500);
	step(f, 12000, 500);
	step(f, 3000, 500);
	assert_int_equal(pt_anomaly_check(d, f->t, 0), 0);
	assert_int_equal(pt_anomaly_found(d), 1);
	assert_true(pt_anomaly_error(d)[0] != 0);
	assert_int_equal(pt_anomaly_written(d), 0);
	pt_anomaly_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_slow_step, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_steady, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_reader_stall, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_burst, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_keep, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_finish_and_wait, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_tracks_apart, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_window_rolls, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_detect_only, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_error, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
