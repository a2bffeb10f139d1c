/*
 * merge.c - joins per-rank traces into one (merge.h): every input becomes
 * one process lane (all its tracks, host and device, under one pid, with
 * thread and stream lanes keeping distinct tids), names and correlation ids
 * are re-keyed into the merged trace (ranks reuse correlation ids, so each
 * input's get fresh ones and launch arrows stay within their rank), and
 * each input's clock is lined up with the first input's on their first
 * common step boundary when the two clocks differ. Ranks come from the
 * inputs (Kineto's distributedInfo, proftop's own export) or, when missing
 * or repeated, from the inputs' order; pt_merge_finish records them in the
 * process table and as otherData for the export, so the merged file reads
 * back with its ranks.
 */
#include "import/merge.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/store.h"
#include "model/u32map.h"
#include "model/u64map.h"
#include "model/util.h"

/* A step of the reference (or of the input being added). */
struct mstep {
	int64_t number;
	uint64_t start_ns, dur_ns;
};

/* Keys used within one lane: (tid, tid_str). */
struct kset_ent {
	int64_t tid;
	uint32_t tid_str;
	uint32_t lane1; /* lane + 1, 0 = empty */
};

struct kset {
	struct kset_ent *e;
	size_t mask, n;
};

struct pt_merge_priv {
	struct mstep *ref; /* the first input's steps, by number */
	size_t nref;
	uint64_t ref_first_step_ns; /* start of its first step in time */
	uint64_t ref_first_ns;	    /* its first event */
	int have_ref, ref_has_events;
	uint32_t next_corr;
	struct kset keys;
	struct pt_u64map pids; /* lane pids taken (value 1) */
	int64_t next_fresh;    /* the next pid to try for a lane whose own is taken */
	size_t lanes_cap, in_cap;
};

static uint64_t kset_hash(size_t lane, int64_t tid, uint32_t tid_str)
{
	return pt_hash_u64((uint64_t)tid * 0x9e3779b97f4a7c15ull ^ ((uint64_t)tid_str << 20) ^
			   (uint64_t)lane);
}

/* Inserts the key; returns 0 when it was already there. */
static int kset_add(struct kset *s, size_t lane, int64_t tid, uint32_t tid_str)
{
	if ((s->n + 1) * 2 > s->mask) {
		size_t nmask = s->mask ? s->mask * 2 + 1 : 63;
		struct kset_ent *ne = pt_xcalloc(nmask + 1, sizeof *ne);
		for (size_t i = 0; s->e && i <= s->mask; i++) {
			if (!s->e[i].lane1)
				continue;
			size_t j =
			    kset_hash(s->e[i].lane1 - 1, s->e[i].tid, s->e[i].tid_str) & nmask;
			while (ne[j].lane1)
				j = (j + 1) & nmask;
			ne[j] = s->e[i];
		}
		free(s->e);
		s->e = ne;
		s->mask = nmask;
	}
	size_t i = kset_hash(lane, tid, tid_str) & s->mask;
	for (;; i = (i + 1) & s->mask) {
		struct kset_ent *e = &s->e[i];
		if (!e->lane1) {
			*e = (struct kset_ent){tid, tid_str, (uint32_t)lane + 1};
			s->n++;
			return 1;
		}
		if (e->lane1 == lane + 1 && e->tid == tid && e->tid_str == tid_str)
			return 0;
	}
}

struct step_scan {
	const struct pt_trace *t;
	struct mstep *v;
	size_t n, cap;
};

static int scan_step(void *ctx, struct pt_event *ev)
{
	struct step_scan *c = ctx;
	if (ev->kind != PT_KIND_PROFILE_STEP)
		return 0;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->v = pt_xrealloc(c->v, c->cap * sizeof *c->v);
	}
	c->v[c->n++] =
	    (struct mstep){pt_step_number(pt_trace_str(c->t, ev->name_id)), ev->start_ns, ev->dur_ns};
	return 0;
}

