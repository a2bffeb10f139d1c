/*
 * test_report.c - the report faces on hand-filled summaries: Paddle's text
 * layout (Perf Summary block byte for byte, Model Summary's Others row,
 * operator detail with "- / - / - / - / -" for kernels, long names cut),
 * escaping of hostile names in text and JSON, the JSON schema (parsed with
 * cJSON, every documented key present, zeros and no NaN for an empty
 * summary), sort keys and --top, and pt_table_sort on flat tables and trees.
 */
#include "testutil.h"

#include <cJSON.h>

#include "proftop/agg.h"
#include "proftop/report.h"
#include "model/util.h"

#define MS(x) ((uint64_t)((x) * 1e6 + 0.5))

static struct pt_stat st(uint64_t n, uint64_t total, uint64_t max, uint64_t min)
{
	struct pt_stat s = {n, total, max, min};
	return s;
}

static char *capture(int json, const struct pt_trace *t, const struct pt_summary *s,
		     const struct pt_report_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	int rc = json ? pt_report_json(f, t, s, o) : pt_report_text(f, t, s, o);
	assert_int_equal(rc, 0);
	fclose(f);
	return buf;
}

static struct pt_row host_row(struct pt_trace *t, const char *name, uint64_t n, uint64_t total,
			      uint64_t max, uint64_t min, uint64_t gpu_total)
{
	struct pt_row r = {0};
	r.name_id = pt_trace_intern(t, name, strlen(name));
	r.kind = PT_KIND_OPERATOR;
	r.parent = UINT32_MAX;
	r.cpu = st(n, total, max, min);
	r.cpu_self_ns = total / 2;
	r.cpu_ratio_ns = total;
	if (gpu_total)
		r.gpu = st(n, gpu_total, gpu_total, gpu_total / (n ? n : 1));
	r.gpu_ratio_ns = gpu_total;
	return r;
}

static struct pt_row dev_row(struct pt_trace *t, const char *name, uint64_t n, uint64_t total,
			     uint64_t max, uint64_t min)
{
	struct pt_row r = {0};
	r.name_id = pt_trace_intern(t, name, strlen(name));
	r.kind = PT_KIND_KERNEL;
	r.is_device = 1;
	r.parent = UINT32_MAX;
	r.gpu = st(n, total, max, min);
	r.gpu_ratio_ns = total;
	return r;
}

static void table_set(struct pt_table *tb, const struct pt_row *rows, size_t n)
{
	tb->rows = pt_xmalloc((n ? n : 1) * sizeof *rows);
	memcpy(tb->rows, rows, n * sizeof *rows);
	tb->n = n;
}

static void summary_free(struct pt_summary *s)
{
	free(s->steps);
	free(s->devices);
	free(s->operators.rows);
	free(s->op_detail.rows);
	free(s->kernels.rows);
	free(s->memory.rows);
	free(s->user_defined.rows);
	free(s);
}

