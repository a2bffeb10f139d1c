/*
 * shm.h - the shared-memory session segment: the ABI between the probe
 * (libproftop.so, inside the training process, the only writer of records)
 * and proftop's session reader (the only consumer).
 *
 * One segment per profiled process: a regular file on a tmpfs, in a per-user
 * directory (pt_shm_dir(): $PROFTOP_SESSION_DIR, else /dev/shm/proftop-<uid>,
 * mode 0700, owned by the user, not a symlink), named "<pid>.session",
 * created with mode 0600 and mapped MAP_SHARED by both sides. Layout:
 *
 *   [struct pt_shm_header, PT_SHM_HEADER_BYTES]
 *   [nrings x struct pt_shm_ring, each followed by ring_slots x struct pt_shm_rec]
 *   [string area, strings_bytes]
 *
 * Rings: one ring per producing thread, claimed on the thread's first
 * event, read by up to PT_SHM_MAX_READERS readers at once, each with a cursor
 * of its own, so two readers (the screen in one pane, `record -p` in
 * another) each get every record. head and tail are written only by the
 * producer: records [tail, head) are valid. A reader claims a slot in
 * header->readers (CAS on pid), keeps its heartbeat there and publishes, per
 * ring, how far it has read in ring->cursor[slot]; C11 atomics,
 * release/acquire.
 *
 * Full ring: while some reader is attached (its slot's heartbeat is younger
 * than PT_SHM_READER_TIMEOUT_NS) the producer moves tail up to the lowest
 * cursor of the attached readers (what all of them have read) and, when that
 * frees nothing, drops the newest record and counts it in ring->dropped;
 * with no reader attached it overwrites the oldest (tail forward), so
 * attaching shows the recent past, and counts in ring->overwritten the
 * records no reader had read (those below every occupied slot's cursor were).
 * A reader whose cursor is below tail when it comes back (stalled, or
 * detached while others read on) missed [cursor, tail): it counts them
 * itself. A reader validates a copied range by re-reading tail afterwards
 * and discarding indices below it (possibly torn).
 *
 * Records are 32 bytes. Event records carry a pt_kind (< 0x80). Control
 * records (kind >= 0x80) define strings, name threads and extend the record
 * before them. A reader must treat every value in the segment as untrusted:
 * check magic, ABI, sizes against the file size, ring indices, string
 * offsets and lengths.
 *
 * Threading: see above; nothing here takes a lock.
 */
#ifndef PROFTOP_SHM_H
#define PROFTOP_SHM_H

#include <stddef.h>
#include <stdint.h>

#define PT_SHM_MAGIC 0x3150544f46545250ull /* "PRFTOTP1" little-endian */
#define PT_SHM_ABI 2u /* 2: per-reader slots and cursors */
#define PT_SHM_HEADER_BYTES 4096u
#define PT_SHM_CACHELINE 64u
#define PT_SHM_READER_TIMEOUT_NS (2ull * 1000000000ull)

/* Defaults; PROFTOP_RINGS / PROFTOP_RING_SLOTS / PROFTOP_STRINGS_BYTES override. */
#define PT_SHM_DEFAULT_RINGS 32u
/* power of two; 1 MiB per ring: 3.3 ms of a thread writing 10 M events/s, time for a
 * reader that shares two cores with the job to come back to it */
#define PT_SHM_DEFAULT_RING_SLOTS 32768u
#define PT_SHM_DEFAULT_STRINGS_BYTES (1u << 20)
#define PT_SHM_MAX_RINGS 1024u
#define PT_SHM_MAX_RING_SLOTS (1u << 24)

/* header->state */
enum pt_shm_state {
	PT_SHM_STARTING = 0,
	PT_SHM_RUNNING = 1,
	PT_SHM_EXITED = 2, /* the process ran its exit handlers */
};

/* ring->state */
enum pt_shm_ring_state {
	PT_SHM_RING_FREE = 0,    /* unclaimed, or drained after its thread exited */
	PT_SHM_RING_ACTIVE = 1,  /* owned by a live thread */
	PT_SHM_RING_EXITED = 2,  /* thread gone; the reader frees it once drained */
};

#define PT_SHM_CMDLINE_BYTES 1024u
#define PT_SHM_MAX_READERS 8u

