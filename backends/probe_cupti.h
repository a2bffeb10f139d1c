/*
 * probe_cupti.h - the CUPTI backend inside the probe (probe_cupti*.c): what
 * probe.c calls to start it, and the hooks the unit tests use. Nothing here
 * needs a CUDA header.
 */
#ifndef PT_PROBE_CUPTI_H
#define PT_PROBE_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#include "probe_int.h"

enum {
	PT_CUPTI_IDLE = 0,
	PT_CUPTI_STARTING = 1,
	PT_CUPTI_ON = 2,
	PT_CUPTI_OFF = 3,      /* never started, or failed: CUPTI is not called */
	PT_CUPTI_STOPPING = 4, /* the final flush is running */
	PT_CUPTI_STOPPED = 5,  /* stopped after tracing: CUPTI is not called again */
};

/* From the probe's constructor: points CUDA_INJECTION64_PATH at the library
 * (so cuInit starts CUPTI); when libcuda is already loaded, a short-lived
 * thread starts CUPTI once the constructor has returned, unless the driver
 * calls InitializeInjection first. */
PT_HIDDEN void pt_cupti_probe_init(int is_shared_object);
/*
 * Starts GPU tracing once per process (later calls return the first
 * result): lib = libcupti to use (NULL: search), check_driver = look for
 * libcuda.so.1 and its version before asking CUPTI. Returns 0, or -1 with
 * the reason in why; the reason also goes to stderr as one line.
 */
PT_HIDDEN int pt_cupti_start(const char *lib, int check_driver, char *why, size_t len);
PT_HIDDEN int pt_cupti_state(void);
/*
 * Stops tracing for good: disables proftop's activity kinds, forces CUPTI to
 * hand back every buffer, translates what was complete, and leaves CUPTI
 * alone afterwards. Waits at most timeout_ms for the delivery thread (a
 * thread interrupted inside CUDA may hold a lock CUPTI needs); safe to call
 * from any thread, more than once. Returns 0 when everything was delivered.
 */
PT_HIDDEN int pt_cupti_stop(unsigned timeout_ms);
/* CUPTI_API_VERSION of the headers this probe was built with, 0 without them. */
PT_HIDDEN uint32_t pt_cupti_built_version(void);
/* Tests: forget the one-shot result (after a stop) so another start can be tried. */
PT_HIDDEN void pt_cupti_reset_for_test(void);
/* The API callback (a CUpti_CallbackFunc; runtime and driver domains), exposed for tests. */
PT_HIDDEN void pt_cupti_api_callback(void *userdata, int domain, unsigned cbid,
				     const void *cbdata);
/* Tests: translates records given as pointers (CUPTI API version `version`'s
 * layout; records already on the session clock) into the calling thread's ring. */
PT_HIDDEN void pt_cupti_take_records(uint32_t version, const void *const *recs, size_t n);

#endif
