/*
 * session_copy.c - the session reader's copy side: takes each ring's new
 * records out of the segment into a staging buffer (struct stage), moves
 * this reader's cursors so the producer may reuse the slots, and notes what
 * it learnt of each ring (a new owner, records skipped or overwritten,
 * drops, the ring freed after its thread's exit). session.c puts what was
 * staged into the trace.
 *
 * A drain copies and then feeds the trace on the calling thread. A live
 * loop also starts a copier (pt_session_copier_start): a thread of its own
 * that copies between drains, so the rings keep emptying while the loop
 * draws a screen, builds a summary or waits for the CPU on a busy machine
 * (a ring holds 33 ms of records at a million events a second; the staging
 * chunks up to an eighth of the memory for kept events). Its gap settles
 * where a pass finds a 32nd to an eighth of a ring, it asks the scheduler
 * for short slices, and it touches nothing but the copy side, under cp_mu.
 * A drain does not copy while the copier runs: it asks the copier for a
 * pass and waits for it, so everything written before the drain began is
 * in the trace after it, and the drain never holds cp_mu through a copy
 * (preempted there, it would stall the copier).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "proftop/error.h"
#include "proftop/session.h"
#include "session_int.h"
#include "model/util.h"

/* The copier's slice: a pass copies an eighth of a ring in tens of microseconds. */
#define COPIER_SLICE_NS 200000ull

static struct pt_shm_ring *ring_at(struct pt_session *s, uint32_t i)
{
	return (struct pt_shm_ring *)((char *)s->base + s->rings_offset + (uint64_t)i * s->ring_stride);
}

/* Our slot still ours (a reader stalled long enough may lose it)? */
int pt_session_slot_held(const struct pt_session *s)
{
	if (s->slot < 0)
		return 0;
	const struct pt_shm_reader *rd = &s->h->readers[s->slot];
	return LOAD_ACQ(&rd->pid) == (int32_t)getpid() && LOAD_ACQ(&rd->gen) == s->slot_gen;
}

/*
 * Claims a reader slot (shm.h): a free one, or one whose reader is gone
 * (its pid no longer exists, or its heartbeat is a minute old). Every
 * ring's cursor in it starts at what this reader has read (the ring's tail
 * before its first drain), then the heartbeat starts.
 */
static void claim_slot(struct pt_session *s, uint64_t now_ns)
{
	int32_t me = (int32_t)getpid();
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t k = 0; k < PT_SHM_MAX_READERS; k++) {
			struct pt_shm_reader *sl = &s->h->readers[k];
			int32_t pid = LOAD_ACQ(&sl->pid);
			if (pass == 0 && pid != 0)
				continue;
			if (pass == 1) {
				uint64_t hb = LOAD_ACQ(&sl->heartbeat_ns);
				int gone = pid > 0 && pid != me && kill(pid, 0) != 0 && errno == ESRCH;
				int stale = hb && now_ns > hb && now_ns - hb > 30 * PT_SHM_READER_TIMEOUT_NS;
				if (pid == 0 || !(gone || stale))
					continue;
			}
			if (!__atomic_compare_exchange_n(&sl->pid, &pid, me, 0, __ATOMIC_ACQ_REL,
							 __ATOMIC_RELAXED))
				continue;
			STORE_REL(&sl->heartbeat_ns, 0);
			s->slot_gen = LOAD_RLX(&sl->gen) + 1;
			STORE_REL(&sl->gen, s->slot_gen);
			for (uint32_t i = 0; i < s->nrings; i++) {
				struct pt_shm_ring *r = ring_at(s, i);
				uint64_t c = s->cp[i].seen ? s->cp[i].cursor : LOAD_ACQ(&r->tail);
				STORE_REL(&r->cursor[k], c);
			}
			s->slot = (int)k;
			s->no_slot = 0;
			return;
		}
	}
	s->no_slot = 1; /* read anyway, without holding anything back: losses counted */
}

/* ---- staging ---- */

static size_t chunk_bytes(struct pt_session *s)
{
	if (!s->chunk_bytes) {
		size_t need = sizeof(struct stage_chunk) + sizeof(struct stage_ent) +
			      (size_t)s->ring_slots * sizeof(struct pt_shm_rec);
		size_t b = 1u << 20;
		while (b < need)
			b *= 2;
		s->chunk_bytes = b;
	}
	return s->chunk_bytes;
}

