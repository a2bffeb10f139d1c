/*
 * test_probe_cupti.c - the CUPTI backend (probe objects linked in), built
 * twice: against CUDA_HOME's headers (CUDA 13) and, as test_probe_cupti_old,
 * against Debian's CUPTI 11.8 headers. What it covers:
 *
 *  - record layouts: synthetic records built from the real structs of this
 *    header set (13: Kernel10/9/8, Memcpy6; 11.8: Kernel8, Memcpy5; both:
 *    MemcpyPtoP4, Memset4, ExternalCorrelation) translate to the same events
 *    through the layout of each CUPTI version, the layout table's sizes and
 *    offsets match the structs, and a wrong layout is noticed;
 *  - the clock map and checks (probe_cupti_clock.c) on made-up clocks;
 *  - the API callback: runtime calls, driver launches made directly, driver
 *    calls inside a runtime call not recorded twice;
 *  - the whole path synthetic records -> rings -> session reader ->
 *    pt_summarize (device lanes, op/phase attribution, summaries);
 *  - a fake libcupti (tests/gpu/fake_cupti.c, built into a temporary
 *    directory) driving subscribe / buffers / flush / stop for CUPTI 11.8,
 *    12.4, 12.8, 13.0 and 13.1: every kernel launched arrives, attributed,
 *    after its launch; a clock that is not CLOCK_MONOTONIC (a libcupti that
 *    refuses the timestamp callback, and the versions whose callback is
 *    avoided); another profiler taking the activity API mid-run, through the
 *    probe's cupti* symbols (shared: both get the records, its TSC clock is
 *    converted back) and around them (the watchdog says so); a reader that
 *    is slower than the records (the ring never overflows); kernels still
 *    running at the stop (counted as dropped).
 *
 * The unavailable paths run everywhere: a missing libcupti, and where
 * libcupti.so.13 loads but no driver exists, the real failing cuptiSubscribe.
 */
#include "testutil.h"

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include "../../backends/probe_cupti.h"
#include "../../backends/probe_cupti_clock.h"
#include "../../backends/probe_cupti_xlate.h"
#include "../../backends/probe_int.h"
#include "../../backends/session.c"
#include "../../backends/session_copy.c"
#include "../../backends/session_capture.c"
#include "../../backends/session_open.c"
#include "../../backends/session_scan.c"
#include "proftop/agg.h"
#include "proftop/proftop.h"

#if defined(PT_HAVE_CUDA_HEADERS)
#include <cupti.h>
#define HAVE_STRUCTS 1
#else
#define HAVE_STRUCTS 0
#endif
#ifndef PT_TEST_CUPTI_INC
#define PT_TEST_CUPTI_INC "-I/usr/local/cuda/include"
#endif

#define G pt_probe_g
static char g_dir[] = "/tmp/proftop-test-cupti.XXXXXX";
static char g_fake[700]; /* the fake libcupti, "" when it could not be built */

__attribute__((constructor(101))) static void test_env(void)
{
	if (!mkdtemp(g_dir))
		abort();
	setenv("PROFTOP_SESSION_DIR", g_dir, 1);
	setenv("PROFTOP_RINGS", "16", 1);
	setenv("PROFTOP_RING_SLOTS", "4096", 1);
	setenv("PROFTOP_STRINGS_BYTES", "65536", 1);
	setenv("PROFTOP_CUPTI_WATCHDOG_MS", "300", 1);
	setenv("PROFTOP_SIGTERM", "0", 1);
	unsetenv("PROFTOP_DISABLE");
	unsetenv("PROFTOP_CUPTI");
	unsetenv("PROFTOP_CUPTI_SHARE");
}

static int build_fake(void **state)
{
	(void)state;
	if (!HAVE_STRUCTS)
		return 0;
	snprintf(g_fake, sizeof g_fake, "%s/libcupti.so.12", g_dir);
	const char *cc = getenv("CC");
	char cmd[2000];
	snprintf(cmd, sizeof cmd,
		 "%s -shared -fPIC -Wl,-Bsymbolic -Wl,-soname,libcupti.so.12 %s -o %s "
		 "tests/gpu/fake_cupti.c -lpthread 2>&1",
		 cc && *cc ? cc : "cc", PT_TEST_CUPTI_INC, g_fake);
	if (system(cmd) != 0) {
		fprintf(stderr, "could not build the fake libcupti: %s\n", cmd);
		g_fake[0] = 0;
	}
	return 0;
}

/* ---- unavailable paths: run everywhere ---- */

static void test_missing_libcupti(void **state)
{
	char why[256];
	pt_cupti_reset_for_test();
	assert_int_equal(pt_cupti_start("/nonexistent/libcupti.so.13", 0, why, sizeof why), -1);
	assert_int_equal(pt_cupti_state(), PT_CUPTI_OFF);
	if (pt_cupti_built_version())
		assert_non_null(strstr(why, "libcupti not found"));
	else
		assert_non_null(strstr(why, "without the CUDA headers"));
	/* one attempt per process: a second start answers the same, tries nothing */
	char again[256];
	assert_int_equal(pt_cupti_start(NULL, 1, again, sizeof again), -1);
	assert_string_equal(again, why);
}

static void test_no_driver(void **state)
{
	void *cupti = dlopen("libcupti.so.13", RTLD_LAZY | RTLD_NOLOAD);
	if (!cupti)
		cupti = dlopen("libcupti.so.13", RTLD_LAZY);
	void *cuda = dlopen("libcuda.so.1", RTLD_LAZY);
	if (!pt_cupti_built_version() || !cupti || cuda) {
		fprintf(stderr, "skipped: needs libcupti.so.13 and no NVIDIA driver\n");
		if (cuda)
			dlclose(cuda);
		skip();
	}
	char why[256];
	pt_cupti_reset_for_test();
	assert_int_equal(pt_cupti_start(NULL, 1, why, sizeof why), -1);
	assert_non_null(strstr(why, "no NVIDIA driver"));
	/* the driver check skipped: CUPTI itself answers (999 UNKNOWN here), once */
	pt_cupti_reset_for_test();
	setenv("PROFTOP_CUPTI", "libcupti.so.13", 1);
	assert_int_equal(pt_cupti_start(NULL, 0, why, sizeof why), -1);
	unsetenv("PROFTOP_CUPTI");
	assert_non_null(strstr(why, "cuptiSubscribe"));
	assert_int_equal(pt_cupti_state(), PT_CUPTI_OFF);
	/* the probe itself keeps working */
	proftop_range_push("after-cupti");
	proftop_range_pop();
	assert_false(PT_TS_SPECIAL(pt_probe_tls));
}

/* ---- the clock map: pure arithmetic on made-up clocks ---- */

