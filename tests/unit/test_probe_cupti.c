/*
 * test_probe_cupti.c - the CUPTI backend (probe objects linked in):
 * translation of synthetic activity records built from the real CUDA 13
 * structs (kernels, NCCL kernels, copies, memsets, external correlation,
 * bad timestamps, the name cache, demangling), the runtime-API callback on
 * the launching thread, and the whole path synthetic records -> shm rings
 * -> session reader -> pt_summarize (device lanes per device and stream,
 * op/phase attribution, Device and Distributed summaries). The tests that
 * build records need the CUDA headers (PT_HAVE_CUDA_HEADERS and the CUDA
 * include path, both for this file and for the probe) and skip otherwise;
 * the "unavailable" tests run everywhere: a missing libcupti, and, where
 * libcupti.so.13 loads but no driver exists, the real failing cuptiSubscribe.
 */
#include "testutil.h"

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include "../../backends/probe_cupti.h"
#include "../../backends/probe_cupti_xlate.h"
#include "../../backends/probe_int.h"
#include "../../backends/session.c"
#include "../../backends/session_capture.c"
#include "../../backends/session_scan.c"
#include "proftop/agg.h"
#include "proftop/proftop.h"

#if defined(PT_HAVE_CUDA_HEADERS)
#include <cupti.h>
#define HAVE_STRUCTS 1
#else
#define HAVE_STRUCTS 0
#endif

#define G pt_probe_g
static char g_dir[] = "/tmp/proftop-test-cupti.XXXXXX";

__attribute__((constructor(101))) static void test_env(void)
{
	if (!mkdtemp(g_dir))
		abort();
	setenv("PROFTOP_SESSION_DIR", g_dir, 1);
	setenv("PROFTOP_RINGS", "8", 1);
	setenv("PROFTOP_RING_SLOTS", "4096", 1);
	setenv("PROFTOP_STRINGS_BYTES", "65536", 1);
	unsetenv("PROFTOP_DISABLE");
	unsetenv("PROFTOP_CUPTI");
}

/* ---- unavailable paths: run everywhere ---- */

