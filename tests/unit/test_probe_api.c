/*
 * test_probe_api.c - the probe's clock and entry points (libproftop.so's
 * objects linked in): the TSC clock against CLOCK_MONOTONIC (and a
 * preempted anchor), PROFTOP_DISABLE, a range stack deeper than its depth,
 * NVTX injection through a fake export table, torch's NVTX names, step
 * spans and a full string area.
 */
#include "probe_util.h"

/* clock_gettime, interposed: with g_slow_mono set, a CLOCK_MONOTONIC read
 * returns only after spinning 20 us, as if the thread had been preempted
 * right after reading the time (the probe's TSC bracket then comes late). */
static volatile int g_slow_mono;
int clock_gettime(clockid_t id, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "clock_gettime");
	int r = real(id, ts);
	if (g_slow_mono && id == CLOCK_MONOTONIC) {
		struct timespec t0 = *ts, now;
		do
			real(CLOCK_MONOTONIC, &now);
		while ((now.tv_sec - t0.tv_sec) * 1000000000ll + (now.tv_nsec - t0.tv_nsec) < 20000);
	}
	return r;
}

/* The smallest error of a few bracketed reads of the session clock (a
 * preempted bracket only adds to it). */
static int64_t clock_error(struct pt_tstate *t)
{
	int64_t best = INT64_MAX;
	for (int i = 0; i < 50; i++) {
		uint64_t a = pt_clock_mono_ns(), v = pt_clock_now(&t->clk), b = pt_clock_mono_ns();
		if (b - a > 2000)
			continue;
		int64_t err = v < a ? (int64_t)(a - v) : v > b ? (int64_t)(v - b) : 0;
		if (err < best)
			best = err;
	}
	return best;
}

/* A re-anchor whose pair was read far apart (preempted) must not pin the
 * TSC clock to the wrong nanosecond: a launch stamped by it came out after
 * the kernel it started. */
static void test_clock_preempted_anchor(void **state)
{
	if (getenv("PT_UNDER_VALGRIND"))
		skip();
	struct pt_tstate *t = (my_ring(), pt_probe_tls);
	/* calibrated: a slope once a few ms have passed */
	uint64_t until = pt_clock_mono_ns() + 10000000ull;
	while (pt_clock_mono_ns() < until) {
		t->clk.limit = 0;
		pt_clock_now(&t->clk);
	}
	if (!pt_clock_uses_tsc())
		skip(); /* every read is clock_gettime: nothing to pin */
	assert_true(clock_error(t) < 2000);
	t->clk.limit = 0; /* the next read re-anchors */
	g_slow_mono = 1;
	pt_clock_now(&t->clk);
	g_slow_mono = 0;
	int64_t err = clock_error(t);
	print_message("# clock after a preempted re-anchor: error %lld ns\n", (long long)err);
	assert_true(err < 2000);
}

static void test_clock(void **state)
{
	if (getenv("PT_UNDER_VALGRIND"))
		skip(); /* an emulated CPU: the brackets say nothing about the clock */
	struct pt_tstate *t = (my_ring(), pt_probe_tls);
	const char *env = getenv("PT_TEST_CLOCK_SECONDS");
	double secs = env ? atof(env) : 1.0;
	uint64_t end = pt_clock_mono_ns() + (uint64_t)(secs * 1e9);
	int64_t worst = 0;
	long samples = 0;
	while (pt_clock_mono_ns() < end) {
		uint64_t a = pt_clock_mono_ns(), v = pt_clock_now(&t->clk), b = pt_clock_mono_ns();
		if (b - a > 2000)
			continue; /* preempted: the bracket says nothing */
		int64_t err = v < a ? (int64_t)(a - v) : v > b ? (int64_t)(v - b) : 0;
		if (err > worst)
			worst = err;
		samples++;
		struct timespec ts = {0, 200000};
		nanosleep(&ts, NULL);
	}
	print_message("# clock: %s, worst error %lld ns over %ld samples in %.1f s\n",
		      pt_clock_uses_tsc() ? "tsc" : "clock_gettime", (long long)worst, samples, secs);
	assert_true(samples > 100);
	assert_true(worst < 5000);
}

static void test_disable_env(void **state)
{
	pid_t pid = fork();
	if (pid == 0) {
		setenv("PROFTOP_DISABLE", "1", 1);
		setenv("PT_TEST_CHILD", "1", 1);
		execl(g_self, "test_probe", "--enabled", (char *)NULL);
		_exit(99);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0); /* proftop_enabled() == 0 */
	char path[1200];
	snprintf(path, sizeof path, "%s/%d.session", g_dir, (int)pid);
	assert_int_not_equal(access(path, F_OK), 0);
}

