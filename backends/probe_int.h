/*
 * probe_int.h - what the probe's files share: the process-wide state
 * (mapped segment, per-ring producer state, name table), the per-thread
 * state behind one initial-exec TLS pointer, and the inline hot path
 * (push, pop, emit) used by both the C API (probe_api.c) and the NVTX
 * callbacks (probe_nvtx.c). Nothing here is exported from libproftop.so.
 *
 * Threading: a struct pt_tstate is touched only by the thread that claimed
 * its ring; the segment's shared fields use __atomic builtins; the name
 * table is read and written lock-free (a CAS at the first sight of a name).
 */
#ifndef PT_PROBE_INT_H
#define PT_PROBE_INT_H

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "probe_clock.h"
#include "proftop/event.h"
#include "proftop/shm.h"

#define PT_HIDDEN __attribute__((visibility("hidden")))
#define PT_EXPORT __attribute__((visibility("default")))
#define PT_LIKELY(x) __builtin_expect(!!(x), 1)
#define PT_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define PT_PROBE_MAX_DEPTH 128u
#define PT_PROBE_NAME_CACHE 64u  /* per-thread pointer -> name cache, power of two */
#define PT_PROBE_KIND_DROP 0xffu /* frame whose event is dropped (name did not fit) */

/* Special values of the TLS pointer (a real state is never below 16). */
#define PT_TS_UNCLAIMED ((struct pt_tstate *)0)
#define PT_TS_NORING ((struct pt_tstate *)1) /* no free ring: events counted as dropped */
#define PT_TS_DEAD ((struct pt_tstate *)2)   /* probe off, forked child or exiting thread */
#define PT_TS_SPECIAL(t) ((uintptr_t)(t) < 16u)

enum { PT_PROBE_UNINIT = 0, PT_PROBE_ON = 1, PT_PROBE_OFF = 2 };

struct pt_frame {
	uint64_t start_ns;
	uint32_t name;
	uint8_t kind;
	uint8_t flags;
	uint16_t dom; /* NVTX domain index, 0 = default (proftop API and NVTX CORE) */
};

/* One entry of a thread's name cache: a caller's pointer and what it named last. */
struct pt_name_ent {
	const char *ptr;
	uint32_t off;
	uint16_t dom;
	uint8_t kind; /* phase kind for NVTX, else PT_KIND_USER_DEFINED */
	uint8_t skip; /* bytes of "domain: " prefix before the caller's text */
};

struct pt_tstate {
	/* hot: one cache line */
	struct pt_shm_rec *recs;
	struct pt_shm_ring *ring;
	uint64_t head;        /* producer copy of ring->head */
	uint64_t cached_tail; /* last tail seen */
	uint64_t mask;        /* ring_slots - 1 */
	uint32_t depth;
	uint32_t index; /* ring index */
	struct pt_tclock clk;
	uint64_t step_start_ns;
	uint64_t last_step_ns; /* the start of the step recorded last (proftop_step_tokens) */
	int32_t tid;
	uint32_t pad;
	struct pt_frame stack[PT_PROBE_MAX_DEPTH];
	struct pt_name_ent cache[PT_PROBE_NAME_CACHE];
};

struct pt_probe {
	int state; /* PT_PROBE_*; atomic */
	int forked;
	int fork_on;   /* forked child of a recording process (may attach as a worker) */
	int child;     /* a forked child that attached (proftop_worker_attach): its rings
	                  are in the parent's session, which it never marks exited */
	char child_label[16];
	void *base;
	uint64_t bytes;
	struct pt_shm_header *hdr;
	uint32_t nrings, slots;
	char *strings;
	uint32_t strings_bytes;
	struct pt_tstate *ts; /* nrings producer states, in process memory */
	uint64_t *names;      /* intern table: (hash << 32) | offset, 0 = empty */
	uint32_t names_mask;
	uint32_t phase_name[5]; /* interned "ProfileStep", "Dataloader", ... */
	char path[4096];        /* the session file */
	int cost_done;          /* event_cost_ps measured (probe_cost.c); atomic */
};

PT_HIDDEN extern struct pt_probe pt_probe_g;
PT_HIDDEN extern __thread struct pt_tstate *pt_probe_tls;

/* Slow paths (probe.c). */
PT_HIDDEN struct pt_tstate *pt_probe_claim(void);
PT_HIDDEN int pt_probe_make_room(struct pt_tstate *t, uint64_t now_ns);
/* Free slots in t's ring now; when fewer than need, first frees what every
 * attached reader has read (the same rule as pt_probe_make_room): the CUPTI
 * thread waits for room instead of dropping while a reader is attached. */
PT_HIDDEN uint64_t pt_probe_ring_free(struct pt_tstate *t, uint64_t need);
PT_HIDDEN void pt_probe_count_noring(void);
/* 1 while a reader's heartbeat is fresh (PT_SHM_READER_TIMEOUT_NS). */
PT_HIDDEN int pt_probe_reader_attached(uint64_t now_ns);
PT_HIDDEN void pt_probe_count_dropped(struct pt_tstate *t);
/* A collective's completion with its own times (session clock; NCCL's
 * plugin, probe_nccl.c, completes calls after the fact): as
 * proftop_coll_done, with the completion at end_ns instead of now. */
PT_HIDDEN void pt_probe_coll_done_at(uint32_t op_id, uint32_t group_id, uint64_t seq,
				     uint64_t start_ns, uint64_t end_ns, uint64_t bytes,
				     uint32_t group_size, uint32_t flags);
