/*
 * session.c - the session reader: opens a probe's shared-memory segment
 * (shm.h) after checking that it is ours and well formed, drains its
 * per-thread rings into a trace at each poll, detects the owner's exit, and
 * wraps all that as the "session" backend (backend.h).
 *
 * Everything in the segment is written by another process and is treated as
 * untrusted: the layout parameters are validated once and copied, so later
 * changes to the header cannot move the reader outside the mapping; ring
 * indices are clamped to one ring of records; string offsets and lengths
 * are checked against the string area and the terminating NUL. What fails a
 * check is skipped and counted (struct pt_session_stats), never followed.
 * A segment that another process truncates under the mapping is caught at
 * the next poll (fstat) or, in between, by the SIGBUS guard (session_scan.c,
 * session_int.h): the reader stops reading it and says why, never faults.
 *
 * Opening and validating the segment live in session_open.c; discovery and
 * cleanup of the session directory in session_scan.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proftop/backend.h"
#include "proftop/error.h"
#include "proftop/session.h"
#include "session_int.h"
#include "model/util.h"

void pt_session_set_corr_tag(struct pt_session *s, uint32_t tag)
{
	s->corr_tag = tag <= PT_SESSION_CORR_TAGS ? tag : 1 + (tag - 1) % PT_SESSION_CORR_TAGS;
}

void pt_session_detach(struct pt_session *s)
{
	if (!s)
		return;
	if (pt_session_slot_held(s)) {
		struct pt_shm_reader *rd = &s->h->readers[s->slot];
		STORE_REL(&rd->heartbeat_ns, 0);
		STORE_REL(&rd->pid, 0);
	}
	s->slot = -1;
	if (!s->heartbeat_on)
		return;
	int32_t me = (int32_t)getpid();
	__atomic_compare_exchange_n(&s->h->reader_pid, &me, 0, 0, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
	STORE_REL(&s->h->reader_heartbeat_ns, 0);
	s->heartbeat_on = 0;
}

void pt_session_close(struct pt_session *s)
{
	if (!s)
		return;
	pt_session_copier_stop(s);
	pt_session_detach(s);
	pt_shm_guard_remove(s->guard);
	if (s->mapped)
		munmap(s->base, s->size);
	if (s->fd >= 0)
		close(s->fd);
	if (s->pidfd >= 0)
		close(s->pidfd);
	free(s->names.keys);
	free(s->names.vals);
	free(s->rings);
	free(s->cp);
	pt_session_stage_free(s);
	pthread_cond_destroy(&s->cp_cv);
	pthread_cond_destroy(&s->cp_done_cv);
	pthread_mutex_destroy(&s->cp_mu);
	free(s->path);
	free(s);
}

const struct pt_shm_header *pt_session_header(const struct pt_session *s)
{
	return s->h;
}

const struct pt_session_stats *pt_session_stats(const struct pt_session *s)
{
	return &s->st;
}

void pt_session_describe(const struct pt_session *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s", s->desc);
}

struct pt_shm_header *pt_session_hdr(struct pt_session *s)
{
	return s->h;
}

int32_t pt_session_pid(const struct pt_session *s)
{
	return s->pid;
}

const char *pt_session_file(const struct pt_session *s)
{
	return s->path;
}

const char *pt_session_failed(const struct pt_session *s)
{
	return s->shrunk ? s->why : NULL;
}

int pt_session_reader_slot(const struct pt_session *s)
{
	return pt_session_slot_held(s) ? s->slot : -1;
}

uint64_t pt_session_producer_drops(const struct pt_session *s)
{
	uint64_t d = LOAD_RLX(&s->h->dropped_no_ring) + LOAD_RLX(&s->h->dropped_no_string);
	for (uint32_t i = 0; i < s->nrings; i++) {
		const struct pt_shm_ring *r = (const struct pt_shm_ring *)
			((const char *)s->base + s->rings_offset + (uint64_t)i * s->ring_stride);
		d += LOAD_RLX(&r->dropped) + LOAD_RLX(&r->overwritten);
	}
	return d;
}

/*
 * 1 once the segment's file is shorter than the mapping (another process
 * truncated it; the probe never does) or the SIGBUS guard caught a read past
 * its end. The lost pages are covered with zero pages, and from then on
 * the reader leaves the segment alone and says why.
 */
