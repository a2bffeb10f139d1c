/*
 * test_chrome_read.c - the Chrome-trace reader: small inline traces with
 * answers worked out by hand (exact ns from fractional µs, B/E pairing,
 * string and numeric-string ids, instants, counters, metadata order, flows,
 * gzip, bare arrays, keys after traceEvents), identical stores for 1 and 4
 * threads, every fixture under fixtures/bad and fixtures/dialects, and every
 * real trace under the shared traces directory (skipped when absent).
 */
#include "testutil.h"

#include <dirent.h>
#include <sys/stat.h>
#include <zlib.h>

#include "proftop/chrome.h"
#include "proftop/error.h"
#include "model/util.h"

/* dir/name, or dir/sub/name, into a caller's buffer. */
static const char *jpath(char *out, const char *a, const char *b, const char *c)
{
	snprintf(out, 1024, c ? "%s/%s/%s" : "%s/%s", a, b, c);
	return out;
}

static struct pt_trace *load_mem(const char *json, int threads, int expect_rc)
{
	struct pt_trace *t = pt_trace_new(0);
	struct pt_read_opts o = {.threads = threads};
	char err[512] = "";
	int rc = pt_chrome_read_mem(t, json, strlen(json), "inline", &o, err, sizeof err);
	if (rc != expect_rc)
		fprintf(stderr, "rc %d: %s\n", rc, err);
	assert_int_equal(rc, expect_rc);
	return t;
}

/* The events of one track in store order. */
static size_t track_events(struct pt_trace *t, uint32_t track, struct pt_event *out, size_t max)
{
	struct pt_store_iter it;
	pt_store_iter_init(&it, t->store, track, 0, UINT64_MAX);
	size_t n = 0;
	struct pt_event *e;
	while ((e = pt_store_iter_next(&it)))
		if (n < max)
			out[n++] = *e;
	pt_store_iter_done(&it);
	return n;
}

static uint32_t find_track(struct pt_trace *t, int64_t pid, int64_t tid)
{
	for (uint32_t i = 0; i < t->ntracks; i++)
		if (t->tracks[i].key.pid == pid && t->tracks[i].key.tid == tid &&
		    !t->tracks[i].key.pid_str && !t->tracks[i].key.tid_str)
			return i;
	fail_msg("no track %lld/%lld", (long long)pid, (long long)tid);
	return 0;
}

static const char *ename(struct pt_trace *t, const struct pt_event *e)
{
	return pt_trace_str(t, e->name_id);
}

/* Count of kept events of a kind (and with a name prefix when given). */
struct kcount {
	int kind;
	const char *prefix;
	struct pt_trace *t;
	uint64_t n;
};
static int kcount_fn(void *ctx, struct pt_event *e)
{
	struct kcount *k = ctx;
	if ((k->kind < 0 || e->kind == k->kind) &&
	    (!k->prefix || strncmp(ename(k->t, e), k->prefix, strlen(k->prefix)) == 0))
		k->n++;
	return 0;
}
static uint64_t count_kind(struct pt_trace *t, int kind, const char *prefix)
{
	struct kcount k = {kind, prefix, t, 0};
	pt_store_foreach(t->store, kcount_fn, &k);
	return k.n;
}

/* ---- inline traces ---- */

