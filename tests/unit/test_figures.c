/*
 * test_figures.c - properties every report must have, on every trace there
 * is: each file under fixtures/ (the bad-input cases that load too) and
 * every trace under the shared real traces (fixtures/traces). Each is read,
 * summarized (with per-rank figures when it has several ranks) and printed
 * as JSON and as text, and then:
 *
 *  - no percentage (a "_pct" key, a Ratio column of the text) lies outside
 *    0..100: every ratio stays within its denominator;
 *  - the same figure is equal in every table that shows it: ProfileStep
 *    (Overview, Distributed, Model, the steps and the Perf Summary), each
 *    phase (Overview and Model: time and calls), Kernel and Communication
 *    time (Overview and Distributed), kernel, copy and set counts (Overview,
 *    Kernel and Memory tables, Device Summary), the reader ratio (Perf and
 *    Model), the reader cost (Perf, Model and the steps);
 *  - what does not apply is null in JSON: the Model Summary without steps,
 *    the Others row's calls and spread, a device row's CPU columns, the
 *    reader figures without any Dataloader.
 *
 * The shared traces are skipped when absent (and under valgrind).
 */
#include "testutil.h"

#include <cJSON.h>
#include <dirent.h>
#include <math.h>
#include <sys/stat.h>

#include "proftop/agg.h"
#include "proftop/chrome.h"
#include "proftop/ranks.h"
#include "proftop/report.h"

#define EPS 1.5e-6 /* ms: JSON times are exact to the nanosecond (6 decimals) */

static int files_checked;

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

static void same(const char *file, const char *what, double a, double b, double tol)
{
	if (fabs(a - b) > tol)
		fail_msg("%s: %s: %.9g != %.9g", file, what, a, b);
}

/* Every number under a key ending in "_pct" is within 0..100. */
static void pct_in_range(const char *file, const cJSON *o, const char *path)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, o)
	{
		char sub[512];
		snprintf(sub, sizeof sub, "%s.%s", path, c->string ? c->string : "[]");
		if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
			pct_in_range(file, c, sub);
			continue;
		}
		size_t n = c->string ? strlen(c->string) : 0;
		if (!cJSON_IsNumber(c) || n < 4 || strcmp(c->string + n - 4, "_pct"))
			continue;
		if (!(c->valuedouble >= 0.0 && c->valuedouble <= 100.0 + 1e-9))
			fail_msg("%s: %s = %.6f, outside 0..100", file, sub, c->valuedouble);
	}
}

/* The text report's combined cells "total / avg / max / min / ratio" and
 * the Overview / Distributed "Ratio (%)" columns: every ratio <= 100. */
static void text_ratios_in_range(const char *file, const char *text)
{
	for (const char *p = text; (p = strstr(p, " / ")); p += 3) {
		/* a combined cell: five fields, " / " between them and no other
		 * blank (cells are two blanks apart) */
		const char *q = p;
		int fields = 1;
		while (fields < 5) {
			const char *f = q + 3;
			size_t tok = strcspn(f, " \n");
			if (strncmp(f + tok, " / ", 3))
				break;
			q = f + tok;
			fields++;
		}
		if (fields < 4)
			continue;
		double r;
		if (fields == 4 && sscanf(q + 3, "%lf", &r) == 1 && r > 100.0 + 1e-9)
			fail_msg("%s: text ratio %.2f above 100 near: %.60s", file, r, p);
		p = q;
	}
}

static const cJSON *model_row(const cJSON *j, const char *name)
{
	const cJSON *r;
	cJSON_ArrayForEach(r, cJSON_GetObjectItem(j, "model_summary"))
	{
		const cJSON *n = cJSON_GetObjectItem(r, "name");
		if (cJSON_IsString(n) && !strcmp(n->valuestring, name))
			return r;
	}
	return NULL;
}

static double sum_key(const cJSON *arr, const char *key, int device_only)
{
	double t = 0;
	const cJSON *r;
	cJSON_ArrayForEach(r, arr)
	{
		if (device_only && !cJSON_IsNull(cJSON_GetObjectItem(r, "cpu_total_ms")))
			continue;
		t += num(r, key);
	}
	return t;
}

static double ov(const cJSON *j, const char *kind, const char *key)
{
	const cJSON *o = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "overview"), kind);
	return o ? num(o, key) : 0.0;
}