static void test_depth_overflow(void **state)
{
	struct pt_shm_ring *r = my_ring();
	struct pt_shm_rec rec[64];
	drain(r, rec, 64);
	set_reader(1);
	uint64_t dropped = r->dropped;
	for (int i = 0; i < 130; i++)
		proftop_range_push("deep");
	for (int i = 0; i < 130; i++)
		proftop_range_pop();
	/* 128 records into 64 slots with a reader: 64 kept, 64 dropped, +2 too deep */
	assert_int_equal(r->dropped - dropped, 64 + 2);
	assert_int_equal(drain(r, rec, 64), 64);
	assert_int_equal(rec[0].aux, 127);
	assert_int_equal(pt_probe_tls->depth, 0);
	set_reader(0);
}

/* --- NVTX through a fake export table, as nvToolsExt.h would call us --- */
typedef void (*nv_fn)(void);
static nv_fn core[16], core2[16];
static nv_fn *core_t[17], *core2_t[17];
static int get_table(int module, nv_fn ***out, unsigned *size)
{
	*out = module == 1 ? core_t : module == 5 ? core2_t : NULL;
	*size = 16;
	return *out != NULL;
}
static struct {
	size_t sz;
	int (*f)(int, nv_fn ***, unsigned *);
} etbl = {sizeof etbl, get_table};
static const void *get_export(uint32_t id)
{
	return id == 1 ? &etbl : NULL;
}
int InitializeInjectionNvtx2(const void *(*get)(uint32_t));

static void test_nvtx(void **state)
{
	for (int i = 0; i < 16; i++) {
		core_t[i] = &core[i];
		core2_t[i] = &core2[i];
	}
	assert_int_equal(InitializeInjectionNvtx2(get_export), 1);
	assert_non_null(core[9]);
	assert_non_null(core2[12]);
	struct pt_shm_ring *r = my_ring();
	struct pt_shm_rec rec[8];
	drain(r, rec, 8);
	int (*push)(const char *) = (int (*)(const char *))core[9];
	int (*pop)(void) = (int (*)(void))core[11];
	void *(*dcreate)(const char *) = (void *(*)(const char *))core2[12];
	int (*dpop)(void *) = (int (*)(void *))core2[5];
	assert_int_equal(push("BACKWARD"), 0);
	assert_int_equal(push("x"), 1);
	void *dom = dcreate("d");
	struct {
		uint16_t v, size;
		uint32_t cat;
		int32_t ct;
		uint32_t c;
		int32_t pt, r0;
		uint64_t p;
		int32_t mt;
		const char *msg;
	} at = {3, 48, 0, 0, 0, 0, 0, 0, 1, "y"};
	int (*dpush)(void *, const void *) = (int (*)(void *, const void *))core2[4];
	assert_int_equal(dpush(dom, &at), 2);
	assert_int_equal(pop(), 1); /* closes "x" although "d: y" is innermost */
	assert_int_equal(dpop(dom), 1);
	assert_int_equal(pop(), 0);
	assert_int_equal(pop(), -1);
	assert_int_equal(drain(r, rec, 8), 3);
	assert_string_equal(nm(rec[0].name), "x");
	assert_string_equal(nm(rec[1].name), "d: y");
	assert_int_equal(rec[2].kind, PT_KIND_BACKWARD);

	/* torch's emit_nvtx: "aten::mm, seq = 7" is operator aten::mm, one name
	 * for every call (the string area would otherwise fill with one entry per call) */
	uint64_t used = G.hdr->strings_used;
	char msg[64];
	for (int i = 0; i < 20; i++) {
		snprintf(msg, sizeof msg, "aten::mm, seq = %d%s", i, i % 2 ? ", sizes = [[2, 3]]" : "");
		assert_int_equal(push(msg), 0);
		assert_int_equal(pop(), 0);
	}
	assert_int_equal(push("aten::add, op_id = 3"), 0);
	assert_int_equal(pop(), 0);
	assert_int_equal(push(", seq = 4"), 0); /* nothing before the field: kept whole */
	assert_int_equal(pop(), 0);
	struct pt_shm_rec all[32];
	assert_int_equal(drain(r, all, 32), 22);
	for (int i = 0; i < 20; i++) {
		assert_int_equal(all[i].kind, PT_KIND_OPERATOR);
		assert_string_equal(nm(all[i].name), "aten::mm");
	}
	assert_string_equal(nm(all[20].name), "aten::add");
	assert_int_equal(all[21].kind, PT_KIND_USER_DEFINED);
	assert_string_equal(nm(all[21].name), ", seq = 4");
	assert_true(G.hdr->strings_used - used < 128); /* three new names, not twenty-two */
}

