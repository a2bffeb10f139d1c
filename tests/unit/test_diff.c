/*
 * test_diff.c - run-to-run comparison (diff.h): sides outlive their traces
 * and find rows by name, rows of two runs are matched (changed / new /
 * vanished) and ranked by |delta|, figures and NAME_delta by name (also
 * through the gate), and the text / JSON faces (escaped names, no NaN).
 */
#include "testutil.h"

#include <math.h>

#include "proftop/diff.h"
#include "proftop/error.h"
#include "proftop/gate.h"

/*
 * Four steps of (reader_us + 500) us each: a Dataloader of reader_us, then
 * a Forward of 500 us holding "common" (op_us) and the op named extra
 * (100 us) when given; one kernel "k_common" (50 us) per step on GPU 0, and
 * k_extra (20 us) when given.
 */
static struct pt_trace *make_run(double reader_us, double op_us, const char *extra,
				 const char *k_extra, const char *src)
{
	struct pt_trace *t = pt_trace_new(64 << 20);
	pt_trace_set_source(t, src);
	uint32_t h = tu_track(t, 1, 1, -1);
	uint32_t g = tu_track(t, 1, 7, 0);
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
		tu_ev(t, g, PT_KIND_KERNEL, "k_common", at + reader_us + 20, 50, 0);
		if (k_extra)
			tu_ev(t, g, PT_KIND_KERNEL, k_extra, at + reader_us + 100, 20, 0);
	}
	return t;
}

static struct pt_diff_side *side_of(struct pt_trace *t, const char *label)
{
	struct pt_summary *s = pt_summarize(t, NULL);
	struct pt_diff_side *d = pt_diff_side_new(t, s, label);
	pt_trace_free(t); /* the side must not need it */
	return d;
}

static struct pt_diff_side *g_before, *g_after;

static int setup(void **state)
{
	(void)state;
	g_before = side_of(make_run(1000, 200, "old_op", "k_old", "before.json"), "before.json");
	g_after = side_of(make_run(100, 250, "new_op", "k_new", "after.json"), "after.json");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	pt_diff_side_free(g_before);
	pt_diff_side_free(g_after);
	return 0;
}

static void test_side_find(void **state)
{
	(void)state;
	const struct pt_row *r = pt_diff_side_find(g_before, PT_DIFF_OPERATORS, "common", 6);
	assert_non_null(r);
	assert_int_equal(r->cpu.n, 4);
	assert_int_equal(r->cpu.total_ns, US(800));
	size_t len;
	assert_string_equal(pt_diff_side_name(g_before, r->name_id, &len), "common");
	assert_int_equal(len, 6);
	assert_non_null(pt_diff_side_find(g_before, PT_DIFF_OPERATORS, "old_op", 6));
	assert_null(pt_diff_side_find(g_before, PT_DIFF_OPERATORS, "new_op", 6));
	assert_null(
	    pt_diff_side_find(g_before, PT_DIFF_OPERATORS, "k_common", 8)); /* other table */
	r = pt_diff_side_find(g_before, PT_DIFF_KERNELS, "k_common", 8);
	assert_non_null(r);
	assert_int_equal(pt_diff_row_ns(r), US(200)); /* device row: GPU time */
	assert_null(pt_diff_side_find(g_before, PT_DIFF_OPERATORS, "", 0));
	assert_string_equal(pt_diff_side_label(g_after), "after.json");
}

static const struct pt_diff_row *row_named(const struct pt_diff_row *rows, size_t n, const char *nm)
{
	for (size_t i = 0; i < n; i++)
		if (rows[i].nlen == strlen(nm) && !memcmp(rows[i].name, nm, rows[i].nlen))
			return &rows[i];
	return NULL;
}

