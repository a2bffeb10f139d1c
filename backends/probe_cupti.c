/*
 * probe_cupti.c - GPU tracing inside the probe through CUPTI, loaded with
 * dlopen so libproftop.so runs unchanged where there is no CUDA. It starts
 * when the CUDA driver calls InitializeInjection (CUDA_INJECTION64_PATH,
 * which the probe's constructor points at itself when unset, so a
 * preloaded probe starts at the process's first cuInit), or at once when
 * the probe arrives after libcuda (ctypes.CDLL late in a Python job).
 *
 * One attempt per process: libcupti is searched ($PROFTOP_CUPTI, the
 * loader path, next to an already loaded libcudart/CUDA wheel, $CUDA_HOME,
 * /usr/local/cuda), libcuda.so.1 must load, then one cuptiSubscribe. Any
 * failure (no library, other major version, no driver, another subscriber
 * such as nsys or torch.profiler: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS) prints
 * one line and CUPTI is never called again (each failing CUPTI call
 * searches for libcuda anew); NVTX and the C API keep working.
 *
 * What it records: runtime API calls through the runtime-domain callback,
 * on the launching thread itself (so each lands in that thread's ring,
 * nested in its open op/phase ranges, with the correlation id in an EXT
 * record); kernels, copies and memsets through the activity API: CUPTI
 * hands completed buffers to its own thread, which translates them
 * (probe_cupti_xlate.c) into its own ring. A probe thread flushes every
 * 100 ms so the live view stays live. Timestamps: CUPTI is given the
 * session clock (CLOCK_MONOTONIC) through cuptiActivityRegisterTimestampCallback
 * before any kind is enabled; if that fails, a measured REALTIME - MONOTONIC
 * offset (refreshed every second) is subtracted instead.
 */
#include "probe_cupti.h"

#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probe_cupti_xlate.h"

#define G pt_probe_g

static int g_state; /* PT_CUPTI_*; atomic */
static char g_why[256];

static int fail(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(g_why, sizeof g_why, fmt, ap);
	va_end(ap);
	fprintf(stderr, "proftop: GPU tracing off: %s\n", g_why);
	if (why && len)
		snprintf(why, len, "%s", g_why);
	__atomic_store_n(&g_state, PT_CUPTI_OFF, __ATOMIC_RELEASE);
	return -1;
}

int pt_cupti_state(void)
{
	return __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
}

void pt_cupti_reset_for_test(void)
{
	__atomic_store_n(&g_state, PT_CUPTI_IDLE, __ATOMIC_RELEASE);
}

#ifdef PT_HAVE_CUDA_HEADERS

#include <cupti.h>

#define BUF_BYTES (4u << 20)
#define MAX_BUFS 64u /* 256 MiB at most in flight; beyond that CUPTI drops and counts */
#define FLUSH_NS 100000000ull
#define MAX_PATH_BYTES 4096

static struct {
	void *lib;
	char path[MAX_PATH_BYTES];
	CUptiResult (*Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*Subscribe_v2)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
				    CUpti_SubscriberParams *);
	CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle);
	CUptiResult (*GetVersion)(uint32_t *);
	CUptiResult (*GetResultString)(CUptiResult, const char **);
	CUptiResult (*EnableDomain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
	CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
				      CUpti_CallbackId);
	CUptiResult (*ActivityEnable)(CUpti_ActivityKind);
	CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
						 CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc);
	CUptiResult (*ActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
	CUptiResult (*ActivityFlushAll)(uint32_t);
	CUpti_SubscriberHandle sub;
	int own_clock; /* the timestamp callback took */
	pthread_mutex_t lock; /* the translation state, across CUPTI's buffer threads */
	struct pt_cupti_xlate x;
	uint64_t bad_seen;
	unsigned bufs; /* atomic: buffers handed to CUPTI */
} C = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const char *result_text(CUptiResult r)
{
	const char *s = NULL;
	if (C.GetResultString && C.GetResultString(r, &s) == CUPTI_SUCCESS && s)
		return s;
	return "unknown error";
}

static uint64_t CUPTIAPI session_clock(void)
{
	return pt_clock_mono_ns();
}