/* A summary shaped like Paddle's cifar10 case study (numbers from its Model Summary). */
static struct pt_summary *sample_summary(struct pt_trace *t)
{
	struct pt_summary *s = pt_xcalloc(1, sizeof *s);
	s->t0_ns = MS(1000);
	s->t1_ns = MS(1000) + MS(300);
	s->events = 123;
	s->has_gpu = 1;
	s->nsteps = 2;
	s->steps = pt_xcalloc(2, sizeof *s->steps);
	s->steps[0] = (struct pt_step){.number = 5, .start_ns = MS(1000), .dur_ns = MS(31.56)};
	s->steps[0].cpu_ns[PT_MS_DATALOADER] = MS(11.95);
	s->steps[1] = (struct pt_step){.number = 6, .start_ns = MS(1031.56), .dur_ns = MS(33)};
	s->steps[1].cpu_ns[PT_MS_DATALOADER] = MS(12.77);
	s->model[PT_MS_STEP] = (struct pt_model_row){11, st(11, MS(293.39), MS(30.42), MS(25.42)),
						     st(11, MS(13.25), MS(1.21), MS(1.20))};
	s->model[PT_MS_DATALOADER] = (struct pt_model_row){
		11, st(11, MS(144.09), MS(15.09), MS(12.05)), st(11, 0, 0, 0)};
	s->model[PT_MS_FORWARD] = (struct pt_model_row){11, st(11, MS(50.26), MS(5.34), MS(4.22)),
							st(11, MS(3.96), MS(0.37), MS(0.36))};
	s->model[PT_MS_BACKWARD] = (struct pt_model_row){11, st(11, MS(20.49), MS(2.26), MS(1.55)),
							 st(11, MS(8.13), MS(0.74), MS(0.73))};
	s->model[PT_MS_OPTIMIZATION] = (struct pt_model_row){
		11, st(11, MS(34.52), MS(3.32), MS(2.52)), st(11, MS(0.67), MS(0.06), MS(0.06))};
	s->model[PT_MS_OTHERS] = (struct pt_model_row){0, st(11, MS(44.03), 0, 0),
						       st(11, MS(0.52), 0, 0)};
	s->perf.steps = 2;
	s->perf.has_reader = 1;
	s->perf.reader_ratio_pct = 38.304;
	s->perf.reader = st(2, MS(24.72), MS(12.77), MS(11.95));
	s->perf.batch = st(2, MS(64.56), MS(33), MS(31.56));
	s->perf.ips_avg = 30.98171;
	s->perf.ips_max = 31.68568;
	s->perf.ips_min = 30.30303;
	s->overview[PT_KIND_PROFILE_STEP] = (struct pt_overview_row){11, MS(293.39), MS(293.39)};
	s->overview[PT_KIND_OPERATOR] = (struct pt_overview_row){80, MS(100), MS(293.39)};
	s->overview[PT_KIND_CUDA_RUNTIME] = (struct pt_overview_row){300, MS(120), MS(293.39)};
	s->overview[PT_KIND_KERNEL] = (struct pt_overview_row){200, MS(13), MS(293.39)};
	s->dist = (struct pt_distributed){.step_ns = MS(293.39), .comm_ns = MS(10),
					  .comp_ns = MS(12), .overlap_ns = MS(2)};
	s->ndevices = 1;
	s->devices = pt_xcalloc(1, sizeof *s->devices);
	s->devices[0] = (struct pt_device_row){0, MS(13.25), MS(300), 4.42, 200, 3, 1, 4096};

	struct pt_row ops[3] = {
		host_row(t, "conv2d", 10, MS(50), MS(9), MS(1), MS(8)),
		host_row(t, "relu", 40, MS(20), MS(1), MS(0.2), MS(1)),
		host_row(t, "matmul", 2, MS(30), MS(20), MS(10), MS(4)),
	};
	table_set(&s->operators, ops, 3);
	s->operators.cpu_base_ns = MS(293.39);
	s->operators.gpu_base_ns = MS(13.25);

	/* conv2d -> conv2d::compute -> a kernel; matmul -> its kernel */
	struct pt_row det[5] = {
		host_row(t, "conv2d", 10, MS(50), MS(9), MS(1), MS(8)),
		host_row(t, "conv2d::compute", 10, MS(40), MS(8), MS(1), MS(8)),
		dev_row(t, "implicit_gemm_kernel", 10, MS(8), MS(1), MS(0.5)),
		host_row(t, "matmul", 2, MS(30), MS(20), MS(10), MS(4)),
		dev_row(t, "sgemm_128x64", 2, MS(4), MS(2), MS(2)),
	};
	det[1].depth = 1, det[1].parent = 0, det[1].kind = PT_KIND_OPERATOR_INNER;
	det[2].depth = 2, det[2].parent = 1;
	det[4].depth = 1, det[4].parent = 3;
	table_set(&s->op_detail, det, 5);
	s->op_detail.cpu_base_ns = MS(293.39);
	s->op_detail.gpu_base_ns = MS(13.25);

	struct pt_row kern[2] = {
		dev_row(t, "implicit_gemm_kernel", 10, MS(8), MS(1), MS(0.5)),
		dev_row(t, "void very_long_templated_kernel_name<float, 128, 64, (cutlass::arch::"
			   "OpClassTensorOp)2>(cutlass::gemm::GemmCoord, float const*, float*, int)",
			2, MS(4), MS(2), MS(2)),
	};
	table_set(&s->kernels, kern, 2);
	s->kernels.gpu_base_ns = MS(13.25);

	struct pt_row mem[1] = {dev_row(t, "Memcpy HtoD (Pageable -> Device)", 3, MS(0.3),
					MS(0.2), MS(0.05))};
	mem[0].kind = PT_KIND_MEMCPY;
	table_set(&s->memory, mem, 1);
	s->memory.gpu_base_ns = MS(13.25);

	struct pt_row ud[1] = {host_row(t, "MyRecord", 8, MS(0.15), MS(0.02), MS(0.02), 0)};
	ud[0].kind = PT_KIND_USER_DEFINED;
	table_set(&s->user_defined, ud, 1);
	s->user_defined.cpu_base_ns = MS(293.39);
	return s;
}

