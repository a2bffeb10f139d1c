/*
 * colls.c - the collectives across ranks (colls.h): the trace's rows sorted
 * by (group, seq), each run of one (group, seq) a matched call, and from
 * the matches the per-op, per-rank and hang figures.
 */
#include "proftop/colls.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/util.h"
#include "proftop/ranks.h"

/* One row as the matching sees it. */
struct ent {
	uint64_t start, end, seq, bytes;
	uint32_t group, op, gsize, flags, epoch;
	uint32_t rank_i; /* index into the rank list */
};

struct rank_ent {
	int64_t pid, rank;
	uint32_t pid_str;
	int ended;
};

static int ent_cmp(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->epoch != y->epoch)
		return x->epoch < y->epoch ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->rank_i < y->rank_i ? -1 : x->rank_i > y->rank_i;
}

/* One collective: the same group, epoch and sequence number. */
static int same_call(const struct ent *a, const struct ent *b)
{
	return a->group == b->group && a->epoch == b->epoch && a->seq == b->seq;
}

/* The rank list: one entry per process with rows, numbered from the
 * process table, else by the order of their pids. */
static uint32_t rank_of(struct rank_ent **rs, size_t *n, const struct pt_trace *t, uint32_t track)
{
	const struct pt_track_key *k = &t->tracks[track].key;
	for (size_t i = 0; i < *n; i++)
		if ((*rs)[i].pid == k->pid && (*rs)[i].pid_str == k->pid_str)
			return (uint32_t)i;
	*rs = pt_xrealloc(*rs, (*n + 1) * sizeof **rs);
	struct rank_ent *r = &(*rs)[*n];
	r->pid = k->pid;
	r->pid_str = k->pid_str;
	const struct pt_proc *p = pt_trace_proc(t, k->pid);
	r->rank = p ? p->rank : -1;
	r->ended = p ? p->ended : 0;
	return (uint32_t)(*n)++;
}

/* A rank's time in a call counts as time in collectives: a blocking call
 * (from its entry to its return), or one timed on the device (its kernel,
 * from its start to its end); an async call's host row is only its launch
 * and the wait for it, which the job may overlap with anything. */
static int in_coll(uint32_t flags)
{
	return !(flags & PT_COLL_ASYNC) || (flags & PT_COLL_DEVICE);
}

static double busbw_factor(const char *op, uint32_t n)
{
	if (n < 2)
		return 0;
	double d = (double)(n - 1) / n;
	if (!strcmp(op, "all_reduce"))
		return 2 * d;
	if (!strncmp(op, "all_gather", 10) || !strncmp(op, "reduce_scatter", 14) ||
	    !strncmp(op, "_all_gather", 11) || !strncmp(op, "_reduce_scatter", 15) ||
	    !strncmp(op, "all_to_all", 10))
		return d;
	if (!strcmp(op, "broadcast") || !strcmp(op, "reduce"))
		return 1;
	return 0; /* barrier, gather, scatter: no bus bandwidth */
}

/* The op stat of (group, op), made on first sight. */
static struct pt_coll_op_stat *op_stat(struct pt_coll_stats *s, uint32_t group, uint32_t op,
				       const uint32_t *keys)
{
	for (size_t i = 0; i < s->nops; i++)
		if (keys[2 * i] == group && keys[2 * i + 1] == op)
			return &s->ops[i];
	return NULL;
}

static void esc(char *dst, size_t len, const struct pt_trace *t, uint32_t id)
{
	const char *p = pt_trace_str(t, id);
	if (!p)
		p = "?";
	pt_escape_term(dst, len, p, strlen(p), 0, 0);
}

struct acc {
	double skew_sum, bw_sum, time_sum;
	uint64_t bw_n, time_n, bytes_sum, bytes_n;
	uint64_t *last_by_rank; /* per rank index */
	double *late_by_rank;   /* summed skew of the calls it was last in */
};

static int i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* What the host tracks of process (pid, pid_str) have open at now. */
static size_t open_of(const struct pt_trace *t, int64_t pid, uint32_t pid_str, uint64_t now,
		      char (*names)[48], double *secs, uint64_t *last_end)
{
	size_t n = 0;
	*last_end = 0;
	for (uint32_t k = 0; k < t->ntracks; k++) {
		const struct pt_track *tr = &t->tracks[k];
		if (tr->key.pid != pid || tr->key.pid_str != pid_str || pt_track_is_device(tr))
			continue;
		if (tr->last_end_ns > *last_end)
			*last_end = tr->last_end_ns;
		for (uint32_t d = 0; d < tr->nopen && n < PT_HANG_OPEN; d++) {
			esc(names[n], sizeof names[0], t, tr->open_name[d]);
			secs[n] = now > tr->open_start[d] ? (double)(now - tr->open_start[d]) / 1e9 : 0;
			n++;
		}
	}
	return n;
}

