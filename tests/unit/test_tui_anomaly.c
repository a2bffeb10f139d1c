/*
 * test_tui_anomaly.c - the anomaly recorder on the screen: the session line
 * counts the files ("| 1 anomaly saved"), a new file is announced in the
 * message line, and the help screen lists the kept files (escaped).
 */
#include "testutil.h"

#include <dirent.h>
#include <unistd.h>

#include "app.h"
#include "proftop/anomaly.h"

static char screen[200 * 50 * 4];

static const char *render(struct tui_app *a, struct tui_canvas *c)
{
	tui_app_draw(a, c);
	size_t n = 0;
	for (int y = 0; y < c->h; y++) {
		n += tui_canvas_row_text(c, y, screen + n, sizeof screen - n - 2);
		screen[n++] = '\n';
	}
	screen[n] = 0;
	return screen;
}

static void test_listed(void **state)
{
	(void)state;
	char dir[64];
	snprintf(dir, sizeof dir, "/tmp/pt-tui-anomaly-XXXXXX");
	assert_non_null(mkdtemp(dir));
	struct pt_trace *t = pt_trace_new(0);
	uint32_t tr = tu_track(t, 42, 1, -1);
	double now = 1000;
	for (int i = 0; i < 30; i++) {
		double dur = i == 20 ? 12000 : 3000;
		tu_ev(t, tr, PT_KIND_DATALOADER, "Dataloader", now, 300, 0);
		tu_ev(t, tr, PT_KIND_PROFILE_STEP, "ProfileStep", now, dur, 0);
		now += dur;
	}
	struct pt_anomaly_opts ao;
	pt_anomaly_opts_init(&ao);
	ao.dir = dir;
	struct pt_anomaly *d = pt_anomaly_new(&ao);
	pt_anomaly_finish(d, t);
	assert_int_equal(pt_anomaly_written(d), 1);

	struct tui_opts o;
	tui_opts_init(&o);
	o.anomalies = d;
	struct tui_app a;
	tui_app_init(&a, t, &o);
	struct tui_canvas c;
	tui_canvas_init(&c, 200, 40, 0);
	const char *s = render(&a, &c);
	assert_non_null(strstr(s, "| 1 anomaly saved"));
	assert_non_null(strstr(s, "anomaly: step 20 took 4.0x the median; saved"));
	a.help = 1;
	s = render(&a, &c);
	assert_non_null(strstr(s, "Anomalies saved (1 kept, newest last)"));
	assert_non_null(strstr(s, "anomaly-42-step20-4.0x.json"));
	assert_non_null(strstr(s, "any other key closes this help"));

	const struct pt_anomaly_rec *v;
	assert_int_equal(pt_anomaly_files(d, &v), 1);
	unlink(v[0].path);
	rmdir(dir);
	tui_canvas_free(&c);
	tui_app_free(&a);
	pt_anomaly_free(d);
	pt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_listed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