/*
 * One reader's slot. Free: pid 0. A reader claims it with a CAS on pid (a
 * slot whose pid is gone may be taken over), bumps gen, sets every ring's
 * cursor[slot] to the ring's tail, then starts its heartbeat; it clears pid
 * (and the heartbeat) when it detaches. A reader that finds pid or gen
 * changed under it lost its slot and claims another.
 */
struct pt_shm_reader {
	uint64_t heartbeat_ns; /* CLOCK_MONOTONIC of its last drain, 0 = not attached */
	int32_t pid;           /* 0 = free */
	uint32_t gen;          /* bumped at each claim */
};

/*
 * The control word: on-demand deep capture (python/proftop_capture.py).
 *
 * A reader asks: it writes asked_ns and requester, then publishes
 * request = PT_SHM_CTL_REQ(seq, flags, steps) with a CAS from the value it
 * read, seq one above every seq seen in request and state, and only while
 * the helper's state for the previous request is final (done, failed,
 * cancelled) or the helper never answered it. The helper (through the
 * probe's proftop_control* calls, include/proftop/proftop.h) looks at
 * request once per step; it answers by writing its fields and msg first,
 * then state = PT_SHM_CTL_STATE(seq, state, steps done) with a release
 * store. Readers load state (acquire) before the fields. A capture's trace
 * goes to "<session dir>/<pid>.capture-<seq>.json" (mode 0600, written to a
 * temporary name and renamed), which every reader of the session may merge.
 * caps says whether a helper is there to answer at all.
 */
#define PT_SHM_CTL_MSG_BYTES 256u
#define PT_SHM_CTL_MAX_STEPS 1000u
#define PT_SHM_CTL_REQ(seq, flags, steps)                                                       \
	(((uint64_t)(uint32_t)(seq) << 32) | ((uint64_t)((flags)&0xffffu) << 16) |              \
	 (uint64_t)((steps)&0xffffu))
#define PT_SHM_CTL_REQ_SEQ(w) ((uint32_t)((w) >> 32))
#define PT_SHM_CTL_REQ_FLAGS(w) ((uint32_t)((w) >> 16) & 0xffffu)
#define PT_SHM_CTL_REQ_STEPS(w) ((uint32_t)(w)&0xffffu)
#define PT_SHM_CTL_STATE(seq, st, done)                                                         \
	(((uint64_t)(uint32_t)(seq) << 32) | ((uint64_t)((st)&0xffu) << 24) |                    \
	 (uint64_t)((done)&0xffffffu))
#define PT_SHM_CTL_STATE_SEQ(w) ((uint32_t)((w) >> 32))
#define PT_SHM_CTL_STATE_ST(w) ((uint32_t)((w) >> 24) & 0xffu)
#define PT_SHM_CTL_STATE_DONE(w) ((uint32_t)(w)&0xffffffu)

/* request flags */
#define PT_SHM_CTL_STACKS 0x1u /* record Python stacks too (with_stack) */
#define PT_SHM_CTL_CANCEL 0x2u /* the reader withdrew request seq */
#define PT_SHM_CTL_AT_STEP 0x4u /* start at the job's step ctl_at_step (header), not the
				   next boundary: the same steps on every rank of a job */

/* the helper's states */
enum pt_shm_ctl_state {
	PT_SHM_CTL_NONE = 0,      /* no answer yet */
	PT_SHM_CTL_ACCEPTED = 1,  /* seen: starts at the next step boundary */
	PT_SHM_CTL_RUNNING = 2,   /* torch's profiler runs; done = steps finished */
	PT_SHM_CTL_WRITING = 3,   /* stopped at a step boundary, writing the file */
	PT_SHM_CTL_DONE = 4,      /* the file is complete */
	PT_SHM_CTL_FAILED = 5,    /* msg says why; no file */
	PT_SHM_CTL_CANCELLED = 6, /* withdrawn, or the job exited; no file */
};

/* caps: what the helper can do */
#define PT_SHM_CAP_CAPTURE 0x1u /* the PyTorch helper runs and answers requests */
#define PT_SHM_CAP_KINETO 0x2u  /* its torch has Kineto (else the legacy profiler) */
#define PT_SHM_CAP_CUDA 0x4u    /* torch may collect CUDA activity (proftop's CUPTI is off) */

