/*
 * nvml.c - the NVML sampler backend ("nvml"): device-wide GPU utilization,
 * memory used/total, power, temperature, and the GPU memory the profiled
 * process holds, read from libnvidia-ml.so.1 (dlopen, never linked;
 * $PROFTOP_NVML_LIB picks another file, tests use a fake) and written as
 * counter events on one "NVML GPU n" track per device. These are NVML's
 * numbers: utilization is "a kernel was running on the device during the
 * sample period", for every process on the GPU; the CUPTI-derived
 * kernel-busy figure is this process's kernels merged over streams
 * (docs/gpu.md says more). The few NVML types used are declared here (their
 * ABI is stable), so no NVIDIA header is needed.
 *
 * Which GPU is which: n is the profiled process's CUDA device number, the
 * one its kernels carry, so the NVML track sits beside that device's kernel
 * lanes. The process's own CUDA_VISIBLE_DEVICES (read from
 * /proc/PID/environ) is honoured as CUDA reads it: indices (into PCI bus
 * order; CUDA's default "fastest first" order is the same on machines of
 * one GPU model, which a note says when models differ), GPU-<uuid>
 * (prefixes too) and MIG-<uuid> entries, the list ending at the first
 * entry that names no device. Devices are matched by UUID and PCI bus id,
 * never by NVML's index.
 *
 * Unknowns stay unknown (no counter, and a note says why): a MIG instance
 * has no utilization in NVML; the process's memory is unknown when NVML
 * lists the processes of another pid namespace (a container) or says "not
 * available". Utilization comes from nvmlDeviceGetSamples, every sample
 * NVML took since the last read at its own time (a once-a-second reading
 * would alias with a step time near a second); without it, the reading is
 * taken at a period that varies between 0.75 and 1.25 s.
 *
 * Threading: one instance, used by the live loop's thread.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proftop/backend.h"
#include "proftop/error.h"
#include "model/util.h"

#define NVML_INTERVAL_NS 1000000000ull
#define NVML_MAX_DEVICES 64
#define NVML_MAX_PROCS 4096
#define NVML_SUCCESS 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_VALUE_NOT_AVAILABLE 0xffffffffffffffffull
#define NVML_GPU_UTILIZATION_SAMPLES 1
#define UUID_BYTES 96

typedef void *nvml_dev;
struct nvml_util { unsigned gpu, memory; };
struct nvml_mem { unsigned long long total, free, used; };
struct nvml_proc_v1 { unsigned pid; unsigned long long used; };
struct nvml_proc_v3 { unsigned pid; unsigned long long used; unsigned gi, ci; };
struct nvml_pci { char bus_id_legacy[16]; unsigned domain, bus, device, pci_device_id, subsys; char bus_id[32]; };
struct nvml_sample { unsigned long long ts_us; union { double d; unsigned u; unsigned long ul; unsigned long long ull; long long sll; int si; } v; };

struct nvml_api {
	void *lib;
	int (*init)(void);
	int (*shutdown)(void);
	const char *(*error_string)(int);
	int (*count)(unsigned *);
	int (*handle)(unsigned, nvml_dev *);
	int (*by_uuid)(const char *, nvml_dev *);
	int (*uuid)(nvml_dev, char *, unsigned);
	int (*pci)(nvml_dev, struct nvml_pci *);
	int (*name)(nvml_dev, char *, unsigned);
	int (*mig_mode)(nvml_dev, unsigned *, unsigned *);
	int (*mig_parent)(nvml_dev, nvml_dev *);
	int (*util)(nvml_dev, struct nvml_util *);
	int (*samples)(nvml_dev, int, unsigned long long, int *, unsigned *, struct nvml_sample *);
	int (*mem)(nvml_dev, struct nvml_mem *);
	int (*power)(nvml_dev, unsigned *);
	int (*temp)(nvml_dev, int, unsigned *);
	int (*procs_v3)(nvml_dev, unsigned *, struct nvml_proc_v3 *);
	int (*procs_v1)(nvml_dev, unsigned *, struct nvml_proc_v1 *);
};

enum { C_UTIL, C_MEMUTIL, C_USED, C_TOTAL, C_POWER, C_TEMP, C_PROC, C__N };
static const char *const counter_names[C__N] = {
    "GPU Util(NVML) %", "GPU Memory Util(NVML) %", "GPU Memory Used bytes",
    "GPU Memory Total bytes", "GPU Power W", "GPU Temperature C", "GPU Memory(Process) bytes"};

/* One device as the profiled process numbers them. */
struct nvml_gpu {
	nvml_dev dev;    /* the GPU, or the MIG instance */
	nvml_dev parent; /* the GPU a MIG instance lives on (power, temperature), else dev */
	int mig;
	unsigned long long last_sample_us;
	char uuid[UUID_BYTES];
};

