/*
 * test_classify.c - every classification rule of classify.c, each with a
 * case that matches and one that must not, plus lane detection.
 */
#include "testutil.h"

#include "import/classify.h"

static enum pt_kind cls(const char *cat, const char *name, int lane, uint8_t *flags)
{
	uint8_t f;
	enum pt_kind k = pt_classify(cat, cat ? strlen(cat) : 0, name, strlen(name), lane, &f);
	if (flags)
		*flags = f;
	return k;
}

#define K(cat, name) cls(cat, name, PT_LANE_HOST, NULL)

static void test_rule1_names(void **state)
{
	(void)state;
	assert_int_equal(K("cpu_op", "ProfilerStep#5"), PT_KIND_PROFILE_STEP);
	assert_int_equal(K("user_annotation", "ProfilerStep#12"), PT_KIND_PROFILE_STEP);
	assert_int_equal(K(NULL, "ProfileStep#3"), PT_KIND_PROFILE_STEP);
	assert_int_equal(K("Iteration Time", "Iteration 7"), PT_KIND_PROFILE_STEP);
	/* msprof's step trace points: FP_BP is Forward, Iteration Refresh is
	 * Optimization; Reduce_N_M marks host communication */
	assert_int_equal(K("Iteration Refresh", "Iteration Refresh 7"), PT_KIND_OPTIMIZATION);
	assert_int_equal(K("FP_BP Time", "FP_BP Time 7"), PT_KIND_FORWARD);
	assert_int_equal(cls(NULL, "FP_BP Time 1", PT_LANE_DEVICE, NULL), PT_KIND_FORWARD);
	assert_int_equal(K("cpu_op", "FP_BP Time x"), PT_KIND_OPERATOR);
	uint8_t rf;
	assert_int_equal(cls("Reduce", "Reduce_1_0", PT_LANE_HOST, &rf), PT_KIND_OTHER);
	assert_int_equal(rf, PT_EVF_COMM);
	assert_int_equal(cls(NULL, "Reduce_1_0", PT_LANE_DEVICE, &rf), PT_KIND_OTHER);
	assert_int_equal(K("cpu_op", "Reduce_1_x"), PT_KIND_OPERATOR);
	/* the profiler's own spans and marks */
	assert_int_equal(cls("Trace", "PyTorch Profiler (0)", PT_LANE_HOST, &rf), PT_KIND_OTHER);
	assert_int_equal(rf, PT_EVF_INTERNAL);
	assert_int_equal(cls("Other", "PyTorch Profiler (12)", PT_LANE_HOST, &rf), PT_KIND_OTHER);
	assert_int_equal(rf, PT_EVF_INTERNAL);
	assert_true(pt_classify_internal("Record Window End", 17));
	assert_true(pt_classify_internal("Iteration Start: PyTorch Profiler", 33));
	assert_false(pt_classify_internal("PyTorch Profiler (0", 19));
	assert_int_equal(cls("cpu_op", "PyTorch Profilers", PT_LANE_HOST, &rf), PT_KIND_OPERATOR);
	assert_int_equal(rf, 0);
	assert_int_equal(K("cpu_op", "ProfilerStepX"), PT_KIND_OPERATOR);
	/* the GPU lane copy of a step annotation is not a second step */
	assert_int_equal(cls("gpu_user_annotation", "ProfilerStep#5", PT_LANE_DEVICE, NULL),
			 PT_KIND_OTHER);

	assert_int_equal(
	    K("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"),
	    PT_KIND_DATALOADER);
	assert_int_equal(K("cpu_op", "enumerate(DataLoader)"), PT_KIND_DATALOADER);
	assert_int_equal(K("user_annotation", "## load_batch ##"), PT_KIND_USER_DEFINED);
	assert_int_equal(K("cpu_op", "DataLoader"), PT_KIND_OPERATOR);

	assert_int_equal(K("user_annotation", "Optimizer.step#SGD.step"), PT_KIND_OPTIMIZATION);
	assert_int_equal(K("cpu_op", "Optimizer.zero_grad#SGD.zero_grad"), PT_KIND_OPTIMIZATION);
	assert_int_equal(K("cpu_op", "Optimizer.step"), PT_KIND_OPERATOR);

	assert_int_equal(K("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0"),
			 PT_KIND_BACKWARD);
	assert_int_equal(K(NULL, "autograd::engine::evaluate_function: MulBackward0"),
			 PT_KIND_BACKWARD);
	assert_int_equal(K("cpu_op", "AddmmBackward0"), PT_KIND_OPERATOR);
}