/* A fresh chunk, its pages touched when touch (not on the copier: there
 * the copy touches them); NULL when no memory is left. */
static struct stage_chunk *chunk_new(struct pt_session *s, int touch)
{
	size_t n = chunk_bytes(s);
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (touch)
		for (size_t off = 0; off < n; off += 4096)
			((volatile unsigned char *)p)[off] = 0;
	struct stage_chunk *c = p;
	c->next = NULL;
	c->len = 0;
	return c;
}

static void chunk_unmap(struct pt_session *s, struct stage_chunk *c)
{
	munmap(c, chunk_bytes(s));
}

/* Room for an entry and n records at the end of g (s->cp_mu held); the
 * entry, zeroed, or NULL when no chunk could be had. */
static struct stage_ent *stage_reserve(struct pt_session *s, struct stage *g, uint64_t n)
{
	size_t need = sizeof(struct stage_ent) + (size_t)n * sizeof(struct pt_shm_rec);
	size_t room = chunk_bytes(s) - sizeof(struct stage_chunk);
	struct stage_chunk *c = g->tail;
	if (!c || room - c->len < need) {
		c = s->pool;
		if (c) {
			s->pool = c->next;
			s->npool--;
		} else if (!(c = chunk_new(s, 0))) {
			return NULL;
		}
		c->next = NULL;
		c->len = 0;
		if (g->tail)
			g->tail->next = c;
		else
			g->head = c;
		g->tail = c;
	}
	struct stage_ent *e = (struct stage_ent *)(c->data + c->len);
	memset(e, 0, sizeof *e);
	return e;
}

/* The entry stage_reserve gave, with its e->n records, is kept. */
static void stage_commit(struct stage *g, const struct stage_ent *e)
{
	size_t b = sizeof *e + (size_t)e->n * sizeof(struct pt_shm_rec);
	g->tail->len += b;
	g->bytes += b;
}

void pt_session_stage_recycle(struct pt_session *s, struct stage *g)
{
	/* the pool holds what a drain like this one used, and one more, up to
	 * STAGE_POOL_MAX: an idle session keeps a chunk or two, a busy one
	 * enough to stage the next drain's worth without a fresh page */
	unsigned used = 0;
	for (struct stage_chunk *c = g->head; c; c = c->next)
		used++;
	unsigned want = used + 1 < STAGE_POOL_MAX ? used + 1 : STAGE_POOL_MAX;
	pthread_mutex_lock(&s->cp_mu);
	struct stage_chunk *c = g->head;
	while (c) {
		struct stage_chunk *next = c->next;
		if (s->npool < want) {
			c->next = s->pool;
			s->pool = c;
			s->npool++;
		} else {
			chunk_unmap(s, c);
		}
		c = next;
	}
	g->head = g->tail = NULL;
	g->bytes = 0;
	unsigned have = s->npool;
	pthread_mutex_unlock(&s->cp_mu);
	/* topped up for a copier, outside the lock: touching pages is this
	 * thread's time, not the copier's */
	for (; s->cp_running && have < want; have++) {
		struct stage_chunk *n = chunk_new(s, 1);
		if (!n)
			break;
		pthread_mutex_lock(&s->cp_mu);
		n->next = s->pool;
		s->pool = n;
		s->npool++;
		pthread_mutex_unlock(&s->cp_mu);
	}
}

void pt_session_stage_free(struct pt_session *s)
{
	struct stage_chunk *lists[2] = {s->stage.head, s->pool};
	for (int k = 0; k < 2; k++)
		for (struct stage_chunk *c = lists[k], *next; c; c = next) {
			next = c->next;
			chunk_unmap(s, c);
		}
	s->stage.head = s->stage.tail = NULL;
	s->stage.bytes = 0;
	s->pool = NULL;
	s->npool = 0;
}

/* The last thread to need ring r's records is gone and every attached
 * reader has read them: the last one frees it for the next thread. */
