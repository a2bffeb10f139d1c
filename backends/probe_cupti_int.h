/*
 * probe_cupti_int.h - what the CUPTI files of the probe share when they are
 * built with CUDA's headers: the libcupti entry points (found with dlsym in
 * the library the job uses, so a call never goes through the probe's own
 * interposed cupti* symbols), the tracing state, and the functions each file
 * offers the others:
 *
 *   probe_cupti.c        finding and starting CUPTI, the API callbacks
 *   probe_cupti_flow.c   activity buffers, the delivery thread, exit
 *   probe_cupti_share.c  the cupti* symbols another profiler calls
 *                        (torch.profiler's Kineto) when the probe is
 *                        preloaded: CUPTI shared instead of taken
 *
 * The header is compiled against whichever CUPTI headers exist (CUDA 11.8
 * or later); what only newer headers declare is gated on CUPTI_API_VERSION.
 * Records are never read through these headers' structs
 * (probe_cupti_xlate.h).
 *
 * Threading: the entry points are written once before tracing starts;
 * struct pt_cupti_state's fields say who touches them.
 */
#ifndef PT_PROBE_CUPTI_INT_H
#define PT_PROBE_CUPTI_INT_H

#include <cupti.h>
#include <pthread.h>
#include <sys/types.h>

#include "probe_int.h"
#include "probe_cupti_clock.h"
#include "probe_cupti_xlate.h"

#if CUPTI_API_VERSION >= 130000
#define PT_CUPTI_HAVE_SUBSCRIBE_V2 1
#else
#define PT_CUPTI_HAVE_SUBSCRIBE_V2 0
#endif

#define PT_CUPTI_MAX_PATH 4096

/* The activity kinds proftop needs; a foreign disable of these is not forwarded. */
#define PT_CUPTI_OUR_KINDS 5
extern const CUpti_ActivityKind pt_cupti_our_kinds[PT_CUPTI_OUR_KINDS];

struct pt_cupti_api {
	CUptiResult (*Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
#if PT_CUPTI_HAVE_SUBSCRIBE_V2
	CUptiResult (*Subscribe_v2)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
				    CUpti_SubscriberParams *);
#endif
	CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle);
	CUptiResult (*GetVersion)(uint32_t *);
	CUptiResult (*GetResultString)(CUptiResult, const char **);
	CUptiResult (*EnableDomain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
	CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
				      CUpti_CallbackId);
	CUptiResult (*ActivityEnable)(CUpti_ActivityKind);
	CUptiResult (*ActivityDisable)(CUpti_ActivityKind);
	CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
						 CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc);
	CUptiResult (*ActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
	CUptiResult (*ActivityFlushAll)(uint32_t);
	CUptiResult (*GetTimestamp)(uint64_t *);
};

struct pt_cupti_state {
	/* written before tracing starts, read-only after */
	void *lib;
	char path[PT_CUPTI_MAX_PATH];
	uint32_t version; /* cuptiGetVersion */
	const struct pt_cupti_layout *lay;
	int layout_newer; /* a CUPTI newer than every known layout */
	int driver_cuda;  /* cuDriverGetVersion, 0 = not known */
	struct pt_cupti_api f;
	CUpti_SubscriberHandle sub;
	int own_clock;    /* the probe's timestamp callback was accepted */
	pid_t pid;        /* the process that started tracing (a vfork child is not it) */
	/* written by launching threads (atomics) */
	struct pt_cupti_launch *launches;
	uint64_t device_calls; /* calls that make device work (launches, copies, sets) */
};

PT_HIDDEN extern struct pt_cupti_state pt_cupti_g;

/* probe_cupti.c */
PT_HIDDEN int pt_cupti_state_cas(int from, int to);
PT_HIDDEN const char *pt_cupti_result_text(CUptiResult r);
PT_HIDDEN pt_cupti_demangle_fn pt_cupti_demangler(void);
static inline uint32_t pt_cupti_intern(void *ctx, const char *s, size_t len)
{
	(void)ctx;
	return pt_probe_intern(s, len);
}
PT_HIDDEN uint64_t CUPTIAPI pt_cupti_session_clock(void);
/* The activity callbacks and kinds the probe wants, (re)installed; 0 or a CUPTI error. */
PT_HIDDEN CUptiResult pt_cupti_install_activity(int with_clock);
/* CUPTI's clock back to the session clock (when this CUPTI takes a callback safely). */
PT_HIDDEN void pt_cupti_restore_clock(void);

/* probe_cupti_flow.c */
PT_HIDDEN void CUPTIAPI pt_cupti_buf_request(uint8_t **buf, size_t *size, size_t *max_recs);
PT_HIDDEN void CUPTIAPI pt_cupti_buf_done(CUcontext ctx, uint32_t stream, uint8_t *buf,
					 size_t size, size_t valid);
/* Starts the delivery thread and the exit hooks; 0 or -1. */
PT_HIDDEN int pt_cupti_flow_start(void);
/* A one-line note for the session ("proftop: " is prepended), emitted by the
 * delivery thread in order with the records; also on stderr when loud. Any thread. */
PT_HIDDEN void pt_cupti_note(int loud, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* probe_cupti_share.c: another component's activity API use, as the probe sees it */
struct pt_cupti_foreign {
	pthread_mutex_t lock;
	CUpti_BuffersCallbackRequestFunc req; /* its buffer callbacks, NULL = none */
	CUpti_BuffersCallbackCompleteFunc done;
	CUpti_TimestampCallbackFunc clock;    /* its timestamp callback, NULL = none */
	uint64_t kinds;      /* bit k: it has kind k (< 64) enabled */
	int active;          /* it gets records: callbacks registered and a kind enabled */
	uint64_t closing_ns; /* when its window ended, until its closing flush ran (0) */
	uint32_t windows;    /* how many times it became active */
	void *bufs[256];     /* buffers its request callback gave, still with CUPTI */
	uint32_t nbufs;
};
PT_HIDDEN extern struct pt_cupti_foreign pt_cupti_foreign_g;
/* While the other component is active: a buffer from its request callback
 * (remembered, so that it goes back to it). 1 when it gave one. */
PT_HIDDEN int pt_cupti_share_request(uint8_t **buf, size_t *size, size_t *max_recs);
/* 1 when buf came from the other component (and forgets it): *done gets its
 * completion callback, to be called with the buffer. */
PT_HIDDEN int pt_cupti_share_take_buf(uint8_t *buf, CUpti_BuffersCallbackCompleteFunc *done);
/* While the other component is active: a copy of one of proftop's completed
 * buffers, in a buffer from its request callback, to its completion callback. */
PT_HIDDEN void pt_cupti_share_forward(CUcontext ctx, uint32_t stream, const uint8_t *buf,
				      size_t valid);
/* 1 while the other component's timestamp callback should stay CUPTI's clock. */
PT_HIDDEN int pt_cupti_share_owns_clock(void);
/* 1 when the probe's cupti* symbols are the ones the process binds to. */
PT_HIDDEN int pt_cupti_share_interposed(void);

#endif
