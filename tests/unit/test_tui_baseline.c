/*
 * test_tui_baseline.c - the screen's baseline (tui/baseline.c), rendered
 * into the in-memory canvas: delta columns appear only with a baseline, show
 * the change of a row's time matched by name and "new" for rows the
 * baseline lacks, sort by delta, and the Summary shows per-step deltas and
 * ips before -> after. Also at 80 columns (the delta columns keep their
 * place beside the name).
 */
#include "testutil.h"

#include "app.h"
#include "proftop/diff.h"

static char screen[200 * 60 * 4 + 64];

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

/* Four steps: Dataloader reader_us, then op "common" (op_us) and extra (100 us). */
static struct pt_trace *make_run(double reader_us, double op_us, const char *extra)
{
	struct pt_trace *t = pt_trace_new(16u << 20);
	pt_trace_set_source(t, "run.json");
	uint32_t h = tu_track(t, 1, 1, -1);
	double step = reader_us + 500, at = 0;
	for (int i = 0; i < 4; i++, at += step) {
		char name[32];
		snprintf(name, sizeof name, "ProfileStep#%d", i);
		tu_ev(t, h, PT_KIND_PROFILE_STEP, name, at, step, 0);
		tu_ev(t, h, PT_KIND_DATALOADER, "Dataloader", at, reader_us, 0);
		tu_ev(t, h, PT_KIND_FORWARD, "Forward", at + reader_us, 500, 0);
		tu_ev(t, h, PT_KIND_OPERATOR, "common", at + reader_us + 10, op_us, 0);
		if (extra)
			tu_ev(t, h, PT_KIND_OPERATOR, extra, at + reader_us + 300, 100, 0);
	}
	return t;
}

static const char *line_with(const char *s, const char *needle, char *buf, size_t len)
{
	const char *p = strstr(s, needle);
	if (!p)
		return NULL;
	while (p > s && p[-1] != '\n')
		p--;
	const char *e = strchr(p, '\n');
	size_t n = e ? (size_t)(e - p) : strlen(p);
	if (n >= len)
		n = len - 1;
	memcpy(buf, p, n);
	buf[n] = 0;
	return buf;
}

static void check_screen(int width)
{
	struct pt_trace *bt = make_run(1000, 200, "old_op");
	struct pt_diff_side *base = pt_diff_side_new(bt, pt_summarize(bt, NULL), "before.json");
	pt_trace_free(bt);
	struct pt_trace *t = make_run(100, 250, "new_op");
	struct tui_opts o;
	tui_opts_init(&o);
	struct tui_app plain;
	tui_app_init(&plain, t, &o);
	struct tui_canvas c;
	tui_canvas_init(&c, width, 30, 1);
	tui_app_key(&plain, '2');
	assert_null(strstr(render(&plain, &c), "Delta"));
	tui_app_free(&plain);

	o.baseline = base;
	struct tui_app a;
	tui_app_init(&a, t, &o);
	char line[512];
	const char *s = render(&a, &c);
	assert_non_null(strstr(s, "vs baseline before.json"));
	assert_non_null(strstr(s, "(+150.0%)")); /* ips: 1.5 ms -> 0.6 ms a step */
	if (width >= 110) {
		assert_non_null(line_with(s, "Dataloader", line, sizeof line));
		assert_non_null(strstr(line, "-900.00us -90%"));
	}
	tui_app_key(&a, '2');
	s = render(&a, &c);
	assert_non_null(strstr(s, "Delta"));
	assert_non_null(line_with(s, "common", line, sizeof line));
	assert_non_null(strstr(line, "+200.00us"));
	assert_non_null(strstr(line, "+25.0%"));
	assert_non_null(line_with(s, "new_op", line, sizeof line));
	assert_non_null(strstr(line, "new"));
	assert_null(strstr(s, "old_op")); /* vanished rows are the diff's, not the screen's */
	/* sort by Delta: step '>' until the header marks it */
	for (int i = 0; i < TUI_COL__COUNT && a.tables[TUI_V_OPERATORS].sort_col != TUI_COL_DELTA;
	     i++)
		tui_app_key(&a, '>');
	assert_int_equal(a.tables[TUI_V_OPERATORS].sort_col, TUI_COL_DELTA);
	s = render(&a, &c);
	const char *nw = strstr(s, "new_op"), *cm = strstr(s, "common");
	assert_true(nw && cm && nw < cm); /* +400 us (new) before +200 us */
	tui_app_free(&a);
	pt_diff_side_free(base);
	pt_trace_free(t);
	tui_canvas_free(&c);
}

/* B takes this moment of the session as the baseline; B again drops it. */
static void test_snapshot(void **state)
{
	(void)state;
	struct pt_trace *t = make_run(100, 250, "new_op");
	struct tui_opts o;
	tui_opts_init(&o);
	struct tui_app a;
	tui_app_init(&a, t, &o);
	struct tui_canvas c;
	tui_canvas_init(&c, 160, 30, 1);
	tui_app_key(&a, '2');
	assert_null(strstr(render(&a, &c), "Delta"));
	tui_app_key(&a, 'B');
	const char *s = render(&a, &c);
	assert_non_null(strstr(s, "Delta"));
	assert_non_null(strstr(s, "baseline: snapshot at +"));
	char line[512];
	assert_non_null(line_with(s, "common", line, sizeof line));
	assert_non_null(strstr(line, "+0.0%")); /* nothing changed since the snapshot */
	tui_app_key(&a, 'B');
	s = render(&a, &c);
	assert_null(strstr(s, "Delta"));
	assert_non_null(strstr(s, "baseline dropped"));
	tui_app_key(&a, 'B'); /* taken again, then freed with the app */
	tui_app_free(&a);
	pt_trace_free(t);
	tui_canvas_free(&c);
}

static void test_wide(void **state)
{
	(void)state;
	check_screen(160);
}

static void test_80(void **state)
{
	(void)state;
	check_screen(80);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_wide),
	    cmocka_unit_test(test_80),
	    cmocka_unit_test(test_snapshot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