static struct pt_trace *sample_trace(void)
{
	struct pt_trace *t = pt_trace_new(64 << 20);
	pt_trace_set_source(t, "case_study.json");
	uint32_t h = tu_track(t, 1, 1, -1);
	tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfileStep#5", 1000000, 31560, 0);
	return t;
}

static void test_perf_summary_exact(void **state)
{
	(void)state;
	struct pt_trace *t = sample_trace();
	struct pt_summary *s = sample_summary(t);
	char *out = capture(0, t, s, NULL);
	const char *want =
		"============================================Perf Summary===================="
		"========================\n"
		"Reader Ratio: 38.304%\n"
		"Time Unit: s, IPS Unit: steps/s\n"
		"|                 |       avg       |       max       |       min       |\n"
		"|   reader_cost   |     0.01236     |     0.01277     |     0.01195     |\n"
		"|    batch_cost   |     0.03228     |     0.03300     |     0.03156     |\n"
		"|       ips       |     30.98171    |     31.68568    |     30.30303    |\n";
	if (!strstr(out, want))
		fail_msg("Perf Summary block differs:\n%s", out);
	s->perf.ips_samples = 1;
	free(out);
	out = capture(0, t, s, NULL);
	assert_non_null(strstr(out, "Time Unit: s, IPS Unit: samples/s\n"));
	free(out);
	summary_free(s);
	pt_trace_free(t);
}

static void test_model_summary_layout(void **state)
{
	(void)state;
	struct pt_trace *t = sample_trace();
	struct pt_summary *s = sample_summary(t);
	char *out = capture(0, t, s, NULL);
	/* Paddle's own rows for these numbers */
	const char *rows[] = {
		"-----------------------------------------------Model Summary-------------------"
		"----------------------------\n"
		"Time unit: ms\n"
		"---------------  ------  ----------------------------------------  "
		"----------------------------------------\n"
		"Name             Calls   CPU Total / Avg / Max / Min / Ratio(%)    "
		"GPU Total / Avg / Max / Min / Ratio(%)\n",
		"ProfileStep      11      293.39 / 26.67 / 30.42 / 25.42 / 100.00   "
		"13.25 / 1.20 / 1.21 / 1.20 / 100.00\n",
		"  Dataloader     11      144.09 / 13.10 / 15.09 / 12.05 / 49.11    "
		"0.00 / 0.00 / 0.00 / 0.00 / 0.00\n",
		"  Forward        11      50.26 / 4.57 / 5.34 / 4.22 / 17.13        "
		"3.96 / 0.36 / 0.37 / 0.36 / 29.89\n",
		"  Others         -       44.03 / - / - / - / 15.01                 "
		"0.52 / - / - / - / 3.92\n",
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		if (!strstr(out, rows[i]))
			fail_msg("missing row:\n%s\nin:\n%s", rows[i], out);
	/* section order */
	const char *order[] = {"Device Summary", "Overview Summary", "Model Summary",
			       "Distributed Summary", "Operator Summary", "Kernel Summary",
			       "Memory Manipulation Summary", "UserDefined Summary", "Perf Summary"};
	const char *prev = out;
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		const char *p = strstr(prev, order[i]);
		if (!p)
			fail_msg("%s missing or out of order", order[i]);
		prev = p;
	}
	assert_non_null(strstr(out, "GPU0                            4.42\n"));
	assert_non_null(strstr(out, "  CudaRuntime              300                        120.00"));
	assert_non_null(strstr(out, "\n  Communication            10.00                      3.41\n"));
	/* no trailing blanks anywhere */
	assert_null(strstr(out, " \n"));
	free(out);
	summary_free(s);
	pt_trace_free(t);
}

