/*
 * fake_cupti.c - a stand-in libcupti for the tests of the probe's CUPTI
 * path without a GPU (tests/unit/test_probe_cupti.c, tests/e2e/test_cupti.sh).
 * It has the entry points the probe and torch.profiler's Kineto call and
 * behaves as the documentation says CUPTI does, as far as the probe can
 * tell:
 *
 *  - one subscriber (a second gets CUPTI_ERROR_MULTIPLE_SUBSCRIBERS), whose
 *    callback sees the runtime and driver calls the test "makes", with a
 *    correlation id per call and the driver call a runtime launch makes
 *    inside it (same correlation id);
 *  - activity records written in the layout of the CUPTI version it plays
 *    (FAKE_CUPTI_VERSION, default 130001: Kernel8 for 11.8, Kernel9 for
 *    12.x, Kernel10 for 13.x; Memcpy5 before 12.8, Memcpy6 after), into
 *    buffers from the registered request callback, handed to the registered
 *    completion callback when full and complete, on cuptiActivityFlushAll(0)
 *    when complete, and on a forced flush whether complete or not (a kernel
 *    still running then has zero timestamps, as in CUPTI);
 *  - timestamps from the registered timestamp callback, else from its
 *    default clock (CLOCK_REALTIME, or FAKE_CUPTI_CLOCK=mono); a kernel's
 *    times are decided at launch on the record clock then current, and
 *    converted again when it completes only if that clock changed meanwhile
 *    (converting a time a second old with a rate measured over 2 ms moved
 *    kernels microseconds before their own launch on a loaded machine);
 *  - FAKE_CUPTI_REFUSE_CLOCK=1: cuptiActivityRegisterTimestampCallback
 *    fails (an old libcupti).
 *
 * The test drives it through fake_cupti_* functions (dlsym): launches,
 * completion of the "GPU" work, and a foreign component taking the activity
 * API without going through the probe (fake_cupti_foreign_*).
 *
 * Built by the tests (-Bsymbolic, as the real one: its calls to itself never
 * go through a preloaded probe):
 *   cc -shared -fPIC -Wl,-Bsymbolic -Wl,-soname,libcupti.so.12 -I$CUDA_HOME/include \
 *      -o DIR/libcupti.so.12 fake_cupti.c -lpthread
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define EXPORT __attribute__((visibility("default")))
#define MAX_RECS 65536
#define MAX_BUFS 4096

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t g_version;
static int g_default_mono, g_refuse_clock;
static CUpti_CallbackFunc g_sub_cb;
static void *g_sub_ud;
static int g_subscribed;
static int g_rt_all, g_drv_all;
static unsigned char g_rt_on[1024], g_drv_on[1024];
static CUpti_BuffersCallbackRequestFunc g_req;
static CUpti_BuffersCallbackCompleteFunc g_done;
static CUpti_TimestampCallbackFunc g_clock;
static double g_clock_rate; /* clock units per ns, measured at registration */
static uint64_t g_kinds;
static uint32_t g_corr;
static size_t g_dropped;

/* records not yet complete: where they are and their planned times */
struct pending {
	uint8_t *rec;
	int kind;
	uint64_t start_mono, end_mono;
	int done;
	/* the start on the record clock current at launch, and that clock */
	uint64_t start_rec;
	CUpti_TimestampCallbackFunc clk;
	int clk_mono;
};
static struct pending g_pend[MAX_RECS];
static unsigned g_npend;

struct fbuf {
	uint8_t *p;
	size_t size, used;
	unsigned incomplete;
	int full;
};
static struct fbuf g_bufs[MAX_BUFS];
static unsigned g_nbufs;

static void init(void)
{
	if (g_version)
		return;
	memset(g_rt_on, 0, sizeof g_rt_on);
	const char *v = getenv("FAKE_CUPTI_VERSION");
	g_version = v && *v ? (uint32_t)strtoul(v, NULL, 10) : 130001;
	const char *c = getenv("FAKE_CUPTI_CLOCK");
	g_default_mono = c && !strcmp(c, "mono");
	const char *r = getenv("FAKE_CUPTI_REFUSE_CLOCK");
	g_refuse_clock = r && !strcmp(r, "1");
}

/* the current record clock at mono time t */
static uint64_t stamp(uint64_t t)
{
	uint64_t now = mono_ns();
	if (g_clock) {
		double v = (double)g_clock() - (double)(int64_t)(now - t) * g_clock_rate;
		return v > 0 ? (uint64_t)v : 0;
	}
	if (g_default_mono)
		return t;
	return real_ns() - (now - t);
}

