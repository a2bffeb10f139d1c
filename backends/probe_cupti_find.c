/*
 * probe_cupti_find.c - finding libcupti and the driver (probe_cupti_find.h),
 * and the report `proftop backends` prints (pt_cupti_report, backend.h).
 * Built into libproftop.so and into proftop alike; nothing here calls
 * CUPTI beyond cuptiGetVersion, and only in the report.
 */
#include "probe_cupti_find.h"

#include <dirent.h>
#include <errno.h>
#include <dlfcn.h>
#include <glob.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proftop/backend.h"

static const char *const g_majors[] = {"13", "12", "11.8"};
#define NMAJORS (sizeof g_majors / sizeof *g_majors)

int pt_cupti_soname_major(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (strncmp(base, "libcupti", 8) != 0)
		return 0;
	const char *so = strstr(base, ".so.");
	return so ? atoi(so + 4) : 0;
}

int pt_cupti_version_supported(uint32_t v)
{
	return v >= 18 && !(v > 1000 && v < 130000);
}

const char *pt_cupti_version_text(uint32_t v, char *buf, size_t len)
{
	/* the table of cupti_version.h: v18 11.8, v19 12.0, v20 12.2 ... v28 12.9 U1 */
	static const char *const old[] = {
	    [13] = "11.0", [14] = "11.1", [15] = "11.2", [16] = "11.5", [17] = "11.6",
	    [18] = "11.8", [19] = "12.0", [20] = "12.2", [21] = "12.3", [22] = "12.4",
	    [23] = "12.5", [24] = "12.6", [25] = "12.7", [26] = "12.8", [27] = "12.9",
	    [28] = "12.9"};
	if (v < sizeof old / sizeof *old && old[v])
		snprintf(buf, len, "%s", old[v]);
	else if (v >= 100000 && v < 1000000) /* from 13.0: xxyyzz */
		snprintf(buf, len, "%u.%u", v / 10000, v / 100 % 100);
	else
		snprintf(buf, len, "API %u", v);
	return buf;
}

/* CUDA major of a CUPTI API version. */
static int cupti_major(uint32_t v)
{
	if (v >= 100000)
		return (int)(v / 10000);
	return v >= 19 ? 12 : v >= 13 ? 11 : 10;
}

int pt_cupti_driver_cuda(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
	if (!h)
		h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return 0;
	int v = 0;
	int (*get)(int *) = (int (*)(int *))dlsym(h, "cuDriverGetVersion");
	if (!get || get(&v) != 0 || v < 0)
		v = 0;
	dlclose(h);
	return v;
}

void pt_cupti_driver_release(char *buf, size_t len)
{
	buf[0] = 0;
	FILE *f = fopen("/proc/driver/nvidia/version", "re");
	if (!f)
		return;
	char line[512];
	if (fgets(line, sizeof line, f)) {
		/* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar ..." */
		const char *p = strstr(line, "Kernel Module");
		if (p) {
			p += 13;
			while (*p == ' ')
				p++;
			size_t n = strcspn(p, " \t\n");
			if (n >= len)
				n = len - 1;
			memcpy(buf, p, n);
			buf[n] = 0;
		}
	}
	fclose(f);
}

int pt_cupti_driver_verdict(uint32_t cupti_version, int driver_cuda, char *why, size_t len)
{
	why[0] = 0;
	if (!driver_cuda)
		return 0;
	char vt[16];
	pt_cupti_version_text(cupti_version, vt, sizeof vt);
	int major = cupti_major(cupti_version);
	int dmaj = driver_cuda / 1000, dmin = driver_cuda % 1000 / 10;
	if (dmaj < major) {
		snprintf(why, len, "CUPTI %s needs a driver for CUDA %d (%s); this one supports %d.%d",
			 vt, major, major >= 13 ? "R580 or newer" : major == 12 ? "R525 or newer" : "R450 or newer",
			 dmaj, dmin);
		return -1;
	}
	int cmin = 0;
	const char *dot = strchr(vt, '.');
	if (dot)
		cmin = atoi(dot + 1);
	if (dmaj == major && dmin < cmin)
		snprintf(why, len, "driver supports CUDA %d.%d, older than CUPTI %s: if tracing fails, "
			 "use a libcupti of %d.%d or older (PROFTOP_CUPTI)", dmaj, dmin, vt, dmaj, dmin);
	return 0;
}

