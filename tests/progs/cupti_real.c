/*
 * tests/progs/cupti_real.c - a "CUDA job" on a real CUPTI without a GPU, for
 * tests/e2e/test_cupti.sh: like a PyTorch job it loads its libcupti first
 * (the real libcupti.so.12 of PyPI's nvidia-cuda-cupti-cu12 wheel, copied
 * into LIBDIR), then initializes CUDA on the fake driver of tests/gpu
 * (fake_cuda.c, whose cuInit calls the injection as the real driver does),
 * so that the probe starts its collector on the real CUPTI, which has no
 * driver to talk to. Then it runs STEPS steps (proftop_step), and prints the
 * CUPTI version it loaded and "steps N" once they are done:
 *
 *   cupti_real LIBDIR STEPS
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: cupti_real LIBDIR STEPS\n");
		return 2;
	}
	char path[1024];
	snprintf(path, sizeof path, "%s/libcupti.so.12", argv[1]);
	void *cupti = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	snprintf(path, sizeof path, "%s/libcuda.so.1", argv[1]);
	void *cuda = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	if (!cupti || !cuda) {
		fprintf(stderr, "cupti_real: %s\n", dlerror());
		return 2;
	}
	int (*get_version)(uint32_t *) = (int (*)(uint32_t *))dlsym(cupti, "cuptiGetVersion");
	int (*cu_init)(unsigned) = (int (*)(unsigned))dlsym(cuda, "cuInit");
	void (*step)(uint64_t) = (void (*)(uint64_t))dlsym(RTLD_DEFAULT, "proftop_step");
	if (!get_version || !cu_init) {
		fprintf(stderr, "cupti_real: cuptiGetVersion or cuInit missing\n");
		return 2;
	}
	uint32_t v = 0;
	int rc = get_version(&v);
	printf("cupti version %u (rc %d)\n", v, rc);
	cu_init(0);
	int steps = atoi(argv[2]);
	for (int s = 0; s < steps; s++) {
		struct timespec ts = {0, 2000000};
		nanosleep(&ts, NULL);
		if (step)
			step(8);
	}
	printf("steps %d\n", steps);
	return 0;
}
