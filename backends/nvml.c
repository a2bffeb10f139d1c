/*
 * nvml.c - the NVML sampler backend ("nvml"): device-wide GPU utilization,
 * memory used/total, power, temperature, and the GPU memory the profiled
 * process holds, read about once a second from libnvidia-ml.so.1 (dlopen,
 * never linked; $PROFTOP_NVML_LIB picks another file, tests use a fake)
 * and written as counter events on one "NVML GPU n" track per device.
 * These are NVML's numbers: utilization is "a kernel was running on the
 * device during the sample period", for every process on the GPU; the
 * CUPTI-derived kernel-busy figure in the Device Summary is this process's
 * kernels merged over streams (docs/gpu.md says more). The few NVML types
 * used are declared here (their ABI is stable), so no NVIDIA header is needed.
 *
 * Threading: one instance, used by the live loop's thread.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/backend.h"
#include "proftop/error.h"
#include "util.h"

#define NVML_INTERVAL_NS 1000000000ull
#define NVML_MAX_DEVICES 64
#define NVML_MAX_PROCS 256

typedef void *nvml_dev;
struct nvml_util { unsigned gpu, memory; };
struct nvml_mem { unsigned long long total, free, used; };
struct nvml_proc_v1 { unsigned pid; unsigned long long used; };
struct nvml_proc_v3 { unsigned pid; unsigned long long used; unsigned gi, ci; };

struct nvml_api {
	void *lib;
	int (*init)(void);
	int (*shutdown)(void);
	const char *(*error_string)(int);
	int (*count)(unsigned *);
	int (*handle)(unsigned, nvml_dev *);
	int (*util)(nvml_dev, struct nvml_util *);
	int (*mem)(nvml_dev, struct nvml_mem *);
	int (*power)(nvml_dev, unsigned *);
	int (*temp)(nvml_dev, int, unsigned *);
	int (*procs_v3)(nvml_dev, unsigned *, struct nvml_proc_v3 *);
	int (*procs_v1)(nvml_dev, unsigned *, struct nvml_proc_v1 *);
	int (*name)(nvml_dev, char *, unsigned); /* nvmlDeviceGetName */
};

enum { C_UTIL, C_MEMUTIL, C_USED, C_TOTAL, C_POWER, C_TEMP, C_PROC, C__N };
static const char *const counter_names[C__N] = {
    "GPU Util(NVML) %", "GPU Memory Util(NVML) %", "GPU Memory Used bytes",
    "GPU Memory Total bytes", "GPU Power W", "GPU Temperature C", "GPU Memory(Process) bytes"};

struct nvml_backend {
	struct pt_backend b;
	struct nvml_api api;
	int32_t pid;
	unsigned ndev;
	nvml_dev dev[NVML_MAX_DEVICES];
	uint32_t track[NVML_MAX_DEVICES];
	uint32_t name[C__N];
	struct pt_trace *t;
	uint64_t last_ns;
	int have_last;
};

static const char *lib_path(void)
{
	const char *p = getenv("PROFTOP_NVML_LIB");
	return p && *p ? p : "libnvidia-ml.so.1";
}

/* Loads and initializes NVML; on failure why says so and nothing stays loaded. */
static int api_open(struct nvml_api *a, char *why, size_t len)
{
	memset(a, 0, sizeof *a);
	const char *path = lib_path();
	a->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!a->lib) {
		snprintf(why, len, "%s does not load (no NVIDIA driver?)", path);
		return PT_ENOTAVAIL;
	}
#define NSYM(f, n) (*(void **)&a->f = dlsym(a->lib, n))
	NSYM(init, "nvmlInit_v2");
	NSYM(shutdown, "nvmlShutdown");
	NSYM(error_string, "nvmlErrorString");
	NSYM(count, "nvmlDeviceGetCount_v2");
	NSYM(handle, "nvmlDeviceGetHandleByIndex_v2");
	NSYM(util, "nvmlDeviceGetUtilizationRates");
	NSYM(mem, "nvmlDeviceGetMemoryInfo");
	NSYM(power, "nvmlDeviceGetPowerUsage");
	NSYM(temp, "nvmlDeviceGetTemperature");
	NSYM(procs_v3, "nvmlDeviceGetComputeRunningProcesses_v3");
	NSYM(procs_v1, "nvmlDeviceGetComputeRunningProcesses");
	NSYM(name, "nvmlDeviceGetName");
#undef NSYM
	if (!a->init || !a->shutdown || !a->count || !a->handle) {
		snprintf(why, len, "%s lacks nvmlInit_v2/nvmlDeviceGetCount_v2", path);
		goto fail;
	}
	int rc = a->init();
	if (rc != 0) {
		snprintf(why, len, "nvmlInit: %s (%d)", a->error_string ? a->error_string(rc) : "error",
			 rc);
		goto fail;
	}
	unsigned n = 0;
	if (a->count(&n) != 0 || n == 0) {
		a->shutdown();
		snprintf(why, len, "NVML sees no GPU");
		goto fail;
	}
	return 0;
fail:
	dlclose(a->lib);
	a->lib = NULL;
	return PT_ENOTAVAIL;
}

static void api_close(struct nvml_api *a)
{
	if (!a->lib)
		return;
	a->shutdown();
	dlclose(a->lib);
	a->lib = NULL;
}

static int nv_probe(char *why, size_t whylen)
{
	struct nvml_api a;
	int rc = api_open(&a, why, whylen);
	if (rc == 0)
		api_close(&a);
	return rc;
}

