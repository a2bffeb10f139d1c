/*
 * probe_cupti.c - GPU tracing inside the probe through CUPTI, loaded with
 * dlopen so libproftop.so runs unchanged where there is no CUDA. This file
 * finds and starts CUPTI and owns the API callbacks; activity buffers, the
 * delivery thread and the exit path are in probe_cupti_flow.c, sharing
 * CUPTI with torch.profiler in probe_cupti_share.c, the record layouts in
 * probe_cupti_xlate.c, clocks in probe_cupti_clock.c.
 *
 * When: the CUDA driver calls InitializeInjection during cuInit
 * (CUDA_INJECTION64_PATH, which the probe's constructor points at itself
 * when unset), as NVIDIA's injection sample and Kineto do. A probe that
 * arrives after libcuda (ctypes.CDLL late in a Python job, or the driver
 * loading it as the injection) never starts CUPTI from its constructor,
 * where the loader's lock is held: a short-lived thread does, once the
 * constructor has returned, unless the driver called InitializeInjection by
 * then or cuInit has not run yet (InitializeInjection will come).
 *
 * Which library: the one the job already uses (PyTorch links one; a second
 * CUPTI in a process does not work), else the newest the driver can run
 * (probe_cupti_find.c). Any CUPTI from 11.8 on is read through the layout
 * of its own version. One attempt per process: a missing library, a driver
 * too old, no driver, or another subscriber (nsys, ncu,
 * compute-sanitizer: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS) prints one line and
 * CUPTI is never called again (each failing CUPTI call searches for libcuda
 * anew); NVTX and the C API keep working.
 *
 * What it records here: runtime API calls through the runtime-domain
 * callback, and kernel launches, copies, sets and syncs made through the
 * driver API itself (torch.compile/Triton's cuLaunchKernel, CUTLASS and
 * FlashAttention 3's cuLaunchKernelEx, cuGraphLaunch), on the launching
 * thread (each lands in that thread's ring, nested in its open op/phase
 * ranges, with the correlation id in an EXT record). A driver call made
 * inside a runtime call is that runtime call's work and is not recorded
 * again. Each call's entry time also goes to the launch table, against
 * which the delivery thread checks the kernels' clock.
 */
#include "probe_cupti.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probe_cupti_find.h"

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

/* probe_cupti_flow.c moves ON -> STOPPING -> STOPPED. */
PT_HIDDEN int pt_cupti_state_cas(int from, int to);
int pt_cupti_state_cas(int from, int to)
{
	return __atomic_compare_exchange_n(&g_state, &from, to, 0, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE);
}

#ifdef PT_HAVE_CUDA_HEADERS

#include "probe_cupti_int.h"

PT_HIDDEN struct pt_cupti_state pt_cupti_g;
const CUpti_ActivityKind pt_cupti_our_kinds[PT_CUPTI_OUR_KINDS] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};

#define C pt_cupti_g

uint32_t pt_cupti_built_version(void)
{
	return CUPTI_API_VERSION;
}

const char *pt_cupti_result_text(CUptiResult r)
{
	const char *s = NULL;
	if (C.f.GetResultString && C.f.GetResultString(r, &s) == CUPTI_SUCCESS && s)
		return s;
	return "unknown error";
}

uint64_t CUPTIAPI pt_cupti_session_clock(void)
{
	return pt_clock_mono_ns();
}

pt_cupti_demangle_fn pt_cupti_demangler(void)
{
	/* libstdc++ is in every framework process; dlsym finds it there. */
	pt_cupti_demangle_fn dem = (pt_cupti_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (!dem) {
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (h)
			dem = (pt_cupti_demangle_fn)dlsym(h, "__cxa_demangle");
	}
	return dem;
}

/* ---- the API callback: on the launching thread ---- */

static __thread uint32_t g_rt_depth; /* runtime calls open on this thread */

static uint8_t api_flags(int domain, unsigned cbid)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		switch (cbid) {
		case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020:
		case CUPTI_RUNTIME_TRACE_CBID_cudaThreadSynchronize_v3020:
		case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020:
		case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020:
			return PT_EVF_SYNC;
		}
		return 0;
	}
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize:
	case CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize:
	case CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize:
		return PT_EVF_SYNC;
	}
	return 0;
}