static void test_exact_times(void **state)
{
	(void)state;
	struct pt_trace *t =
	    load_mem("[{\"ph\":\"X\",\"name\":\"a\",\"ts\":4458676522690.655,\"dur\":1.0005,"
		     "\"pid\":1,\"tid\":2},"
		     "{\"ph\":\"X\",\"name\":\"b\",\"ts\":123,\"dur\":5,\"pid\":1,\"tid\":2},"
		     "{\"ph\":\"X\",\"name\":\"c\",\"ts\":0,\"dur\":0.0004,\"pid\":1,\"tid\":2},"
		     "{\"ph\":\"X\",\"name\":\"d\",\"ts\":56635864652.490005,\"dur\":1.5e3,\"pid\":"
		     "1,\"tid\":2},"
		     "{\"ph\":\"X\",\"name\":\"e\",\"ts\":159.9999964237213,\"dur\":-0,\"pid\":1,"
		     "\"tid\":2}]",
		     1, 0);
	struct pt_event ev[8];
	size_t n = track_events(t, find_track(t, 1, 2), ev, 8);
	assert_int_equal(n, 5);
	assert_string_equal(ename(t, &ev[0]), "c");
	assert_int_equal(ev[0].start_ns, 0);
	assert_int_equal(ev[0].dur_ns, 0);
	assert_string_equal(ename(t, &ev[1]), "b");
	assert_int_equal(ev[1].start_ns, 123000);
	assert_int_equal(ev[1].dur_ns, 5000);
	assert_string_equal(ename(t, &ev[2]), "e");
	assert_int_equal(ev[2].start_ns, 160000);
	assert_string_equal(ename(t, &ev[3]), "d");
	assert_int_equal(ev[3].start_ns, 56635864652490ull);
	assert_int_equal(ev[3].dur_ns, 1500000);
	assert_string_equal(ename(t, &ev[4]), "a");
	assert_int_equal(ev[4].start_ns, 4458676522690655ull);
	assert_int_equal(ev[4].dur_ns, 1001); /* 1000.5 ns rounds half up */
	assert_int_equal(t->events_seen, 5);
	assert_int_equal(pt_trace_warn_total(t), 0);
	pt_trace_free(t);
}

static void test_begin_end(void **state)
{
	(void)state;
	/* nested on thread 1, interleaved with thread 2; E names optional */
	struct pt_trace *t =
	    load_mem("{\"traceEvents\":["
		     "{\"ph\":\"B\",\"name\":\"outer\",\"ts\":10,\"pid\":1,\"tid\":1},"
		     "{\"ph\":\"B\",\"name\":\"t2\",\"ts\":11,\"pid\":1,\"tid\":2},"
		     "{\"ph\":\"B\",\"name\":\"inner\",\"ts\":12.5,\"pid\":1,\"tid\":1},"
		     "{\"ph\":\"E\",\"ts\":13,\"pid\":1,\"tid\":2},"
		     "{\"ph\":\"E\",\"name\":\"inner\",\"ts\":15,\"pid\":1,\"tid\":1},"
		     "{\"ph\":\"E\",\"ts\":20,\"pid\":1,\"tid\":1},"
		     "{\"ph\":\"E\",\"ts\":21,\"pid\":1,\"tid\":1}]}",
		     1, 0);
	struct pt_event ev[4];
	assert_int_equal(track_events(t, find_track(t, 1, 1), ev, 4), 2);
	assert_string_equal(ename(t, &ev[0]), "outer");
	assert_int_equal(ev[0].start_ns, 10000);
	assert_int_equal(ev[0].dur_ns, 10000);
	assert_string_equal(ename(t, &ev[1]), "inner");
	assert_int_equal(ev[1].start_ns, 12500);
	assert_int_equal(ev[1].dur_ns, 2500);
	assert_int_equal(track_events(t, find_track(t, 1, 2), ev, 4), 1);
	assert_string_equal(ename(t, &ev[0]), "t2");
	assert_int_equal(ev[0].dur_ns, 2000);
	assert_int_equal(t->warnings[PT_WARN_E_WITHOUT_B], 1);
	pt_trace_free(t);
}

/* A count that is not an integer counts as absent, a negative one as 0, on
 * both the parsing threads' path and the single-threaded one; a B/E pair
 * keeps its B's bytes. */