/* ---- candidates ---- */

struct cands {
	struct pt_cupti_cand *v;
	int n, max, driver_major;
	char seen[PT_CUPTI_MAX_CANDS][PATH_MAX];
};

static int add(struct cands *c, const char *path, const char *where, int must_exist)
{
	if (c->n >= c->max || c->n >= PT_CUPTI_MAX_CANDS)
		return 0;
	int major = pt_cupti_soname_major(path);
	if (c->driver_major && major > c->driver_major)
		return 0; /* the driver cannot run it */
	char real[PATH_MAX];
	if (strchr(path, '/')) {
		if (must_exist && access(path, R_OK) != 0)
			return 0;
		if (!realpath(path, real))
			snprintf(real, sizeof real, "%s", path);
	} else {
		snprintf(real, sizeof real, "%s", path);
	}
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->seen[i], real))
			return 0;
	snprintf(c->seen[c->n], sizeof c->seen[0], "%s", real);
	struct pt_cupti_cand *o = &c->v[c->n++];
	snprintf(o->path, sizeof o->path, "%s", path);
	o->where = where;
	o->loaded = 0;
	return 1;
}

/* dir/libcupti.so.<major> for each major, newest first, then any other libcupti*.so* there. */
static void add_dir(struct cands *c, const char *dir, const char *where)
{
	char p[1100];
	for (size_t i = 0; i < NMAJORS; i++) {
		snprintf(p, sizeof p, "%s/libcupti.so.%s", dir, g_majors[i]);
		add(c, p, where, 1);
	}
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "libcupti", 8) && strstr(e->d_name, ".so") &&
		    strncmp(e->d_name, "libcupti_static", 15) != 0) {
			snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
			add(c, p, where, 1);
		}
	closedir(d);
}

struct loaded {
	char cupti[1024], torch_dir[1024], cudart_dir[1024];
};

static void dir_of(char *out, size_t len, const char *path, const char *slash)
{
	snprintf(out, len, "%.*s", (int)(slash - path), path);
}

static int scan_loaded(struct dl_phdr_info *info, size_t size, void *p)
{
	(void)size;
	struct loaded *l = p;
	const char *name = info->dlpi_name;
	const char *slash = name ? strrchr(name, '/') : NULL;
	if (!slash)
		return 0;
	const char *base = slash + 1;
	if (!l->cupti[0] && !strncmp(base, "libcupti", 8) && strstr(base, ".so") &&
	    strncmp(base, "libcupti_static", 15) != 0)
		snprintf(l->cupti, sizeof l->cupti, "%s", name);
	else if (!l->torch_dir[0] && (!strncmp(base, "libtorch_cuda.so", 16) ||
				      !strncmp(base, "libkineto.so", 12)))
		dir_of(l->torch_dir, sizeof l->torch_dir, name, slash);
	else if (!l->cudart_dir[0] && !strncmp(base, "libcudart.so", 12))
		dir_of(l->cudart_dir, sizeof l->cudart_dir, name, slash);
	return 0;
}

