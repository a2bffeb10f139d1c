/*
 * test_probe_cupti.c - the CUPTI backend (probe objects linked in); this
 * file and its two siblings are each built three times: against CUDA_HOME's headers (CUDA 13) and, as test_probe_cupti_old,
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
#include "cupti_util.h"

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
#endif /* HAVE_STRUCTS */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock),
#if HAVE_STRUCTS
		cmocka_unit_test(test_layout_table),
		cmocka_unit_test(test_layout_records),
		cmocka_unit_test(test_xlate_records),
#endif
		cmocka_unit_test(test_missing_libcupti),
		cmocka_unit_test(test_no_driver),
	};
	if (!HAVE_STRUCTS)
		fprintf(stderr, "test_probe_cupti: no CUDA headers in this build: translation "
				"tests skipped\n");
	return cupti_tests_done(cmocka_run_group_tests(tests, build_fake, NULL));
}
