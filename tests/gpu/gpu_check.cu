// gpu_check.cu - a small CUDA program annotated with the proftop C API, for
// tests/gpu/run.sh on a machine with a GPU: 10 steps, each with a Forward
// phase holding an op "check::gemm" (a templated kernel, so its name needs
// demangling), and a Backward phase holding "check::copy" (a copy and a
// memset), keeping the GPU busy most of the time.
#define PROFTOP_WEAK
#include <cstdio>
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

int main()
{
	const int n = 1 << 20;
	float *d = nullptr, *h = new float[n]();
	if (cudaMalloc(&d, n * sizeof(float)) != cudaSuccess) {
		std::fprintf(stderr, "gpu_check: no usable GPU\n");
		return 2;
	}
	for (int step = 0; step < 10; step++) {
		PROFTOP_PHASE_PUSH(PROFTOP_PHASE_FORWARD);
		if (proftop_op_push) proftop_op_push("check::gemm");
		for (int r = 0; r < 20; r++)
			busy_kernel<4><<<(n + 255) / 256, 256>>>(d, n, 2000);
		if (proftop_op_pop) proftop_op_pop();
		if (proftop_phase_pop) proftop_phase_pop();
		PROFTOP_PHASE_PUSH(PROFTOP_PHASE_BACKWARD);
		if (proftop_op_push) proftop_op_push("check::copy");
		cudaMemcpyAsync(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
		cudaMemsetAsync(d, 0, n * sizeof(float));
		if (proftop_op_pop) proftop_op_pop();
		if (proftop_phase_pop) proftop_phase_pop();
		cudaDeviceSynchronize();
		if (proftop_step) proftop_step(32);
	}
	cudaFree(d);
	delete[] h;
	std::printf("gpu_check: done\n");
	return 0;
}
