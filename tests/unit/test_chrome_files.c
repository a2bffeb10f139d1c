/*
 * test_chrome_files.c - the Chrome-trace reader on files: every fixture
 * under fixtures/bad and fixtures/dialects, open errors, and every real
 * trace under the shared traces directory (fixtures/traces, or PT_TRACES;
 * skipped when absent), the same with 1 and 4 threads.
 */
#include "chrome_util.h"

/* ---- fixtures ---- */

struct bad_case {
	const char *file;
	int rc;
	long offset;	 /* -1: do not check */
	const char *msg; /* substring of the error */
	uint64_t events;
	int warn; /* -1: none expected */
	uint64_t nwarn;
};

static const struct bad_case bad_cases[] = {
    {"empty.json", PT_EFORMAT, 0, "empty file", 0, -1, 0},
    {"whitespace_only.json", PT_EFORMAT, 4, "empty file", 0, -1, 0},
    {"truncated_object_form.json", PT_ETRUNC, 152, "unexpected end", 2, -1, 0},
    {"truncated_in_event.json", PT_ETRUNC, 104, "inside an event object", 1, -1, 0},
    {"truncated_key.json", PT_ETRUNC, 95, "unexpected end", 1, -1, 0},
    {"missing_colon.json", PT_EFORMAT, 22, "expected ':'", 0, -1, 0},
    {"top_missing_colon.json", PT_EFORMAT, 15, "expected ':'", 0, -1, 0},
    {"missing_comma.json", PT_EFORMAT, 69, "expected ',' or ']'", 1, -1, 0},
    {"trailing_garbage.json", PT_EFORMAT, 86, "unexpected data", 1, -1, 0},
    {"bad_escape.json", PT_EFORMAT, 20, "invalid escape", 0, -1, 0},
    {"mismatched_bracket.json", PT_EFORMAT, 69, "expected ',' or ']'", 0, -1, 0},
    {"bad_literal.json", PT_EFORMAT, 65, "expected a value", 0, -1, 0},
    {"not_a_trace.json", PT_EFORMAT, 0, "not a Chrome trace (no traceEvents array)", 0, -1, 0},
    {"scalar.json", PT_EFORMAT, 0, "not a Chrome trace", 0, -1, 0},
    {"not_json.txt", PT_EFORMAT, 0, "not a Chrome trace", 0, -1, 0},
    {"corrupt.json.gz", PT_EFORMAT, 0, "corrupt gzip", 0, -1, 0},
    {"truncated.json.gz", PT_ETRUNC, -1, "gzip", 0, -1, 0},
    {"deep_unclosed.json", PT_ETRUNC, 100065, "inside an event object", 0, -1, 0},
    {"deep_unclosed_top.json", PT_ETRUNC, 100009, "unexpected end", 0, -1, 0},
    {"bad_types.json", 0, -1, NULL, 1, PT_WARN_BAD_EVENT, 4},
    {"missing_fields.json", 0, -1, NULL, 1, PT_WARN_BAD_EVENT, 3},
    {"unknown_phase.json", 0, -1, NULL, 1, PT_WARN_UNKNOWN_PHASE, 3},
    {"e_without_b.json", 0, -1, NULL, 1, PT_WARN_E_WITHOUT_B, 1},
    {"unclosed_b.json", 0, -1, NULL, 1, PT_WARN_UNCLOSED_B, 1},
    {"negative_dur.json", 0, -1, NULL, 0, PT_WARN_NEGATIVE_DUR, 2},
    {"huge_dur.json", 0, -1, NULL, 1, PT_WARN_HUGE_DUR, 2},
    {"bad_ts.json", 0, -1, NULL, 1, PT_WARN_BAD_TS, 3},
    {"nonfinite.json", 0, -1, NULL, 1, PT_WARN_NONFINITE, 4},
    {"deep_nesting.json", 0, -1, NULL, 1, -1, 0},
    {"bad_utf8.json", 0, -1, NULL, 4, PT_WARN_BAD_UTF8, 1},
    {"long_name.json", 0, -1, NULL, 1, -1, 0},
    {"bare_no_close.json", 0, -1, NULL, 2, -1, 0},
    {"non_object_elements.json", 0, -1, NULL, 1, PT_WARN_BAD_EVENT, 4},
};