static void test_counts_not_numbers(void **state)
{
	(void)state;
	static const char json[] =
	    "{\"traceEvents\":["
	    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD\",\"pid\":0,"
	    "\"tid\":7,\"ts\":1,\"dur\":1,\"args\":{\"bytes\":\"4096\",\"device\":\"x\"}},"
	    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD\",\"pid\":0,"
	    "\"tid\":7,\"ts\":3,\"dur\":1,\"args\":{\"bytes\":-5}},"
	    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD\",\"pid\":0,"
	    "\"tid\":7,\"ts\":5,\"dur\":1,\"args\":{\"bytes\":65536}},"
	    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD\",\"pid\":0,"
	    "\"tid\":7,\"ts\":7,\"dur\":1,\"args\":{\"bytes\":8,\"bytes\":null}},"
	    "{\"ph\":\"B\",\"cat\":\"gpu_memset\",\"name\":\"Memset\",\"pid\":0,"
	    "\"tid\":7,\"ts\":9,\"args\":{\"bytes\":77}},"
	    "{\"ph\":\"E\",\"pid\":0,\"tid\":7,\"ts\":10},"
	    "{\"ph\":\"X\",\"name\":\"ProfilerStep#0\",\"pid\":1,\"tid\":1,\"ts\":1,"
	    "\"dur\":4,\"args\":{\"samples\":\"12\"}},"
	    "{\"ph\":\"X\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":5,"
	    "\"dur\":4,\"args\":{\"num_samples\":32}}]}";
	static const uint64_t want_copy[] = {0, 0, 65536, 8, 77};
	for (int threads = 1; threads <= 2; threads++) {
		struct pt_trace *t = load_mem(json, threads, 0);
		struct pt_event ev[8];
		assert_int_equal(track_events(t, find_track(t, 0, 7), ev, 8), 5);
		for (int i = 0; i < 5; i++) {
			assert_true(ev[i].kind == PT_KIND_MEMCPY || ev[i].kind == PT_KIND_MEMSET);
			assert_int_equal(ev[i].arg, want_copy[i]);
		}
		assert_int_equal(track_events(t, find_track(t, 1, 1), ev, 8), 2);
		assert_int_equal(ev[0].kind, PT_KIND_PROFILE_STEP);
		assert_int_equal(ev[0].arg, 0);
		assert_int_equal(ev[1].arg, 32);
		pt_trace_free(t);
	}
}

static void test_string_ids(void **state)
{
	(void)state;
	struct pt_trace *t = load_mem(
	    "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1,\"pid\":25738,\"tid\":\"25738\"},"
	    "{\"ph\":\"X\",\"name\":\"b\",\"ts\":2,\"dur\":1,\"pid\":\"25738\",\"tid\":25738},"
	    "{\"ph\":\"X\",\"name\":\"c\",\"ts\":3,\"dur\":1,\"pid\":\"Spans\",\"tid\":\"stream "
	    "7\"},"
	    "{\"ph\":\"X\",\"name\":\"d\",\"ts\":4,\"dur\":1,\"pid\":\"\",\"tid\":\"\"},"
	    "{\"ph\":\"X\",\"name\":\"e\",\"ts\":5,\"dur\":1,\"pid\":1,\"tid\":-1029147072}]",
	    1, 0);
	assert_int_equal(t->ntracks, 4);
	uint32_t a = find_track(t, 25738, 25738);
	assert_int_equal(t->tracks[a].events, 2);
	const struct pt_track *c = &t->tracks[1];
	assert_string_equal(pt_trace_str(t, c->key.pid_str), "Spans");
	assert_string_equal(pt_trace_str(t, c->key.tid_str), "stream 7");
	find_track(t, 1, -1029147072);
	pt_trace_free(t);
}

/* Events of 40 threads (numeric and string ids) interleaved at random, as
 * a trace alternates threads and streams: each lands on its own thread's
 * track (its name says which), whichever tracks came just before it. */
