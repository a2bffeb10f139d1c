/*
 * probe_cupti_share.c - CUPTI shared with another profiler in the same
 * process (torch.profiler's Kineto, or anything else built on the activity
 * API) instead of taken by it. CUPTI's activity settings are process-wide:
 * one pair of buffer callbacks, one timestamp callback, one set of enabled
 * kinds. Kineto, when a trace starts, registers its own buffer callbacks and
 * timestamp callback (raw TSC ticks) and enables its kinds; when it stops it
 * disables every kind it uses and forces a flush. Left alone, proftop's GPU
 * lanes would stop for good at the first torch.profiler window.
 *
 * When libproftop.so is preloaded (proftop run/record), its cupti* symbols
 * below come first in the process's symbol lookup, so a library linked
 * against libcupti calls them; each is passed to the real libcupti except:
 *
 *  - cuptiActivityRegisterCallbacks: remembered, not passed on while proftop
 *    traces. proftop's callbacks stay; while the other component has a kind
 *    enabled, buffers come from its request callback and go back to its
 *    completion callback as soon as CUPTI returns them, after proftop
 *    copied the records; proftop's own buffers that complete during the
 *    window are copied into one of its buffers too (records from before
 *    its window among them, which it leaves out as it does any record
 *    outside its window): both see every record of the window.
 *  - cuptiActivityDisable of a kind proftop uses: remembered, not passed on.
 *  - cuptiFinalize while proftop traces: not passed on (it would end
 *    proftop's tracing too).
 *  - cuptiActivityRegisterTimestampCallback: passed on (the other trace
 *    must get the clock it asked for); proftop converts those timestamps
 *    back (probe_cupti_clock.h) and, when the other component's window ends,
 *    gives CUPTI its CLOCK_MONOTONIC callback again.
 *  - cuptiSubscribe failing because proftop holds the one subscription
 *    (CUDA up to 13.1): passed on, and said in a note, because that tool's
 *    trace will lack GPU activity.
 *
 * Each window's start and end become notes. PROFTOP_CUPTI_SHARE=0 passes
 * every call on untouched. When the probe is not preloaded (loaded through
 * CUDA_INJECTION64_PATH alone, or from Python with ctypes), none of this is
 * in the path: the delivery thread's watchdog then says that records
 * stopped coming.
 *
 * Threading: the other component's calls come from its threads; its state
 * is under pt_cupti_foreign_g.lock, never held while calling out.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "probe_cupti.h"

#ifdef PT_HAVE_CUDA_HEADERS

#include "probe_cupti_int.h"

#define C pt_cupti_g
#define S pt_cupti_foreign_g
#define NBUFS (sizeof S.bufs / sizeof *S.bufs)
#define CLOSING_NS 2000000000ull /* a window's closing flush, if any, comes within this */

PT_HIDDEN struct pt_cupti_foreign pt_cupti_foreign_g = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int share_off(void)
{
	static int off = -1;
	if (off < 0) {
		const char *s = getenv("PROFTOP_CUPTI_SHARE");
		off = s && !strcmp(s, "0");
	}
	return off;
}

/* The probe traces (and so keeps its callbacks in place). */
static int tracing(void)
{
	int st = pt_cupti_state();
	return st == PT_CUPTI_ON || st == PT_CUPTI_STOPPING;
}

static int find_cupti(struct dl_phdr_info *info, size_t size, void *p)
{
	(void)size;
	const char *name = info->dlpi_name;
	const char *slash = name ? strrchr(name, '/') : NULL;
	const char *base = slash ? slash + 1 : name;
	if (!base || strncmp(base, "libcupti", 8) != 0 || !strstr(base, ".so") ||
	    !strncmp(base, "libcupti_static", 15))
		return 0;
	*(void **)p = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
	return *(void **)p != NULL;
}

/* The real entry point: in the library the probe opened, else in the libcupti the caller loaded. */
static void *real(const char *name)
{
	static void *loaded; /* atomic */
	void *lib = C.lib;
	if (!lib)
		lib = __atomic_load_n(&loaded, __ATOMIC_ACQUIRE);
	if (!lib) {
		void *h = NULL;
		dl_iterate_phdr(find_cupti, &h);
		if (h) {
			void *none = NULL;
			if (!__atomic_compare_exchange_n(&loaded, &none, h, 0, __ATOMIC_ACQ_REL,
							 __ATOMIC_ACQUIRE))
				dlclose(h);
			lib = __atomic_load_n(&loaded, __ATOMIC_ACQUIRE);
		}
	}
	void *f = lib ? dlsym(lib, name) : NULL;
	return f ? f : dlsym(RTLD_NEXT, name);
}

#define REAL(type, name) ((type)real(name))

int pt_cupti_share_interposed(void)
{
	static int v = -1;
	if (v < 0)
		v = !share_off() && dlsym(RTLD_DEFAULT, "cuptiActivityRegisterCallbacks") ==
					(void *)cuptiActivityRegisterCallbacks;
	return v;
}