static void free_if_read(struct pt_session *s, struct pt_shm_ring *r, uint64_t head)
{
	uint64_t now = pt_now_ns();
	for (uint32_t k = 0; k < PT_SHM_MAX_READERS; k++) {
		const struct pt_shm_reader *sl = &s->h->readers[k];
		if ((int)k == s->slot || !LOAD_ACQ(&sl->pid))
			continue;
		uint64_t hb = LOAD_ACQ(&sl->heartbeat_ns);
		if (hb && (int64_t)(now - hb) < (int64_t)PT_SHM_READER_TIMEOUT_NS &&
		    LOAD_ACQ(&r->cursor[k]) < head)
			return;
	}
	uint32_t want = PT_SHM_RING_EXITED;
	__atomic_compare_exchange_n(&r->state, &want, PT_SHM_RING_FREE, 0, __ATOMIC_RELEASE,
				    __ATOMIC_RELAXED);
}

/* Ring i's new records into g; the number copied. */
static uint64_t copy_ring(struct pt_session *s, struct stage *g, uint32_t i)
{
	struct pt_shm_ring *r = ring_at(s, i);
	struct ring_cp *cp = &s->cp[i];
	uint32_t state = LOAD_ACQ(&r->state);
	if (state == PT_SHM_RING_FREE && !cp->have)
		return 0;
	/* head first: tail read afterwards can only be newer, so head - tail <= slots */
	uint32_t gen = LOAD_ACQ(&r->generation);
	uint64_t head = LOAD_ACQ(&r->head);
	uint64_t tail = LOAD_ACQ(&r->tail);
	uint64_t slots = s->ring_slots, mask = slots - 1, n = 0;
	/* room for what this pass copies (below): from our cursor, or the tail
	 * where it is behind, to the head, a ring at most */
	uint64_t from = cp->seen && cp->cursor > tail ? cp->cursor : tail;
	struct stage_ent *e =
	    stage_reserve(s, g, head > from ? (head - from < slots ? head - from : slots) : 0);
	if (!e)
		return 0; /* no memory for it now: the ring keeps it, or counts its loss */
	e->ring = i;
	if (!cp->have || gen != cp->generation) {
		e->flags |= STAGE_NEW_OWNER;
		e->tid = LOAD_RLX(&r->tid);
		memcpy(e->name, r->thread_name, sizeof e->name);
		e->name[sizeof e->name - 1] = 0;
		cp->generation = gen;
		cp->have = 1;
	}
	if (!cp->seen) {
		/* first look: what is left is ours; what went before was
		 * overwritten or read (and freed) by other readers (account) */
		cp->cursor = tail;
		e->lost = e->before = tail;
	}
	uint64_t c = cp->cursor;
	if (c < tail) { /* overwritten, or freed while we were away */
		e->lost += tail - c;
		c = tail;
	}
	/* head below our cursor (a producer gone wrong): nothing to read, and the
	 * cursor never goes back */
	if (head > c) {
		n = head - c;
		if (n > slots) { /* more than a ring: corrupt indices, not records */
			e->bad_rings++;
			c = head - slots;
			n = slots;
		}
		uint64_t first = c & mask;
		uint64_t part = n < slots - first ? n : slots - first;
		struct pt_shm_rec *src = pt_shm_ring_recs(r), *dst = (struct pt_shm_rec *)(e + 1);
		memcpy(dst, src + first, part * sizeof *src);
		if (part < n)
			memcpy(dst + part, src, (n - part) * sizeof *src);
		if (pt_shm_guard_hit(s->guard)) { /* zeros from a truncated file, not records */
			e->n = 0;
			e->lost = e->before = 0;
			e->bad_rings = 0;
			if (e->flags)
				stage_commit(g, e);
			return 0;
		}
		/* records below the tail now may have been overwritten mid-copy */
		uint64_t tail2 = LOAD_ACQ(&r->tail), skip = 0;
		if (tail2 > c) {
			skip = tail2 - c < n ? tail2 - c : n;
			e->torn = skip;
			e->lost += skip;
			memmove(dst, dst + skip, (n - skip) * sizeof *dst);
		}
		e->n = n - skip;
		c = head;
	}
	cp->cursor = c;
	if (pt_session_slot_held(s))
		STORE_REL(&r->cursor[s->slot], c);
	/* the counters after the tails: an overwrite we saw is counted there */
	e->ow = delta_of(LOAD_ACQ(&r->overwritten), &cp->overwritten_seen);
	cp->seen = 1;
	e->dropped = delta_of(LOAD_RLX(&r->dropped), &cp->dropped_seen);
	if (state == PT_SHM_RING_EXITED && LOAD_ACQ(&r->head) == head) {
		free_if_read(s, r, head);
		e->flags |= STAGE_FREED;
		cp->have = 0; /* the next owner gets its own track */
	}
	if (e->n || e->flags || e->lost || e->ow || e->dropped || e->bad_rings)
		stage_commit(g, e);
	return n;
}

