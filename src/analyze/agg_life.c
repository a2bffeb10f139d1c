/*
 * agg_life.c - the aggregator's life outside feeding (agg.c): its options'
 * defaults, making one, what it holds in memory, and freeing it and the
 * summaries it makes.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/agg_internal.h"
#include "model/util.h"

static const char *const ms_names[PT_MS__COUNT] = {
    "ProfileStep", "Dataloader", "Forward", "Backward", "Optimization", "Others",
};

const char *pt_ms_row_name(enum pt_ms_row r)
{
	if ((unsigned)r >= PT_MS__COUNT)
		return "";
	return ms_names[r];
}

void pt_agg_opts_init(struct pt_agg_opts *o)
{
	memset(o, 0, sizeof *o);
	o->t0_ns = 0;
	o->t1_ns = UINT64_MAX;
	o->step_first = INT64_MIN;
	o->step_last = INT64_MAX;
	o->step_ordinal0 = -1;
}

struct pt_agg *pt_agg_new(const struct pt_trace *t, const struct pt_agg_opts *o)
{
	struct pt_agg *a = pt_xcalloc(1, sizeof *a);
	a->t = t;
	if (o)
		a->o = *o;
	else
		pt_agg_opts_init(&a->o);
	for (int i = 0; i < 3; i++)
		a->compile_row[i] = AGG_NONE;
	if (t) {
		static const char *const vn[3] = {"Computing", "Communication",
						  "Communication(Not Overlapped)"};
		for (int i = 0; i < 3; i++)
			a->vname[i] = pt_strtab_find(t->strings, vn[i], strlen(vn[i]));
	}
	return a;
}

void agg_free_acts(struct pt_agg *a)
{
	free(a->acts);
	free(a->act_kind);
	a->acts = NULL;
	a->act_kind = NULL;
	a->nacts = a->acts_cap = a->act_kind_cap = 0;
	pt_u32map_free(&a->act_by_corr);
}

size_t agg_mem_bytes(const struct pt_agg *a)
{
	size_t b = sizeof *a + a->tracks_cap * sizeof *a->tracks + u64map_mem_bytes(&a->track_ix);
	for (size_t i = 0; i < a->ntracks; i++) {
		b += a->tracks[i].cap * sizeof *a->tracks[i].stack;
		b += a->tracks[i].capl * sizeof *a->tracks[i].lv;
		for (int k = 0; k < a->tracks[i].nl; k++)
			b += a->tracks[i].lv[k].log.cap;
	}
	const struct rowvec *rv[] = {&a->ops, &a->detail, &a->kernels, &a->memory, &a->ud};
	for (size_t i = 0; i < sizeof rv / sizeof *rv; i++)
		b += rv[i]->cap * sizeof *rv[i]->v;
	const struct idmap *im[] = {&a->ops_by_name,	 &a->kernels_by_name, &a->memdev_by_name,
				    &a->memhost_by_name, &a->ud_by_name,      &a->detail_top,
				    &a->memname};
	for (size_t i = 0; i < sizeof im / sizeof *im; i++)
		b += idmap_mem_bytes(im[i]);
	b += u64map_mem_bytes(&a->detail_by_key) + a->dcache_cap * sizeof *a->dcache;
	b += a->acts_cap * sizeof *a->acts + a->act_kind_cap;
	b += pt_u32map_mem_bytes(&a->act_by_corr) + pt_u32map_mem_bytes(&a->launch_by_corr);
	b += a->inst_cap * sizeof *a->inst + a->launches_cap * sizeof *a->launches;
	b += a->done.cap + a->children.cap + a->orphans_cap * sizeof *a->orphans;
	b += a->steps_cap * sizeof *a->steps + a->phases_cap * sizeof *a->phases;
	b += a->devs_cap * sizeof *a->devs;
	b += a->fold.ndev_busy * sizeof *a->fold.dev_busy +
	     (a->fold.steps_borrowed ? 0 : a->fold.steps_cap * sizeof *a->fold.steps);
	b += a->fold.corrs_cap * sizeof *a->fold.corrs;
	return b;
}

void agg_free(struct pt_agg *a)
{
	for (size_t i = 0; i < a->ntracks; i++) {
		free(a->tracks[i].stack);
		for (int k = 0; k < a->tracks[i].nl; k++)
			ivl_free(&a->tracks[i].lv[k]);
		free(a->tracks[i].lv);
	}
	free(a->tracks);
	u64map_free(&a->track_ix);
	free(a->ops.v);
	free(a->detail.v);
	free(a->kernels.v);
	free(a->memory.v);
	free(a->ud.v);
	idmap_free(&a->ops_by_name);
	idmap_free(&a->kernels_by_name);
	idmap_free(&a->memdev_by_name);
	idmap_free(&a->memhost_by_name);
	idmap_free(&a->ud_by_name);
	idmap_free(&a->detail_top);
	u64map_free(&a->detail_by_key);
	u64map_free(&a->open_rows);
	for (int i = 0; i < 3; i++)
		free(a->ro[i]);
	free(a->dcache);
	idmap_free(&a->memname);
	agg_free_acts(a);
	free(a->inst);
	free(a->launches);
	pt_u32map_free(&a->launch_by_corr);
	vlog_free(&a->done);
	free(a->orphans);
	free(a->steps);
	vlog_free(&a->children);
	free(a->phases);
	free(a->devs);
	free(a->fold.dev_busy);
	if (!a->fold.steps_borrowed)
		free(a->fold.steps);
	free(a->fold.corrs);
	free(a);
}

void pt_summary_free(struct pt_summary *s)
{
	if (!s)
		return;
	free(s->steps);
	free(s->devices);
	free(s->operators.rows);
	free(s->op_detail.rows);
	free(s->kernels.rows);
	free(s->memory.rows);
	free(s->user_defined.rows);
	free(s);
}
