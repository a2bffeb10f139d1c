/*
 * tracedir.h - the trace-folder source (`proftop view DIR`): a backend that
 * watches a folder into which a framework's own profiler writes a trace
 * every N steps (PyTorch's tensorboard_trace_handler:
 * <worker>.<pid>.<ts>.pt.trace.json[.gz]; Paddle's export_chrome_tracing:
 * <worker>.<ts>.paddle_trace.json) and feeds each new complete file into the
 * live trace, once.
 *
 * Which files: names ending in .json or .json.gz, not hidden (.name), not
 * proftop's own snapshots (proftop-*.json, which `e` may write into the
 * folder). Subfolders are not watched.
 *
 * When a file is complete: at once after the writer closed it or renamed it
 * into the folder (inotify IN_CLOSE_WRITE / IN_MOVED_TO); otherwise (files
 * there at start, writers that keep the file open) once its size and mtime
 * have not changed for settle_ns. Even then a file is only taken when it
 * parses completely: a failed parse is retried (with a growing pause) while
 * the file may still be written, and reported as broken only once it has
 * not changed for broken_after_ns. A file is read into a trace of its own
 * (on a worker thread unless sync is set) and copied into the live trace in
 * one piece, so a half-written file never leaves half its events behind.
 *
 * Every track of a one-process file goes into that process's lane (GPU rows,
 * named by device index in Kineto files, and string-pid rows such as
 * "Spans"), so the files of several ranks stay apart; the file's
 * distributedInfo.rank becomes the process's rank (pt_trace_set_proc).
 *
 * Threading: the backend's functions run on the live loop's thread; the
 * worker only touches its own trace.
 */
#ifndef PROFTOP_TRACEDIR_H
#define PROFTOP_TRACEDIR_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/backend.h"

struct pt_tracedir_opts {
	size_t max_mem_bytes;	  /* cap of each file's own trace (0: the store default) */
	uint64_t settle_ns;	  /* unchanged this long = complete (0: 1 s) */
	uint64_t broken_after_ns; /* failing and unchanged this long = broken (0: 10 s) */
	int threads;		  /* parser threads per file (0: automatic) */
	int sync;		  /* 1: read in poll itself (tests), 0: on a worker thread */
};

/* What the folder holds, for the screen's session line. */
struct pt_tracedir_status {
	uint32_t files;	  /* files read into the trace */
	uint32_t waiting; /* files seen but not complete yet (or failing, not yet broken) */
	uint32_t broken;  /* files that failed to parse and stopped changing */
	uint32_t changed; /* files rewritten in place after they were read (not re-read) */
	int reading;	  /* a file is being read now */
	uint64_t reading_bytes;
	char reading_name[128]; /* escaped */
	int gone;		/* the folder was removed or moved away (what was read stays) */
	char dir[256];		/* the folder, escaped */
	char broken_name[128];	/* the latest broken file's name, escaped */
};

/* Opens the watch on dir (which must be a folder) and queues the files already there. */
int pt_tracedir_open(struct pt_backend **out, const char *dir, const struct pt_tracedir_opts *o,
		     char *err, size_t errlen);
/* b must come from pt_tracedir_open (or pt_backend_tracedir.open). */
void pt_tracedir_status(const struct pt_backend *b, struct pt_tracedir_status *st);

/* The i-th broken file's error ("NAME: byte N: what", escaped), NULL past the last. */
const char *pt_tracedir_broken(const struct pt_backend *b, size_t i);

/* 1 when a file of this name is a trace to take (see above). */
int pt_tracedir_wanted(const char *name);

/* The ops; open reads the folder from args->session_path. Not in pt_backends[]:
 * it runs only when a folder is named. */
extern const struct pt_backend_ops pt_backend_tracedir;

#endif