static void test_tracks_interleaved(void **state)
{
	(void)state;
	struct pt_buf b = {0};
	uint64_t seed = 77;
	int counts[40] = {0};
	pt_buf_putc(&b, '[');
	for (int i = 0; i < 4000; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		int k = (int)((seed >> 33) % 40);
		if ((seed >> 20) % 4 == 0) /* runs of one thread too */
			k = i % 3;
		counts[k]++;
		if (k % 4 == 3)
			pt_buf_printf(&b, "%s{\"ph\":\"X\",\"name\":\"t%d\",\"ts\":%d,\"dur\":1,"
					  "\"pid\":\"p%d\",\"tid\":\"thread %d\"}",
				      i ? "," : "", k, i, k % 5, k);
		else
			pt_buf_printf(&b, "%s{\"ph\":\"X\",\"name\":\"t%d\",\"ts\":%d,\"dur\":1,"
					  "\"pid\":%d,\"tid\":%d}",
				      i ? "," : "", k, i, k % 5, k * 1000);
	}
	pt_buf_put(&b, "]", 2);
	struct pt_trace *t = load_mem(b.p, 1, 0);
	assert_int_equal(t->ntracks, 40);
	for (uint32_t tr = 0; tr < t->ntracks; tr++) {
		const struct pt_track_key *key = &t->tracks[tr].key;
		int k = key->tid_str ? atoi(pt_trace_str(t, key->tid_str) + 7) : (int)(key->tid / 1000);
		char want[16];
		snprintf(want, sizeof want, "t%d", k);
		static struct pt_event ev[4000];
		size_t n = track_events(t, tr, ev, 4000);
		assert_int_equal(n, counts[k]);
		for (size_t i = 0; i < n; i++)
			assert_string_equal(pt_trace_str(t, ev[i].name_id), want);
	}
	pt_trace_free(t);
	pt_buf_free(&b);
}

/* Event names that share their first and last 8 bytes and their length
 * (only the middle tells them apart), short ones, and more names than the
 * reader's name cache holds, in random order: each event keeps its own. */
static void test_names_alike(void **state)
{
	(void)state;
	struct pt_buf b = {0};
	uint64_t seed = 4141;
	enum { N = 6000 };
	static int which[N];
	pt_buf_putc(&b, '[');
	for (int i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		int k = (int)((seed >> 33) % 3000);
		which[i] = k;
		if (k < 2000)
			pt_buf_printf(&b, "%s{\"ph\":\"X\",\"name\":\"aten::op_%04d_backward\",\"ts\":%d,"
					  "\"dur\":1,\"pid\":1,\"tid\":1}",
				      i ? "," : "", k, i);
		else
			pt_buf_printf(&b, "%s{\"ph\":\"X\",\"name\":\"k%d\",\"ts\":%d,\"dur\":1,"
					  "\"pid\":1,\"tid\":1}",
				      i ? "," : "", k, i);
	}
	pt_buf_put(&b, "]", 2);
	struct pt_trace *t = load_mem(b.p, 1, 0);
	static struct pt_event ev[N];
	assert_int_equal(track_events(t, 0, ev, N), N);
	for (int i = 0; i < N; i++) {
		char want[40];
		if (which[i] < 2000)
			snprintf(want, sizeof want, "aten::op_%04d_backward", which[i]);
		else
			snprintf(want, sizeof want, "k%d", which[i]);
		assert_string_equal(pt_trace_str(t, ev[i].name_id), want);
	}
	pt_trace_free(t);
	pt_buf_free(&b);
}

static void test_instants_counters(void **state)
{
	(void)state;
	struct pt_trace *t = load_mem(
	    "[{\"ph\":\"i\",\"name\":\"mark\",\"ts\":1,\"pid\":1,\"tid\":1,\"s\":\"g\"},"
	    "{\"ph\":\"I\",\"name\":\"tmark\",\"ts\":2,\"pid\":1,\"tid\":1,\"s\":\"t\"},"
	    "{\"ph\":\"C\",\"name\":\"mem\",\"ts\":3,\"pid\":1,\"tid\":1,"
	    "\"args\":{\"alloc\":10,\"free\":2.5,\"label\":\"x\"}},"
	    "{\"args\":{\"value\":7},\"ph\":\"C\",\"name\":\"util\",\"ts\":4,\"pid\":1,\"tid\":1}]",
	    1, 0);
	struct pt_event ev[8];
	size_t n = track_events(t, find_track(t, 1, 1), ev, 8);
	assert_int_equal(n, 5);
	assert_int_equal(ev[0].kind, PT_KIND_INSTANT);
	assert_int_equal(ev[0].flags, PT_EVF_GLOBAL);
	assert_int_equal(ev[0].dur_ns, 0);
	assert_int_equal(ev[1].kind, PT_KIND_INSTANT);
	assert_int_equal(ev[1].flags, 0);
	double d;
	int seen = 0;
	for (size_t i = 2; i < n; i++) {
		assert_int_equal(ev[i].kind, PT_KIND_COUNTER);
		memcpy(&d, &ev[i].arg, sizeof d);
		if (!strcmp(ename(t, &ev[i]), "mem alloc"))
			assert_true(d == 10.0), seen |= 1;
		else if (!strcmp(ename(t, &ev[i]), "mem free"))
			assert_true(d == 2.5), seen |= 2;
		else if (!strcmp(ename(t, &ev[i]), "util"))
			assert_true(d == 7.0), seen |= 4;
	}
	assert_int_equal(seen, 7);
	pt_trace_free(t);
}