static void test_bad_fixtures(void **state)
{
	(void)state;
	size_t ncase = sizeof bad_cases / sizeof bad_cases[0];
	for (size_t i = 0; i < ncase; i++) {
		const struct bad_case *c = &bad_cases[i];
		for (int th = 1; th <= 2; th++) {
			struct pt_trace *t = pt_trace_new(0);
			struct pt_read_opts o = {.threads = th};
			char err[512] = "";
			char pbuf[1024];
			const char *path = jpath(pbuf, tu_fixtures(), "bad", c->file);
			int rc = pt_chrome_read(t, path, &o, err, sizeof err);
			if (rc != c->rc)
				fail_msg("%s: rc %d, want %d (%s)", c->file, rc, c->rc, err);
			if (c->rc) {
				char want[1200];
				if (c->offset >= 0) {
					snprintf(want, sizeof want, "%s: byte %ld: ", path,
						 c->offset);
					if (strncmp(err, want, strlen(want)) != 0)
						fail_msg("%s: got '%s', want prefix '%s'", c->file,
							 err, want);
				}
				if (!strstr(err, c->msg))
					fail_msg("%s: '%s' lacks '%s'", c->file, err, c->msg);
				assert_null(strchr(err, '\n'));
			} else {
				assert_string_equal(err, "");
			}
			if (t->events_seen != c->events)
				fail_msg("%s: %llu events, want %llu", c->file,
					 (unsigned long long)t->events_seen,
					 (unsigned long long)c->events);
			if (c->rc == 0) {
				uint64_t want_total = c->warn >= 0 ? c->nwarn : 0;
				if (c->warn >= 0)
					assert_int_equal(t->warnings[c->warn], c->nwarn);
				if (pt_trace_warn_total(t) != want_total)
					fail_msg("%s: %llu warnings, want %llu", c->file,
						 (unsigned long long)pt_trace_warn_total(t),
						 (unsigned long long)want_total);
			}
			pt_trace_free(t);
		}
	}
	/* every fixture in the folder has a case */
	char dbuf[1024];
	DIR *d = opendir(jpath(dbuf, tu_fixtures(), "bad", NULL));
	assert_non_null(d);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		int found = 0;
		for (size_t i = 0; i < ncase; i++)
			found |= !strcmp(de->d_name, bad_cases[i].file);
		if (!found)
			fail_msg("fixtures/bad/%s has no test case", de->d_name);
	}
	closedir(d);
}

static void test_open_errors(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(0);
	char err[256];
	assert_int_equal(pt_chrome_read(t, "fixtures/no/such.json", NULL, err, sizeof err),
			 PT_ENOENT);
	assert_string_equal(err, "fixtures/no/such.json: No such file or directory");
	char dbuf[1024];
	const char *dir = jpath(dbuf, tu_fixtures(), "bad", NULL);
	assert_int_equal(pt_chrome_read(t, dir, NULL, err, sizeof err), PT_EIO);
	assert_non_null(strstr(err, "is a directory"));
	pt_trace_free(t);
}

static struct pt_trace *load_file(const char *path, int threads)
{
	struct pt_trace *t = pt_trace_new(0);
	struct pt_read_opts o = {.threads = threads};
	char err[512] = "";
	int rc = pt_chrome_read(t, path, &o, err, sizeof err);
	if (rc)
		fail_msg("%s", err);
	return t;
}

static const struct pt_track *track_named(struct pt_trace *t, const char *pid_str, int64_t pid,
					  int64_t tid)
{
	for (uint32_t i = 0; i < t->ntracks; i++) {
		const struct pt_track *tr = &t->tracks[i];
		if (pid_str
			? (tr->key.pid_str && !strcmp(pt_trace_str(t, tr->key.pid_str), pid_str))
			: tr->key.pid == pid)
			if (tr->key.tid == tid)
				return tr;
	}
	fail_msg("no track %s/%lld/%lld", pid_str ? pid_str : "-", (long long)pid, (long long)tid);
	return NULL;
}