static void test_torch_nvtx_len(void **state)
{
	int op;
	const char *s = "aten::addmm, seq = 12, op_id = 3";
	assert_int_equal(pt_probe_torch_nvtx_len(s, strlen(s), &op), 11);
	assert_int_equal(op, 1);
	s = "a, b";
	assert_int_equal(pt_probe_torch_nvtx_len(s, strlen(s), &op), 4);
	assert_int_equal(op, 0);
	s = "forward";
	assert_int_equal(pt_probe_torch_nvtx_len(s, strlen(s), &op), 7);
	assert_int_equal(op, 0);
	s = "x, sizes = ";
	assert_int_equal(pt_probe_torch_nvtx_len(s, 9, &op), 9); /* field cut off by len */
	assert_int_equal(op, 0);
}

/* proftop_step_span (steps whose bounds are known afterwards) and proftop_now */
static void test_step_span(void **state)
{
	struct pt_shm_ring *r = my_ring();
	struct pt_shm_rec rec[8];
	drain(r, rec, 8);
	uint64_t a = proftop_now();
	uint64_t mono = pt_clock_mono_ns();
	assert_true(a > 0 && a <= mono + 1000000); /* the session clock is CLOCK_MONOTONIC */
	uint64_t b = proftop_now();
	assert_true(b >= a);
	proftop_step_span(a, b, 48);
	proftop_step_span(b, b + 3600000000000ull, 1); /* the future is clamped to now */
	proftop_step_span(b + 10, b, 0);                 /* inverted: an empty step at b */
	proftop_step(2);                                  /* starts where the last span ended */
	assert_int_equal(drain(r, rec, 8), 4);
	assert_int_equal(rec[0].kind, PT_KIND_PROFILE_STEP);
	assert_true(rec[0].start_ns == a && rec[0].dur_ns == b - a);
	assert_int_equal(rec[0].arg, 48);
	assert_true(rec[1].start_ns == b && rec[1].start_ns + rec[1].dur_ns <= proftop_now());
	assert_true(rec[2].dur_ns == 0 && rec[2].start_ns == b);
	assert_true(rec[3].start_ns == b);
	assert_int_equal(rec[3].arg, 2);
	/* tokens of the step just recorded: a counter at that step's start, the
	 * one the aggregator reads (agg.h) */
	uint64_t c = proftop_now();
	proftop_step_span(b, c, 4);
	proftop_step_tokens(4 * 512);
	proftop_step_tokens(0); /* unknown: nothing */
	assert_int_equal(drain(r, rec, 8), 2);
	assert_int_equal(rec[1].kind, PT_KIND_COUNTER);
	assert_string_equal(nm(rec[1].name), PT_STEP_TOKENS);
	assert_true(rec[1].start_ns == b);
	double v;
	memcpy(&v, &rec[1].arg, sizeof v);
	assert_true(v == 2048.0);
	set_reader(1);
	assert_int_equal(proftop_reader_attached(), 1);
	set_reader(0);
	assert_int_equal(proftop_reader_attached(), 0);
}

static void test_strings_full(void **state)
{
	struct pt_shm_ring *r = my_ring();
	struct pt_shm_rec rec[64];
	proftop_range_push("outer"); /* a name known before the area fills */
	proftop_range_pop();
	drain(r, rec, 64);
	uint64_t before = G.hdr->dropped_no_string;
	char name[64];
	int i = 0;
	while (G.hdr->dropped_no_string == before && i < 1000) {
		snprintf(name, sizeof name, "unique name number %d", i++);
		proftop_range_push(name);
		proftop_range_pop();
		drain(r, rec, 64);
	}
	assert_true(G.hdr->dropped_no_string == before + 1);
	assert_true(G.hdr->strings_used <= G.strings_bytes);
	proftop_range_push(name); /* still does not fit: no record */
	proftop_range_pop();
	assert_int_equal(drain(r, rec, 64), 0);
	proftop_range_push("outer"); /* known names keep working */
	proftop_range_pop();
	assert_int_equal(drain(r, rec, 64), 1);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--enabled") == 0)
		return proftop_enabled();
	if (strchr(argv[0], '/'))
		g_self = argv[0];
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_clock),
	    cmocka_unit_test(test_clock_preempted_anchor),
	    cmocka_unit_test(test_disable_env),
	    cmocka_unit_test(test_depth_overflow),
	    cmocka_unit_test(test_nvtx),
	    cmocka_unit_test(test_torch_nvtx_len),
	    cmocka_unit_test(test_step_span),
	    cmocka_unit_test(test_strings_full),
	};
	return probe_done(cmocka_run_group_tests(tests, NULL, NULL));
}