static int segment_shrunk(struct pt_session *s)
{
	struct stat st;
	if (s->shrunk || s->fd < 0)
		return s->shrunk;
	pt_shm_guard_arm(); /* again if someone replaced our handler */
	if (fstat(s->fd, &st) == 0 && (uint64_t)st.st_size < s->size) {
		pt_shm_guard_cover(s->base, s->size, (size_t)st.st_size);
		snprintf(s->why, sizeof s->why,
			 "segment shrank from %zu to %lld bytes (truncated by another process); "
			 "stopped reading it", s->size, (long long)st.st_size);
		s->shrunk = 1;
	} else if (pt_shm_guard_hit(s->guard)) {
		snprintf(s->why, sizeof s->why,
			 "segment shrank while being read (truncated by another process); "
			 "stopped reading it");
		s->shrunk = 1;
	}
	return s->shrunk;
}

/* ---- exit detection ---- */

/*
 * The owner's pidfd (Linux 5.3+), opened at the first look and checked to be
 * the process the segment names (its start time, after the open: a pid reused
 * just before it is not taken), so that every later look, one after each
 * drain, is a poll() of it and opens no file; -2 where there is none (then
 * kill() and /proc/PID/stat each time, pt_session_pid_gone).
 */
static int owner_pidfd(struct pt_session *s)
{
	if (s->pidfd != -1)
		return s->pidfd;
	s->pidfd = -2;
#ifdef SYS_pidfd_open
	if (s->pid <= 0)
		return -2;
	int fd = (int)syscall(SYS_pidfd_open, (int)s->pid, 0); /* close-on-exec, always */
	if (fd < 0)
		return -2;
	if (s->start_ticks && pt_proc_start_ticks(NULL, s->pid) != s->start_ticks) {
		close(fd);
		return -2;
	}
	s->pidfd = fd;
#endif
	return s->pidfd;
}

/* pt_proc_start_ticks and pt_session_pid_gone are in session_scan.c. A pidfd
 * is readable once its process has exited (a zombie too: it writes nothing
 * more). */
int pt_session_owner_exited(struct pt_session *s)
{
	if (s->exited_seen)
		return 1;
	if (LOAD_ACQ(&s->h->state) == PT_SHM_EXITED) {
		s->exited_seen = 1;
		return 1;
	}
	int fd = owner_pidfd(s);
	if (fd >= 0) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 0) > 0)
			s->exited_seen = 1;
	} else if (pt_session_pid_gone(NULL, s->pid, s->start_ticks)) {
		s->exited_seen = 1;
	}
	return s->exited_seen;
}

/* ---- names ---- */

static uint32_t name_hash(uint32_t off)
{
	return (uint32_t)pt_hash_u64(off);
}

static void names_put(struct name_map *m, uint32_t off, uint32_t id)
{
	if ((m->n + 1) * 2 > m->cap) {
		uint32_t ncap = m->cap ? m->cap * 2 : 1024;
		uint32_t *nk = pt_xcalloc(ncap, sizeof *nk), *nv = pt_xcalloc(ncap, sizeof *nv);
		for (uint32_t i = 0; i < m->cap; i++) {
			if (!m->keys[i])
				continue;
			uint32_t j = name_hash(m->keys[i]) & (ncap - 1);
			while (nk[j])
				j = (j + 1) & (ncap - 1);
			nk[j] = m->keys[i];
			nv[j] = m->vals[i];
		}
		free(m->keys);
		free(m->vals);
		m->keys = nk;
		m->vals = nv;
		m->cap = ncap;
	}
	uint32_t j = name_hash(off) & (m->cap - 1);
	while (m->keys[j] && m->keys[j] != off)
		j = (j + 1) & (m->cap - 1);
	if (!m->keys[j])
		m->n++;
	m->keys[j] = off;
	m->vals[j] = id;
}

