/*
 * fake_nvml.c - a stand-in libnvidia-ml for tests/unit/test_nvml.c: two
 * GPUs with fixed readings, and the process $FAKE_NVML_PID holding 1 GiB on
 * GPU 0. Built by the test into its temporary directory:
 *   cc -shared -fPIC -o libfake_nvml.so tests/gpu/fake_nvml.c
 */
#include <stdlib.h>

struct util { unsigned gpu, memory; };
struct mem { unsigned long long total, free, used; };
struct proc { unsigned pid; unsigned long long used; unsigned gi, ci; };

int nvmlInit_v2(void) { return getenv("FAKE_NVML_FAIL") ? 9 : 0; }
int nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(int rc) { return rc == 9 ? "Driver Not Loaded" : "Unknown Error"; }
int nvmlDeviceGetCount_v2(unsigned *n) { *n = 2; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d) { *d = (void *)(unsigned long)(i + 1); return 0; }
int nvmlDeviceGetUtilizationRates(void *d, struct util *u)
{
	u->gpu = d == (void *)1 ? 37 : 0;
	u->memory = 12;
	return 0;
}
int nvmlDeviceGetMemoryInfo(void *d, struct mem *m)
{
	m->total = 16ull << 30;
	m->used = 4ull << 30;
	m->free = m->total - m->used;
	return 0;
}
int nvmlDeviceGetPowerUsage(void *d, unsigned *mw) { *mw = 123456; return 0; }
int nvmlDeviceGetName(void *d, char *name, unsigned len)
{
	const char *n = d == (void *)1 ? "NVIDIA H100 80GB HBM3" : "NVIDIA A100-SXM4-80GB";
	unsigned i = 0;
	for (; n[i] && i + 1 < len; i++)
		name[i] = n[i];
	name[i] = 0;
	return 0;
}
int nvmlDeviceGetTemperature(void *d, int sensor, unsigned *c) { *c = 61; return 0; }
int nvmlDeviceGetComputeRunningProcesses_v3(void *d, unsigned *n, struct proc *p)
{
	const char *s = getenv("FAKE_NVML_PID");
	if (d != (void *)1 || !s) {
		*n = 0;
		return 0;
	}
	if (*n < 2)
		return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
	p[0] = (struct proc){(unsigned)atoi(s), 1ull << 30, 0, 0};
	p[1] = (struct proc){1, 5ull << 20, 0, 0};
	*n = 2;
	return 0;
}
