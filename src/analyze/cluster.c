/*
 * cluster.c - the Ranks view of a whole job from Prometheus' samples
 * (cluster.h): rows per rank, the straggler from the ranks' own waits,
 * the hang from the nodes that see it.
 */
#include "proftop/cluster.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/util.h"
#include "proftop/colls.h"

static const char *const q_text[PT_CQ__COUNT] = {
    "proftop_step_mean_seconds%s",
    "proftop_steps%s",
    "proftop_phase_ratio%s",
    "irate(proftop_rank_collective_seconds_total%s[2m])",
    "proftop_straggler_late_seconds%s",
    "proftop_hang_seconds%s",
    "proftop_hang_waiting%s",
    "proftop_hang_missing%s",
    "proftop_rank_open_range_seconds%s",
};

size_t pt_cluster_query_text(enum pt_cluster_query q, const char *job, char *buf, size_t len)
{
	char sel[160] = "";
	if (job && *job) {
		/* a job name goes inside a PromQL string: quotes and backslashes escaped */
		size_t w = 0;
		w += (size_t)snprintf(sel, sizeof sel, "{job=\"");
		for (const char *p = job; *p && w + 4 < sizeof sel; p++) {
			if (*p == '"' || *p == '\\')
				sel[w++] = '\\';
			sel[w++] = *p;
		}
		snprintf(sel + w, sizeof sel - w, "\"}");
	}
	int n = snprintf(buf, len, q_text[q], sel);
	return n < 0 ? 0 : (size_t)n;
}

static int rank_cmp(const void *a, const void *b)
{
	const struct pt_cluster_rank *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	int h = strcmp(x->host, y->host);
	if (h)
		return h;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, dbl_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The row of a sample's rank (made on first sight). Ranks come by number;
 * a series without one is its (host, pid). */
struct rows {
	struct pt_cluster_rank *r;
	size_t n, cap;
	int64_t *key_rank; /* for lookups by number: sorted view built later */
};

static struct pt_cluster_rank *row_of(struct rows *rs, const struct pt_cluster_sample *s, int make)
{
	for (size_t i = 0; i < rs->n; i++) {
		struct pt_cluster_rank *r = &rs->r[i];
		if (s->rank >= 0 ? r->rank == s->rank
				 : r->rank < 0 && r->pid == s->pid && !strcmp(r->host, s->host))
			return r;
	}
	if (!make)
		return NULL;
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 64;
		rs->r = pt_xrealloc(rs->r, rs->cap * sizeof *rs->r);
	}
	struct pt_cluster_rank *r = &rs->r[rs->n++];
	memset(r, 0, sizeof *r);
	snprintf(r->host, sizeof r->host, "%s", s->host);
	r->rank = s->rank;
	r->pid = s->pid;
	r->step_ms = -1;
	r->wait_ratio = -1;
	r->late_ms = -1;
	return r;
}

static int phase_index(const char *p)
{
	static const char *const names[5] = {"dataloader", "forward", "backward", "optimization",
					     "other"};
	for (int i = 0; i < 5; i++)
		if (!strcmp(p, names[i]))
			return i;
	return -1;
}

/* A lookup by rank number over many rows: sorted by rank first. */
static struct pt_cluster_rank *find_rank(struct pt_cluster_rank *r, size_t n, int64_t rank)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (r[mid].rank < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && r[lo].rank == rank ? &r[lo] : NULL;
}

