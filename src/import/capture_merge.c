/*
 * capture_merge.c - merging a deep capture's Chrome trace into the live
 * trace on the session clock (pt_capture_merge, capture.h).
 *
 * Alignment: the job records a marker range "proftop/sync#<seq>" inside
 * torch's profiler and reads the session clock just before (lo) and just
 * after (hi) it (the last of its tries, when a bracket came out too wide). On the session clock the marker lies within [lo, hi], so
 * the offset o between the trace's clock and the session's satisfies
 * lo - m.start <= o <= hi - m.end; the middle of that interval is taken,
 * and half its width is the alignment's uncertainty. Torch's clock (the
 * legacy profiler's microseconds since its start, Kineto's wall-clock
 * microseconds) needs nothing else, whatever its origin.
 */
#include "proftop/capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/chrome.h"
#include "proftop/error.h"
#include "model/u32map.h"
#include "model/util.h"

#define CAPTURE_MAX_MEM ((size_t)512 << 20) /* a capture's own trace while merging */

struct find_ctx {
	uint32_t name;
	const struct pt_event *m;
	uint64_t steps;
};

/* The job records the marker again while its bracket was too wide (the
 * thread preempted): the last one is the one bracketed. */
static int find_marker(void *ctx, struct pt_event *ev)
{
	struct find_ctx *f = ctx;
	if (ev->name_id == f->name && ev->kind != PT_KIND_INSTANT &&
	    (!f->m || ev->start_ns > f->m->start_ns))
		f->m = ev;
	return 0;
}

struct merge_ctx {
	struct pt_trace *dst;
	const struct pt_trace *src;
	const struct pt_event *marker;
	int64_t off;           /* dst = src + off */
	uint32_t *track_map;   /* src track -> dst track + 1 */
	struct pt_u32map names;
	int64_t pid;
	int32_t tid;
	uint64_t events, flop_events, skipped;
	uint64_t t_min, t_max;
};

static uint32_t map_name(struct merge_ctx *m, uint32_t id)
{
	if (!id)
		return 0;
	uint32_t v = pt_u32map_get(&m->names, id);
	if (v)
		return v - 1;
	const char *s = pt_trace_str(m->src, id);
	v = pt_trace_intern(m->dst, s, pt_strtab_len(m->src->strings, id));
	pt_u32map_put(&m->names, id, v + 1);
	return v;
}

static uint32_t map_track(struct merge_ctx *m, uint32_t src_track)
{
	if (m->track_map[src_track])
		return m->track_map[src_track] - 1;
	const struct pt_track *st = &m->src->tracks[src_track];
	struct pt_track_key k = {m->pid, 0, 0, 0};
	uint32_t id;
	if (pt_track_is_device(st)) {
		/* as the session reader names device streams: "GPU n", stream */
		char label[32];
		int n = snprintf(label, sizeof label, "GPU %d", (int)st->device);
		k.tid = st->stream;
		k.pid_str = pt_trace_intern(m->dst, label, (size_t)n);
		id = pt_trace_track(m->dst, &k);
		pt_trace_track_device(m->dst, id, st->device, st->stream);
	} else {
		const struct pt_track *mt = &m->src->tracks[m->marker->track_id];
		if (st->key.pid == mt->key.pid && st->key.pid_str == mt->key.pid_str &&
		    st->key.tid == mt->key.tid && st->key.tid_str == mt->key.tid_str) {
			k.tid = m->tid; /* the thread whose steps were captured */
		} else if (st->key.tid_str) {
			k.tid_str = map_name(m, st->key.tid_str);
		} else {
			k.tid = st->key.tid; /* Kineto: the system's thread id */
		}
		id = pt_trace_track(m->dst, &k);
		if (st->label && !m->dst->tracks[id].label)
			pt_trace_set_thread_label(m->dst, &k, map_name(m, st->label));
	}
	m->track_map[src_track] = id + 1;
	return id;
}