/* Validated string at off: its bytes and length, or NULL. */
static const char *string_at(struct pt_session *s, uint32_t off, uint32_t *len)
{
	if (off == 0 || (off & 7) || off >= s->strings_bytes || s->strings_bytes - off < 9)
		return NULL;
	const char *area = (const char *)s->base + s->strings_offset;
	uint32_t n;
	memcpy(&n, area + off, sizeof n);
	if (n > s->strings_bytes - off - 9)
		return NULL;
	const char *bytes = area + off + 8;
	if (bytes[n] != 0)
		return NULL;
	*len = n;
	return bytes;
}

static uint32_t name_id(struct pt_session *s, struct pt_trace *t, uint32_t off)
{
	if (off == 0)
		return 0;
	if (off == s->last_off) /* runs of one name are common (a layer's ops) */
		return s->last_id;
	struct name_map *m = &s->names;
	if (m->cap) {
		uint32_t j = name_hash(off) & (m->cap - 1);
		while (m->keys[j]) {
			if (m->keys[j] == off) {
				s->last_off = off;
				s->last_id = m->vals[j];
				return m->vals[j];
			}
			j = (j + 1) & (m->cap - 1);
		}
	}
	uint32_t len;
	const char *p = string_at(s, off, &len);
	if (!p) {
		s->st.bad_strings++;
		return 0;
	}
	uint32_t id = pt_trace_intern(t, p, len);
	names_put(m, off, id);
	return id;
}

/* ---- draining ---- */

/* Ring rd's track in t, for the owner the copy side last named. */
static void ring_track(struct pt_session *s, struct pt_trace *t, struct ring_rd *rd)
{
	struct pt_track_key key = {s->pid, rd->tid, 0, 0};
	rd->track = pt_trace_track(t, &key);
	rd->have = 1;
	size_t n = strnlen(rd->name, sizeof rd->name - 1);
	if (n)
		pt_trace_set_thread_label(t, &key, pt_trace_intern(t, rd->name, n));
}

static int may_get_ext(uint8_t kind)
{
	return pt_kind_is_device((enum pt_kind)kind) || kind == PT_KIND_CUDA_RUNTIME;
}

static void flush_pending(struct pt_session *s, struct pt_trace *t, struct ring_rd *rd)
{
	if (!rd->pending)
		return;
	rd->pending = 0;
	struct pt_event *ev = &rd->pend;
	if (pt_kind_is_device((enum pt_kind)ev->kind)) {
		int32_t dev = rd->pend_ext ? rd->pend_dev : rd->device;
		if (dev >= 0) {
			char label[32];
			int n = snprintf(label, sizeof label, "GPU %d", (int)dev);
			struct pt_track_key key = {s->pid, rd->pend_stream, pt_trace_intern(t, label, (size_t)n), 0};
			ev->track_id = pt_trace_track(t, &key);
			pt_trace_track_device(t, ev->track_id, dev, rd->pend_stream);
		}
	}
	pt_trace_add(t, ev);
	s->st.events++;
}