static void test_clock(void **state)
{
	static struct pt_cupti_launch tab[PT_CUPTI_LAUNCHES];
	memset(tab, 0, sizeof tab);
	struct pt_cupti_clock c;
	const uint64_t t0 = 5000000000000ull; /* session clock when tracing started */
	const uint64_t real_off = 1700000000000000000ull;
	pt_cupti_clock_init(&c, tab, t0, PT_CLK_MONO);
	pt_cupti_clock_anchor(&c, PT_CLK_REALTIME, t0 + real_off, t0);
	/* TSC at 2.5 ticks/ns: two anchors 10 ms apart give the slope */
	pt_cupti_clock_anchor(&c, PT_CLK_TSC, 100000000000ull, t0);
	pt_cupti_clock_anchor(&c, PT_CLK_TSC, 100000000000ull + 25000000ull, t0 + 10000000ull);
	uint64_t now = t0 + 20000000ull, s, e;

	/* on the session clock already */
	pt_cupti_launch_note(tab, 7, t0 + 1000000);
	assert_int_equal(pt_cupti_launch_of(tab, 7), t0 + 1000000);
	assert_int_equal(pt_cupti_launch_of(tab, 7 + PT_CUPTI_LAUNCHES), 0); /* other corr, same slot */
	assert_true(pt_cupti_clock_map(&c, 7, t0 + 1002000, t0 + 1005000, now, &s, &e));
	assert_int_equal(s, t0 + 1002000);
	assert_int_equal(e, t0 + 1005000);
	assert_int_equal(c.dom, PT_CLK_MONO);
	assert_int_equal(c.checked, 1);
	assert_int_equal(c.early, 0);

	/* CLOCK_REALTIME records: found, converted */
	pt_cupti_launch_note(tab, 8, t0 + 2000000);
	assert_true(pt_cupti_clock_map(&c, 8, t0 + real_off + 2003000, t0 + real_off + 2004000, now,
				       &s, &e));
	assert_int_equal(c.dom, PT_CLK_REALTIME);
	assert_int_equal(s, t0 + 2003000);
	assert_int_equal(e - s, 1000);
	assert_int_equal(c.switches, 1);

	/* the offset is off: a kernel "before" its launch realigns it */
	pt_cupti_launch_note(tab, 9, t0 + 3000000);
	assert_true(pt_cupti_clock_map(&c, 9, t0 + real_off + 2500000, t0 + real_off + 2600000, now,
				       &s, &e));
	assert_int_equal(s, t0 + 3000000);
	assert_int_equal(e - s, 100000);
	assert_int_equal(c.early, 1);
	assert_int_equal(c.max_early_ns, 500000);
	assert_int_equal(c.realigned, 1);
	/* the next record carries the correction */
	assert_true(pt_cupti_clock_map(&c, 0, t0 + real_off + 4000000, t0 + real_off + 4000100, now,
				       &s, &e));
	assert_int_equal(s, t0 + 4500000);

	/* raw TSC ticks (torch.profiler's clock): 2.5 ticks per ns */
	pt_cupti_launch_note(tab, 10, t0 + 5000000);
	uint64_t tsc = 100000000000ull + 25000000ull - (uint64_t)(2.5 * (10000000.0 - 5001000.0));
	assert_true(pt_cupti_clock_map(&c, 10, tsc, tsc + 2500, now, &s, &e));
	assert_int_equal(c.dom, PT_CLK_TSC);
	assert_true(s >= t0 + 5000990 && s <= t0 + 5001010);
	assert_true(e - s >= 999 && e - s <= 1001);

	/* a start long after its launch is counted, kept */
	pt_cupti_launch_note(tab, 11, t0 + 6000000);
	uint64_t late_now = t0 + 40000000000ull;
	assert_true(pt_cupti_clock_map(&c, 11, t0 + 6000000 + 35000000000ull,
				       t0 + 6000000 + 35000001000ull, late_now, &s, &e));
	assert_int_equal(c.dom, PT_CLK_MONO);
	assert_int_equal(c.late, 1);

	/* on the session clock, early is only counted: nothing to realign */
	pt_cupti_launch_note(tab, 12, t0 + 7000000);
	assert_true(pt_cupti_clock_map(&c, 12, t0 + 6000000, t0 + 6001000, now, &s, &e));
	assert_int_equal(s, t0 + 6000000);
	assert_int_equal(c.early, 2);

	/* nothing fits (a future beyond the margin, or garbage): dropped, counted */
	assert_false(pt_cupti_clock_map(&c, 0, 12345, 12346, now, &s, &e));
	assert_false(pt_cupti_clock_map(&c, 0, now + 5000000000ull, now + 5000000100ull, now, &s, &e));
	assert_int_equal(c.unmapped, 2);

	/* CUPTI's own clock: a jump means it was replaced; two pairs give a slope */
	assert_int_equal(pt_cupti_clock_anchor(&c, PT_CLK_CUPTI, t0 + 100, t0), 0);
	assert_int_equal(pt_cupti_clock_anchor(&c, PT_CLK_CUPTI, t0 + 2000100, t0 + 2000000), 0);
	assert_true(c.map[PT_CLK_CUPTI].valid);
	assert_int_equal(pt_cupti_clock_anchor(&c, PT_CLK_CUPTI, 777000000000ull, t0 + 3000000), 1);
	assert_false(c.map[PT_CLK_CUPTI].valid);
	assert_string_equal(pt_cupti_dom_name(PT_CLK_TSC), "TSC");
}

#if HAVE_STRUCTS

/* ---- record layouts ---- */

struct fake_strings {
	char s[64][256];
	uint32_t n, calls;
};

static uint32_t fake_intern(void *ctx, const char *s, size_t len)
{
	struct fake_strings *f = ctx;
	f->calls++;
	for (uint32_t i = 0; i < f->n; i++)
		if (strlen(f->s[i]) == len && !memcmp(f->s[i], s, len))
			return (i + 1) * 8;
	snprintf(f->s[f->n], sizeof f->s[0], "%.*s", (int)len, s);
	return ++f->n * 8;
}

static const char *fake_name(struct fake_strings *f, uint32_t off)
{
	assert_true(off >= 8 && off / 8 <= f->n);
	return f->s[off / 8 - 1];
}

/* Offsets of the layout row against a real struct of this header set. */
#define CHECK_KERNEL(T, l)                                                                         \
	do {                                                                                       \
		assert_int_equal((l)->k_start, offsetof(T, start));                                \
		assert_int_equal((l)->k_end, offsetof(T, end));                                    \
		assert_int_equal((l)->k_device, offsetof(T, deviceId));                            \
		assert_int_equal((l)->k_stream, offsetof(T, streamId));                            \
		assert_int_equal((l)->k_corr, offsetof(T, correlationId));                         \
		assert_int_equal((l)->k_name, offsetof(T, name));                                  \
	} while (0)
#define CHECK_MEMCPY(T, l)                                                                         \
	do {                                                                                       \
		assert_int_equal((l)->m_copy_kind, offsetof(T, copyKind));                         \
		assert_int_equal((l)->m_bytes, offsetof(T, bytes));                                \
		assert_int_equal((l)->m_start, offsetof(T, start));                                \
		assert_int_equal((l)->m_end, offsetof(T, end));                                    \
		assert_int_equal((l)->m_device, offsetof(T, deviceId));                            \
		assert_int_equal((l)->m_stream, offsetof(T, streamId));                            \
		assert_int_equal((l)->m_corr, offsetof(T, correlationId));                         \
	} while (0)

