/*
 * classify.c - event kind rules: a name and a category (and, when the
 * category says nothing, the lane) map to one enum pt_kind plus host flags.
 * The rules run in the order written here; docs/formats.md copies the comments.
 * Callers cache the answer per distinct (category, name, lane), so none of
 * this is on a per-event path.
 */
#include "import/classify.h"

#include <string.h>
#include <strings.h>

static int has_prefix(const char *s, size_t n, const char *pre)
{
	size_t k = strlen(pre);
	return n >= k && memcmp(s, pre, k) == 0;
}

static int has_iprefix(const char *s, size_t n, const char *pre)
{
	size_t k = strlen(pre);
	return n >= k && strncasecmp(s, pre, k) == 0;
}

static int eq(const char *s, size_t n, const char *lit)
{
	return n == strlen(lit) && memcmp(s, lit, n) == 0;
}

static int ieq(const char *s, size_t n, const char *lit)
{
	return n == strlen(lit) && strncasecmp(s, lit, n) == 0;
}

static int contains(const char *s, size_t n, const char *needle)
{
	return memmem(s, n, needle, strlen(needle)) != NULL;
}

static int all_digits(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

/* pre followed by a number ("FP_BP Time 12"). */
static int numbered(const char *s, size_t n, const char *pre)
{
	size_t k = strlen(pre);
	return has_prefix(s, n, pre) && all_digits(s + k, n - k);
}

/* Rule 1: names that mean a step phase, whatever the category. */
static int name_rule(const char *name, size_t n, enum pt_kind *kind)
{
	/* `ProfilerStep#N` (PyTorch), `ProfileStep#N` (Paddle) and msprof's
	 * step_trace `Iteration N` are one training step each. */
	if (has_prefix(name, n, "ProfilerStep#") || has_prefix(name, n, "ProfileStep#") ||
	    (has_prefix(name, n, "Iteration ") && all_digits(name + 10, n - 10))) {
		*kind = PT_KIND_PROFILE_STEP;
		return 1;
	}
	/* `enumerate(DataLoader)...` is the dataloader at any depth (jobs wrap it
	 * in annotations of their own, e.g. `## load_batch ##`). */
	if (has_prefix(name, n, "enumerate(DataLoader)")) {
		*kind = PT_KIND_DATALOADER;
		return 1;
	}
	/* `Optimizer.step#...` and `Optimizer.zero_grad#...` are optimization. */
	if (has_prefix(name, n, "Optimizer.step#") || has_prefix(name, n, "Optimizer.zero_grad#")) {
		*kind = PT_KIND_OPTIMIZATION;
		return 1;
	}
	/* `autograd::engine::evaluate_function...` is backward, on any thread
	 * (autograd runs backward on worker threads of its own). */
	if (has_prefix(name, n, "autograd::engine::evaluate_function")) {
		*kind = PT_KIND_BACKWARD;
		return 1;
	}
	/* msprof's step trace marks each iteration's points: `FP_BP Time N`
	 * (FP start to BP end: forward and backward together, msprof marks no
	 * point between them) is Forward, `Iteration Refresh N` (BP end to the
	 * iteration's end: gradient reduction and the update) is Optimization.
	 * (`Data_aug Bound N` is a flow mark from an iteration's end into the
	 * gap before the next, outside every `Iteration N`: no Dataloader.) */
	if (numbered(name, n, "FP_BP Time ")) {
		*kind = PT_KIND_FORWARD;
		return 1;
	}
	if (numbered(name, n, "Iteration Refresh ")) {
		*kind = PT_KIND_OPTIMIZATION;
		return 1;
	}
	return 0;
}

/* msprof's step-trace `Reduce_N_M`: the span of iteration N's M-th gradient
 * reduction, a host-side mark of communication. */
static int msprof_reduce(const char *name, size_t n)
{
	if (!has_prefix(name, n, "Reduce_"))
		return 0;
	const char *p = name + 7, *end = name + n;
	const char *us = memchr(p, '_', (size_t)(end - p));
	return us && all_digits(p, (size_t)(us - p)) && all_digits(us + 1, (size_t)(end - us - 1));
}

int pt_classify_internal(const char *name, size_t n)
{
	/* Kineto's span of the whole profiling session (`PyTorch Profiler (0)`,
	 * category Trace) and its marks at the start and the end of the
	 * recording window are the profiler's own, not the program's work. */
	if (!name)
		return 0;
	return (has_prefix(name, n, "PyTorch Profiler (") && name[n - 1] == ')') ||
	       eq(name, n, "PyTorch Profiler") ||
	       has_prefix(name, n, "Iteration Start: PyTorch Profiler") ||
	       eq(name, n, "Record Window End");
}

/* Rule 2: Paddle and proftop put the kind name itself in `cat`. */
static int kind_name_rule(const char *cat, size_t n, enum pt_kind *kind)
{
	for (int k = 0; k < PT_KIND__COUNT; k++) {
		if (ieq(cat, n, pt_kind_name((enum pt_kind)k))) {
			*kind = (enum pt_kind)k;
			return 1;
		}
	}
	/* Paddle's PythonUserDefined is a user range opened from Python. */
	if (ieq(cat, n, "PythonUserDefined")) {
		*kind = PT_KIND_USER_DEFINED;
		return 1;
	}
	return 0;
}

/* Rule 3: Kineto's categories (and the capitalised ones of 2021 tb_plugin
 * traces that rule 2 does not already cover). */
static int kineto_rule(const char *cat, size_t n, enum pt_kind *kind)
{
	static const struct {
		const char *cat;
		enum pt_kind kind;
	} map[] = {
	    {"cpu_op", PT_KIND_OPERATOR},
	    {"user_annotation", PT_KIND_USER_DEFINED},
	    {"python_function", PT_KIND_PYTHON},
	    {"cuda_runtime", PT_KIND_CUDA_RUNTIME},
	    {"cuda_driver", PT_KIND_CUDA_RUNTIME},
	    {"Runtime", PT_KIND_CUDA_RUNTIME}, /* tb_plugin */
	    {"gpu_memcpy", PT_KIND_MEMCPY},
	    {"gpu_memset", PT_KIND_MEMSET},
	    /* MTIA: the runtime API is the launch side, CCP events run on the
	     * accelerator, so they map like cuda_runtime and kernel. */
	    {"mtia_runtime", PT_KIND_CUDA_RUNTIME},
	    {"mtia_ccp_events", PT_KIND_KERNEL},
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
		if (eq(cat, n, map[i].cat)) {
			*kind = map[i].kind;
			return 1;
		}
	}
	/* gpu_user_annotation (a copy of CPU ranges on the GPU lane), cuda_sync,
	 * Trace, cuda_profiler_range, cpu_instant_event, other mtia_* and any
	 * category we do not know: timeline only. */
	*kind = PT_KIND_OTHER;
	return 0;
}

/* Rule 4: collectives run as kernels named nccl..., rccl..., hccl... */
static int comm_kernel(const char *name, size_t n)
{
	return has_iprefix(name, n, "nccl") || has_iprefix(name, n, "rccl") ||
	       has_iprefix(name, n, "hccl") || has_iprefix(name, n, "hcom_");
}

/* Rule 5: host calls that communicate or wait. */
static uint8_t host_flags(const char *name, size_t n)
{
	uint8_t f = 0;
	/* `nccl:`, `gloo:`, `c10d::`, `record_param_comms` are collectives
	 * called from the host; the kind stays what the category says. */
	if (has_prefix(name, n, "nccl:") || has_prefix(name, n, "gloo:") ||
	    has_prefix(name, n, "c10d::") || has_prefix(name, n, "record_param_comms"))
		f |= PT_EVF_COMM;
	/* Device/stream/event synchronize and a synchronous cudaMemcpy block
	 * the host until the device is done (HIP spells them hip...). */
	if (has_prefix(name, n, "cudaDeviceSynchronize") ||
	    has_prefix(name, n, "cudaStreamSynchronize") ||
	    has_prefix(name, n, "cudaEventSynchronize") ||
	    has_prefix(name, n, "hipDeviceSynchronize") ||
	    has_prefix(name, n, "hipStreamSynchronize") ||
	    has_prefix(name, n, "hipEventSynchronize") ||
	    ((has_prefix(name, n, "cudaMemcpy") || has_prefix(name, n, "hipMemcpy")) &&
	     !contains(name, n, "Async")))
		f |= PT_EVF_SYNC;
	return f;
}

/* Rule 5b: autograd nodes - `AddmmBackward0`, `CudnnConvolutionBackward`,
 * `torch::autograd::AccumulateGrad` - are operators that also mark the
 * Backward phase (PyTorch before 1.9 records no evaluate_function wrapper).
 * A node name is one CamelCase word ending in `Backward` and digits; op
 * names such as `aten::cudnn_convolution_backward` are not nodes. */
static int autograd_node(const char *name, size_t n)
{
	if (eq(name, n, "torch::autograd::AccumulateGrad"))
		return 1;
	size_t e = n;
	while (e > 0 && name[e - 1] >= '0' && name[e - 1] <= '9')
		e--;
	if (e < 9 || memcmp(name + e - 8, "Backward", 8) != 0)
		return 0;
	if (name[0] < 'A' || name[0] > 'Z')
		return 0;
	for (size_t i = 0; i < e; i++)
		if (!((name[i] >= 'A' && name[i] <= 'Z') || (name[i] >= 'a' && name[i] <= 'z') ||
		      (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
			return 0;
	return 1;
}

/* Device work that only moves or sets memory, named as HTA names it
 * ("Memcpy" or "Memset" in the name) or as an MTIA DMA (`dma_request`). */
static enum pt_kind memory_kernel(const char *name, size_t n)
{
	if (contains(name, n, "Memcpy") || has_prefix(name, n, "dma_") || eq(name, n, "dma"))
		return PT_KIND_MEMCPY;
	if (contains(name, n, "Memset"))
		return PT_KIND_MEMSET;
	return PT_KIND_KERNEL;
}

/* msprof's Ascend Hardware tasks that belong to HCCL: notify waits and
 * records (a rank waiting for, or signalling, its peers) and the inline
 * reductions of a collective are communication, never computation. Event
 * waits, records and resets only order the streams: timeline only. */
static int ascend_comm_task(const char *name, size_t n)
{
	return has_iprefix(name, n, "NOTIFY_WAIT") || has_iprefix(name, n, "NOTIFY_RECORD") ||
	       has_iprefix(name, n, "REDUCE_ASYNC") || ieq(name, n, "REDUCE_INLINE") ||
	       ieq(name, n, "REDUCE_TBE") || ieq(name, n, "INLINE_REDUCE");
}

static int ascend_sync_task(const char *name, size_t n)
{
	return ieq(name, n, "EVENT_WAIT") || ieq(name, n, "EVENT_RECORD") ||
	       ieq(name, n, "EVENT_RESET");
}

/* msprof's HCCL lane repeats, thread by thread ("Plane N"), the tasks the
 * Ascend Hardware streams already carry under upper-case names
 * (Notify_Wait = NOTIFY_WAIT, Reduce_Inline = REDUCE_ASYNC_V2, Memcpy =
 * MEMCPY_ASYNC): those copies are timeline only, so no task counts twice.
 * The lane's collective operators (its "Communication Kernel" thread:
 * `Default/AllReduce-op534_0`, `hcom_allReduce_...`) are the communication. */
static int hccl_plane_task(const char *name, size_t n)
{
	static const char *const tasks[] = {
	    "Notify_Wait",	 "Notify_Record", "Memcpy",   "Reduce_Inline",
	    "Reduce_TBE",	 "Inline_Reduce", "RDMASend", "RDMA_Send",
	    "Write_With_Notify", "Read",	  "Write",
	};
	for (size_t i = 0; i < sizeof tasks / sizeof tasks[0]; i++)
		if (ieq(name, n, tasks[i]))
			return 1;
	return 0;
}

/* Rule 6 helper: device work named by what it does. */
static enum pt_kind device_by_name(const char *name, size_t n)
{
	if (comm_kernel(name, n) || ascend_comm_task(name, n))
		return PT_KIND_COMMUNICATION;
	if (ascend_sync_task(name, n))
		return PT_KIND_OTHER;
	if (has_iprefix(name, n, "memcpy") || contains(name, n, "Memcpy"))
		return PT_KIND_MEMCPY;
	if (has_iprefix(name, n, "memset") || contains(name, n, "Memset"))
		return PT_KIND_MEMSET;
	return PT_KIND_KERNEL;
}

enum pt_kind pt_classify(const char *cat, size_t catlen, const char *name, size_t namelen,
			 int on_device_lane, uint8_t *flags)
{
	enum pt_kind kind = PT_KIND_OTHER;
	*flags = 0;
	if (!name)
		namelen = 0;
	if (!cat)
		catlen = 0;
	/* A GPU-side copy of a CPU annotation would count a step twice. */
	if (eq(cat, catlen, "gpu_user_annotation"))
		return PT_KIND_OTHER;
	if (pt_classify_internal(name, namelen)) {
		*flags = PT_EVF_INTERNAL;
		return PT_KIND_OTHER;
	}
	if (name_rule(name, namelen, &kind))
		return kind;
	if (msprof_reduce(name, namelen)) {
		*flags = PT_EVF_COMM;
		return PT_KIND_OTHER;
	}
	if (catlen) {
		if (!kind_name_rule(cat, catlen, &kind))
			kineto_rule(cat, catlen, &kind);
	} else {
		/* Rule 6: no category (legacy autograd export, MindSpore, msprof):
		 * the lane decides. */
		switch (on_device_lane) {
		case PT_LANE_DEVICE:
			kind = device_by_name(name, namelen);
			break;
		case PT_LANE_COMM:
			kind =
			    hccl_plane_task(name, namelen) ? PT_KIND_OTHER : PT_KIND_COMMUNICATION;
			break;
		case PT_LANE_RUNTIME:
			kind = PT_KIND_CUDA_RUNTIME;
			break;
		case PT_LANE_DERIVED:
			kind = PT_KIND_OTHER;
			break;
		default:
			kind = PT_KIND_OPERATOR;
			break;
		}
	}
	/* Rule 4: a kernel that is a collective, or anything on an HCCL lane. */
	if (kind == PT_KIND_KERNEL &&
	    (comm_kernel(name, namelen) || on_device_lane == PT_LANE_COMM))
		kind = PT_KIND_COMMUNICATION;
	/* Rule 4b: a "kernel" that only copies or sets memory is Memcpy or
	 * Memset, whatever its category says (HTA's rule; MTIA's DMAs). */
	if (kind == PT_KIND_KERNEL)
		kind = memory_kernel(name, namelen);
	if (!pt_kind_is_device(kind))
		*flags = host_flags(name, namelen);
	if (kind == PT_KIND_OPERATOR && autograd_node(name, namelen))
		*flags |= PT_EVF_AUTOGRAD;
	return kind;
}

int pt_classify_lane(const char *name, size_t n)
{
	if (!name || n == 0)
		return PT_LANE_HOST;
	/* "GPU 0" (Kineto labels, Paddle, proftop), "NPU", "Ascend Hardware"
	 * (msprof tasks), "CUDA functions" (legacy autograd export), "cuda:0". */
	if (has_iprefix(name, n, "GPU") || has_iprefix(name, n, "NPU") ||
	    has_iprefix(name, n, "Ascend Hardware") || has_iprefix(name, n, "cuda") ||
	    has_iprefix(name, n, "Device"))
		return PT_LANE_DEVICE;
	if (ieq(name, n, "HCCL"))
		return PT_LANE_COMM;
	if (ieq(name, n, "CANN"))
		return PT_LANE_RUNTIME;
	if (has_iprefix(name, n, "Overlap Analysis"))
		return PT_LANE_DERIVED;
	return PT_LANE_HOST;
}