static void test_dialects(void **state)
{
	(void)state;
	char pb[1024];
	const char *fx = tu_fixtures();
#define DIALECT(n) jpath(pb, fx, "dialects", n)
	/* proftop's own export */
	struct pt_trace *t = load_file(DIALECT("proftop_export.json"), 1);
	assert_int_equal(t->events_seen, 9);
	assert_int_equal(count_kind(t, PT_KIND_PROFILE_STEP, NULL), 1);
	assert_int_equal(count_kind(t, PT_KIND_DATALOADER, NULL), 1);
	assert_int_equal(count_kind(t, PT_KIND_FORWARD, NULL), 1);
	assert_int_equal(count_kind(t, PT_KIND_BACKWARD, NULL), 1);
	assert_int_equal(count_kind(t, PT_KIND_OPTIMIZATION, NULL), 1);
	assert_int_equal(count_kind(t, PT_KIND_CUDA_RUNTIME, NULL), 1);
	assert_int_equal(count_kind(t, PT_KIND_MEMCPY, NULL), 1);
	assert_int_equal(t->display_unit, 1);
	const struct pt_track *g = track_named(t, NULL, 1000000, 7);
	assert_int_equal(g->device, 0);
	assert_int_equal(g->stream, 7);
	struct pt_event ev[4];
	uint32_t hid = find_track(t, 4242, 4243);
	assert_int_equal(track_events(t, hid, ev, 4), 4);
	assert_int_equal(ev[0].kind, PT_KIND_PROFILE_STEP);
	assert_int_equal(ev[0].arg, 32);
	assert_int_equal(ev[0].dur_ns, 900500);
	assert_int_equal(track_events(t, (uint32_t)(g - t->tracks), ev, 4), 2);
	assert_int_equal(ev[0].corr, 7);
	assert_int_equal(ev[0].start_ns, 1130001);
	assert_int_equal(ev[1].arg, 4096);
	assert_int_equal(pt_trace_warn_total(t), 0);
	pt_trace_free(t);

	/* PyTorch legacy autograd export */
	t = load_file(DIALECT("pytorch_legacy.json"), 1);
	assert_int_equal(t->events_seen, 4);
	assert_int_equal(count_kind(t, PT_KIND_OPERATOR, NULL), 3);
	assert_int_equal(count_kind(t, PT_KIND_KERNEL, NULL), 1);
	const struct pt_track *cpu = track_named(t, "CPU functions", 0, 1);
	const struct pt_track *cuda = track_named(t, "CUDA functions", 0, 0);
	assert_int_equal(cpu->device, -1);
	assert_int_equal(cuda->device, 0);
	assert_int_equal(track_events(t, (uint32_t)(cuda - t->tracks), ev, 4), 1);
	assert_int_equal(ev[0].flags & PT_EVF_FLOW_DST, PT_EVF_FLOW_DST);
	uint32_t corr = ev[0].corr;
	assert_int_equal(track_events(t, (uint32_t)(cpu - t->tracks), ev, 4), 3);
	assert_string_equal(ename(t, &ev[1]), "aten::addmm"); /* the enclosing slice */
	assert_int_equal(ev[1].corr, corr);
	assert_int_equal(pt_trace_warn_total(t), 0);
	pt_trace_free(t);

	/* Paddle */
	t = load_file(DIALECT("paddle.json"), 1);
	assert_int_equal(t->events_seen, 13);
	assert_int_equal(count_kind(t, PT_KIND_PROFILE_STEP, "ProfileStep#3"), 1);
	assert_int_equal(count_kind(t, PT_KIND_OPERATOR, "conv2d"), 1);
	assert_int_equal(count_kind(t, PT_KIND_OPERATOR_INNER, "conv2d::"), 2);
	assert_int_equal(count_kind(t, PT_KIND_MEMCPY, NULL), 2);
	assert_int_equal(count_kind(t, PT_KIND_USER_DEFINED, NULL), 1);
	assert_int_equal(t->tracks[find_track(t, 11, 12)].device, -1); /* host memcpy */
	assert_int_equal(t->tracks[find_track(t, 0, 13)].device, 0);
	assert_int_equal(track_events(t, find_track(t, 11, 12), ev, 1), 1);
	assert_int_equal(ev[0].arg, 64); /* num_samples */
	pt_trace_free(t);

	/* MindSpore GPU timeline */
	t = load_file(DIALECT("mindspore_gpu.json"), 1);
	assert_int_equal(count_kind(t, PT_KIND_OPERATOR, NULL), 1);
	assert_int_equal(count_kind(t, PT_KIND_KERNEL, NULL), 1);
	assert_int_equal(track_named(t, NULL, 0, 17)->device, 0);
	pt_trace_free(t);

	/* msprof */
	t = load_file(DIALECT("msprof.json"), 1);
	assert_int_equal(t->events_seen, 13);
	assert_int_equal(count_kind(t, PT_KIND_CUDA_RUNTIME, NULL), 1);
	assert_int_equal(count_kind(t, PT_KIND_KERNEL, NULL), 1);
	/* NOTIFY_WAIT on the hardware stream and the HCCL collective; the
	 * HCCL plane's copy of the wait (Notify_Wait) is timeline only */
	assert_int_equal(count_kind(t, PT_KIND_COMMUNICATION, NULL), 2);
	assert_int_equal(count_kind(t, PT_KIND_COMMUNICATION, "NOTIFY_WAIT"), 1);
	assert_int_equal(count_kind(t, PT_KIND_OTHER, "Notify_Wait"), 1);
	assert_int_equal(count_kind(t, PT_KIND_PROFILE_STEP, "Iteration 1"), 1);
	assert_int_equal(count_kind(t, PT_KIND_FORWARD, "FP_BP Time 1"), 1);
	assert_int_equal(count_kind(t, PT_KIND_OPTIMIZATION, "Iteration Refresh 1"), 1);
	const struct pt_track *hw = track_named(t, NULL, 3, 2);
	assert_int_equal(hw->device, 3);
	assert_int_equal(track_named(t, NULL, 3, 10036)->device, -1);
	/* the HCCL lane is no device of its own: its collective runs on NPU 3 */
	assert_int_equal(track_named(t, NULL, 1003611, 70000)->device, 3);
	assert_int_equal(track_events(t, (uint32_t)(hw - t->tracks), ev, 1), 1);
	assert_true(ev[0].corr >= 0x80000000u);
	assert_int_equal(track_events(t, find_track(t, 1003602, 16027), ev, 1), 1);
	assert_int_equal(ev[0].corr,
			 track_events(t, (uint32_t)(hw - t->tracks), ev + 1, 1) ? ev[1].corr : 0);
	assert_int_equal(pt_trace_warn_total(t), 0);
	pt_trace_free(t);
}