struct pt_shm_ctl {
	uint64_t request;      /* reader: PT_SHM_CTL_REQ; 0 = never asked */
	uint64_t state;        /* helper: PT_SHM_CTL_STATE */
	uint32_t caps;         /* helper: PT_SHM_CAP_*; 0 = no helper answers */
	int32_t requester;     /* reader: pid of the reader that asked for `request` */
	uint64_t asked_ns;     /* reader: CLOCK_MONOTONIC when it asked */
	/* helper, valid from WRITING on (session clock, CLOCK_MONOTONIC ns): */
	uint64_t t0_ns, t1_ns; /* the profiler recorded from t0 to t1 */
	uint64_t sync_lo_ns, sync_hi_ns; /* taken just before and after the trace's
					    marker "proftop/sync#<seq>" */
	uint64_t start_block_ns; /* what starting torch's profiler blocked the step */
	uint64_t stop_block_ns;  /* ... stopping it */
	uint64_t write_ns;       /* writing the file (a thread of the helper's: the
				    steps go on meanwhile) */
	int32_t tid;             /* gettid() of the thread whose steps were captured */
	uint32_t first_step;     /* the job's number of the first captured step (its
				    helper counts steps from 0, as proftop does) */
	char msg[PT_SHM_CTL_MSG_BYTES]; /* helper: one line for the user, NUL-terminated */
};

struct pt_shm_header {
	uint64_t magic;
	uint32_t abi;
	uint32_t header_bytes;   /* PT_SHM_HEADER_BYTES */
	uint64_t segment_bytes;  /* whole file; must equal the file size */
	int32_t pid;
	uint32_t uid;
	uint64_t proc_start_ticks; /* /proc/PID/stat field 22, tells a reused pid apart */
	uint64_t clock_origin_ns;  /* CLOCK_MONOTONIC when the probe started */
	uint64_t realtime_origin_ns; /* CLOCK_REALTIME at the same moment */
	uint32_t nrings;
	uint32_t ring_slots;     /* power of two */
	uint64_t rings_offset;   /* from the segment start */
	uint64_t ring_stride;    /* bytes from one ring to the next */
	uint64_t strings_offset;
	uint32_t strings_bytes;
	uint32_t reserved0;
	int64_t rank, local_rank, world_size; /* from RANK / LOCAL_RANK / WORLD_SIZE, else -1 */

	/* live fields (atomics; plain uint64_t in the ABI, accessed with __atomic / stdatomic) */
	uint32_t state;              /* enum pt_shm_state */
	uint32_t rings_claimed;      /* high-water mark of claimed rings */
	uint64_t strings_used;       /* bump offset in the string area */
	uint64_t reader_heartbeat_ns;/* CLOCK_MONOTONIC of the reader's last drain, 0 = none */
	int32_t reader_pid;
	uint32_t reserved1;
	uint64_t dropped_no_ring;    /* events of threads that found no free ring */
	uint64_t dropped_no_string;  /* events whose name did not fit the string area */
	uint64_t exit_ns;            /* when state became EXITED */

	char cmdline[PT_SHM_CMDLINE_BYTES]; /* argv joined by spaces, NUL-terminated */

	/* Added within ABI 1 (older probes leave it 0: the file starts zeroed).
	 * The probe's measured cost of recording one event (a push/pop pair on
	 * its hot path, timed once the clock has settled), in picoseconds;
	 * 0 = not measured yet. Written once, relaxed. */
	uint64_t event_cost_ps;

	/* ABI 2: the attached readers (reader_heartbeat_ns and reader_pid above
	 * keep the latest reader's, for listings) */
	struct pt_shm_reader readers[PT_SHM_MAX_READERS];

	/* PROFTOP_LAUNCH_ID of the process's environment (hex; 0 = none).
	 * `proftop run|record|serve -- CMD` sets it for CMD, and every process
	 * below CMD inherits it, so proftop finds the sessions of the job it
	 * started (a wrapper script's python, torchrun's ranks) and no others.
	 * Written once before the magic. */
	uint64_t launch_id;
	int32_t ppid; /* getppid() when the probe started */
	uint32_t reserved2;

	/* Added within ABI 2 (older probes leave it 0): the control word, by
	 * which a reader asks the process's Python helper for a deep capture
	 * (struct pt_shm_ctl below). */
	struct pt_shm_ctl ctl;

