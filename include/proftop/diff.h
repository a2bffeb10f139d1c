/*
 * diff.h - run-to-run comparison: two summaries side by side (BEFORE and
 * AFTER), as `proftop diff` prints them and as the screen's baseline delta
 * columns read them.
 *
 * A pt_diff_side is a summary detached from its trace: the names its tables
 * use are copied into the side's own string table (and the rows' name_id
 * renumbered into it), so the trace, which may hold a gigabyte of events,
 * can be freed once it is summarized; what stays is O(rows). Each side keeps
 * a name -> row index per table, so matching a row of another run by name
 * is one hash lookup (pt_diff_side_find).
 *
 * Figures by name (pt_diff_metric_value: ips, step_ms, reader_ratio, ...)
 * feed the Perf part of the diff and the CI gate (gate.h): pt_diff_metric
 * is a pt_metric_fn that offers the AFTER figures by name and NAME_delta,
 * the relative change (after - before) / before (-0.05 = 5 % lower).
 *
 * Threading: a side is immutable once made; read it from any thread.
 */
#ifndef PROFTOP_DIFF_H
#define PROFTOP_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proftop/agg.h"
#include "proftop/trace.h"

enum pt_diff_table {
	PT_DIFF_OPERATORS = 0,
	PT_DIFF_KERNELS,
	PT_DIFF_MEMORY,
	PT_DIFF_USER,
	PT_DIFF__TABLES
};
/* "operators", "kernels", "memory", "user_defined" (the JSON keys). */
const char *pt_diff_table_key(enum pt_diff_table k);

struct pt_diff_side;
/*
 * Takes ownership of s (a summary of t) and copies the names its tables use;
 * t is not kept and may be freed afterwards. label (may be NULL) names the
 * side in output (the file it came from); it is copied.
 */
struct pt_diff_side *pt_diff_side_new(const struct pt_trace *t, struct pt_summary *s,
				      const char *label);
void pt_diff_side_free(struct pt_diff_side *d);
const struct pt_summary *pt_diff_side_summary(const struct pt_diff_side *d);
const char *pt_diff_side_label(const struct pt_diff_side *d);
/* The name of id in the side's own table (its rows' name_id); "" when out of range. */
const char *pt_diff_side_name(const struct pt_diff_side *d, uint32_t id, size_t *len);
/* The row of table k named name[0..len), NULL when the side has none. O(1). */
const struct pt_row *pt_diff_side_find(const struct pt_diff_side *d, enum pt_diff_table k,
				       const char *name, size_t len);
/* The data pipeline of a side (datapipe.h), detached from its trace:
 * present = 0 when the run had none. Stages by total, the first
 * PT_DIFF_DP_STAGES, names without the "data: " prefix. */
#define PT_DIFF_DP_STAGES 16
struct pt_diff_data {
	int present;
	uint64_t queue_samples;     /* 0: no queue */
	double queue_empty_pct, queue_mean;
	size_t workers;
	double workers_busy_pct;
	size_t nstages;
	struct {
		char name[96];
		uint64_t calls;
		double total_ms, per_sample_ms, busy_pct;
	} stages[PT_DIFF_DP_STAGES];
};
const struct pt_diff_data *pt_diff_side_data(const struct pt_diff_side *d);

/* Table k of a summary. */
const struct pt_table *pt_diff_table_of(const struct pt_summary *s, enum pt_diff_table k);

/*
 * The time a row is compared by: CPU total for host rows, GPU total for
 * device rows (kernels, device memcpys).
 */
uint64_t pt_diff_row_ns(const struct pt_row *r);

/* ---- figures by name ---- */

/*
 * The figures the Perf part of a diff shows, in order, NULL-terminated:
 * steps, step_ms (avg step time), step_p50_ms, step_p99_ms, ips (as the
 * Perf Summary: samples/s when every step has a sample count, else
 * steps/s), samples_per_s (only when samples are known), steps_per_s,
 * reader_ms (avg dataloader time per step), reader_ratio (0..1),
 * dataloader_ms, forward_ms, backward_ms, optimization_ms, others_ms (CPU
 * time of the phase per step), gpu_ms (GPU time per step), gpu_util (0..1,
 * mean over devices), comm_ratio (0..1).
 */
extern const char *const pt_diff_metric_names[];
/*
 * One figure of s: 0 and *value; PT_ENOENT for an unknown name;
 * PT_ENOTAVAIL when the figure is undefined for s (no steps, no GPU, no
 * sample counts). Besides the names above, every figure of report's
 * --fail-if (src/analyze/gate_metrics.h) that needs no trace.
 */
int pt_diff_metric_value(const struct pt_summary *s, const char *name, double *value);

/* The context of pt_diff_metric. */
struct pt_diff_metric_ctx {
	const struct pt_summary *before, *after;
};
/*
 * A pt_metric_fn (gate.h): NAME is the AFTER figure, NAME_delta the relative
 * change (after - before) / before; PT_ENOTAVAIL when undefined (before is
 * 0 or missing), PT_ENOENT for unknown names. ctx: struct pt_diff_metric_ctx.
 */
int pt_diff_metric(void *ctx, const char *name, double *value);

/* ---- the changed rows ---- */

enum pt_diff_status { PT_DIFF_CHANGED = 0, PT_DIFF_NEW, PT_DIFF_VANISHED };

struct pt_diff_row {
	const struct pt_row *before, *after; /* NULL on the side without the row */
	const char *name;		     /* from the side that has it (not escaped) */
	size_t nlen;
	enum pt_diff_status status;
	uint64_t before_ns, after_ns; /* pt_diff_row_ns of each side, 0 when absent */
	int64_t delta_ns;	      /* after - before */
};
/*
 * The rows of table k on either side, by absolute delta of time, largest
 * first (ties by name), cut to top (0 = all). *out is allocated (free()).
 * Returns the count.
 */
size_t pt_diff_rows(const struct pt_diff_side *before, const struct pt_diff_side *after,
		    enum pt_diff_table k, size_t top, struct pt_diff_row **out);

/* ---- output ---- */

struct pt_diff_opts {
	size_t top; /* rows per table, 0 = all; default 20 */
};
void pt_diff_opts_init(struct pt_diff_opts *o);
/* Text in the layout of the report (Paddle's tables). 0 or PT_EIO. */
int pt_diff_text(FILE *out, const struct pt_diff_side *before, const struct pt_diff_side *after,
		 const struct pt_diff_opts *o);
/* One JSON object, schema proftop.diff/1 (README.md). 0 or PT_EIO. */
int pt_diff_json(FILE *out, const struct pt_diff_side *before, const struct pt_diff_side *after,
		 const struct pt_diff_opts *o);

#endif
