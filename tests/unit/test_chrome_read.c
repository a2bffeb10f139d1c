/*
 * test_chrome_read.c - the Chrome-trace reader on small inline traces with
 * answers worked out by hand (exact ns from fractional µs, B/E pairing,
 * string and numeric-string ids, instants, counters, metadata order, flows,
 * gzip, bare arrays, keys after traceEvents) and identical stores for 1 and
 * 4 threads. Files on disk are test_chrome_files.c's.
 */
#include "chrome_util.h"

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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