static void test_missing_libcupti(void **state)
{
	char why[256];
	pt_cupti_reset_for_test();
	assert_int_equal(pt_cupti_start("/nonexistent/libcupti.so.13", 1, why, sizeof why), -1);
	assert_int_equal(pt_cupti_state(), PT_CUPTI_OFF);
	if (pt_cupti_xlate_available())
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
	if (!pt_cupti_xlate_available() || !cupti || cuda) {
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
	assert_int_equal(pt_cupti_start(NULL, 0, why, sizeof why), -1);
	assert_non_null(strstr(why, "cuptiSubscribe"));
	assert_int_equal(pt_cupti_state(), PT_CUPTI_OFF);
	/* the probe itself keeps working */
	proftop_range_push("after-cupti");
	proftop_range_pop();
	assert_false(PT_TS_SPECIAL(pt_probe_tls));
}

#if HAVE_STRUCTS

static int skip_without_structs(void)
{
	if (!pt_cupti_xlate_available()) {
		fprintf(stderr, "skipped: the probe was built without the CUDA headers\n");
		return 1;
	}
	return 0;
}

/* ---- translation ---- */

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

static CUpti_ActivityKernel10 kernel(const char *name, uint64_t start, uint64_t end,
				     uint32_t dev, uint32_t stream, uint32_t corr)
{
	CUpti_ActivityKernel10 k;
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
	if (skip_without_structs())
		skip();
	static struct pt_cupti_xlate x;
	struct fake_strings f = {0};
	pt_cupti_demangle_fn dem = NULL;
	void *cxx = dlopen("libstdc++.so.6", RTLD_LAZY);
	if (cxx)
		dem = (pt_cupti_demangle_fn)dlsym(cxx, "__cxa_demangle");
	pt_cupti_xlate_init(&x, fake_intern, &f, dem);
	struct pt_shm_rec out[2];

	/* external correlation first (it precedes the launch), then the kernel */
	CUpti_ActivityExternalCorrelation ec;
	memset(&ec, 0, sizeof ec);
	ec.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
	ec.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
	ec.externalId = 0xabcdef;
	ec.correlationId = 42;
	assert_int_equal(pt_cupti_xlate(&x, &ec, out), 0);
	assert_int_equal(x.ext_records, 1);

	char mangled[] = "_Z6gemm_kILi4EEvPfS0_i"; /* void gemm_k<4>(float*, float*, int) */
	CUpti_ActivityKernel10 k = kernel(mangled, 1000, 1500, 1, 7, 42);
	assert_int_equal(pt_cupti_xlate(&x, &k, out), 2);
	assert_int_equal(out[0].kind, PT_KIND_KERNEL);
	assert_int_equal(out[0].start_ns, 1000);
	assert_int_equal(out[0].dur_ns, 500);
	assert_int_equal(out[1].kind, PT_SHM_REC_EXT);
	assert_int_equal(out[1].start_ns, 42);
	assert_int_equal(out[1].dur_ns, (1ull << 32) | 7);
	assert_int_equal(out[1].arg, 0xabcdef);
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
	CUpti_ActivityKernel10 n = kernel("_Z24ncclDevKernel_AllReduce_Sum_f32P11ncclDevComm", 2000,
					  2600, 0, 13, 44);
	assert_int_equal(pt_cupti_xlate(&x, &n, out), 2);
	assert_int_equal(out[0].kind, PT_KIND_COMMUNICATION);
	assert_true(pt_cupti_is_comm_name("ncclKernel_AllGather_RING_LL"));
	assert_true(pt_cupti_is_comm_name("void ncclDevKernel<1>(int)"));
	assert_false(pt_cupti_is_comm_name("_Z4gemmv"));

	/* copies and memsets: bytes in arg, names by direction */
	CUpti_ActivityMemcpy6 m;
	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m.bytes = 1 << 20;
	m.start = 3000;
	m.end = 3100;
	m.deviceId = 0;
	m.streamId = 7;
	m.correlationId = 45;
	assert_int_equal(pt_cupti_xlate(&x, &m, out), 2);
	assert_int_equal(out[0].kind, PT_KIND_MEMCPY);
	assert_int_equal(out[0].arg, 1 << 20);
	assert_string_equal(fake_name(&f, out[0].name), "Memcpy HtoD");
	CUpti_ActivityMemcpyPtoP4 p;
	memset(&p, 0, sizeof p);
	p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	p.bytes = 4096;
	p.start = 3200;
	p.end = 3300;
	p.deviceId = 1;
	p.streamId = 9;
	p.correlationId = 46;
	assert_int_equal(pt_cupti_xlate(&x, &p, out), 2);
	assert_string_equal(fake_name(&f, out[0].name), "Memcpy PtoP");
	assert_int_equal(out[1].dur_ns, (1ull << 32) | 9);
	CUpti_ActivityMemset4 s;
	memset(&s, 0, sizeof s);
	s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	s.bytes = 512;
	s.start = 3400;
	s.end = 3410;
	s.streamId = 7;
	s.correlationId = 47;
	assert_int_equal(pt_cupti_xlate(&x, &s, out), 2);
	assert_int_equal(out[0].kind, PT_KIND_MEMSET);
	assert_int_equal(out[0].arg, 512);
	assert_string_equal(fake_name(&f, out[0].name), "Memset");

	/* bad timestamps are dropped and counted; end == start is a 0-length activity */
	CUpti_ActivityKernel10 b0 = kernel("_Z4gemmv", 0, 0, 0, 7, 48);
	CUpti_ActivityKernel10 b1 = kernel("_Z4gemmv", 5000, 4000, 0, 7, 49);
	CUpti_ActivityKernel10 z = kernel("_Z4gemmv", 5000, 5000, 0, 7, 50);
	assert_int_equal(pt_cupti_xlate(&x, &b0, out), 0);
	assert_int_equal(pt_cupti_xlate(&x, &b1, out), 0);
	assert_int_equal(pt_cupti_xlate(&x, &z, out), 2);
	assert_int_equal(out[0].dur_ns, 0);
	assert_int_equal(x.bad_ts, 2);
	/* the fallback clock: CUPTI's REALTIME minus the measured offset */
	x.ts_offset_ns = 600;
	assert_int_equal(pt_cupti_xlate(&x, &k, out), 2);
	assert_int_equal(out[0].start_ns, 400);
	assert_int_equal(pt_cupti_xlate(&x, &b1, out), 0);
	/* kinds not translated are ignored */
	CUpti_ActivityAPI api;
	memset(&api, 0, sizeof api);
	api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	assert_int_equal(pt_cupti_xlate(&x, &api, out), 0);
	assert_int_equal(x.ignored, 1);
	assert_int_equal(x.kernels, 5);
	assert_int_equal(x.comms, 1);
	assert_int_equal(x.memcpys, 2);
	assert_int_equal(x.memsets, 1);
}

/* ---- the whole path: callback + buffers -> rings -> reader -> summary ---- */

static uint64_t launch(const char *fn, uint32_t corr, unsigned cbid)
{
	uint64_t slot = 0;
	CUpti_CallbackData d;
	memset(&d, 0, sizeof d);
	d.functionName = fn;
	d.correlationData = &slot;
	d.correlationId = corr;
	d.callbackSite = CUPTI_API_ENTER;
	pt_cupti_api_callback(NULL, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &d);
	uint64_t t0 = slot;
	usleep(200);
	d.callbackSite = CUPTI_API_EXIT;
	pt_cupti_api_callback(NULL, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &d);
	/* another domain is ignored */
	pt_cupti_api_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &d);
	return t0;
}

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
	static CUpti_ActivityKernel10 k0, k1, c0;
	static CUpti_ActivityMemcpy6 m0;
	k0 = kernel("_Z4gemmv", b + 1000, b + 5000, 0, 7, 11);
	c0 = kernel("ncclDevKernel_AllReduce_Sum_f32", b + 3000, b + 9000, 0, 13, 12);
	k1 = kernel("_Z4gemmv", b + 2000, b + 4000, 1, 7, 11);
	memset(&m0, 0, sizeof m0);
	m0.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m0.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
	m0.bytes = 256;
	m0.start = b + 9500;
	m0.end = b + 9600;
	m0.streamId = 7;
	m0.correlationId = 13;
	static CUpti_ActivityKernel10 bad;
	bad = kernel("_Z4gemmv", 0, 10, 0, 7, 11);
	const void *recs[] = {&k0, &c0, &k1, &m0, &bad};
	pt_cupti_take_records(recs, 5);
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
	if (skip_without_structs())
		skip();
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

	struct pt_session *s;
	char err[256];
	assert_int_equal(pt_session_open(G.path, &s, err, sizeof err), 0);
	struct pt_trace *t = pt_trace_new(0);
	pt_session_drain(s, t, pt_clock_mono_ns());
	assert_int_equal(pt_session_stats(s)->bad_records, 0);
	assert_true(pt_session_stats(s)->source_dropped >= 1); /* the start-0 kernel */

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
	pt_trace_free(t);
	pt_session_close(s);
}

#endif /* HAVE_STRUCTS */

int main(void)
{
	const struct CMUnitTest tests[] = {
#if HAVE_STRUCTS
		cmocka_unit_test(test_xlate_records),
		cmocka_unit_test(test_end_to_end),
#endif
		cmocka_unit_test(test_missing_libcupti),
		cmocka_unit_test(test_no_driver),
	};
	if (!HAVE_STRUCTS)
		fprintf(stderr, "test_probe_cupti: no CUDA headers in this build: translation "
				"tests skipped\n");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
