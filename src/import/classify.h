/*
 * classify.h - which kind an event is, from its category, its name and the
 * lane it sits on. Shared by the trace-file reader and the live probe so a
 * trace and a live session give the same summaries. The rules (in order)
 * are documented beside their code in classify.c.
 *
 * Threading: pure functions, no state.
 */
#ifndef PT_CLASSIFY_H
#define PT_CLASSIFY_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/event.h"

/* What kind of lane an event sits on (the on_device_lane argument). */
#define PT_LANE_HOST	0 /* a host thread */
#define PT_LANE_DEVICE	1 /* a device stream: GPU n, Ascend Hardware, "CUDA functions" */
#define PT_LANE_COMM	2 /* a collective-communication lane (msprof "HCCL") */
#define PT_LANE_RUNTIME 3 /* host runtime API lane (msprof "CANN") */
#define PT_LANE_DERIVED 4 /* computed summary lanes (msprof "Overlap Analysis") */

/*
 * Kind of an event with category cat (catlen 0 = no category) and name; the
 * lane matters only when the category says nothing. *flags gets PT_EVF_COMM
 * / PT_EVF_SYNC for host calls that communicate or synchronize.
 */
enum pt_kind pt_classify(const char *cat, size_t catlen, const char *name, size_t namelen,
			 int on_device_lane, uint8_t *flags);

/*
 * 1 when name is one of the profiler's own spans or marks (Kineto's
 * "PyTorch Profiler (0)", "Iteration Start: PyTorch Profiler", "Record
 * Window End"): such events get PT_EVF_INTERNAL and stay out of every
 * summary and of the profiled span.
 */
int pt_classify_internal(const char *name, size_t len);

/*
 * Lane of a process (or of a pid given as a string) from its name or
 * labels: "GPU 0", "Ascend Hardware", "CUDA functions" -> PT_LANE_DEVICE,
 * "HCCL" -> PT_LANE_COMM, "CANN" -> PT_LANE_RUNTIME, "Overlap Analysis" ->
 * PT_LANE_DERIVED, anything else -> PT_LANE_HOST.
 */
int pt_classify_lane(const char *name, size_t len);

#endif