static void test_layout_table(void **state)
{
	int newer = 0;
	assert_null(pt_cupti_layout_for(17, &newer)); /* 11.6: before 11.8 */
	assert_null(pt_cupti_layout_for(5000, &newer));
	const struct pt_cupti_layout *l118 = pt_cupti_layout_for(18, &newer);
	assert_false(newer);
	assert_string_equal(l118->cuda, "11.8");
	const struct pt_cupti_layout *l124 = pt_cupti_layout_for(22, NULL);
	const struct pt_cupti_layout *l128 = pt_cupti_layout_for(26, NULL);
	const struct pt_cupti_layout *l130 = pt_cupti_layout_for(130001, NULL);
	const struct pt_cupti_layout *l131 = pt_cupti_layout_for(130100, NULL);
	assert_string_equal(l124->kernel_struct, "Kernel9");
	assert_string_equal(l128->memcpy_struct, "Memcpy6");
	assert_string_equal(l130->kernel_struct, "Kernel10");
	assert_string_equal(l131->kernel_struct, "Kernel11");
	assert_ptr_equal(pt_cupti_layout_for(140000, &newer), l131);
	assert_true(newer);
	/* the sizes and offsets are those of the real structs */
	const struct pt_cupti_layout *all[] = {l118, l124, l128, l130, l131};
	for (size_t i = 0; i < 5; i++) {
		CHECK_KERNEL(CUpti_ActivityKernel8, all[i]);
		assert_int_equal(all[i]->ptop_bytes, sizeof(CUpti_ActivityMemcpyPtoP4));
		assert_int_equal(all[i]->p_corr, offsetof(CUpti_ActivityMemcpyPtoP4, correlationId));
		assert_int_equal(all[i]->p_bytes, offsetof(CUpti_ActivityMemcpyPtoP4, bytes));
		assert_int_equal(all[i]->p_stream, offsetof(CUpti_ActivityMemcpyPtoP4, streamId));
		assert_int_equal(all[i]->memset_bytes, sizeof(CUpti_ActivityMemset4));
		assert_int_equal(all[i]->s_corr, offsetof(CUpti_ActivityMemset4, correlationId));
		assert_int_equal(all[i]->s_bytes, offsetof(CUpti_ActivityMemset4, bytes));
		assert_int_equal(all[i]->e_ext_id, offsetof(CUpti_ActivityExternalCorrelation, externalId));
		assert_int_equal(all[i]->e_corr,
				 offsetof(CUpti_ActivityExternalCorrelation, correlationId));
	}
	assert_int_equal(l118->kernel_bytes, sizeof(CUpti_ActivityKernel8));
#if CUPTI_API_VERSION >= 130000
	CHECK_KERNEL(CUpti_ActivityKernel9, l124);
	CHECK_KERNEL(CUpti_ActivityKernel10, l130);
	CHECK_MEMCPY(CUpti_ActivityMemcpy6, l128);
	assert_int_equal(l124->kernel_bytes, sizeof(CUpti_ActivityKernel9));
	assert_int_equal(l128->kernel_bytes, sizeof(CUpti_ActivityKernel9));
	assert_int_equal(l130->kernel_bytes, sizeof(CUpti_ActivityKernel10));
	assert_int_equal(l128->memcpy_bytes, sizeof(CUpti_ActivityMemcpy6));
	assert_int_equal(l130->memcpy_bytes, sizeof(CUpti_ActivityMemcpy6));
#else
	CHECK_MEMCPY(CUpti_ActivityMemcpy5, l118);
	CHECK_MEMCPY(CUpti_ActivityMemcpy5, l124);
	assert_int_equal(l118->memcpy_bytes, sizeof(CUpti_ActivityMemcpy5));
	assert_int_equal(l124->memcpy_bytes, sizeof(CUpti_ActivityMemcpy5));
#endif
}

/* One buffer as CUPTI version v writes it, from this header set's structs:
 * ext correlation, two kernels back to back, a copy, a peer copy, a memset.
 * Returns its length; *has_copy is 0 when this header set lacks that
 * version's copy struct (the other build covers it). */
static size_t version_buffer(uint32_t v, uint8_t *buf, int *has_copy)
{
	size_t at = 0;
	CUpti_ActivityExternalCorrelation ec;
	memset(&ec, 0, sizeof ec);
	ec.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
	ec.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
	ec.externalId = 0xabcdef;
	ec.correlationId = 42;
	memcpy(buf + at, &ec, sizeof ec);
	at += sizeof ec;
#define KERNEL(T)                                                                                  \
	do {                                                                                       \
		for (int i = 0; i < 2; i++) {                                                      \
			T k;                                                                       \
			memset(&k, 0, sizeof k);                                                   \
			k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;                            \
			k.name = i ? "ncclDevKernel_AllReduce_Sum_f32" : "_Z6gemm_kILi4EEvPfS0_i";  \
			k.start = 1000 + (uint64_t)i * 5000;                                       \
			k.end = 1500 + (uint64_t)i * 5000;                                         \
			k.deviceId = 1;                                                            \
			k.streamId = 7 + (uint32_t)i;                                              \
			k.correlationId = 42 + (uint32_t)i;                                        \
			k.gridX = 99;                                                              \
			memcpy(buf + at, &k, sizeof k);                                            \
			at += sizeof k;                                                            \
		}                                                                                  \
	} while (0)
#if CUPTI_API_VERSION >= 130000
	if (v >= 130000)
		KERNEL(CUpti_ActivityKernel10);
	else if (v >= 19)
		KERNEL(CUpti_ActivityKernel9);
	else
#endif
		KERNEL(CUpti_ActivityKernel8);
	*has_copy = 0;
#define MEMCPY(T)                                                                                  \
	do {                                                                                       \
		T m;                                                                               \
		memset(&m, 0, sizeof m);                                                           \
		m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;                                               \
		m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;                                      \
		m.bytes = 1 << 20;                                                                 \
		m.start = 3000;                                                                    \
		m.end = 3100;                                                                      \
		m.deviceId = 0;                                                                    \
		m.streamId = 7;                                                                    \
		m.correlationId = 45;                                                              \
		memcpy(buf + at, &m, sizeof m);                                                    \
		at += sizeof m;                                                                    \
		*has_copy = 1;                                                                     \
	} while (0)
#if CUPTI_API_VERSION >= 130000
	if (v >= 26)
		MEMCPY(CUpti_ActivityMemcpy6);
#else
	if (v < 26)
		MEMCPY(CUpti_ActivityMemcpy5);
#endif
	CUpti_ActivityMemcpyPtoP4 p;
	memset(&p, 0, sizeof p);
	p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	p.bytes = 4096;
	p.start = 3200;
	p.end = 3300;
	p.deviceId = 1;
	p.streamId = 9;
	p.correlationId = 46;
	memcpy(buf + at, &p, sizeof p);
	at += sizeof p;
	CUpti_ActivityMemset4 s;
	memset(&s, 0, sizeof s);
	s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	s.bytes = 512;
	s.start = 3400;
	s.end = 3410;
	s.streamId = 7;
	s.correlationId = 47;
	memcpy(buf + at, &s, sizeof s);
	at += sizeof s;
	return at;
}

/* Size of the record at p as version v writes it (for walking the buffer). */
static size_t record_size(uint32_t v, const uint8_t *p)
{
	const struct pt_cupti_layout *l = pt_cupti_layout_for(v, NULL);
	uint32_t kind;
	memcpy(&kind, p, 4);
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return l->kernel_bytes;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return l->memcpy_bytes;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return l->ptop_bytes;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return l->memset_bytes;
	default:
		return sizeof(CUpti_ActivityExternalCorrelation);
	}
}