static void test_rule2_kind_names(void **state)
{
	(void)state;
	for (int k = 0; k < PT_KIND__COUNT; k++) {
		const char *n = pt_kind_name((enum pt_kind)k);
		assert_int_equal(K(n, "some_event"), k);
	}
	assert_int_equal(K("operatorinner", "conv2d::compute"), PT_KIND_OPERATOR_INNER);
	assert_int_equal(K("CUDARUNTIME", "cudaLaunchKernel"), PT_KIND_CUDA_RUNTIME);
	assert_int_equal(K("PythonOp", "f"), PT_KIND_PYTHON);
	assert_int_equal(K("PythonUserDefined", "my_block"), PT_KIND_USER_DEFINED);
	assert_int_equal(K("Dataloader", "Dataloader"), PT_KIND_DATALOADER);
	assert_int_equal(K("Forward", "Forward"), PT_KIND_FORWARD);
	assert_int_equal(K("Memcpy", "GpuMemcpyAsync:CPU->GPU"), PT_KIND_MEMCPY);
	assert_int_equal(K("Kernelx", "k"), PT_KIND_OTHER);
}

static void test_rule3_kineto(void **state)
{
	(void)state;
	assert_int_equal(K("cpu_op", "aten::mm"), PT_KIND_OPERATOR);
	assert_int_equal(K("user_annotation", "## forward ##"), PT_KIND_USER_DEFINED);
	assert_int_equal(K("python_function", "train.py(10): step"), PT_KIND_PYTHON);
	assert_int_equal(K("cuda_runtime", "cudaLaunchKernel"), PT_KIND_CUDA_RUNTIME);
	assert_int_equal(K("cuda_driver", "cuLaunchKernel"), PT_KIND_CUDA_RUNTIME);
	assert_int_equal(K("kernel", "volta_sgemm"), PT_KIND_KERNEL);
	assert_int_equal(K("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)"), PT_KIND_MEMCPY);
	assert_int_equal(K("gpu_memset", "Memset (Device)"), PT_KIND_MEMSET);
	assert_int_equal(K("mtia_runtime", "launch"), PT_KIND_CUDA_RUNTIME);
	assert_int_equal(K("mtia_ccp_events", "op"), PT_KIND_KERNEL);
	assert_int_equal(K("mtia_other", "x"), PT_KIND_OTHER);
	assert_int_equal(K("gpu_user_annotation", "## forward ##"), PT_KIND_OTHER);
	assert_int_equal(K("cuda_sync", "Event Sync"), PT_KIND_OTHER);
	assert_int_equal(K("Trace", "PyTorch Profiler (0)"), PT_KIND_OTHER);
	assert_int_equal(K("cuda_profiler_range", "r"), PT_KIND_OTHER);
	assert_int_equal(K("cpu_instant_event", "[memory]"), PT_KIND_OTHER);
	assert_int_equal(K("unknown_cat", "x"), PT_KIND_OTHER);
	/* tb_plugin 2021 */
	assert_int_equal(K("Operator", "aten::conv2d"), PT_KIND_OPERATOR);
	assert_int_equal(K("Runtime", "cudaLaunchKernel"), PT_KIND_CUDA_RUNTIME);
	assert_int_equal(K("Kernel", "implicit_gemm"), PT_KIND_KERNEL);
	assert_int_equal(K("Memcpy", "Memcpy DtoD"), PT_KIND_MEMCPY);
	assert_int_equal(K("Memset", "Memset"), PT_KIND_MEMSET);
	assert_int_equal(K("runtime", "cudaLaunchKernel"), PT_KIND_OTHER); /* exact case only */
}