/* The hang: the open match whose first waiting rank entered it longest
 * ago, when that is hang_after or more. */
static void find_hang(struct pt_coll_stats *s, const struct pt_trace *t, const struct ent *e,
		      size_t n, const struct rank_ent *rs, size_t nr, uint64_t now,
		      uint64_t after)
{
	size_t best = SIZE_MAX, best_end = 0;
	uint64_t best_start = UINT64_MAX;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		uint64_t first_open = UINT64_MAX;
		while (j < n && same_call(&e[j], &e[i])) {
			if (!e[j].end && !(e[j].flags & PT_COLL_P2P) && e[j].start < first_open)
				first_open = e[j].start;
			j++;
		}
		if (first_open != UINT64_MAX && now >= first_open && now - first_open >= after &&
		    first_open < best_start) {
			best_start = first_open;
			best = i;
			best_end = j;
		}
		i = j;
	}
	if (best == SIZE_MAX)
		return;
	struct pt_coll_hang *h = &s->hang;
	h->active = 1;
	esc(h->op, sizeof h->op, t, e[best].op);
	esc(h->group, sizeof h->group, t, e[best].group);
	h->seq = e[best].seq;
	h->since_s = (double)(now - best_start) / 1e9;
	h->group_size = e[best].gsize;
	uint8_t *here = pt_xcalloc(nr ? nr : 1, 1);
	for (size_t j = best; j < best_end; j++) {
		if (here[e[j].rank_i])
			continue;
		here[e[j].rank_i] = 1;
		if (!e[j].end && h->nwaiting < PT_HANG_MAX_RANKS)
			h->waiting[h->nwaiting] = rs[e[j].rank_i].rank;
		h->nwaiting += !e[j].end;
	}
	qsort(h->waiting, h->nwaiting < PT_HANG_MAX_RANKS ? h->nwaiting : PT_HANG_MAX_RANKS,
	      sizeof *h->waiting, i64_cmp);
	/* missing: ranks of the group (seen in it before) with no row here */
	uint8_t *member = pt_xcalloc(nr ? nr : 1, 1);
	for (size_t k = 0; k < n; k++)
		if (e[k].group == e[best].group)
			member[e[k].rank_i] = 1;
	for (size_t r = 0; r < nr; r++) {
		if (here[r] || !member[r])
			continue;
		if (h->nmissing < PT_HANG_MAX_RANKS) {
			struct pt_hang_missing *m = &h->missing[h->nmissing];
			m->rank = rs[r].rank;
			m->pid = rs[r].pid;
			m->ended = rs[r].ended;
			m->quiet_s = -1;
			/* what its host tracks have open, and when it was last heard of */
			uint64_t last;
			m->nopen = open_of(t, rs[r].pid, rs[r].pid_str, now, m->open, m->open_s, &last);
			if (last && now >= last)
				m->quiet_s = (double)(now - last) / 1e9;
		}
		h->nmissing++;
	}
	free(member);
	free(here);
}