	/* Added within ABI 2 (older probes and helpers leave them 0): the Python
	 * helper's own cost beside the probe's (proftop_helper_stats): what one
	 * wrapped call adds besides its events, as the helper measured it at
	 * start, in picoseconds, and the wrapped calls it has handled so far.
	 * Written by the helper, relaxed. */
	uint64_t helper_cost_ps;
	uint64_t helper_calls;

	/* Added within ABI 2 (older readers leave it 0, older helpers ignore
	 * it): with PT_SHM_CTL_AT_STEP in the request, the job's number of the
	 * first step to capture (its helper counts steps from 0). Written by the
	 * reader before it publishes the request, as asked_ns is. */
	uint64_t ctl_at_step;
};

/* One open range of a ring's thread (struct pt_shm_ring.open). */
#define PT_SHM_OPEN_MAX 3
struct pt_shm_open {
	uint64_t start_ns;
	uint32_t name;               /* string offset */
	uint32_t kind;               /* pt_kind */
};

struct pt_shm_ring {
	uint64_t head;               /* producer: next index to write */
	char pad0[PT_SHM_CACHELINE - 8];
	uint64_t tail;               /* producer: oldest valid record */
	char pad1[PT_SHM_CACHELINE - 8];
	uint64_t dropped;            /* producer: records dropped while a reader was attached */
	uint64_t overwritten;        /* producer: records overwritten unread, with no reader */
	uint32_t state;              /* enum pt_shm_ring_state */
	int32_t tid;                 /* gettid() of the owner */
	uint32_t generation;         /* bumped on every claim */
	uint32_t reserved;
	char thread_name[32];        /* pthread name at claim time, NUL-terminated */
	/* producer: the ranges open on the thread now (its depth) and the
	 * outermost PT_SHM_OPEN_MAX of them, for a reader that asks what a
	 * stuck rank is doing (colls.h's hang); relaxed stores, read racily */
	uint32_t open_depth;
	uint32_t open_pad;
	struct pt_shm_open open[PT_SHM_OPEN_MAX];
	char pad2[PT_SHM_CACHELINE - 8 - 8 - 16 - 32 + PT_SHM_CACHELINE - 8 -
		  PT_SHM_OPEN_MAX * 16];
	uint64_t cursor[PT_SHM_MAX_READERS]; /* reader in slot k: next index it reads */
	/* followed by ring_slots records */
};

/*
 * One record. Event records (kind < 0x80, a pt_kind):
 *   start_ns, dur_ns on the session clock (CLOCK_MONOTONIC ns), arg (samples,
 *   bytes, counter value's bits), name = string offset (0 = unnamed), flags
 *   (PT_EVF_*), aux: nesting depth on the thread at the event's start.
 * Control records (kind >= 0x80) are listed below.
 */
struct pt_shm_rec {
	uint64_t start_ns;
	uint64_t dur_ns;
	uint64_t arg;
	uint32_t name;    /* offset into the string area; 0 = none */
	uint8_t kind;
	uint8_t flags;
	uint16_t aux;
};

/*
 * PT_SHM_REC_EXT: extends the event record just before it in the same ring:
 *   start_ns = correlation id, dur_ns = (device << 32) | stream (device
 *   activities), arg = external id. Readers pair it with the previous record.
 */
#define PT_SHM_REC_EXT 0x80u
/* PT_SHM_REC_THREAD_NAME: name = string offset of a new thread name. */
#define PT_SHM_REC_THREAD_NAME 0x81u
/* PT_SHM_REC_DEVICE: the records from here on come from device `arg` (CUPTI ring). */
#define PT_SHM_REC_DEVICE 0x82u
/*
 * PT_SHM_REC_COLL: a collective call (coll.h) entered, or completed when
 * flags has PT_SHM_COLL_DONE: start_ns = the time, dur_ns = the group's
 * sequence number, arg = bytes, name = the op's string offset, aux = its
 * PT_COLL_* flags. Always followed by PT_SHM_REC_COLL_GROUP: name = the
 * group name's string offset, start_ns = when it was entered (completions;
 * 0 unknown), dur_ns = ranks in the group (0 unknown). The probe writes
 * both or neither.
 */
#define PT_SHM_REC_COLL 0x83u
#define PT_SHM_REC_COLL_GROUP 0x84u
#define PT_SHM_COLL_DONE 0x1u

/*
 * String area: entries at 8-byte aligned offsets (offset 0 is reserved and
 * means "no name"): uint32_t len; uint32_t hash; char bytes[len]; '\0'.
 * An entry is written completely before any record names it.
 */
