/*
 * tests/progs/cupti_app.c - a "CUDA training job" for tests/e2e/test_cupti.sh,
 * run on the fake driver and CUPTI of tests/gpu (fake_cuda.c, fake_cupti.c,
 * fake_kineto.c, built into LIBDIR by the test). Like a PyTorch job, it loads
 * its profiler library (which links libcupti) first, then initializes CUDA
 * (the fake cuInit calls the injection, as the driver does), then trains:
 *
 *   cupti_app LIBDIR STEPS END [kineto] [late=PROBE]
 *
 * Each step: Forward { app::gemm: 3 cudaLaunchKernel; app::triton: 2
 * cuLaunchKernel }, Backward { app::cluster: 1 cuLaunchKernelEx; app::graph:
 * a cudaGraphLaunch of 4 kernels; app::copy: a cudaMemcpyAsync }, then the
 * GPU finishes and proftop_step(32). kineto: a torch.profiler-like window
 * over the middle third of the steps. late=PROBE: the probe is dlopened
 * after cuInit (CUDA_INJECTION64_PATH unset), as ctypes.CDLL would. END:
 * how the process ends right after the last step, before the probe's next
 * periodic flush: exit (atexit), _exit (os._exit), sigterm (raise(SIGTERM)),
 * or wait:FILE (until FILE exists, then exit). Two kernels are left running
 * at the end (never finished): they must be counted as dropped, not shown.
 * Prints "launched N" (kernels finished) and, with kineto, "kineto N".
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *need(void *h, const char *name)
{
	void *p = dlsym(h, name);
	if (!p) {
		fprintf(stderr, "cupti_app: %s: %s\n", name, dlerror());
		exit(2);
	}
	return p;
}

static void *open_lib(const char *dir, const char *name, int flags)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	void *h = dlopen(path, flags);
	if (!h) {
		fprintf(stderr, "cupti_app: %s\n", dlerror());
		exit(2);
	}
	return h;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: cupti_app LIBDIR STEPS END [kineto] [late=PROBE]\n");
		return 2;
	}
	const char *dir = argv[1], *end = argv[3], *late = NULL;
	int steps = atoi(argv[2]), kineto = 0;
	for (int i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "kineto"))
			kineto = 1;
		else if (!strncmp(argv[i], "late=", 5))
			late = argv[i] + 5;
	}
	if (late)
		unsetenv("CUDA_INJECTION64_PATH");
	/* the profiler library links libcupti (PyTorch's libkineto does) */
	void *kin = open_lib(dir, "libfake_kineto.so", RTLD_NOW | RTLD_LOCAL);
	void *cupti = open_lib(dir, "libcupti.so.12", RTLD_NOW | RTLD_NOLOAD);
	void *cuda = open_lib(dir, "libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	int (*cu_init)(unsigned) = (int (*)(unsigned))need(cuda, "cuInit");
	cu_init(0);
	if (late) {
		if (!dlopen(late, RTLD_NOW | RTLD_GLOBAL)) {
			fprintf(stderr, "cupti_app: %s\n", dlerror());
			return 2;
		}
		sleep_ms(500); /* the probe starts CUPTI from a thread of its own */
	}
	uint32_t (*launch)(int, const char *, uint32_t, uint32_t, uint64_t, int) =
	    (uint32_t(*)(int, const char *, uint32_t, uint32_t, uint64_t, int))need(
		cupti, "fake_cupti_launch");
	uint32_t (*copy)(uint64_t, uint32_t, uint32_t) =
	    (uint32_t(*)(uint64_t, uint32_t, uint32_t))need(cupti, "fake_cupti_memcpy");
	void (*finish)(void) = (void (*)(void))need(cupti, "fake_cupti_gpu_finish");
	void (*k_start)(void) = (void (*)(void))need(kin, "kineto_start");
	uint64_t (*k_stop)(void) = (uint64_t(*)(void))need(kin, "kineto_stop");
	/* the C API, if a probe is there (preloaded, or loaded above) */
	void (*op_push)(const char *) = (void (*)(const char *))dlsym(RTLD_DEFAULT, "proftop_op_push");
	void (*op_pop)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "proftop_op_pop");
	void (*ph_push)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "proftop_phase_push");
	void (*ph_pop)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "proftop_phase_pop");
	void (*step)(uint64_t) = (void (*)(uint64_t))dlsym(RTLD_DEFAULT, "proftop_step");
	if (!op_push || !op_pop || !ph_push || !ph_pop || !step) {
		fprintf(stderr, "cupti_app: no proftop C API in the process\n");
		return 2;
	}
	uint64_t launched = 0, kernels = 0;
	for (int s = 0; s < steps; s++) {
		if (kineto && s == steps / 3)
			k_start();
		if (kineto && s == 2 * steps / 3)
			kernels = k_stop();
		ph_push(2); /* Forward */
		op_push("app::gemm");
		for (int i = 0; i < 3; i++)
			launch(0, "_Z9gemm_tileILi128EEvPKfPf", 0, 7, 20000, 1);
		op_pop();
		op_push("app::triton");
		for (int i = 0; i < 2; i++)
			launch(1, "triton_poi_fused_add_relu_0", 0, 7, 10000, 1);
		op_pop();
		ph_pop();
		ph_push(3); /* Backward */
		op_push("app::cluster");
		launch(2, "cutlass_sm90_gemm_tma_warpspecialized", 0, 13, 30000, 1);
		op_pop();
		op_push("app::graph");
		launch(3, "graph_node_kernel", 0, 7, 5000, 4);
		op_pop();
		op_push("app::copy");
		copy(1 << 20, 0, 7);
		op_pop();
		ph_pop();
		finish();
		launched += 10;
		step(32);
		sleep_ms(20);
	}
	/* two kernels still running when the process goes */
	launch(0, "_Z7runningv", 0, 7, 1000000, 1);
	launch(0, "_Z7runningv", 0, 7, 1000000, 1);
	printf("launched %llu\n", (unsigned long long)launched);
	if (kineto)
		printf("kineto %llu\n", (unsigned long long)kernels);
	fflush(stdout);
	if (!strcmp(end, "_exit"))
		_exit(0);
	if (!strcmp(end, "sigterm"))
		raise(SIGTERM);
	if (!strncmp(end, "wait:", 5))
		while (access(end + 5, F_OK) != 0)
			sleep_ms(20);
	return 0;
}