/* Called with S.lock held: would the other component get records? */
static int would_be_active(void)
{
	return S.req && S.done && S.kinds;
}

/* Called with S.lock held: is the other component getting records? */
static int update_active(void)
{
	int was = S.active;
	S.active = would_be_active();
	if (S.active && !was)
		S.windows++;
	if (!S.active && was)
		S.closing_ns = pt_clock_mono_ns(); /* its closing flush still gets proftop's buffers */
	return S.active - was; /* 1 started, -1 ended */
}

/* Before a window opens: proftop's complete buffers go out first, so that
 * the window's records land in buffers of the other component. */
static void flush_before_window(void)
{
	if (!tracing() || !C.f.ActivityFlushAll)
		return;
	pthread_mutex_lock(&S.lock);
	int opening = !S.active && would_be_active();
	pthread_mutex_unlock(&S.lock);
	if (opening)
		C.f.ActivityFlushAll(0);
}

static void window_changed(int change)
{
	if (change > 0) {
		pt_cupti_note(0, "another profiler in this process (torch.profiler?) started "
				 "collecting GPU activity: CUPTI is shared, proftop keeps recording");
	} else if (change < 0) {
		/* its timestamp callback goes with it */
		pthread_mutex_lock(&S.lock);
		S.clock = NULL;
		pthread_mutex_unlock(&S.lock);
		if (tracing())
			pt_cupti_restore_clock();
		pt_cupti_note(0, "the other profiler's GPU collection ended");
	}
}

int pt_cupti_share_owns_clock(void)
{
	pthread_mutex_lock(&S.lock);
	int v = S.active && S.clock;
	pthread_mutex_unlock(&S.lock);
	return v;
}

int pt_cupti_share_request(uint8_t **buf, size_t *size, size_t *max_recs)
{
	pthread_mutex_lock(&S.lock);
	CUpti_BuffersCallbackRequestFunc req = S.active && S.nbufs < NBUFS ? S.req : NULL;
	pthread_mutex_unlock(&S.lock);
	if (!req)
		return 0;
	req(buf, size, max_recs);
	if (!*buf)
		return 1; /* it gave none: CUPTI drops, as it would without proftop */
	pthread_mutex_lock(&S.lock);
	if (S.nbufs < NBUFS)
		S.bufs[S.nbufs++] = *buf;
	pthread_mutex_unlock(&S.lock);
	return 1;
}

int pt_cupti_share_take_buf(uint8_t *buf, CUpti_BuffersCallbackCompleteFunc *done)
{
	int found = 0;
	pthread_mutex_lock(&S.lock);
	for (uint32_t i = 0; i < S.nbufs; i++)
		if (S.bufs[i] == buf) {
			S.bufs[i] = S.bufs[--S.nbufs];
			found = 1;
			break;
		}
	*done = S.done;
	pthread_mutex_unlock(&S.lock);
	return found;
}

void pt_cupti_share_forward(CUcontext ctx, uint32_t stream, const uint8_t *buf, size_t valid)
{
	pthread_mutex_lock(&S.lock);
	int closing = S.closing_ns && pt_clock_mono_ns() - S.closing_ns < CLOSING_NS;
	CUpti_BuffersCallbackRequestFunc req = S.active || closing ? S.req : NULL;
	CUpti_BuffersCallbackCompleteFunc done = S.done;
	pthread_mutex_unlock(&S.lock);
	if (!req || !done || !valid)
		return;
	uint8_t *b = NULL;
	size_t size = 0, max_recs = 0;
	req(&b, &size, &max_recs);
	if (!b)
		return;
	size_t n = valid <= size ? valid : 0; /* too small a buffer goes back empty */
	if (n)
		memcpy(b, buf, n);
	done(ctx, stream, b, size, n);
}

static int our_kind(CUpti_ActivityKind kind)
{
	for (size_t i = 0; i < PT_CUPTI_OUR_KINDS; i++)
		if (pt_cupti_our_kinds[i] == kind)
			return 1;
	return 0;
}

/* ---- the interposed entry points ---- */

PT_EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(
    CUpti_BuffersCallbackRequestFunc req, CUpti_BuffersCallbackCompleteFunc done)
{
	typedef CUptiResult (*fn)(CUpti_BuffersCallbackRequestFunc,
				  CUpti_BuffersCallbackCompleteFunc);
	if (share_off())
		return REAL(fn, "cuptiActivityRegisterCallbacks")(req, done);
	pthread_mutex_lock(&S.lock);
	S.req = req;
	S.done = done;
	pthread_mutex_unlock(&S.lock);
	flush_before_window();
	pthread_mutex_lock(&S.lock);
	int change = update_active();
	pthread_mutex_unlock(&S.lock);
	CUptiResult r = CUPTI_SUCCESS;
	if (!tracing()) {
		fn f = REAL(fn, "cuptiActivityRegisterCallbacks");
		r = f ? f(req, done) : CUPTI_ERROR_NOT_INITIALIZED;
	}
	window_changed(change);
	return r;
}

