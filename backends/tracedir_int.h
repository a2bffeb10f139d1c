/*
 * tracedir_int.h - what the trace-folder backend's files share: the state of
 * one file in the folder and the pure rules that decide when it is complete
 * (tracedir_state.c, unit-tested without a folder), and copying one file's
 * trace into the live trace (tracedir_copy.c). tracedir.c owns inotify, the
 * worker thread and the ops.
 */
#ifndef PT_TRACEDIR_INT_H
#define PT_TRACEDIR_INT_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/trace.h"

/* What identifies one version of a file's content. */
struct td_ident {
	uint64_t dev, ino;
	int64_t size_bytes;
	int64_t mtime_ns; /* CLOCK_REALTIME, as stat gives it */
};

enum td_state {
	TD_PENDING = 0, /* seen; waiting until complete, or to retry a failed parse */
	TD_READING,	/* being read */
	TD_TAKEN,	/* read into the trace */
	TD_BROKEN,	/* failed to parse and stopped changing: reported */
};

struct td_file {
	char *name;
	struct td_ident id;
	int has_id;
	enum td_state state;
	int closed;	     /* the writer closed it (or it was renamed in) since the last change */
	uint64_t changed_ns; /* CLOCK_MONOTONIC of the last change of id */
	uint64_t retry_ns;   /* after a failed parse: not before this */
	uint32_t fails;	     /* failed parses of this version */
	int changed_after;   /* rewritten in place after it was taken (counted once) */
	char err[320];	     /* the last parse error (escaped) */
};

struct td_rules {
	uint64_t settle_ns;
	uint64_t broken_after_ns;
};

/*
 * A stat of f (or an inotify close/rename, closed = 1). A new identity
 * restarts the wait; closed marks the version complete. A taken file whose
 * identity changed: 1 when it was replaced (another inode: read it again as
 * a new file; f is pending again), 0 otherwise (f->changed_after set when
 * rewritten in place).
 */
int td_observe(struct td_file *f, const struct td_ident *id, int closed, uint64_t now_ns);
/*
 * A file found when the watch starts (or after a lost-event rescan): its
 * mtime (age_ns before now) counts as its last change, so a file finished
 * long ago is complete at once.
 */
void td_observe_old(struct td_file *f, const struct td_ident *id, uint64_t age_ns, uint64_t now_ns);
/* 1 when f should be read now. */
int td_ready(const struct td_file *f, uint64_t now_ns, const struct td_rules *r);

enum td_outcome {
	TD_OUT_TAKEN = 0, /* parsed whole and unchanged: copy it in */
	TD_OUT_CHANGED,	  /* changed while being read: wait again */
	TD_OUT_RETRY,	  /* failed; may still be being written: retry later, quietly */
	TD_OUT_BROKEN,	  /* failed and unchanged for broken_after_ns: report it */
};
/*
 * After a read that started on version `before` and found `after` once it
 * ended (has_after 0: the file is gone). rc is the reader's result.
 */
enum td_outcome td_after_read(struct td_file *f, int rc, const struct td_ident *before,
			      const struct td_ident *after, int has_after, uint64_t now_ns,
			      const struct td_rules *r);
int td_ident_eq(const struct td_ident *a, const struct td_ident *b);

/* ---- copying a file's trace in (tracedir_copy.c) ---- */

struct td_copy {
	uint32_t next_corr; /* correlation ids are re-keyed: files reuse them */
	int64_t rank_seen;  /* the rank files gave so far (-1 none, -2 several) */
};
void td_copy_init(struct td_copy *c);
/*
 * Appends in's tracks, labels, events, warnings and ranks to out. in is
 * only read. Returns the number of events copied.
 */
uint64_t td_copy_trace(struct td_copy *c, struct pt_trace *out, struct pt_trace *in);

#endif