static void test_rows_status_and_order(void **state)
{
	(void)state;
	struct pt_diff_row *rows;
	size_t n = pt_diff_rows(g_before, g_after, PT_DIFF_OPERATORS, 0, &rows);
	assert_int_equal(n, 3);
	const struct pt_diff_row *c = row_named(rows, n, "common");
	const struct pt_diff_row *o = row_named(rows, n, "old_op");
	const struct pt_diff_row *w = row_named(rows, n, "new_op");
	assert_non_null(c);
	assert_non_null(o);
	assert_non_null(w);
	assert_int_equal(c->status, PT_DIFF_CHANGED);
	assert_int_equal(c->delta_ns, (int64_t)US(200)); /* 4 x (250 - 200) us */
	assert_int_equal(o->status, PT_DIFF_VANISHED);
	assert_null(o->after);
	assert_int_equal(o->delta_ns, -(int64_t)US(400));
	assert_int_equal(w->status, PT_DIFF_NEW);
	assert_null(w->before);
	assert_int_equal(w->delta_ns, (int64_t)US(400));
	/* |delta| largest first, ties by name: new_op (400) = old_op (400), common (200) */
	assert_string_equal(rows[0].name, "new_op");
	assert_string_equal(rows[1].name, "old_op");
	assert_string_equal(rows[2].name, "common");
	free(rows);
	n = pt_diff_rows(g_before, g_after, PT_DIFF_OPERATORS, 1, &rows);
	assert_int_equal(n, 1);
	free(rows);
	n = pt_diff_rows(g_before, g_after, PT_DIFF_KERNELS, 0, &rows);
	assert_int_equal(n, 3);
	assert_int_equal(row_named(rows, n, "k_new")->status, PT_DIFF_NEW);
	assert_int_equal(row_named(rows, n, "k_old")->status, PT_DIFF_VANISHED);
	assert_int_equal(row_named(rows, n, "k_common")->delta_ns, 0);
	free(rows);
}

static void test_metrics(void **state)
{
	(void)state;
	const struct pt_summary *b = pt_diff_side_summary(g_before),
				*a = pt_diff_side_summary(g_after);
	double v;
	assert_int_equal(pt_diff_metric_value(b, "step_ms", &v), 0);
	assert_true(fabs(v - 1.5) < 1e-9);
	assert_int_equal(pt_diff_metric_value(a, "step_ms", &v), 0);
	assert_true(fabs(v - 0.6) < 1e-9);
	assert_int_equal(pt_diff_metric_value(b, "dataloader_ms", &v), 0);
	assert_true(fabs(v - 1.0) < 1e-9);
	assert_int_equal(pt_diff_metric_value(b, "reader_ratio", &v), 0);
	assert_true(fabs(v - 1.0 / 1.5) < 1e-6);
	assert_int_equal(pt_diff_metric_value(b, "steps", &v), 0);
	assert_true(v == 4);
	assert_int_equal(pt_diff_metric_value(b, "no_such_figure", &v), PT_ENOENT);
	assert_int_equal(pt_diff_metric_value(b, "samples_per_s", &v), PT_ENOTAVAIL);

	struct pt_diff_metric_ctx mc = {b, a};
	assert_int_equal(pt_diff_metric(&mc, "step_ms", &v), 0); /* AFTER's */
	assert_true(fabs(v - 0.6) < 1e-9);
	assert_int_equal(pt_diff_metric(&mc, "step_ms_delta", &v), 0);
	assert_true(fabs(v - (0.6 - 1.5) / 1.5) < 1e-9);
	double ib, ia;
	assert_int_equal(pt_diff_metric_value(b, "ips", &ib), 0);
	assert_int_equal(pt_diff_metric_value(a, "ips", &ia), 0);
	assert_int_equal(pt_diff_metric(&mc, "ips_delta", &v), 0);
	assert_true(fabs(v - (ia - ib) / ib) < 1e-9);
	assert_true(v > 1.4); /* 1.5 ms -> 0.6 ms: 2.5x the steps/s */
	assert_int_equal(pt_diff_metric(&mc, "others_ms_delta", &v), PT_ENOTAVAIL); /* from 0 */
	assert_int_equal(pt_diff_metric(&mc, "nope_delta", &v), PT_ENOENT);
	assert_int_equal(pt_diff_metric(&mc, "_delta", &v), PT_ENOENT);
}