static void test_metadata_order(void **state)
{
	(void)state;
	struct pt_trace *t = load_mem(
	    "{\"traceEvents\":["
	    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"args\":{\"name\":"
	    "\"train\"}},"
	    "{\"ph\":\"X\",\"name\":\"a\",\"cat\":\"cpu_op\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":"
	    "5},"
	    "{\"ph\":\"X\",\"name\":\"k\",\"cat\":\"kernel\",\"ts\":1,\"dur\":1,\"pid\":0,\"tid\":"
	    "7,"
	    "\"args\":{\"device\":0,\"stream\":7,\"correlation\":42}},"
	    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":5,\"args\":{\"name\":"
	    "\"main\"}},"
	    "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":1,\"tid\":5,\"args\":{\"sort_"
	    "index\":3}},"
	    "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":0,\"tid\":0,\"args\":{\"labels\":"
	    "\"GPU 0\"}}"
	    "],\"displayTimeUnit\":\"ns\",\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":3,"
	    "\"world_size\":8},\"deviceProperties\":[{\"id\":0,\"x\":[[[]]]}]}",
	    1, 0);
	uint32_t h = find_track(t, 1, 5), g = find_track(t, 0, 7);
	assert_string_equal(pt_trace_str(t, t->tracks[h].label), "main");
	assert_string_equal(pt_trace_str(t, t->tracks[h].process_label), "train");
	assert_int_equal(t->tracks[h].sort_index, 3);
	assert_int_equal(t->tracks[h].device, -1);
	assert_int_equal(t->tracks[g].device, 0);
	assert_int_equal(t->tracks[g].stream, 7);
	struct pt_event ev[2];
	assert_int_equal(track_events(t, g, ev, 2), 1);
	assert_int_equal(ev[0].corr, 42);
	assert_int_equal(ev[0].kind, PT_KIND_KERNEL);
	assert_int_equal(t->display_unit, 1);
	assert_int_equal(t->rank, 3);
	assert_int_equal(t->world_size, 8);
	pt_trace_free(t);
}

static void test_flows_bind(void **state)
{
	(void)state;
	/* legacy export: no correlation in args; the flow links op to kernel */
	struct pt_trace *t = load_mem(
	    "[{\"name\":\"aten::mm\",\"ph\":\"X\",\"ts\":100,\"dur\":50,\"tid\":1,"
	    "\"pid\":\"CPU functions\",\"args\":{}},"
	    "{\"name\":\"cpu_to_cuda\",\"ph\":\"s\",\"ts\":110,\"tid\":1,\"pid\":\"CPU functions\","
	    "\"id\":1,\"cat\":\"cpu_to_cuda\",\"args\":{}},"
	    "{\"name\":\"k\",\"ph\":\"f\",\"ts\":160,\"tid\":0,\"pid\":\"CUDA functions\",\"id\":1,"
	    "\"cat\":\"cpu_to_cuda\",\"args\":{}},"
	    "{\"name\":\"sgemm\",\"ph\":\"X\",\"ts\":160,\"dur\":20,\"tid\":0,"
	    "\"pid\":\"CUDA functions\",\"args\":{}},"
	    "{\"name\":\"x\",\"ph\":\"s\",\"ts\":300,\"tid\":1,\"pid\":\"CPU functions\",\"id\":9},"
	    "{\"name\":\"fb\",\"ph\":\"s\",\"ts\":110,\"tid\":1,\"pid\":\"CPU functions\",\"id\":5,"
	    "\"cat\":\"fwdbwd\"}]",
	    1, 0);
	assert_int_equal(t->ntracks, 2);
	struct pt_event a[2], b[2];
	assert_int_equal(track_events(t, 0, a, 2), 1);
	assert_int_equal(track_events(t, 1, b, 2), 1);
	assert_int_equal(a[0].kind, PT_KIND_OPERATOR);
	assert_int_equal(b[0].kind, PT_KIND_KERNEL);
	assert_true(a[0].corr >= 0x80000000u);
	assert_int_equal(a[0].corr, b[0].corr);
	assert_true(a[0].flags & PT_EVF_FLOW_SRC);
	assert_true(b[0].flags & PT_EVF_FLOW_DST);
	assert_int_equal(t->tracks[1].device, 0);
	assert_int_equal(t->warnings[PT_WARN_FLOW_UNMATCHED], 1); /* id 9 */
	pt_trace_free(t);
}