static void test_layout_records(void **state)
{
	static const uint32_t versions[] = {18, 22, 26, 130001};
	static struct pt_cupti_xlate x;
	uint8_t *buf = aligned_alloc(8, 4096);
	struct pt_shm_rec want[16];
	int nwant = -1;
	for (size_t vi = 0; vi < sizeof versions / sizeof *versions; vi++) {
		uint32_t v = versions[vi];
#if CUPTI_API_VERSION < 130000
		if (v >= 19)
			continue; /* this header set has no Kernel9/10: the CUDA 13 build covers them */
#endif
		int has_copy;
		size_t len = version_buffer(v, buf, &has_copy);
		struct fake_strings f = {0};
		pt_cupti_xlate_init(&x, pt_cupti_layout_for(v, NULL), NULL, fake_intern, &f, NULL);
		pt_cupti_xlate_buffer(&x, 0);
		struct pt_shm_rec got[16];
		int n = 0;
		for (size_t at = 0; at < len; at += record_size(v, buf + at)) {
			struct pt_shm_rec out[2];
			int k = pt_cupti_xlate(&x, buf + at, out);
			for (int j = 0; j < k; j++)
				got[n++] = out[j];
		}
		assert_int_equal(x.odd_stride, 0);
		assert_int_equal(x.kernels, 1);
		assert_int_equal(x.comms, 1);
		assert_int_equal(x.memcpys, 1 + has_copy);
		assert_int_equal(x.memsets, 1);
		assert_int_equal(x.ext_records, 1);
		/* the kernel pair: same events whatever the version */
		assert_int_equal(got[0].kind, PT_KIND_KERNEL);
		assert_int_equal(got[0].start_ns, 1000);
		assert_int_equal(got[0].dur_ns, 500);
		assert_string_equal(fake_name(&f, got[0].name), "_Z6gemm_kILi4EEvPfS0_i");
		assert_int_equal(got[1].kind, PT_SHM_REC_EXT);
		assert_int_equal(got[1].start_ns, 42);
		assert_int_equal(got[1].dur_ns, (1ull << 32) | 7);
		assert_int_equal(got[1].arg, 0xabcdef);
		assert_int_equal(got[2].kind, PT_KIND_COMMUNICATION);
		assert_int_equal(got[3].dur_ns, (1ull << 32) | 8);
		if (has_copy) {
			assert_int_equal(got[4].kind, PT_KIND_MEMCPY);
			assert_int_equal(got[4].arg, 1 << 20);
			assert_string_equal(fake_name(&f, got[4].name), "Memcpy HtoD");
			assert_int_equal(got[5].start_ns, 45);
		}
		struct pt_shm_rec *ptop = &got[has_copy ? 6 : 4];
		assert_int_equal(ptop[0].arg, 4096);
		assert_string_equal(fake_name(&f, ptop[0].name), "Memcpy PtoP");
		assert_int_equal(ptop[1].dur_ns, (1ull << 32) | 9);
		assert_int_equal(ptop[1].start_ns, 46);
		assert_int_equal(ptop[2].kind, PT_KIND_MEMSET);
		assert_int_equal(ptop[2].arg, 512);
		assert_int_equal(ptop[3].start_ns, 47);
		/* every version with a copy gives the very same records */
		if (has_copy) {
			if (nwant < 0) {
				memcpy(want, got, sizeof(struct pt_shm_rec) * (size_t)n);
				nwant = n;
			} else {
				assert_int_equal(n, nwant);
				assert_memory_equal(want, got, sizeof(struct pt_shm_rec) * (size_t)n);
			}
		}
	}
	/* Kernel8 records read as if CUPTI 13 wrote them: the spacing gives it away */
	int has_copy;
	size_t len = version_buffer(18, buf, &has_copy);
	struct fake_strings f = {0};
	pt_cupti_xlate_init(&x, pt_cupti_layout_for(130001, NULL), NULL, fake_intern, &f, NULL);
	pt_cupti_xlate_buffer(&x, 0);
	for (size_t at = 0; at < len; at += record_size(18, buf + at)) {
		struct pt_shm_rec out[2];
		pt_cupti_xlate(&x, buf + at, out);
	}
	assert_int_equal(x.odd_stride, 1);
	assert_int_equal(x.last_stride, sizeof(CUpti_ActivityKernel8));
	free(buf);
}

static CUpti_ActivityKernel8 kernel(const char *name, uint64_t start, uint64_t end, uint32_t dev,
				    uint32_t stream, uint32_t corr)
{
	CUpti_ActivityKernel8 k; /* the fields read sit where every later version has them */
	memset(&k, 0, sizeof k);
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.name = name;
	k.start = start;
	k.end = end;
	k.deviceId = dev;
	k.streamId = stream;
	k.correlationId = corr;
	return k;
}

static void test_xlate_records(void **state)
{
	static struct pt_cupti_xlate x;
	struct fake_strings f = {0};
	pt_cupti_demangle_fn dem = NULL;
	void *cxx = dlopen("libstdc++.so.6", RTLD_LAZY);
	if (cxx)
		dem = (pt_cupti_demangle_fn)dlsym(cxx, "__cxa_demangle");
	pt_cupti_xlate_init(&x, pt_cupti_layout_for(CUPTI_API_VERSION, NULL), NULL, fake_intern, &f,
			    dem);
	struct pt_shm_rec out[2];

	char mangled[] = "_Z6gemm_kILi4EEvPfS0_i"; /* void gemm_k<4>(float*, float*, int) */
	CUpti_ActivityKernel8 k = kernel(mangled, 1000, 1500, 1, 7, 42);
	assert_int_equal(pt_cupti_xlate(&x, &k, out), 2);
	if (dem)
		assert_string_equal(fake_name(&f, out[0].name), "void gemm_k<4>(float*, float*, int)");
	else
		assert_string_equal(fake_name(&f, out[0].name), mangled);
	/* the same pointer again: from the cache, no new interning */
	uint32_t calls = f.calls;
	k.correlationId = 43;
	assert_int_equal(pt_cupti_xlate(&x, &k, out), 2);
	assert_int_equal(f.calls, calls);
	assert_int_equal(out[1].arg, 0); /* no external id for 43 */
	/* the pointer reused for another name (module unloaded): noticed */
	strcpy(mangled, "_Z6relu_kPf");
	assert_int_equal(pt_cupti_xlate(&x, &k, out), 2);
	assert_string_equal(fake_name(&f, out[0].name), dem ? "relu_k(float*)" : "_Z6relu_kPf");

	/* NCCL kernels are communication, mangled or not */
	CUpti_ActivityKernel8 n = kernel("_Z24ncclDevKernel_AllReduce_Sum_f32P11ncclDevComm", 2000,
					 2600, 0, 13, 44);
	assert_int_equal(pt_cupti_xlate(&x, &n, out), 2);
	assert_int_equal(out[0].kind, PT_KIND_COMMUNICATION);
	assert_true(pt_cupti_is_comm_name("ncclKernel_AllGather_RING_LL"));
	assert_true(pt_cupti_is_comm_name("void ncclDevKernel<1>(int)"));
	assert_false(pt_cupti_is_comm_name("_Z4gemmv"));

	/* bad timestamps are dropped and counted; end == start is a 0-length activity */
	CUpti_ActivityKernel8 b0 = kernel("_Z4gemmv", 0, 0, 0, 7, 48);
	CUpti_ActivityKernel8 b1 = kernel("_Z4gemmv", 5000, 4000, 0, 7, 49);
	CUpti_ActivityKernel8 z = kernel("_Z4gemmv", 5000, 5000, 0, 7, 50);
	assert_int_equal(pt_cupti_xlate(&x, &b0, out), 0);
	assert_int_equal(pt_cupti_xlate(&x, &b1, out), 0);
	assert_int_equal(pt_cupti_xlate(&x, &z, out), 2);
	assert_int_equal(out[0].dur_ns, 0);
	assert_int_equal(x.bad_ts, 2);
	/* through a clock map: CLOCK_REALTIME records land on the session clock */
	struct pt_cupti_clock c;
	pt_cupti_clock_init(&c, NULL, 1000000000000ull, PT_CLK_MONO);
	pt_cupti_clock_anchor(&c, PT_CLK_REALTIME, 1700000000000000000ull, 1000000000000ull);
	x.clock = &c;
	x.now_ns = 1000000000000ull;
	CUpti_ActivityKernel8 r = kernel("_Z4gemmv", 1700000000000000000ull - 5000,
					 1700000000000000000ull - 4000, 0, 7, 51);
	assert_int_equal(pt_cupti_xlate(&x, &r, out), 2);
	assert_int_equal(out[0].start_ns, 1000000000000ull - 5000);
	assert_int_equal(out[0].dur_ns, 1000);
	CUpti_ActivityKernel8 junk = kernel("_Z4gemmv", 77, 78, 0, 7, 52);
	assert_int_equal(pt_cupti_xlate(&x, &junk, out), 0);
	assert_int_equal(x.bad_clock, 1);
	/* kinds not translated are ignored */
	CUpti_ActivityAPI api;
	memset(&api, 0, sizeof api);
	api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	assert_int_equal(pt_cupti_xlate(&x, &api, out), 0);
	assert_int_equal(x.ignored, 1);
}

/* ---- reading back what the probe wrote ---- */

static struct pt_session *g_sess;
static struct pt_trace *g_trace; /* the last one drain(NULL) made */

/* Drains into t, or into a new trace (owned here: never freed by the caller).
 * The reader keeps ids per trace and knows a trace by its address, so the
 * last one is freed only once the next exists. */
