/*
 * test_gate.c - the CI gate: the condition language (precedence, !, parens,
 * %, every comparison), the reason text (which comparisons held, negated
 * under !), parse errors with their column, unknown and undefined figures,
 * the report figures over a hand-built trace, and the overhead estimate.
 */
#include "testutil.h"

#include <math.h>

#include "proftop/error.h"
#include "proftop/gate.h"
#include "analyze/gate_metrics.h"
#include "analyze/overhead.h"

struct fig {
	const char *name;
	double v;
};

static const struct fig figs[] = {
	{"ips", 101.3}, {"reader_ratio", 0.3}, {"step_p99_ms", 250}, {"ips_delta", -0.072},
	{"steps", 10},  {"gpu_util", NAN},     {"zero", 0},
};

static int lookup(void *ctx, const char *name, double *v)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++)
		if (!strcmp(figs[i].name, name)) {
			*v = figs[i].v;
			return 0;
		}
	return PT_ENOENT;
}

/* Parses and evaluates; returns the eval result, reason in why. */
static int run(const char *expr, char *why, size_t len)
{
	struct pt_gate *g = NULL;
	char err[200];
	int rc = pt_gate_parse(expr, &g, err, sizeof err);
	if (rc)
		fail_msg("parse '%s': %s", expr, err);
	rc = pt_gate_eval(g, lookup, NULL, why, len);
	pt_gate_free(g);
	return rc;
}

static void test_holds(void **state)
{
	(void)state;
	char why[256];
	assert_int_equal(run("ips<120", why, sizeof why), 1);
	assert_string_equal(why, "ips 101.3 < 120");
	assert_int_equal(run("ips < 100", why, sizeof why), 0);
	assert_string_equal(why, "");
	assert_int_equal(run("ips<=101.3", why, sizeof why), 1);
	assert_int_equal(run("ips>=101.3", why, sizeof why), 1);
	assert_int_equal(run("ips>101.3", why, sizeof why), 0);
	assert_int_equal(run("ips==101.3", why, sizeof why), 1);
	assert_int_equal(run("ips!=101.3", why, sizeof why), 0);
	assert_int_equal(run("zero == 0", why, sizeof why), 1);
	assert_int_equal(run("steps > 1e1", why, sizeof why), 0);
	assert_int_equal(run("steps >= 1e1", why, sizeof why), 1);
	assert_int_equal(run("reader_ratio>20%", why, sizeof why), 1);
	assert_string_equal(why, "reader_ratio 30% > 20%");
	assert_int_equal(run("ips_delta<-5%", why, sizeof why), 1);
	assert_string_equal(why, "ips_delta -7.2% < -5%");
	assert_int_equal(run("ips_delta<-10%", why, sizeof why), 0);
	assert_int_equal(run("ips > +100", why, sizeof why), 1);
}