static void test_operator_detail_and_cut_names(void **state)
{
	(void)state;
	struct pt_trace *t = sample_trace();
	struct pt_summary *s = sample_summary(t);
	struct pt_report_opts o;
	pt_report_opts_init(&o);
	o.op_detail = 1;
	char *out = capture(0, t, s, &o);
	if (getenv("PT_REPORT_SHOW")) /* eyeball the layout */
		fputs(out, stderr);
	const char *op = strstr(out, "Operator Summary");
	assert_non_null(op);
	assert_non_null(strstr(op, "Thread: All threads merged"));
	/* tree: conv2d (50 ms) first, its inner op indented, the kernel under it with dashes */
	const char *a = strstr(op, "\nconv2d   ");
	const char *b = strstr(op, "\n  conv2d::compute   ");
	const char *c = strstr(op, "\n    implicit_gemm_kernel    ");
	const char *d = strstr(op, "\nmatmul   ");
	assert_true(a && b && c && d && a < b && b < c && c < d);
	const char *kline = c + 1;
	assert_true(strstr(kline, "- / - / - / - / -") < strchr(kline, '\n'));
	/* a child's ratio is of its parent: compute 40 of conv2d's 50 = 80% */
	assert_true(strstr(b, "40.00 / 4.00 / 8.00 / 1.00 / 80.00") < strchr(b + 1, '\n'));
	/* Kernel Summary cuts at 90 columns with "..." */
	const char *ks = strstr(out, "Kernel Summary");
	const char *longk = strstr(ks, "\nvoid very_long");
	assert_non_null(longk);
	assert_memory_equal(longk + 1 + 87, "...", 3);
	assert_int_equal(longk[1 + 90], ' ');
	/* --width narrows the name column */
	o.width = 20;
	free(out);
	out = capture(0, t, s, &o);
	assert_non_null(strstr(out, "\n  conv2d::compute   "));
	assert_non_null(strstr(out, "\nvoid very_long_te...  "));
	free(out);
	summary_free(s);
	pt_trace_free(t);
}

static void test_hostile_names_escaped(void **state)
{
	(void)state;
	struct pt_trace *t = sample_trace();
	struct pt_summary *s = sample_summary(t);
	const char evil[] = "evil\x1b]0;pwned\x07\x1b[31mred\xc2\x9b\x7f\xff end\"q\\";
	s->operators.rows[0].name_id = pt_trace_intern(t, evil, sizeof evil - 1);
	s->user_defined.rows[0].name_id = s->operators.rows[0].name_id;
	pt_trace_set_source(t, "dir/\x1b[2Jtrace.json");
	char *out = capture(0, t, s, NULL);
	for (const unsigned char *p = (const unsigned char *)out; *p; p++) {
		if ((*p < 0x20 && *p != '\n') || *p == 0x7f)
			fail_msg("raw control byte 0x%02x in the text report", *p);
		if (p[0] == 0xc2 && p[1] == 0x9b)
			fail_msg("raw C1 CSI in the text report");
		if (*p == 0xff)
			fail_msg("invalid UTF-8 passed through");
	}
	assert_non_null(strstr(out, "evil\\e]0;pwned\\x07\\e[31mred"));
	free(out);
	out = capture(1, t, s, NULL);
	cJSON *j = cJSON_Parse(out);
	assert_non_null(j);
	cJSON *ops = cJSON_GetObjectItemCaseSensitive(j, "operators");
	int found = 0;
	cJSON *r;
	cJSON_ArrayForEach(r, ops)
	{
		const char *n = cJSON_GetObjectItemCaseSensitive(r, "name")->valuestring;
		if (!strncmp(n, "evil\x1b]0;pwned\x07", 12)) {
			found = 1;
			assert_non_null(strstr(n, "\\xff")); /* 0xff -> the text \xff */
			assert_non_null(strstr(n, "end\"q\\"));
		}
	}
	assert_true(found);
	/* the JSON text itself holds no raw control characters */
	for (const unsigned char *p = (const unsigned char *)out; *p; p++)
		assert_false(*p < 0x20 && *p != '\n');
	cJSON_Delete(j);
	free(out);
	summary_free(s);
	pt_trace_free(t);
}

static const char *const row_keys[] = {
	"name",         "calls",        "cpu_total_ms", "cpu_self_ms", "cpu_avg_ms",
	"cpu_max_ms",   "cpu_min_ms",   "cpu_ratio_pct", "gpu_total_ms", "gpu_avg_ms",
	"gpu_max_ms",   "gpu_min_ms",   "gpu_ratio_pct",
};