/* REALTIME - MONOTONIC from the narrowest of a few (mono, real, mono) brackets. */
static uint64_t measure_offset(void)
{
	uint64_t best_w = UINT64_MAX, off = 0;
	for (int i = 0; i < 7; i++) {
		struct timespec r;
		uint64_t a = pt_clock_mono_ns();
		clock_gettime(CLOCK_REALTIME, &r);
		uint64_t b = pt_clock_mono_ns();
		uint64_t real = (uint64_t)r.tv_sec * 1000000000ull + (uint64_t)r.tv_nsec;
		if (b - a < best_w) {
			best_w = b - a;
			off = real - (a + (b - a) / 2);
		}
	}
	return off;
}

static uint32_t intern_cb(void *ctx, const char *s, size_t len)
{
	(void)ctx;
	return pt_probe_intern(s, len);
}

/* ---- the runtime-API callback: on the launching thread ---- */

static uint8_t api_flags(unsigned cbid)
{
	switch (cbid) {
	case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaThreadSynchronize_v3020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000:
	case CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020:
		return PT_EVF_SYNC;
	default:
		return 0;
	}
}

void pt_cupti_api_callback(void *userdata, int domain, unsigned cbid, const void *cbdata)
{
	(void)userdata;
	if (domain != CUPTI_CB_DOMAIN_RUNTIME_API || !cbdata)
		return;
	const CUpti_CallbackData *d = cbdata;
	struct pt_tstate *t = pt_probe_self();
	if (PT_TS_SPECIAL(t)) {
		if (t == PT_TS_NORING && d->callbackSite == CUPTI_API_EXIT)
			pt_probe_count_noring();
		return;
	}
	if (d->callbackSite == CUPTI_API_ENTER) {
		/* correlationData: CUPTI's per-call slot, carried from enter to exit */
		if (d->correlationData)
			*d->correlationData = pt_clock_now(&t->clk);
		return;
	}
	uint64_t now = pt_clock_now(&t->clk);
	uint64_t start = d->correlationData && *d->correlationData ? *d->correlationData : now;
	uint8_t kind_unused;
	uint32_t name = d->functionName ? pt_probe_name(t, d->functionName, 0, &kind_unused) : 0;
	uint32_t depth = t->depth < PT_PROBE_MAX_DEPTH ? t->depth : PT_PROBE_MAX_DEPTH;
	pt_probe_emit(t, now, start, now > start ? now - start : 0, 0, name, PT_KIND_CUDA_RUNTIME,
		      api_flags(cbid), (uint16_t)depth);
	pt_probe_emit(t, now, d->correlationId, 0, 0, 0, PT_SHM_REC_EXT, 0, 0);
}

static void CUPTIAPI api_cb(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
			    const void *data)
{
	pt_cupti_api_callback(ud, (int)dom, (unsigned)cbid, data);
}

/* ---- activity buffers: translated on the thread CUPTI completes them on ---- */

/* Caller holds C.lock. */
static void emit_records(struct pt_tstate *t, const void *const *recs, size_t n,
			 CUpti_Activity *(*next)(void *), void *it)
{
	uint64_t now = pt_clock_mono_ns();
	struct pt_shm_rec out[2];
	for (size_t i = 0;; i++) {
		const void *r = recs ? (i < n ? recs[i] : NULL) : next(it);
		if (!r)
			break;
		int k = pt_cupti_xlate(&C.x, r, out);
		for (int j = 0; j < k; j++)
			pt_probe_emit(t, now, out[j].start_ns, out[j].dur_ns, out[j].arg,
				      out[j].name, out[j].kind, 0, 0);
	}
	uint64_t bad = C.x.bad_ts - C.bad_seen;
	C.bad_seen = C.x.bad_ts;
	for (uint64_t i = 0; i < bad; i++) /* dropped records: the reader reports them */
		pt_probe_count_dropped(t);
}

