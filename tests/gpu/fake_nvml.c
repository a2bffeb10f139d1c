/*
 * fake_nvml.c - a stand-in libnvidia-ml for tests/unit/test_nvml.c. GPU i
 * (FAKE_NVML_GPUS of them, default 2) has UUID GPU-0000000i-..., PCI bus
 * 0x10*(i+1), (4+i) GiB of 16 GiB used, utilization 37 (GPU 0) or 0.
 * FAKE_NVML_MIXED=1: GPU 1 is another model. FAKE_NVML_MIG=1: GPU 1 has MIG
 * on, with one instance MIG-11111111-2222-3333-4444-555555555555 (2 GiB of
 * 10 GiB used); neither has a utilization. FAKE_NVML_SAMPLES=1: GPU 0 has
 * utilization samples (nvmlDeviceGetSamples): two new ones, 10 then 30,
 * 500 and 250 ms before each call. Processes (FAKE_NVML_PROCS) on GPU 0:
 * "mine" (default) $FAKE_NVML_PID with 1 GiB and pid 1 with 5 MiB; "foreign"
 * two pids that exist nowhere; "na" $FAKE_NVML_PID with no figure; "many"
 * 99 others and then $FAKE_NVML_PID (more than a first buffer holds).
 * FAKE_NVML_FAIL: nvmlInit fails. Built by the test into its temporary
 * directory:
 *   cc -shared -fPIC -o libfake_nvml.so tests/gpu/fake_nvml.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct util { unsigned gpu, memory; };
struct mem { unsigned long long total, free, used; };
struct proc { unsigned pid; unsigned long long used; unsigned gi, ci; };
struct pci { char legacy[16]; unsigned domain, bus, device, devid, subsys; char bus_id[32]; };
struct sample { unsigned long long ts; unsigned long long v; };

#define MIG_HANDLE ((void *)0x100)
#define MIG_UUID "MIG-11111111-2222-3333-4444-555555555555"

static int env_on(const char *n)
{
	const char *s = getenv(n);
	return s && !strcmp(s, "1");
}

static unsigned ngpus(void)
{
	const char *s = getenv("FAKE_NVML_GPUS");
	return s && *s ? (unsigned)atoi(s) : 2;
}

/* handle i+1 for GPU i */
static int gpu_of(void *d)
{
	unsigned long v = (unsigned long)d;
	return v >= 1 && v <= ngpus() ? (int)v - 1 : -1;
}

