/*
 * fake_cuda.c - a stand-in libcuda.so.1 for tests/e2e/test_cupti.sh: just
 * what the probe asks the driver (cuDriverGetVersion: $FAKE_CUDA_VERSION,
 * default 13000; cuDeviceGetCount: CUDA_ERROR_NOT_INITIALIZED before cuInit)
 * and cuInit, which, like the driver, loads $CUDA_INJECTION64_PATH and calls
 * its InitializeInjection.
 *   cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o DIR/libcuda.so.1 fake_cuda.c
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

static int g_init;

EXPORT int cuDriverGetVersion(int *v)
{
	const char *s = getenv("FAKE_CUDA_VERSION");
	*v = s && *s ? atoi(s) : 13000;
	return 0;
}

EXPORT int cuDeviceGetCount(int *n)
{
	if (!g_init)
		return 3; /* CUDA_ERROR_NOT_INITIALIZED */
	*n = 1;
	return 0;
}

EXPORT int cuInit(unsigned flags)
{
	(void)flags;
	if (g_init++)
		return 0;
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	if (inj && *inj) {
		void *h = dlopen(inj, RTLD_NOW);
		int (*init)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
		if (init)
			init();
	}
	return 0;
}