static int nv_open(struct pt_backend **out, const struct pt_backend_args *args, char *err,
		   size_t errlen)
{
	*out = NULL;
	struct nvml_backend *n = pt_xcalloc(1, sizeof *n);
	n->b.ops = &pt_backend_nvml;
	int rc = api_open(&n->api, err, errlen);
	if (rc) {
		free(n);
		return rc;
	}
	n->pid = args ? args->pid : 0;
	unsigned cnt = 0;
	n->api.count(&cnt);
	for (unsigned i = 0; i < cnt && n->ndev < NVML_MAX_DEVICES; i++)
		if (n->api.handle(i, &n->dev[n->ndev]) == 0)
			n->ndev++;
	*out = &n->b;
	return 0;
}

static void emit(struct nvml_backend *n, struct pt_trace *t, unsigned dev, int c, uint64_t now_ns,
		 double v)
{
	struct pt_event ev = {0};
	ev.start_ns = now_ns;
	ev.name_id = n->name[c];
	ev.track_id = n->track[dev];
	ev.kind = PT_KIND_COUNTER;
	memcpy(&ev.arg, &v, sizeof ev.arg);
	pt_trace_add(t, &ev);
}

/* GPU memory held by pid on dev, or -1 when NVML cannot say. */
static double proc_mem(struct nvml_backend *n, nvml_dev dev)
{
	unsigned cnt = NVML_MAX_PROCS;
	if (n->api.procs_v3) {
		static struct nvml_proc_v3 p[NVML_MAX_PROCS];
		if (n->api.procs_v3(dev, &cnt, p) != 0)
			return -1;
		double sum = 0;
		for (unsigned i = 0; i < cnt && i < NVML_MAX_PROCS; i++)
			if ((int32_t)p[i].pid == n->pid)
				sum += (double)p[i].used;
		return sum;
	}
	if (n->api.procs_v1) {
		static struct nvml_proc_v1 p[NVML_MAX_PROCS];
		if (n->api.procs_v1(dev, &cnt, p) != 0)
			return -1;
		double sum = 0;
		for (unsigned i = 0; i < cnt && i < NVML_MAX_PROCS; i++)
			if ((int32_t)p[i].pid == n->pid)
				sum += (double)p[i].used;
		return sum;
	}
	return -1;
}

static int nv_poll(struct pt_backend *b, struct pt_trace *t, uint64_t now_ns)
{
	struct nvml_backend *n = (struct nvml_backend *)b;
	if (n->have_last && now_ns - n->last_ns < NVML_INTERVAL_NS && n->t == t)
		return 0;
	if (n->t != t) {
		for (unsigned d = 0; d < n->ndev; d++) {
			char label[32];
			int len = snprintf(label, sizeof label, "NVML GPU %u", d);
			struct pt_track_key key = {n->pid, 0, 0, pt_trace_intern(t, label, (size_t)len)};
			n->track[d] = pt_trace_track(t, &key);
			/* a device track, so the header's GPU meter and the
			 * timeline find NVML's counters next to the kernels */
			pt_trace_track_device(t, n->track[d], (int32_t)d, -1);
			pt_trace_set_thread_label(t, &key, pt_trace_intern(t, "NVML", 4));
		}
		for (int c = 0; c < C__N; c++)
			n->name[c] = pt_trace_intern(t, counter_names[c], strlen(counter_names[c]));
		/* the first GPU's model: the FLOPs figures' peak (flops.h) */
		char model[96] = "";
		if (n->ndev && n->api.name && !t->device_name &&
		    n->api.name(n->dev[0], model, sizeof model) == 0) {
			model[sizeof model - 1] = 0;
			t->device_name = pt_trace_intern(t, model, strlen(model));
		}
		n->t = t;
	}
	n->have_last = 1;
	n->last_ns = now_ns;
	for (unsigned d = 0; d < n->ndev; d++) {
		struct nvml_util u;
		struct nvml_mem m;
		unsigned v;
		if (n->api.util && n->api.util(n->dev[d], &u) == 0) {
			emit(n, t, d, C_UTIL, now_ns, u.gpu);
			emit(n, t, d, C_MEMUTIL, now_ns, u.memory);
		}
		if (n->api.mem && n->api.mem(n->dev[d], &m) == 0) {
			emit(n, t, d, C_USED, now_ns, (double)m.used);
			emit(n, t, d, C_TOTAL, now_ns, (double)m.total);
		}
		if (n->api.power && n->api.power(n->dev[d], &v) == 0)
			emit(n, t, d, C_POWER, now_ns, v / 1000.0); /* NVML gives mW */
		if (n->api.temp && n->api.temp(n->dev[d], 0 /* NVML_TEMPERATURE_GPU */, &v) == 0)
			emit(n, t, d, C_TEMP, now_ns, v);
		if (n->pid > 0) {
			double pm = proc_mem(n, n->dev[d]);
			if (pm >= 0)
				emit(n, t, d, C_PROC, now_ns, pm);
		}
	}
	return 0;
}

static void nv_close(struct pt_backend *b)
{
	struct nvml_backend *n = (struct nvml_backend *)b;
	if (!n)
		return;
	api_close(&n->api);
	free(n);
}

static const char *nv_last_error(const struct pt_backend *b)
{
	return b->err;
}

static void nv_describe(const struct pt_backend *b, char *buf, size_t len)
{
	const struct nvml_backend *n = (const struct nvml_backend *)b;
	snprintf(buf, len, "NVML: %u GPU%s, every 1 s", n->ndev, n->ndev == 1 ? "" : "s");
}

const struct pt_backend_ops pt_backend_nvml = {
	.name = "nvml",
	.probe = nv_probe,
	.open = nv_open,
	.poll = nv_poll,
	.close = nv_close,
	.last_error = nv_last_error,
	.describe = nv_describe,
};
