/*
 * test_export.c - the Chrome trace exporter: the format (X/i/C/M events,
 * flows from launch to kernel, exact µs timestamps, args, string pids,
 * otherData, hostile names as valid JSON), the round trip through the reader
 * (every event and label back as it was, the same JSON report), a step
 * window, refusing to overwrite without force, mode 0600, and failures
 * (missing directory, a write cut short by RLIMIT_FSIZE) that leave neither
 * OUT nor a temporary file behind.
 */
#include "testutil.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proftop/agg.h"
#include "proftop/chrome.h"
#include "proftop/error.h"
#include "proftop/report.h"
#include "model/util.h"

static char g_dir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(g_dir, "/tmp/pt_export_XXXXXX");
	return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	DIR *d = opendir(g_dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		unlink(tu_path(g_dir, e->d_name));
	}
	if (d)
		closedir(d);
	rmdir(g_dir);
	return 0;
}

/* Files in g_dir (names joined by spaces) - to spot leftover temporaries. */
static const char *dir_listing(void)
{
	static char buf[1024];
	buf[0] = 0;
	DIR *d = opendir(g_dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		strncat(buf, e->d_name, sizeof buf - strlen(buf) - 2);
		strcat(buf, " ");
	}
	if (d)
		closedir(d);
	return buf;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *p = pt_xmalloc((size_t)n + 1);
	assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
	p[n] = 0;
	fclose(f);
	return p;
}

static void add(struct pt_trace *t, uint32_t track, enum pt_kind kind, const char *name,
		uint64_t start_ns, uint64_t dur_ns, uint32_t corr, uint64_t arg, uint8_t flags)
{
	struct pt_event ev = {0};
	ev.start_ns = start_ns;
	ev.dur_ns = dur_ns;
	ev.name_id = pt_trace_intern(t, name, strlen(name));
	ev.track_id = track;
	ev.corr = corr;
	ev.arg = arg;
	ev.kind = (uint8_t)kind;
	ev.flags = flags;
	pt_trace_add(t, &ev);
}

#define HOSTILE "evil \"q\" \\ \x1b[31mred\x07\n\ttab \xe2\x80\xae rtl"

/* A training step on a host thread with its kernels on a GPU stream; base shifts the clock. */
static struct pt_trace *build_trace(uint64_t base)
{
	struct pt_trace *t = pt_trace_new(64 << 20);
	pt_trace_set_source(t, "built-in-test");
	struct pt_track_key hk = {100, 7, 0, 0};
	uint32_t h = pt_trace_track(t, &hk);
	pt_trace_set_thread_label(t, &hk, pt_trace_intern(t, "python main thread", 18));
	pt_trace_set_process_label(t, &hk, pt_trace_intern(t, "trainer", 7));
	uint32_t g = tu_track(t, 0, 7, 0); /* GPU 0 stream 7, no labels */
	struct pt_track_key sk = {100, 0, 0, pt_trace_intern(t, "Spans", 5)};
	uint32_t sp = pt_trace_track(t, &sk);