static void *gzip_mem(const void *src, size_t len, size_t *out_len)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
			 Z_OK);
	size_t cap = deflateBound(&z, len) + 64;
	unsigned char *out = malloc(cap);
	z.next_in = (unsigned char *)src;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	*out_len = cap - z.avail_out;
	deflateEnd(&z);
	return out;
}

static void test_gzip_and_bare(void **state)
{
	(void)state;
	/* two gzip members back to back make one text */
	const char *p1 = "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1},";
	const char *p2 = "{\"ph\":\"X\",\"name\":\"b\",\"ts\":2,\"dur\":1,\"pid\":1,\"tid\":1},\n";
	size_t n1, n2;
	unsigned char *g1 = gzip_mem(p1, strlen(p1), &n1), *g2 = gzip_mem(p2, strlen(p2), &n2);
	unsigned char *both = malloc(n1 + n2);
	memcpy(both, g1, n1);
	memcpy(both + n1, g2, n2);
	for (int th = 1; th <= 4; th += 3) {
		struct pt_trace *t = pt_trace_new(0);
		struct pt_read_opts o = {.threads = th};
		char err[256];
		assert_int_equal(
		    pt_chrome_read_mem(t, both, n1 + n2, "mem.gz", &o, err, sizeof err), 0);
		assert_int_equal(t->events_seen, 2); /* bare array without ']' */
		pt_trace_free(t);
	}
	/* a cut gzip stream is a truncated file */
	struct pt_trace *t = pt_trace_new(0);
	char err[256];
	assert_int_equal(pt_chrome_read_mem(t, g1, n1 - 9, "cut.gz", NULL, err, sizeof err),
			 PT_ETRUNC);
	assert_non_null(strstr(err, "cut.gz: byte "));
	pt_trace_free(t);
	free(g1);
	free(g2);
	free(both);
}

/* A trace of several MB with escapes, long names, B/E and flows, so batches
 * break everywhere; 1 and 4 threads must store exactly the same thing. */
static char *big_trace(size_t *len)
{
	struct pt_buf b = {0};
	pt_buf_put(&b, "{\"traceEvents\":[\n", 17);
	for (int i = 0; i < 60000; i++) {
		int tid = i % 7;
		pt_buf_printf(
		    &b,
		    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op\\u00e9\\\"%d\",\"pid\":1,"
		    "\"tid\":%d,\"ts\":%d.%03d,\"dur\":%d.5,\"args\":{\"x\":[[1,{\"y\":\"}{\"}]],"
		    "\"correlation\":%d}},\n",
		    i % 97, tid, 1000 + i, i % 1000, 1 + i % 5, i);
		if (i % 1000 == 0) {
			pt_buf_printf(&b, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"");
			for (int k = 0; k < 3000 + i / 10; k++)
				pt_buf_putc(&b, (char)('a' + k % 26));
			pt_buf_printf(&b,
				      "\",\"pid\":0,\"tid\":7,\"ts\":%d,\"dur\":1,"
				      "\"args\":{\"device\":0,\"stream\":7,\"correlation\":%d}},\n",
				      1000 + i, i);
		}
		if (i % 500 == 0)
			pt_buf_printf(
			    &b,
			    "{\"ph\":\"B\",\"name\":\"range\",\"pid\":2,\"tid\":1,\"ts\":%d},"
			    "{\"ph\":\"E\",\"pid\":2,\"tid\":1,\"ts\":%d},\n",
			    1000 + i, 1003 + i);
	}
	pt_buf_printf(&b,
		      "{\"ph\":\"i\",\"name\":\"end\",\"pid\":1,\"tid\":0,\"ts\":99999999}\n]}");
	*len = b.len;
	return b.p;
}