struct nvml_backend {
	struct pt_backend b;
	struct nvml_api api;
	int32_t pid;
	unsigned ndev;
	struct nvml_gpu gpu[NVML_MAX_DEVICES];
	uint32_t track[NVML_MAX_DEVICES];
	uint32_t name[C__N];
	struct pt_trace *t;
	uint64_t last_ns, next_util_ns;
	int have_last;
	uint32_t rand;
	void *procs;         /* process list buffer */
	unsigned procs_cap;  /* its entries */
	int proc_unknown;    /* the process's memory cannot be told: said once */
	char env_note[200];  /* how CUDA_VISIBLE_DEVICES was read, for a note */
	char mig_note[120];
	int noted;
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
	NSYM(by_uuid, "nvmlDeviceGetHandleByUUID");
	NSYM(uuid, "nvmlDeviceGetUUID");
	NSYM(pci, "nvmlDeviceGetPciInfo_v3");
	NSYM(name, "nvmlDeviceGetName");
	NSYM(mig_mode, "nvmlDeviceGetMigMode");
	NSYM(mig_parent, "nvmlDeviceGetDeviceHandleFromMigDeviceHandle");
	NSYM(util, "nvmlDeviceGetUtilizationRates");
	NSYM(samples, "nvmlDeviceGetSamples");
	NSYM(mem, "nvmlDeviceGetMemoryInfo");
	NSYM(power, "nvmlDeviceGetPowerUsage");
	NSYM(temp, "nvmlDeviceGetTemperature");
	NSYM(procs_v3, "nvmlDeviceGetComputeRunningProcesses_v3");
	NSYM(procs_v1, "nvmlDeviceGetComputeRunningProcesses");
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

/* ---- which GPUs the process sees, in its numbering ---- */

struct phys {
	nvml_dev dev;
	unsigned index;
	unsigned long long pci; /* domain:bus:device, for PCI bus order */
	char uuid[UUID_BYTES];
	char name[96];
};

static int by_pci(const void *a, const void *b)
{
	const struct phys *x = a, *y = b;
	return x->pci < y->pci ? -1 : x->pci > y->pci;
}

/* The value of name in /proc/PID/environ (under root), 1 when set. */
static int proc_env(const char *root, int32_t pid, const char *name, char *out, size_t len)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%d/environ", root, (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t nl = strlen(name);
	int found = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while (!found && (n = getdelim(&line, &cap, '\0', f)) > 0)
		if ((size_t)n > nl && !strncmp(line, name, nl) && line[nl] == '=') {
			snprintf(out, len, "%s", line + nl + 1);
			found = 1;
		}
	free(line);
	fclose(f);
	return found;
}

static void add_gpu(struct nvml_backend *n, nvml_dev dev, nvml_dev parent, int mig, const char *uuid)
{
	if (n->ndev >= NVML_MAX_DEVICES)
		return;
	struct nvml_gpu *g = &n->gpu[n->ndev++];
	g->dev = dev;
	g->parent = parent;
	g->mig = mig;
	snprintf(g->uuid, sizeof g->uuid, "%s", uuid);
}

/* A GPU's own MIG state: its instances have the utilization, not it. */
static int mig_on(struct nvml_api *a, nvml_dev dev)
{
	unsigned cur = 0, pend = 0;
	return a->mig_mode && a->mig_mode(dev, &cur, &pend) == NVML_SUCCESS && cur == 1;
}