	add(t, h, PT_KIND_PROFILE_STEP, "ProfilerStep#3", base + 0, 1000001, 0, 32, 0);
	add(t, h, PT_KIND_DATALOADER, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
	    base + 10123, 189877, 0, 0, 0);
	add(t, h, PT_KIND_FORWARD, "## forward ##", base + 200000, 300000, 0, 0, 0);
	add(t, h, PT_KIND_OPERATOR, "aten::conv2d", base + 210001, 189999, 0, 0, 0);
	add(t, h, PT_KIND_OPERATOR_INNER, "conv2d::compute", base + 215000, 100000, 0, 0, 0);
	add(t, h, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", base + 220000, 10000, 11, 0, 0);
	add(t, h, PT_KIND_USER_DEFINED, HOSTILE, base + 401000, 5000, 0, 0, 0);
	add(t, h, PT_KIND_BACKWARD, "## backward ##", base + 500000, 300000, 0, 0, 0);
	add(t, h, PT_KIND_OPERATOR, "aten::mm", base + 510000, 100000, 0, 0, 0);
	add(t, h, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", base + 511000, 7000, 12, 0, 0);
	add(t, h, PT_KIND_CUDA_RUNTIME, "cudaMemcpyAsync", base + 620000, 9000, 13, 0, 0);
	add(t, h, PT_KIND_OPTIMIZATION, "Optimizer.step#SGD.step", base + 800000, 150000, 0, 0, 0);
	add(t, h, PT_KIND_PYTHON, "train.py(42): step", base + 800500, 1000, 0, 0, 0);

	add(t, g, PT_KIND_KERNEL, "void implicit_gemm<float>(Params)", base + 240000, 60000, 11, 0,
	    0);
	add(t, g, PT_KIND_KERNEL, "sgemm_128x64_nn", base + 520001, 80999, 12, 0, 0);
	add(t, g, PT_KIND_MEMCPY, "Memcpy DtoH (Device -> Pageable)", base + 640000, 1500, 13,
	    4096, 0);
	add(t, g, PT_KIND_MEMSET, "Memset (Device)", base + 650000, 500, 0, 256, 0);

	double v = 1234.5;
	uint64_t bits;
	memcpy(&bits, &v, sizeof bits);
	add(t, sp, PT_KIND_INSTANT, "[memory]", base + 300000, 0, 0, 0, PT_EVF_GLOBAL);
	add(t, sp, PT_KIND_INSTANT, "thread mark", base + 300500, 0, 0, 0, 0);
	add(t, sp, PT_KIND_COUNTER, "GPU memory", base + 310000, 0, 0, bits, 0);
	/* a GPU-lane copy of the step annotation is kept as Other (as the reader
	   makes it from Kineto's gpu_user_annotation): the kind must survive the
	   name rule on the way back */
	uint32_t ann = tu_track(t, 2, 0, -1);
	add(t, ann, PT_KIND_OTHER, "ProfilerStep#3", base + 100, 900000, 0, 0, 0);
	/* what the first load skipped travels in otherData */
	pt_trace_warn(t, PT_WARN_NEGATIVE_DUR, 3);
	pt_trace_warn(t, PT_WARN_STORE_DROPPED, 5);
	return t;
}

static cJSON *find_event(cJSON *events, const char *ph, const char *name)
{
	cJSON *e;
	cJSON_ArrayForEach(e, events)
	{
		cJSON *p = cJSON_GetObjectItem(e, "ph"), *n = cJSON_GetObjectItem(e, "name");
		if (p && n && !strcmp(p->valuestring, ph) && !strcmp(n->valuestring, name))
			return e;
	}
	return NULL;
}

static const char *meta_name(cJSON *events, const char *what, double pid, const char *tid_str,
			     double tid)
{
	cJSON *e;
	cJSON_ArrayForEach(e, events)
	{
		if (strcmp(cJSON_GetObjectItem(e, "ph")->valuestring, "M") ||
		    strcmp(cJSON_GetObjectItem(e, "name")->valuestring, what))
			continue;
		if (cJSON_GetObjectItem(e, "pid")->valuedouble != pid)
			continue;
		cJSON *ti = cJSON_GetObjectItem(e, "tid");
		if (!strcmp(what, "thread_name") &&
		    (tid_str ? !cJSON_IsString(ti) || strcmp(ti->valuestring, tid_str)
			     : !cJSON_IsNumber(ti) || ti->valuedouble != tid))
			continue;
		return cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "name")->valuestring;
	}
	return NULL;
}

static void test_export_format(void **state)
{
	(void)state;
	struct pt_trace *t = build_trace(1000);
	t->rank = 1;
	t->world_size = 2;
	t->warnings[PT_WARN_SOURCE_DROPPED] = 5;
	t->warnings[PT_WARN_BAD_EVENT] = 2;
	const char *out = tu_path(g_dir, "fmt.json");
	char err[256] = "";
	assert_int_equal(pt_chrome_export(t, out, NULL, err, sizeof err), 0);
	struct stat sb;
	assert_int_equal(stat(out, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	char *text = slurp(out);
	/* exact µs with 3-digit ns fractions, printed from integers */
	assert_non_null(strstr(text, "\"ts\":1.000,\"dur\":1000.001"));
	assert_non_null(strstr(text, "\"ts\":11.123,\"dur\":189.877"));
	cJSON *j = cJSON_Parse(text);
	if (!j)
		fail_msg("export is not valid JSON:\n%.2000s", text);
	assert_string_equal(cJSON_GetObjectItem(j, "displayTimeUnit")->valuestring, "ms");
	cJSON *od = cJSON_GetObjectItem(j, "otherData");
	assert_non_null(strstr(cJSON_GetObjectItem(od, "generator")->valuestring, "proftop "));
	assert_string_equal(cJSON_GetObjectItem(od, "source")->valuestring, "built-in-test");
	assert_int_equal(cJSON_GetObjectItem(od, "events_dropped")->valueint, 10); /* 5 by the source + 5 by the cap */
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(od, "warnings"), "bad_event")->valueint,
			 2);
	assert_int_equal(cJSON_GetObjectItem(od, "rank")->valueint, 1);
	assert_int_equal(cJSON_GetObjectItem(od, "world_size")->valueint, 2);
	cJSON *di = cJSON_GetObjectItem(j, "distributedInfo");
	assert_int_equal(cJSON_GetObjectItem(di, "rank")->valueint, 1);
	assert_int_equal(cJSON_GetObjectItem(di, "world_size")->valueint, 2);
	/* metadata first: a streaming reader sees the generator before any event */
	assert_true(strstr(text, "\"generator\"") < strstr(text, "\"traceEvents\""));

	cJSON *ev = cJSON_GetObjectItem(j, "traceEvents");
	cJSON *step = find_event(ev, "X", "ProfilerStep#3");
	assert_non_null(step);
	assert_string_equal(cJSON_GetObjectItem(step, "cat")->valuestring, "ProfileStep");
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(step, "args"), "samples")->valueint,
			 32);
	assert_int_equal(cJSON_GetObjectItem(step, "pid")->valueint, 100);
	cJSON *k = find_event(ev, "X", "sgemm_128x64_nn");
	assert_string_equal(cJSON_GetObjectItem(k, "cat")->valuestring, "Kernel");
	cJSON *ka = cJSON_GetObjectItem(k, "args");
	assert_int_equal(cJSON_GetObjectItem(ka, "correlation")->valueint, 12);
	assert_int_equal(cJSON_GetObjectItem(ka, "device")->valueint, 0);
	assert_int_equal(cJSON_GetObjectItem(ka, "stream")->valueint, 7);
	cJSON *mc = find_event(ev, "X", "Memcpy DtoH (Device -> Pageable)");
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(mc, "args"), "bytes")->valueint,
			 4096);
	assert_string_equal(cJSON_GetObjectItem(mc, "cat")->valuestring, "Memcpy");
	cJSON *rt = find_event(ev, "X", "cudaMemcpyAsync");
	assert_string_equal(cJSON_GetObjectItem(rt, "cat")->valuestring, "CudaRuntime");
	/* a hostile name is valid JSON and decodes to the same bytes */
	cJSON *ud = find_event(ev, "X", HOSTILE);
	assert_non_null(ud);
	assert_string_equal(cJSON_GetObjectItem(ud, "cat")->valuestring, "UserDefined");
	/* string tids stay strings; instants and counters */
	cJSON *gi = find_event(ev, "i", "[memory]");
	assert_string_equal(cJSON_GetObjectItem(gi, "s")->valuestring, "g");
	assert_string_equal(cJSON_GetObjectItem(gi, "tid")->valuestring, "Spans");
	assert_string_equal(cJSON_GetObjectItem(find_event(ev, "i", "thread mark"), "s")->valuestring,
			    "t");
	cJSON *ctr = find_event(ev, "C", "GPU memory");
	assert_float_equal(
		cJSON_GetObjectItem(cJSON_GetObjectItem(ctr, "args"), "value")->valuedouble, 1234.5,
		0);
	/* metadata: labels, "GPU n" for an unnamed device process, "stream N" */
	assert_string_equal(meta_name(ev, "process_name", 100, NULL, 0), "trainer");
	assert_string_equal(meta_name(ev, "process_name", 0, NULL, 0), "GPU 0");
	assert_string_equal(meta_name(ev, "thread_name", 100, NULL, 7), "python main thread");
	assert_string_equal(meta_name(ev, "thread_name", 0, NULL, 7), "stream 7");
	assert_null(meta_name(ev, "thread_name", 100, "Spans", 0));
	/* flows: one s/f pair per launched device activity, id = correlation */
	int s = 0, f = 0;
	cJSON *e;
	cJSON_ArrayForEach(e, ev)
	{
		const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
		if (strcmp(ph, "s") && strcmp(ph, "f"))
			continue;
		assert_string_equal(cJSON_GetObjectItem(e, "cat")->valuestring, "ac2g");
		int id = cJSON_GetObjectItem(e, "id")->valueint;
		assert_true(id >= 11 && id <= 13);
		if (!strcmp(ph, "s")) {
			s++;
			assert_int_equal(cJSON_GetObjectItem(e, "pid")->valueint, 100);
		} else {
			f++;
			assert_string_equal(cJSON_GetObjectItem(e, "bp")->valuestring, "e");
			assert_int_equal(cJSON_GetObjectItem(e, "pid")->valueint, 0);
			if (id == 12)
				assert_float_equal(cJSON_GetObjectItem(e, "ts")->valuedouble, 521.001,
						   1e-9);
		}
	}
	assert_int_equal(s, 3);
	assert_int_equal(f, 3);
	cJSON_Delete(j);
	free(text);
	pt_trace_free(t);
}

