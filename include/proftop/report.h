/*
 * report.h - the summary tables as text (Paddle's layout) and as JSON.
 *
 * Text output escapes every name taken from a trace (control characters,
 * invalid UTF-8) so nothing from a trace reaches the terminal raw. The JSON
 * schema is stable and documented in README.md.
 */
#ifndef PROFTOP_REPORT_H
#define PROFTOP_REPORT_H

#include <stdio.h>

#include "proftop/agg.h"
#include "proftop/trace.h"

struct pt_ranks;
struct pt_advisor_prescan;

enum pt_sort_key {
	PT_SORT_TOTAL = 0, /* CPU total (host tables) or GPU total (device tables) */
	PT_SORT_AVG,
	PT_SORT_MAX,
	PT_SORT_CALLS,
	PT_SORT_GPU,       /* GPU total */
	PT_SORT_NAME,
};

struct pt_report_opts {
	size_t top;              /* rows per table, 0 = all */
	enum pt_sort_key sort;
	int op_detail;           /* text: show inner ops and kernels under each op */
	int width;               /* name column width for text, 0 = default */
	/* Per-rank figures (pt_ranks_compute) of a trace with several ranks:
	 * with two or more, the text adds the Rank Summary and the Distributed
	 * Summary per rank, the JSON a "ranks" array. NULL: none (not owned). */
	const struct pt_ranks *ranks;
	int no_advice;           /* 1: no Advice section (text), an empty "advice" array (JSON) */
	/* the device peak of the FLOPs Summary (flops.h): --peak-tflops,
	 * --peak-gbps; 0 = from the trace's device name, if known */
	double peak_tflops, peak_gbps;
	/* the advisor's store scan made beside the summary (advisor.h;
	 * pt_advise_trace_pre checks its span), NULL: none (not owned) */
	const struct pt_advisor_prescan *prescan;
	/* the hang (colls.h): a collective open this long (0: 30 s), measured
	 * at now_ns (0: the trace's last event) */
	uint64_t hang_after_ns, now_ns;
};
void pt_report_opts_init(struct pt_report_opts *o);
/* The MFU in one line, for a screen: "MFU 0.05% of the fp32 dense peak
 * (V100), 0.007 TFLOP/s a step; 14.6% of device time has FLOPs", or "MFU
 * n/a (why), ..." (flops.h: struct pt_mfu; pk may be NULL). Returns the
 * length. */
struct pt_mfu;
struct pt_peak;
struct pt_flops_table;
size_t pt_report_mfu_line(char *buf, size_t len, const struct pt_mfu *m, const struct pt_peak *pk);
/* The FLOPs tables over [t0_ns, t1_ns) and the MFU over s's steps (those its
 * figures count: a step that compiled is left out with them), from one pass
 * over the trace (pt_flops_summarize_mfu); returns the MFU's 0 or -1, with
 * tab and m set either way (free both). */
int pt_report_flops_mfu(const struct pt_trace *t, const struct pt_summary *s, uint64_t t0_ns,
			uint64_t t1_ns, const struct pt_peak *pk, struct pt_flops_table *tab,
			struct pt_mfu *m);

int pt_report_text(FILE *out, const struct pt_trace *t, const struct pt_summary *s,
		   const struct pt_report_opts *o);
int pt_report_json(FILE *out, const struct pt_trace *t, const struct pt_summary *s,
		   const struct pt_report_opts *o);
/* The summary in a dozen lines no wider than cols (50 to 160): steps and
 * their figures, where a step goes, the costliest operators and kernels,
 * advice and notes wrapped (report_brief.c). What a screen prints when it
 * closes; pt_report_text has the full tables. */
int pt_report_brief(FILE *out, const struct pt_trace *t, const struct pt_summary *s,
		    const struct pt_report_opts *o, int cols);
/* The summary as GitHub Markdown (headings, pipe tables; names escaped). */
int pt_report_md(FILE *out, const struct pt_trace *t, const struct pt_summary *s,
		 const struct pt_report_opts *o);

/* Sorts rows of a table in place (stable; ties by name). */
void pt_table_sort(struct pt_table *tb, enum pt_sort_key key, const struct pt_trace *t);

/* `proftop cluster`'s view of a whole job (cluster.h, src/output/cluster_out.c):
 * a table of ranks, at most max_rows of them (0: every rank; past it the
 * straggler and the missing ranks first, then the slowest), or JSON. */
struct pt_cluster;
void pt_cluster_text(FILE *out, const struct pt_cluster *c, size_t max_rows);
void pt_cluster_json(FILE *out, const struct pt_cluster *c);

#endif