int pt_coll_stats_compute(const struct pt_trace *t, uint64_t t0_ns, uint64_t now_ns,
			  uint64_t hang_after_ns, struct pt_coll_stats *out)
{
	memset(out, 0, sizeof *out);
	const struct pt_colls *c = &t->colls;
	out->dropped = c->dropped;
	if (!c->n)
		return 0;
	if (!hang_after_ns)
		hang_after_ns = PT_HANG_AFTER_DEFAULT_NS;
	struct ent *e = pt_xcalloc(c->n, sizeof *e);
	struct rank_ent *rs = NULL;
	size_t n = 0, nr = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct pt_coll *r = &c->v[i];
		/* open rows whatever their start: a hang outlasts any window */
		if (r->track >= t->ntracks || pt_track_is_device(&t->tracks[r->track]) ||
		    (r->start_ns < t0_ns && r->end_ns))
			continue;
		struct ent *x = &e[n++];
		x->start = r->start_ns;
		x->end = r->end_ns;
		x->seq = r->seq;
		x->bytes = r->bytes;
		x->group = r->group;
		x->op = r->op;
		x->gsize = r->group_size;
		x->flags = r->flags;
		x->epoch = r->epoch;
		x->rank_i = rank_of(&rs, &nr, t, r->track);
		out->open += !r->end_ns;
	}
	out->rows = n;
	/* ranks without a number: by pid order, after the numbered ones */
	int64_t next = 0;
	for (size_t i = 0; i < nr; i++)
		if (rs[i].rank >= next)
			next = rs[i].rank + 1;
	for (size_t pass = 0; pass < nr; pass++) {
		size_t lo = SIZE_MAX;
		for (size_t i = 0; i < nr; i++)
			if (rs[i].rank < 0 && (lo == SIZE_MAX || rs[i].pid < rs[lo].pid))
				lo = i;
		if (lo == SIZE_MAX)
			break;
		rs[lo].rank = next++;
	}
	/* the ranks in their order (rank number, then pid), the rows pointing there */
	{
		size_t *ord = pt_xcalloc(nr ? nr : 1, sizeof *ord);
		uint32_t *inv = pt_xcalloc(nr ? nr : 1, sizeof *inv);
		for (size_t i = 0; i < nr; i++)
			ord[i] = i;
		for (size_t i = 1; i < nr; i++) /* few ranks: insertion */
			for (size_t j = i; j > 0; j--) {
				const struct rank_ent *p = &rs[ord[j - 1]], *q = &rs[ord[j]];
				if (p->rank < q->rank || (p->rank == q->rank && p->pid <= q->pid))
					break;
				size_t tmp = ord[j - 1];
				ord[j - 1] = ord[j];
				ord[j] = tmp;
			}
		struct rank_ent *sorted = pt_xcalloc(nr ? nr : 1, sizeof *sorted);
		for (size_t i = 0; i < nr; i++) {
			sorted[i] = rs[ord[i]];
			inv[ord[i]] = (uint32_t)i;
		}
		for (size_t i = 0; i < n; i++)
			e[i].rank_i = inv[e[i].rank_i];
		free(rs);
		rs = sorted;
		free(ord);
		free(inv);
	}
	qsort(e, n, sizeof *e, ent_cmp);

	out->ranks = pt_xcalloc(nr ? nr : 1, sizeof *out->ranks);
	out->nranks = nr;
	for (size_t i = 0; i < nr; i++) {
		struct pt_coll_rank_stat *rk = &out->ranks[i];
		uint64_t last;
		rk->rank = rs[i].rank;
		rk->pid = rs[i].pid;
		rk->nopen = open_of(t, rs[i].pid, rs[i].pid_str, now_ns, rk->open, rk->open_s, &last);
		for (size_t q = 0; q < c->nseqs; q++)
			if (c->seqs[q].pid == rs[i].pid && c->seqs[q].pid_str == rs[i].pid_str)
				rk->coll_total_s += (double)c->seqs[q].blocking_ns / 1e9;
	}
	uint32_t *keys = NULL;
	struct acc *acc = NULL;
	size_t cap = 0;
	uint8_t *seen = pt_xcalloc(nr ? nr : 1, 1);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && same_call(&e[j], &e[i]))
			j++;
		/* the op stat of this call */
		struct pt_coll_op_stat *os = op_stat(out, e[i].group, e[i].op, keys);
		if (!os) {
			if (out->nops == cap) {
				cap = cap ? cap * 2 : 16;
				out->ops = pt_xrealloc(out->ops, cap * sizeof *out->ops);
				keys = pt_xrealloc(keys, cap * 2 * sizeof *keys);
				acc = pt_xrealloc(acc, cap * sizeof *acc);
			}
			size_t k = out->nops++;
			os = &out->ops[k];
			memset(os, 0, sizeof *os);
			memset(&acc[k], 0, sizeof acc[k]);
			acc[k].last_by_rank = pt_xcalloc(nr ? nr : 1, sizeof(uint64_t));
			acc[k].late_by_rank = pt_xcalloc(nr ? nr : 1, sizeof(double));
			keys[2 * k] = e[i].group;
			keys[2 * k + 1] = e[i].op;
			esc(os->op, sizeof os->op, t, e[i].op);
			esc(os->group, sizeof os->group, t, e[i].group);
			os->last_rank = -1;
			os->p2p = (e[i].flags & PT_COLL_P2P) != 0;
		}
		struct acc *a = &acc[os - out->ops];
		/* the ranks' rows of this call, the first of each rank */
		memset(seen, 0, nr ? nr : 1);
		uint64_t first = UINT64_MAX, lastst = 0, min_end = UINT64_MAX;
		size_t last_i = i, nrk = 0, nend = 0;
		uint32_t gsize = 0;
		for (size_t k = i; k < j; k++) {
			const struct ent *x = &e[k];
			os->rows++;
			struct pt_coll_rank_stat *rk = &out->ranks[x->rank_i];
			rk->calls++;
			if (x->end && in_coll(x->flags))
				rk->coll_ms += (double)(x->end - x->start) / 1e6;
			a->bytes_sum += x->bytes;
			a->bytes_n++;
			if (x->gsize > gsize)
				gsize = x->gsize;
			if (seen[x->rank_i])
				continue;
			seen[x->rank_i] = 1;
			nrk++;
			if (x->start < first)
				first = x->start;
			if (x->start >= lastst) {
				lastst = x->start;
				last_i = k;
			}
			if (x->end) {
				nend++;
				if (x->end < min_end)
					min_end = x->end;
			}
		}
		if (gsize > os->group_size)
			os->group_size = gsize;
		if (nrk >= 2 && !os->p2p) {
			os->calls++;
			out->matched++;
			double skew = (double)(lastst - first) / 1e6;
			a->skew_sum += skew;
			if (skew > os->skew_ms_max)
				os->skew_ms_max = skew;
			uint32_t lr = e[last_i].rank_i;
			a->last_by_rank[lr]++;
			a->late_by_rank[lr] += skew;
			out->ranks[lr].last++;
			out->ranks[lr].late_ms += skew;
			/* each rank waited from its arrival to the last one's (blocking calls) */
			memset(seen, 0, nr ? nr : 1);
			for (size_t k = i; k < j; k++) {
				const struct ent *x = &e[k];
				if (seen[x->rank_i] || !in_coll(x->flags))
					continue;
				seen[x->rank_i] = 1;
				uint64_t w = lastst - x->start;
				if (x->end && x->end - x->start < w)
					w = x->end - x->start;
				out->ranks[x->rank_i].wait_ms += (double)w / 1e6;
			}
			if (nend == nrk && min_end > lastst) {
				double secs = (double)(min_end - lastst) / 1e9;
				a->time_sum += secs * 1e3;
				a->time_n++;
				uint32_t gn = gsize ? gsize : (uint32_t)nrk;
				double f = busbw_factor(pt_trace_str(t, e[i].op), gn);
				double bytes = (double)e[last_i].bytes;
				if (f > 0 && bytes > 0) {
					a->bw_sum += bytes / secs / 1e9 * f;
					a->bw_n++;
				}
			}
		}
		i = j;
	}
	for (size_t k = 0; k < out->nops; k++) {
		struct pt_coll_op_stat *os = &out->ops[k];
		struct acc *a = &acc[k];
		os->skew_ms_avg = os->calls ? a->skew_sum / (double)os->calls : 0;
		os->bytes = a->bytes_n ? a->bytes_sum / a->bytes_n : 0;
		os->busbw_gb_per_s = a->bw_n ? a->bw_sum / (double)a->bw_n : 0;
		os->time_ms_avg = a->time_n ? a->time_sum / (double)a->time_n : 0;
		uint64_t best = 0;
		for (size_t r = 0; r < nr; r++)
			if (a->last_by_rank[r] > best) {
				best = a->last_by_rank[r];
				os->last_rank = rs[r].rank;
				os->last_late_ms = a->late_by_rank[r] / (double)best;
			}
		os->last_count = best;
		os->rank_last = a->last_by_rank;
		os->rank_late = a->late_by_rank;
	}
	find_hang(out, t, e, n, rs, nr, now_ns, hang_after_ns);
	/* ops by group, then name; ranks by number */
	for (size_t x = 1; x < out->nops; x++)
		for (size_t y = x; y > 0; y--) {
			struct pt_coll_op_stat *p = &out->ops[y - 1], *q = &out->ops[y];
			int cg = strcmp(p->group, q->group);
			if (cg < 0 || (cg == 0 && strcmp(p->op, q->op) <= 0))
				break;
			struct pt_coll_op_stat tmp = *p;
			*p = *q;
			*q = tmp;
		}
	free(seen);
	free(keys);
	free(acc);
	free(rs);
	free(e);
	return 0;
}