static void test_export_refuses_overwrite(void **state)
{
	(void)state;
	struct pt_trace *t = build_trace(0);
	const char *out = tu_path(g_dir, "exists.json");
	FILE *f = fopen(out, "w");
	fputs("precious", f);
	fclose(f);
	char err[256] = "";
	assert_int_equal(pt_chrome_export(t, out, NULL, err, sizeof err), PT_EEXIST);
	assert_non_null(strstr(err, "exists (use --force)"));
	char *text = slurp(out);
	assert_string_equal(text, "precious");
	free(text);
	struct pt_export_opts o = {.force = 1};
	assert_int_equal(pt_chrome_export(t, out, &o, err, sizeof err), 0);
	text = slurp(out);
	assert_memory_equal(text, "{\"displayTimeUnit\":\"ms\",\"otherData\":{", 36);
	free(text);
	assert_null(strstr(dir_listing(), ".tmp."));
	pt_trace_free(t);
}

static void test_export_failures_leave_nothing(void **state)
{
	(void)state;
	struct pt_trace *t = build_trace(0);
	/* a missing directory */
	char err[256] = "";
	const char *missing = tu_path(g_dir, "no/such/dir/out.json");
	assert_int_equal(pt_chrome_export(t, missing, NULL, err, sizeof err), PT_EIO);
	assert_non_null(strstr(err, "no/such/dir/out.json: "));
	assert_non_null(strstr(err, strerror(ENOENT)));

	/* a write cut short (as a full disk would): EFBIG from a small RLIMIT_FSIZE */
	for (uint64_t i = 0; i < 200000; i++)
		add(t, 0, PT_KIND_OPERATOR, "filler", 2000000 + i * 10, 5, 0, 0, 0);
	struct rlimit old, lim;
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = 64 * 1024;
	void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	const char *out = tu_path(g_dir, "big.json");
	int rc = pt_chrome_export(t, out, NULL, err, sizeof err);
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, prev);
	assert_int_equal(rc, PT_EIO);
	assert_non_null(strstr(err, "big.json: "));
	assert_non_null(strstr(err, strerror(EFBIG)));
	assert_int_equal(access(out, F_OK), -1);
	if (strstr(dir_listing(), ".tmp."))
		fail_msg("temporary file left behind: %s", dir_listing());
	/* an empty path */
	assert_int_equal(pt_chrome_export(t, "", NULL, err, sizeof err), PT_EINVAL);
	pt_trace_free(t);
}

