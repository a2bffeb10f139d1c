/*
 * test_core_util.c - the model's helpers: pt_u64_kth, threads started on
 * another CPU, malloc's tuning and huge pages (and where they do not pay),
 * the trace sink (tracks, late labels, folding past the cap), escaping for
 * the terminal and JSON, and size parsing.
 */
#include "core_util.h"

/* pt_u64_kth against a sort, with runs of equal values (all equal too). */
static void test_u64_kth(void **state)
{
	(void)state;
	uint64_t v[200], w[200];
	unsigned seed = 7;
	for (int it = 0; it < 20000; it++) {
		size_t n = 1 + (size_t)(rand_r(&seed) % 200);
		uint64_t mod = 1 + (uint64_t)(rand_r(&seed) % 12);
		for (size_t i = 0; i < n; i++)
			v[i] = w[i] = (uint64_t)rand_r(&seed) % mod;
		size_t k = (size_t)rand_r(&seed) % n;
		uint64_t got = pt_u64_kth(v, n, k);
		qsort(w, n, sizeof *w, pt_u64_cmp);
		assert_int_equal(got, w[k]);
	}
}

/* Is the mapping holding addr advised for huge pages ("hg" in smaps)? With
 * heap: is that mapping malloc's [heap] (not under ASan or valgrind)? */
static int advised_huge(const void *addr, int *heap)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[512];
	int in = 0, hg = 0;
	uintptr_t a = (uintptr_t)addr;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = a >= lo && a < hi;
			if (in && heap)
				*heap = strstr(line, "[heap]") != NULL;
		} else if (in && !strncmp(line, "VmFlags:", 8))
			hg = strstr(line, " hg") != NULL;
	}
	fclose(f);
	return hg;
}

/* pt_mem_tune: blocks keep their bytes through growth and the heap it grows
 * is advised for huge pages (where the kernel has them at all and they pay:
 * else nothing is). */
struct apart_probe {
	cpu_set_t caller; /* the starting thread's CPUs */
	int arg_seen;
	int same_cpus; /* its CPUs once running: the caller's */
};

static void *apart_fn(void *v)
{
	struct apart_probe *pr = v;
	pr->arg_seen = 1;
	cpu_set_t mine;
	CPU_ZERO(&mine);
	pthread_getaffinity_np(pthread_self(), sizeof mine, &mine);
	pr->same_cpus = CPU_EQUAL(&mine, &pr->caller);
	return pr;
}

/* pt_thread_start_apart runs its function with its argument and leaves the
 * thread free to run on every CPU its caller may, with the caller on all
 * its CPUs and on one alone. */
static void test_thread_start_apart(void **state)
{
	(void)state;
	cpu_set_t orig;
	assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof orig, &orig), 0);
	for (int pass = 0; pass < 2; pass++) {
		cpu_set_t caller = orig;
		if (pass == 1) { /* one CPU: started plainly */
			int cpu = sched_getcpu();
			CPU_ZERO(&caller);
			CPU_SET(cpu >= 0 ? cpu : 0, &caller);
			if (pthread_setaffinity_np(pthread_self(), sizeof caller, &caller) != 0)
				continue;
		}
		for (int i = 0; i < 20; i++) {
			struct apart_probe pr = {caller, 0, 0};
			pthread_t th;
			assert_int_equal(pt_thread_start_apart(&th, apart_fn, &pr), 0);
			void *ret = NULL;
			assert_int_equal(pthread_join(th, &ret), 0);
			assert_ptr_equal(ret, &pr);
			assert_int_equal(pr.arg_seen, 1);
			assert_int_equal(pr.same_cpus, 1);
		}
	}
	assert_int_equal(pthread_setaffinity_np(pthread_self(), sizeof orig, &orig), 0);
}

static void test_mem_tune_heap(void **state)
{
	(void)state;
	pt_mem_tune();
	enum { N = 1500, SZ = 64 << 10 }; /* under malloc's mmap threshold: the heap */
	unsigned char **v = pt_xcalloc(N, sizeof *v);
	for (int i = 0; i < N; i++) {
		v[i] = pt_xmalloc(SZ / 2);
		memset(v[i], i & 0xff, SZ / 2);
		v[i] = pt_xrealloc(v[i], SZ);
		memset(v[i] + SZ / 2, (i + 1) & 0xff, SZ / 2);
	}
	for (int i = 0; i < N; i++) {
		assert_int_equal(v[i][0], i & 0xff);
		assert_int_equal(v[i][SZ / 2 - 1], i & 0xff);
		assert_int_equal(v[i][SZ - 1], (i + 1) & 0xff);
	}
	/* a large block: its own mapping, advised by the wrapper */
	unsigned char *big = pt_xcalloc(8 << 20, 1);
	assert_int_equal(big[(8 << 20) - 1], 0);
	void *probe = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(probe != MAP_FAILED);
	int thp = madvise(probe, 4 << 20, MADV_HUGEPAGE) == 0;
	munmap(probe, 4 << 20);
	if (thp) {
		/* the heap below the newest block, 2 MiB aligned: advised */
		uintptr_t hp = ((uintptr_t)v[N - 1] & ~(((uintptr_t)2 << 20) - 1)) - 1;
		int heap = 0, hg = advised_huge((void *)hp, &heap);
		int want = pt_mem_huge_pays();
		if (heap)
			assert_int_equal(hg, want);
		assert_int_equal(advised_huge(big + (4 << 20), NULL), want);
	}
	free(big);
	for (int i = 0; i < N; i++)
		free(v[i]);
	free(v);
}

