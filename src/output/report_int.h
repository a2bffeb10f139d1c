/*
 * report_int.h - what the report faces (report.c text, report_json.c JSON,
 * export.c's embedded summary) share: row keys and calls, sorted copies of
 * summary tables with the --top cut applied, and exact number formatting.
 */
#ifndef PT_REPORT_INT_H
#define PT_REPORT_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "proftop/advisor.h"
#include "proftop/datapipe.h"
#include "proftop/report.h"
#include "model/util.h"

/* Calls of a row: CPU calls for host rows, device activities for device rows. */
static inline uint64_t pt_row_calls(const struct pt_row *r)
{
	return r->is_device ? r->gpu.n : r->cpu.n;
}

/* Min of a stat, 0 when empty (never UINT64_MAX). */
static inline uint64_t pt_stat_min(const struct pt_stat *s)
{
	return s->n ? s->min_ns : 0;
}

/* a / b * 100, 0 when b is 0. */
static inline double pt_pct(uint64_t a, uint64_t b)
{
	return b ? (double)a * 100.0 / (double)b : 0.0;
}

/*
 * The ratio columns, one definition for every face (text, JSON, Markdown,
 * screen): a row's CPU (GPU) ratio is its outermost calls' time
 * (cpu_ratio_ns, gpu_ratio_ns) over the table's base; a child row of a
 * tree (op detail), over its parent's total, as Paddle's op_detail does.
 */
static inline double pt_row_cpu_pct(const struct pt_table *v, const struct pt_row *r)
{
	if (r->depth > 0 && r->parent < v->n)
		return pt_pct(r->cpu_ratio_ns, v->rows[r->parent].cpu.total_ns);
	return pt_pct(r->cpu_ratio_ns, v->cpu_base_ns);
}
static inline double pt_row_gpu_pct(const struct pt_table *v, const struct pt_row *r)
{
	if (r->depth > 0 && r->parent < v->n)
		return pt_pct(r->gpu_ratio_ns, v->rows[r->parent].gpu.total_ns);
	return pt_pct(r->gpu_ratio_ns, v->gpu_base_ns);
}
/* An Overview row's ratio (struct pt_overview_row). */
static inline double pt_overview_pct(const struct pt_summary *s, int kind)
{
	return pt_pct(s->overview[kind].union_ns, s->overview[kind].ratio_base_ns);
}

/* The largest difference between proftop's Distributed figures and msprof's
 * own Overlap Analysis, in percent of msprof's (report.c; has_vendor only). */
double pt_vendor_overlap_diff_pct(const struct pt_distributed *d);

/* A sorted copy of a table, cut to top (0 = all; trees: top-level rows). */
struct pt_table pt_table_view(const struct pt_table *src, enum pt_sort_key key, size_t top,
			      const struct pt_trace *t);
void pt_table_view_free(struct pt_table *v);

/* report_box.c: Paddle-style text boxes (report.c, diff_out.c). */
void pt_box_n(FILE *out, char c, int n);                                  /* c, n times */
void pt_box_title(FILE *out, const char *title, int total, char fill);   /* centred in fill */
int pt_box_width(const int *w, int n);                                   /* columns of a row */
void pt_box_sep(FILE *out, const int *w, int n);                         /* dashes per column */
/* cells left aligned, two spaces apart, no trailing blanks; cols0: display
 * width of cells[0] (escaped names may be multi-byte), -1 = its length */
void pt_box_row(FILE *out, const int *w, int n, const char *const *cells, int cols0);
/* prefix, then text's words wrapped at cols under indent columns (a word
 * wider than a line is cut when cut); the advice, the brief summary. */
void pt_put_wrapped(FILE *out, const char *prefix, const char *text, int cols, int indent, int cut);

/* report_flops.c: the FLOPs Summary (only when the trace has operators
 * with FLOPs) and the JSON's "flops" object (always). */
void pt_report_flops_text(FILE *out, const struct pt_trace *t, const struct pt_summary *s,
			  const struct pt_report_opts *o);
/* The summary whose Overview a report shows: s, or with two or more ranks
 * (o->ranks) a copy of s in tmp whose Overview rows are the sums of each
 * rank's own (one rank's time never merged with another's). */
const struct pt_summary *pt_report_overview_of(const struct pt_summary *s,
					       const struct pt_report_opts *o,
					       struct pt_summary *tmp);
/* The Distributed figures a report shows: the summary's, or with two or
 * more ranks (o->ranks) the sum of each rank's own, so that one rank's
 * communication is never taken as overlapped by another rank's computation;
 * returns the number of ranks summed (0: the summary's). */
size_t pt_report_dist(const struct pt_summary *s, const struct pt_report_opts *o,
		      struct pt_distributed *d);
void pt_report_flops_json(struct pt_buf *b, const struct pt_trace *t, const struct pt_summary *s,
			  const struct pt_report_opts *o);
/* report_data.c: the Data Pipeline section (datapipe.h). */
struct pt_datapipe;
struct pt_dp_lane;
void pt_report_data_text(FILE *out, const struct pt_trace *t, const struct pt_datapipe *dp);
void pt_report_data_json(struct pt_buf *b, const struct pt_trace *t, const struct pt_datapipe *dp);
void pt_dp_lane_name(const struct pt_trace *t, const struct pt_dp_lane *l, char *buf, size_t cap);
/* report_data.c: the data pipeline's figures into dp (freed with
 * pt_datapipe_free) and, unless o->no_advice, the advisor's findings into
 * al (the advisor works the figures out anyway: one pass over the trace). */
struct pt_advice_list;
void pt_report_dp_advice(const struct pt_trace *t, const struct pt_summary *s,
			 const struct pt_report_opts *o, struct pt_datapipe *dp,
			 struct pt_advice_list *al);
/* pt_report_dp_advice begun before the report writes its tables: on a
 * large trace (its data pipeline reads every host event) on a thread of
 * its own meanwhile, else inline at once. dp and al hold the figures once
 * pt_report_adv_wait returns; both sides only read t and s. */
struct pt_report_adv {
	const struct pt_trace *t;
	const struct pt_summary *s;
	const struct pt_report_opts *o;
	struct pt_datapipe dp;
	struct pt_advice_list al;
	pthread_t th;
	int threaded;
};
void pt_report_adv_start(struct pt_report_adv *j, const struct pt_trace *t,
			 const struct pt_summary *s, const struct pt_report_opts *o);
void pt_report_adv_wait(struct pt_report_adv *j);

/* report_ranks.c: the per-rank parts, printed only with two or more ranks. */
struct pt_ranks;
void pt_report_ranks_text(FILE *out, const struct pt_ranks *r);
void pt_report_ranks_dist_text(FILE *out, const struct pt_ranks *r);
struct pt_straggler;
void pt_report_ranks_json(struct pt_buf *b, const struct pt_ranks *r, const struct pt_straggler *sg);

/* report_colls.c: the collectives across ranks (colls.h); c may be NULL. */
struct pt_coll_stats;
void pt_report_colls_json(struct pt_buf *b, const struct pt_coll_stats *c);
void pt_report_colls_text(FILE *out, const struct pt_coll_stats *c, const struct pt_straggler *sg);
/* The figures for a report of t (o's hang settings), and the straggler of o->ranks. */
void pt_report_colls_compute(const struct pt_trace *t, const struct pt_report_opts *o,
			     struct pt_coll_stats *c, struct pt_straggler *sg);

/* JSON body of the report into b (no trailing newline). */
void pt_report_json_buf(struct pt_buf *b, const struct pt_trace *t, const struct pt_summary *s,
			const struct pt_report_opts *o);

#endif