static void test_export_window(void **state)
{
	(void)state;
	struct pt_trace *t = build_trace(0);
	struct pt_export_opts o = {.t0_ns = 500000, .t1_ns = 700000};
	const char *out = tu_path(g_dir, "win.json");
	char err[256] = "";
	assert_int_equal(pt_chrome_export(t, out, &o, err, sizeof err), 0);
	char *text = slurp(out);
	cJSON *j = cJSON_Parse(text);
	assert_non_null(j);
	cJSON *ev = cJSON_GetObjectItem(j, "traceEvents");
	assert_non_null(find_event(ev, "X", "aten::mm"));
	assert_non_null(find_event(ev, "X", "sgemm_128x64_nn"));
	assert_null(find_event(ev, "X", "aten::conv2d"));
	assert_null(find_event(ev, "X", "ProfilerStep#3"));
	cJSON_Delete(j);
	free(text);
	pt_trace_free(t);
}

static void test_export_empty_and_huge_names(void **state)
{
	(void)state;
	char err[256] = "";
	struct pt_trace *t = pt_trace_new(64 << 20);
	const char *out = tu_path(g_dir, "empty.json");
	assert_int_equal(pt_chrome_export(t, out, NULL, err, sizeof err), 0);
	char *text = slurp(out);
	cJSON *j = cJSON_Parse(text);
	assert_non_null(j);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "traceEvents")), 0);
	cJSON_Delete(j);
	free(text);
	/* a name longer than half the output buffer, full of characters to escape */
	size_t n = 900 * 1024;
	char *name = pt_xmalloc(n + 1);
	for (size_t i = 0; i < n; i++)
		name[i] = i % 7 == 0 ? '"' : (char)('a' + i % 26);
	name[n] = 0;
	uint32_t h = tu_track(t, 1, 1, -1);
	add(t, h, PT_KIND_MEMCPY, name, 5000, 10, 77, 1024, 0);
	add(t, h, PT_KIND_INSTANT, name, 6000, 0, 0, 0, PT_EVF_GLOBAL);
	out = tu_path(g_dir, "huge.json");
	assert_int_equal(pt_chrome_export(t, out, NULL, err, sizeof err), 0);
	text = slurp(out);
	j = cJSON_Parse(text);
	assert_non_null(j);
	cJSON *ev = cJSON_GetObjectItem(j, "traceEvents");
	cJSON *x = find_event(ev, "X", name);
	assert_non_null(x);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(x, "args"), "bytes")->valueint,
			 1024);
	assert_non_null(find_event(ev, "i", name));
	cJSON_Delete(j);
	free(text);
	free(name);
	pt_trace_free(t);
}