static void check_report(const char *file, const char *json, const char *text)
{
	cJSON *j = cJSON_Parse(json);
	if (!j)
		fail_msg("%s: report --json is not JSON", file);
	pct_in_range(file, j, "");
	text_ratios_in_range(file, text);

	double steps = num(j, "steps");
	const cJSON *d = cJSON_GetObjectItem(j, "distributed");
	const cJSON *perf = cJSON_GetObjectItem(j, "perf_summary");
	const cJSON *steps_detail = cJSON_GetObjectItem(j, "steps_detail");
	const cJSON *ps = model_row(j, "ProfileStep");
	assert_non_null(ps);
	same(file, "steps_detail entries", cJSON_GetArraySize(steps_detail), steps, 0);
	if (steps > 0) {
		/* ProfileStep: one figure everywhere */
		same(file, "Overview ProfileStep = Distributed step",
		     ov(j, "ProfileStep", "cpu_ms"), num(d, "step_ms"), EPS);
		same(file, "Model ProfileStep calls = steps", num(ps, "calls"), steps, 0);
		same(file, "Model ProfileStep = sum of batch_cost", num(ps, "cpu_total_ms"),
		     sum_key(steps_detail, "batch_cost_ms", 0), EPS * steps);
		same(file, "Perf batch_cost avg x steps = Model ProfileStep",
		     num(cJSON_GetObjectItem(perf, "batch_cost_ms"), "avg") * steps,
		     num(ps, "cpu_total_ms"), 1e-6 * num(ps, "cpu_total_ms") + EPS);
		/* each phase: Overview = Model, time and calls */
		static const char *const phases[4] = {"Dataloader", "Forward", "Backward",
						      "Optimization"};
		for (int i = 0; i < 4; i++) {
			const cJSON *m = model_row(j, phases[i]);
			char what[96];
			snprintf(what, sizeof what, "Overview %s = Model %s", phases[i], phases[i]);
			same(file, what, ov(j, phases[i], "cpu_ms"), num(m, "cpu_total_ms"), EPS);
			same(file, what, ov(j, phases[i], "calls"), num(m, "calls"), 0);
		}
		const cJSON *dl = model_row(j, "Dataloader");
		same(file, "Model Dataloader = sum of reader_cost", num(dl, "cpu_total_ms"),
		     sum_key(steps_detail, "reader_cost_ms", 0), EPS * steps);
		const cJSON *rr = cJSON_GetObjectItem(perf, "reader_ratio_pct");
		if (num(dl, "calls") > 0) {
			assert_true(cJSON_IsNumber(rr));
			same(file, "reader ratio = Model Dataloader / ProfileStep", rr->valuedouble,
			     num(dl, "cpu_ratio_pct"), 1e-6);
		} else {
			assert_true(cJSON_IsNull(rr)); /* no Dataloader: not applicable */
		}
		const cJSON *others = model_row(j, "Others");
		assert_true(cJSON_IsNull(cJSON_GetObjectItem(others, "calls")));
		assert_true(cJSON_IsNull(cJSON_GetObjectItem(others, "cpu_avg_ms")));
	} else {
		const cJSON *r;
		cJSON_ArrayForEach(r, cJSON_GetObjectItem(j, "model_summary"))
		{
			assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "calls")));
			assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "cpu_total_ms")));
		}
		assert_true(cJSON_IsNull(cJSON_GetObjectItem(perf, "reader_ratio_pct")));
	}
	/* device time: Overview = Distributed */
	same(file, "Overview Kernel = Distributed computation", ov(j, "Kernel", "gpu_ms"),
	     num(d, "computation_ms"), EPS);
	if (!cJSON_IsTrue(cJSON_GetObjectItem(d, "from_host_calls")))
		same(file, "Overview Communication = Distributed communication",
		     ov(j, "Communication", "gpu_ms"), num(d, "communication_ms"), EPS);
	/* counts: Overview = Kernel table = Device Summary; copies and sets */
	double kcalls = ov(j, "Kernel", "calls") + ov(j, "Communication", "calls");
	same(file, "kernel calls: Overview = Kernel table",
	     sum_key(cJSON_GetObjectItem(j, "kernels"), "calls", 0), kcalls, 0);
	double dev_k = 0, dev_c = 0, dev_s = 0;
	const cJSON *r;
	cJSON_ArrayForEach(r, cJSON_GetObjectItem(j, "device"))
	{
		if (!cJSON_IsNumber(cJSON_GetObjectItem(r, "device")))
			continue; /* a sampled CPU row */
		dev_k += num(r, "kernels");
		dev_c += num(r, "memcpys");
		dev_s += num(r, "memsets");
	}
	same(file, "kernel calls: Overview = Device Summary", dev_k, kcalls, 0);
	same(file, "copies: Overview = Device Summary", dev_c, ov(j, "Memcpy", "calls"), 0);
	same(file, "sets: Overview = Device Summary", dev_s, ov(j, "Memset", "calls"), 0);
	same(file, "copies and sets: Overview = Memory table",
	     sum_key(cJSON_GetObjectItem(j, "memory"), "calls", 1),
	     ov(j, "Memcpy", "calls") + ov(j, "Memset", "calls"), 0);
	/* a device row has no CPU side */
	static const char *const tables[2] = {"kernels", "memory"};
	for (int i = 0; i < 2; i++)
		cJSON_ArrayForEach(r, cJSON_GetObjectItem(j, tables[i]))
		{
			const cJSON *ct = cJSON_GetObjectItem(r, "cpu_total_ms");
			if (i == 0)
				assert_true(cJSON_IsNull(ct));
			if (cJSON_IsNull(ct))
				assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "cpu_ratio_pct")));
		}
	cJSON_Delete(j);
}