static size_t kernel_size(void)
{
#if CUPTI_API_VERSION >= 130000
	if (g_version >= 130000)
		return sizeof(CUpti_ActivityKernel10);
	if (g_version >= 19)
		return sizeof(CUpti_ActivityKernel9);
#endif
	return sizeof(CUpti_ActivityKernel8);
}

static size_t memcpy_size(void)
{
	return g_version >= 26 ? 96 : 88; /* Memcpy6, Memcpy5 */
}

static size_t rec_size(int kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		return kernel_size();
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return memcpy_size();
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		return sizeof(CUpti_ActivityExternalCorrelation);
	}
	return 0;
}

/* ---- buffers (lock held) ---- */

struct delivery {
	uint8_t *p;
	size_t size, used;
};

static struct fbuf *current(struct delivery *out, unsigned *nout, size_t need)
{
	struct fbuf *b = g_nbufs ? &g_bufs[g_nbufs - 1] : NULL;
	if (b && !b->full && b->size - b->used >= need)
		return b;
	if (b && !b->full)
		b->full = 1;
	/* a full buffer whose records are complete goes back at once (CUPTI's worker) */
	if (b && b->full && !b->incomplete && out) {
		out[(*nout)++] = (struct delivery){b->p, b->size, b->used};
		b->p = NULL;
		g_nbufs--;
	}
	if (!g_req || g_nbufs >= MAX_BUFS)
		return NULL;
	uint8_t *p = NULL;
	size_t size = 0, maxr = 0;
	pthread_mutex_unlock(&lock);
	g_req(&p, &size, &maxr); /* CUPTI asks on the thread that needs one */
	pthread_mutex_lock(&lock);
	if (!p || size < need)
		return NULL;
	b = &g_bufs[g_nbufs++];
	*b = (struct fbuf){p, size, 0, 0, 0};
	return b;
}

static void deliver_all(struct delivery *d, unsigned n)
{
	CUpti_BuffersCallbackCompleteFunc done = g_done;
	for (unsigned i = 0; i < n; i++)
		if (done)
			done(NULL, 0, d[i].p, d[i].size, d[i].used);
}

/* Appends a record of kind; returns it (zeroed) or NULL when dropped. Lock held. */
static uint8_t *append(int kind, struct delivery *out, unsigned *nout)
{
	size_t size = rec_size(kind);
	struct fbuf *b = current(out, nout, size);
	if (!b) {
		g_dropped++;
		return NULL;
	}
	uint8_t *r = b->p + b->used;
	memset(r, 0, size);
	memcpy(r, &kind, sizeof kind);
	b->used += (size + 7) & ~(size_t)7;
	return r;
}

static struct fbuf *buf_of(const uint8_t *rec)
{
	for (unsigned i = 0; i < g_nbufs; i++)
		if (rec >= g_bufs[i].p && rec < g_bufs[i].p + g_bufs[i].size)
			return &g_bufs[i];
	return NULL;
}

/* ---- the API ---- */

EXPORT CUptiResult cuptiGetVersion(uint32_t *v)
{
	init();
	*v = g_version;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
	*s = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "multiple subscribers"
	     : r == CUPTI_ERROR_NOT_SUPPORTED		      ? "not supported"
							      : "fake error";
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *ud)
{
	init();
	pthread_mutex_lock(&lock);
	if (g_subscribed) {
		pthread_mutex_unlock(&lock);
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	g_subscribed = 1;
	g_sub_cb = cb;
	g_sub_ud = ud;
	*s = (CUpti_SubscriberHandle)(uintptr_t)0x5b;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

#if CUPTI_API_VERSION >= 130000
EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *ud,
				     CUpti_SubscriberParams *p)
{
	CUptiResult r = cuptiSubscribe(s, cb, ud);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && p && p->oldSubscriberName)
		strncpy(p->oldSubscriberName, "fake-holder", p->oldSubscriberSize);
	return r;
}
#endif

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
	(void)s;
	pthread_mutex_lock(&lock);
	g_subscribed = 0;
	g_sub_cb = NULL;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableDomain(uint32_t on, CUpti_SubscriberHandle s, CUpti_CallbackDomain d)
{
	(void)s;
	if (d == CUPTI_CB_DOMAIN_RUNTIME_API) {
		g_rt_all = (int)on;
		memset(g_rt_on, on ? 1 : 0, sizeof g_rt_on);
	} else if (d == CUPTI_CB_DOMAIN_DRIVER_API) {
		g_drv_all = (int)on;
		memset(g_drv_on, on ? 1 : 0, sizeof g_drv_on);
	}
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t on, CUpti_SubscriberHandle s,
				       CUpti_CallbackDomain d, CUpti_CallbackId id)
{
	(void)s;
	if (id >= 1024)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (d == CUPTI_CB_DOMAIN_RUNTIME_API)
		g_rt_on[id] = (unsigned char)(on != 0);
	else if (d == CUPTI_CB_DOMAIN_DRIVER_API)
		g_drv_on[id] = (unsigned char)(on != 0);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
	pthread_mutex_lock(&lock);
	g_kinds |= 1ull << k;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
	pthread_mutex_lock(&lock);
	g_kinds &= ~(1ull << k);
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
						  CUpti_BuffersCallbackCompleteFunc done)
{
	pthread_mutex_lock(&lock);
	g_req = req;
	g_done = done;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

/* (mono, f()) with f read between two monotonic reads: the narrowest of 5 */
static void pair_read(CUpti_TimestampCallbackFunc f, uint64_t *mono, uint64_t *clk)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 5; i++) {
		uint64_t a = mono_ns(), c = f(), b = mono_ns();
		if (b - a < best) {
			best = b - a;
			*mono = a + (b - a) / 2;
			*clk = c;
		}
	}
}

EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
	init();
	if (g_refuse_clock)
		return CUPTI_ERROR_NOT_SUPPORTED;
	/* its rate against CLOCK_MONOTONIC, to interpolate as CUPTI does: each
	 * reading of f between two of the monotonic clock, the narrowest of a
	 * few (a thread preempted between two plain reads skewed the rate) */
	uint64_t m0, c0, m1, c1;
	pair_read(f, &m0, &c0);
	struct timespec ts = {0, 2000000};
	nanosleep(&ts, NULL);
	pair_read(f, &m1, &c1);
	pthread_mutex_lock(&lock);
	g_clock = f;
	g_clock_rate = m1 > m0 ? (double)(c1 - c0) / (double)(m1 - m0) : 1.0;
	/* A nanosecond clock (CUPTI's contract, and the probe's) is taken as one:
	 * a rate measured over 2 ms is good to 1e-4 at best on a loaded machine,
	 * which over a second between launch and completion would move a kernel
	 * tens of microseconds before its own launch. Other clocks (TSC ticks)
	 * are whole factors away. */
	if (g_clock_rate > 0.99 && g_clock_rate < 1.01)
		g_clock_rate = 1.0;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *t)
{
	init();
	pthread_mutex_lock(&lock);
	*t = stamp(mono_ns());
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	uint8_t *at;
	if (!*rec) {
		at = buf;
	} else {
		int kind;
		memcpy(&kind, *rec, sizeof kind);
		at = (uint8_t *)*rec + ((rec_size(kind) + 7) & ~(size_t)7);
	}
	if (at >= buf + valid) {
		*rec = NULL;
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	}
	*rec = (CUpti_Activity *)at;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t s, size_t *n)
{
	(void)c;
	(void)s;
	pthread_mutex_lock(&lock);
	*n = g_dropped;
	g_dropped = 0;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	static struct delivery d[MAX_BUFS];
	unsigned n = 0, keep = 0;
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < g_nbufs; i++) {
		struct fbuf *b = &g_bufs[i];
		if (b->used && (!b->incomplete || (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED))) {
			d[n++] = (struct delivery){b->p, b->size, b->used};
			if (b->incomplete) /* handed back unfinished: never completed later */
				for (unsigned j = 0; j < g_npend; j++)
					if (buf_of(g_pend[j].rec) == b)
						g_pend[j].done = 1;
		} else {
			g_bufs[keep++] = *b;
		}
	}
	g_nbufs = keep;
	pthread_mutex_unlock(&lock);
	deliver_all(d, n);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityFlushPeriod(uint32_t ms)
{
	(void)ms;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiFinalize(void)
{
	pthread_mutex_lock(&lock);
	g_kinds = 0;
	g_subscribed = 0;
	g_sub_cb = NULL;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

/* ---- what the test drives ---- */

static void callback(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const char *fn,
		     CUpti_ApiCallbackSite site, uint32_t corr, uint64_t *slot)
{
	CUpti_CallbackFunc cb = g_sub_cb;
	int on = dom == CUPTI_CB_DOMAIN_RUNTIME_API ? g_rt_on[cbid & 1023] : g_drv_on[cbid & 1023];
	if (!cb || !on)
		return;
	CUpti_CallbackData d;
	memset(&d, 0, sizeof d);
	d.callbackSite = site;
	d.functionName = fn;
	d.correlationId = corr;
	d.correlationData = slot;
	cb(g_sub_ud, dom, cbid, &d);
}

/* One record per kernel, planned to start 2 us after the call; dur_ns long. Lock held. */
static void kernel_record(const char *name, uint32_t dev, uint32_t stream, uint32_t corr,
			  uint64_t start, uint64_t dur_ns, struct delivery *out, unsigned *nout)
{
	if (!(g_kinds & (1ull << CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)))
		return;
	uint8_t *r = append(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, out, nout);
	if (!r)
		return;
	CUpti_ActivityKernel8 *k = (CUpti_ActivityKernel8 *)r; /* the fields read share offsets */
	k->deviceId = dev;
	k->streamId = stream;
	k->correlationId = corr;
	k->name = name;
	if (g_npend < MAX_RECS) {
		g_pend[g_npend++] = (struct pending){r, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
						     start, start + dur_ns, 0, stamp(start),
						     g_clock, g_default_mono};
		buf_of(r)->incomplete++;
	}
}

/*
 * A launch made by "the program": api 0 = cudaLaunchKernel (the driver's
 * cuLaunchKernel inside it, same correlation id), 1 = cuLaunchKernel
 * (torch.compile/Triton), 2 = cuLaunchKernelEx, 3 = cudaGraphLaunch of
 * nkernels kernels. Returns the correlation id.
 */
EXPORT uint32_t fake_cupti_launch(int api, const char *name, uint32_t dev, uint32_t stream,
				  uint64_t dur_ns, int nkernels)
{
	static struct delivery out[8];
	unsigned nout = 0;
	uint64_t slot = 0, slot2 = 0;
	pthread_mutex_lock(&lock);
	uint32_t corr = ++g_corr;
	pthread_mutex_unlock(&lock);
	CUpti_CallbackDomain dom = api == 0 || api == 3 ? CUPTI_CB_DOMAIN_RUNTIME_API
							: CUPTI_CB_DOMAIN_DRIVER_API;
	CUpti_CallbackId cbid = api == 0   ? CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000
				: api == 1 ? CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel
				: api == 2 ? CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx
					   : CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000;
	const char *fn = api == 0   ? "cudaLaunchKernel"
			 : api == 1 ? "cuLaunchKernel"
			 : api == 2 ? "cuLaunchKernelEx"
				    : "cudaGraphLaunch";
	callback(dom, cbid, fn, CUPTI_API_ENTER, corr, &slot);
	if (api == 0) /* the runtime's own driver call */
		callback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
			 "cuLaunchKernel", CUPTI_API_ENTER, corr, &slot2);
	uint64_t t = mono_ns() + 2000;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < (nkernels > 0 ? nkernels : 1); i++) {
		kernel_record(name, dev, stream, corr, t, dur_ns, out, &nout);
		t += dur_ns + 1000;
	}
	pthread_mutex_unlock(&lock);
	if (api == 0)
		callback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
			 "cuLaunchKernel", CUPTI_API_EXIT, corr, &slot2);
	callback(dom, cbid, fn, CUPTI_API_EXIT, corr, &slot);
	deliver_all(out, nout);
	return corr;
}