struct pt_shm_str {
	uint32_t len;
	uint32_t hash;
	char bytes[];
};

_Static_assert(sizeof(struct pt_shm_rec) == 32, "records are 32 bytes");
_Static_assert(sizeof(struct pt_shm_header) <= PT_SHM_HEADER_BYTES, "header fits its page");
_Static_assert(sizeof(struct pt_shm_ring) % PT_SHM_CACHELINE == 0, "ring header in whole lines");

static inline struct pt_shm_ring *pt_shm_ring_at(void *base, const struct pt_shm_header *h,
						 uint32_t i)
{
	return (struct pt_shm_ring *)((char *)base + h->rings_offset + (uint64_t)i * h->ring_stride);
}

static inline struct pt_shm_rec *pt_shm_ring_recs(struct pt_shm_ring *r)
{
	return (struct pt_shm_rec *)(r + 1);
}

/*
 * The readers' side of the protocol, for the producer (lock-free, safe in
 * a signal handler). attached: readers whose heartbeat is younger than
 * PT_SHM_READER_TIMEOUT_NS at now_ns.
 */
int pt_shm_readers_attached(const struct pt_shm_header *h, uint64_t now_ns);
/* The lowest cursor of r among the attached readers, at least tail and at
 * most head; head when none is attached (*attached = 0). */
uint64_t pt_shm_readers_min_cursor(const struct pt_shm_header *h, const struct pt_shm_ring *r,
				   uint64_t now_ns, uint64_t tail, uint64_t head, int *attached);
/* The highest cursor of r among the occupied slots, attached or not (every
 * record below it was read by some reader); 0 when no slot is occupied. */
uint64_t pt_shm_readers_max_cursor(const struct pt_shm_header *h, const struct pt_shm_ring *r);

/*
 * The readers' side of the control word (struct pt_shm_ctl). Not for the
 * probe's hot path.
 *
 * pt_shm_ctl_read: a copy of h->ctl whose fields belong to the state it
 * holds (state loaded first, then the rest, then state again; retried a few
 * times while the helper writes).
 * pt_shm_ctl_request: asks for a capture of steps steps (1 ..
 * PT_SHM_CTL_MAX_STEPS) with flags, starting at the job's step at_step
 * (0: at the next step boundary; else PT_SHM_CTL_AT_STEP is set and a
 * helper that is past that step refuses), as reader pid `me` at now_ns
 * (CLOCK_MONOTONIC). Returns 0 with *seq, or a PT_E* code with one line in
 * why: PT_ENOTAVAIL (no helper answers in this process), PT_EEXIST (a
 * capture is asked for or running: its number and progress are said),
 * PT_EINVAL (steps out of range). A request whose reader is gone and
 * that the helper never answered is replaced.
 * pt_shm_ctl_cancel: withdraws request seq while the helper has not
 * finished it (the helper stops at its next step boundary, keeps nothing).
 */
void pt_shm_ctl_read(const struct pt_shm_header *h, struct pt_shm_ctl *out);
int pt_shm_ctl_request(struct pt_shm_header *h, uint32_t steps, uint32_t flags,
		       uint64_t at_step, int32_t me, uint64_t now_ns, uint32_t *seq, char *why,
		       size_t whylen);
int pt_shm_ctl_cancel(struct pt_shm_header *h, uint32_t seq);
/* "waiting for a step boundary", "running", ...: a state's words. */
const char *pt_shm_ctl_state_name(uint32_t state);

/* Bytes of a segment with these parameters (0 when they are out of range). */
uint64_t pt_shm_segment_bytes(uint32_t nrings, uint32_t ring_slots, uint32_t strings_bytes);
/* The per-user session directory; creates it (0700) when create is set.
 * Refuses a symlink, another owner, or group/world access, and a parent that
 * is world-writable without the sticky bit or owned by another user (not
 * root). Returns 0 or PT_E*. */
int pt_shm_dir(char *buf, size_t len, int create, char *err, size_t errlen);
/* PT_EPERM with a message in err when /proc/PID exists and belongs to
 * another uid (its session, if any, is in that user's directory and is not
 * ours to read), else 0. For a clear refusal when no segment is found. */
int pt_shm_foreign_pid(int32_t pid, char *err, size_t errlen);

#endif