int nvmlInit_v2(void) { return getenv("FAKE_NVML_FAIL") ? 9 : 0; }
int nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(int rc) { return rc == 9 ? "Driver Not Loaded" : "Unknown Error"; }
int nvmlDeviceGetCount_v2(unsigned *n) { *n = ngpus(); return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d)
{
	if (i >= ngpus())
		return 2;
	*d = (void *)(unsigned long)(i + 1);
	return 0;
}
int nvmlDeviceGetUUID(void *d, char *buf, unsigned len)
{
	int g = gpu_of(d);
	if (d == MIG_HANDLE)
		snprintf(buf, len, "%s", MIG_UUID);
	else if (g >= 0)
		snprintf(buf, len, "GPU-0000000%d-aaaa-bbbb-cccc-ddddeeee000%d", g, g);
	else
		return 2;
	return 0;
}
int nvmlDeviceGetHandleByUUID(const char *uuid, void **d)
{
	if (!strcmp(uuid, MIG_UUID) && env_on("FAKE_NVML_MIG")) {
		*d = MIG_HANDLE;
		return 0;
	}
	for (unsigned i = 0; i < ngpus(); i++) {
		char u[96];
		nvmlDeviceGetUUID((void *)(unsigned long)(i + 1), u, sizeof u);
		if (!strcmp(u, uuid)) {
			*d = (void *)(unsigned long)(i + 1);
			return 0;
		}
	}
	return 6; /* NOT_FOUND */
}
int nvmlDeviceGetPciInfo_v3(void *d, struct pci *p)
{
	int g = gpu_of(d);
	if (g < 0)
		return 2;
	memset(p, 0, sizeof *p);
	p->bus = 0x10 * (unsigned)(g + 1);
	snprintf(p->bus_id, sizeof p->bus_id, "00000000:%02X:00.0", p->bus);
	return 0;
}
int nvmlDeviceGetName(void *d, char *buf, unsigned len)
{
	snprintf(buf, len, "%s", gpu_of(d) == 1 && env_on("FAKE_NVML_MIXED") ? "NVIDIA A100-SXM4-40GB"
									    : "NVIDIA H100 80GB HBM3");
	return 0;
}
int nvmlDeviceGetMigMode(void *d, unsigned *cur, unsigned *pend)
{
	*cur = *pend = gpu_of(d) == 1 && env_on("FAKE_NVML_MIG");
	return 0;
}
int nvmlDeviceGetDeviceHandleFromMigDeviceHandle(void *mig, void **parent)
{
	if (mig != MIG_HANDLE)
		return 2;
	*parent = (void *)2ul;
	return 0;
}
int nvmlDeviceGetUtilizationRates(void *d, struct util *u)
{
	int g = gpu_of(d);
	if (d == MIG_HANDLE || (g == 1 && env_on("FAKE_NVML_MIG")))
		return 3; /* NOT_SUPPORTED */
	u->gpu = g == 0 ? 37 : 0;
	u->memory = 12;
	return 0;
}
int nvmlDeviceGetSamples(void *d, int type, unsigned long long last, int *vtype, unsigned *n,
			 struct sample *s)
{
	if (!env_on("FAKE_NVML_SAMPLES") || gpu_of(d) != 0 || type != 1)
		return 3;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	unsigned long long now = (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000;
	unsigned k = 0;
	if (*n >= 2 && now - 500000 > last) {
		s[k++] = (struct sample){now - 500000, 10};
		s[k++] = (struct sample){now - 250000, 30};
	}
	*vtype = 1; /* unsigned int */
	*n = k;
	return 0;
}
int nvmlDeviceGetMemoryInfo(void *d, struct mem *m)
{
	if (d == MIG_HANDLE) {
		m->total = 10ull << 30;
		m->used = 2ull << 30;
	} else {
		m->total = 16ull << 30;
		m->used = (4ull + (unsigned long long)gpu_of(d)) << 30;
	}
	m->free = m->total - m->used;
	return 0;
}
int nvmlDeviceGetPowerUsage(void *d, unsigned *mw) { *mw = d == MIG_HANDLE ? 0 : 123456; return d == MIG_HANDLE ? 3 : 0; }
int nvmlDeviceGetTemperature(void *d, int sensor, unsigned *c) { *c = 61; return d == MIG_HANDLE ? 3 : 0; }
int nvmlDeviceGetComputeRunningProcesses_v3(void *d, unsigned *n, struct proc *p)
{
	const char *s = getenv("FAKE_NVML_PID");
	const char *mode = getenv("FAKE_NVML_PROCS");
	if (gpu_of(d) != 0 || !s) {
		*n = 0;
		return 0;
	}
	unsigned me = (unsigned)atoi(s);
	if (mode && !strcmp(mode, "many")) {
		if (*n < 100) {
			*n = 100;
			return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
		}
		for (unsigned i = 0; i < 99; i++)
			p[i] = (struct proc){4300100 + i, 1ull << 20, 0, 0};
		p[99] = (struct proc){me, 3ull << 30, 0, 0};
		*n = 100;
		return 0;
	}
	if (*n < 2) {
		*n = 2;
		return 7;
	}
	if (mode && !strcmp(mode, "foreign")) {
		p[0] = (struct proc){4300001, 1ull << 30, 0, 0};
		p[1] = (struct proc){4300002, 1ull << 30, 0, 0};
	} else if (mode && !strcmp(mode, "na")) {
		p[0] = (struct proc){me, 0xffffffffffffffffull, 0, 0};
		p[1] = (struct proc){1, 5ull << 20, 0, 0};
	} else {
		p[0] = (struct proc){me, 1ull << 30, 0, 0};
		p[1] = (struct proc){1, 5ull << 20, 0, 0};
	}
	*n = 2;
	return 0;
}