static void check_schema(cJSON *j)
{
	const char *top[] = {"schema",       "source",       "events",      "events_seen",
			     "span_ms",      "steps",        "rank",        "world_size",
			     "model_summary", "perf_summary", "operators",  "kernels",
			     "user_defined", "memory",       "op_detail",   "overview",
			     "distributed",  "device",       "steps_detail", "warnings",
			     "events_dropped"};
	for (size_t i = 0; i < sizeof top / sizeof top[0]; i++)
		if (!cJSON_HasObjectItem(j, top[i]))
			fail_msg("missing key %s", top[i]);
	assert_string_equal(cJSON_GetObjectItem(j, "schema")->valuestring, "proftop.report/2");
	cJSON *ms = cJSON_GetObjectItem(j, "model_summary");
	const char *names[] = {"ProfileStep", "Dataloader", "Forward", "Backward", "Optimization",
			       "Others"};
	assert_int_equal(cJSON_GetArraySize(ms), 6);
	for (int i = 0; i < 6; i++) {
		cJSON *r = cJSON_GetArrayItem(ms, i);
		assert_string_equal(cJSON_GetObjectItem(r, "name")->valuestring, names[i]);
		for (size_t k = 1; k < sizeof row_keys / sizeof row_keys[0]; k++)
			if (strcmp(row_keys[k], "cpu_self_ms") && !cJSON_HasObjectItem(r, row_keys[k]))
				fail_msg("model row lacks %s", row_keys[k]);
	}
	const char *tables[] = {"operators", "kernels", "user_defined", "memory"};
	for (size_t i = 0; i < 4; i++) {
		cJSON *r;
		cJSON_ArrayForEach(r, cJSON_GetObjectItem(j, tables[i]))
		{
			for (size_t k = 0; k < sizeof row_keys / sizeof row_keys[0]; k++)
				if (!cJSON_HasObjectItem(r, row_keys[k]))
					fail_msg("%s row lacks %s", tables[i], row_keys[k]);
		}
	}
	cJSON *perf = cJSON_GetObjectItem(j, "perf_summary");
	const char *pk[] = {"reader_ratio_pct", "reader_cost_ms", "batch_cost_ms", "ips",
			    "ips_unit"};
	for (size_t i = 0; i < 5; i++)
		assert_true(cJSON_HasObjectItem(perf, pk[i]));
	cJSON *d = cJSON_GetObjectItem(j, "distributed");
	const char *dk[] = {"step_ms",          "communication_ms", "computation_ms",
			    "overlap_ms",       "communication_pct", "computation_pct",
			    "overlap_pct",      "from_host_calls", "communication_overlapped_pct",
			    "within_steps",     "msprof_overlap_analysis"};
	for (size_t i = 0; i < sizeof dk / sizeof dk[0]; i++)
		assert_true(cJSON_HasObjectItem(d, dk[i]));
}

/* The summary a closing screen prints: every line within the width asked
 * for, the steps and the costliest operators there, names escaped. */
static void test_brief_fits(void **state)
{
	(void)state;
	struct pt_trace *t = sample_trace();
	struct pt_summary *s = sample_summary(t);
	const char evil[] = "evil\x1b]0;pwned\x07 name that is long enough to be cut somewhere here";
	s->operators.rows[0].name_id = pt_trace_intern(t, evil, sizeof evil - 1);
	for (int cols = 50; cols <= 130; cols += 40) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		assert_int_equal(pt_report_brief(f, t, s, NULL, cols), 0);
		fclose(f);
		assert_non_null(strstr(buf, "Summary: "));
		assert_non_null(strstr(buf, "Costliest operators (CPU total):"));
		assert_non_null(strstr(buf, "evil\\e]0;pwned"));
		for (const char *l = buf; *l;) {
			const char *e = strchr(l, '\n');
			size_t n = e ? (size_t)(e - l) : strlen(l);
			if (n > (size_t)cols)
				fail_msg("line of %zu bytes at %d columns: %.*s", n, cols, (int)n, l);
			for (size_t i = 0; i < n; i++)
				if ((unsigned char)l[i] < 0x20)
					fail_msg("raw control byte in the brief summary");
			l = e ? e + 1 : l + n;
		}
		free(buf);
	}
	summary_free(s);
	pt_trace_free(t);
}