/* A collective record and its group record r into t (coll.h). */
static void take_coll(struct pt_session *s, struct pt_trace *t, struct ring_rd *rd,
		      const struct pt_shm_rec *r)
{
	if (!rd->coll) {
		s->st.bad_records++;
		return;
	}
	rd->coll = 0;
	const struct pt_shm_rec *c = &rd->coll_rec;
	struct pt_coll_rec cr = {
		.time_ns = c->start_ns,
		.start_ns = r->start_ns,
		.seq = c->dur_ns,
		.bytes = c->arg,
		.op = name_id(s, t, c->name),
		.group = name_id(s, t, r->name),
		.group_size = r->dur_ns <= UINT32_MAX ? (uint32_t)r->dur_ns : 0,
		.flags = c->aux,
	};
	if (!cr.op) {
		s->st.bad_records++;
		return;
	}
	if (c->flags & PT_SHM_COLL_DONE) {
		pt_trace_coll_done(t, rd->track, &cr);
		s->st.events++;
	} else {
		pt_trace_coll_enter(t, rd->track, &cr);
	}
}

#define KNOWN_FLAGS (PT_EVF_COMM | PT_EVF_SYNC | PT_EVF_GLOBAL | PT_EVF_AUTOGRAD)

static void take_records(struct pt_session *s, struct pt_trace *t, struct ring_rd *rd,
			 const struct pt_shm_rec *recs, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		const struct pt_shm_rec *r = &recs[i];
		if (r->kind < 0x80) {
			flush_pending(s, t, rd);
			if (r->kind >= PT_KIND__COUNT) {
				s->st.bad_records++;
				pt_trace_warn(t, PT_WARN_BAD_EVENT, 1);
				continue;
			}
			if (r->dur_ns > PT_MAX_DUR_NS) {
				pt_trace_warn(t, PT_WARN_HUGE_DUR, 1);
				continue;
			}
			/* the end must fit a signed time, as the Chrome reader demands */
			if (r->start_ns > (uint64_t)INT64_MAX - r->dur_ns) {
				pt_trace_warn(t, PT_WARN_BAD_TS, 1);
				continue;
			}
			if (!may_get_ext(r->kind)) { /* the common case: straight in */
				struct pt_event e = {r->start_ns, r->dur_ns, r->arg,
						     name_id(s, t, r->name), rd->track, 0, r->kind,
						     (uint8_t)(r->flags & KNOWN_FLAGS), 0};
				pt_trace_add(t, &e);
				s->st.events++;
				continue;
			}
			struct pt_event *ev = &rd->pend;
			ev->start_ns = r->start_ns;
			ev->dur_ns = r->dur_ns;
			ev->arg = r->arg;
			ev->name_id = name_id(s, t, r->name);
			ev->track_id = rd->track;
			ev->corr = 0;
			ev->kind = r->kind;
			ev->flags = r->flags & KNOWN_FLAGS;
			ev->reserved = 0;
			rd->pending = 1;
			rd->pend_ext = 0;
			rd->pend_stream = 0;
			rd->pend_seq++;
			continue;
		}
		switch (r->kind) {
		case PT_SHM_REC_EXT:
			if (!rd->pending || rd->pend_ext) {
				s->st.bad_records++;
				break;
			}
			rd->pend.corr = (uint32_t)r->start_ns;
			if (s->corr_tag && rd->pend.corr)
				rd->pend.corr = (rd->pend.corr & 0x07ffffffu) | s->corr_tag << 27;
			rd->pend_ext = 1;
			rd->pend_dev = (int32_t)(r->dur_ns >> 32) & 0x7fffffff;
			rd->pend_stream = (int64_t)(r->dur_ns & 0xffffffffu);
			break;
		case PT_SHM_REC_THREAD_NAME: {
			uint32_t len;
			const char *p = string_at(s, r->name, &len);
			if (!p) {
				s->st.bad_strings++;
				break;
			}
			struct pt_track_key key = t->tracks[rd->track].key;
			pt_trace_set_thread_label(t, &key, pt_trace_intern(t, p, len));
			break;
		}
		case PT_SHM_REC_DEVICE:
			rd->device = r->arg <= 0x7fffffff ? (int32_t)r->arg : -1;
			break;
		case PT_SHM_REC_COLL:
			if (rd->coll)
				s->st.bad_records++; /* its group record never came */
			rd->coll = 1;
			rd->coll_rec = *r;
			continue; /* not a record that a pending event waits behind */
		case PT_SHM_REC_COLL_GROUP:
			take_coll(s, t, rd, r);
			continue;
		default:
			s->st.bad_records++;
			break;
		}
	}
}