static int by_start(const void *pa, const void *pb)
{
	const struct mstep *a = pa, *b = pb;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return a->number < b->number ? -1 : a->number > b->number;
}

static int by_number(const void *pa, const void *pb)
{
	const struct mstep *a = pa, *b = pb;
	if (a->number != b->number)
		return a->number < b->number ? -1 : 1;
	return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

/*
 * The steps of t by number (unnumbered ones by their ordinal), each number
 * once at its earliest start; *first_ns gets the start of the first step in
 * time. Returns the count.
 */
static size_t collect_steps(struct pt_trace *t, struct mstep **out, uint64_t *first_ns)
{
	struct step_scan c = {t, NULL, 0, 0};
	pt_store_foreach(t->store, scan_step, &c);
	*first_ns = 0;
	if (!c.n) {
		*out = NULL;
		return 0;
	}
	qsort(c.v, c.n, sizeof *c.v, by_start);
	*first_ns = c.v[0].start_ns;
	for (size_t i = 0; i < c.n; i++)
		if (c.v[i].number < 0)
			c.v[i].number = (int64_t)i;
	qsort(c.v, c.n, sizeof *c.v, by_number);
	size_t k = 0;
	for (size_t i = 0; i < c.n; i++)
		if (!k || c.v[k - 1].number != c.v[i].number)
			c.v[k++] = c.v[i];
	*out = c.v;
	return k;
}

struct pt_merge *pt_merge_new(const struct pt_merge_opts *o)
{
	struct pt_merge *m = pt_xcalloc(1, sizeof *m);
	if (o)
		m->o = *o;
	if (!m->o.align_min_ns)
		m->o.align_min_ns = PT_MERGE_ALIGN_MIN_NS;
	m->t = pt_trace_new(m->o.max_mem_bytes);
	m->priv = pt_xcalloc(1, sizeof *m->priv);
	m->priv->next_corr = 1;
	return m;
}

/* Decides the clock offset of input in (m->in[m->nin - 1]). */
static void align_input(struct pt_merge *m, struct pt_trace *in, struct pt_merge_input *mi)
{
	struct pt_merge_priv *p = m->priv;
	struct mstep *st = NULL;
	uint64_t first_step = 0;
	size_t nst = collect_steps(in, &st, &first_step);
	int has_events = pt_store_count(in->store) > 0;
	uint64_t first_ns = pt_store_first_ns(in->store);
	mi->step = -1;
	if (!p->have_ref) {
		p->have_ref = 1;
		p->ref = st;
		p->nref = nst;
		p->ref_first_step_ns = first_step;
		p->ref_first_ns = first_ns;
		p->ref_has_events = has_events;
		mi->how = PT_MERGE_REFERENCE;
		return;
	}
	uint64_t mine = 0, theirs = 0;
	if (m->o.align == PT_MERGE_ALIGN_NONE || !has_events || !p->ref_has_events) {
		mi->how = PT_MERGE_NOT_ALIGNED;
		free(st);
		return;
	}
	mi->how = PT_MERGE_BY_FIRST_EVENT;
	mine = first_ns;
	theirs = p->ref_first_ns;
	if (nst && p->nref) {
		mi->how = PT_MERGE_BY_FIRST_STEP;
		mine = first_step;
		theirs = p->ref_first_step_ns;
		for (size_t i = 0, j = 0; i < nst && j < p->nref;) {
			if (st[i].number < p->ref[j].number) {
				i++;
			} else if (st[i].number > p->ref[j].number) {
				j++;
			} else {
				mi->how = PT_MERGE_BY_STEP;
				mi->step = st[i].number;
				mine = st[i].start_ns;
				theirs = p->ref[j].start_ns;
				break;
			}
		}
	}
	free(st);
	mi->diff_ns = (int64_t)(theirs - mine);
	uint64_t mag =
	    mi->diff_ns < 0 ? (uint64_t)0 - (uint64_t)mi->diff_ns : (uint64_t)mi->diff_ns;
	if (mag < m->o.align_min_ns)
		return; /* one clock: the difference is the ranks' own skew */
	mi->shifted = 1;
	mi->offset_ns = mi->diff_ns;
	if (mi->offset_ns < 0 && (uint64_t)0 - (uint64_t)mi->offset_ns > first_ns) {
		/* timestamps are unsigned: shift as far as the first event allows */
		mi->offset_ns = -(int64_t)first_ns;
		mi->clamped = 1;
	}
}

/* A pid for a new lane: want if no lane has it yet, else a fresh one from
 * 1000000000 on (a set of the pids taken and a cursor that only moves on:
 * thousands of inputs of the same pid cost one probe each, not a scan of
 * every lane per candidate). */
static int64_t lane_pid(struct pt_merge *m, int64_t want)
{
	struct pt_merge_priv *p = m->priv;
	int64_t cand = want;
	if (cand <= 0 || pt_u64map_get(&p->pids, (uint64_t)cand)) {
		if (p->next_fresh < 1000000000)
			p->next_fresh = 1000000000;
		while (pt_u64map_get(&p->pids, (uint64_t)p->next_fresh))
			p->next_fresh++;
		cand = p->next_fresh++;
	}
	pt_u64map_put(&p->pids, (uint64_t)cand, 1);
	return cand;
}

static size_t add_lane(struct pt_merge *m, size_t input, int64_t want_pid, int64_t rank,
		       const struct pt_trace *in, uint32_t host)
{
	if (m->nlanes == m->priv->lanes_cap) {
		m->priv->lanes_cap = m->priv->lanes_cap ? m->priv->lanes_cap * 2 : 16;
		m->lanes = pt_xrealloc(m->lanes, m->priv->lanes_cap * sizeof *m->lanes);
	}
	struct pt_merge_lane *l = &m->lanes[m->nlanes];
	memset(l, 0, sizeof *l);
	l->input = input;
	l->pid = lane_pid(m, want_pid);
	l->claimed_rank = rank;
	l->rank = -1;
	if (host) {
		const char *h = pt_trace_str(in, host);
		snprintf(l->host, sizeof l->host, "%s", h);
	}
	return m->nlanes++;
}

/* The host pid of in with the most events (its main process), 0 if none. */
static int64_t main_pid(const struct pt_trace *in)
{
	struct pc {
		int64_t pid;
		uint64_t n;
	} *v = pt_xcalloc(in->ntracks ? in->ntracks : 1, sizeof *v);
	size_t nv = 0;
	for (uint32_t i = 0; i < in->ntracks; i++) {
		const struct pt_track *tr = &in->tracks[i];
		if (pt_track_is_device(tr) || tr->key.pid_str)
			continue;
		size_t j = 0;
		while (j < nv && v[j].pid != tr->key.pid) /* a few processes: a scan */
			j++;
		if (j == nv)
			v[nv++] = (struct pc){tr->key.pid, 0};
		v[j].n += tr->events;
	}
	int64_t best = 0;
	uint64_t best_n = 0;
	for (size_t j = 0; j < nv; j++)
		if (v[j].n > best_n) {
			best_n = v[j].n;
			best = v[j].pid;
		}
	free(v);
	return best;
}

/* Re-keys one string of in into the merged trace (cached in map, nmap ids). */
static uint32_t remap_str(struct pt_trace *out, const struct pt_trace *in, uint32_t *map,
			  uint32_t nmap, uint32_t id)
{
	if (!id)
		return 0;
	if (id >= nmap) /* not in the table when the map was sized: no caching */
		return pt_trace_intern(out, pt_trace_str(in, id), pt_strtab_len(in->strings, id));
	if (!map[id])
		map[id] =
		    pt_trace_intern(out, pt_trace_str(in, id), pt_strtab_len(in->strings, id)) + 1;
	return map[id] - 1;
}

/* The merged key of in's track tr within lane (distinct from every other track's). */
static struct pt_track_key lane_key(struct pt_merge *m, struct pt_trace *in, size_t lane,
				    const struct pt_track *tr, uint32_t tid_str)
{
	struct pt_track_key k = {m->lanes[lane].pid, tr->key.tid, 0, tid_str};
	if (kset_add(&m->priv->keys, lane, k.tid, k.tid_str))
		return k;
	if (tid_str) {
		/* a string tid taken by another process of the input: prefix the pid */
		char pre[64];
		const char *ts = pt_trace_str(in, tr->key.tid_str);
		if (tr->key.pid_str)
			snprintf(pre, sizeof pre, "%.40s/", pt_trace_str(in, tr->key.pid_str));
		else
			snprintf(pre, sizeof pre, "%" PRId64 "/", tr->key.pid);
		struct pt_buf b = {0};
		for (int n = 0;; n++) {
			b.len = 0;
			pt_buf_printf(&b, "%s%s", pre, ts);
			if (n)
				pt_buf_printf(&b, "#%d", n);
			k.tid_str = pt_trace_intern(m->t, b.p, b.len);
			if (kset_add(&m->priv->keys, lane, k.tid, k.tid_str))
				break;
		}
		pt_buf_free(&b);
		return k;
	}
	/* a device stream numbered like a host thread or another device's stream */
	int64_t base = pt_track_is_device(tr)
			   ? (int64_t)((uint64_t)(tr->device + 1) << 32 | (uint32_t)tr->stream)
			   : tr->key.tid;
	for (int64_t n = 0;; n++) {
		k.tid = base + n * ((int64_t)1 << 40);
		if (kset_add(&m->priv->keys, lane, k.tid, 0))
			return k;
	}
}

void pt_merge_add(struct pt_merge *m, struct pt_trace *in, const char *name)
{
	pt_store_sort(in->store);
	if (m->nin == m->priv->in_cap) {
		m->priv->in_cap = m->priv->in_cap ? m->priv->in_cap * 2 : 16;
		m->in = pt_xrealloc(m->in, m->priv->in_cap * sizeof *m->in);
	}
	struct pt_merge_input *mi = &m->in[m->nin];
	memset(mi, 0, sizeof *mi);
	size_t input = m->nin++;
	mi->name = pt_xstrdup(name ? name : "");
	align_input(m, in, mi);

	/* lanes: one, or one per rank of an input that is itself a merge */
	size_t lane0 = m->nlanes;
	if (in->nprocs >= 2) {
		for (uint32_t i = 0; i < in->nprocs; i++)
			add_lane(m, input, in->procs[i].pid, in->procs[i].rank, in,
				 in->procs[i].host);
	} else {
		int64_t pid = main_pid(in);
		const struct pt_proc *pp = in->nprocs ? &in->procs[0] : NULL;
		int64_t rank = pp && pp->rank >= 0 ? pp->rank : in->rank;
		add_lane(m, input, pid, rank, in, pp ? pp->host : 0);
	}
	size_t nlanes_in = m->nlanes - lane0;
	int64_t main = nlanes_in > 1 ? in->procs[0].pid : main_pid(in);

	uint32_t nmap = pt_strtab_count(in->strings) + 1;
	uint32_t *smap = pt_xcalloc(nmap, sizeof *smap);
	uint32_t *tmap = pt_xcalloc(in->ntracks ? in->ntracks : 1, sizeof *tmap);
	size_t *tlane = pt_xcalloc(in->ntracks ? in->ntracks : 1, sizeof *tlane);
	/* main-process host threads first: they keep their tids */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < in->ntracks; i++) {
			const struct pt_track *tr = &in->tracks[i];
			size_t lane = lane0;
			int64_t lane_main = main;
			if (nlanes_in > 1 && !tr->key.pid_str)
				for (size_t l = 0; l < nlanes_in; l++)
					if (in->procs[l].pid == tr->key.pid) {
						lane = lane0 + l;
						lane_main = tr->key.pid;
					}
			/* the lane's own host threads */
			int first =
			    !pt_track_is_device(tr) && !tr->key.pid_str && tr->key.pid == lane_main;
			if (first != !pass)
				continue;
			uint32_t tid_str = remap_str(m->t, in, smap, nmap, tr->key.tid_str);
			struct pt_track_key k = lane_key(m, in, lane, tr, tid_str);
			uint32_t id = pt_trace_track(m->t, &k);
			tmap[i] = id;
			tlane[i] = lane;
			if (tr->label)
				pt_trace_set_thread_label(
				    m->t, &k, remap_str(m->t, in, smap, nmap, tr->label));
			if (tr->sort_index)
				pt_trace_set_thread_sort(m->t, &k, tr->sort_index);
			if (pt_track_is_device(tr))
				pt_trace_track_device(m->t, id, tr->device, tr->stream);
		}
	}

	/* the events, shifted, renamed and with fresh correlation ids */
	struct pt_u32map corr = {0};
	uint32_t ntr = pt_store_track_count(in->store);
	if (ntr > in->ntracks)
		ntr = in->ntracks;
	int64_t off = mi->offset_ns;
	for (uint32_t i = 0; i < ntr; i++) {
		struct pt_store_iter it;
		pt_store_iter_init(&it, in->store, i, 0, UINT64_MAX);
		const struct pt_event *ev;
		uint64_t n = 0;
		while ((ev = pt_store_iter_next(&it))) {
			struct pt_event e = *ev;
			e.start_ns = (uint64_t)((int64_t)e.start_ns + off);
			e.track_id = tmap[i];
			e.name_id = remap_str(m->t, in, smap, nmap, ev->name_id);
			if (e.corr) {
				uint32_t c = pt_u32map_get(&corr, ev->corr);
				if (!c) {
					c = m->priv->next_corr++;
					if (!m->priv->next_corr)
						m->priv->next_corr = 1;
					pt_u32map_put(&corr, ev->corr, c);
				}
				e.corr = c;
			}
			pt_trace_add(m->t, &e);
			n++;
		}
		pt_store_iter_done(&it);
		mi->events += n;
		m->lanes[tlane[i]].events += n;
	}
	pt_u32map_free(&corr);
	/* the collectives (coll.h), on the same clock and lanes as the events */
	for (size_t i = 0; i < in->colls.n; i++) {
		struct pt_coll row = in->colls.v[i];
		if (row.track >= in->ntracks)
			continue;
		row.track = tmap[row.track];
		row.start_ns = (uint64_t)((int64_t)row.start_ns + off);
		if (row.end_ns)
			row.end_ns = (uint64_t)((int64_t)row.end_ns + off);
		row.op = remap_str(m->t, in, smap, nmap, row.op);
		row.group = remap_str(m->t, in, smap, nmap, row.group);
		pt_trace_coll_row(m->t, &row);
	}
	/* what the input skipped or lost stays counted */
	for (int w = 0; w < PT_WARN__COUNT; w++)
		pt_trace_warn(m->t, (enum pt_warn)w, in->warnings[w]);
	free(smap);
	free(tmap);
	free(tlane);
}

