/*
 * diff.c - the comparison of two runs (diff.h): summaries detached from
 * their traces (names copied into the side's own string table, a name ->
 * row index per table), figures by name for the Perf diff and the CI gate,
 * and the rows of two tables matched by name and ranked by how much their
 * time changed. The text and JSON faces are in diff_out.c.
 *
 * Why detach: the TUI's baseline (`view AFTER --baseline BEFORE`, `run
 * --baseline FILE`) lives as long as the screen; keeping the baseline's
 * whole event store for that would double proftop's memory, while the
 * tables are a few thousand rows at most.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/datapipe.h"
#include "proftop/diff.h"
#include "proftop/error.h"
#include "proftop/strtab.h"
#include "analyze/gate_metrics.h"
#include "model/u32map.h"
#include "model/util.h"

struct pt_diff_side {
	struct pt_summary *sum;
	struct pt_strtab *names;
	struct pt_u32map index[PT_DIFF__TABLES]; /* own name id -> row index + 1 */
	char *label;
	struct pt_diff_data dp;
};

static const char *const table_keys[PT_DIFF__TABLES] = {"operators", "kernels", "memory",
							"user_defined"};

const char *pt_diff_table_key(enum pt_diff_table k)
{
	return (unsigned)k < PT_DIFF__TABLES ? table_keys[k] : "?";
}

const struct pt_table *pt_diff_table_of(const struct pt_summary *s, enum pt_diff_table k)
{
	switch (k) {
	case PT_DIFF_KERNELS:
		return &s->kernels;
	case PT_DIFF_MEMORY:
		return &s->memory;
	case PT_DIFF_USER:
		return &s->user_defined;
	default:
		return &s->operators;
	}
}

static struct pt_table *table_mut(struct pt_summary *s, enum pt_diff_table k)
{
	return (struct pt_table *)pt_diff_table_of(s, k);
}

/* Renumbers a table's name ids into the side's own string table. */
static void rename_rows(struct pt_diff_side *d, const struct pt_trace *t, struct pt_table *tb)
{
	for (size_t i = 0; i < tb->n; i++) {
		uint32_t id = tb->rows[i].name_id;
		const char *s = pt_trace_str(t, id);
		size_t len = pt_strtab_len(t->strings, id);
		tb->rows[i].name_id = len ? pt_strtab_intern(d->names, s, len) : 0;
	}
}

static void data_of(const struct pt_trace *t, const struct pt_summary *s, struct pt_diff_data *o)
{
	struct pt_datapipe dp;
	pt_datapipe_compute(t, s, &dp);
	memset(o, 0, sizeof *o);
	o->present = !pt_datapipe_empty(&dp);
	o->queue_samples = dp.queue_samples;
	o->queue_empty_pct = dp.queue_empty_pct;
	o->queue_mean = dp.queue_mean;
	o->workers = dp.workers;
	o->workers_busy_pct = dp.workers_busy_pct;
	for (size_t i = 0; i < dp.nstages && o->nstages < PT_DIFF_DP_STAGES; i++) {
		const char *n = pt_trace_str(t, dp.stages[i].name_id);
		size_t skip = strlen(PT_DP_PREFIX);
		if (n && strncmp(n, PT_DP_PREFIX, skip) == 0)
			n += skip;
		size_t k = o->nstages++;
		snprintf(o->stages[k].name, sizeof o->stages[k].name, "%s", n ? n : "?");
		o->stages[k].calls = dp.stages[i].calls;
		o->stages[k].total_ms = (double)dp.stages[i].total_ns / 1e6;
		o->stages[k].per_sample_ms = dp.stages[i].per_sample_ms;
		o->stages[k].busy_pct = dp.stages[i].busy_pct;
	}
	pt_datapipe_free(&dp);
}