/* The track in b with a's key (track ids may differ after a read). */
static uint32_t same_track(const struct pt_trace *a, uint32_t ta, const struct pt_trace *b)
{
	const struct pt_track_key *ka = &a->tracks[ta].key;
	for (uint32_t i = 0; i < b->ntracks; i++) {
		const struct pt_track_key *kb = &b->tracks[i].key;
		if (ka->pid != kb->pid || ka->tid != kb->tid || !ka->pid_str != !kb->pid_str ||
		    !ka->tid_str != !kb->tid_str)
			continue;
		if (ka->pid_str &&
		    strcmp(pt_trace_str(a, ka->pid_str), pt_trace_str(b, kb->pid_str)))
			continue;
		if (ka->tid_str &&
		    strcmp(pt_trace_str(a, ka->tid_str), pt_trace_str(b, kb->tid_str)))
			continue;
		return i;
	}
	fail_msg("track %u has no counterpart after the round trip", ta);
	return 0;
}

static char *report_json_of(struct pt_trace *t)
{
	struct pt_agg_opts ao;
	pt_agg_opts_init(&ao);
	struct pt_summary *s = pt_summarize(t, &ao);
	struct pt_report_opts ro;
	pt_report_opts_init(&ro);
	ro.op_detail = 1;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(pt_report_json(f, t, s, &ro), 0);
	fclose(f);
	pt_summary_free(s);
	return buf;
}