static int add_event(void *ctx, struct pt_event *ev)
{
	struct merge_ctx *m = ctx;
	if (ev->name_id == m->marker->name_id || ev->kind == PT_KIND_PROFILE_STEP ||
	    (ev->flags & PT_EVF_INTERNAL) || ev->kind == PT_KIND_COUNTER) {
		m->skipped++;
		return 0;
	}
	int64_t start = (int64_t)ev->start_ns + m->off;
	if (start < 0) {
		m->skipped++;
		return 0;
	}
	struct pt_event e = *ev;
	e.start_ns = (uint64_t)start;
	e.name_id = map_name(m, ev->name_id);
	e.track_id = map_track(m, ev->track_id);
	/* apart from proftop's own CUPTI ids (which stay below 2^31) */
	if (e.corr)
		e.corr |= 0x80000000u;
	pt_trace_add(m->dst, &e);
	m->events++;
	if (e.flags & PT_EVF_FLOPS)
		m->flop_events++;
	if (e.start_ns < m->t_min)
		m->t_min = e.start_ns;
	if (pt_event_end(&e) > m->t_max)
		m->t_max = pt_event_end(&e);
	return 0;
}

static void add_instant(struct pt_trace *t, int64_t pid, int32_t tid, uint64_t at, const char *name)
{
	struct pt_track_key k = {pid, tid, 0, 0};
	struct pt_event e = {0};
	e.start_ns = at;
	e.name_id = pt_trace_intern(t, name, strlen(name));
	e.track_id = pt_trace_track(t, &k);
	e.kind = PT_KIND_INSTANT;
	pt_trace_add(t, &e);
}

int pt_capture_merge(struct pt_trace *t, struct pt_capture *c, const char *path, int32_t tid,
		     uint64_t sync_lo_ns, uint64_t sync_hi_ns, char *err, size_t errlen)
{
	struct pt_trace *src = pt_trace_new(CAPTURE_MAX_MEM);
	/* the job wrote it: a regular file of ours, read up to its size */
	struct pt_read_opts ro = {.threads = 1, .job_file = 1};
	int rc = pt_chrome_read(src, path, &ro, err, errlen);
	if (rc) {
		pt_trace_free(src);
		return rc;
	}
	char mname[48];
	int ml = snprintf(mname, sizeof mname, "proftop/sync#%u", c->seq);
	struct find_ctx f = {pt_strtab_find(src->strings, mname, (size_t)ml), NULL, 0};
	if (f.name)
		pt_store_foreach(src->store, find_marker, &f);
	if (!f.m) {
		snprintf(err, errlen, "%s: no marker %s in the capture: cannot place it in time", path,
			 mname);
		pt_trace_free(src);
		return PT_EFORMAT;
	}
	if (sync_hi_ns < sync_lo_ns || !sync_lo_ns) {
		snprintf(err, errlen, "the job reported no clock bracket for capture #%u", c->seq);
		pt_trace_free(src);
		return PT_EFORMAT;
	}
	int64_t lo = (int64_t)sync_lo_ns - (int64_t)f.m->start_ns;
	int64_t hi = (int64_t)sync_hi_ns - (int64_t)pt_event_end(f.m);
	struct merge_ctx m;
	memset(&m, 0, sizeof m);
	m.off = lo <= hi ? lo + (hi - lo) / 2
			 : (int64_t)(sync_lo_ns / 2 + sync_hi_ns / 2) -
			       (int64_t)(f.m->start_ns + f.m->dur_ns / 2);
	c->sync_err_ns = (uint64_t)(lo <= hi ? (hi - lo) / 2 : (lo - hi) / 2);
	m.dst = t;
	m.src = src;
	m.marker = f.m;
	m.pid = c->pid;
	m.tid = tid;
	m.t_min = UINT64_MAX;
	m.track_map = pt_xcalloc(src->ntracks + 1, sizeof *m.track_map);
	pt_store_foreach(src->store, add_event, &m);
	if (src->device_name && !t->device_name) { /* Kineto's deviceProperties: the peak */
		const char *dn = pt_trace_str(src, src->device_name);
		t->device_name = pt_trace_intern(t, dn, strlen(dn));
	}
	c->events = m.events;
	c->flop_events = m.flop_events;
	char label[64];
	snprintf(label, sizeof label, "torch.profiler capture #%u begins", c->seq);
	add_instant(t, c->pid, tid, c->t0_ns ? c->t0_ns : m.t_min, label);
	snprintf(label, sizeof label, "torch.profiler capture #%u ends", c->seq);
	add_instant(t, c->pid, tid, c->t1_ns ? c->t1_ns : m.t_max, label);
	free(m.track_map);
	pt_u32map_free(&m.names);
	pt_trace_free(src);
	pt_capture_touch(t);
	return 0;
}

/* ---- cost ---- */