void pt_coll_stats_free(struct pt_coll_stats *s)
{
	for (size_t i = 0; i < s->nops; i++) {
		free(s->ops[i].rank_last);
		free(s->ops[i].rank_late);
	}
	free(s->ops);
	free(s->ranks);
	memset(s, 0, sizeof *s);
}

const struct pt_coll_rank_stat *pt_coll_rank(const struct pt_coll_stats *s, int64_t rank)
{
	for (size_t i = 0; i < s->nranks; i++)
		if (s->ranks[i].rank == rank)
			return &s->ranks[i];
	return NULL;
}

size_t pt_coll_rank_list(const int64_t *r, size_t n, char *buf, size_t len)
{
	struct pt_buf b = {0};
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && r[j + 1] == r[j] + 1)
			j++;
		if (j >= i + 2)
			pt_buf_printf(&b, "%s%" PRId64 "-%" PRId64, i ? "," : "", r[i], r[j]);
		else
			for (size_t k = i; k <= j; k++)
				pt_buf_printf(&b, "%s%" PRId64, k ? "," : "", r[k]);
		i = j + 1;
	}
	size_t w = (size_t)snprintf(buf, len, "%s", b.p ? b.p : "");
	pt_buf_free(&b);
	return w < len ? w : (len ? len - 1 : 0);
}