static struct pt_trace *drain(struct pt_trace *t)
{
	char err[256];
	if (!g_sess)
		assert_int_equal(pt_session_open(G.path, &g_sess, err, sizeof err), 0);
	if (!t) {
		t = pt_trace_new(0);
		pt_trace_free(g_trace);
		g_trace = t;
	}
	pt_session_drain(g_sess, t, pt_clock_mono_ns());
	/* a record waiting for a possible EXT is held until the next drain */
	pt_session_drain(g_sess, t, pt_clock_mono_ns());
	return t;
}

static uint64_t source_dropped(void)
{
	drain(NULL);
	return pt_session_stats(g_sess)->source_dropped;
}

struct seen {
	uint32_t nkernels, nmemcpy, nruntime;
	uint32_t kernel_corr[20000];
	uint64_t kernel_start[20000];
	uint32_t rt_corr[20000];
	uint64_t rt_start[20000];
	char rt_name[64][32];
	uint32_t nnotes;
	char notes[16][240];
};

static void collect(struct pt_trace *t, struct seen *s)
{
	memset(s, 0, sizeof *s);
	for (uint32_t tr = 0; tr < t->ntracks; tr++) {
		struct pt_store_iter it;
		pt_store_iter_init(&it, t->store, tr, 0, UINT64_MAX);
		struct pt_event *ev;
		while ((ev = pt_store_iter_next(&it))) {
			if (ev->kind == PT_KIND_KERNEL || ev->kind == PT_KIND_COMMUNICATION) {
				if (s->nkernels < 20000) {
					s->kernel_corr[s->nkernels] = ev->corr;
					s->kernel_start[s->nkernels] = ev->start_ns;
				}
				s->nkernels++;
			} else if (ev->kind == PT_KIND_MEMCPY) {
				s->nmemcpy++;
			} else if (ev->kind == PT_KIND_CUDA_RUNTIME && s->nruntime < 20000) {
				if (s->nruntime < 64)
					snprintf(s->rt_name[s->nruntime], 32, "%s",
						 pt_trace_str(t, ev->name_id));
				s->rt_corr[s->nruntime] = ev->corr;
				s->rt_start[s->nruntime++] = ev->start_ns;
			}
		}
		pt_store_iter_done(&it);
	}
	for (uint32_t i = 0; i < t->nnotes && i < 16; i++)
		snprintf(s->notes[s->nnotes++], sizeof s->notes[0], "%s", pt_trace_note_text(t, i));
}

static int has_note(const struct seen *s, const char *part)
{
	for (uint32_t i = 0; i < s->nnotes; i++)
		if (strstr(s->notes[i], part))
			return 1;
	return 0;
}

static uint32_t count_runtime(const struct seen *s, const char *name)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->nruntime && i < 64; i++)
		n += !strcmp(s->rt_name[i], name);
	return n;
}

/* Every kernel after the call that launched it (and within a second of it). */
static void assert_kernels_after_launch(const struct seen *s)
{
	uint32_t matched = 0;
	for (uint32_t k = 0; k < s->nkernels && k < 20000; k++)
		for (uint32_t r = 0; r < s->nruntime; r++)
			if (s->rt_corr[r] == s->kernel_corr[k]) {
				assert_true(s->kernel_start[k] + 100000 >= s->rt_start[r]);
				assert_true(s->kernel_start[k] < s->rt_start[r] + 1000000000ull);
				matched++;
				break;
			}
	if (matched != s->nkernels) {
		for (uint32_t k = 0; k < s->nkernels && k < 64; k++)
			fprintf(stderr, "kernel corr %u start %llu\n", s->kernel_corr[k],
				(unsigned long long)s->kernel_start[k]);
		for (uint32_t r = 0; r < s->nruntime && r < 64; r++)
			fprintf(stderr, "call %s corr %u start %llu\n", s->rt_name[r], s->rt_corr[r],
				(unsigned long long)s->rt_start[r]);
	}
	assert_int_equal(matched, s->nkernels);
}

/* ---- the API callback ---- */

static uint64_t call(int domain, const char *fn, uint32_t corr, unsigned cbid, int nested_driver)
{
	uint64_t slot = 0, slot2 = 0;
	CUpti_CallbackData d;
	memset(&d, 0, sizeof d);
	d.functionName = fn;
	d.correlationData = &slot;
	d.correlationId = corr;
	d.callbackSite = CUPTI_API_ENTER;
	pt_cupti_api_callback(NULL, domain, cbid, &d);
	uint64_t t0 = slot;
	CUpti_CallbackData dd = d;
	dd.functionName = "cuLaunchKernel";
	dd.correlationData = &slot2;
	if (nested_driver) /* what cudaLaunchKernel does inside: not an event of its own */
		pt_cupti_api_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API,
				      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &dd);
	usleep(200);
	if (nested_driver) {
		dd.callbackSite = CUPTI_API_EXIT;
		pt_cupti_api_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API,
				      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &dd);
	}
	d.callbackSite = CUPTI_API_EXIT;
	pt_cupti_api_callback(NULL, domain, cbid, &d);
	/* another domain is ignored */
	pt_cupti_api_callback(NULL, CUPTI_CB_DOMAIN_RESOURCE, cbid, &d);
	return t0;
}

static uint64_t launch(const char *fn, uint32_t corr, unsigned cbid)
{
	return call(CUPTI_CB_DOMAIN_RUNTIME_API, fn, corr, cbid, 1);
}