static void test_rule4_comm_kernels(void **state)
{
	(void)state;
	assert_int_equal(K("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"),
			 PT_KIND_COMMUNICATION);
	assert_int_equal(K("kernel", "ncclDevKernel_SendRecv(ncclDevComm*)"),
			 PT_KIND_COMMUNICATION);
	assert_int_equal(K("Kernel", "NCCLKERNEL_x"), PT_KIND_COMMUNICATION);
	assert_int_equal(K("kernel", "rcclAllGather"), PT_KIND_COMMUNICATION);
	assert_int_equal(K("kernel", "hcclReduceScatter"), PT_KIND_COMMUNICATION);
	assert_int_equal(K("kernel", "my_AllReduce_kernel"), PT_KIND_KERNEL);
	assert_int_equal(K("kernel", "volta_sgemm"), PT_KIND_KERNEL);
	/* msprof's HCCL lane: its collectives are communication; its per-plane
	 * task copies (Notify_Wait = the hardware's NOTIFY_WAIT) count once, on
	 * the hardware lane, where HCCL's waits are communication, not compute */
	assert_int_equal(cls(NULL, "Default/AllReduce-op534_0", PT_LANE_COMM, NULL),
			 PT_KIND_COMMUNICATION);
	assert_int_equal(cls(NULL, "hcom_allReduce__394_0_1", PT_LANE_COMM, NULL),
			 PT_KIND_COMMUNICATION);
	assert_int_equal(cls(NULL, "Notify_Wait", PT_LANE_COMM, NULL), PT_KIND_OTHER);
	assert_int_equal(cls(NULL, "Reduce_Inline", PT_LANE_COMM, NULL), PT_KIND_OTHER);
	assert_int_equal(cls(NULL, "Memcpy", PT_LANE_COMM, NULL), PT_KIND_OTHER);
	assert_int_equal(cls(NULL, "Notify_Wait", PT_LANE_HOST, NULL), PT_KIND_OPERATOR);
	assert_int_equal(cls(NULL, "NOTIFY_WAIT", PT_LANE_DEVICE, NULL), PT_KIND_COMMUNICATION);
	assert_int_equal(cls(NULL, "NOTIFY_RECORD", PT_LANE_DEVICE, NULL), PT_KIND_COMMUNICATION);
	assert_int_equal(cls(NULL, "REDUCE_ASYNC_V2", PT_LANE_DEVICE, NULL), PT_KIND_COMMUNICATION);
	assert_int_equal(cls(NULL, "EVENT_WAIT", PT_LANE_DEVICE, NULL), PT_KIND_OTHER);
	assert_int_equal(cls(NULL, "MEMCPY_ASYNC", PT_LANE_DEVICE, NULL), PT_KIND_MEMCPY);
	assert_int_equal(cls(NULL, "Default/network/Conv2D-op1", PT_LANE_DEVICE, NULL),
			 PT_KIND_KERNEL);
	/* memory "kernels" are memory (HTA: "Memcpy"/"Memset" in the name; MTIA DMAs) */
	assert_int_equal(K("mtia_ccp_events", "dma_request"), PT_KIND_MEMCPY);
	assert_int_equal(K("kernel", "Memset (Device)"), PT_KIND_MEMSET);
	assert_int_equal(K("kernel", "void fused_Memcpy_kernel"), PT_KIND_MEMCPY);
	assert_int_equal(K("mtia_ccp_events", "dmaish_op"), PT_KIND_KERNEL);
	assert_int_equal(K("kernel", "memcpy_like_kernel"), PT_KIND_KERNEL);
	/* a host call named nccl... stays what its category says */
	assert_int_equal(K("cpu_op", "nccl:all_reduce"), PT_KIND_OPERATOR);
}

static void test_rule5_host_flags(void **state)
{
	(void)state;
	uint8_t f;
	assert_int_equal(cls("cpu_op", "nccl:all_reduce", 0, &f), PT_KIND_OPERATOR);
	assert_int_equal(f, PT_EVF_COMM);
	cls("user_annotation", "gloo:all_reduce", 0, &f);
	assert_int_equal(f, PT_EVF_COMM);
	cls("cpu_op", "c10d::allreduce_", 0, &f);
	assert_int_equal(f, PT_EVF_COMM);
	cls("cpu_op", "record_param_comms", 0, &f);
	assert_int_equal(f, PT_EVF_COMM);
	cls("cpu_op", "aten::mm", 0, &f);
	assert_int_equal(f, 0);
	cls("cpu_op", "ncclx", 0, &f); /* no colon: no flag */
	assert_int_equal(f, 0);

	assert_int_equal(cls("cuda_runtime", "cudaDeviceSynchronize", 0, &f), PT_KIND_CUDA_RUNTIME);
	assert_int_equal(f, PT_EVF_SYNC);
	cls("cuda_runtime", "cudaStreamSynchronize", 0, &f);
	assert_int_equal(f, PT_EVF_SYNC);
	cls("cuda_runtime", "cudaEventSynchronize", 0, &f);
	assert_int_equal(f, PT_EVF_SYNC);
	cls("cuda_runtime", "cudaMemcpy", 0, &f);
	assert_int_equal(f, PT_EVF_SYNC);
	cls("cuda_runtime", "cudaMemcpyAsync", 0, &f);
	assert_int_equal(f, 0);
	cls("cuda_runtime", "cudaLaunchKernel", 0, &f);
	assert_int_equal(f, 0);
	cls("cuda_runtime", "cudaEventQuery", 0, &f);
	assert_int_equal(f, 0);
	/* device work never carries host flags */
	cls("kernel", "nccl:weird", 0, &f);
	assert_int_equal(f, 0);
}