/* What happened to records this reader did not get from ring i: lost is
 * the number of indices it skipped (below tail, torn, out of range; at its
 * first look, all those before it attached), ow the ring's new overwritten
 * records (read after the tails, shm.h's order). Skipped ones that an
 * overwrite explains count as overwritten; the others were freed because
 * other readers had read them, before this one attached or while it was
 * stalled: missed by this reader. Only skipped indices are counted, so for
 * every reader records kept + counted = records produced, even when the
 * counter holds records this reader kept: the producer counts against the
 * cursor it last saw, and a reader stopped between its copy and publishing
 * its cursor (SIGSTOP, no other reader attached) kept records the producer
 * then overwrote and counted. Such overwrites stay unmatched (the cause of a
 * later skip may then read "overwritten" for "missed"; the total is exact). */
static void account(struct pt_session *s, struct pt_trace *t, struct ring_rd *rd, uint64_t lost,
		    uint64_t ow, uint64_t before)
{
	rd->ow_unmatched += ow;
	uint64_t matched = lost < rd->ow_unmatched ? lost : rd->ow_unmatched;
	rd->ow_unmatched -= matched;
	if (matched) {
		s->st.overwritten += matched;
		pt_trace_warn(t, PT_WARN_SOURCE_OVERWRITTEN, matched);
	}
	if (lost > matched) {
		s->st.missed += lost - matched;
		pt_trace_warn(t, PT_WARN_READER_MISSED, lost - matched);
	}
	/* the first of them went before this reader attached: overwritten
	 * while nobody read, else freed by the readers there were */
	uint64_t b_ow = before < matched ? before : matched;
	t->before_attach[0] += b_ow;
	t->before_attach[1] += before - b_ow;
}

/* One staged entry into t: ring e->ring's records and what the copy side
 * learnt of the ring with them. */
static void apply_entry(struct pt_session *s, struct pt_trace *t, const struct stage_ent *e)
{
	struct ring_rd *rd = &s->rings[e->ring];
	if (e->flags & STAGE_NEW_OWNER) {
		flush_pending(s, t, rd);
		rd->tid = e->tid;
		memcpy(rd->name, e->name, sizeof rd->name);
		rd->known = 1;
		rd->device = -1;
		rd->have = 0;
	}
	if (!rd->have && rd->known) /* a new owner, or a new trace */
		ring_track(s, t, rd);
	s->st.torn += e->torn;
	s->st.bad_rings += e->bad_rings;
	if (e->n)
		take_records(s, t, rd, (const struct pt_shm_rec *)(e + 1), e->n);
	account(s, t, rd, e->lost, e->ow, e->before);
	if (e->dropped) {
		s->st.source_dropped += e->dropped;
		pt_trace_warn(t, PT_WARN_SOURCE_DROPPED, e->dropped);
	}
	if (e->flags & STAGE_FREED) {
		flush_pending(s, t, rd);
		rd->have = rd->known = 0;
	}
}

/* What was staged into t, in order; then a record held for its EXT since
 * the last drain with nothing after it goes in without one (held one
 * drain at most), and every held one when final. */
static void apply(struct pt_session *s, struct pt_trace *t, const struct stage *g, int final)
{
	for (uint32_t i = 0; i < s->nrings; i++) {
		s->rings[i].carried = s->rings[i].pending;
		s->rings[i].pend_seq0 = s->rings[i].pend_seq;
	}
	for (const struct stage_chunk *c = g->head; c; c = c->next)
		for (size_t off = 0; off + sizeof(struct stage_ent) <= c->len;) {
			const struct stage_ent *e = (const struct stage_ent *)(c->data + off);
			apply_entry(s, t, e);
			off += sizeof *e + (size_t)e->n * sizeof(struct pt_shm_rec);
		}
	for (uint32_t i = 0; i < s->nrings; i++) {
		struct ring_rd *rd = &s->rings[i];
		if (rd->pending && (final || (rd->carried && rd->pend_seq == rd->pend_seq0)))
			flush_pending(s, t, rd);
	}
}