static void test_driver_calls(void **state)
{
	struct pt_trace *t = drain(NULL); /* what earlier tests left */
	proftop_op_push("op::rt");
	launch("cudaLaunchKernel", 901, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	proftop_op_pop();
	proftop_op_push("op::triton");
	call(CUPTI_CB_DOMAIN_DRIVER_API, "cuLaunchKernel", 902, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
	     0);
	call(CUPTI_CB_DOMAIN_DRIVER_API, "cuLaunchKernelEx", 903,
	     CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 0);
	call(CUPTI_CB_DOMAIN_DRIVER_API, "cuStreamSynchronize", 904,
	     CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, 0);
	proftop_op_pop();
	t = drain(NULL);
	struct seen *s = malloc(sizeof *s);
	collect(t, s);
	assert_int_equal(s->nruntime, 4);
	assert_int_equal(count_runtime(s, "cudaLaunchKernel"), 1);
	assert_int_equal(count_runtime(s, "cuLaunchKernel"), 1); /* not the one inside cudaLaunchKernel */
	assert_int_equal(count_runtime(s, "cuLaunchKernelEx"), 1);
	for (uint32_t i = 0; i < s->nruntime; i++)
		assert_true(s->rt_corr[i] >= 901 && s->rt_corr[i] <= 904);
	free(s);
}

/* ---- the whole path: callback + buffers -> rings -> reader -> summary ---- */

struct dev_job {
	uint64_t base;
};

static void *cupti_thread(void *arg)
{
	struct dev_job *j = arg;
	uint64_t b = j->base;
	/* device 0: a gemm on stream 7 [b+1000, b+5000), an NCCL all-reduce on
	 * stream 13 [b+3000, b+9000) (overlap 2000); device 1: a gemm on stream 7
	 * [b+2000, b+4000); a copy on device 0 */
	static CUpti_ActivityKernel8 k0, k1, c0, bad;
	static uint8_t m0[128];
	k0 = kernel("_Z4gemmv", b + 1000, b + 5000, 0, 7, 11);
	c0 = kernel("ncclDevKernel_AllReduce_Sum_f32", b + 3000, b + 9000, 0, 13, 12);
	k1 = kernel("_Z4gemmv", b + 2000, b + 4000, 1, 7, 11);
	/* a DtoH copy, in the layout all copy structs share */
	const struct pt_cupti_layout *l = pt_cupti_layout_for(CUPTI_API_VERSION, NULL);
	memset(m0, 0, sizeof m0);
	uint32_t kind = CUPTI_ACTIVITY_KIND_MEMCPY, dev = 0, stream = 7, corr = 13;
	uint64_t bytes = 256, start = b + 9500, end = b + 9600;
	memcpy(m0, &kind, 4);
	m0[l->m_copy_kind] = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
	memcpy(m0 + l->m_bytes, &bytes, 8);
	memcpy(m0 + l->m_start, &start, 8);
	memcpy(m0 + l->m_end, &end, 8);
	memcpy(m0 + l->m_device, &dev, 4);
	memcpy(m0 + l->m_stream, &stream, 4);
	memcpy(m0 + l->m_corr, &corr, 4);
	bad = kernel("_Z4gemmv", 0, 10, 0, 7, 11);
	const void *recs[] = {&k0, &c0, &k1, m0, &bad};
	pt_cupti_take_records(CUPTI_API_VERSION, recs, 5);
	return NULL;
}

static const struct pt_row *row_named(const struct pt_trace *t, const struct pt_table *tb,
				      const char *name)
{
	for (size_t i = 0; i < tb->n; i++)
		if (!strcmp(pt_trace_str(t, tb->rows[i].name_id), name))
			return &tb->rows[i];
	return NULL;
}

static void test_end_to_end(void **state)
{
	drain(NULL); /* what earlier tests left */
	uint64_t dropped0 = source_dropped();
	proftop_step_begin();
	proftop_phase_push(PROFTOP_PHASE_FORWARD);
	proftop_op_push("aten::mm");
	uint64_t base = launch("cudaLaunchKernel", 11, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	proftop_op_pop();
	proftop_phase_pop();
	proftop_phase_push(PROFTOP_PHASE_BACKWARD);
	proftop_op_push("nccl:all_reduce");
	launch("cudaLaunchKernel", 12, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	launch("cudaMemcpyAsync", 13, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020);
	launch("cudaDeviceSynchronize", 14, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020);
	proftop_op_pop();
	proftop_phase_pop();
	usleep(100); /* the step outlasts the device work (base + 9.6 us) */
	struct dev_job j = {base};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, cupti_thread, &j), 0);
	pthread_join(th, NULL);
	proftop_step(8);

	struct pt_trace *t = drain(NULL);
	assert_int_equal(pt_session_stats(g_sess)->bad_records, 0);
	assert_true(pt_session_stats(g_sess)->source_dropped >= dropped0 + 1); /* the start-0 kernel */

	/* one lane per (device, stream): GPU 0/7, GPU 0/13, GPU 1/7 */
	int lanes = 0, seen[2][14] = {{0}};
	for (uint32_t i = 0; i < t->ntracks; i++) {
		const struct pt_track *tr = &t->tracks[i];
		if (!pt_track_is_device(tr))
			continue;
		lanes++;
		assert_true(tr->device >= 0 && tr->device < 2 && tr->stream < 14);
		seen[tr->device][tr->stream]++;
	}
	assert_int_equal(lanes, 3);
	assert_int_equal(seen[0][7], 1);
	assert_int_equal(seen[0][13], 1);
	assert_int_equal(seen[1][7], 1);

	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	struct pt_summary *sum = pt_summarize(t, &o);
	assert_true(sum->has_gpu);
	assert_int_equal(sum->nsteps, 1);
	/* attribution: aten::mm launched corr 11 (two gemms, 4000 + 2000 ns) */
	const struct pt_row *mm = row_named(t, &sum->operators, "aten::mm");
	assert_non_null(mm);
	assert_int_equal(mm->gpu.total_ns, 6000);
	const struct pt_row *ar = row_named(t, &sum->operators, "nccl:all_reduce");
	assert_non_null(ar);
	assert_int_equal(ar->gpu.total_ns, 6000 + 100);
	assert_int_equal(sum->model[PT_MS_FORWARD].gpu.total_ns, 6000);
	assert_int_equal(sum->model[PT_MS_BACKWARD].gpu.total_ns, 6100);
	/* runtime calls on the launching thread, sync flagged */
	const struct pt_row *k = row_named(t, &sum->kernels, "ncclDevKernel_AllReduce_Sum_f32");
	assert_non_null(k);
	assert_int_equal(k->kind, PT_KIND_COMMUNICATION);
	assert_int_equal(sum->overview[PT_KIND_CUDA_RUNTIME].calls, 4);
	assert_int_equal(sum->overview[PT_KIND_KERNEL].calls, 2);
	assert_int_equal(sum->overview[PT_KIND_COMMUNICATION].calls, 1);
	assert_int_equal(sum->overview[PT_KIND_MEMCPY].calls, 1);
	/* devices: busy = union over streams */
	assert_int_equal(sum->ndevices, 2);
	for (size_t i = 0; i < sum->ndevices; i++) {
		const struct pt_device_row *d = &sum->devices[i];
		if (d->device == 0) {
			assert_int_equal(d->busy_ns, 8000); /* [1000, 9000) */
			assert_int_equal(d->kernels, 2);
			assert_int_equal(d->memcpys, 1);
			assert_int_equal(d->memcpy_bytes, 256);
		} else {
			assert_int_equal(d->device, 1);
			assert_int_equal(d->busy_ns, 2000);
		}
		assert_true(d->util_pct > 0 && d->util_pct <= 100);
		assert_true(d->span_ns > 0);
	}
	/* distributed: comm 6000, computation 4000 + 2000 merged = [1000,5000) ∪ dev1 */
	assert_int_equal(sum->dist.comm_ns, 6000);
	assert_int_equal(sum->dist.comp_ns, 4000);
	assert_int_equal(sum->dist.overlap_ns, 2000);
	assert_int_equal(sum->dist.comm_from_host, 0);
	pt_summary_free(sum);
}

/* ---- a fake libcupti: the probe's own start, buffers, flushes, stop ---- */

struct fake {
	void *h;
	uint32_t (*launch)(int api, const char *name, uint32_t dev, uint32_t stream, uint64_t dur,
			   int n);
	uint32_t (*copy)(uint64_t bytes, uint32_t dev, uint32_t stream);
	void (*finish)(void);
	void (*reset)(uint32_t version, int refuse_clock);
	void (*foreign_start)(void);
	uint64_t (*foreign_stop)(void);
	int (*has_clock)(void);
	uint64_t (*kinds)(void);
	CUptiResult (*flush)(uint32_t);
	CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
} F;

static int fake_ready(void)
{
	if (!g_fake[0])
		return 0;
	if (F.h)
		return 1;
	F.h = dlopen(g_fake, RTLD_NOW | RTLD_LOCAL);
	if (!F.h)
		return 0;
	*(void **)&F.launch = dlsym(F.h, "fake_cupti_launch");
	*(void **)&F.copy = dlsym(F.h, "fake_cupti_memcpy");
	*(void **)&F.finish = dlsym(F.h, "fake_cupti_gpu_finish");
	*(void **)&F.reset = dlsym(F.h, "fake_cupti_reset");
	*(void **)&F.foreign_start = dlsym(F.h, "fake_cupti_foreign_start");
	*(void **)&F.foreign_stop = dlsym(F.h, "fake_cupti_foreign_stop");
	*(void **)&F.has_clock = dlsym(F.h, "fake_cupti_has_clock");
	*(void **)&F.kinds = dlsym(F.h, "fake_cupti_kinds");
	*(void **)&F.flush = dlsym(F.h, "cuptiActivityFlushAll");
	*(void **)&F.next = dlsym(F.h, "cuptiActivityGetNextRecord");
	return F.launch && F.reset && F.flush;
}

#define NEED_FAKE()                                                                                \
	do {                                                                                       \
		if (!fake_ready()) {                                                               \
			fprintf(stderr, "skipped: no fake libcupti (no compiler?)\n");             \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

/* The version the fake plays in the tests below: one whose records this header set declares. */
#if CUPTI_API_VERSION >= 130000
#define TEST_VERSION 130100
#else
#define TEST_VERSION 18
#endif

static void start_fake(uint32_t version, int refuse_clock)
{
	char why[256];
	drain(NULL); /* what earlier tests left */
	pt_cupti_reset_for_test();
	F.reset(version, refuse_clock);
	assert_int_equal(pt_cupti_start(g_fake, 0, why, sizeof why), 0);
	assert_int_equal(pt_cupti_state(), PT_CUPTI_ON);
}

/* Every way a kernel gets launched, once, each in an op of its own. */
static uint32_t launch_all_ways(void)
{
	proftop_op_push("op::runtime");
	F.launch(0, "_Z4gemmv", 0, 7, 5000, 1);
	proftop_op_pop();
	proftop_op_push("op::triton");
	F.launch(1, "triton_poi_fused_add_0", 0, 7, 3000, 1);
	proftop_op_pop();
	proftop_op_push("op::cluster");
	F.launch(2, "cutlass_sm90_gemm", 1, 9, 3000, 1);
	proftop_op_pop();
	proftop_op_push("op::graph");
	F.launch(3, "graph_kernel", 0, 11, 1000, 3);
	proftop_op_pop();
	proftop_op_push("op::copy");
	F.copy(4096, 0, 7);
	proftop_op_pop();
	return 6; /* kernels */
}

static void check_ops(struct pt_trace *t)
{
	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	struct pt_summary *sum = pt_summarize(t, &o);
	static const char *const ops[] = {"op::runtime", "op::triton", "op::cluster", "op::graph",
					  "op::copy"};
	for (size_t i = 0; i < 5; i++) {
		const struct pt_row *r = row_named(t, &sum->operators, ops[i]);
		assert_non_null(r);
		assert_true(r->gpu.total_ns > 0); /* its kernels found their launch */
	}
	pt_summary_free(sum);
}

static void fake_version(uint32_t version, int refuse_clock, int callback_expected)
{
	start_fake(version, refuse_clock);
	assert_int_equal(F.has_clock(), callback_expected);
	uint64_t dropped0 = source_dropped();
	uint32_t want = launch_all_ways();
	F.finish();
	assert_int_equal(pt_cupti_stop(5000), 0);
	assert_int_equal(pt_cupti_state(), PT_CUPTI_STOPPED);
	/* stopped: nothing of ours is enabled any more */
	assert_int_equal(F.kinds() & (1ull << CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), 0);
	struct pt_trace *t = drain(NULL);
	struct seen *s = malloc(sizeof *s);
	collect(t, s);
	assert_int_equal(s->nkernels, want);
	assert_int_equal(s->nmemcpy, 1);
	assert_int_equal(count_runtime(s, "cuLaunchKernel"), 1);
	assert_int_equal(count_runtime(s, "cuLaunchKernelEx"), 1);
	assert_int_equal(count_runtime(s, "cudaGraphLaunch"), 1);
	assert_kernels_after_launch(s);
	check_ops(t);
	assert_int_equal(pt_session_stats(g_sess)->source_dropped, dropped0);
	free(s);
}

static void test_fake_cupti_118(void **state)
{
	NEED_FAKE();
	fake_version(18, 0, 1);
}

#if CUPTI_API_VERSION >= 130000 /* the fake writes 12.x and 13.x records with these structs */
static void test_fake_cupti_12(void **state)
{
	NEED_FAKE();
	fake_version(22, 0, 1); /* 12.4: the timestamp callback is used */
	fake_version(26, 0, 0); /* 12.8: zero-timestamp bug, CUPTI's clock converted */
}

static void test_fake_cupti_13(void **state)
{
	NEED_FAKE();
	fake_version(130001, 0, 0); /* 13.0: zero-timestamp bug, CUPTI's clock converted */
	fake_version(130100, 0, 1); /* 13.1: fixed */
}
#endif

/* An old libcupti that refuses the timestamp callback: CLOCK_REALTIME records. */
static void test_fake_refused_clock(void **state)
{
	NEED_FAKE();
	fake_version(18, 1, 0);
}

/* torch.profiler's Kineto, calling the activity API through the probe's symbols */
static uint64_t g_k_kernels, g_k_bad, g_k_reqs, g_k_min, g_k_max;

static uint64_t CUPTIAPI k_clock(void)
{
#if defined(__x86_64__)
	return __builtin_ia32_rdtsc();
#else
	return pt_clock_mono_ns() * 3 + 12345;
#endif
}

static void CUPTIAPI k_req(uint8_t **b, size_t *size, size_t *max)
{
	*size = 32 << 10;
	*b = aligned_alloc(8, *size);
	*max = 0;
	g_k_reqs++;
}

static void CUPTIAPI k_done(CUcontext c, uint32_t st, uint8_t *b, size_t size, size_t valid)
{
	CUpti_Activity *r = NULL;
	while (F.next(b, valid, &r) == CUPTI_SUCCESS && r) {
		if (r->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			continue;
		uint64_t start;
		memcpy(&start, (uint8_t *)r + 16, 8);
		if (!start) {
			g_k_bad++;
			continue;
		}
		g_k_kernels++;
		if (!g_k_min || start < g_k_min)
			g_k_min = start;
		if (start > g_k_max)
			g_k_max = start;
	}
	free(b);
}

static void test_fake_shared_with_kineto(void **state)
{
	NEED_FAKE();
	start_fake(TEST_VERSION, 0);
	assert_true(F.has_clock());
	uint64_t dropped0 = source_dropped();
	uint32_t want = 0;
	want += F.launch(0, "_Z4gemmv", 0, 7, 2000, 1) ? 1 : 0;
	want += F.launch(1, "triton_a", 0, 7, 2000, 1) ? 1 : 0;
	F.finish();
	/* its trace starts: clock, buffer callbacks, kinds */
	assert_int_equal(cuptiActivityRegisterTimestampCallback(k_clock), CUPTI_SUCCESS);
	assert_int_equal(cuptiActivityRegisterCallbacks(k_req, k_done), CUPTI_SUCCESS);
	assert_int_equal(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
	assert_int_equal(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
	uint64_t w0 = k_clock();
	for (int i = 0; i < 3; i++)
		want += F.launch(0, "_Z10in_windowv", 0, 7, 2000, 1) ? 1 : 0;
	F.finish();
	uint64_t w1 = k_clock();
	/* ... and stops: every kind off, a forced flush */
	assert_int_equal(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
	assert_int_equal(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
	assert_int_equal(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
	/* it got its window's kernels, on its own clock */
	assert_true(g_k_reqs > 0);
	assert_true(g_k_kernels >= 3);
	assert_int_equal(g_k_bad, 0);
	assert_true(g_k_max >= w0 && g_k_max <= w1);
	/* proftop kept its kinds, and its clock is back */
	assert_true(F.kinds() & (1ull << CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	assert_false(F.kinds() & (1ull << CUPTI_ACTIVITY_KIND_RUNTIME));
	want += F.launch(0, "_Z5afterv", 0, 7, 2000, 1) ? 1 : 0;
	want += F.launch(2, "after_ex", 0, 7, 2000, 1) ? 1 : 0;
	F.finish();
	/* a second window, to see it come and go again */
	cuptiActivityRegisterTimestampCallback(k_clock);
	cuptiActivityRegisterCallbacks(k_req, k_done);
	cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	want += F.launch(1, "triton_b", 0, 7, 2000, 1) ? 1 : 0;
	F.finish();
	cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	/* a finalize while proftop traces is not passed on */
	assert_int_equal(cuptiFinalize(), CUPTI_SUCCESS);
	assert_true(F.kinds() & (1ull << CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	want += F.launch(0, "_Z4lastv", 0, 7, 2000, 1) ? 1 : 0;
	F.finish();
	assert_int_equal(pt_cupti_stop(5000), 0);
	struct pt_trace *t = drain(NULL);
	struct seen *s = malloc(sizeof *s);
	collect(t, s);
	assert_int_equal(s->nkernels, want); /* before, during and after its windows */
	assert_kernels_after_launch(s);    /* its TSC timestamps converted back */
	assert_true(has_note(s, "started collecting GPU activity"));
	assert_true(has_note(s, "GPU collection ended"));
	assert_true(has_note(s, "cuptiFinalize"));
	assert_int_equal(pt_session_stats(g_sess)->source_dropped, dropped0);
	free(s);
	/* with the probe stopped, the calls go straight to CUPTI */
	assert_int_equal(cuptiActivityRegisterCallbacks(k_req, k_done), CUPTI_SUCCESS);
	assert_int_equal(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
}

/* Another component takes the activity API without the probe in the way. */
static void test_fake_taken_unseen(void **state)
{
	NEED_FAKE();
	start_fake(TEST_VERSION, 0);
	F.launch(0, "_Z6beforev", 0, 7, 2000, 1);
	F.finish();
	F.foreign_start();
	for (int i = 0; i < 4; i++)
		F.launch(0, "_Z6takenv", 0, 7, 2000, 1);
	F.finish();
	/* the watchdog (300 ms here) speaks within a few of its periods */
	struct seen *s = malloc(sizeof *s);
	struct pt_trace *t = NULL;
	for (int i = 0; i < 600; i++) {
		F.launch(0, "_Z6takenv", 0, 7, 2000, 1);
		usleep(50000);
		t = drain(t);
		collect(t, s);
		if (has_note(s, "may have taken CUPTI's activity buffers"))
			break;
	}
	assert_true(has_note(s, "may have taken CUPTI's activity buffers"));
	assert_true(F.foreign_stop() >= 4);
	assert_int_equal(pt_cupti_stop(5000), 0);
	free(s);
}

/* Records dropped by the CUPTI thread's ring so far. */
static uint64_t cupti_ring_dropped(void)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < G.nrings; i++) {
		struct pt_shm_ring *r = pt_shm_ring_at(G.base, G.hdr, i);
		if (!strcmp(r->thread_name, "proftop-cupti"))
			n += __atomic_load_n(&r->dropped, __ATOMIC_RELAXED);
	}
	return n;
}

/* Keeps a reader slot's heartbeat fresh, as a reader's own thread would,
 * so that the reader stays attached however long the draining thread is
 * kept off the CPU: on a loaded machine the test thread once went more
 * than the 2 s timeout between drains, and the probe rightly went back to
 * flight recording, overwriting what nobody was reading. */
struct keeper {
	struct pt_shm_reader *slot;
	int stop;
};

static void *keep_attached(void *arg)
{
	struct keeper *k = arg;
	while (!__atomic_load_n(&k->stop, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&k->slot->heartbeat_ns, pt_clock_mono_ns(), __ATOMIC_RELEASE);
		usleep(10000);
	}
	return NULL;
}

/* A burst larger than the ring, a reader draining every 20 ms: the CUPTI
 * thread waits for room (the ring never overflows) and every kernel arrives. */
static void test_fake_no_overflow(void **state)
{
	NEED_FAKE();
	start_fake(TEST_VERSION, 0);
	uint64_t ring_dropped0 = cupti_ring_dropped();
	struct pt_trace *t = drain(NULL); /* attached from here on */
	assert_true(g_sess->slot >= 0);
	struct keeper k = {&g_sess->h->readers[g_sess->slot], 0};
	pthread_t keeper;
	assert_int_equal(pthread_create(&keeper, NULL, keep_attached, &k), 0);
	/* 24000 (6000 under valgrind) slots for a 4096-slot ring */
	const uint32_t n = getenv("PT_UNDER_VALGRIND") ? 3000 : 12000;
	for (uint32_t i = 0; i < n; i++) {
		F.launch(0, "_Z4gemmv", 0, 7, 100, 1);
		if (i % 1000 == 999)
			t = drain(t); /* the heartbeat, and the launching thread's own ring */
	}
	uint64_t t0 = pt_clock_mono_ns();
	F.finish(); /* ten buffers complete at once */
	struct seen *s = malloc(sizeof *s);
	for (int i = 0; i < 3000; i++) { /* at most a minute: valgrind is slow */
		usleep(20000);
		t = drain(t);
		collect(t, s);
		if (s->nkernels >= n)
			break;
	}
	__atomic_store_n(&k.stop, 1, __ATOMIC_RELEASE);
	pthread_join(keeper, NULL);
	print_message("# %u of %u kernels in %.0f ms; ring dropped %llu, source lost %llu\n",
		      (unsigned)s->nkernels, n, (double)(pt_clock_mono_ns() - t0) / 1e6,
		      (unsigned long long)(cupti_ring_dropped() - ring_dropped0),
		      (unsigned long long)pt_trace_source_lost(t));
	assert_int_equal(s->nkernels, n);
	assert_int_equal(cupti_ring_dropped(), ring_dropped0);
	assert_int_equal(pt_cupti_stop(5000), 0);
	free(s);
}

/* A finished kernel in a buffer far from full reaches the reader while the
 * job runs (the periodic flush), not at the end. */
static void test_fake_periodic(void **state)
{
	NEED_FAKE();
	start_fake(TEST_VERSION, 0);
	F.launch(0, "_Z4soonv", 0, 7, 1000, 1);
	F.finish();
	struct pt_trace *t = drain(NULL);
	struct seen *s = malloc(sizeof *s);
	for (int i = 0; i < 500; i++) {
		collect(t, s);
		if (s->nkernels)
			break;
		usleep(20000);
		t = drain(t);
	}
	assert_int_equal(s->nkernels, 1);
	assert_int_equal(pt_cupti_state(), PT_CUPTI_ON); /* still tracing */
	assert_int_equal(pt_cupti_stop(5000), 0);
	free(s);
}

/* Kernels still running at the stop come back unfinished: counted as dropped. */
static void test_fake_stop_unfinished(void **state)
{
	NEED_FAKE();
	start_fake(TEST_VERSION, 0);
	uint64_t dropped0 = source_dropped();
	for (int i = 0; i < 5; i++)
		F.launch(0, "_Z4donev", 0, 7, 1000, 1);
	F.finish();
	for (int i = 0; i < 3; i++)
		F.launch(0, "_Z7runningv", 0, 7, 1000, 1);
	assert_int_equal(pt_cupti_stop(5000), 0);
	assert_int_equal(pt_cupti_stop(5000), 0); /* again: nothing more happens */
	struct pt_trace *t = drain(NULL);
	struct seen *s = malloc(sizeof *s);
	collect(t, s);
	assert_int_equal(s->nkernels, 5);
	assert_int_equal(pt_session_stats(g_sess)->source_dropped, dropped0 + 3);
	free(s);
}

#endif /* HAVE_STRUCTS */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock),
#if HAVE_STRUCTS
		cmocka_unit_test(test_layout_table),
		cmocka_unit_test(test_layout_records),
		cmocka_unit_test(test_xlate_records),
		cmocka_unit_test(test_driver_calls),
		cmocka_unit_test(test_end_to_end),
		cmocka_unit_test(test_fake_cupti_118),
#if CUPTI_API_VERSION >= 130000
		cmocka_unit_test(test_fake_cupti_12),
		cmocka_unit_test(test_fake_cupti_13),
#endif
		cmocka_unit_test(test_fake_refused_clock),
		cmocka_unit_test(test_fake_shared_with_kineto),
		cmocka_unit_test(test_fake_taken_unseen),
		cmocka_unit_test(test_fake_no_overflow),
		cmocka_unit_test(test_fake_periodic),
		cmocka_unit_test(test_fake_stop_unfinished),
#endif
		cmocka_unit_test(test_missing_libcupti),
		cmocka_unit_test(test_no_driver),
	};
	if (!HAVE_STRUCTS)
		fprintf(stderr, "test_probe_cupti: no CUDA headers in this build: translation "
				"tests skipped\n");
	int rc = cmocka_run_group_tests(tests, build_fake, NULL);
	pt_trace_free(g_trace);
	if (g_sess)
		pt_session_close(g_sess);
	return rc;
}