static void test_rule5b_autograd_nodes(void **state)
{
	(void)state;
	uint8_t f;
	assert_int_equal(cls("cpu_op", "AddmmBackward0", 0, &f), PT_KIND_OPERATOR);
	assert_int_equal(f, PT_EVF_AUTOGRAD);
	cls("Operator", "CudnnConvolutionBackward", 0, &f);
	assert_int_equal(f, PT_EVF_AUTOGRAD);
	cls(NULL, "ReluBackward1", 0, &f);
	assert_int_equal(f, PT_EVF_AUTOGRAD);
	cls("cpu_op", "torch::autograd::AccumulateGrad", 0, &f);
	assert_int_equal(f, PT_EVF_AUTOGRAD);
	cls("cpu_op", "aten::cudnn_convolution_backward", 0, &f);
	assert_int_equal(f, 0);
	cls("cpu_op", "Backward", 0, &f);
	assert_int_equal(f, 0);
	cls("cpu_op", "aten::AddmmBackward0", 0, &f);
	assert_int_equal(f, 0);
	/* only operators: a user range or a backward phase gets no flag */
	cls("user_annotation", "MyBackward", 0, &f);
	assert_int_equal(f, 0);
	assert_int_equal(
	    cls("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", 0, &f),
	    PT_KIND_BACKWARD);
	assert_int_equal(f, 0);
}

static void test_rule6_no_cat(void **state)
{
	(void)state;
	assert_int_equal(cls(NULL, "aten::linear", PT_LANE_HOST, NULL), PT_KIND_OPERATOR);
	assert_int_equal(cls("", "aten::linear", PT_LANE_HOST, NULL), PT_KIND_OPERATOR);
	assert_int_equal(cls(NULL, "volta_sgemm", PT_LANE_DEVICE, NULL), PT_KIND_KERNEL);
	assert_int_equal(cls(NULL, "Memcpy HtoD", PT_LANE_DEVICE, NULL), PT_KIND_MEMCPY);
	assert_int_equal(cls(NULL, "memset_kernel_like", PT_LANE_DEVICE, NULL), PT_KIND_MEMSET);
	assert_int_equal(cls(NULL, "ncclKernel_x", PT_LANE_DEVICE, NULL), PT_KIND_COMMUNICATION);
	assert_int_equal(cls(NULL, "aclopCompileAndExecute", PT_LANE_RUNTIME, NULL),
			 PT_KIND_CUDA_RUNTIME);
	assert_int_equal(cls(NULL, "Computing", PT_LANE_DERIVED, NULL), PT_KIND_OTHER);
	/* a category wins over the lane */
	assert_int_equal(cls("cpu_op", "x", PT_LANE_DEVICE, NULL), PT_KIND_OPERATOR);
}

static void test_lanes(void **state)
{
	(void)state;
#define L(s) pt_classify_lane(s, strlen(s))
	assert_int_equal(L("GPU 0"), PT_LANE_DEVICE);
	assert_int_equal(L("gpu 3"), PT_LANE_DEVICE);
	assert_int_equal(L("NPU"), PT_LANE_DEVICE);
	assert_int_equal(L("Ascend Hardware"), PT_LANE_DEVICE);
	assert_int_equal(L("CUDA functions"), PT_LANE_DEVICE);
	assert_int_equal(L("HCCL"), PT_LANE_COMM);
	assert_int_equal(L("CANN"), PT_LANE_RUNTIME);
	assert_int_equal(L("Overlap Analysis"), PT_LANE_DERIVED);
	assert_int_equal(L("CPU functions"), PT_LANE_HOST);
	assert_int_equal(L("python"), PT_LANE_HOST);
	assert_int_equal(L("CPU"), PT_LANE_HOST);
	assert_int_equal(L(""), PT_LANE_HOST);
	assert_int_equal(pt_classify_lane(NULL, 0), PT_LANE_HOST);
#undef L
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rule1_names),	     cmocka_unit_test(test_rule2_kind_names),
	    cmocka_unit_test(test_rule3_kineto),     cmocka_unit_test(test_rule4_comm_kernels),
	    cmocka_unit_test(test_rule5_host_flags), cmocka_unit_test(test_rule5b_autograd_nodes),
	    cmocka_unit_test(test_rule6_no_cat),     cmocka_unit_test(test_lanes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