/*
 * What each ring's thread has open now (shm.h: the ring's open ranges) onto
 * its track, for the hang's "what it was doing" (colls.h); read racily, so
 * a name is taken only when its offset is one of the string area's.
 */
static void read_open(struct pt_session *s, struct pt_trace *t)
{
	for (uint32_t i = 0; i < s->nrings; i++) {
		struct ring_rd *rd = &s->rings[i];
		if (!rd->have || rd->track >= t->ntracks)
			continue;
		struct pt_shm_ring *r =
		    (struct pt_shm_ring *)((char *)s->base + s->rings_offset + (uint64_t)i * s->ring_stride);
		struct pt_track *tr = &t->tracks[rd->track];
		uint32_t depth = LOAD_RLX(&r->open_depth);
		if (LOAD_RLX(&r->state) != PT_SHM_RING_ACTIVE)
			depth = 0;
		uint32_t n = depth < PT_SHM_OPEN_MAX ? depth : PT_SHM_OPEN_MAX, k = 0;
		for (uint32_t d = 0; d < n && k < PT_TRACK_OPEN; d++) {
			uint32_t off = LOAD_RLX(&r->open[d].name);
			uint32_t id = off ? name_id(s, t, off) : 0;
			if (!id)
				continue;
			tr->open_name[k] = id;
			tr->open_start[k] = LOAD_RLX(&r->open[d].start_ns);
			k++;
		}
		tr->nopen = k;
	}
}

uint64_t pt_session_drain(struct pt_session *s, struct pt_trace *t, uint64_t now_ns)
{
	if (s->names_of != t) { /* cached ids belong to another trace */
		if (s->names.cap)
			memset(s->names.keys, 0, (size_t)s->names.cap * sizeof *s->names.keys);
		s->names.n = 0;
		s->last_off = 0;
		s->names_of = t;
		/* a record held for its EXT carries the old trace's track and name ids */
		for (uint32_t i = 0; i < s->nrings; i++)
			s->rings[i].have = s->rings[i].pending = 0;
	}
	if (segment_shrunk(s)) {
		/* what the copier took before the file shrank is records */
		uint64_t before = s->st.events;
		pt_session_copier_stop(s);
		struct stage g = s->stage;
		s->stage.head = s->stage.tail = NULL;
		s->stage.bytes = 0;
		apply(s, t, &g, 1);
		pt_session_stage_recycle(s, &g);
		return s->st.events - before;
	}
	int final = pt_session_owner_exited(s);
	if (final) /* the last records: this thread reads them to the end */
		pt_session_copier_stop(s);
	/* the probe's measured cost per event (for the overhead figure);
	 * untrusted: taken only when it is a plausible 1 ps .. 100 us */
	uint64_t cost_ps = __atomic_load_n(&s->h->event_cost_ps, __ATOMIC_RELAXED);
	if (cost_ps > 0 && cost_ps < 100000000ull)
		t->probe_ns_per_event = (double)cost_ps / 1000.0;
	/* the Python helper's cost per wrapped call (same bounds) and its calls,
	 * a count that only grows: each session adds what it grew by */
	uint64_t hcost_ps = __atomic_load_n(&s->h->helper_cost_ps, __ATOMIC_RELAXED);
	if (hcost_ps > 0 && hcost_ps < 100000000ull)
		t->helper_ns_per_call = (double)hcost_ps / 1000.0;
	uint64_t hcalls = __atomic_load_n(&s->h->helper_calls, __ATOMIC_RELAXED);
	if (hcalls > s->helper_calls_seen) {
		t->helper_calls += hcalls - s->helper_calls_seen;
		s->helper_calls_seen = hcalls;
	}
	uint64_t before = s->st.events;
	/* what the copier staged, then what came since: all that was written
	 * before this drain began */
	struct stage g = {NULL, NULL, 0};
	pt_session_copy_take(s, &g, now_ns, final, pt_store_max_bytes(t->store));
	apply(s, t, &g, final);
	if (g.head || pt_session_copier_running(s))
		pt_session_stage_recycle(s, &g);
	/* a job with collectives: what its threads have open, twice a second */
	if (t->colls.n && (now_ns - s->open_read_ns >= 500000000ull || final)) {
		s->open_read_ns = now_ns;
		read_open(s, t);
	}
	uint64_t d = delta_of(LOAD_RLX(&s->h->dropped_no_ring), &s->no_ring_seen);
	d += delta_of(LOAD_RLX(&s->h->dropped_no_string), &s->no_string_seen);
	if (d) {
		s->st.source_dropped += d;
		pt_trace_warn(t, PT_WARN_SOURCE_DROPPED, d);
	}
	return s->st.events - before;
}

