/*
 * testutil.h - shared helpers for the cmocka unit tests: where fixtures and
 * the shared real traces live, and a terse way to build small traces whose
 * answers are computed by hand.
 */
#ifndef PT_TESTUTIL_H
#define PT_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proftop/chrome.h"
#include "proftop/trace.h"

/* Directory of the project's fixtures (PT_FIXTURES, else "fixtures"). */
static inline const char *tu_fixtures(void)
{
	const char *d = getenv("PT_FIXTURES");
	return d && *d ? d : "fixtures";
}

/* Directory of the shared real traces (PT_TRACES, else "../shared/traces"). */
static inline const char *tu_traces(void)
{
	/* Under valgrind (50x slower) the shared real traces are left to the
	 * plain and ASan passes; the synthetic tests and fixtures still run. */
	if (getenv("PT_UNDER_VALGRIND"))
		return "/nonexistent/shared-traces-skipped-under-valgrind";
	const char *d = getenv("PT_TRACES");
	return d && *d ? d : "../shared/traces";
}

static inline char *tu_path(const char *dir, const char *name)
{
	static char buf[4][1024];
	static int k;
	char *b = buf[k++ & 3];
	snprintf(b, sizeof buf[0], "%s/%s", dir, name);
	return b;
}

/* A host thread (pid, tid) or, with device >= 0, a device stream. */
static inline uint32_t tu_track(struct pt_trace *t, int64_t pid, int64_t tid, int device)
{
	struct pt_track_key k = {pid, tid, 0, 0};
	uint32_t id = pt_trace_track(t, &k);
	if (device >= 0)
		pt_trace_track_device(t, id, device, tid);
	return id;
}

/* Adds an event; times in microseconds for readability. */
static inline void tu_ev(struct pt_trace *t, uint32_t track, enum pt_kind kind, const char *name,
			 double start_us, double dur_us, uint32_t corr)
{
	struct pt_event ev = {0};
	ev.start_ns = (uint64_t)(start_us * 1000.0 + 0.5);
	ev.dur_ns = (uint64_t)(dur_us * 1000.0 + 0.5);
	ev.name_id = pt_trace_intern(t, name, strlen(name));
	ev.track_id = track;
	ev.corr = corr;
	ev.kind = (uint8_t)kind;
	pt_trace_add(t, &ev);
}

#define US(x) ((uint64_t)((x)*1000.0 + 0.5))

/* The trace file dir/rel read whole, or NULL when it is absent or the
 * reader refuses it (said as a test message): tests then skip. */
static inline struct pt_trace *tu_load_trace(const char *dir, const char *rel)
{
	const char *path = tu_path(dir, rel);
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fclose(f);
	struct pt_trace *t = pt_trace_new(0);
	struct pt_read_opts ro = {0};
	char err[512] = "";
	if (pt_chrome_read(t, path, &ro, err, sizeof err) < 0) {
		print_message("# reader refused %s: %s\n", path, err);
		pt_trace_free(t);
		return NULL;
	}
	return t;
}

/* An empty trace with src's names (same ids), tracks and processes, to
 * replay src's events into (as a live session receives them). */
static inline struct pt_trace *tu_shell_of(const struct pt_trace *src, size_t max_mem)
{
	struct pt_trace *t = pt_trace_new(max_mem);
	uint32_t n = pt_strtab_count(src->strings);
	for (uint32_t id = 1; id < n; id++) {
		uint32_t got =
		    pt_trace_intern(t, pt_trace_str(src, id), pt_strtab_len(src->strings, id));
		assert_int_equal(got, id);
	}
	for (uint32_t i = 0; i < src->ntracks; i++) {
		const struct pt_track *tr = &src->tracks[i];
		assert_int_equal(pt_trace_track(t, &tr->key), i);
		if (tr->device >= 0)
			pt_trace_track_device(t, i, tr->device, tr->stream);
		if (tr->label)
			pt_trace_set_thread_label(t, &tr->key, tr->label);
		if (tr->process_label)
			pt_trace_set_process_label(t, &tr->key, tr->process_label);
	}
	for (size_t i = 0; i < src->nprocs; i++) {
		const struct pt_proc *p = &src->procs[i];
		pt_trace_set_proc(t, p->pid, p->rank, p->host ? pt_trace_str(src, p->host) : NULL);
	}
	return t;
}

#endif
