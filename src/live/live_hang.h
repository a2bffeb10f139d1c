/*
 * live_hang.h - the hang while the job runs (live_hang.c).
 */
#ifndef PT_LIVE_HANG_H
#define PT_LIVE_HANG_H

#include <stdint.h>

#include "live/live_opts.h"

/* Looks for the hang in t at now_ns (CLOCK_MONOTONIC, the sessions'
 * clock); sets res->hang and says it on o->hang_out (live_opts.h). */
void pt_live_hang_check(struct pt_trace *t, const struct pt_live_opts *o,
			struct pt_live_result *res, uint64_t now_ns);

#endif