static void test_json_schema(void **state)
{
	(void)state;
	struct pt_trace *t = sample_trace();
	t->rank = 3;
	t->world_size = 8;
	t->warnings[PT_WARN_BAD_EVENT] = 2;
	struct pt_summary *s = sample_summary(t);
	char *out = capture(1, t, s, NULL);
	cJSON *j = cJSON_Parse(out);
	if (!j)
		fail_msg("invalid JSON:\n%s", out);
	check_schema(j);
	assert_int_equal(cJSON_GetObjectItem(j, "rank")->valueint, 3);
	assert_int_equal(cJSON_GetObjectItem(j, "world_size")->valueint, 8);
	assert_int_equal(cJSON_GetObjectItem(j, "steps")->valueint, 2);
	assert_float_equal(cJSON_GetObjectItem(j, "span_ms")->valuedouble, 300, 1e-9);
	cJSON *step = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "model_summary"), 0);
	assert_float_equal(cJSON_GetObjectItem(step, "cpu_total_ms")->valuedouble, 293.39, 1e-9);
	assert_float_equal(cJSON_GetObjectItem(step, "cpu_ratio_pct")->valuedouble, 100, 1e-9);
	cJSON *dl = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "model_summary"), 1);
	assert_float_equal(cJSON_GetObjectItem(dl, "gpu_min_ms")->valuedouble, 0, 0);
	assert_float_equal(cJSON_GetObjectItem(dl, "gpu_total_ms")->valuedouble, 0, 0);
	cJSON *others = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "model_summary"), 5);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(others, "calls")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(others, "cpu_avg_ms")));
	assert_float_equal(cJSON_GetObjectItem(others, "cpu_total_ms")->valuedouble, 44.03, 1e-9);
	cJSON *perf = cJSON_GetObjectItem(j, "perf_summary");
	assert_float_equal(cJSON_GetObjectItem(perf, "reader_ratio_pct")->valuedouble, 38.304, 1e-9);
	assert_float_equal(
		cJSON_GetObjectItem(cJSON_GetObjectItem(perf, "reader_cost_ms"), "avg")->valuedouble,
		12.36, 1e-9);
	assert_string_equal(cJSON_GetObjectItem(perf, "ips_unit")->valuestring, "steps/s");
	cJSON *ov = cJSON_GetObjectItem(j, "overview");
	assert_int_equal(cJSON_GetArraySize(ov), 4);
	assert_true(cJSON_HasObjectItem(cJSON_GetObjectItem(ov, "Kernel"), "gpu_ms"));
	assert_true(cJSON_HasObjectItem(cJSON_GetObjectItem(ov, "CudaRuntime"), "cpu_ms"));
	cJSON *det = cJSON_GetObjectItem(j, "op_detail");
	assert_int_equal(cJSON_GetArraySize(det), 5);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(det, 2), "depth")->valueint, 2);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(det, 2), "kind")->valuestring,
			    "Kernel");
	cJSON *sd = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "steps_detail"), 1);
	assert_int_equal(cJSON_GetObjectItem(sd, "number")->valueint, 6);
	assert_float_equal(cJSON_GetObjectItem(sd, "start_ms")->valuedouble, 31.56, 1e-9);
	assert_float_equal(cJSON_GetObjectItem(sd, "reader_cost_ms")->valuedouble, 12.77, 1e-9);
	assert_int_equal(
		cJSON_GetObjectItem(cJSON_GetObjectItem(j, "warnings"), "bad_event")->valueint, 2);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "warnings")), 1);
	cJSON_Delete(j);
	free(out);
	summary_free(s);
	pt_trace_free(t);
}

static const char *op_name(cJSON *j, int i)
{
	cJSON *r = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "operators"), i);
	return r ? cJSON_GetObjectItem(r, "name")->valuestring : "(none)";
}

static void test_sort_keys_and_top(void **state)
{
	(void)state;
	struct pt_trace *t = sample_trace();
	struct pt_summary *s = sample_summary(t);
	struct pt_report_opts o;
	pt_report_opts_init(&o);
	/* conv2d: total 50 avg 5 max 9 calls 10 gpu 8; relu: 20, 0.5, 1, 40, 1;
	   matmul: 30, 15, 20, 2, 4 */
	struct {
		enum pt_sort_key key;
		const char *order[3];
	} cases[] = {
		{PT_SORT_TOTAL, {"conv2d", "matmul", "relu"}},
		{PT_SORT_AVG, {"matmul", "conv2d", "relu"}},
		{PT_SORT_MAX, {"matmul", "conv2d", "relu"}},
		{PT_SORT_CALLS, {"relu", "conv2d", "matmul"}},
		{PT_SORT_GPU, {"conv2d", "matmul", "relu"}},
		{PT_SORT_NAME, {"conv2d", "matmul", "relu"}},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		o.sort = cases[c].key;
		char *out = capture(1, t, s, &o);
		cJSON *j = cJSON_Parse(out);
		assert_non_null(j);
		for (int i = 0; i < 3; i++)
			if (strcmp(op_name(j, i), cases[c].order[i]))
				fail_msg("sort %d: row %d is %s, want %s", (int)cases[c].key, i,
					 op_name(j, i), cases[c].order[i]);
		cJSON_Delete(j);
		free(out);
	}
	o.sort = PT_SORT_TOTAL;
	o.top = 2;
	char *out = capture(1, t, s, &o);
	cJSON *j = cJSON_Parse(out);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "operators")), 2);
	/* --top on the tree counts top-level ops and keeps their subtrees */
	o.top = 1;
	cJSON_Delete(j);
	free(out);
	out = capture(1, t, s, &o);
	j = cJSON_Parse(out);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "op_detail")), 3);
	cJSON_Delete(j);
	free(out);
	/* the summary itself is left alone */
	assert_string_equal(pt_trace_str(t, s->operators.rows[1].name_id), "relu");
	summary_free(s);
	pt_trace_free(t);
}