/* cudaMemcpyAsync of bytes (device to host). */
EXPORT uint32_t fake_cupti_memcpy(uint64_t bytes, uint32_t dev, uint32_t stream)
{
	static struct delivery out[8];
	unsigned nout = 0;
	uint64_t slot = 0;
	pthread_mutex_lock(&lock);
	uint32_t corr = ++g_corr;
	pthread_mutex_unlock(&lock);
	callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
		 "cudaMemcpyAsync", CUPTI_API_ENTER, corr, &slot);
	uint64_t t = mono_ns() + 2000;
	pthread_mutex_lock(&lock);
	if (g_kinds & (1ull << CUPTI_ACTIVITY_KIND_MEMCPY)) {
		uint8_t *r = append(CUPTI_ACTIVITY_KIND_MEMCPY, out, &nout);
		if (r) {
			/* Memcpy5 and Memcpy6 share these offsets */
			r[4] = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
			memcpy(r + 8, &bytes, 8);
			memcpy(r + 32, &dev, 4);
			memcpy(r + 40, &stream, 4);
			memcpy(r + 44, &corr, 4);
			if (g_npend < MAX_RECS) {
				g_pend[g_npend++] = (struct pending){
				    r, CUPTI_ACTIVITY_KIND_MEMCPY, t, t + 1000, 0, stamp(t),
				    g_clock, g_default_mono};
				buf_of(r)->incomplete++;
			}
		}
	}
	pthread_mutex_unlock(&lock);
	callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
		 "cudaMemcpyAsync", CUPTI_API_EXIT, corr, &slot);
	deliver_all(out, nout);
	return corr;
}