size_t pt_coll_hang_line(const struct pt_coll_hang *h, char *buf, size_t len)
{
	if (!len)
		return 0;
	buf[0] = 0;
	if (!h->active)
		return 0;
	struct pt_buf b = {0};
	char list[256];
	size_t nw = h->nwaiting < PT_HANG_MAX_RANKS ? h->nwaiting : PT_HANG_MAX_RANKS;
	pt_coll_rank_list(h->waiting, nw, list, sizeof list);
	pt_buf_printf(&b, "%s %s%s %s waited %.0f s in %s #%" PRIu64 " (group %s)",
		      h->nwaiting == 1 ? "rank" : "ranks", list, nw < h->nwaiting ? ",..." : "",
		      h->nwaiting == 1 ? "has" : "have", h->since_s, h->op, h->seq, h->group);
	size_t nm = h->nmissing < PT_HANG_MAX_RANKS ? h->nmissing : PT_HANG_MAX_RANKS;
	for (size_t i = 0; i < nm; i++) {
		const struct pt_hang_missing *m = &h->missing[i];
		pt_buf_printf(&b, "; rank %" PRId64 " %s", m->rank,
			      m->ended == 2   ? "died before entering it"
			      : m->ended == 1 ? "exited without entering it"
					      : "never entered it");
		if (m->nopen) {
			pt_buf_printf(&b, "; its open ranges: ");
			for (size_t k = 0; k < m->nopen; k++)
				pt_buf_printf(&b, "%s%s (%.0f s)", k ? " > " : "", m->open[k],
					      m->open_s[k]);
		} else if (m->quiet_s >= 0 && !m->ended) {
			pt_buf_printf(&b, "; nothing recorded from it for %.0f s", m->quiet_s);
		}
	}
	if (h->nmissing > nm)
		pt_buf_printf(&b, "; %zu more ranks missing", h->nmissing - nm);
	if (!h->nmissing && h->group_size > h->nwaiting)
		pt_buf_printf(&b, "; %" PRIu32 " of the group's ranks are not in this view",
			      h->group_size - (uint32_t)h->nwaiting);
	size_t w = (size_t)snprintf(buf, len, "%s", b.p ? b.p : "");
	pt_buf_free(&b);
	return w < len ? w : len - 1;
}

/* ---- the straggler */

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static const char *const phase_text[PT_RANK__PHASES] = {"Dataloader", "Forward", "Backward",
							 "Optimization", "Others"};

const char *pt_phase_text(int p)
{
	return p >= 0 && p < PT_RANK__PHASES ? phase_text[p] : "?";
}

int pt_phase_longer(const double *mine, const double *others, size_t n, double step_ms,
		    double min_ms, double *mine_ms, double *med_ms)
{
	int best = -1;
	double best_x = 0, *v = pt_xcalloc(n ? n : 1, sizeof *v);
	for (int p = 0; p < PT_RANK__PHASES && n; p++) {
		for (size_t i = 0; i < n; i++)
			v[i] = others[i * PT_RANK__PHASES + p];
		qsort(v, n, sizeof *v, dbl_cmp);
		double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
		double x = mine[p] - med;
		if (x > best_x && x >= 0.1 * step_ms && x >= min_ms) {
			best_x = x;
			best = p;
			*mine_ms = mine[p];
			*med_ms = med;
		}
	}
	free(v);
	return best;
}