static void same_traces(struct pt_trace *a, struct pt_trace *b)
{
	assert_int_equal(a->events_seen, b->events_seen);
	assert_int_equal(a->ntracks, b->ntracks);
	assert_int_equal(pt_strtab_count(a->strings), pt_strtab_count(b->strings));
	assert_memory_equal(a->warnings, b->warnings, sizeof a->warnings);
	for (uint32_t tr = 0; tr < a->ntracks; tr++) {
		assert_memory_equal(&a->tracks[tr], &b->tracks[tr], sizeof a->tracks[tr]);
		struct pt_store_iter ia, ib;
		pt_store_iter_init(&ia, a->store, tr, 0, UINT64_MAX);
		pt_store_iter_init(&ib, b->store, tr, 0, UINT64_MAX);
		struct pt_event *ea, *eb;
		do {
			ea = pt_store_iter_next(&ia);
			eb = pt_store_iter_next(&ib);
			assert_true((ea == NULL) == (eb == NULL));
			if (ea) {
				assert_memory_equal(ea, eb, sizeof *ea);
				assert_string_equal(ename(a, ea), ename(b, eb));
			}
		} while (ea);
		pt_store_iter_done(&ia);
		pt_store_iter_done(&ib);
	}
}

static void test_threads_identical(void **state)
{
	(void)state;
	size_t len;
	char *text = big_trace(&len);
	assert_true(len > (size_t)8 << 20);
	struct pt_trace *t1 = pt_trace_new(0), *t4 = pt_trace_new(0);
	struct pt_read_opts o1 = {.threads = 1}, o4 = {.threads = 4};
	char err[256];
	assert_int_equal(pt_chrome_read_mem(t1, text, len, "big", &o1, err, sizeof err), 0);
	assert_int_equal(pt_chrome_read_mem(t4, text, len, "big", &o4, err, sizeof err), 0);
	assert_int_equal(t1->events_seen, 60000 + 60 + 120 + 1);
	assert_int_equal(pt_trace_warn_total(t1), 0);
	same_traces(t1, t4);
	/* the same through gzip */
	size_t glen;
	void *gz = gzip_mem(text, len, &glen);
	struct pt_trace *tg = pt_trace_new(0);
	assert_int_equal(pt_chrome_read_mem(tg, gz, glen, "big.gz", &o4, err, sizeof err), 0);
	same_traces(t1, tg);
	/* truncated at many places: an error or a clean bare-array-free result,
	 * never a crash */
	for (size_t cut = 17; cut < len; cut += len / 7) {
		struct pt_trace *tc = pt_trace_new(0);
		assert_int_equal(pt_chrome_read_mem(tc, text, cut, "cut", &o4, err, sizeof err),
				 PT_ETRUNC);
		pt_trace_free(tc);
	}
	pt_trace_free(t1);
	pt_trace_free(t4);
	pt_trace_free(tg);
	free(gz);
	free(text);
}

static void test_object_bigger_than_chunk(void **state)
{
	(void)state;
	struct pt_buf b = {0};
	pt_buf_printf(&b, "[{\"ph\":\"X\",\"name\":\"");
	for (int i = 0; i < (5 << 20); i++)
		pt_buf_putc(&b, 'x');
	pt_buf_printf(&b, "\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1}]");
	for (int th = 1; th <= 2; th++) {
		struct pt_trace *t = pt_trace_new(0);
		struct pt_read_opts o = {.threads = th};
		char err[256];
		assert_int_equal(pt_chrome_read_mem(t, b.p, b.len, "big1", &o, err, sizeof err), 0);
		assert_int_equal(t->events_seen, 1);
		struct pt_event ev = {0};
		assert_int_equal(track_events(t, 0, &ev, 1), 1);
		/* read whole, then cut to PT_NAME_MAX_BYTES (hash and length kept) */
		size_t len = pt_strtab_len(t->strings, ev.name_id);
		assert_true(len > PT_NAME_MAX_BYTES - 64 && len < PT_NAME_MAX_BYTES + 64);
		assert_non_null(strstr(pt_trace_str(t, ev.name_id), "...[5242880 bytes #"));
		assert_int_equal(t->warnings[PT_WARN_NAME_CUT], 1);
		pt_trace_free(t);
	}
	pt_buf_free(&b);
}