static void find_gpus(struct nvml_backend *n, const char *proc_root)
{
	struct nvml_api *a = &n->api;
	unsigned cnt = 0;
	a->count(&cnt);
	struct phys *p = calloc(cnt ? cnt : 1, sizeof *p);
	if (!p)
		return;
	unsigned np = 0;
	int models_differ = 0;
	for (unsigned i = 0; i < cnt && np < NVML_MAX_DEVICES; i++) {
		if (a->handle(i, &p[np].dev) != NVML_SUCCESS)
			continue;
		p[np].index = i;
		if (a->uuid)
			a->uuid(p[np].dev, p[np].uuid, sizeof p[np].uuid);
		if (a->name)
			a->name(p[np].dev, p[np].name, sizeof p[np].name);
		struct nvml_pci pci;
		if (a->pci && a->pci(p[np].dev, &pci) == NVML_SUCCESS)
			p[np].pci = (unsigned long long)pci.domain << 32 | pci.bus << 8 | pci.device;
		else
			p[np].pci = i; /* NVML's own order is PCI bus order */
		if (np && strcmp(p[np].name, p[0].name) != 0)
			models_differ = 1;
		np++;
	}
	qsort(p, np, sizeof *p, by_pci);
	char vis[1024];
	int have_env = n->pid > 0 &&
		       proc_env(proc_root, n->pid, "CUDA_VISIBLE_DEVICES", vis, sizeof vis);
	if (!have_env) {
		for (unsigned i = 0; i < np; i++)
			add_gpu(n, p[i].dev, p[i].dev, 0, p[i].uuid);
		free(p);
		return;
	}
	/* CUDA's reading: entries until the first that names no device */
	char shown[64];
	snprintf(shown, sizeof shown, "%.60s", vis);
	char order[64] = "";
	proc_env(proc_root, n->pid, "CUDA_DEVICE_ORDER", order, sizeof order);
	int indices = 0;
	char *save = NULL;
	for (char *e = strtok_r(vis, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		while (*e == ' ')
			e++;
		size_t el = strlen(e);
		while (el && e[el - 1] == ' ')
			e[--el] = 0;
		int found = 0;
		if (!strncmp(e, "MIG-", 4)) {
			nvml_dev mig, parent;
			if (a->by_uuid && a->by_uuid(e, &mig) == NVML_SUCCESS) {
				if (!a->mig_parent || a->mig_parent(mig, &parent) != NVML_SUCCESS)
					parent = mig;
				add_gpu(n, mig, parent, 1, e);
				found = 1;
			}
		} else if (!strncmp(e, "GPU-", 4)) {
			for (unsigned i = 0; i < np && !found; i++)
				if (!strncmp(p[i].uuid, e, el)) {
					add_gpu(n, p[i].dev, p[i].dev, 0, p[i].uuid);
					found = 1;
				}
		} else if (*e >= '0' && *e <= '9') {
			char *end;
			errno = 0;
			unsigned long k = strtoul(e, &end, 10);
			if (!*end && !errno && k < np) {
				add_gpu(n, p[k].dev, p[k].dev, 0, p[k].uuid);
				indices = found = 1;
			}
		}
		/* a device named twice ends the list too */
		for (unsigned j = 0; found && j + 1 < n->ndev; j++)
			if (n->gpu[j].dev == n->gpu[n->ndev - 1].dev) {
				n->ndev--;
				found = 0;
			}
		if (!found)
			break;
	}
	snprintf(n->env_note, sizeof n->env_note,
		 "NVML: the process's CUDA_VISIBLE_DEVICES=%s: %u device%s", shown, n->ndev,
		 n->ndev == 1 ? "" : "s");
	if (indices && models_differ && strcmp(order, "PCI_BUS_ID") != 0)
		snprintf(n->env_note + strlen(n->env_note), sizeof n->env_note - strlen(n->env_note),
			 "; GPU models differ and CUDA_DEVICE_ORDER is not PCI_BUS_ID: indices "
			 "taken in PCI bus order, CUDA's may differ");
	free(p);
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
	n->rand = (uint32_t)n->pid * 2654435761u + 1;
	find_gpus(n, args && args->proc_root ? args->proc_root : "/proc");
	for (unsigned d = 0; d < n->ndev; d++) {
		if (n->gpu[d].mig) {
			snprintf(n->mig_note, sizeof n->mig_note,
				 "NVML: GPU %u is a MIG instance: NVML gives no utilization for it", d);
		} else if (mig_on(&n->api, n->gpu[d].dev)) {
			snprintf(n->mig_note, sizeof n->mig_note,
				 "NVML: GPU %u has MIG on: NVML gives no utilization for it", d);
		}
	}
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

/* Is there a process pid in our pid namespace? (NVML's pids are the host's.) */
static int pid_here(unsigned pid)
{
	return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* GPU memory held by the process on dev; -1 when NVML cannot say. */
static double proc_mem(struct nvml_backend *n, nvml_dev dev)
{
	int v3 = n->api.procs_v3 != NULL;
	if (!v3 && !n->api.procs_v1)
		return -1;
	size_t esz = v3 ? sizeof(struct nvml_proc_v3) : sizeof(struct nvml_proc_v1);
	if (!n->procs) {
		n->procs_cap = 64;
		n->procs = pt_xcalloc(n->procs_cap, esz);
	}
	unsigned cnt;
	int rc;
	for (;;) {
		cnt = n->procs_cap;
		rc = v3 ? n->api.procs_v3(dev, &cnt, n->procs) : n->api.procs_v1(dev, &cnt, n->procs);
		if (rc != NVML_ERROR_INSUFFICIENT_SIZE || n->procs_cap >= NVML_MAX_PROCS)
			break;
		/* cnt says how many there are now: room for them and a few more */
		unsigned want = cnt > n->procs_cap ? cnt + 16 : n->procs_cap * 2;
		if (want > NVML_MAX_PROCS)
			want = NVML_MAX_PROCS;
		free(n->procs);
		n->procs_cap = want;
		n->procs = pt_xcalloc(n->procs_cap, esz);
	}
	if (rc != NVML_SUCCESS)
		return -1;
	if (cnt > n->procs_cap)
		cnt = n->procs_cap;
	double sum = 0;
	int mine = 0, others_here = 0;
	for (unsigned i = 0; i < cnt; i++) {
		unsigned pid;
		unsigned long long used;
		if (v3) {
			const struct nvml_proc_v3 *e = (const struct nvml_proc_v3 *)n->procs + i;
			pid = e->pid;
			used = e->used;
		} else {
			const struct nvml_proc_v1 *e = (const struct nvml_proc_v1 *)n->procs + i;
			pid = e->pid;
			used = e->used;
		}
		if ((int32_t)pid == n->pid) {
			if (used == NVML_VALUE_NOT_AVAILABLE)
				return -1;
			sum += (double)used;
			mine = 1;
		} else if (pid_here(pid)) {
			others_here = 1;
		}
	}
	/* a list of processes none of which exists here: pids of another namespace */
	if (!mine && cnt && !others_here)
		return -1;
	return sum;
}

/* Utilization: every sample NVML took since the last read, at its time. */
static int util_samples(struct nvml_backend *n, struct pt_trace *t, unsigned d, uint64_t now_ns)
{
	struct nvml_gpu *g = &n->gpu[d];
	if (!n->api.samples || g->mig)
		return 0;
	struct nvml_sample s[128];
	unsigned cnt = sizeof s / sizeof *s;
	int type = 0;
	if (n->api.samples(g->dev, NVML_GPU_UTILIZATION_SAMPLES, g->last_sample_us, &type, &cnt, s) !=
	    NVML_SUCCESS)
		return 0;
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	unsigned long long real_us =
	    (unsigned long long)rt.tv_sec * 1000000ull + (unsigned long long)rt.tv_nsec / 1000;
	for (unsigned i = 0; i < cnt && i < sizeof s / sizeof *s; i++) {
		if (s[i].ts_us <= g->last_sample_us)
			continue;
		g->last_sample_us = s[i].ts_us;
		double v = type == 0 ? s[i].v.d : type == 3 ? (double)s[i].v.ull : (double)s[i].v.u;
		/* NVML's timestamps are wall-clock microseconds: placed back on the session clock */
		uint64_t age_ns = real_us > s[i].ts_us ? (real_us - s[i].ts_us) * 1000ull : 0;
		emit(n, t, d, C_UTIL, now_ns > age_ns ? now_ns - age_ns : now_ns, v);
	}
	return 1;
}

static void note_once(struct nvml_backend *n, struct pt_trace *t)
{
	if (n->noted)
		return;
	n->noted = 1;
	if (n->env_note[0])
		pt_trace_note(t, n->env_note);
	if (n->mig_note[0])
		pt_trace_note(t, n->mig_note);
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
		    n->api.name(n->gpu[0].parent, model, sizeof model) == 0) {
			model[sizeof model - 1] = 0;
			t->device_name = pt_trace_intern(t, model, strlen(model));
		}
		n->t = t;
		n->noted = 0;
	}
	note_once(n, t);
	n->have_last = 1;
	n->last_ns = now_ns;
	/* without NVML's samples: a reading at an irregular period, not a fixed second */
	int util_due = now_ns >= n->next_util_ns;
	if (util_due) {
		n->rand = n->rand * 1664525u + 1013904223u;
		n->next_util_ns = now_ns + NVML_INTERVAL_NS * 3 / 4 + (n->rand >> 8) % (NVML_INTERVAL_NS / 2);
	}
	for (unsigned d = 0; d < n->ndev; d++) {
		struct nvml_gpu *g = &n->gpu[d];
		struct nvml_util u;
		struct nvml_mem m;
		unsigned v;
		int sampled = util_samples(n, t, d, now_ns);
		if (!g->mig && n->api.util && n->api.util(g->dev, &u) == NVML_SUCCESS) {
			if (!sampled && util_due)
				emit(n, t, d, C_UTIL, now_ns, u.gpu);
			emit(n, t, d, C_MEMUTIL, now_ns, u.memory);
		}
		if (n->api.mem && n->api.mem(g->dev, &m) == NVML_SUCCESS) {
			emit(n, t, d, C_USED, now_ns, (double)m.used);
			emit(n, t, d, C_TOTAL, now_ns, (double)m.total);
		}
		/* power and temperature are the whole GPU's, a MIG instance's included */
		if (n->api.power && n->api.power(g->parent, &v) == NVML_SUCCESS)
			emit(n, t, d, C_POWER, now_ns, v / 1000.0); /* NVML gives mW */
		if (n->api.temp && n->api.temp(g->parent, 0 /* NVML_TEMPERATURE_GPU */, &v) == NVML_SUCCESS)
			emit(n, t, d, C_TEMP, now_ns, v);
		if (n->pid > 0) {
			double pm = proc_mem(n, g->dev);
			if (pm >= 0) {
				emit(n, t, d, C_PROC, now_ns, pm);
			} else if (!n->proc_unknown) {
				n->proc_unknown = 1;
				pt_trace_note(t, "NVML: the profiled process's GPU memory is unknown (NVML "
						 "lists the processes of another pid namespace, or has no "
						 "figure)");
			}
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
	free(n->procs);
	free(n);
}

static const char *nv_last_error(const struct pt_backend *b)
{
	return b->err;
}

static void nv_describe(const struct pt_backend *b, char *buf, size_t len)
{
	const struct nvml_backend *n = (const struct nvml_backend *)b;
	unsigned migs = 0;
	for (unsigned d = 0; d < n->ndev; d++)
		migs += (unsigned)n->gpu[d].mig;
	snprintf(buf, len, "NVML: %u GPU%s%s, every 1 s", n->ndev, n->ndev == 1 ? "" : "s",
		 migs ? " (MIG instances: no utilization)" : "");
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
