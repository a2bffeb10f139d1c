/*
 * backend.h - what every source of live data (backends/) looks like to the
 * program: a const table of functions (name, probe, open, poll, close,
 * last_error) and an instance handle, plus the explicit list of backends
 * linked into proftop (backends/registry.c; no constructors, so the order is
 * fixed and static builds work).
 *
 * A backend turns what it sees into events through the trace sink
 * (trace.h). It never prints and never exits: a failure is a PT_E* code and
 * a one-line reason in last_error. A backend that cannot work here (no
 * library, no /proc) returns PT_ENOTAVAIL from probe and the program goes on
 * without it.
 *
 * Threading: an instance is used by one thread (the live loop) at a time.
 */
#ifndef PROFTOP_BACKEND_H
#define PROFTOP_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/trace.h"

/* What the program knows when it opens a backend. */
struct pt_backend_args {
	int32_t pid;              /* the profiled process (0: the only live session) */
	const char *session_path; /* session: the segment file (NULL: <dir>/<pid>.session) */
	const char *proc_root;    /* procstat: "/proc" unless a test gives a fake root */
	uint64_t interval_ns;     /* procstat: sampling period (0: default, 250 ms) */
	uint32_t corr_tag;        /* session: pt_session_set_corr_tag's (0: ids as recorded) */
	int copier;               /* session: copy the rings on a thread of its own between
				     polls (pt_session_copier_start; the live loops) */
};

struct pt_backend;

struct pt_backend_ops {
	const char *name; /* "session", "procstat" */
	/* 0 when the backend can run here, else PT_ENOTAVAIL and a reason in why. */
	int (*probe)(char *why, size_t whylen);
	/* Opens an instance for args; on failure *out is NULL and err says why. */
	int (*open)(struct pt_backend **out, const struct pt_backend_args *args, char *err,
		    size_t errlen);
	/*
	 * Moves what arrived since the last call into t (now_ns: CLOCK_MONOTONIC).
	 * Returns 0, PT_ENOENT once the source has ended and everything it had
	 * is in t (an exited session drained, a sampled process gone), or
	 * another PT_E* on failure (see last_error). PT_BACKEND_BUSY (> 0) is
	 * a hint: more is arriving than one poll period can hold, poll again
	 * soon (the session backend, when its rings were filling up).
	 */
	int (*poll)(struct pt_backend *b, struct pt_trace *t, uint64_t now_ns);
	void (*close)(struct pt_backend *b);
	const char *(*last_error)(const struct pt_backend *b);
	/* Optional (may be NULL): one line on what the instance reads, escaped. */
	void (*describe)(const struct pt_backend *b, char *buf, size_t len);
};

/* poll's hint: data is arriving fast, poll again soon (not an error). */
#define PT_BACKEND_BUSY 1

/* Every instance starts with this; backends extend it. */
struct pt_backend {
	const struct pt_backend_ops *ops;
	char err[256];
};

/* The backends linked into this program, in a fixed order; NULL-terminated. */
extern const struct pt_backend_ops *const pt_backends[];
const struct pt_backend_ops *pt_backend_find(const char *name);

extern const struct pt_backend_ops pt_backend_session;
extern const struct pt_backend_ops pt_backend_procstat;
extern const struct pt_backend_ops pt_backend_nvml; /* optional: libnvidia-ml.so.1 */

/*
 * What the probe's CUPTI search finds on this machine, for `proftop
 * backends` (backends/probe_cupti_find.c): the driver, every libcupti found
 * with its version and whether this driver runs it, and the one a job that
 * has not loaded a libcupti of its own would use. A job that has (PyTorch
 * links one) uses that one. Loads each library to ask its version.
 */
#define PT_CUPTI_REPORT_LIBS 8
struct pt_cupti_report {
	int usable;              /* some libcupti found here runs on this driver */
	int driver_cuda;         /* CUDA version the driver supports (12040), 0 = no driver */
	char driver_release[32]; /* "550.54.15", "" when unknown */
	int nlibs;
	struct pt_cupti_report_lib {
		char path[512];
		char version[16];    /* "12.4"; "" when the file does not load */
		uint32_t api;        /* cuptiGetVersion */
		const char *where;   /* how the search found it */
		int usable;          /* loads, supported, and the driver runs it */
		int chosen;          /* the one the probe would open */
		char why[200];       /* why not usable, or a warning */
	} libs[PT_CUPTI_REPORT_LIBS];
	char summary[300];
};
void pt_cupti_report(struct pt_cupti_report *r);

#endif