static void test_table_sort_stable_and_tree(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(64 << 20);
	/* ties on the key are ordered by name; equal names keep their order */
	struct pt_row rows[4] = {
		host_row(t, "b", 1, 100, 100, 100, 0), host_row(t, "a", 1, 100, 100, 100, 0),
		host_row(t, "c", 1, 300, 300, 300, 0), host_row(t, "a", 2, 100, 60, 40, 0),
	};
	struct pt_table tb = {0};
	table_set(&tb, rows, 4);
	pt_table_sort(&tb, PT_SORT_TOTAL, t);
	assert_string_equal(pt_trace_str(t, tb.rows[0].name_id), "c");
	assert_string_equal(pt_trace_str(t, tb.rows[1].name_id), "a");
	assert_int_equal(tb.rows[1].cpu.n, 1);
	assert_int_equal(tb.rows[2].cpu.n, 2);
	assert_string_equal(pt_trace_str(t, tb.rows[3].name_id), "b");
	free(tb.rows);

	/* a tree: children stay under their parent, parents remapped */
	struct pt_row tr[5] = {
		host_row(t, "small", 1, 10, 10, 10, 0), host_row(t, "small.x", 1, 1, 1, 1, 0),
		host_row(t, "big", 1, 90, 90, 90, 0),   host_row(t, "big.lo", 1, 5, 5, 5, 0),
		host_row(t, "big.hi", 1, 50, 50, 50, 0),
	};
	tr[1].depth = 1, tr[1].parent = 0;
	tr[3].depth = 1, tr[3].parent = 2;
	tr[4].depth = 1, tr[4].parent = 2;
	table_set(&tb, tr, 5);
	pt_table_sort(&tb, PT_SORT_TOTAL, t);
	const char *want[5] = {"big", "big.hi", "big.lo", "small", "small.x"};
	uint32_t want_parent[5] = {UINT32_MAX, 0, 0, UINT32_MAX, 3};
	for (int i = 0; i < 5; i++) {
		assert_string_equal(pt_trace_str(t, tb.rows[i].name_id), want[i]);
		assert_int_equal(tb.rows[i].parent, want_parent[i]);
	}
	free(tb.rows);
	pt_trace_free(t);
}

static void test_empty_summary(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(64 << 20);
	struct pt_summary *s = pt_xcalloc(1, sizeof *s);
	for (int r = 0; r < PT_MS__COUNT; r++) {
		s->model[r].cpu.min_ns = UINT64_MAX;
		s->model[r].gpu.min_ns = UINT64_MAX;
	}
	s->perf.reader.min_ns = UINT64_MAX;
	s->perf.batch.min_ns = UINT64_MAX;
	char *out = capture(0, t, s, NULL);
	assert_non_null(strstr(out, "Model Summary: no steps found"));
	assert_non_null(strstr(out, "Perf Summary: no steps found"));
	assert_non_null(strstr(out, "Device Summary: no GPU activity found"));
	assert_non_null(strstr(out, "no steps"));
	assert_null(strstr(out, "Overview Summary"));
	assert_null(strstr(out, "nan"));
	free(out);
	out = capture(1, t, s, NULL);
	cJSON *j = cJSON_Parse(out);
	if (!j)
		fail_msg("invalid JSON:\n%s", out);
	check_schema(j);
	assert_null(strstr(out, "nan"));
	assert_null(strstr(out, "inf"));
	assert_null(strstr(out, "18446744073709")); /* UINT64_MAX as a minimum */
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "rank")));
	cJSON *ms = cJSON_GetObjectItem(j, "model_summary");
	cJSON *r;
	cJSON_ArrayForEach(r, ms)
	{
		/* no steps: nothing of the Model Summary applies (null, not 0) */
		assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "calls")));
		assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "cpu_min_ms")));
		assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "cpu_ratio_pct")));
	}
	cJSON *perf = cJSON_GetObjectItem(j, "perf_summary");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(perf, "reader_ratio_pct")));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "operators")), 0);
	assert_int_equal(cJSON_GetObjectItem(j, "events_dropped")->valueint, 0);
	cJSON_Delete(j);
	free(out);
	free(s);
	pt_trace_free(t);
}