/* The GPU finishes all work launched so far: timestamps written on the
 * current clock; full buffers whose records are all complete go back. */
EXPORT void fake_cupti_gpu_finish(void)
{
	static struct delivery out[MAX_BUFS];
	unsigned nout = 0, keep = 0;
	pthread_mutex_lock(&lock);
	/* the work runs until its planned end: wait for the last one */
	uint64_t last = 0;
	for (unsigned i = 0; i < g_npend; i++)
		if (!g_pend[i].done && g_pend[i].end_mono > last)
			last = g_pend[i].end_mono;
	uint64_t now = mono_ns();
	if (last > now) {
		struct timespec ts = {0, (long)(last - now)};
		pthread_mutex_unlock(&lock);
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&lock);
	}
	for (unsigned i = 0; i < g_npend; i++) {
		struct pending *p = &g_pend[i];
		if (p->done)
			continue;
		/* one conversion per record, as CUPTI interpolates: end - start stays the duration */
		uint64_t s = p->clk == g_clock && p->clk_mono == g_default_mono
				 ? p->start_rec
				 : stamp(p->start_mono);
		double rate = g_clock ? g_clock_rate : 1.0;
		uint64_t e = s + (uint64_t)((double)(p->end_mono - p->start_mono) * rate);
		memcpy(p->rec + 16, &s, 8); /* start, end: the same offsets in every layout */
		memcpy(p->rec + 24, &e, 8);
		struct fbuf *b = buf_of(p->rec);
		if (b)
			b->incomplete--;
	}
	g_npend = 0;
	for (unsigned i = 0; i < g_nbufs; i++) {
		struct fbuf *b = &g_bufs[i];
		if (b->full && !b->incomplete)
			out[nout++] = (struct delivery){b->p, b->size, b->used};
		else
			g_bufs[keep++] = *b;
	}
	g_nbufs = keep;
	pthread_mutex_unlock(&lock);
	deliver_all(out, nout);
}

/* Plays another CUPTI version from now on (tests run several in one process). */
EXPORT void fake_cupti_reset(uint32_t version, int refuse_clock)
{
	pthread_mutex_lock(&lock);
	init();
	g_version = version;
	g_refuse_clock = refuse_clock;
	g_clock = NULL;
	g_subscribed = 0;
	g_sub_cb = NULL;
	g_req = NULL;
	g_done = NULL;
	g_kinds = 0;
	g_npend = 0;
	g_nbufs = 0; /* buffers still held belong to a stopped probe: forgotten */
	memset(g_rt_on, 0, sizeof g_rt_on);
	memset(g_drv_on, 0, sizeof g_drv_on);
	pthread_mutex_unlock(&lock);
}

EXPORT uint64_t fake_cupti_kinds(void)
{
	return g_kinds;
}

EXPORT int fake_cupti_has_clock(void)
{
	return g_clock != NULL;
}

/* ---- a component taking the activity API without the probe in the way ---- */

static uint64_t g_foreign_kernels, g_foreign_bad;

static uint64_t CUPTIAPI foreign_clock(void)
{
#if defined(__x86_64__)
	return __rdtsc();
#else
	return mono_ns() * 3 + 12345;
#endif
}

static void CUPTIAPI foreign_req(uint8_t **b, size_t *size, size_t *maxr)
{
	*size = 64 << 10;
	*b = aligned_alloc(8, *size);
	*maxr = 0;
}

static void CUPTIAPI foreign_done(CUcontext c, uint32_t s, uint8_t *b, size_t size, size_t valid)
{
	(void)c;
	(void)s;
	(void)size;
	CUpti_Activity *r = NULL;
	while (cuptiActivityGetNextRecord(b, valid, &r) == CUPTI_SUCCESS) {
		if (r->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			continue;
		uint64_t st;
		memcpy(&st, (uint8_t *)r + 16, 8);
		__atomic_add_fetch(st ? &g_foreign_kernels : &g_foreign_bad, 1, __ATOMIC_RELAXED);
	}
	free(b);
}

/* What Kineto does at a trace's start, straight into this library. */
EXPORT void fake_cupti_foreign_start(void)
{
	cuptiActivityRegisterTimestampCallback(foreign_clock);
	cuptiActivityRegisterCallbacks(foreign_req, foreign_done);
	cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

/* ... and at its end: every kind off, a forced flush. Returns the kernels it got. */
EXPORT uint64_t fake_cupti_foreign_stop(void)
{
	pthread_mutex_lock(&lock);
	g_kinds = 0;
	pthread_mutex_unlock(&lock);
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	return g_foreign_kernels;
}