static void test_logic(void **state)
{
	(void)state;
	char why[256];
	assert_int_equal(run("ips<120 || reader_ratio>0.2", why, sizeof why), 1);
	assert_string_equal(why, "ips 101.3 < 120 || reader_ratio 0.3 > 0.2");
	assert_int_equal(run("ips<100 || reader_ratio>0.2", why, sizeof why), 1);
	assert_string_equal(why, "reader_ratio 0.3 > 0.2");
	assert_int_equal(run("ips<120 && reader_ratio>0.2", why, sizeof why), 1);
	assert_string_equal(why, "ips 101.3 < 120 && reader_ratio 0.3 > 0.2");
	assert_int_equal(run("ips<120 && reader_ratio>0.5", why, sizeof why), 0);
	/* && binds tighter: true || (false && x) */
	assert_int_equal(run("ips<120 || ips>1000 && steps>0", why, sizeof why), 1);
	assert_string_equal(why, "ips 101.3 < 120");
	/* with parens the same tokens mean (true || false) && false */
	assert_int_equal(run("(ips<120 || ips>1000) && steps>100", why, sizeof why), 0);
	assert_int_equal(run("(ips<120 || ips>1000) && steps>5", why, sizeof why), 1);
	assert_string_equal(why, "ips 101.3 < 120 && steps 10 > 5");
	assert_int_equal(run("(ips<120 && steps>5) || zero>1", why, sizeof why), 1);
	assert_int_equal(run("(ips<120 || steps>5) && zero==0", why, sizeof why), 1);
	assert_string_equal(why, "(ips 101.3 < 120 || steps 10 > 5) && zero 0 == 0");
	/* ! and De Morgan in the reason */
	assert_int_equal(run("!(ips>=120)", why, sizeof why), 1);
	assert_string_equal(why, "ips 101.3 < 120");
	assert_int_equal(run("!ips<120", why, sizeof why), 0);
	assert_int_equal(run("!(ips>200 || steps<5)", why, sizeof why), 1);
	assert_string_equal(why, "ips 101.3 <= 200 && steps 10 >= 5");
	assert_int_equal(run("!(ips>200 && steps>5)", why, sizeof why), 1);
	assert_string_equal(why, "ips 101.3 <= 200");
	assert_int_equal(run("!!(ips<120)", why, sizeof why), 1);
	assert_int_equal(run("  ( ( ips < 120 ) )  ", why, sizeof why), 1);
	/* a short reason buffer is cut, never overrun */
	char tiny[8];
	assert_int_equal(run("ips<120", tiny, sizeof tiny), 1);
	assert_string_equal(tiny, "ips 101");
}

static void expect_error(const char *expr, const char *want)
{
	struct pt_gate *g = (struct pt_gate *)1;
	char err[200];
	assert_int_equal(pt_gate_parse(expr, &g, err, sizeof err), PT_EINVAL);
	assert_null(g);
	if (strcmp(err, want))
		fail_msg("'%s': got \"%s\", want \"%s\"", expr, err, want);
}

static void test_parse_errors(void **state)
{
	(void)state;
	expect_error("ips < x", "at column 7: expected a number after '<', found 'x'");
	expect_error("ips<", "at column 5: expected a number after '<', found the end of the "
			     "condition");
	expect_error("", "at column 1: empty condition");
	expect_error("   ", "at column 4: empty condition");
	expect_error("ips 120", "at column 5: expected a comparison (< <= > >= == !=) after "
				"'ips', found '1'");
	expect_error("ips = 1", "at column 5: '=' is not a comparison; use '=='");
	expect_error("ips<1 & steps>2", "at column 7: expected '&&', found a single '&'");
	expect_error("ips<1 | steps>2", "at column 7: expected '||', found a single '|'");
	expect_error("(ips<1", "at column 7: expected ')' to close the '(' at column 1, found "
			       "the end of the condition");
	expect_error("ips<1)", "at column 6: ')' without a matching '('");
	expect_error("ips<1 steps>2", "at column 7: expected '&&', '||' or the end, found 's'");
	expect_error("120 > ips", "at column 1: expected a figure name (the figure goes on the "
				  "left: ips<120)");
	expect_error("IPS<1", "at column 1: figure names are lower case");
	expect_error("ips<1 ||", "at column 9: expected a comparison, found the end of the "
				 "condition");
	expect_error("ips<12x", "at column 7: unexpected 'x' after the number 12");
	expect_error("ips<1e", "at column 6: expected digits of the exponent");
	expect_error("ips<1.2.3", "at column 8: unexpected '.' after the number 1.2");
	expect_error("ips<1e999", "at column 5: number out of range");
	expect_error("ips<1 && $", "at column 10: expected a figure name, '(' or '!', found '$'");
	expect_error("ips<\x01", "at column 5: expected a number after '<', found byte 0x01");

	/* deep nesting is refused, not a stack overflow */
	char deep[400];
	memset(deep, '(', 300);
	strcpy(deep + 300, "ips<1");
	struct pt_gate *g = NULL;
	char err[200];
	assert_int_equal(pt_gate_parse(deep, &g, err, sizeof err), PT_EINVAL);
	assert_non_null(strstr(err, "nested too deeply"));
	memset(deep, '!', 300);
	assert_int_equal(pt_gate_parse(deep, &g, err, sizeof err), PT_EINVAL);
	/* a long name is refused */
	memset(deep, 'a', 100);
	strcpy(deep + 100, "<1");
	assert_int_equal(pt_gate_parse(deep, &g, err, sizeof err), PT_EINVAL);
	assert_non_null(strstr(err, "too long"));
	/* no error buffer is fine */
	assert_int_equal(pt_gate_parse("ips<", &g, NULL, 0), PT_EINVAL);
}