/* ---- the shared real traces ---- */

struct real_case {
	const char *file;
	uint64_t events;
	uint64_t steps; /* PROFILE_STEP events */
	uint64_t min_kernels;
	int64_t rank;
};

static const struct real_case real_cases[] = {
    {"hta/amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz", 115, 2, 10, -1},
    {"hta/call_stack__backward_thread.json", 7, 1, 1, 0},
    {"hta/cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", 18, 1, 0, 34},
    {"hta/trace_diff__control__control.json.gz", 74939, 6, 8000, 3},
    {"hta/ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", 45422, 5, 4000, 0},
    {"hta/distributed_info_unavailable__distributed_info_not_found.json.gz", 2467, 1, 0, -1},
    {"hta/mtia_trace_single_rank__mtia_rank_0.json.gz", 138377, 1, 0, 0},
    {"kineto_tb_plugin/samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz",
     57506, 6, 8000, -1},
    {"kineto_tb_plugin/samples__resnet50_num_workers_4__worker0.1623212756351.pt.trace.json.gz",
     52888, 6, 8000, -1},
    {"mindinsight/msprof_rank0/step_trace_0_2_1.json", 40, 10, 0, -1},
};

static void test_real_known(void **state)
{
	(void)state;
	struct stat st;
	if (stat(tu_traces(), &st) != 0)
		skip();
	for (size_t i = 0; i < sizeof real_cases / sizeof real_cases[0]; i++) {
		const struct real_case *c = &real_cases[i];
		char pb[1024];
		struct pt_trace *t = load_file(jpath(pb, tu_traces(), c->file, NULL), 0);
		if (t->events_seen != c->events)
			fail_msg("%s: %llu events, want %llu", c->file,
				 (unsigned long long)t->events_seen, (unsigned long long)c->events);
		uint64_t steps = count_kind(t, PT_KIND_PROFILE_STEP, NULL);
		if (steps != c->steps)
			fail_msg("%s: %llu steps, want %llu", c->file, (unsigned long long)steps,
				 (unsigned long long)c->steps);
		uint64_t k = count_kind(t, PT_KIND_KERNEL, NULL) +
			     count_kind(t, PT_KIND_COMMUNICATION, NULL);
		if (k < c->min_kernels)
			fail_msg("%s: %llu kernels", c->file, (unsigned long long)k);
		assert_int_equal(t->rank, c->rank);
		pt_trace_free(t);
	}
	/* ns display unit, and the reader-ratio trace's step names */
	char pb[1024];
	struct pt_trace *t = load_file(
	    jpath(pb, tu_traces(),
		  "hta/ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", NULL),
	    0);
	assert_int_equal(t->display_unit, 1);
	pt_trace_free(t);
	t = load_file(jpath(pb, tu_traces(),
			    "kineto_tb_plugin/"
			    "samples__resnet50_num_workers_0__worker0.1623143089861.pt."
			    "trace.json.gz",
			    NULL),
		      0);
	for (int s = 5; s <= 10; s++) {
		char name[32];
		snprintf(name, sizeof name, "ProfilerStep#%d", s);
		assert_int_equal(count_kind(t, PT_KIND_PROFILE_STEP, name), 1);
	}
	assert_true(count_kind(t, PT_KIND_KERNEL, NULL) > 8000);
	assert_int_equal(count_kind(t, PT_KIND_DATALOADER, NULL), 6);
	pt_trace_free(t);
}