/* With workers the first batches are smaller (256 KiB, then doubling to the
 * chunk): objects across those first limits, or bigger than them, and
 * inputs cut inside them read as with one thread. */
static void test_first_batches_small(void **state)
{
	(void)state;
	struct pt_buf b = {0};
	pt_buf_printf(&b, "{\"traceEvents\":[");
	const int big[] = {200 << 10, 70 << 10, 400 << 10, 900 << 10, 3 << 20};
	for (int i = 0; i < 4000; i++) {
		if (i % 800 == 0) {
			pt_buf_printf(&b, "{\"ph\":\"X\",\"name\":\"");
			for (int k = 0; k < big[i / 800]; k++)
				pt_buf_putc(&b, (char)('a' + k % 26));
			pt_buf_printf(&b, "\",\"ts\":%d,\"dur\":1,\"pid\":1,\"tid\":2},", i);
		}
		pt_buf_printf(&b, "{\"ph\":\"X\",\"name\":\"op%d\",\"ts\":%d,\"dur\":1,"
				  "\"pid\":1,\"tid\":1}%s",
			      i % 13, i, i + 1 < 4000 ? "," : "]}");
	}
	char err[256];
	struct pt_read_opts o1 = {.threads = 1}, o2 = {.threads = 2};
	struct pt_trace *t1 = pt_trace_new(0), *t2 = pt_trace_new(0);
	assert_int_equal(pt_chrome_read_mem(t1, b.p, b.len, "ramp", &o1, err, sizeof err), 0);
	assert_int_equal(pt_chrome_read_mem(t2, b.p, b.len, "ramp", &o2, err, sizeof err), 0);
	assert_int_equal(t1->events_seen, 4005);
	same_traces(t1, t2);
	pt_trace_free(t1);
	pt_trace_free(t2);
	/* cut in and around the first batches: the same error either way */
	for (size_t cut = 100 << 10; cut < ((size_t)3 << 20) && cut < b.len; cut += 97 << 10) {
		char e1[256], e2[256];
		struct pt_trace *c1 = pt_trace_new(0), *c2 = pt_trace_new(0);
		int r1 = pt_chrome_read_mem(c1, b.p, cut, "cut", &o1, e1, sizeof e1);
		int r2 = pt_chrome_read_mem(c2, b.p, cut, "cut", &o2, e2, sizeof e2);
		assert_int_equal(r1, PT_ETRUNC);
		assert_int_equal(r2, r1);
		assert_string_equal(e1, e2);
		pt_trace_free(c1);
		pt_trace_free(c2);
	}
	pt_buf_free(&b);
}

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
	    cmocka_unit_test(test_exact_times),
	    cmocka_unit_test(test_begin_end),
	    cmocka_unit_test(test_counts_not_numbers),
	    cmocka_unit_test(test_string_ids),
	    cmocka_unit_test(test_tracks_interleaved),
	    cmocka_unit_test(test_names_alike),
	    cmocka_unit_test(test_instants_counters),
	    cmocka_unit_test(test_metadata_order),
	    cmocka_unit_test(test_flows_bind),
	    cmocka_unit_test(test_gzip_and_bare),
	    cmocka_unit_test(test_threads_identical),
	    cmocka_unit_test(test_object_bigger_than_chunk),
	    cmocka_unit_test(test_first_batches_small),
	    cmocka_unit_test(test_bad_fixtures),
	    cmocka_unit_test(test_open_errors),
	    cmocka_unit_test(test_dialects),
	    cmocka_unit_test(test_real_known),
	    cmocka_unit_test(test_real_all),
	    cmocka_unit_test(test_real_threads_identical),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