void pt_straggler_find(const struct pt_ranks *r, const struct pt_coll_stats *c,
		       struct pt_straggler *out)
{
	memset(out, 0, sizeof *out);
	out->phase = -1;
	if (!r || r->n < 2)
		return;
	size_t si = SIZE_MAX;
	/* by arrivals: the rank whose lateness (summed over the calls it was
	 * last in) is half the job's or more */
	if (c && c->matched) {
		const struct pt_coll_rank_stat *best = NULL;
		double all = 0;
		for (size_t i = 0; i < c->nranks; i++) {
			all += c->ranks[i].late_ms;
			if (!best || c->ranks[i].late_ms > best->late_ms)
				best = &c->ranks[i];
		}
		if (best && best->last && best->late_ms > 0 && 2 * best->late_ms >= all) {
			for (size_t i = 0; i < r->n; i++)
				if (r->r[i].pid == best->pid)
					si = i;
			if (si != SIZE_MAX) {
				out->by_collectives = 1;
				out->last_share = (double)best->last / (double)c->matched;
				out->late_ms_avg = best->late_ms / (double)best->last;
			}
		}
	}
	if (si == SIZE_MAX) {
		if (r->spread <= 0 || !r->r[r->slowest].steps)
			return;
		si = r->slowest;
	}
	const struct pt_rank_stat *s = &r->r[si];
	out->valid = 1;
	out->rank = s->rank;
	snprintf(out->name, sizeof out->name, "%s", s->name);
	/* its phase that is longer than the others' the most */
	double mine[PT_RANK__PHASES], *oth = pt_xcalloc(r->n * PT_RANK__PHASES, sizeof *oth);
	size_t no = 0;
	for (int p = 0; p < PT_RANK__PHASES; p++)
		mine[p] = s->phase_share[p] * s->step_avg_ms;
	for (size_t i = 0; i < r->n; i++) {
		if (i == si || !r->r[i].steps)
			continue;
		for (int p = 0; p < PT_RANK__PHASES; p++)
			oth[no * PT_RANK__PHASES + p] = r->r[i].phase_share[p] * r->r[i].step_avg_ms;
		no++;
	}
	if (s->steps)
		out->phase = pt_phase_longer(mine, oth, no, s->step_avg_ms, 1.0, &out->phase_ms,
					     &out->others_ms);
	free(oth);
	struct pt_buf b = {0};
	/* the op where its own lateness adds up to the most */
	const struct pt_coll_op_stat *wo = NULL;
	size_t ci = SIZE_MAX;
	for (size_t i = 0; c && i < c->nranks; i++)
		if (c->ranks[i].pid == s->pid)
			ci = i;
	for (size_t i = 0; out->by_collectives && ci != SIZE_MAX && i < c->nops; i++) {
		const struct pt_coll_op_stat *o = &c->ops[i];
		if (o->calls && o->rank_last && o->rank_last[ci] &&
		    (!wo || o->rank_late[ci] > wo->rank_late[ci]))
			wo = o;
	}
	if (wo) {
		uint64_t k = wo->rank_last[ci];
		double late = wo->rank_late[ci] / (double)k;
		out->late_ms_avg = late;
		snprintf(out->op, sizeof out->op, "%s", wo->op);
		if (k == wo->calls)
			pt_buf_printf(&b, "%s arrives %.1f ms late at every %s (group %s, %" PRIu64
				      " calls)", s->name, late, wo->op, wo->group, wo->calls);
		else
			pt_buf_printf(&b, "%s arrives %.1f ms late at %" PRIu64 " of %" PRIu64
				      " %s calls (group %s)", s->name, late, k, wo->calls, wo->op,
				      wo->group);
	} else if (out->by_collectives)
		pt_buf_printf(&b, "%s arrives %.1f ms late at %.0f%% of the collectives", s->name,
			      out->late_ms_avg, 100 * out->last_share);
	else
		pt_buf_printf(&b, "%s has the slowest steps (%.2f ms, median %.2f ms)", s->name,
			      s->step_avg_ms, r->median_step_ms);
	if (out->phase >= 0)
		pt_buf_printf(&b, ": its %s takes %.2f ms a step, %.2f ms on the others (median)",
			      phase_text[out->phase], out->phase_ms, out->others_ms);
	else
		pt_buf_printf(&b, ": no phase of its steps stands out");
	snprintf(out->reason, sizeof out->reason, "%s", b.p ? b.p : "");
	pt_buf_free(&b);
}