int pt_cluster_compute(const struct pt_cluster_sample *const s[PT_CQ__COUNT],
		       const size_t n[PT_CQ__COUNT], struct pt_cluster *out)
{
	memset(out, 0, sizeof *out);
	out->straggler = SIZE_MAX;
	struct rows rs = {0};
	/* the ranks: every series that has step figures */
	for (size_t i = 0; i < n[PT_CQ_STEPS]; i++) {
		struct pt_cluster_rank *r = row_of(&rs, &s[PT_CQ_STEPS][i], 1);
		r->steps = s[PT_CQ_STEPS][i].value > 0 ? (uint64_t)s[PT_CQ_STEPS][i].value : 0;
	}
	for (size_t i = 0; i < n[PT_CQ_STEP_MEAN]; i++) {
		struct pt_cluster_rank *r = row_of(&rs, &s[PT_CQ_STEP_MEAN][i], 1);
		double v = s[PT_CQ_STEP_MEAN][i].value;
		r->step_ms = v == v ? v * 1e3 : -1; /* NaN: no steps */
	}
	out->r = rs.r;
	out->n = rs.n;
	qsort(out->r, out->n, sizeof *out->r, rank_cmp);
	/* the rest by rank number (a binary search each: 1,024 ranks stay cheap) */
	for (int q = PT_CQ_PHASE; q < PT_CQ__COUNT; q++) {
		for (size_t i = 0; i < n[q]; i++) {
			const struct pt_cluster_sample *x = &s[q][i];
			struct pt_cluster_rank *r = x->rank >= 0 ? find_rank(out->r, out->n, x->rank)
								 : NULL;
			switch (q) {
			case PT_CQ_PHASE: {
				int p = phase_index(x->phase);
				if (r && p >= 0)
					r->phase[p] = x->value;
				break;
			}
			case PT_CQ_WAIT:
				if (r)
					r->wait_ratio = x->value;
				break;
			case PT_CQ_STRAGGLER:
				if (r)
					r->late_ms = x->value * 1e3;
				break;
			case PT_CQ_HANG:
				if (x->value > out->hang_s) {
					out->hang_s = x->value;
					snprintf(out->hang, sizeof out->hang,
						 "%s #%" PRId64 " (group %s)", x->op, x->seq, x->group);
				}
				break;
			case PT_CQ_HANG_WAITING:
				if (r)
					r->waiting = 1;
				break;
			case PT_CQ_HANG_MISSING:
				if (r)
					snprintf(r->process, sizeof r->process, "%s", x->process);
				break;
			case PT_CQ_OPEN:
				if (r && x->depth == 0) {
					snprintf(r->open, sizeof r->open, "%s", x->name);
					r->open_s = x->value;
				}
				break;
			default:
				break;
			}
		}
	}
	/* hosts, the median step and the spread */
	double *v = pt_xcalloc(out->n ? out->n : 1, sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < out->n; i++) {
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(out->r[i].host, out->r[j].host);
		out->nhosts += !seen;
		if (out->r[i].step_ms > 0)
			v[k++] = out->r[i].step_ms;
	}
	double maxs = 0;
	for (size_t i = 0; i < k; i++)
		maxs = v[i] > maxs ? v[i] : maxs;
	out->median_step_ms = median(v, k);
	out->spread = k >= 2 && out->median_step_ms > 0 ? maxs / out->median_step_ms : 0;
	/* the straggler: the rank that spends least of its time in collectives,
	 * by a margin; else a node's own, from arrivals it compared */
	k = 0;
	size_t least = SIZE_MAX;
	for (size_t i = 0; i < out->n; i++) {
		const struct pt_cluster_rank *r = &out->r[i];
		if (r->wait_ratio < 0)
			continue;
		v[k++] = r->wait_ratio;
		if (least == SIZE_MAX || r->wait_ratio < out->r[least].wait_ratio)
			least = i;
	}
	double wmed = median(v, k);
	struct pt_buf b = {0};
	if (k >= 2 && least != SIZE_MAX && wmed - out->r[least].wait_ratio >= 0.05) {
		struct pt_cluster_rank *sr = &out->r[least];
		out->straggler = least;
		pt_buf_printf(&b, "rank %" PRId64 " (%s) spends %.0f%% of its time in collectives, the "
				  "others %.0f%% (median): they wait for it",
			      sr->rank, sr->host, 100 * sr->wait_ratio, 100 * wmed);
	} else {
		for (size_t i = 0; i < out->n; i++)
			if (out->r[i].late_ms > 0 &&
			    (out->straggler == SIZE_MAX || out->r[i].late_ms > out->r[out->straggler].late_ms))
				out->straggler = i;
		if (out->straggler != SIZE_MAX)
			pt_buf_printf(&b, "rank %" PRId64 " (%s) arrives %.1f ms late at the collectives "
					  "of its node",
				      out->r[out->straggler].rank, out->r[out->straggler].host,
				      out->r[out->straggler].late_ms);
	}
	if (out->straggler != SIZE_MAX) {
		struct pt_cluster_rank *sr = &out->r[out->straggler];
		sr->straggler = 1;
		/* its phase longer than the others' by the most (colls.h) */
		double mine[5], mine_ms = 0, med_ms = 0;
		double *oth = pt_xcalloc(out->n * 5, sizeof *oth);
		size_t m = 0;
		for (int p = 0; p < 5; p++)
			mine[p] = sr->phase[p] * sr->step_ms;
		for (size_t i = 0; i < out->n; i++) {
			if (i == out->straggler || out->r[i].step_ms <= 0)
				continue;
			for (int p = 0; p < 5; p++)
				oth[m * 5 + p] = out->r[i].phase[p] * out->r[i].step_ms;
			m++;
		}
		int best = sr->step_ms > 0 ? pt_phase_longer(mine, oth, m, sr->step_ms, 0, &mine_ms,
							      &med_ms)
					   : -1;
		free(oth);
		if (best >= 0)
			pt_buf_printf(&b, "; its %s takes %.2f ms a step, %.2f ms on the others (median)",
				      pt_phase_text(best), mine_ms, med_ms);
	}
	snprintf(out->reason, sizeof out->reason, "%s", b.p ? b.p : "");
	b.len = 0;
	/* the hang: every rank of the job not waiting is missing */
	if (out->hang[0]) {
		int64_t *w = pt_xcalloc(out->n ? out->n : 1, sizeof *w);
		for (size_t i = 0; i < out->n; i++) {
			if (out->r[i].waiting)
				w[out->nwaiting++] = out->r[i].rank;
			else
				out->r[i].missing = 1;
		}
		out->nmissing = out->n - out->nwaiting;
		char list[256];
		pt_coll_rank_list(w, out->nwaiting, list, sizeof list);
		char what[sizeof out->hang];
		memcpy(what, out->hang, sizeof what);
		pt_buf_printf(&b, "%s %s %s waited %.0f s in %s", out->nwaiting == 1 ? "rank" : "ranks",
			      list, out->nwaiting == 1 ? "has" : "have", out->hang_s, what);
		size_t said = 0;
		for (size_t i = 0; i < out->n && said < 8; i++) {
			const struct pt_cluster_rank *r = &out->r[i];
			if (!r->missing)
				continue;
			said++;
			pt_buf_printf(&b, "; rank %" PRId64 " (%s) %s", r->rank, r->host,
				      !strcmp(r->process, "died")     ? "died before entering it"
				      : !strcmp(r->process, "exited") ? "exited without entering it"
								       : "never entered it");
			if (r->open[0])
				pt_buf_printf(&b, ", %s open for %.0f s", r->open, r->open_s);
		}
		if (out->nmissing > said)
			pt_buf_printf(&b, "; %zu more ranks missing", out->nmissing - said);
		snprintf(out->hang, sizeof out->hang, "%s", b.p);
		free(w);
	}
	pt_buf_free(&b);
	free(v);
	return 0;
}

void pt_cluster_free(struct pt_cluster *c)
{
	free(c->r);
	memset(c, 0, sizeof *c);
}