uint64_t pt_session_copy_pass(struct pt_session *s, struct stage *g, uint64_t now_ns, int final,
			      uint64_t *max_ring)
{
	if (!final) {
		if (!pt_session_slot_held(s))
			claim_slot(s, now_ns);
		if (s->slot >= 0)
			STORE_REL(&s->h->readers[s->slot].heartbeat_ns, now_ns);
		STORE_REL(&s->h->reader_heartbeat_ns, now_ns);
		if (!s->heartbeat_on) {
			__atomic_store_n(&s->h->reader_pid, (int32_t)getpid(), __ATOMIC_RELAXED);
			s->heartbeat_on = 1;
		}
	}
	uint64_t total = 0, most = 0;
	uint32_t claimed = LOAD_ACQ(&s->h->rings_claimed);
	if (claimed > s->nrings)
		claimed = s->nrings;
	for (uint32_t i = 0; i < s->nrings; i++) {
		if (i >= claimed && !s->cp[i].have)
			continue;
		uint64_t n = copy_ring(s, g, i);
		total += n;
		if (n > most)
			most = n;
	}
	if (max_ring)
		*max_ring = most;
	return total;
}

/* ---- the copier ---- */

/*
 * Asks the scheduler for short slices for the calling thread (EEVDF,
 * Linux 6.12+: a fair task's sched_runtime is its requested slice, and a
 * shorter one gets an earlier deadline, so it runs soon after it wakes
 * even among CPU-bound tasks). Its share of the CPU is unchanged (same
 * nice, same weight); an older kernel takes the call and ignores the field.
 * Best effort: a refusal changes nothing.
 */
static void ask_short_slices(uint64_t slice_ns)
{
	struct {
		uint32_t size, policy;
		uint64_t flags;
		int32_t nice;
		uint32_t priority;
		uint64_t runtime, deadline, period;
	} attr;
	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr; /* SCHED_ATTR_SIZE_VER0: 48 */
	attr.policy = 0;         /* SCHED_OTHER */
	attr.nice = getpriority(PRIO_PROCESS, 0);
	attr.runtime = slice_ns;
#ifdef SYS_sched_setattr
	syscall(SYS_sched_setattr, 0, &attr, 0);
#else
	(void)attr;
#endif
}

/* The next gap after a pass that found `most` records in its fullest ring:
 * halved (down to a 16th of busy_ns) past an eighth of a ring, doubled
 * (up to idle_ns) under a 32nd, kept between. A copier that was idle starts
 * again at busy_ns at most. */
uint64_t pt_session_copier_gap(uint64_t gap, uint64_t most, uint64_t slots, uint64_t busy_ns,
			       uint64_t idle_ns)
{
	if (most >= slots / 8) {
		if (gap > busy_ns)
			gap = busy_ns;
		return gap / 2 > busy_ns / 16 ? gap / 2 : busy_ns / 16;
	}
	if (most >= slots / 32)
		return gap;
	return gap * 2 < idle_ns ? gap * 2 : idle_ns;
}