/* Kernel launches (of either API): what the delivery thread's watchdog counts. */
static int is_launch(int domain, unsigned cbid)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		switch (cbid) {
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_v3020:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_ptsz_v7000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernelMultiDevice_v9000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
#if CUPTI_API_VERSION >= 130000
		case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
		case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000:
#endif
			return 1;
		}
		return 0;
	}
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunch:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice:
	case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
	case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz:
		return 1;
	}
	return 0;
}

void pt_cupti_api_callback(void *userdata, int domain, unsigned cbid, const void *cbdata)
{
	(void)userdata;
	if (!cbdata)
		return;
	const CUpti_CallbackData *d = cbdata;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		/* counted before anything can return: driver calls inside are its own */
		if (d->callbackSite == CUPTI_API_ENTER)
			g_rt_depth++;
		else if (g_rt_depth)
			g_rt_depth--;
	} else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		if (g_rt_depth)
			return; /* made by the runtime call around it: that call is the event */
	} else {
		return;
	}
	struct pt_tstate *t = pt_probe_self();
	if (PT_TS_SPECIAL(t)) {
		if (t == PT_TS_NORING && d->callbackSite == CUPTI_API_EXIT)
			pt_probe_count_noring();
		return;
	}
	if (d->callbackSite == CUPTI_API_ENTER) {
		uint64_t now = pt_clock_now(&t->clk);
		/* correlationData: CUPTI's per-call slot, carried from enter to exit */
		if (d->correlationData)
			*d->correlationData = now;
		if (C.launches) {
			pt_cupti_launch_note(C.launches, d->correlationId, now);
			if (is_launch(domain, cbid))
				__atomic_fetch_add(&C.device_calls, 1, __ATOMIC_RELAXED);
		}
		return;
	}
	uint64_t now = pt_clock_now(&t->clk);
	uint64_t start = d->correlationData && *d->correlationData ? *d->correlationData : now;
	uint8_t kind_unused;
	uint32_t name = d->functionName ? pt_probe_name(t, d->functionName, 0, &kind_unused) : 0;
	uint32_t depth = t->depth < PT_PROBE_MAX_DEPTH ? t->depth : PT_PROBE_MAX_DEPTH;
	pt_probe_emit(t, now, start, now > start ? now - start : 0, 0, name, PT_KIND_CUDA_RUNTIME,
		      api_flags(domain, cbid), (uint16_t)depth);
	pt_probe_emit(t, now, d->correlationId, 0, 0, 0, PT_SHM_REC_EXT, 0, 0);
}

static void CUPTIAPI api_cb(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
			    const void *data)
{
	pt_cupti_api_callback(ud, (int)dom, (unsigned)cbid, data);
}

/* Runtime calls frameworks make per op that say nothing about the GPU's work. */
static const CUpti_CallbackId g_quiet[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetAttribute_v5000,
    CUPTI_RUNTIME_TRACE_CBID_cudaFuncGetAttributes_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaPointerGetAttributes_v4000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v10010,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v2_v11030,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020,
    /* by number: CUDA 12's headers call these ..._v2_v12000 and
     * ..._v3_v12030, CUDA 13's ..._v12000 and ..._v12030 (same ids) */
#if CUPTI_API_VERSION >= 19
    (CUpti_CallbackId)440, /* cudaGetDeviceProperties (12.0) */
#endif
#if CUPTI_API_VERSION >= 21
    (CUpti_CallbackId)461, /* cudaStreamGetCaptureInfo (12.3) */
#endif
};

/* Driver calls recorded when the program makes them itself (not through the runtime). */
static const CUpti_CallbackId g_driver[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize,
};

/* ---- finding and opening libcupti ---- */