int pt_cupti_candidates(struct pt_cupti_cand *out, int max, int driver_cuda)
{
	struct cands *c = calloc(1, sizeof *c);
	if (!c)
		return 0;
	c->v = out;
	c->max = max;
	c->driver_major = driver_cuda / 1000;
	const char *env = getenv("PROFTOP_CUPTI");
	if (env && *env) {
		c->driver_major = 0; /* the user's choice is tried as given */
		add(c, env, "PROFTOP_CUPTI", 0);
		goto out;
	}
	struct loaded l;
	memset(&l, 0, sizeof l);
	dl_iterate_phdr(scan_loaded, &l);
	if (l.cupti[0]) {
		/* one CUPTI per process: the job's own, whatever the driver says */
		c->driver_major = 0;
		if (add(c, l.cupti, "already loaded by the job", 0))
			out[c->n - 1].loaded = 1;
		goto out;
	}
	char d[1200];
	if (l.torch_dir[0]) {
		add_dir(c, l.torch_dir, "next to torch");
		snprintf(d, sizeof d, "%s/../../nvidia/cuda_cupti/lib", l.torch_dir);
		add_dir(c, d, "the nvidia-cuda-cupti wheel");
		snprintf(d, sizeof d, "%s/../../nvidia/cu13/lib", l.torch_dir);
		add_dir(c, d, "the nvidia CUDA 13 wheel");
	}
	if (l.cudart_dir[0]) {
		add_dir(c, l.cudart_dir, "next to libcudart");
		snprintf(d, sizeof d, "%s/../../cuda_cupti/lib", l.cudart_dir);
		add_dir(c, d, "the nvidia-cuda-cupti wheel");
		snprintf(d, sizeof d, "%s/../extras/CUPTI/lib64", l.cudart_dir);
		add_dir(c, d, "the toolkit of libcudart");
	}
	/* the Python environment in use ($VIRTUAL_ENV, $CONDA_PREFIX): the CUDA
	 * wheels `pip install torch` brings (nvidia/cu13/lib,
	 * nvidia/cuda_cupti/lib), for a job that has not loaded torch yet and
	 * for `proftop backends` */
	static const char *const envs[2] = {"VIRTUAL_ENV", "CONDA_PREFIX"};
	for (size_t i = 0; i < 2; i++) {
		const char *e = getenv(envs[i]);
		glob_t g;
		if (!e || !*e)
			continue;
		snprintf(d, sizeof d, "%s/lib/python3*/site-packages/nvidia/*/lib", e);
		if (glob(d, GLOB_ONLYDIR, NULL, &g) != 0)
			continue;
		for (size_t j = 0; j < g.gl_pathc; j++)
			add_dir(c, g.gl_pathv[j], i == 0 ? "the CUDA wheels of $VIRTUAL_ENV"
							 : "the CUDA wheels of $CONDA_PREFIX");
		globfree(&g);
	}
	/* the loader path, newest first, then each toolkit folder */
	for (size_t i = 0; i < NMAJORS; i++) {
		char n[32];
		snprintf(n, sizeof n, "libcupti.so.%s", g_majors[i]);
		add(c, n, "the loader path", 0);
	}
	const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
	static const char *const subs[] = {"extras/CUPTI/lib64", "lib64", "lib",
					   "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"};
	for (size_t i = 0; i < 3; i++) {
		if (!homes[i] || !*homes[i])
			continue;
		for (size_t j = 0; j < sizeof subs / sizeof *subs; j++) {
			snprintf(d, sizeof d, "%s/%s", homes[i], subs[j]);
			add_dir(c, d, i == 0 ? "$CUDA_HOME" : i == 1 ? "$CUDA_PATH" : "/usr/local/cuda");
		}
	}
	add(c, "libcupti.so", "the loader path", 0);
out:;
	int n = c->n;
	free(c);
	return n;
}

/* ---- the report of `proftop backends` ---- */

/* cuptiGetVersion in a child process: some CUPTI releases crash in it when
 * no driver is there (13.2 recurses until its stack is gone), and `proftop
 * backends` must still answer. 0 with *api set (0 when it failed), the
 * signal that ended the child, or -1 when it did not answer in 10 s. */
static int version_in_child(int (*get)(uint32_t *), uint32_t *api)
{
	*api = 0;
	int fd[2];
	if (pipe(fd) != 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		close(fd[0]);
		uint32_t v = 0;
		if (get(&v) != 0)
			v = 0;
		ssize_t w = write(fd[1], &v, sizeof v);
		_exit(w == (ssize_t)sizeof v ? 0 : 1);
	}
	close(fd[1]);
	struct pollfd p = {fd[0], POLLIN, 0};
	uint32_t v = 0;
	int got = poll(&p, 1, 10000) == 1 && read(fd[0], &v, sizeof v) == (ssize_t)sizeof v;
	close(fd[0]);
	if (!got)
		kill(pid, SIGKILL);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (got) {
		*api = v;
		return 0;
	}
	return WIFSIGNALED(st) ? WTERMSIG(st) : -1;
}