static char *render(int json, const struct pt_trace *t, const struct pt_summary *s,
		    const struct pt_ranks *ranks)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	struct pt_report_opts o;
	pt_report_opts_init(&o);
	o.ranks = ranks;
	o.no_advice = 1;
	assert_int_equal(json ? pt_report_json(f, t, s, &o) : pt_report_text(f, t, s, &o), 0);
	fclose(f);
	return buf;
}

static void check_file(const char *path)
{
	struct pt_trace *t = pt_trace_new(0);
	struct pt_read_opts ro = {0};
	char err[512] = "";
	if (pt_chrome_read(t, path, &ro, err, sizeof err) < 0) {
		pt_trace_free(t); /* a bad-input case that stops the reader */
		return;
	}
	struct pt_ranks ranks = {0}, *rp = NULL;
	if (pt_ranks_possible(t) && pt_ranks_compute(t, NULL, &ranks) == 0 && ranks.n >= 2)
		rp = &ranks;
	struct pt_summary *s = pt_summarize(t, NULL);
	char *json = render(1, t, s, rp), *text = render(0, t, s, rp);
	check_report(path, json, text);
	free(json);
	free(text);
	pt_summary_free(s);
	pt_ranks_free(&ranks);
	pt_trace_free(t);
	files_checked++;
}

static size_t files_seen; /* trace files met by the walk (tu_sampled's count) */

static int is_trace_name(const char *n)
{
	size_t l = strlen(n);
	return (l > 5 && !strcmp(n + l - 5, ".json")) || (l > 8 && !strcmp(n + l - 8, ".json.gz"));
}

/* Every trace file below dir (sorted walk, so failures repeat). */
static void walk(const char *dir)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0)
		return;
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, name);
		struct stat st;
		if (name[0] != '.' && stat(path, &st) == 0) {
			if (S_ISDIR(st.st_mode))
				walk(path);
			else if (S_ISREG(st.st_mode) && is_trace_name(name) && tu_sampled(files_seen++, 4))
				check_file(path);
		}
		free(ents[i]);
	}
	free(ents);
}

static void test_fixtures(void **state)
{
	(void)state;
	files_checked = 0;
	walk(tu_fixtures());
	print_message("# %d fixture traces checked\n", files_checked);
	assert_true(files_checked >= 8);
}

static void test_shared_traces(void **state)
{
	(void)state;
	struct stat st;
	if (stat(tu_traces(), &st) != 0) {
		skip();
		return;
	}
	files_checked = 0;
	walk(tu_traces());
	print_message("# %d shared traces checked\n", files_checked);
	assert_true(files_checked > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fixtures),
	    cmocka_unit_test(test_shared_traces),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