static int open_lib(const char *lib, int driver_cuda, char *msg, size_t len)
{
	if (lib) {
		C.lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!C.lib) {
			snprintf(msg, len, "%s", dlerror());
			return 0;
		}
		snprintf(C.path, sizeof C.path, "%s", lib);
		return 1;
	}
	struct pt_cupti_cand *cand = calloc(PT_CUPTI_MAX_CANDS, sizeof *cand);
	if (!cand)
		return 0;
	int n = pt_cupti_candidates(cand, PT_CUPTI_MAX_CANDS, driver_cuda);
	int ok = 0;
	msg[0] = 0;
	for (int i = 0; i < n && !ok; i++) {
		C.lib = dlopen(cand[i].path, RTLD_NOW | RTLD_LOCAL | (cand[i].loaded ? RTLD_NOLOAD : 0));
		if (!C.lib && cand[i].loaded)
			C.lib = dlopen(cand[i].path, RTLD_NOW | RTLD_LOCAL);
		if (C.lib) {
			snprintf(C.path, sizeof C.path, "%s", cand[i].path);
			ok = 1;
		} else if (cand[i].loaded || !strcmp(cand[i].where, "PROFTOP_CUPTI")) {
			snprintf(msg, len, "%s: %s", cand[i].path, dlerror());
		}
	}
	free(cand);
	return ok;
}

#define SYM(field, name)                                                                           \
	do {                                                                                       \
		*(void **)&C.f.field = dlsym(C.lib, name);                                         \
		if (!C.f.field)                                                                    \
			return fail(why, len, "%s lacks %s", C.path, name);                        \
	} while (0)

/* 12.6 Update 2 to 13.0 can hand kernels back with zero timestamps when a
 * timestamp callback is registered (fixed in 13.1): leave their clock alone. */
static int clock_callback_safe(uint32_t v)
{
	return !((v >= 24 && v <= 28) || (v >= 130000 && v < 130100));
}

void pt_cupti_restore_clock(void)
{
	if (C.f.ActivityRegisterTimestampCallback && clock_callback_safe(C.version) &&
	    !pt_cupti_share_owns_clock())
		C.own_clock = C.f.ActivityRegisterTimestampCallback(pt_cupti_session_clock) ==
			      CUPTI_SUCCESS;
}

CUptiResult pt_cupti_install_activity(int with_clock)
{
	CUptiResult r;
	if (with_clock)
		pt_cupti_restore_clock();
	if ((r = C.f.ActivityRegisterCallbacks(pt_cupti_buf_request, pt_cupti_buf_done)) !=
	    CUPTI_SUCCESS)
		return r;
	for (size_t i = 0; i < PT_CUPTI_OUR_KINDS; i++) {
		r = C.f.ActivityEnable(pt_cupti_our_kinds[i]);
		if (r != CUPTI_SUCCESS && i == 0)
			return r; /* kernels are needed; the others are a bonus */
	}
	return CUPTI_SUCCESS;
}