/* ---- the "session" backend ---- */

/* The copier's longest gap: a ring of 32768 records holds 33 ms at a
 * million events a second, so a job that goes from idle to that rate
 * between two copies loses nothing (the loop's own drains come every
 * 100 ms when idle, and a rising rate lost up to that period). */
#define COPIER_IDLE_NS 8000000ull

struct session_backend {
	struct pt_backend b;
	struct pt_session *s;
	int labelled;
	int died_said; /* the note on an owner gone without its exit handlers */
	struct pt_capture_follow cf;
};

static int sb_probe(char *why, size_t whylen)
{
	char dir[512];
	int rc = pt_shm_dir(dir, sizeof dir, 0, why, whylen);
	return rc == PT_ENOENT ? 0 : rc; /* no directory yet: sessions may still come */
}

static int sb_open(struct pt_backend **out, const struct pt_backend_args *a, char *err,
		   size_t errlen)
{
	char path[600];
	*out = NULL;
	if (a->session_path) {
		snprintf(path, sizeof path, "%s", a->session_path);
	} else {
		int rc = pt_session_path(a->pid, path, sizeof path, err, errlen);
		if (rc)
			return rc;
	}
	struct pt_session *s;
	int rc = pt_session_open(path, &s, err, errlen);
	if (rc)
		return rc;
	struct session_backend *sb = pt_xcalloc(1, sizeof *sb);
	sb->b.ops = &pt_backend_session;
	sb->s = s;
	pt_session_set_corr_tag(s, a->corr_tag);
	if (a->copier)
		pt_session_copier_start(s, 1000000, COPIER_IDLE_NS);
	*out = &sb->b;
	return 0;
}

/* 1 when the session's name still leads to the segment read: an owner
 * that exec'd another program left its name to the new image's segment
 * (it did not die, it became another program). */
static int still_named(const struct pt_session *s)
{
	struct stat a, n;
	if (s->fd < 0 || fstat(s->fd, &a) != 0 || stat(s->path, &n) != 0)
		return 0;
	return a.st_dev == n.st_dev && a.st_ino == n.st_ino;
}

/* The note as an instant event on the process's main thread, at its last
 * event: a recording keeps it (notes come from such events when read). */
