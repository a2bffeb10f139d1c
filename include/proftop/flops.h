/*
 * flops.h - FLOPs and bytes of framework operators from their input
 * shapes, achieved throughput per operator and per kernel, and the share
 * of the device's peak (a roofline, as TraceLens computes it).
 *
 * Where shapes come from: PyTorch traces recorded with record_shapes carry
 * "Input Dims" (and "Input type", and since torch 2.1 "Concrete Inputs":
 * strides, paddings, flags) in each operator's args; proftop's deep capture
 * writes them too, plus torch's own "flops" (with_flops) where torch has a
 * formula. The Chrome reader computes each operator's FLOPs and bytes once,
 * when it reads the event, and keeps them in the event (PT_EVF_FLOPS, arg:
 * pt_flops_pack). Formulas (a multiply-add is 2 FLOPs):
 *   mm [M,K]x[K,N], addmm, linear, matmul (batched, broadcast), bmm, baddbmm:
 *       2*M*N*K per matrix product; bytes: operands + result
 *   convolutions (conv1d/2d/3d, convolution, _convolution, cudnn_, mkldnn_,
 *       miopen_): 2 * N * Cout * prod(output spatial) * Cin/groups *
 *       prod(kernel); the output size needs stride, padding and dilation
 *       ("Concrete Inputs"): without them only torch's own "flops" is used,
 *       or nothing (a transposed convolution needs none of them)
 *   attention (scaled_dot_product_attention and its flash / efficient /
 *       cudnn kernels' ops): 2*B*L*S*E + 2*B*L*S*Ev (QK^T and PV)
 *   elementwise (add, sub, mul, div, relu, gelu, silu, sigmoid, tanh, ...,
 *       and their in-place forms): one FLOP per output element (addcmul,
 *       addcdiv: two); bytes: tensor inputs + output
 * Element sizes come from "Input type"; a trace without types counts 4
 * bytes (float32).
 *
 * Threading: pure functions; tables are owned by the caller.
 */
#ifndef PROFTOP_FLOPS_H
#define PROFTOP_FLOPS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proftop/trace.h"

/* Data type classes, for the peak that applies. */
enum pt_dtype_class {
	PT_DT_F32 = 0,   /* float32, or unknown (CUDA cores) */
	PT_DT_F16 = 1,   /* half (tensor cores) */
	PT_DT_F64 = 2,
	PT_DT_OTHER = 3, /* integers, complex: no peak is assumed */
	PT_DT_BF16 = 4,  /* bfloat16 (tensor cores) */
	PT_DT_TF32 = 5,  /* float32 run on tensor cores as TF32 (told by the kernel's name) */
	PT_DT_FP8 = 6,   /* float8 e4m3 / e5m2 (tensor cores) */
	PT_DT__COUNT = 7
};
#define PT_DT_MASK 7u

/* FLOPs and bytes in an event's 64-bit arg: two float32 (24-bit mantissas),
 * the dtype class in the bytes' three lowest mantissa bits. */
static inline uint64_t pt_flops_pack(double flops, double bytes, int dtype)
{
	float f = (float)flops, b = (float)bytes;
	uint32_t fb, bb;
	memcpy(&fb, &f, 4);
	memcpy(&bb, &b, 4);
	bb = (bb & ~PT_DT_MASK) | ((uint32_t)dtype & PT_DT_MASK);
	return ((uint64_t)fb << 32) | bb;
}
static inline void pt_flops_unpack(uint64_t arg, double *flops, double *bytes, int *dtype)
{
	uint32_t fb = (uint32_t)(arg >> 32), bb = (uint32_t)arg;
	float f, b;
	memcpy(&f, &fb, 4);
	*dtype = (int)(bb & PT_DT_MASK);
	bb &= ~PT_DT_MASK;
	memcpy(&b, &bb, 4);
	*flops = f;
	*bytes = b;
}

/* The formula for an operator name, 0 when proftop has none. */
int pt_flops_op(const char *name, size_t len);
/*
 * FLOPs and bytes of one call of operator `op` (pt_flops_op) from the raw
 * JSON texts of its "Input Dims", "Input type" and "Concrete Inputs" (each
 * may be NULL). torch_flops >= 0: torch's own figure, which wins for FLOPs
 * (bytes still come from the shapes). Returns 1 with *flops, *bytes,
 * *dtype set, 0 when the shapes do not give an answer.
 */
int pt_flops_compute(int op, const char *dims, size_t dlen, const char *types, size_t tlen,
		     const char *conc, size_t clen, double torch_flops, double *flops,
		     double *bytes, int *dtype);

/* A device's peaks (dense, from the vendors' data sheets), per dtype class:
 * TFLOP/s, 0 = unknown; memory bandwidth in GB/s, 0 = unknown. */