PT_EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(
    CUpti_TimestampCallbackFunc clock)
{
	typedef CUptiResult (*fn)(CUpti_TimestampCallbackFunc);
	fn f = REAL(fn, "cuptiActivityRegisterTimestampCallback");
	if (!f)
		return CUPTI_ERROR_NOT_INITIALIZED;
	if (share_off())
		return f(clock);
	pthread_mutex_lock(&S.lock);
	S.clock = clock;
	pthread_mutex_unlock(&S.lock);
	return f(clock);
}

PT_EXPORT CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
	typedef CUptiResult (*fn)(CUpti_ActivityKind);
	fn f = REAL(fn, "cuptiActivityEnable");
	if (!f)
		return CUPTI_ERROR_NOT_INITIALIZED;
	if (share_off() || (unsigned)kind >= 64)
		return f(kind);
	pthread_mutex_lock(&S.lock);
	int had = !!(S.kinds & (1ull << kind));
	S.kinds |= 1ull << kind;
	pthread_mutex_unlock(&S.lock);
	flush_before_window();
	CUptiResult r = f(kind);
	pthread_mutex_lock(&S.lock);
	if (r != CUPTI_SUCCESS && !had)
		S.kinds &= ~(1ull << kind);
	int change = update_active();
	pthread_mutex_unlock(&S.lock);
	window_changed(change);
	return r;
}

PT_EXPORT CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
	typedef CUptiResult (*fn)(CUpti_ActivityKind);
	fn f = REAL(fn, "cuptiActivityDisable");
	if (!f)
		return CUPTI_ERROR_NOT_INITIALIZED;
	if (share_off())
		return f(kind);
	pthread_mutex_lock(&S.lock);
	if ((unsigned)kind < 64)
		S.kinds &= ~(1ull << kind);
	int change = update_active();
	pthread_mutex_unlock(&S.lock);
	CUptiResult r = CUPTI_SUCCESS;
	if (!(tracing() && our_kind(kind)))
		r = f(kind);
	window_changed(change);
	return r;
}

PT_EXPORT CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	typedef CUptiResult (*fn)(uint32_t);
	fn f = REAL(fn, "cuptiActivityFlushAll");
	CUptiResult r = f ? f(flag) : CUPTI_ERROR_NOT_INITIALIZED;
	if (!share_off()) {
		/* the flush that closes its window is over */
		pthread_mutex_lock(&S.lock);
		if (!S.active)
			S.closing_ns = 0;
		pthread_mutex_unlock(&S.lock);
	}
	return r;
}

PT_EXPORT CUptiResult CUPTIAPI cuptiFinalize(void)
{
	typedef CUptiResult (*fn)(void);
	if (!share_off() && tracing()) {
		pthread_mutex_lock(&S.lock);
		S.kinds = 0;
		int change = update_active();
		pthread_mutex_unlock(&S.lock);
		window_changed(change);
		pt_cupti_note(0, "another component called cuptiFinalize; not passed on while proftop "
				 "traces the GPU");
		return CUPTI_SUCCESS;
	}
	fn f = REAL(fn, "cuptiFinalize");
	return f ? f() : CUPTI_ERROR_NOT_INITIALIZED;
}

static void subscribe_failed(CUptiResult r)
{
	static int said;
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && tracing() &&
	    !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		pt_cupti_note(1, "another profiler in this process (torch.profiler?) could not "
				 "subscribe to CUPTI, which proftop holds: its trace may lack GPU "
				 "activity (PROFTOP_CUPTI=0 leaves CUPTI to it)");
}

PT_EXPORT CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *sub,
					       CUpti_CallbackFunc cb, void *ud)
{
	typedef CUptiResult (*fn)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	fn f = REAL(fn, "cuptiSubscribe");
	CUptiResult r = f ? f(sub, cb, ud) : CUPTI_ERROR_NOT_INITIALIZED;
	if (!share_off())
		subscribe_failed(r);
	return r;
}

#if PT_CUPTI_HAVE_SUBSCRIBE_V2
PT_EXPORT CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle *sub,
						  CUpti_CallbackFunc cb, void *ud,
						  CUpti_SubscriberParams *params)
{
	typedef CUptiResult (*fn)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
				  CUpti_SubscriberParams *);
	fn f = REAL(fn, "cuptiSubscribe_v2");
	CUptiResult r = f ? f(sub, cb, ud, params) : CUPTI_ERROR_NOT_INITIALIZED;
	if (!share_off())
		subscribe_failed(r);
	return r;
}
#endif

#endif /* PT_HAVE_CUDA_HEADERS */
