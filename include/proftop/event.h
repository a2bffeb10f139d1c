/*
 * event.h - the event model: one fixed-size record per event.
 *
 * Every source (trace file, live probe, CUPTI, samplers) turns what it sees
 * into struct pt_event records on one nanosecond clock per session. Names and
 * track labels are interned once (strtab.h); hot paths compare integers.
 * The kinds mirror Paddle's TracerEventType so the summaries map one to one,
 * plus a few that only the timeline uses.
 *
 * Threading: plain data, no ownership.
 */
#ifndef PROFTOP_EVENT_H
#define PROFTOP_EVENT_H

#include <stdint.h>

enum pt_kind {
	PT_KIND_PROFILE_STEP = 0, /* one training step (arg: samples, 0 = unknown) */
	PT_KIND_DATALOADER,       /* reading the next batch */
	PT_KIND_FORWARD,
	PT_KIND_BACKWARD,
	PT_KIND_OPTIMIZATION,
	PT_KIND_OPERATOR,         /* framework op (aten::mm, conv2d) */
	PT_KIND_OPERATOR_INNER,   /* explicit sub-step of an op (infer_shape, compute) */
	PT_KIND_USER_DEFINED,     /* user annotation / range */
	PT_KIND_PYTHON,           /* python function frame: timeline only */
	PT_KIND_CUDA_RUNTIME,     /* runtime/driver API call on a host thread */
	PT_KIND_KERNEL,           /* device kernel */
	PT_KIND_MEMCPY,           /* device copy (arg: bytes) */
	PT_KIND_MEMSET,           /* device memset (arg: bytes) */
	PT_KIND_COMMUNICATION,    /* collective kernel (NCCL, HCCL) on a device */
	PT_KIND_INSTANT,          /* zero-length mark */
	PT_KIND_COUNTER,          /* sample of a counter: arg holds a double's bits */
	PT_KIND_OTHER,            /* kept for the timeline and export, in no summary */
	PT_KIND__COUNT
};

/* flags */
#define PT_EVF_COMM 0x01u     /* host-side communication call (nccl:, gloo:, c10d) */
#define PT_EVF_SYNC 0x02u     /* synchronizing call (cudaDeviceSynchronize, ...) */
#define PT_EVF_GLOBAL 0x04u   /* instant with global or process scope */
#define PT_EVF_FLOW_SRC 0x08u /* corr came from a flow start ("s") */
#define PT_EVF_FLOW_DST 0x10u /* corr came from a flow end ("f") */
#define PT_EVF_AUTOGRAD 0x20u /* autograd node (AddmmBackward0, CudnnConvolutionBackward):
                                 an operator that also marks the Backward phase */
#define PT_EVF_INTERNAL 0x40u /* the profiler's own span or mark ("PyTorch Profiler (0)",
                                 "Record Window End"): timeline only, in no summary and
                                 not in the profiled span */
#define PT_EVF_FLOPS 0x80u    /* operator whose arg holds its FLOPs and bytes moved
                                 (flops.h: pt_flops_unpack), from its input shapes */

/*
 * One event, 40 bytes. start_ns is on the session clock (for imported
 * traces: the file's microseconds times 1000, fractions kept).
 * corr links a device activity to the host call that launched it
 * (CUPTI correlation id); 0 means none.
 */
struct pt_event {
	uint64_t start_ns;
	uint64_t dur_ns;
	uint64_t arg;      /* bytes (memcpy/memset), samples (step), counter bits */
	uint32_t name_id;  /* pt_strtab id, 0 = unnamed */
	uint32_t track_id; /* index into the trace's track table */
	uint32_t corr;
	uint8_t kind;      /* enum pt_kind */
	uint8_t flags;     /* PT_EVF_* */
	uint16_t reserved;
};

_Static_assert(sizeof(struct pt_event) == 40, "pt_event must stay 40 bytes");

static inline uint64_t pt_event_end(const struct pt_event *ev)
{
	return ev->start_ns + ev->dur_ns;
}

/* "ProfileStep", "Dataloader", ... as Paddle names the types. */
const char *pt_kind_name(enum pt_kind kind);
/* Kinds that happen on a device (kernel, memcpy, memset, communication). */
static inline int pt_kind_is_device(enum pt_kind kind)
{
	return kind == PT_KIND_KERNEL || kind == PT_KIND_MEMCPY || kind == PT_KIND_MEMSET ||
	       kind == PT_KIND_COMMUNICATION;
}
/* The five step phases (ProfileStep..Optimization). */
static inline int pt_kind_is_phase(enum pt_kind kind)
{
	return kind >= PT_KIND_DATALOADER && kind <= PT_KIND_OPTIMIZATION;
}

#endif
