/*
 * session.h - proftop's side of the live-session transport (shm.h): finds
 * the sessions of this user, attaches to one, drains its rings into a trace
 * (trace.h), tells when its owner has exited, and removes stale segments.
 *
 * Every byte of a segment is untrusted (another process writes it): a
 * header of the wrong magic, ABI or size is refused with a one-line reason;
 * records with impossible indices, unknown kinds or bad string offsets are
 * skipped and counted, never followed. pt_session_from_mem() takes any
 * (base, size) pair so the validation can be fed arbitrary bytes.
 *
 * Threading: a struct pt_session is used by one thread. The producer runs
 * concurrently in another process; the protocol is shm.h's.
 */
#ifndef PROFTOP_SESSION_H
#define PROFTOP_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/shm.h"
#include "proftop/trace.h"

struct pt_session;

/* Counters of what the reader skipped (beyond the producer's own drops). */
struct pt_session_stats {
	uint64_t events;        /* event records added to the trace */
	uint64_t bad_records;   /* unknown kinds, EXT with nothing before it */
	uint64_t bad_strings;   /* name offsets/lengths out of range, missing NUL */
	uint64_t bad_rings;     /* head/tail out of range (clamped) */
	uint64_t torn;          /* copied records overwritten while copying */
	uint64_t source_dropped;/* producer drops (rings + no ring + no string) */
	uint64_t overwritten;   /* overwritten by the producer while no reader was attached */
	uint64_t missed;        /* freed while this reader was stalled, read by others */
};

/*
 * Opens and validates the segment at path: O_NOFOLLOW, a regular file of
 * ours with mode 0600 (no group/world bits), header magic/ABI/sizes
 * consistent with the file size. Maps it read-write (the reader writes
 * tails, ring states, its heartbeat and pid). PT_EPERM / PT_EFORMAT /
 * PT_ETRUNC / PT_ENOENT / PT_EIO with one line in err.
 */
int pt_session_open(const char *path, struct pt_session **out, char *err, size_t errlen);
/*
 * The same over memory the caller owns (base must stay valid and
 * writable, 8-byte aligned, size bytes); nothing is unmapped on close.
 */
int pt_session_from_mem(void *base, size_t size, struct pt_session **out, char *err,
			size_t errlen);
void pt_session_close(struct pt_session *s);

/*
 * Drains every claimed ring into t with this reader's own cursors (a reader
 * slot is claimed at the first drain), updates the heartbeat, frees rings of
 * exited threads once every attached reader has drained them, and adds what
 * was lost to the trace by cause: PT_WARN_SOURCE_DROPPED (rings full while
 * attached; no ring; no room for a name), PT_WARN_SOURCE_OVERWRITTEN (the
 * flight recorder, with no reader attached), PT_WARN_READER_MISSED (this
 * reader was stalled while others read on).
 * now_ns: CLOCK_MONOTONIC. Returns the number of events added.
 */
uint64_t pt_session_drain(struct pt_session *s, struct pt_trace *t, uint64_t now_ns);

/*
 * A copier: a thread that copies the rings' new records out of the
 * segment between drains (backends/session_copy.c), so a reader that is
 * late to drain (a screen to draw, a busy machine) does not let them
 * overflow; the next drain puts them into the trace. busy_ns: its shortest
 * regular gap (an eighth of it while the rings keep filling), idle_ns: its
 * longest. Stopped by pt_session_close, or by a drain once the owner has
 * exited (that drain reads the rest itself). 0, or PT_EIO when no thread
 * could be made (drains still copy, as without one).
 */
int pt_session_copier_start(struct pt_session *s, uint64_t busy_ns, uint64_t idle_ns);
int pt_session_copier_running(const struct pt_session *s);
/*
 * Tags the correlation ids of the events drained from now on, so that the
 * sessions of several processes in one trace keep them apart (CUPTI's ids
 * are unique only within a process): tag 1..15 takes bits 27..30 of each
 * nonzero id (within a session, ids then repeat only every 2^27 launches);
 * 0, the default, leaves them as recorded.
 */
#define PT_SESSION_CORR_TAGS 15u
void pt_session_set_corr_tag(struct pt_session *s, uint32_t tag);
/* Stops heartbeating (clears reader_pid if it is ours) without unmapping. */
void pt_session_detach(struct pt_session *s);