static const char *how_text(const struct pt_merge_input *mi, char *buf, size_t len)
{
	switch (mi->how) {
	case PT_MERGE_REFERENCE:
		return "reference";
	case PT_MERGE_BY_STEP:
		snprintf(buf, len, "step %" PRId64, mi->step);
		return buf;
	case PT_MERGE_BY_FIRST_STEP:
		return "first step";
	case PT_MERGE_BY_FIRST_EVENT:
		return "first event";
	default:
		return "none";
	}
}

void pt_merge_finish(struct pt_merge *m)
{
	/* ranks as the inputs claim them, unless some are missing or repeated */
	m->ranks_from_order = 0;
	struct pt_u64map seen = {0}; /* claimed ranks: one repeated means input order */
	for (size_t i = 0; i < m->nlanes && !m->ranks_from_order; i++) {
		int64_t r = m->lanes[i].claimed_rank;
		if (r < 0 || pt_u64map_get(&seen, (uint64_t)r))
			m->ranks_from_order = 1;
		else
			pt_u64map_put(&seen, (uint64_t)r, 1);
	}
	pt_u64map_free(&seen);
	for (size_t i = 0; i < m->nlanes; i++) {
		struct pt_merge_lane *l = &m->lanes[i];
		l->rank = m->ranks_from_order ? (int64_t)i : l->claimed_rank;
		pt_trace_set_proc(m->t, l->pid, l->rank, l->host[0] ? l->host : NULL);
		char name[32];
		int n = snprintf(name, sizeof name, "rank %" PRId64, l->rank);
		struct pt_track_key k = {l->pid, 0, 0, 0};
		pt_trace_set_process_label(m->t, &k, pt_trace_intern(m->t, name, (size_t)n));
	}
	char src[64];
	snprintf(src, sizeof src, "merge of %zu traces", m->nin);
	pt_trace_set_source(m->t, src);

	struct pt_buf b = {0};
	pt_buf_printf(&b,
		      "\"merge\":{\"align\":\"%s\",\"align_min_ns\":%" PRIu64
		      ",\"ranks_from\":\"%s\",\"inputs\":[",
		      m->o.align == PT_MERGE_ALIGN_NONE ? "none" : "steps", m->o.align_min_ns,
		      m->ranks_from_order ? "input order" : "inputs");
	size_t lane = 0; /* an input's lanes are made together, in input order */
	for (size_t i = 0; i < m->nin; i++) {
		const struct pt_merge_input *mi = &m->in[i];
		char hb[48];
		pt_buf_printf(&b, "%s{\"file\":", i ? "," : "");
		pt_buf_json_str(&b, mi->name, strlen(mi->name));
		pt_buf_printf(&b, ",\"ranks\":[");
		int nr = 0;
		while (lane < m->nlanes && m->lanes[lane].input < i)
			lane++;
		for (; lane < m->nlanes && m->lanes[lane].input == i; lane++)
			pt_buf_printf(&b, "%s%" PRId64, nr++ ? "," : "", m->lanes[lane].rank);
		pt_buf_printf(&b,
			      "],\"aligned_on\":\"%s\",\"clock_offset_ns\":%" PRId64
			      ",\"difference_ns\":%" PRId64 ",\"events\":%" PRIu64 "}",
			      how_text(mi, hb, sizeof hb), mi->offset_ns, mi->diff_ns, mi->events);
	}
	pt_buf_printf(&b, "]},\"clock_offsets_ns\":{");
	for (size_t l = 0; l < m->nlanes; l++)
		pt_buf_printf(&b, "%s\"rank %" PRId64 "\":%" PRId64, l ? "," : "", m->lanes[l].rank,
			      m->in[m->lanes[l].input].offset_ns);
	pt_buf_putc(&b, '}');
	pt_buf_putc(&b, '\0');
	free(m->other_json);
	m->other_json = b.p;
}

struct pt_trace *pt_merge_take_trace(struct pt_merge *m)
{
	struct pt_trace *t = m->t;
	m->t = NULL;
	return t;
}

void pt_merge_free(struct pt_merge *m)
{
	if (!m)
		return;
	pt_trace_free(m->t);
	for (size_t i = 0; i < m->nin; i++)
		free(m->in[i].name);
	free(m->in);
	free(m->lanes);
	free(m->other_json);
	free(m->priv->ref);
	free(m->priv->keys.e);
	pt_u64map_free(&m->priv->pids);
	free(m->priv);
	free(m);
}