static void round_trip(uint64_t base)
{
	struct pt_trace *a = build_trace(base);
	const char *out = tu_path(g_dir, "rt.json");
	unlink(out);
	char err[256] = "";
	assert_int_equal(pt_chrome_export(a, out, NULL, err, sizeof err), 0);
	struct pt_trace *b = pt_trace_new(64 << 20);
	int rc = pt_chrome_read(b, out, NULL, err, sizeof err);
	if (rc)
		fail_msg("read back failed: %s", err);
	pt_trace_set_source(b, a->source);
	assert_int_equal(b->events_seen, a->events_seen);
	pt_store_sort(a->store);
	pt_store_sort(b->store);
	for (uint32_t ta = 0; ta < a->ntracks; ta++) {
		uint32_t tb = same_track(a, ta, b);
		const struct pt_track *ra = &a->tracks[ta], *rb = &b->tracks[tb];
		assert_int_equal(ra->device, rb->device);
		if (pt_track_is_device(ra))
			assert_int_equal(ra->stream, rb->stream);
		if (ra->label)
			assert_string_equal(pt_trace_str(a, ra->label), pt_trace_str(b, rb->label));
		if (ra->process_label)
			assert_string_equal(pt_trace_str(a, ra->process_label),
					    pt_trace_str(b, rb->process_label));
		struct pt_store_iter ia, ib;
		pt_store_iter_init(&ia, a->store, ta, 0, UINT64_MAX);
		pt_store_iter_init(&ib, b->store, tb, 0, UINT64_MAX);
		struct pt_event *ea, *eb;
		size_t n = 0;
		while ((ea = pt_store_iter_next(&ia))) {
			eb = pt_store_iter_next(&ib);
			if (!eb)
				fail_msg("track %u: event %zu (%s) missing after the round trip", ta, n,
					 pt_trace_str(a, ea->name_id));
			const char *na = pt_trace_str(a, ea->name_id), *nb = pt_trace_str(b, eb->name_id);
			if (ea->start_ns != eb->start_ns || ea->dur_ns != eb->dur_ns ||
			    ea->kind != eb->kind || ea->corr != eb->corr || ea->arg != eb->arg ||
			    strcmp(na, nb))
				fail_msg("track %u event %zu differs:\n  %s %" PRIu64 "+%" PRIu64
					 " kind %d corr %u arg %" PRIu64 "\n  %s %" PRIu64 "+%" PRIu64
					 " kind %d corr %u arg %" PRIu64,
					 ta, n, na, ea->start_ns, ea->dur_ns, ea->kind, ea->corr,
					 ea->arg, nb, eb->start_ns, eb->dur_ns, eb->kind, eb->corr,
					 eb->arg);
			if (ea->kind == PT_KIND_INSTANT)
				assert_int_equal(ea->flags & PT_EVF_GLOBAL, eb->flags & PT_EVF_GLOBAL);
			n++;
		}
		assert_null(pt_store_iter_next(&ib));
		pt_store_iter_done(&ia);
		pt_store_iter_done(&ib);
	}
	char *ja = report_json_of(a), *jb = report_json_of(b);
	if (strcmp(ja, jb))
		fail_msg("report(export(T)) != report(T):\n%s\n---\n%s", ja, jb);
	cJSON *j = cJSON_Parse(ja);
	assert_non_null(j);
	assert_int_equal(cJSON_GetObjectItem(j, "steps")->valueint, 1);
	cJSON_Delete(j);
	free(ja);
	free(jb);
	pt_trace_free(a);
	pt_trace_free(b);
}

static void test_round_trip(void **state)
{
	(void)state;
	round_trip(1000);
}

static void test_export_embeds_summary(void **state)
{
	(void)state;
	struct pt_trace *t = build_trace(0);
	struct pt_agg_opts ao;
	pt_agg_opts_init(&ao);
	struct pt_summary *s = pt_summarize(t, &ao);
	struct pt_export_opts o = {.summary = s};
	const char *out = tu_path(g_dir, "sum.json");
	char err[256] = "";
	assert_int_equal(pt_chrome_export(t, out, &o, err, sizeof err), 0);
	char *text = slurp(out);
	cJSON *j = cJSON_Parse(text);
	assert_non_null(j);
	cJSON *p = cJSON_GetObjectItem(j, "proftop");
	assert_string_equal(cJSON_GetObjectItem(p, "schema")->valuestring, "proftop.report/2");
	assert_int_equal(cJSON_GetObjectItem(p, "steps")->valueint, 1);
	cJSON_Delete(j);
	free(text);
	pt_summary_free(s);
	pt_trace_free(t);
}

/* Kineto-style epoch microseconds: ns values past 2^53 must survive exactly. */
static void test_round_trip_epoch_clock(void **state)
{
	(void)state;
	round_trip(1623143089861000000ull + 123);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_export_format),
		cmocka_unit_test(test_export_refuses_overwrite),
		cmocka_unit_test(test_export_failures_leave_nothing),
		cmocka_unit_test(test_export_window),
		cmocka_unit_test(test_export_empty_and_huge_names),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_export_embeds_summary),
		cmocka_unit_test(test_round_trip_epoch_clock),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