static int start(const char *lib, int check_driver, char *why, size_t len)
{
	int driver_cuda = pt_cupti_driver_cuda();
	if (check_driver && !driver_cuda)
		return fail(why, len, "no NVIDIA driver (libcuda.so.1 does not load)");
	char msg[512] = "";
	if (!C.lib && !open_lib(lib, driver_cuda, msg, sizeof msg))
		return fail(why, len, "libcupti not found (%s; set PROFTOP_CUPTI=/path/to/libcupti.so)",
			    msg[0] ? msg : "tried the job's own, next to torch and libcudart, the "
					   "loader path, $CUDA_HOME, /usr/local/cuda");
	SYM(Subscribe, "cuptiSubscribe");
	SYM(Unsubscribe, "cuptiUnsubscribe");
	SYM(GetVersion, "cuptiGetVersion");
	SYM(GetResultString, "cuptiGetResultString");
	SYM(EnableDomain, "cuptiEnableDomain");
	SYM(EnableCallback, "cuptiEnableCallback");
	SYM(ActivityEnable, "cuptiActivityEnable");
	SYM(ActivityDisable, "cuptiActivityDisable");
	SYM(ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks");
	SYM(ActivityGetNextRecord, "cuptiActivityGetNextRecord");
	SYM(ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords");
	SYM(ActivityFlushAll, "cuptiActivityFlushAll");
	*(void **)&C.f.ActivityRegisterTimestampCallback =
	    dlsym(C.lib, "cuptiActivityRegisterTimestampCallback");
	*(void **)&C.f.GetTimestamp = dlsym(C.lib, "cuptiGetTimestamp");
#if PT_CUPTI_HAVE_SUBSCRIBE_V2
	*(void **)&C.f.Subscribe_v2 = dlsym(C.lib, "cuptiSubscribe_v2");
#endif
	if (C.f.GetVersion(&C.version) != CUPTI_SUCCESS)
		return fail(why, len, "%s: cuptiGetVersion failed", C.path);
	char vt[16];
	pt_cupti_version_text(C.version, vt, sizeof vt);
	C.lay = pt_cupti_layout_for(C.version, &C.layout_newer);
	if (!C.lay)
		return fail(why, len, "%s is CUPTI %s; proftop reads CUPTI 11.8 and newer", C.path, vt);
	C.driver_cuda = driver_cuda;
	if (pt_cupti_driver_verdict(C.version, driver_cuda, msg, sizeof msg) != 0)
		return fail(why, len, "%s: %s", C.path, msg);
	CUptiResult r;
	char other[64] = "";
#if PT_CUPTI_HAVE_SUBSCRIBE_V2
	if (C.f.Subscribe_v2) {
		CUpti_SubscriberParams sp;
		memset(&sp, 0, sizeof sp);
		sp.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
		sp.subscriberName = "proftop";
		sp.oldSubscriberName = other;
		sp.oldSubscriberSize = sizeof other;
		r = C.f.Subscribe_v2(&C.sub, api_cb, NULL, &sp);
	} else
#endif
		r = C.f.Subscribe(&C.sub, api_cb, NULL);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
		return fail(why, len,
			    "CUPTI is held by another profiler%s%.60s%s (nsys, ncu, torch.profiler/Kineto, "
			    "compute-sanitizer); continuing with NVTX and the C API",
			    other[0] ? " (" : "", other, other[0] ? ")" : "");
	if (r != CUPTI_SUCCESS)
		return fail(why, len, "%s (CUPTI %s): cuptiSubscribe: %s (%d)%s", C.path, vt,
			    pt_cupti_result_text(r), (int)r,
			    r == CUPTI_ERROR_UNKNOWN || r == CUPTI_ERROR_NOT_INITIALIZED
				? "; is the NVIDIA driver installed and a GPU visible?"
				: "");
	C.pid = getpid();
	C.launches = calloc(PT_CUPTI_LAUNCHES, sizeof *C.launches);
	/* The clock first: it must be in place before any kind is enabled. */
	if ((r = pt_cupti_install_activity(1)) != CUPTI_SUCCESS) {
		C.f.Unsubscribe(C.sub);
		return fail(why, len, "CUPTI activity tracing: %s (%d)", pt_cupti_result_text(r),
			    (int)r);
	}
	/* Runtime calls: all but the chatty queries frameworks make per op. */
	C.f.EnableDomain(1, C.sub, CUPTI_CB_DOMAIN_RUNTIME_API);
	for (size_t i = 0; i < sizeof g_quiet / sizeof *g_quiet; i++)
		C.f.EnableCallback(0, C.sub, CUPTI_CB_DOMAIN_RUNTIME_API, g_quiet[i]);
	/* Driver calls the program makes itself (torch.compile, CUTLASS, graphs). */
	for (size_t i = 0; i < sizeof g_driver / sizeof *g_driver; i++)
		C.f.EnableCallback(1, C.sub, CUPTI_CB_DOMAIN_DRIVER_API, g_driver[i]);
	__atomic_store_n(&g_state, PT_CUPTI_ON, __ATOMIC_RELEASE);
	if (pt_cupti_flow_start() != 0) {
		pt_cupti_stop(1000);
		return fail(why, len, "no thread for GPU records");
	}
	if (C.layout_newer)
		pt_cupti_note(0, "CUPTI %s is newer than the record layouts proftop knows; read with "
				 "those of CUPTI %s", vt, C.lay->cuda);
	return 0;
}

void pt_cupti_take_records(uint32_t version, const void *const *recs, size_t n)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static struct pt_cupti_xlate x;
	static uint32_t x_version;
	pthread_mutex_lock(&lock);
	if (!x.intern || x_version != version) {
		pt_cupti_xlate_init(&x, pt_cupti_layout_for(version, NULL), NULL, pt_cupti_intern,
				    NULL, pt_cupti_demangler());
		x_version = version;
	}
	struct pt_tstate *t = pt_probe_self();
	if (!PT_TS_SPECIAL(t)) {
		uint64_t now = pt_clock_mono_ns();
		pt_cupti_xlate_buffer(&x, now);
		uint64_t bad = x.bad_ts + x.bad_clock;
		for (size_t i = 0; i < n; i++) {
			struct pt_shm_rec out[2];
			int k = pt_cupti_xlate(&x, recs[i], out);
			for (int j = 0; j < k; j++)
				pt_probe_emit(t, now, out[j].start_ns, out[j].dur_ns, out[j].arg,
					      out[j].name, out[j].kind, 0, 0);
		}
		for (bad = x.bad_ts + x.bad_clock - bad; bad; bad--)
			pt_probe_count_dropped(t);
	}
	pthread_mutex_unlock(&lock);
}

#else /* built without the CUDA headers */

uint32_t pt_cupti_built_version(void)
{
	return 0;
}

void pt_cupti_api_callback(void *userdata, int domain, unsigned cbid, const void *cbdata)
{
	(void)userdata;
	(void)domain;
	(void)cbid;
	(void)cbdata;
}

void pt_cupti_take_records(uint32_t version, const void *const *recs, size_t n)
{
	(void)version;
	(void)recs;
	(void)n;
}

int pt_cupti_stop(unsigned timeout_ms)
{
	(void)timeout_ms;
	return 0;
}

static int start(const char *lib, int check_driver, char *why, size_t len)
{
	(void)lib;
	(void)check_driver;
	return fail(why, len, "this libproftop.so was built without the CUDA headers "
			      "(rebuild with CUDA_HOME set)");
}

#endif

void pt_cupti_reset_for_test(void)
{
	int st = pt_cupti_state();
	if (st == PT_CUPTI_ON || st == PT_CUPTI_STOPPING)
		pt_cupti_stop(5000);
#ifdef PT_HAVE_CUDA_HEADERS
	if (pt_cupti_g.lib) {
		free(pt_cupti_g.launches);
		memset(&pt_cupti_g, 0, sizeof pt_cupti_g);
	}
#endif
	__atomic_store_n(&g_state, PT_CUPTI_IDLE, __ATOMIC_RELEASE);
}

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

/* Late arrival: started once the constructor (and the loader's lock) is behind. */
static void *late_start(void *arg)
{
	(void)arg;
	struct timespec ts = {0, 50 * 1000000L};
	nanosleep(&ts, NULL); /* InitializeInjection, if the driver is loading us, comes first */
	if (pt_cupti_state() != PT_CUPTI_IDLE)
		return NULL;
	void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
	if (!cuda)
		return NULL;
	/* before cuInit, InitializeInjection will come: CUDA_INJECTION64_PATH names us */
	int (*count)(int *) = (int (*)(int *))dlsym(cuda, "cuDeviceGetCount");
	int n = 0;
	int initialized = count && count(&n) != 3 /* CUDA_ERROR_NOT_INITIALIZED */;
	dlclose(cuda);
	if (initialized)
		pt_cupti_start(NULL, 1, NULL, 0);
	return NULL;
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
	void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
	if (!cuda)
		return; /* cuInit will call InitializeInjection */
	dlclose(cuda);
	pthread_t th;
	pthread_attr_t at;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_create(&th, &at, late_start, NULL);
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Called by the CUDA driver during cuInit when CUDA_INJECTION64_PATH names us. */
PT_EXPORT int InitializeInjection(void);
PT_EXPORT int InitializeInjection(void)
{
	if (!cupti_disabled())
		pt_cupti_start(NULL, 0, NULL, 0); /* the driver is here: it called us */
	return 1;
}
