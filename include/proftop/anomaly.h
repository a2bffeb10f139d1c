/*
 * anomaly.h - the anomaly recorder: watches the steps of a live session as
 * they complete and, when one is much slower than the recent ones or its
 * data loader stalled, writes a Chrome trace of just that moment (the step
 * and a few around it) into a folder, keeping at most N such files. A user
 * can leave proftop running for a day and come back to the bad moments only.
 *
 * A step is a ProfileStep event on a host track (each track is judged
 * against its own history, so ranks and threads do not mix). Rules:
 *   slow:   dur > factor x median of the track's last `window` steps, and at
 *           least PT_ANOMALY_MIN_EXCESS_NS above that median (no alarms
 *           on microsecond-level jitter);
 *   reader: the step's Dataloader time is over factor x its own rolling
 *           median and more than reader_frac of the median step above it
 *           (the stall cost at least that much), or one Dataloader range
 *           lasts longer than reader_max_ns (when set).
 * Neither rule judges before min_steps steps of history. Anomalies that
 * follow each other on a track (a checkpoint slowing several steps) share
 * one file, named after the worst step.
 *
 * Files: DIR/anomaly-<pid>-step<N>-<ratio>x.json (ratio = step / median,
 * one decimal), the window [start of `before` steps earlier, end of `after`
 * steps later) of every track, written through pt_chrome_export (temporary
 * + rename: all or nothing) with otherData "anomaly" describing the step.
 * A file waits for its `after` steps, at most wait_ns of session time, or
 * pt_anomaly_finish. Only files this recorder wrote are ever deleted.
 *
 * Threading: call from the thread that writes the trace, between writes
 * (the live loop's after_poll). A file's window is copied there (a few
 * steps of events: well under a millisecond for small steps) and written
 * by one writer thread (the export's fsyncs take tens of ms on a busy
 * disk); a second file due while the first is still being written waits
 * for it. Results (pt_anomaly_files) are taken in at the next check,
 * pt_anomaly_flush, pt_anomaly_finish.
 */
#ifndef PROFTOP_ANOMALY_H
#define PROFTOP_ANOMALY_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/trace.h"

#define PT_ANOMALY_DEFAULT_DIR	 "proftop-anomalies"
#define PT_ANOMALY_MIN_EXCESS_NS 1000000ull /* a slow step is >= 1 ms over the median */

struct pt_anomaly_opts {
	const char *dir;	/* folder for the files (created, mode 0700); NULL: detect only */
	double factor;		/* slow: step > factor x median (default 3.0) */
	uint32_t window;	/* steps in the rolling median (default 50, at most 4096) */
	uint32_t min_steps;	/* history needed before judging (default 10) */
	uint32_t keep;		/* files kept, oldest deleted first (default 20; 0: all) */
	uint32_t before, after; /* steps around the anomaly in the file (default 2, 1) */
	double reader_frac;	/* reader rule, fraction of the median step (default 0.5; 0: off) */
	uint64_t reader_max_ns; /* reader rule: one Dataloader range longer than this (0: off) */
	uint64_t wait_ns;	/* write without the after-steps past this (default 10 s) */
};
void pt_anomaly_opts_init(struct pt_anomaly_opts *o);

enum {
	PT_ANOMALY_SLOW = 1,   /* step time rule */
	PT_ANOMALY_READER = 2, /* data loader rule */
};

/* One anomaly, written or not. */
struct pt_anomaly_rec {
	char *path;   /* the file ("" when detect-only or the write failed) */
	int64_t pid;  /* the step's process (track key) */
	int64_t step; /* number in the step's name, else ordinal on its track (from 0) */
	uint64_t start_ns, dur_ns;
	uint64_t median_ns;	/* rolling median before this step */
	uint64_t dataloader_ns; /* the step's Dataloader time */
	double ratio;		/* dur / median */
	int reasons;		/* PT_ANOMALY_* bits */
	uint32_t steps;		/* anomalous steps merged into this file */
};

struct pt_anomaly;
/* o is copied (dir too); the folder is created on the first write. */
struct pt_anomaly *pt_anomaly_new(const struct pt_anomaly_opts *o);
/* Checks the folder before anything runs (NULL: the default): an existing
 * one must be a real folder of ours we can write to; a missing one must be
 * makeable under its nearest existing parent. 0, or PT_E* with err. */
int pt_anomaly_dir_check(const char *dir, char *err, size_t errlen);
void pt_anomaly_free(struct pt_anomaly *d);
/*
 * Looks at the steps completed since the last call and starts writing the
 * files that are due. now_ns: the session clock (CLOCK_MONOTONIC), for
 * wait_ns. Returns the number of files started by this call.
 */
int pt_anomaly_check(struct pt_anomaly *d, struct pt_trace *t, uint64_t now_ns);
/* The session ended: a last check, every pending file written, the writer
 * waited for. Returns the number of files started. */
int pt_anomaly_finish(struct pt_anomaly *d, struct pt_trace *t);
/* Waits for the file being written, if any, and takes in its result. */
void pt_anomaly_flush(struct pt_anomaly *d);

/* Anomalies found so far (files or not), and files written so far. */
uint64_t pt_anomaly_found(const struct pt_anomaly *d);
uint64_t pt_anomaly_written(const struct pt_anomaly *d);
/* The files still kept, oldest first (valid until the next check). */
size_t pt_anomaly_files(const struct pt_anomaly *d, const struct pt_anomaly_rec **v);
/* The last write error ("" when none). */
const char *pt_anomaly_error(const struct pt_anomaly *d);
/* The longest time a check spent copying a window (what the live loop
 * waited), and the longest write on the writer thread. */
void pt_anomaly_cost(const struct pt_anomaly *d, uint64_t *loop_max_ns, uint64_t *write_max_ns);

#endif
