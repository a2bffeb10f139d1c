/*
 * session_int.h - what the session reader's two files share beyond
 * session.h: the producers' drop total read through the validated layout,
 * the reader's "stopped" state, and the guard (session_scan.c) that keeps a
 * segment truncated by another process from killing proftop with SIGBUS.
 *
 * Threading: the guard's registry and handler are process-wide and safe
 * from any thread; a struct pt_session is still used by one thread.
 */
#ifndef PROFTOP_SESSION_INT_H
#define PROFTOP_SESSION_INT_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/session.h"

/* Producer drops (rings, no ring, no string) so far, over the layout that
 * was validated at open (the header's own fields may have changed since). */
uint64_t pt_session_producer_drops(const struct pt_session *s);
/* This reader's slot in the header (shm.h), -1 while it holds none. */
int pt_session_reader_slot(const struct pt_session *s);
/* Why the reader stopped reading the segment (it shrank), else NULL. */
const char *pt_session_failed(const struct pt_session *s);

/* The mapped header (read-write: readers write the control word's request),
 * the validated pid and the segment's path. */
struct pt_shm_header *pt_session_hdr(struct pt_session *s);
int32_t pt_session_pid(const struct pt_session *s);
const char *pt_session_file(const struct pt_session *s);

/*
 * Following the session's deep captures (session_capture.c): what one
 * reader knows of them. base: captures up to this seq were over when the
 * reader attached and are not followed (their steps may be older than
 * what it has); one in progress then is followed.
 */
struct pt_capture_follow {
	int init;
	uint32_t base;
	uint64_t next_after_ns; /* when to look at the steps after the last merged one */
	uint32_t after_seq;     /* that capture (0: none pending) */
};
/* After a drain: the control word as read before it (so every record the
 * helper wrote before its answer is in t), into t's capture list; merges a
 * finished capture. exited: the owner is gone (open requests end). */
void pt_session_capture_follow(struct pt_session *s, struct pt_trace *t,
			       const struct pt_shm_ctl *ctl, struct pt_capture_follow *f,
			       int exited, uint64_t now_ns);

/*
 * The SIGBUS guard. A MAP_SHARED file mapping faults (SIGBUS) on pages past
 * the file's end, and the file is another process's to truncate. A mapping
 * registered here is covered: a fault inside it replaces the faulting page
 * and the rest of the mapping with private zero pages, marks the slot hit
 * and returns, so the access is retried and reads zeros. Faults elsewhere
 * go to the handler that was installed before (or the default action).
 */
/* Installs the handler, again if someone replaced it since (cheap: one
 * sigaction query when it is still in place). */
void pt_shm_guard_arm(void);
/* Registers [base, base + size); returns its slot, or -1 when all are taken. */
int pt_shm_guard_add(void *base, size_t size);
/* Unregisters (before the mapping is unmapped); -1 is ignored. */
void pt_shm_guard_remove(int slot);
/* 1 once a fault was caught in the slot's mapping. */
int pt_shm_guard_hit(int slot);
/* Zero pages over the mapping from the first whole page past keep_bytes. */
void pt_shm_guard_cover(void *base, size_t size, size_t keep_bytes);

#endif