static void test_dropped_header(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	uint32_t h = tu_track(t, 1, 1, -1);
	for (int i = 0; i < 100000; i++)
		tu_ev(t, h, PT_KIND_OPERATOR, "op", i * 10.0, 5, 0);
	assert_true(pt_store_dropped(t->store) > 0);
	struct pt_summary *s = pt_xcalloc(1, sizeof *s);
	char *out = capture(0, t, s, NULL);
	assert_non_null(strstr(out, "dropped the "));
	assert_non_null(strstr(out, "complete only from "));
	free(out);
	out = capture(1, t, s, NULL);
	cJSON *j = cJSON_Parse(out);
	assert_non_null(j);
	assert_true(cJSON_GetObjectItem(j, "events_dropped")->valuedouble > 0);
	assert_true(cJSON_HasObjectItem(cJSON_GetObjectItem(j, "warnings"), "dropped_by_memory_cap"));
	cJSON_Delete(j);
	free(out);
	free(s);
	pt_trace_free(t);
}

/* instant marks "proftop: ..." are the source's notes: once each, in the
 * text header, the JSON "notes" and escaped like every name */
static void test_notes(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	uint32_t h = tu_track(t, 1, 1, -1);
	tu_ev(t, h, PT_KIND_INSTANT, "proftop: steps are optimizer steps", 1.0, 0, 0);
	tu_ev(t, h, PT_KIND_INSTANT, "proftop: steps are optimizer steps", 2.0, 0, 0);
	tu_ev(t, h, PT_KIND_INSTANT, "proftop: \033]0;owned\007 bell", 3.0, 0, 0);
	tu_ev(t, h, PT_KIND_INSTANT, "not a note", 4.0, 0, 0);
	tu_ev(t, h, PT_KIND_INSTANT, "proftop: ", 5.0, 0, 0); /* empty: not a note */
	tu_ev(t, h, PT_KIND_USER_DEFINED, "proftop: a range, not a mark", 6.0, 1, 0);
	pt_trace_note(t, "added by a command");
	assert_int_equal(t->nnotes, 3);
	assert_string_equal(pt_trace_note_text(t, 0), "steps are optimizer steps");
	assert_string_equal(pt_trace_note_text(t, 2), "added by a command");
	for (int i = 0; i < 40; i++) {
		char n[64];
		snprintf(n, sizeof n, "proftop: note %d", i);
		tu_ev(t, h, PT_KIND_INSTANT, n, 10.0 + i, 0, 0);
	}
	assert_int_equal(t->nnotes, PT_TRACE_MAX_NOTES);
	assert_int_equal(t->notes_dropped, 40 - (PT_TRACE_MAX_NOTES - 3));
	struct pt_summary *s = pt_xcalloc(1, sizeof *s);
	char *out = capture(0, t, s, NULL);
	assert_non_null(strstr(out, "\nNote: steps are optimizer steps\n"));
	assert_null(strstr(out, "\033"));
	assert_null(strstr(out, "\007"));
	assert_non_null(strstr(out, "further notes of the source not shown"));
	free(out);
	out = capture(1, t, s, NULL);
	cJSON *j = cJSON_Parse(out);
	assert_non_null(j);
	cJSON *notes = cJSON_GetObjectItem(j, "notes");
	assert_true(cJSON_IsArray(notes));
	assert_int_equal(cJSON_GetArraySize(notes), PT_TRACE_MAX_NOTES);
	assert_string_equal(cJSON_GetArrayItem(notes, 0)->valuestring, "steps are optimizer steps");
	assert_string_equal(cJSON_GetArrayItem(notes, 1)->valuestring, "\033]0;owned\007 bell");
	cJSON_Delete(j);
	free(out);
	free(s);
	pt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perf_summary_exact),
		cmocka_unit_test(test_model_summary_layout),
		cmocka_unit_test(test_operator_detail_and_cut_names),
		cmocka_unit_test(test_hostile_names_escaped),
		cmocka_unit_test(test_json_schema),
		cmocka_unit_test(test_sort_keys_and_top),
		cmocka_unit_test(test_table_sort_stable_and_tree),
		cmocka_unit_test(test_empty_summary),
		cmocka_unit_test(test_dropped_header),
		cmocka_unit_test(test_notes),
		cmocka_unit_test(test_brief_fits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