static void test_gate(void **state)
{
	(void)state;
	const struct pt_summary *b = pt_diff_side_summary(g_before),
				*a = pt_diff_side_summary(g_after);
	struct pt_gate *g = NULL;
	char err[256], why[256];
	assert_int_equal(pt_gate_parse("ips_delta<-5%", &g, err, sizeof err), 0);
	struct pt_diff_metric_ctx improved = {b, a}, regressed = {a, b};
	assert_int_equal(pt_gate_eval(g, pt_diff_metric, &improved, why, sizeof why), 0);
	assert_int_equal(pt_gate_eval(g, pt_diff_metric, &regressed, why, sizeof why), 1);
	assert_non_null(strstr(why, "ips_delta"));
	pt_gate_free(g);
}

static char *capture(int json, const struct pt_diff_side *b, const struct pt_diff_side *a)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(json ? pt_diff_json(f, b, a, NULL) : pt_diff_text(f, b, a, NULL), 0);
	fclose(f);
	return buf;
}

static void test_text(void **state)
{
	(void)state;
	char *out = capture(0, g_before, g_after);
	assert_non_null(strstr(out, "proftop diff: BEFORE -> AFTER\n"));
	assert_non_null(strstr(out, "Perf Summary (diff)"));
	assert_non_null(strstr(out, "Model Summary (diff)"));
	assert_non_null(strstr(out, "Operator Summary (diff)"));
	assert_non_null(strstr(out, "Kernel Summary (diff)"));
	/* Dataloader: 1.00 -> 0.10 ms per step */
	const char *dl = strstr(out, "  Dataloader");
	assert_non_null(dl);
	assert_non_null(strstr(dl, "1.00"));
	assert_non_null(strstr(dl, "-0.90"));
	const char *nw = strstr(out, "new_op");
	assert_non_null(nw);
	assert_true(strstr(nw, "new") && strchr(nw, '\n') > strstr(nw + 6, "new"));
	const char *gone = strstr(out, "old_op");
	assert_non_null(gone);
	assert_true(strstr(gone, "vanished") < strchr(gone, '\n'));
	free(out);
}

static void test_json(void **state)
{
	(void)state;
	char *out = capture(1, g_before, g_after);
	assert_true(out[0] == '{');
	assert_non_null(strstr(out, "\"schema\": \"proftop.diff/1\""));
	assert_non_null(strstr(out, "\"status\": \"new\""));
	assert_non_null(strstr(out, "\"status\": \"vanished\""));
	assert_non_null(strstr(out, "\"ips\": {\"before\": "));
	assert_null(strstr(out, "nan"));
	assert_null(strstr(out, "inf"));
	free(out);
}

static void test_escaped_names(void **state)
{
	(void)state;
	struct pt_diff_side *b =
	    side_of(make_run(10, 20, "evil\x1b[2Jop", NULL, "x"), "a\x1b]0;t\x07");
	struct pt_diff_side *a = side_of(make_run(10, 20, NULL, NULL, "y"), "y");
	char *out = capture(0, b, a);
	assert_null(strchr(out, '\x1b'));
	assert_null(strchr(out, '\x07'));
	free(out);
	out = capture(1, b, a);
	assert_null(strchr(out, '\x1b'));
	free(out);
	pt_diff_side_free(b);
	pt_diff_side_free(a);
}

static void test_empty_runs(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(16 << 20);
	struct pt_diff_side *e1 = side_of(t, NULL);
	t = pt_trace_new(16 << 20);
	struct pt_diff_side *e2 = side_of(t, "");
	char *out = capture(0, e1, e2);
	assert_non_null(strstr(out, "Perf Summary: no steps found"));
	free(out);
	out = capture(1, e1, e2);
	assert_non_null(strstr(out, "\"operators\": []"));
	free(out);
	double v;
	struct pt_diff_metric_ctx mc = {pt_diff_side_summary(e1), pt_diff_side_summary(e2)};
	assert_int_equal(pt_diff_metric(&mc, "ips", &v), PT_ENOTAVAIL);
	assert_int_equal(pt_diff_metric(&mc, "step_ms_delta", &v), PT_ENOTAVAIL);
	pt_diff_side_free(e1);
	pt_diff_side_free(e2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_side_find),	  cmocka_unit_test(test_rows_status_and_order),
	    cmocka_unit_test(test_metrics),	  cmocka_unit_test(test_gate),
	    cmocka_unit_test(test_text),	  cmocka_unit_test(test_json),
	    cmocka_unit_test(test_escaped_names), cmocka_unit_test(test_empty_runs),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