static void test_unknown_and_undefined(void **state)
{
	(void)state;
	struct pt_gate *g = NULL;
	char why[128];
	assert_int_equal(pt_gate_parse("ips<1 || ipz>2", &g, why, sizeof why), 0);
	/* the unknown figure is reported even though nothing else holds */
	assert_int_equal(pt_gate_eval(g, lookup, NULL, why, sizeof why), PT_ENOENT);
	assert_string_equal(why, "ipz: unknown figure");
	pt_gate_free(g);
	/* ...and also when the other side of the || already holds */
	assert_int_equal(pt_gate_parse("ips<200 || ipz>2", &g, why, sizeof why), 0);
	assert_int_equal(pt_gate_eval(g, lookup, NULL, why, sizeof why), PT_ENOENT);
	pt_gate_free(g);
	assert_int_equal(pt_gate_parse("gpu_util<0.5", &g, why, sizeof why), 0);
	assert_int_equal(pt_gate_eval(g, lookup, NULL, why, sizeof why), PT_ENOTAVAIL);
	assert_string_equal(why, "gpu_util: not available for this trace");
	pt_gate_free(g);
	pt_gate_free(NULL);
}

/* Two steps of 10 ms and 30 ms with a 2 ms and a 12 ms DataLoader. */
static struct pt_trace *small_trace(void)
{
	struct pt_trace *t = pt_trace_new(0);
	uint32_t tr = tu_track(t, 1, 1, -1);
	tu_ev(t, tr, PT_KIND_PROFILE_STEP, "ProfilerStep#1", 0, 10000, 0);
	tu_ev(t, tr, PT_KIND_DATALOADER, "DataLoader", 0, 2000, 0);
	tu_ev(t, tr, PT_KIND_OPERATOR, "aten::mm", 3000, 5000, 0);
	tu_ev(t, tr, PT_KIND_PROFILE_STEP, "ProfilerStep#2", 10000, 30000, 0);
	tu_ev(t, tr, PT_KIND_DATALOADER, "DataLoader", 10000, 12000, 0);
	tu_ev(t, tr, PT_KIND_OPERATOR, "aten::mm", 23000, 5000, 0);
	return t;
}

static double fig(const struct pt_gate_figures *f, const char *name, int want_rc)
{
	double v = -1;
	assert_int_equal(pt_gate_figure(f, name, &v), want_rc);
	return v;
}