struct pt_peak {
	double tflops[PT_DT__COUNT]; /* dense, per dtype class; 0: the device has none */
	double gbps;
	int from_user;     /* --peak-tflops: the user's figure, not a device's */
	char device[64];   /* what it is for ("NVIDIA H100 80GB HBM3", "--peak-tflops") */
};
/* Short name of a dtype class ("fp32", "bf16", "tf32", ...). */
const char *pt_dtype_name(int dtype);
/* The peaks of an NVML device name; 0, or -1 when the name is not in the table. */
int pt_peak_of_device(const char *name, struct pt_peak *out);
/* A user's figures (--peak-tflops, --peak-gbps; 0 = not given) over dev's. */
void pt_peak_override(struct pt_peak *p, double tflops, double gbps);
/* The trace's peak: user figures, else its device name (NVML, or the
 * trace's deviceProperties); 0, or -1 when nothing is known. */
int pt_peak_of_trace(const struct pt_trace *t, double user_tflops, double user_gbps,
		     struct pt_peak *out);

/* One row of the FLOPs tables: an operator name, or a kernel name. */
struct pt_flops_row {
	uint32_t name_id;
	int dtype;           /* the first call's class */
	uint64_t calls;      /* calls (kernels: launches) with a FLOPs figure */
	double flops, bytes;
	uint64_t cpu_ns;     /* operators: their calls' inclusive time */
	uint64_t gpu_ns;     /* operators: their kernels' time; kernels: their own time */
	int untimed;         /* a GPU trace, but none of its kernels found: no rate */
};
/* Achieved TFLOP/s and GB/s of a row (over gpu_ns when it has device time,
 * else cpu_ns; -1 when untimed); the share of the roofline in percent: achieved over
 * min(peak, intensity x bandwidth), the memory roof left out when the
 * shapes claim more traffic than the bandwidth allows (they overstate it:
 * an expanded input, data in cache); -1 when the peak is unknown, -2 when
 * the rate passes the compute peak (the peak given is too low). */
double pt_flops_row_tflops(const struct pt_flops_row *r);
double pt_flops_row_gbps(const struct pt_flops_row *r);
double pt_flops_row_peak_pct(const struct pt_flops_row *r, const struct pt_peak *p);

struct pt_flops_table {
	struct pt_flops_row *ops;     /* by FLOPs, largest first */
	size_t nops;
	struct pt_flops_row *kernels; /* kernels launched from operators with FLOPs */
	size_t nkernels;
	uint64_t events;              /* operator calls with FLOPs in the window */
};
/*
 * The FLOPs tables over events starting in [t0_ns, t1_ns) (0, UINT64_MAX:
 * all): per operator name, and per kernel name, each kernel taking the
 * share of its operator's FLOPs and bytes that its time is of the time of
 * all kernels the operator launched (an operator's kernels are those whose
 * runtime call lies inside it, innermost operator with FLOPs first).
 * Costs nothing when the trace has no event with FLOPs.
 */
void pt_flops_summarize(struct pt_trace *t, uint64_t t0_ns, uint64_t t1_ns,
			struct pt_flops_table *out);
void pt_flops_table_free(struct pt_flops_table *tab);

/*
 * Model FLOPs utilization: per step, the FLOPs of the outermost operator
 * calls with FLOPs that start in it on the step's own process (a call
 * inside another is not counted twice; another rank's calls are its own),
 * over the step's time; MFU = the average achieved rate over the dense
 * peak of the data type with the most FLOPs. The peak is taken only for a
 * trace with device time, or when the user gave it (--peak-tflops): a
 * CPU-only trace has no peak of its own.
 */
struct pt_step;
struct pt_mfu {
	size_t steps;          /* steps with FLOPs */
	double flops_per_step; /* over all steps given */
	double tflops_avg, tflops_max, tflops_min; /* achieved; avg = all FLOPs / all time */
	int dtype;             /* the class with the most FLOPs */
	double dtype_share_pct;/* its share of the FLOPs */
	double peak_tflops;    /* that class's dense peak; 0: none known */
	double mfu_pct;        /* tflops_avg / peak; -1 no peak, -2 past it (the peak is wrong) */
	int gpu_trace;         /* the trace has device tracks */
	uint64_t covered_gpu_ns, step_gpu_ns; /* device time of the calls with FLOPs, of the steps */
	double *per_step;      /* achieved TFLOP/s of each step given, in their order */
	size_t nper_step;
};
/* 0, or -1 when no step has FLOPs (m is set either way; free it). */
int pt_mfu_compute(struct pt_trace *t, const struct pt_step *steps, size_t nsteps,
		   const struct pt_peak *peak, struct pt_mfu *m);
void pt_mfu_free(struct pt_mfu *m);
/* pt_flops_summarize over [t0_ns, t1_ns) and pt_mfu_compute of steps (which
 * lie in it) from one pass over the trace; returns pt_mfu_compute's. */
int pt_flops_summarize_mfu(struct pt_trace *t, uint64_t t0_ns, uint64_t t1_ns,
			   const struct pt_step *steps, size_t nsteps, const struct pt_peak *peak,
			   struct pt_flops_table *tab, struct pt_mfu *m);

#endif
