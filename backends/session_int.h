/*
 * session_int.h - what the session reader's files share beyond session.h:
 * the reader's state (struct pt_session, made by session_open.c, read and
 * drained by session.c), the producers' drop total read through the
 * validated layout, the reader's "stopped" state, and the guard
 * (session_scan.c) that keeps a segment truncated by another process from
 * killing proftop with SIGBUS.
 *
 * Threading: the guard's registry and handler are process-wide and safe
 * from any thread; a struct pt_session is still used by one thread.
 */
#ifndef PROFTOP_SESSION_INT_H
#define PROFTOP_SESSION_INT_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/event.h"
#include "proftop/session.h"
#include "proftop/shm.h"

#define LOAD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define LOAD_RLX(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE_REL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* What the reader keeps per ring. */
struct ring_rd {
	int have;               /* track assigned for generation */
	uint32_t generation;
	uint32_t track;
	int32_t device;         /* from PT_SHM_REC_DEVICE, -1 = host */
	uint64_t dropped_seen, overwritten_seen;
	int seen;               /* the ring was looked at once: cursor is ours */
	uint64_t cursor;        /* next index this reader reads */
	uint64_t ow_unmatched;  /* overwritten records not yet among our skipped ones */
	int pending;            /* pend waits for a possible EXT record */
	int pend_ext;
	uint64_t pend_seq;
	int32_t pend_dev;
	int64_t pend_stream;
	struct pt_event pend;
};

/* offset -> string id, open addressing; key 0 is empty (offset 0 = no name). */
struct name_map {
	uint32_t *keys, *vals;
	uint32_t cap, n;
};

struct pt_session {
	char *path;
	void *base;
	size_t size;
	int mapped;
	struct pt_shm_header *h;
	/* validated copies of the layout (the header may change under us) */
	int32_t pid;
	uint64_t start_ticks;
	uint32_t nrings, ring_slots, strings_bytes;
	uint64_t rings_offset, ring_stride, strings_offset;
	struct ring_rd *rings;
	struct pt_shm_rec *scratch;
	struct name_map names;
	uint32_t last_off, last_id; /* one-entry cache in front of names */
	struct pt_trace *names_of; /* the trace the cached ids belong to */
	uint64_t no_ring_seen, no_string_seen;
	int heartbeat_on;
	uint64_t helper_calls_seen; /* the helper's call count last added to the trace */
	int slot;               /* our slot in header->readers, -1 = none yet */
	uint32_t slot_gen;
	int no_slot;            /* every slot taken: reading without one */
	int exited_seen;
	int pidfd;   /* the owner's pidfd once looked at (owner_pidfd); -1 not yet, -2 none */
	struct pt_session_stats st;
	int fd;      /* the segment's file (-1 from memory): fstat at each poll */
	int guard;   /* SIGBUS guard slot, -1 = none */
	int shrunk;  /* the file shrank under the mapping: no more reading */
	uint32_t corr_tag; /* pt_session_set_corr_tag's, 0: ids as recorded */
	char why[160];
	char desc[PT_SHM_CMDLINE_BYTES + 64];
};

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