static void test_report_figures(void **state)
{
	(void)state;
	struct pt_trace *t = small_trace();
	struct pt_summary *s = pt_summarize(t, NULL);
	struct pt_gate_figures f = {.t = t, .s = s};
	assert_int_equal((int)fig(&f, "steps", 0), 2);
	assert_true(fabs(fig(&f, "step_ms", 0) - 20.0) < 1e-9);
	assert_true(fabs(fig(&f, "step_max_ms", 0) - 30.0) < 1e-9);
	assert_true(fabs(fig(&f, "reader_ratio", 0) - 14.0 / 40.0) < 1e-9);
	assert_true(fabs(fig(&f, "dataloader_ratio", 0) - 14.0 / 40.0) < 1e-9);
	assert_true(fabs(fig(&f, "ips", 0) - s->perf.ips_avg) < 1e-9);
	double p50 = fig(&f, "step_p50_ms", 0), p99 = fig(&f, "step_p99_ms", 0);
	assert_true(p50 >= 10.0 && p50 <= 30.0);
	assert_true(p99 >= p50 && p99 <= 30.0);
	assert_int_equal((int)fig(&f, "events", 0), (int)s->events);
	assert_true(fig(&f, "dropped", 0) == 0);
	assert_true(fig(&f, "dropped_ratio", 0) == 0);
	fig(&f, "gpu_util", PT_ENOTAVAIL);
	fig(&f, "no_such_figure", PT_ENOENT);
	/* every listed figure is known (maybe undefined here) */
	for (size_t i = 0; pt_gate_figure_names[i].name; i++) {
		double v;
		int rc = pt_gate_figure(&f, pt_gate_figure_names[i].name, &v);
		assert_true(rc == 0 || rc == PT_ENOTAVAIL);
	}
	/* through the gate */
	struct pt_gate *g = NULL;
	char why[128];
	assert_int_equal(pt_gate_parse("step_max_ms > 25 && reader_ratio > 30%", &g, why,
				       sizeof why), 0);
	assert_int_equal(pt_gate_eval(g, pt_gate_metric, &f, why, sizeof why), 1);
	assert_string_equal(why, "step_max_ms 30 > 25 && reader_ratio 35% > 30%");
	pt_gate_free(g);
	pt_summary_free(s);
	pt_trace_free(t);
}

static void test_overhead_math(void **state)
{
	(void)state;
	struct pt_overhead o;
	/* 830 events per 10 ms step at 21 ns each: 17.43 us = 0.1743% */
	pt_overhead_compute(&o, 8300, 10, 10 * 10000000ull, 21.0);
	assert_true(fabs(o.events_per_step - 830) < 1e-9);
	assert_true(fabs(o.share - 830 * 21.0 / 10e6) < 1e-12);
	assert_true(o.measured);
	char buf[160];
	pt_overhead_format(&o, buf, sizeof buf);
	assert_string_equal(buf, "profiling overhead \xe2\x89\x88 0.17% (830 events/step \xc3\x97 21 ns)");
	/* no cost figure: events/step only */
	pt_overhead_compute(&o, 8300, 10, 10 * 10000000ull, 0);
	assert_false(o.measured);
	assert_true(isnan(o.share));
	pt_overhead_format(&o, buf, sizeof buf);
	assert_string_equal(buf, "profiling overhead: 830 events/step (cost per event not measured)");
	/* a Python job: 120 helper calls a step at 180 ns each on top */
	pt_overhead_compute(&o, 8300, 10, 10 * 10000000ull, 21.0);
	pt_overhead_add_helper(&o, 1200, 10, 10 * 10000000ull, 180.0);
	assert_true(fabs(o.share - (830 * 21.0 + 120 * 180.0) / 10e6) < 1e-12);
	pt_overhead_format(&o, buf, sizeof buf);
	assert_string_equal(buf, "profiling overhead \xe2\x89\x88 0.39% (830 events/step \xc3\x97 21 "
				 "ns + 120 helper calls/step \xc3\x97 180 ns)");
	/* the helper's calls without its cost (or none): the probe's figure alone */
	pt_overhead_compute(&o, 8300, 10, 10 * 10000000ull, 21.0);
	pt_overhead_add_helper(&o, 1200, 10, 10 * 10000000ull, 0);
	assert_true(fabs(o.share - 830 * 21.0 / 10e6) < 1e-12);
	assert_true(o.helper_calls_per_step == 0);
	/* no steps: nothing to say */
	pt_overhead_compute(&o, 8300, 0, 0, 21);
	assert_true(isnan(o.events_per_step));
	pt_overhead_format(&o, buf, sizeof buf);
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_holds),
		cmocka_unit_test(test_logic),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_unknown_and_undefined),
		cmocka_unit_test(test_report_figures),
		cmocka_unit_test(test_overhead_math),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