PT_HIDDEN int pt_probe_pop_inner(struct pt_tstate *t, uint16_t dom);
/* Names (probe_names.c). */
PT_HIDDEN uint32_t pt_probe_intern(const char *s, size_t len);
PT_HIDDEN uint32_t pt_probe_name_miss(struct pt_tstate *t, const char *s, uint16_t dom,
				      uint8_t *kind);
PT_HIDDEN uint8_t pt_probe_phase_kind(const char *s, size_t len);
/* Length of the operator name in an emit_nvtx range name ("aten::mm, seq = 3"), else len. */
PT_HIDDEN size_t pt_probe_torch_nvtx_len(const char *s, size_t len, int *is_op);
PT_HIDDEN void pt_probe_phases_init(void);
PT_HIDDEN const char *pt_probe_domain_prefix(uint16_t dom, size_t *len);
/* Own cost (probe_cost.c): measures it once the clock has settled; cheap no-op after. */
PT_HIDDEN void pt_probe_cost_measure(void);
/* NVTX (probe_nvtx.c): resets the start/end table (fork child). */
PT_HIDDEN void pt_probe_nvtx_reset(void);

static inline const char *pt_probe_str(uint32_t off)
{
	return pt_probe_g.strings + off + sizeof(struct pt_shm_str);
}

/* This thread's state, claiming a ring on first use; special values on failure. */
static inline struct pt_tstate *pt_probe_self(void)
{
	struct pt_tstate *t = pt_probe_tls;
	if (PT_UNLIKELY(PT_TS_SPECIAL(t)))
		t = pt_probe_claim();
	return t;
}

/* The name for s (interned by content), through the thread's pointer cache. */
static inline uint32_t pt_probe_name(struct pt_tstate *t, const char *s, uint16_t dom,
				     uint8_t *kind)
{
	uintptr_t p = (uintptr_t)s;
	struct pt_name_ent *e = &t->cache[((p >> 3) ^ (p >> 11)) & (PT_PROBE_NAME_CACHE - 1)];
	if (PT_LIKELY(e->ptr == s && e->dom == dom && e->off)) {
		/* The caller may have reused its buffer: verify the content. */
		const unsigned char *a = (const unsigned char *)s;
		const unsigned char *b = (const unsigned char *)pt_probe_str(e->off) + e->skip;
		size_t i = 0;
		while (a[i] == b[i]) {
			if (a[i] == 0) {
				*kind = e->kind;
				return e->off;
			}
			i++;
		}
	}
	return pt_probe_name_miss(t, s, dom, kind);
}

static inline void pt_probe_emit(struct pt_tstate *t, uint64_t now_ns, uint64_t start_ns,
				 uint64_t dur_ns, uint64_t arg, uint32_t name, uint8_t kind,
				 uint8_t flags, uint16_t aux)
{
	uint64_t head = t->head;
	if (PT_UNLIKELY(head - t->cached_tail > t->mask) && !pt_probe_make_room(t, now_ns))
		return;
	struct pt_shm_rec *r = &t->recs[head & t->mask];
	r->start_ns = start_ns;
	r->dur_ns = dur_ns;
	r->arg = arg;
	r->name = name;
	r->kind = kind;
	r->flags = flags;
	r->aux = aux;
	__atomic_store_n(&t->ring->head, head + 1, __ATOMIC_RELEASE);
	t->head = head + 1;
}

/* Opens a range; returns its depth. The timestamp is taken last. */
static inline int pt_probe_push(struct pt_tstate *t, uint32_t name, uint8_t kind, uint16_t dom)
{
	uint32_t d = t->depth;
	t->depth = d + 1;
	if (PT_UNLIKELY(d >= PT_PROBE_MAX_DEPTH)) {
		pt_probe_count_dropped(t);
		return (int)d;
	}
	struct pt_frame *f = &t->stack[d];
	f->name = name;
	f->kind = kind;
	f->flags = 0;
	f->dom = dom;
	f->start_ns = pt_clock_now(&t->clk);
	if (d < PT_SHM_OPEN_MAX) { /* the outermost, where a reader can see them */
		struct pt_shm_open *o = &t->ring->open[d];
		__atomic_store_n(&o->name, name, __ATOMIC_RELAXED);
		__atomic_store_n(&o->kind, kind, __ATOMIC_RELAXED);
		__atomic_store_n(&o->start_ns, f->start_ns, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&t->ring->open_depth, d + 1, __ATOMIC_RELAXED);
	return (int)d;
}

/* Closes the innermost range of domain dom; returns its depth, -1 when none is open. */
static inline int pt_probe_pop(struct pt_tstate *t, uint16_t dom)
{
	uint64_t now = pt_clock_now(&t->clk);
	uint32_t d = t->depth;
	if (PT_UNLIKELY(d == 0 || d > PT_PROBE_MAX_DEPTH || t->stack[d - 1].dom != dom))
		return pt_probe_pop_inner(t, dom);
	struct pt_frame *f = &t->stack[d - 1];
	t->depth = d - 1;
	__atomic_store_n(&t->ring->open_depth, d - 1, __ATOMIC_RELAXED);
	if (PT_LIKELY(f->kind != PT_PROBE_KIND_DROP))
		pt_probe_emit(t, now, f->start_ns, now > f->start_ns ? now - f->start_ns : 0, 0,
			      f->name, f->kind, f->flags, (uint16_t)(d - 1));
	return (int)(d - 1);
}

#endif
