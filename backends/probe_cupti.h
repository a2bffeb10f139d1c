/*
 * probe_cupti.h - the CUPTI backend inside the probe (probe_cupti.c): what
 * probe.c calls to start it, and the hooks the unit tests use. Nothing here
 * needs a CUDA header.
 */
#ifndef PT_PROBE_CUPTI_H
#define PT_PROBE_CUPTI_H

#include <stddef.h>

#include "probe_int.h"

enum { PT_CUPTI_IDLE = 0, PT_CUPTI_STARTING = 1, PT_CUPTI_ON = 2, PT_CUPTI_OFF = 3 };

/* From the probe's constructor: points CUDA_INJECTION64_PATH at the library
 * (so cuInit starts CUPTI) and starts at once when libcuda is already in. */
PT_HIDDEN void pt_cupti_probe_init(int is_shared_object);
/*
 * Starts GPU tracing once per process (later calls return the first
 * result): lib = libcupti to use (NULL: search), check_driver = look for
 * libcuda.so.1 before asking CUPTI. Returns 0, or -1 with the reason in
 * why; the reason also goes to stderr as one line.
 */
PT_HIDDEN int pt_cupti_start(const char *lib, int check_driver, char *why, size_t len);
PT_HIDDEN int pt_cupti_state(void);
/* Tests: forget the one-shot result so another start can be tried. */
PT_HIDDEN void pt_cupti_reset_for_test(void);
/* The runtime-API callback (a CUpti_CallbackFunc), exposed for tests. */
PT_HIDDEN void pt_cupti_api_callback(void *userdata, int domain, unsigned cbid,
				     const void *cbdata);
/* Translates a completed buffer of n_recs records given as pointers (tests). */
PT_HIDDEN void pt_cupti_take_records(const void *const *recs, size_t n);

#endif