static void died_note(struct pt_session *s, struct pt_trace *t, const char *text)
{
	char buf[200];
	int n = snprintf(buf, sizeof buf, "%s%s", PT_NOTE_PREFIX, text);
	struct pt_track_key key = {s->pid, s->pid, 0, 0};
	struct pt_event ev = {0};
	ev.start_ns = t->last_ns;
	ev.name_id = pt_trace_intern(t, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
	ev.track_id = pt_trace_track(t, &key);
	ev.kind = PT_KIND_INSTANT;
	pt_trace_add(t, &ev);
}

static int sb_poll(struct pt_backend *b, struct pt_trace *t, uint64_t now_ns)
{
	struct session_backend *sb = (struct session_backend *)b;
	if (!sb->labelled) {
		const struct pt_shm_header *h = sb->s->h;
		if (h->rank >= 0)
			t->rank = h->rank;
		if (h->world_size > 0)
			t->world_size = h->world_size;
		sb->labelled = 1;
	}
	int exited = pt_session_owner_exited(sb->s);
	struct pt_shm_ctl ctl; /* before the drain: what the helper wrote before it is drained */
	if (!sb->s->shrunk)
		pt_shm_ctl_read(sb->s->h, &ctl);
	uint64_t n = pt_session_drain(sb->s, t, now_ns);
	if (!sb->s->shrunk)
		pt_session_capture_follow(sb->s, t, &ctl, &sb->cf, exited, now_ns);
	if (exited) {
		snprintf(b->err, sizeof b->err, "process %d exited", (int)sb->s->pid);
		/* gone without its exit handlers: killed (a rank torchrun ended
		 * after another failed, the OOM killer) or os._exit */
		if (!sb->died_said && LOAD_ACQ(&sb->s->h->state) != PT_SHM_EXITED &&
		    still_named(sb->s)) {
			char note[160];
			int32_t rank = sb->s->h->rank;
			if (rank >= 0)
				snprintf(note, sizeof note,
					 "rank %d (pid %d) died: it ended without running its exit "
					 "handlers (killed, or os._exit); its last step may be missing",
					 (int)rank, (int)sb->s->pid);
			else
				snprintf(note, sizeof note,
					 "pid %d died: it ended without running its exit handlers "
					 "(killed, or os._exit); its last step may be missing",
					 (int)sb->s->pid);
			died_note(sb->s, t, note);
			sb->died_said = 1;
		}
		pt_trace_proc_ended(t, sb->s->pid, sb->died_said ? 2 : 1);
		return PT_ENOENT;
	}
	if (sb->s->shrunk) {
		snprintf(b->err, sizeof b->err, "%s", sb->s->why);
		return PT_ETRUNC;
	}
	/* a quarter of a ring's worth came in one poll: the rings are filling
	 * faster than the poll period empties them, ask to be polled soon; with
	 * a copier emptying them, a quarter of what it may hold */
	uint64_t room = pt_session_copier_running(sb->s) ? sb->s->stage_cap / sizeof(struct pt_shm_rec)
							 : sb->s->ring_slots;
	return n >= room / 4 ? PT_BACKEND_BUSY : 0;
}

static void sb_close(struct pt_backend *b)
{
	struct session_backend *sb = (struct session_backend *)b;
	if (!sb)
		return;
	pt_session_close(sb->s);
	free(sb);
}

static const char *sb_last_error(const struct pt_backend *b)
{
	return b->err;
}

static void sb_describe(const struct pt_backend *b, char *buf, size_t len)
{
	const struct session_backend *sb = (const struct session_backend *)b;
	snprintf(buf, len, "%s%s%s%s", sb->s->desc, sb->s->exited_seen ? " [exited]" : "",
		 sb->s->shrunk ? " [segment truncated, not read]" : "",
		 sb->s->no_slot ? " [all reader slots taken: reading without one]" : "");
}

/* The session behind a backend opened by pt_backend_session (for the faces). */
struct pt_session *pt_backend_session_of(struct pt_backend *b)
{
	return b && b->ops == &pt_backend_session ? ((struct session_backend *)b)->s : NULL;
}

const struct pt_backend_ops pt_backend_session = {
	.name = "session",
	.probe = sb_probe,
	.open = sb_open,
	.poll = sb_poll,
	.close = sb_close,
	.last_error = sb_last_error,
	.describe = sb_describe,
};