/* 1 when the owner has exited (state EXITED, pid gone, or pid reused). */
int pt_session_owner_exited(struct pt_session *s);
/* Same test from header fields; proc_root is "/proc" unless testing. */
int pt_session_pid_gone(const char *proc_root, int32_t pid, uint64_t start_ticks);
/* /proc/<pid>/stat field 22 (start time in clock ticks); 0 when unreadable. */
uint64_t pt_proc_start_ticks(const char *proc_root, int32_t pid);

const struct pt_shm_header *pt_session_header(const struct pt_session *s);
const struct pt_session_stats *pt_session_stats(const struct pt_session *s);
/* "PID (cmdline)" into buf, escaped for a terminal. */
void pt_session_describe(const struct pt_session *s, char *buf, size_t len);

/*
 * Deep captures (shm.h's control word; backends/session_capture.c). A
 * reader that polls the session through the "session" backend follows
 * every capture asked for after it attached, in t's capture list
 * (capture.h), and merges each finished one into t.
 * pt_session_capture_request asks the job's Python helper for a capture of
 * the next `steps` steps (at_step > 0: of the steps from the job's step
 * number at_step on, for the same steps on every rank), as this process: 0
 * with *seq, or PT_E* with one line in why (no helper, one already running,
 * the job exiting).
 * pt_session_capture_cancel withdraws it (PT_ENOENT when it is over).
 * pt_session_capture_file: where the job writes capture seq's trace.
 */
int pt_session_capture_request(struct pt_session *s, uint32_t steps, uint32_t flags,
			       uint64_t at_step, uint32_t *seq, char *why, size_t whylen);
int pt_session_capture_cancel(struct pt_session *s, uint32_t seq);
int pt_session_capture_file(const struct pt_session *s, uint32_t seq, char *buf, size_t len);

struct pt_backend;
/* The session behind an instance of the "session" backend, else NULL. */
struct pt_session *pt_backend_session_of(struct pt_backend *b);

/* ---- discovery (session_scan.c) ---- */

struct pt_session_info {
	char path[512];
	int32_t pid;
	int exited;          /* owner gone */
	int valid;           /* header readable; else why holds the refusal */
	int64_t rank;        /* RANK, else LOCAL_RANK of its environment; -1 */
	uint64_t age_ns;     /* since the probe started (realtime clock) */
	uint64_t dropped;    /* producer drops so far */
	int reader_live;     /* another reader's heartbeat is fresh */
	char cmdline[PT_SHM_CMDLINE_BYTES];
	char why[256];
};

/*
 * Lists "<pid>.session" files in pt_shm_dir(), sorted by pid. *out is
 * malloc'd (free it). With clean set, removes segments whose owner is gone,
 * older than PT_SESSION_STALE_NS and held by no live reader, and unfinished
 * ones (".<pid>.session.tmp", never listed) whose pid is gone; *cleaned counts
 * them (they are not listed). Returns 0 or PT_E* with err (no directory is
 * 0 with no sessions).
 */
#define PT_SESSION_STALE_NS (600ull * 1000000000ull)
int pt_session_list(struct pt_session_info **out, size_t *n, int clean, size_t *cleaned,
		    char *err, size_t errlen);
/*
 * The same cleaning without a list, quietly (every proftop start does it,
 * so exited sessions never pile up in the session directory); with a
 * launch_id, also that launch's segments as soon as their owner exited and
 * no other reader holds them (its proftop has read them whole). Returns how
 * many were removed.
 */
size_t pt_session_reap(uint64_t launch_id);
/*
 * A look at pid's segment without attaching (no heartbeat, no drain): its
 * launch id (shm.h), whether it has recorded anything (a ring claimed) and
 * whether its owner exited. 0, or PT_E* when there is no valid segment.
 */
struct pt_session_peek {
	uint64_t launch_id;
	int32_t ppid;
	int recorded;
	int exited;
};
int pt_session_peek(int32_t pid, struct pt_session_peek *out);
/* Path of the segment of pid in the session directory. */
int pt_session_path(int32_t pid, char *buf, size_t len, char *err, size_t errlen);

#endif