static void xlate_setup(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	/* libstdc++ is in every framework process; dlsym finds it there. */
	pt_cupti_demangle_fn dem = (pt_cupti_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (!dem) {
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (h)
			dem = (pt_cupti_demangle_fn)dlsym(h, "__cxa_demangle");
	}
	pt_cupti_xlate_init(&C.x, intern_cb, NULL, dem);
}

void pt_cupti_take_records(const void *const *recs, size_t n)
{
	pthread_mutex_lock(&C.lock);
	xlate_setup();
	struct pt_tstate *t = pt_probe_self();
	if (!PT_TS_SPECIAL(t))
		emit_records(t, recs, n, NULL, NULL);
	pthread_mutex_unlock(&C.lock);
}

struct buf_it {
	uint8_t *buf;
	size_t valid;
	CUpti_Activity *rec;
};

static CUpti_Activity *buf_next(void *p)
{
	struct buf_it *it = p;
	if (C.ActivityGetNextRecord(it->buf, it->valid, &it->rec) != CUPTI_SUCCESS)
		return NULL;
	return it->rec;
}

static void CUPTIAPI buf_request(uint8_t **buf, size_t *size, size_t *max_recs)
{
	*buf = NULL;
	*size = 0;
	*max_recs = 0;
	if (__atomic_add_fetch(&C.bufs, 1, __ATOMIC_RELAXED) > MAX_BUFS) {
		__atomic_sub_fetch(&C.bufs, 1, __ATOMIC_RELAXED);
		return; /* CUPTI drops and counts; we report it at the next buffer */
	}
	void *p = NULL;
	if (posix_memalign(&p, 8, BUF_BYTES) != 0) {
		__atomic_sub_fetch(&C.bufs, 1, __ATOMIC_RELAXED);
		return;
	}
	*buf = p;
	*size = BUF_BYTES;
}

static void CUPTIAPI buf_done(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
			      size_t valid)
{
	(void)size;
	pthread_mutex_lock(&C.lock);
	struct pt_tstate *t = pt_probe_self();
	if (!PT_TS_SPECIAL(t)) {
		struct buf_it it = {buf, valid, NULL};
		if (valid)
			emit_records(t, NULL, 0, buf_next, &it);
		size_t lost = 0;
		if (C.ActivityGetNumDroppedRecords(ctx, stream, &lost) == CUPTI_SUCCESS)
			for (size_t i = 0; i < lost; i++)
				pt_probe_count_dropped(t);
	}
	pthread_mutex_unlock(&C.lock);
	free(buf);
	__atomic_sub_fetch(&C.bufs, 1, __ATOMIC_RELAXED);
}

static void *flusher(void *arg)
{
	(void)arg;
	uint64_t last_off = pt_clock_mono_ns();
	for (;;) {
		struct timespec ts = {0, (long)FLUSH_NS};
		nanosleep(&ts, NULL);
		if (__atomic_load_n(&G.state, __ATOMIC_ACQUIRE) != PT_PROBE_ON)
			return NULL;
		if (!C.own_clock && pt_clock_mono_ns() - last_off > 1000000000ull) {
			/* REALTIME may be stepped by NTP: follow it */
			uint64_t off = measure_offset();
			pthread_mutex_lock(&C.lock);
			C.x.ts_offset_ns = off;
			pthread_mutex_unlock(&C.lock);
			last_off = pt_clock_mono_ns();
		}
		C.ActivityFlushAll(0);
	}
	return NULL;
}

static void flush_at_exit(void)
{
	if (pt_cupti_state() == PT_CUPTI_ON && !G.forked)
		C.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

static int try_open(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return 0;
	C.lib = h;
	snprintf(C.path, sizeof C.path, "%.*s", (int)sizeof C.path - 1, path);
	return 1;
}

struct find_ctx {
	char dir[MAX_PATH_BYTES];
};

/* A loaded libcudart (toolkit or pip wheel): libcupti is next to it, or in
 * the wheel's sibling package (nvidia/cuda_runtime/lib -> nvidia/cuda_cupti/lib). */
static int find_cudart(struct dl_phdr_info *info, size_t size, void *p)
{
	(void)size;
	struct find_ctx *f = p;
	const char *name = info->dlpi_name;
	const char *slash = name ? strrchr(name, '/') : NULL;
	if (!slash || strncmp(slash + 1, "libcudart.so", 12) != 0)
		return 0;
	snprintf(f->dir, sizeof f->dir, "%.*s", (int)(slash - name), name);
	return 1;
}

static int open_cupti(const char *lib)
{
	if (lib)
		return try_open(lib);
	const char *env = getenv("PROFTOP_CUPTI");
	if (env && *env)
		return try_open(env);
	static const char *const names[] = {"libcupti.so.13", "libcupti.so"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (try_open(names[i]))
			return 1;
	char path[MAX_PATH_BYTES + 64];
	struct find_ctx f = {""};
	if (dl_iterate_phdr(find_cudart, &f)) {
		snprintf(path, sizeof path, "%s/libcupti.so.13", f.dir);
		if (try_open(path))
			return 1;
		snprintf(path, sizeof path, "%s/../../cuda_cupti/lib/libcupti.so.13", f.dir);
		if (try_open(path))
			return 1;
	}
	const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
	static const char *const subs[] = {"extras/CUPTI/lib64", "lib64", "lib"};
	for (size_t i = 0; i < 3; i++) {
		if (!homes[i] || !*homes[i])
			continue;
		for (size_t j = 0; j < 3; j++) {
			snprintf(path, sizeof path, "%s/%s/libcupti.so.13", homes[i], subs[j]);
			if (try_open(path))
				return 1;
		}
	}
	return 0;
}

#define SYM(field, name)                                                                   \
	do {                                                                               \
		*(void **)&C.field = dlsym(C.lib, name);                                   \
		if (!C.field)                                                              \
			return fail(why, len, "%s lacks %s", C.path, name);                \
	} while (0)

static int start(const char *lib, int check_driver, char *why, size_t len)
{
	if (!C.lib && !open_cupti(lib))
		return fail(why, len,
			    "libcupti not found (%s; set PROFTOP_CUPTI=/path/to/libcupti.so.13)",
			    lib ? dlerror() : "tried the loader path, next to libcudart, $CUDA_HOME, "
					      "/usr/local/cuda");
	SYM(Subscribe, "cuptiSubscribe");
	SYM(Unsubscribe, "cuptiUnsubscribe");
	SYM(GetVersion, "cuptiGetVersion");
	SYM(GetResultString, "cuptiGetResultString");
	SYM(EnableDomain, "cuptiEnableDomain");
	SYM(EnableCallback, "cuptiEnableCallback");
	SYM(ActivityEnable, "cuptiActivityEnable");
	SYM(ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks");
	SYM(ActivityGetNextRecord, "cuptiActivityGetNextRecord");
	SYM(ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords");
	SYM(ActivityFlushAll, "cuptiActivityFlushAll");
	*(void **)&C.ActivityRegisterTimestampCallback =
	    dlsym(C.lib, "cuptiActivityRegisterTimestampCallback");
	*(void **)&C.Subscribe_v2 = dlsym(C.lib, "cuptiSubscribe_v2");
	uint32_t version = 0;
	if (C.GetVersion(&version) != CUPTI_SUCCESS)
		return fail(why, len, "%s: cuptiGetVersion failed", C.path);
	/* Activity records change layout between major versions. */
	if (version / 10000 != CUPTI_API_VERSION / 10000)
		return fail(why, len, "%s is CUPTI API %u; this probe was built for %u.x (records differ)",
			    C.path, version, CUPTI_API_VERSION / 10000);
	if (check_driver) {
		void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
		if (!cuda)
			cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
		if (!cuda)
			return fail(why, len, "no NVIDIA driver (libcuda.so.1 does not load)");
	}
	CUptiResult r;
	char other[64] = "";
	if (C.Subscribe_v2) {
		CUpti_SubscriberParams sp = {0};
		sp.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
		sp.subscriberName = "proftop";
		sp.oldSubscriberName = other;
		sp.oldSubscriberSize = sizeof other;
		r = C.Subscribe_v2(&C.sub, api_cb, NULL, &sp);
	} else {
		r = C.Subscribe(&C.sub, api_cb, NULL);
	}
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
		return fail(why, len,
			    "CUPTI is held by another profiler%s%.60s%s (nsys, ncu, torch.profiler/Kineto, "
			    "compute-sanitizer); continuing with NVTX and the C API",
			    other[0] ? " (" : "", other, other[0] ? ")" : "");
	if (r != CUPTI_SUCCESS)
		return fail(why, len, "cuptiSubscribe: %s (%d)%s", result_text(r), (int)r,
			    r == CUPTI_ERROR_UNKNOWN ? "; is the NVIDIA driver installed?" : "");
	/* The clock first: it must be in place before any kind is enabled. */
	C.own_clock = C.ActivityRegisterTimestampCallback &&
		      C.ActivityRegisterTimestampCallback(session_clock) == CUPTI_SUCCESS;
	xlate_setup();
	if (!C.own_clock)
		C.x.ts_offset_ns = measure_offset();
	if ((r = C.ActivityRegisterCallbacks(buf_request, buf_done)) != CUPTI_SUCCESS ||
	    (r = C.ActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) != CUPTI_SUCCESS) {
		C.Unsubscribe(C.sub);
		return fail(why, len, "CUPTI activity tracing: %s (%d)", result_text(r), (int)r);
	}
	static const CUpti_ActivityKind more[] = {
	    CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
	    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
	for (size_t i = 0; i < sizeof more / sizeof *more; i++)
		C.ActivityEnable(more[i]); /* optional: kernels alone still make a summary */
	/* Runtime calls: all but the chatty queries frameworks make per op. */
	C.EnableDomain(1, C.sub, CUPTI_CB_DOMAIN_RUNTIME_API);
	static const CUpti_CallbackId quiet[] = {
	    CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
	    CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020,
	    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020,
	    CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
	    CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
	    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v3020,
	    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v12000,
	    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetAttribute_v5000,
	    CUPTI_RUNTIME_TRACE_CBID_cudaFuncGetAttributes_v3020,
	    CUPTI_RUNTIME_TRACE_CBID_cudaPointerGetAttributes_v4000,
	    CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000,
	    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v10010,
	    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v2_v11030,
	    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v12030,
	    CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020,
	    CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020,
	};
	for (size_t i = 0; i < sizeof quiet / sizeof *quiet; i++)
		C.EnableCallback(0, C.sub, CUPTI_CB_DOMAIN_RUNTIME_API, quiet[i]);
	pthread_t th;
	pthread_attr_t at;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the app's signals stay with the app */
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &at, flusher, NULL) == 0)
		pthread_setname_np(th, "proftop-cupti");
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	atexit(flush_at_exit);
	__atomic_store_n(&g_state, PT_CUPTI_ON, __ATOMIC_RELEASE);
	return 0;
}

#else /* built without the CUDA headers */

void pt_cupti_api_callback(void *userdata, int domain, unsigned cbid, const void *cbdata)
{
	(void)userdata;
	(void)domain;
	(void)cbid;
	(void)cbdata;
}

void pt_cupti_take_records(const void *const *recs, size_t n)
{
	(void)recs;
	(void)n;
}

static int start(const char *lib, int check_driver, char *why, size_t len)
{
	(void)lib;
	(void)check_driver;
	return fail(why, len, "this libproftop.so was built without the CUDA headers "
			      "(rebuild with CUDA_HOME set)");
}

#endif

int pt_cupti_start(const char *lib, int check_driver, char *why, size_t len)
{
	int idle = PT_CUPTI_IDLE;
	if (!__atomic_compare_exchange_n(&g_state, &idle, PT_CUPTI_STARTING, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		/* started, failed or starting on another thread: one attempt per process */
		if (why && len)
			snprintf(why, len, "%s", idle == PT_CUPTI_ON ? "" : g_why);
		return idle == PT_CUPTI_ON ? 0 : -1;
	}
	if (__atomic_load_n(&G.state, __ATOMIC_ACQUIRE) != PT_PROBE_ON)
		return fail(why, len, "the probe is off");
	return start(lib, check_driver, why, len);
}

static int cupti_disabled(void)
{
	const char *s = getenv("PROFTOP_CUPTI");
	return s && (!strcmp(s, "0") || !strcmp(s, "off") || !strcmp(s, "none"));
}

void pt_cupti_probe_init(int is_shared_object)
{
	if (cupti_disabled())
		return;
	if (is_shared_object) {
		Dl_info info;
		if (dladdr((void *)pt_cupti_probe_init, &info) && info.dli_fname &&
		    info.dli_fname[0] == '/')
			setenv("CUDA_INJECTION64_PATH", info.dli_fname, 0);
	}
	/* Arrived after the driver (loaded late from Python): cuInit may have
	 * run already and would never call InitializeInjection. */
	void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
	if (cuda) {
		dlclose(cuda);
		pt_cupti_start(NULL, 1, NULL, 0);
	}
}

/* Called by the CUDA driver during cuInit when CUDA_INJECTION64_PATH names us. */
PT_EXPORT int InitializeInjection(void);
PT_EXPORT int InitializeInjection(void)
{
	if (!cupti_disabled())
		pt_cupti_start(NULL, 0, NULL, 0); /* the driver is here: it called us */
	return 1;
}