static int is_trace_name(const char *n)
{
	size_t l = strlen(n);
	return (l > 5 && !strcmp(n + l - 5, ".json")) || (l > 8 && !strcmp(n + l - 8, ".json.gz"));
}

static void walk(const char *dir, int *loaded)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[1024];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		struct stat st;
		if (stat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			walk(path, loaded);
			continue;
		}
		if (!is_trace_name(de->d_name))
			continue;
		struct pt_trace *t = pt_trace_new(0);
		char err[512] = "";
		int rc = pt_chrome_read(t, path, NULL, err, sizeof err);
		if (strstr(de->d_name, "marey_graph")) {
			/* valid JSON, not a trace: fails cleanly */
			assert_int_equal(rc, PT_EFORMAT);
			assert_non_null(strstr(err, "not a Chrome trace (no traceEvents array)"));
		} else {
			if (rc)
				fail_msg("%s", err);
			if (t->events_seen == 0)
				fail_msg("%s: no events", path);
			if (t->warnings[PT_WARN_BAD_EVENT] || t->warnings[PT_WARN_UNKNOWN_PHASE])
				fail_msg("%s: unexpected warnings", path);
			(*loaded)++;
		}
		pt_trace_free(t);
	}
	closedir(d);
}

static void test_real_all(void **state)
{
	(void)state;
	struct stat st;
	if (stat(tu_traces(), &st) != 0)
		skip();
	int loaded = 0;
	walk(tu_traces(), &loaded);
	assert_true(loaded >= 30);
}

static void test_real_threads_identical(void **state)
{
	(void)state;
	char pb[1024];
	const char *f = jpath(pb, tu_traces(), "hta/nccl_parser_config__nccl_data.json.gz", NULL);
	struct stat st;
	if (stat(f, &st) != 0)
		skip();
	struct pt_trace *a = load_file(f, 1), *b = load_file(f, 4);
	same_traces(a, b);
	pt_trace_free(a);
	pt_trace_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bad_fixtures),
	    cmocka_unit_test(test_open_errors),
	    cmocka_unit_test(test_dialects),
	    cmocka_unit_test(test_real_known),
	    cmocka_unit_test(test_real_all),
	    cmocka_unit_test(test_real_threads_identical),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