static void *copier_main(void *arg)
{
	struct pt_session *s = arg;
	uint64_t gap = s->cp_busy_ns;
	/* signals sent to the process are the live loop's; the faults are
	 * this thread's own: SIGBUS is how the guard learns of a segment
	 * truncated under a copy (a blocked one would end the process) */
	sigset_t set;
	sigfillset(&set);
	static const int faults[] = {SIGBUS, SIGSEGV, SIGFPE, SIGILL, SIGTRAP, SIGABRT};
	for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
		sigdelset(&set, faults[i]);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	ask_short_slices(COPIER_SLICE_NS);
	pthread_mutex_lock(&s->cp_mu);
	while (!s->cp_stop) {
		uint64_t most = 0;
		/* a drain waiting for this pass gets it whatever is staged */
		int asked = s->cp_want > s->cp_done;
		if ((asked || s->stage.bytes < s->stage_cap) && !pt_shm_guard_hit(s->guard) &&
		    pt_session_copy_pass(s, &s->stage, pt_now_ns(), 0, &most))
			s->cp_passes++;
		s->cp_done++;
		if (asked)
			pthread_cond_broadcast(&s->cp_done_cv);
		/* the gap settles where a pass finds between a 32nd and an
		 * eighth of a ring: the rest of the ring's time is the margin for
		 * a late wake-up (a busy machine); quiet passes ease off up to
		 * the idle gap */
		gap = pt_session_copier_gap(gap, most, s->ring_slots, s->cp_busy_ns, s->cp_idle_ns);
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t ns = (uint64_t)ts.tv_nsec + gap;
		ts.tv_sec += (time_t)(ns / 1000000000ull);
		ts.tv_nsec = (long)(ns % 1000000000ull);
		if (!s->cp_stop && s->cp_want <= s->cp_done)
			pthread_cond_timedwait(&s->cp_cv, &s->cp_mu, &ts);
	}
	s->cp_done = UINT64_MAX / 2; /* no drain waits for a stopped copier */
	pthread_cond_broadcast(&s->cp_done_cv);
	pthread_mutex_unlock(&s->cp_mu);
	return NULL;
}

int pt_session_copier_start(struct pt_session *s, uint64_t busy_ns, uint64_t idle_ns)
{
	if (s->cp_running || s->shrunk)
		return 0;
	s->cp_busy_ns = busy_ns ? busy_ns : 1000000;
	s->cp_idle_ns = idle_ns > s->cp_busy_ns ? idle_ns : s->cp_busy_ns;
	s->cp_stop = 0;
	s->cp_want = s->cp_done = 0;
	if (!s->stage_cap)
		s->stage_cap = STAGE_CAP_MIN; /* until the first drain says the budget */
	if (pthread_create(&s->cp_th, NULL, copier_main, s) != 0)
		return PT_EIO; /* the drains still copy; only the relief is missing */
	s->cp_running = 1;
	return 0;
}

void pt_session_copier_stop(struct pt_session *s)
{
	if (!s->cp_running)
		return;
	pthread_mutex_lock(&s->cp_mu);
	s->cp_stop = 1;
	pthread_cond_signal(&s->cp_cv);
	pthread_mutex_unlock(&s->cp_mu);
	pthread_join(s->cp_th, NULL);
	s->cp_running = 0;
}

/* The staged records, with everything written before the call: the
 * copier's pass when one runs (so this thread never holds cp_mu through a
 * copy, where the copier would wait for it if it were preempted), else
 * this thread's own. Swapped with g (empty), so g gets them. */
void pt_session_copy_take(struct pt_session *s, struct stage *g, uint64_t now_ns, int final,
			  size_t budget)
{
	size_t cap = budget / 8;
	cap = cap < STAGE_CAP_MIN ? STAGE_CAP_MIN : cap > STAGE_CAP_MAX ? STAGE_CAP_MAX : cap;
	pthread_mutex_lock(&s->cp_mu);
	s->stage_cap = cap;
	if (s->cp_running && !s->cp_stop) {
		uint64_t want = s->cp_done + 1;
		if (s->cp_want < want)
			s->cp_want = want;
		pthread_cond_signal(&s->cp_cv);
		while (s->cp_done < want)
			pthread_cond_wait(&s->cp_done_cv, &s->cp_mu);
	} else {
		pt_session_copy_pass(s, &s->stage, now_ns, final, NULL);
	}
	struct stage full = s->stage;
	s->stage = *g;
	*g = full;
	pthread_mutex_unlock(&s->cp_mu);
}

int pt_session_copier_running(const struct pt_session *s)
{
	return s->cp_running;
}