/* Huge pages are not asked for where a virtio balloon reports free pages
 * to its host: its sysfs features text, bit 0 first, has bit 5 set. */
static void test_huge_pages_vs_free_page_reporting(void **state)
{
	(void)state;
	assert_true(pt_balloon_reports("0010010000000000\n"));
	assert_true(pt_balloon_reports("111111"));
	assert_false(pt_balloon_reports("0110000100000000\n"));
	assert_false(pt_balloon_reports("01101")); /* too short to say */
	assert_false(pt_balloon_reports(""));

	char root[] = "/tmp/proftop-balloon-XXXXXX", path[256];
	assert_non_null(mkdtemp(root));
	assert_false(pt_host_reclaims_free(root)); /* no device */
	snprintf(path, sizeof path, "%s/bind", root); /* not a device: ignored */
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("0000011111\n", f);
	fclose(f);
	snprintf(path, sizeof path, "%s/virtio3", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/virtio3/features", root);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("0110000100000000\n", f);
	fclose(f);
	assert_false(pt_host_reclaims_free(root));
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("0110010100000000\n", f);
	fclose(f);
	assert_true(pt_host_reclaims_free(root));
	assert_false(pt_host_reclaims_free("/nonexistent/virtio_balloon"));
	unlink(path);
	snprintf(path, sizeof path, "%s/virtio3", root);
	rmdir(path);
	snprintf(path, sizeof path, "%s/bind", root);
	unlink(path);
	assert_int_equal(rmdir(root), 0);
	/* whatever this machine says, it says it every time */
	assert_int_equal(pt_mem_huge_pays(), pt_mem_huge_pays());
}

static void test_trace_tracks_and_late_labels(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(0);
	struct pt_track_key k1 = {10, 11, 0, 0};
	uint32_t sp = pt_trace_intern(t, "Spans", 5);
	struct pt_track_key k2 = {0, 1, sp, 0};
	uint32_t a = pt_trace_track(t, &k1), b = pt_trace_track(t, &k2);
	assert_int_not_equal(a, b);
	assert_int_equal(pt_trace_track(t, &k1), a);
	pt_trace_set_thread_label(t, &k1, pt_trace_intern(t, "python main thread", 18));
	struct pt_track_key k3 = {10, 12, 0, 0};
	pt_trace_set_process_label(t, &k3, pt_trace_intern(t, "python", 6)); /* before its track */
	uint32_t c = pt_trace_track(t, &k3);
	assert_string_equal(pt_trace_str(t, t->tracks[a].label), "python main thread");
	assert_string_equal(pt_trace_str(t, t->tracks[a].process_label), "python");
	assert_string_equal(pt_trace_str(t, t->tracks[c].process_label), "python");
	char buf[128];
	pt_trace_track_label(t, a, buf, sizeof buf);
	assert_string_equal(buf, "python main thread (pid 10)");
	pt_trace_track_label(t, b, buf, sizeof buf);
	assert_string_equal(buf, "pid Spans tid 1");
	pt_trace_track_device(t, c, 0, 7);
	t->tracks[c].label = 0;
	pt_trace_track_label(t, c, buf, sizeof buf);
	assert_string_equal(buf, "GPU 0 stream 7");
	tu_ev(t, a, PT_KIND_OPERATOR, "x", 5, 1, 0);
	tu_ev(t, a, PT_KIND_OPERATOR, "x", 2, 1, 0);
	assert_int_equal(t->events_seen, 2);
	assert_int_equal(t->first_ns, 2000);
	assert_int_equal(t->last_ns, 6000);
	pt_trace_free(t);
}

static void test_escape_term(void **state)
{
	(void)state;
	char out[256];
	const char evil[] = "a\x1b]0;pwned\x07" "b\x9b" "c";
	pt_escape_term(out, sizeof out, evil, sizeof evil - 1, 0, 0);
	assert_null(strchr(out, 0x1b));
	assert_null(strchr(out, 0x07));
	assert_string_equal(out, "a\\e]0;pwned\\x07b\\x9bc");
	/* C1 control encoded as UTF-8 (U+009B CSI) and an RTL override */
	pt_escape_term(out, sizeof out, "x\xc2\x9by\xe2\x80\xaez", 8, 0, 0);
	assert_string_equal(out, "x\\u{9b}y\\u{202e}z");
	/* valid UTF-8 kept, ASCII mode escapes it */
	pt_escape_term(out, sizeof out, "\xc3\xa9t\xc3\xa9", 5, 0, 0);
	assert_string_equal(out, "\xc3\xa9t\xc3\xa9");
	pt_escape_term(out, sizeof out, "\xc3\xa9", 2, 0, PT_ESC_ASCII);
	assert_string_equal(out, "\\u{e9}");
	/* cut to width with dots */
	size_t cols = pt_escape_term(out, sizeof out, "abcdefghij", 10, 6, 0);
	assert_string_equal(out, "abc...");
	assert_int_equal(cols, 6);
	cols = pt_escape_term(out, sizeof out, "abcdef", 6, 6, 0);
	assert_string_equal(out, "abcdef");
	/* tiny buffer stays terminated */
	pt_escape_term(out, 4, "abcdefgh", 8, 0, 0);
	assert_true(strlen(out) < 4);
}

/* Tracks and names past half of the events' room are folded, not made:
 * the trace's own memory stays bounded by the cap whatever the input. */
static void test_trace_folds_past_the_cap(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	uint32_t first = 0, last = 0;
	for (int i = 0; i < 20000; i++) {
		struct pt_track_key k = {7, i + 1, 0, 0};
		uint32_t id = pt_trace_track(t, &k);
		if (i == 0)
			first = id;
		last = id;
	}
	assert_true(t->ntracks < 2000);
	assert_true(t->warnings[PT_WARN_TRACK_FOLDED] > 18000);
	const struct pt_track *fold = &t->tracks[last];
	assert_int_equal(fold->key.pid, 7); /* the first folded thread's process */
	assert_string_equal(pt_trace_str(t, fold->key.tid_str), PT_FOLDED_THREADS);
	/* a thread made before keeps its track */
	struct pt_track_key k0 = {7, 1, 0, 0};
	assert_int_equal(pt_trace_track(t, &k0), first);
	pt_trace_free(t);

	t = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	uint32_t early = pt_trace_intern(t, "early", 5), folded = 0;
	char name[64];
	for (int i = 0; i < 100000; i++) {
		int n = snprintf(name, sizeof name, "a distinct name of some length %d", i);
		folded = pt_trace_intern(t, name, (size_t)n);
	}
	assert_string_equal(pt_trace_str(t, folded), PT_FOLDED_NAMES);
	assert_true(t->warnings[PT_WARN_NAME_FOLDED] > 80000);
	assert_true(pt_store_mem_bytes(t->store) <= PT_STORE_MIN_MAX_BYTES);
	assert_int_equal(pt_trace_intern(t, "early", 5), early); /* known names keep their id */
	pt_trace_free(t);
}

static void test_json_str(void **state)
{
	(void)state;
	struct pt_buf b = {0};
	pt_buf_json_str(&b, "q\"\\\n\x01\xff\xc3\xa9", 8);
	assert_string_equal(b.p, "\"q\\\"\\\\\\u000a\\u0001\\\\xff\xc3\xa9\"");
	pt_buf_free(&b);
	assert_true(pt_utf8_valid("\xc3\xa9", 2));
	assert_false(pt_utf8_valid("\xc0\xaf", 2)); /* overlong */
	assert_false(pt_utf8_valid("\xed\xa0\x80", 3)); /* surrogate */
}

static void test_parse_size(void **state)
{
	(void)state;
	size_t v;
	assert_int_equal(pt_parse_size("512M", &v), 0);
	assert_int_equal(v, (size_t)512 << 20);
	assert_int_equal(pt_parse_size("2GiB", &v), 0);
	assert_int_equal(v, (size_t)2 << 30);
	assert_int_equal(pt_parse_size("1000", &v), 0);
	assert_int_equal(v, 1000);
	assert_int_not_equal(pt_parse_size("lots", &v), 0);
	assert_int_not_equal(pt_parse_size("-1G", &v), 0);
	assert_int_not_equal(pt_parse_size("1X", &v), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_u64_kth),
	    cmocka_unit_test(test_mem_tune_heap),
	    cmocka_unit_test(test_thread_start_apart),
	    cmocka_unit_test(test_huge_pages_vs_free_page_reporting),
	    cmocka_unit_test(test_trace_tracks_and_late_labels),
	    cmocka_unit_test(test_trace_folds_past_the_cap),
	    cmocka_unit_test(test_escape_term),
	    cmocka_unit_test(test_json_str),
	    cmocka_unit_test(test_parse_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
