/*
 * procstat.c - the /proc sampler: CPU(Process) and CPU(System) utilization
 * as Paddle's profiler defines them, and the process's resident memory,
 * sampled a few times a second into the trace as counter events on a track
 * of their own ("proftop samples" of the session's pid).
 *
 *   CPU(Process) = process CPU time (utime + stime, every thread, every
 *                  core) / elapsed time, in percent; may exceed 100.
 *   CPU(System)  = busy / (busy + idle) over the first line of /proc/stat,
 *                  idle counting idle + iowait.
 *   RSS bytes    = resident pages (/proc/<pid>/statm) x page size.
 *
 * The root ("/proc") is a parameter so tests can feed fake files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proftop/backend.h"
#include "proftop/error.h"
#include "model/util.h"

#define DEFAULT_INTERVAL_NS 250000000ull

struct procstat {
	struct pt_backend b;
	char root[256];
	int32_t pid;
	uint64_t interval_ns;
	uint64_t ticks_per_s, page_bytes;
	int have_prev;
	uint64_t prev_ns;
	uint64_t prev_proc_ticks, prev_busy, prev_total;
	uint32_t track, name_proc, name_sys, name_rss;
	struct pt_trace *t; /* the trace the ids above belong to */
};

static int read_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return 0;
}

/* utime + stime (fields 14, 15) of /proc/<pid>/stat. */
static int proc_ticks(const struct procstat *p, uint64_t *out)
{
	char path[320], buf[1024];
	snprintf(path, sizeof path, "%s/%d/stat", p->root, (int)p->pid);
	if (read_file(path, buf, sizeof buf))
		return -1;
	char *q = strrchr(buf, ')'); /* comm may hold blanks */
	if (!q)
		return -1;
	uint64_t utime = 0, stime = 0;
	q++;
	for (int field = 3; field <= 15; field++) {
		q = strchr(q + 1, ' ');
		if (!q)
			return -1;
		if (field == 13)
			utime = strtoull(q + 1, NULL, 10);
		else if (field == 14)
			stime = strtoull(q + 1, NULL, 10);
	}
	*out = utime + stime;
	return 0;
}

/* busy and busy+idle jiffies from the "cpu " line of /proc/stat. */
static int sys_ticks(const struct procstat *p, uint64_t *busy, uint64_t *total)
{
	char path[320], buf[4096];
	snprintf(path, sizeof path, "%s/stat", p->root);
	if (read_file(path, buf, sizeof buf) || strncmp(buf, "cpu ", 4) != 0)
		return -1;
	uint64_t v[8] = {0};
	char *q = buf + 4, *end;
	int n = 0;
	for (; n < 8; n++) {
		v[n] = strtoull(q, &end, 10);
		if (end == q)
			break;
		q = end;
	}
	if (n < 4)
		return -1;
	/* user nice system idle iowait irq softirq steal; guest is inside user */
	uint64_t idle = v[3] + v[4];
	uint64_t sum = 0;
	for (int i = 0; i < 8; i++)
		sum += v[i];
	*busy = sum - idle;
	*total = sum;
	return 0;
}

static int rss_bytes(const struct procstat *p, uint64_t *out)
{
	char path[320], buf[256];
	snprintf(path, sizeof path, "%s/%d/statm", p->root, (int)p->pid);
	if (read_file(path, buf, sizeof buf))
		return -1;
	unsigned long long size = 0, res = 0;
	if (sscanf(buf, "%llu %llu", &size, &res) != 2)
		return -1;
	*out = res * p->page_bytes;
	return 0;
}

static int ps_probe(char *why, size_t whylen)
{
	if (access("/proc/stat", R_OK) != 0) {
		snprintf(why, whylen, "/proc/stat is not readable: %s", strerror(errno));
		return PT_ENOTAVAIL;
	}
	return 0;
}

static int ps_open(struct pt_backend **out, const struct pt_backend_args *a, char *err,
		   size_t errlen)
{
	*out = NULL;
	if (a->pid <= 0) {
		snprintf(err, errlen, "procstat: no process to sample");
		return PT_EINVAL;
	}
	struct procstat *p = pt_xcalloc(1, sizeof *p);
	p->b.ops = &pt_backend_procstat;
	snprintf(p->root, sizeof p->root, "%s", a->proc_root ? a->proc_root : "/proc");
	p->pid = a->pid;
	p->interval_ns = a->interval_ns ? a->interval_ns : DEFAULT_INTERVAL_NS;
	long hz = sysconf(_SC_CLK_TCK), pg = sysconf(_SC_PAGESIZE);
	p->ticks_per_s = hz > 0 ? (uint64_t)hz : 100;
	p->page_bytes = pg > 0 ? (uint64_t)pg : 4096;
	*out = &p->b;
	return 0;
}

static void emit(struct procstat *p, struct pt_trace *t, uint32_t name, uint64_t now_ns, double v)
{
	struct pt_event ev = {0};
	ev.start_ns = now_ns;
	ev.name_id = name;
	ev.track_id = p->track;
	ev.kind = PT_KIND_COUNTER;
	memcpy(&ev.arg, &v, sizeof ev.arg);
	pt_trace_add(t, &ev);
}

static int ps_poll(struct pt_backend *b, struct pt_trace *t, uint64_t now_ns)
{
	struct procstat *p = (struct procstat *)b;
	if (p->have_prev && now_ns - p->prev_ns < p->interval_ns)
		return 0;
	if (p->t != t) {
		struct pt_track_key key = {p->pid, 0, 0, pt_trace_intern(t, "proftop samples", 15)};
		p->track = pt_trace_track(t, &key);
		p->name_proc = pt_trace_intern(t, "CPU(Process)", 12);
		p->name_sys = pt_trace_intern(t, "CPU(System)", 11);
		p->name_rss = pt_trace_intern(t, "RSS bytes", 9);
		p->t = t;
	}
	uint64_t pt, busy, total, rss;
	if (proc_ticks(p, &pt) != 0) {
		snprintf(b->err, sizeof b->err, "process %d: no longer readable in %.200s",
			 (int)p->pid, p->root);
		return PT_ENOENT;
	}
	int have_sys = sys_ticks(p, &busy, &total) == 0;
	if (p->have_prev && now_ns > p->prev_ns) {
		double elapsed_s = (double)(now_ns - p->prev_ns) / 1e9;
		double cpu_s = (double)(pt >= p->prev_proc_ticks ? pt - p->prev_proc_ticks : 0) /
			       (double)p->ticks_per_s;
		emit(p, t, p->name_proc, now_ns, 100.0 * cpu_s / elapsed_s);
		if (have_sys && total > p->prev_total) {
			uint64_t db = busy >= p->prev_busy ? busy - p->prev_busy : 0;
			emit(p, t, p->name_sys, now_ns,
			     100.0 * (double)db / (double)(total - p->prev_total));
		}
	}
	if (rss_bytes(p, &rss) == 0)
		emit(p, t, p->name_rss, now_ns, (double)rss);
	p->have_prev = 1;
	p->prev_ns = now_ns;
	p->prev_proc_ticks = pt;
	if (have_sys) {
		p->prev_busy = busy;
		p->prev_total = total;
	}
	return 0;
}

static void ps_close(struct pt_backend *b)
{
	free(b);
}

static const char *ps_last_error(const struct pt_backend *b)
{
	return b->err;
}

const struct pt_backend_ops pt_backend_procstat = {
	.name = "procstat",
	.probe = ps_probe,
	.open = ps_open,
	.poll = ps_poll,
	.close = ps_close,
	.last_error = ps_last_error,
};
