/*
 * chrome.h - Chrome Trace Event Format: the file source and the exporter.
 *
 * The reader streams a trace into a pt_trace: {"traceEvents":[...]} objects
 * and bare arrays (closing "]" optional), plain or gzip-compressed, from
 * proftop, PyTorch (legacy autograd profiler and Kineto), Paddle, MindSpore
 * and msprof. Memory follows the events kept, not the size of the text.
 *
 * Errors: a file-level problem (missing, unreadable, not JSON, truncated)
 * returns a negative PT_E* code and writes one line "FILE: byte N: what" to
 * err. Bad events inside a good file are skipped and counted in
 * trace->warnings.
 *
 * The exporter writes the store as a Chrome trace (X events, M metadata,
 * flows from launch to device activity, µs timestamps with ns fractions)
 * to a temporary file, fsyncs it and renames it into place. The trace's
 * process table (pt_trace_set_proc) goes into otherData "ranks" and reads
 * back into the table; ranked processes get process_sort_index = rank.
 */
#ifndef PROFTOP_CHROME_H
#define PROFTOP_CHROME_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/agg.h"
#include "proftop/trace.h"

struct pt_read_opts {
	int threads; /* parser threads; 0 = one per online CPU (at most 4) */
	/* A file another process writes (a trace folder's, a job's capture):
	 * only a regular file is read (a FIFO or device is refused, never
	 * waited on), and only the bytes it had when opened, so a writer that
	 * never stops cannot keep the reader. job_file adds: not through a
	 * symlink, and owned by this user. */
	int regular_only;
	int job_file;
	/* When set and non-zero, reading stops at the next read of the file
	 * (PT_EIO, "reading was cancelled"): a screen that quits while a big
	 * file is read on a thread need not wait for its end. */
	const volatile int *cancel;
};

int pt_chrome_read(struct pt_trace *t, const char *path, const struct pt_read_opts *o, char *err,
		   size_t errlen);
/* Same, from memory (already decompressed or gzip; name is used in errors). */
int pt_chrome_read_mem(struct pt_trace *t, const void *buf, size_t len, const char *name,
		       const struct pt_read_opts *o, char *err, size_t errlen);

struct pt_export_opts {
	int force;                       /* overwrite an existing file */
	const struct pt_summary *summary;/* optional: embedded as "proftop" metadata */
	uint64_t t0_ns, t1_ns;           /* window on event start; t1_ns 0 = no limit */
	int64_t only_pid;                /* one process's tracks only, as its rank's file
	                                    (distributedInfo gives its rank); 0 = every one */
	const char *other_json;          /* optional: more otherData members, raw JSON text
	                                    ("\"k\":v,..."; proftop merge's clock offsets) */
};

int pt_chrome_export(struct pt_trace *t, const char *path, const struct pt_export_opts *o,
		     char *err, size_t errlen);

#endif