void pt_cupti_report(struct pt_cupti_report *r)
{
	memset(r, 0, sizeof *r);
	r->driver_cuda = pt_cupti_driver_cuda();
	pt_cupti_driver_release(r->driver_release, sizeof r->driver_release);
	struct pt_cupti_cand *cand = calloc(PT_CUPTI_MAX_CANDS, sizeof *cand);
	if (!cand)
		return;
	/* every library, also those the driver cannot run: they are listed with the reason */
	int n = pt_cupti_candidates(cand, PT_CUPTI_MAX_CANDS, 0);
	const char *env = getenv("PROFTOP_CUPTI");
	for (int i = 0; i < n && r->nlibs < PT_CUPTI_REPORT_LIBS; i++) {
		void *h = dlopen(cand[i].path, RTLD_LAZY | RTLD_LOCAL);
		if (!h && !(env && *env))
			continue; /* a name the loader does not know */
		struct pt_cupti_report_lib *l = &r->libs[r->nlibs++];
		snprintf(l->path, sizeof l->path, "%.*s", (int)sizeof l->path - 1, cand[i].path);
		l->where = cand[i].where;
		if (!h) {
			snprintf(l->why, sizeof l->why, "does not load: %s", dlerror());
			continue;
		}
		struct link_map *lm = NULL;
		if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0])
			snprintf(l->path, sizeof l->path, "%s", lm->l_name);
		/* the same file under two names (a toolkit's lib64 link) is listed once */
		char real[PATH_MAX];
		int dup = 0;
		if (realpath(l->path, real))
			for (int j = 0; j < r->nlibs - 1 && !dup; j++) {
				char other[PATH_MAX];
				dup = realpath(r->libs[j].path, other) && !strcmp(real, other);
			}
		if (dup) {
			dlclose(h);
			memset(l, 0, sizeof *l);
			r->nlibs--;
			continue;
		}
		int (*get)(uint32_t *) = (int (*)(uint32_t *))dlsym(h, "cuptiGetVersion");
		int sig = 0;
		if (get && (sig = version_in_child(get, &l->api)) != 0) {
			snprintf(l->why, sizeof l->why,
				 sig > 0 ? "cuptiGetVersion crashed (signal %d) on this machine"
					 : "cuptiGetVersion did not answer",
				 sig);
		} else if (!get) {
			snprintf(l->why, sizeof l->why, "not a CUPTI library (no cuptiGetVersion)");
		} else if (!l->api) {
			snprintf(l->why, sizeof l->why, "cuptiGetVersion failed");
		} else {
			char vt[16];
			pt_cupti_version_text(l->api, vt, sizeof vt);
			memcpy(l->version, vt, sizeof vt);
			if (!pt_cupti_version_supported(l->api))
				snprintf(l->why, sizeof l->why, "CUPTI %s: proftop reads CUPTI 11.8 and newer",
					 vt);
			else if (pt_cupti_driver_verdict(l->api, r->driver_cuda, l->why, sizeof l->why) == 0)
				l->usable = 1;
		}
		dlclose(h);
	}
	free(cand);
	for (int i = 0; i < r->nlibs; i++)
		if (r->libs[i].usable) {
			r->libs[i].chosen = 1;
			r->usable = 1;
			break;
		}
	char drv[96];
	if (r->driver_cuda)
		snprintf(drv, sizeof drv, "driver %s%s(CUDA %d.%d)", r->driver_release,
			 r->driver_release[0] ? " " : "", r->driver_cuda / 1000,
			 r->driver_cuda % 1000 / 10);
	else
		snprintf(drv, sizeof drv, "no NVIDIA driver (libcuda.so.1 does not load)");
	const struct pt_cupti_report_lib *ch = NULL;
	for (int i = 0; i < r->nlibs; i++)
		if (r->libs[i].chosen)
			ch = &r->libs[i];
	if (!r->nlibs)
		snprintf(r->summary, sizeof r->summary,
			 "no libcupti found (set PROFTOP_CUPTI=/path/to/libcupti.so); %s", drv);
	else if (!r->driver_cuda)
		snprintf(r->summary, sizeof r->summary, "%s", drv);
	else if (!ch)
		snprintf(r->summary, sizeof r->summary, "%s runs none of the libcupti found", drv);
	else {
		char path[160];
		snprintf(path, sizeof path, "%.150s", ch->path);
		snprintf(r->summary, sizeof r->summary, "CUPTI %s (%s), %s", ch->version, path, drv);
	}
}
