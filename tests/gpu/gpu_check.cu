// gpu_check.cu - a CUDA program annotated with the proftop C API, for
// tests/gpu/run.sh on a machine with a GPU. Each step: Forward { op
// check::gemm: 20 launches of a templated kernel (its name needs demangling);
// op check::driver: 4 launches through the driver API (cuLaunchKernel, as
// torch.compile/Triton do); op check::cluster: 2 through cuLaunchKernelEx
// (with a 1x1x1 cluster on sm_90 and newer, as CUTLASS/FlashAttention 3) },
// Backward { op check::graph: a CUDA graph of 3 kernels; op check::copy: a
// copy and a memset }, then a sync and proftop_step(32).
//
//   gpu_check [STEPS] [live]
//
// Prints "gpu_check: launched N" (kernels, graph kernels included). live:
// keeps the GPU busy without a sync per step for 12 s, and half-way launches
// one kernel of its own name (marker_kernel) and prints
// "gpu_check: marker" right after, so run.sh can see how soon it shows.
#define PROFTOP_WEAK
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda.h>
#include <cuda_runtime.h>
#include "proftop/proftop.h"

template <int N> __global__ void busy_kernel(float *x, int n, int iters)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = x[i];
	for (int k = 0; k < iters; k++)
		v = v * 0.999f + N;
	x[i] = v;
}

__global__ void driver_kernel(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * 0.5f + 1.0f;
}

__global__ void marker_kernel(float *x)
{
	x[threadIdx.x] += 1.0f;
}

#define CK(call)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			std::fprintf(stderr, "gpu_check: %s: %s\n", #call, cudaGetErrorString(e_)); \
			return 2;                                                                  \
		}                                                                                  \
	} while (0)
#define CU(call)                                                                                   \
	do {                                                                                       \
		CUresult r_ = (call);                                                              \
		if (r_ != CUDA_SUCCESS) {                                                          \
			std::fprintf(stderr, "gpu_check: %s: error %d\n", #call, (int)r_);         \
			return 2;                                                                  \
		}                                                                                  \
	} while (0)

static double now_s()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void op_push(const char *n)
{
	if (proftop_op_push)
		proftop_op_push(n);
}
static void op_pop()
{
	if (proftop_op_pop)
		proftop_op_pop();
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? std::atoi(argv[1]) : 20;
	bool live = argc > 2 && !std::strcmp(argv[2], "live");
	const int n = 1 << 20;
	float *d = nullptr, *h = nullptr;
	if (cudaMalloc(&d, n * sizeof(float)) != cudaSuccess) {
		std::fprintf(stderr, "gpu_check: no usable GPU\n");
		return 2;
	}
	CK(cudaMallocHost(&h, n * sizeof(float)));
	int dev = 0, major = 0;
	CK(cudaGetDevice(&dev));
	CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	/* the driver's handle of a kernel of this program */
	cudaFunction_t rf;
	CK(cudaGetFuncBySymbol(&rf, (const void *)driver_kernel));
	CUfunction f = (CUfunction)rf;
	int nn = n;
	void *args[] = {&d, &nn};
	/* a graph of three kernels */
	cudaGraph_t g;
	cudaGraphExec_t ge;
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	for (int i = 0; i < 3; i++)
		busy_kernel<7><<<(n + 255) / 256, 256, 0, s>>>(d, n, 200);
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphInstantiate(&ge, g, 0));
	long launched = 0;
	double t0 = now_s();
	bool marked = false;
	for (int step = 0; live ? now_s() - t0 < 12.0 : step < steps; step++) {
		PROFTOP_PHASE_PUSH(PROFTOP_PHASE_FORWARD);
		op_push("check::gemm");
		for (int r = 0; r < 20; r++)
			busy_kernel<4><<<(n + 255) / 256, 256, 0, s>>>(d, n, 2000);
		launched += 20;
		op_pop();
		op_push("check::driver");
		for (int r = 0; r < 4; r++)
			CU(cuLaunchKernel(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, (CUstream)s, args, nullptr));
		launched += 4;
		op_pop();
		op_push("check::cluster");
		CUlaunchConfig cfg;
		std::memset(&cfg, 0, sizeof cfg);
		cfg.gridDimX = (n + 255) / 256;
		cfg.gridDimY = cfg.gridDimZ = 1;
		cfg.blockDimX = 256;
		cfg.blockDimY = cfg.blockDimZ = 1;
		cfg.hStream = (CUstream)s;
		CUlaunchAttribute at;
		std::memset(&at, 0, sizeof at);
		at.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
		at.value.clusterDim.x = at.value.clusterDim.y = at.value.clusterDim.z = 1;
		if (major >= 9) {
			cfg.attrs = &at;
			cfg.numAttrs = 1;
		}
		for (int r = 0; r < 2; r++)
			CU(cuLaunchKernelEx(&cfg, f, args, nullptr));
		launched += 2;
		op_pop();
		PROFTOP_PHASE_POP();
		PROFTOP_PHASE_PUSH(PROFTOP_PHASE_BACKWARD);
		op_push("check::graph");
		CK(cudaGraphLaunch(ge, s));
		launched += 3;
		op_pop();
		op_push("check::copy");
		CK(cudaMemcpyAsync(h, d, n * sizeof(float), cudaMemcpyDeviceToHost, s));
		CK(cudaMemsetAsync(d, 0, n * sizeof(float), s));
		op_pop();
		PROFTOP_PHASE_POP();
		if (live && !marked && now_s() - t0 > 6.0) {
			marker_kernel<<<1, 32, 0, s>>>(d);
			launched++;
			marked = true;
			std::printf("gpu_check: marker\n");
			std::fflush(stdout);
		}
		/* live: the GPU never idles (no sync), as in a job that queues ahead */
		if (!live)
			CK(cudaStreamSynchronize(s));
		else if (step % 8 == 7)
			CK(cudaStreamSynchronize(s)); /* bounded queue */
		PROFTOP_STEP(32);
	}
	CK(cudaStreamSynchronize(s));
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(g));
	CK(cudaStreamDestroy(s));
	CK(cudaFreeHost(h));
	CK(cudaFree(d));
	std::printf("gpu_check: launched %ld\n", launched);
	return 0;
}