struct pt_diff_side *pt_diff_side_new(const struct pt_trace *t, struct pt_summary *s,
				      const char *label)
{
	struct pt_diff_side *d = pt_xcalloc(1, sizeof *d);
	d->sum = s;
	d->names = pt_strtab_new();
	d->label = pt_xstrdup(label ? label : "");
	for (int k = 0; k < PT_DIFF__TABLES; k++) {
		struct pt_table *tb = table_mut(s, (enum pt_diff_table)k);
		rename_rows(d, t, tb);
		for (size_t i = 0; i < tb->n && i < UINT32_MAX - 1; i++) {
			uint32_t id = tb->rows[i].name_id;
			/* a name twice in one table (none expected): the first wins */
			if (id && !pt_u32map_get(&d->index[k], id))
				pt_u32map_put(&d->index[k], id, (uint32_t)i + 1);
		}
	}
	rename_rows(d, t, &s->op_detail);
	data_of(t, s, &d->dp);
	return d;
}

const struct pt_diff_data *pt_diff_side_data(const struct pt_diff_side *d)
{
	return &d->dp;
}

void pt_diff_side_free(struct pt_diff_side *d)
{
	if (!d)
		return;
	for (int k = 0; k < PT_DIFF__TABLES; k++)
		pt_u32map_free(&d->index[k]);
	pt_summary_free(d->sum);
	pt_strtab_free(d->names);
	free(d->label);
	free(d);
}

const struct pt_summary *pt_diff_side_summary(const struct pt_diff_side *d)
{
	return d->sum;
}

const char *pt_diff_side_label(const struct pt_diff_side *d)
{
	return d->label;
}

const char *pt_diff_side_name(const struct pt_diff_side *d, uint32_t id, size_t *len)
{
	if (len)
		*len = pt_strtab_len(d->names, id);
	return pt_strtab_get(d->names, id);
}

const struct pt_row *pt_diff_side_find(const struct pt_diff_side *d, enum pt_diff_table k,
				       const char *name, size_t len)
{
	if ((unsigned)k >= PT_DIFF__TABLES || !len)
		return NULL;
	uint32_t id = pt_strtab_find(d->names, name, len);
	if (!id)
		return NULL;
	uint32_t at = pt_u32map_get(&d->index[k], id);
	if (!at)
		return NULL;
	return &pt_diff_table_of(d->sum, k)->rows[at - 1];
}

uint64_t pt_diff_row_ns(const struct pt_row *r)
{
	return r->is_device ? r->gpu.total_ns : r->cpu.total_ns;
}

/* ---- figures by name ---- */

const char *const pt_diff_metric_names[] = {
    "steps",	       "step_ms",   "step_p50_ms",  "step_p99_ms",   "ips",	   "samples_per_s",
    "steps_per_s",     "reader_ms", "reader_ratio", "dataloader_ms", "forward_ms", "backward_ms",
    "optimization_ms", "others_ms", "gpu_ms",	    "gpu_util",	     "comm_ratio", NULL,
};

static const struct {
	const char *name;
	enum pt_ms_row row;
} phase_metrics[] = {
    {"dataloader_ms", PT_MS_DATALOADER}, {"forward_ms", PT_MS_FORWARD},
    {"backward_ms", PT_MS_BACKWARD},	 {"optimization_ms", PT_MS_OPTIMIZATION},
    {"others_ms", PT_MS_OTHERS},
};

/*
 * The figures report's --fail-if knows (gate_metrics.c) are taken from
 * there, so a name means the same on report, record and diff; the per-step
 * times that only make sense side by side are computed here.
 */
int pt_diff_metric_value(const struct pt_summary *s, const char *name, double *value)
{
	const struct pt_perf *p = &s->perf;
	double step_ms = p->batch.n ? (double)p->batch.total_ns / (double)p->batch.n / 1e6 : 0;
	double v = NAN;
	if (!strcmp(name, "steps_per_s")) {
		if (step_ms > 0)
			v = 1e3 / step_ms;
	} else if (!strcmp(name, "reader_ms")) {
		if (p->steps)
			v = p->reader.n ? (double)p->reader.total_ns / (double)p->reader.n / 1e6
					: 0.0;
	} else if (!strcmp(name, "gpu_ms")) {
		if (p->steps && s->has_gpu)
			v = (double)s->model[PT_MS_STEP].gpu.total_ns / (double)p->steps / 1e6;
	} else {
		size_t i, n = sizeof phase_metrics / sizeof phase_metrics[0];
		for (i = 0; i < n && strcmp(name, phase_metrics[i].name); i++)
			;
		if (i == n) {
			struct pt_gate_figures f = {NULL, s};
			return pt_gate_figure(&f, name, value);
		}
		if (p->steps)
			v = (double)s->model[phase_metrics[i].row].cpu.total_ns / (double)p->steps /
			    1e6;
	}
	if (!isfinite(v))
		return PT_ENOTAVAIL;
	*value = v;
	return 0;
}

int pt_diff_metric(void *ctx, const char *name, double *value)
{
	const struct pt_diff_metric_ctx *c = ctx;
	size_t len = strlen(name);
	static const char suffix[] = "_delta";
	size_t sl = sizeof suffix - 1;
	if (len > sl && !strcmp(name + len - sl, suffix)) {
		char base[64];
		if (len - sl >= sizeof base)
			return PT_ENOENT;
		memcpy(base, name, len - sl);
		base[len - sl] = 0;
		double b, a;
		int rc = pt_diff_metric_value(c->before, base, &b);
		if (rc == 0)
			rc = pt_diff_metric_value(c->after, base, &a);
		if (rc)
			return rc;
		if (b == 0)
			return PT_ENOTAVAIL; /* no relative change from nothing */
		*value = (a - b) / b;
		return 0;
	}
	return pt_diff_metric_value(c->after, name, value);
}

/* ---- the changed rows ---- */

static int cmp_rows(const void *pa, const void *pb)
{
	const struct pt_diff_row *x = pa, *y = pb;
	uint64_t ax = x->delta_ns < 0 ? -(uint64_t)x->delta_ns : (uint64_t)x->delta_ns;
	uint64_t ay = y->delta_ns < 0 ? -(uint64_t)y->delta_ns : (uint64_t)y->delta_ns;
	if (ax != ay)
		return ax > ay ? -1 : 1;
	size_t n = x->nlen < y->nlen ? x->nlen : y->nlen;
	int c = memcmp(x->name, y->name, n);
	if (c)
		return c;
	return x->nlen < y->nlen ? -1 : x->nlen > y->nlen;
}

size_t pt_diff_rows(const struct pt_diff_side *before, const struct pt_diff_side *after,
		    enum pt_diff_table k, size_t top, struct pt_diff_row **out)
{
	const struct pt_table *tb = pt_diff_table_of(before->sum, k);
	const struct pt_table *ta = pt_diff_table_of(after->sum, k);
	size_t cap = tb->n + ta->n, n = 0;
	struct pt_diff_row *rows = pt_xcalloc(cap ? cap : 1, sizeof *rows);
	for (size_t i = 0; i < tb->n; i++) {
		struct pt_diff_row *r = &rows[n++];
		r->before = &tb->rows[i];
		r->name = pt_diff_side_name(before, r->before->name_id, &r->nlen);
		r->after = pt_diff_side_find(after, k, r->name, r->nlen);
		r->status = r->after ? PT_DIFF_CHANGED : PT_DIFF_VANISHED;
	}
	for (size_t i = 0; i < ta->n; i++) {
		size_t len;
		const char *nm = pt_diff_side_name(after, ta->rows[i].name_id, &len);
		if (pt_diff_side_find(before, k, nm, len))
			continue;
		struct pt_diff_row *r = &rows[n++];
		r->after = &ta->rows[i];
		r->name = nm;
		r->nlen = len;
		r->status = PT_DIFF_NEW;
	}
	for (size_t i = 0; i < n; i++) {
		struct pt_diff_row *r = &rows[i];
		r->before_ns = r->before ? pt_diff_row_ns(r->before) : 0;
		r->after_ns = r->after ? pt_diff_row_ns(r->after) : 0;
		r->delta_ns = (int64_t)r->after_ns - (int64_t)r->before_ns;
	}
	if (n > 1)
		qsort(rows, n, sizeof *rows, cmp_rows);
	if (top && n > top)
		n = top;
	*out = rows;
	return n;
}

void pt_diff_opts_init(struct pt_diff_opts *o)
{
	memset(o, 0, sizeof *o);
	o->top = 20;
}
