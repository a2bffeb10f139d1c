/*
 * diff_out.c - the faces of a run-to-run diff (diff.h): text in the layout
 * of the report's Paddle tables (a title centred in dashes, columns two
 * spaces apart, rows of dashes around the header; the Perf part in the
 * Perf Summary's "|" cells), and one JSON object (schema proftop.diff/1,
 * documented in docs/schemas.md).
 *
 * What is compared: the Perf figures (pt_diff_metric_value) and the Model
 * Summary phases per step (a phase's time / steps), so runs of different
 * lengths compare; the Operator, Kernel, Memory and UserDefined rows by
 * their total time (CPU for host rows, GPU for device rows), the ones that
 * changed most first, new and vanished ones marked. Every name from a trace
 * goes through pt_escape_term (text) or JSON escaping.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/diff.h"
#include "proftop/error.h"
#include "output/report_int.h"
#include "model/util.h"

#define CELL		64
#define PUT_LIT(b, lit) pt_buf_put((b), (lit), sizeof(lit) - 1)
#define NAME_CAP	1024
#define NAME_W		52
#define KERNEL_W	90

static const char *const ms_names[PT_MS__COUNT] = {
    "ProfileStep", "Dataloader", "Forward", "Backward", "Optimization", "Others",
};

static const char *const status_text[] = {"", "new", "vanished"};

static double ms_of(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* calls of a row: CPU calls for host rows, device activities for device rows */
static uint64_t row_calls(const struct pt_row *r)
{
	return r->is_device ? r->gpu.n : r->cpu.n;
}

static int max_i(int a, int b)
{
	return a > b ? a : b;
}

/* "+1.23" / "-1.23" / "0.00" */
static void fmt_signed(char *buf, double v, int prec)
{
	if (fabs(v) < 0.5 * pow(10, -prec))
		snprintf(buf, CELL, "%.*f", prec, 0.0);
	else
		snprintf(buf, CELL, "%+.*f", prec, v);
}

/* after / before as "0.25x"; "-" when before is 0 */
static void fmt_ratio(char *buf, double before, double after)
{
	if (before == 0 || !isfinite(after / before))
		snprintf(buf, CELL, "-");
	else
		snprintf(buf, CELL, "%.2fx", after / before);
}

static void fmt_pct(char *buf, double before, double after)
{
	if (before == 0 || !isfinite(after / before))
		snprintf(buf, CELL, "-");
	else {
		char s[CELL];
		fmt_signed(s, 100.0 * (after - before) / before, 1);
		snprintf(buf, CELL, "%.60s%%", s);
	}
}

static void side_line(FILE *out, const char *tag, const struct pt_diff_side *d)
{
	const struct pt_summary *s = pt_diff_side_summary(d);
	const char *label = pt_diff_side_label(d);
	char src[NAME_CAP];
	pt_escape_term(src, sizeof src, label, strlen(label), 200, 0);
	fprintf(out, "%s %s: %" PRIu64 " events", tag, src[0] ? src : "(unnamed)", s->events);
	if (s->nsteps) {
		int64_t lo = s->steps[0].number, hi = lo;
		for (size_t i = 1; i < s->nsteps; i++) {
			if (s->steps[i].number < lo)
				lo = s->steps[i].number;
			if (s->steps[i].number > hi)
				hi = s->steps[i].number;
		}
		fprintf(out, ", %zu step%s (%" PRId64 " to %" PRId64 ")", s->nsteps,
			s->nsteps == 1 ? "" : "s", lo, hi);
	} else {
		fputs(", no steps", out);
	}
	putc('\n', out);
}

/* ---- Perf ---- */

static void put_centered(FILE *out, const char *s, int width)
{
	int len = (int)strlen(s);
	int marg = width > len ? width - len : 0;
	int left = marg / 2 + (marg & width & 1);
	pt_box_n(out, ' ', left);
	fputs(s, out);
	pt_box_n(out, ' ', marg - left);
}

static void put_cells(FILE *out, const char *const *cells, int n)
{
	putc('|', out);
	for (int i = 0; i < n; i++) {
		put_centered(out, cells[i], 17);
		putc('|', out);
	}
	putc('\n', out);
}

static int metric_prec(const char *name)
{
	if (!strcmp(name, "steps"))
		return 0;
	if (!strcmp(name, "reader_ratio") || !strcmp(name, "gpu_util"))
		return 4;
	return 3;
}

static void put_perf(FILE *out, const struct pt_summary *b, const struct pt_summary *a)
{
	if (!b->perf.steps && !a->perf.steps) {
		fputs("Perf Summary: no steps found\n\n", out);
		return;
	}
	pt_box_title(out, "Perf Summary (diff)", 6 * 18 + 1, '=');
	const char *unit_b = b->perf.ips_samples ? "samples/s" : "steps/s";
	const char *unit_a = a->perf.ips_samples ? "samples/s" : "steps/s";
	fprintf(out, "Time Unit: ms, IPS Unit: %s", unit_a);
	if (strcmp(unit_a, unit_b))
		fprintf(out, " (before: %s, not comparable)", unit_b);
	fputs(", ratios 0..1\n", out);
	put_cells(out, (const char *const[]){"", "before", "after", "delta", "delta(%)", "ratio"},
		  6);
	for (size_t i = 0; pt_diff_metric_names[i]; i++) {
		const char *nm = pt_diff_metric_names[i];
		double vb, va;
		int hb = pt_diff_metric_value(b, nm, &vb) == 0;
		int ha = pt_diff_metric_value(a, nm, &va) == 0;
		if (!hb && !ha)
			continue;
		int prec = metric_prec(nm);
		char cb[CELL] = "-", ca[CELL] = "-", cd[CELL] = "-", cp[CELL] = "-", cr[CELL] = "-";
		if (hb)
			snprintf(cb, CELL, "%.*f", prec, vb);
		if (ha)
			snprintf(ca, CELL, "%.*f", prec, va);
		if (hb && ha) {
			fmt_signed(cd, va - vb, prec);
			fmt_pct(cp, vb, va);
			fmt_ratio(cr, vb, va);
		}
		put_cells(out, (const char *const[]){nm, cb, ca, cd, cp, cr}, 6);
	}
	putc('\n', out);
}

/* ---- Model ---- */

static double per_step_ms(const struct pt_summary *s, uint64_t ns)
{
	return s->perf.steps ? ms_of(ns) / (double)s->perf.steps : 0.0;
}

static void model_cells(const struct pt_summary *b, const struct pt_summary *a, int r, int gpu,
			char cells[4][CELL])
{
	uint64_t nb = gpu ? b->model[r].gpu.total_ns : b->model[r].cpu.total_ns;
	uint64_t na = gpu ? a->model[r].gpu.total_ns : a->model[r].cpu.total_ns;
	double vb = per_step_ms(b, nb), va = per_step_ms(a, na);
	snprintf(cells[0], CELL, "%.2f", vb);
	snprintf(cells[1], CELL, "%.2f", va);
	fmt_signed(cells[2], va - vb, 2);
	fmt_ratio(cells[3], vb, va);
}

static void put_model(FILE *out, const struct pt_summary *b, const struct pt_summary *a)
{
	if (!b->perf.steps && !a->perf.steps) {
		fputs("Model Summary: no steps found\n\n", out);
		return;
	}
	int gpu = b->has_gpu || a->has_gpu;
	int nc = gpu ? 9 : 5;
	int w[9] = {15, 12, 12, 12, 8, 12, 12, 12, 8};
	const char *head[9] = {"Name",	     "CPU Before", "CPU After", "CPU Delta", "Ratio",
			       "GPU Before", "GPU After",  "GPU Delta", "Ratio"};
	int tw = pt_box_width(w, nc);
	pt_box_title(out, "Model Summary (diff)", tw, '-');
	fprintf(out,
		"Time unit: ms per step (phase time / steps: %" PRIu64 " before, %" PRIu64
		" after)\n",
		b->perf.steps, a->perf.steps);
	pt_box_sep(out, w, nc);
	pt_box_row(out, w, nc, head, -1);
	pt_box_sep(out, w, nc);
	for (int r = 0; r < PT_MS__COUNT; r++) {
		char c[2][4][CELL], name[32];
		model_cells(b, a, r, 0, c[0]);
		model_cells(b, a, r, 1, c[1]);
		snprintf(name, sizeof name, "%s%s", r ? "  " : "", ms_names[r]);
		const char *cells[9] = {name,	 c[0][0], c[0][1], c[0][2], c[0][3],
					c[1][0], c[1][1], c[1][2], c[1][3]};
		pt_box_row(out, w, nc, cells, -1);
	}
	pt_box_sep(out, w, nc);
	putc('\n', out);
}

/* ---- the row tables ---- */

static const char *const table_titles[PT_DIFF__TABLES] = {
    "Operator Summary (diff)", "Kernel Summary (diff)", "Memory Manipulation Summary (diff)",
    "UserDefined Summary (diff)"};

enum { RC_NAME, RC_CB, RC_CA, RC_B, RC_A, RC_D, RC_P, RC_R, RC_S, RC__N };

static int row_cells(const struct pt_diff_row *r, int name_w, char *name, char c[RC__N][CELL])
{
	int cols = (int)pt_escape_term(name, NAME_CAP, r->name, r->nlen, (size_t)name_w, 0);
	snprintf(c[RC_CB], CELL, "%" PRIu64, r->before ? row_calls(r->before) : 0);
	snprintf(c[RC_CA], CELL, "%" PRIu64, r->after ? row_calls(r->after) : 0);
	snprintf(c[RC_B], CELL, "%.2f", ms_of(r->before_ns));
	snprintf(c[RC_A], CELL, "%.2f", ms_of(r->after_ns));
	fmt_signed(c[RC_D], (double)r->delta_ns / 1e6, 2);
	fmt_pct(c[RC_P], (double)r->before_ns, (double)r->after_ns);
	fmt_ratio(c[RC_R], (double)r->before_ns, (double)r->after_ns);
	snprintf(c[RC_S], CELL, "%s", status_text[r->status]);
	return cols;
}

static void put_rows(FILE *out, const struct pt_diff_side *b, const struct pt_diff_side *a,
		     enum pt_diff_table k, size_t top)
{
	struct pt_diff_row *rows;
	size_t n = pt_diff_rows(b, a, k, top, &rows);
	if (!n) {
		free(rows);
		return;
	}
	char name[NAME_CAP], c[RC__N][CELL];
	int name_w = k == PT_DIFF_KERNELS ? KERNEL_W : NAME_W, longest = 4;
	int w[RC__N] = {0, 6, 6, 10, 10, 10, 9, 7, 8};
	for (size_t i = 0; i < n; i++) {
		longest = max_i(longest, row_cells(&rows[i], name_w, name, c));
		for (int j = 1; j < RC__N; j++)
			w[j] = max_i(w[j], (int)strlen(c[j]));
	}
	w[RC_NAME] = longest < name_w ? longest : name_w;
	const char *time_kind = k == PT_DIFF_KERNELS			      ? "GPU"
				: k == PT_DIFF_OPERATORS || k == PT_DIFF_USER ? "CPU"
									      : "CPU|GPU";
	char hb[32], ha[32];
	snprintf(hb, sizeof hb, "%s Before", time_kind);
	snprintf(ha, sizeof ha, "%s After", time_kind);
	w[RC_B] = max_i(w[RC_B], (int)strlen(hb));
	w[RC_A] = max_i(w[RC_A], (int)strlen(ha));
	int tw = pt_box_width(w, RC__N);
	pt_box_title(out, table_titles[k], tw, '-');
	fprintf(out, "Time unit: ms (total time; host rows CPU, device rows GPU), by |delta|%s\n",
		top && n == top ? ", top rows only" : "");
	pt_box_sep(out, w, RC__N);
	pt_box_row(out, w, RC__N,
		(const char *const[]){"Name", "Calls", "Calls", hb, ha, "Delta", "Delta(%)",
				      "Ratio", "Status"},
		-1);
	pt_box_row(out, w, RC__N, (const char *const[]){"", "Before", "After", "", "", "", "", "", ""},
		-1);
	pt_box_sep(out, w, RC__N);
	for (size_t i = 0; i < n; i++) {
		int cols = row_cells(&rows[i], w[RC_NAME], name, c);
		const char *cells[RC__N] = {name,    c[RC_CB], c[RC_CA], c[RC_B], c[RC_A],
					    c[RC_D], c[RC_P],  c[RC_R],	 c[RC_S]};
		pt_box_row(out, w, RC__N, cells, cols);
	}
	pt_box_sep(out, w, RC__N);
	putc('\n', out);
	free(rows);
}

/* The data pipeline of both runs: the queue, the workers, each stage per
 * sample (matched by name). Only when a run has one. */
static void put_data(FILE *out, const struct pt_diff_side *before, const struct pt_diff_side *after)
{
	const struct pt_diff_data *b = pt_diff_side_data(before), *a = pt_diff_side_data(after);
	if (!b->present && !a->present)
		return;
	pt_box_title(out, "Data Pipeline", 100, '-');
	char vb[CELL], va[CELL];
	if (b->queue_samples || a->queue_samples) {
		snprintf(vb, sizeof vb, b->queue_samples ? "%.1f%%" : "-", b->queue_empty_pct);
		snprintf(va, sizeof va, a->queue_samples ? "%.1f%%" : "-", a->queue_empty_pct);
		fprintf(out, "Queue empty at a fetch: %s -> %s; ready on average: ", vb, va);
		snprintf(vb, sizeof vb, b->queue_samples ? "%.2f" : "-", b->queue_mean);
		snprintf(va, sizeof va, a->queue_samples ? "%.2f" : "-", a->queue_mean);
		fprintf(out, "%s -> %s\n", vb, va);
	} else {
		fputs("Queue: not recorded in either run\n", out);
	}
	fprintf(out, "Workers: %zu -> %zu; busy %.1f%% -> %.1f%%\n", b->workers, a->workers,
		b->workers_busy_pct, a->workers_busy_pct);
	fprintf(out, "%-36s %16s %16s %10s\n", "Stage (per sample, ms)", "Before", "After", "Change");
	char name[CELL * 2];
	for (int side = 0; side < 2; side++) {
		const struct pt_diff_data *x = side ? a : b, *y = side ? b : a;
		for (size_t i = 0; i < x->nstages; i++) {
			size_t j = 0;
			while (j < y->nstages && strcmp(y->stages[j].name, x->stages[i].name))
				j++;
			if (side && j < y->nstages)
				continue; /* shown with the BEFORE run's stages */
			const char *nm = x->stages[i].name;
			pt_escape_term(name, sizeof name, nm, strlen(nm), 36, 0);
			double pb = side ? 0 : x->stages[i].per_sample_ms;
			double pa = side ? x->stages[i].per_sample_ms
					 : j < y->nstages ? y->stages[j].per_sample_ms : 0;
			int hb = !side, ha = side || j < y->nstages;
			snprintf(vb, sizeof vb, hb ? "%.4f" : "-", pb);
			snprintf(va, sizeof va, ha ? "%.4f" : "-", pa);
			char ch[CELL] = "";
			if (hb && ha && pb > 0)
				snprintf(ch, sizeof ch, "%+.1f%%", 100.0 * (pa - pb) / pb);
			else
				snprintf(ch, sizeof ch, "%s", hb ? "vanished" : "new");
			fprintf(out, "%-36s %16s %16s %10s\n", name, vb, va, ch);
		}
	}
	putc('\n', out);
}

int pt_diff_text(FILE *out, const struct pt_diff_side *before, const struct pt_diff_side *after,
		 const struct pt_diff_opts *o)
{
	struct pt_diff_opts defaults;
	if (!o) {
		pt_diff_opts_init(&defaults);
		o = &defaults;
	}
	const struct pt_summary *b = pt_diff_side_summary(before), *a = pt_diff_side_summary(after);
	fputs("proftop diff: BEFORE -> AFTER\n", out);
	side_line(out, "Before", before);
	side_line(out, "After: ", after);
	if (b->perf.steps != a->perf.steps)
		fprintf(out,
			"Note: the runs have %" PRIu64 " and %" PRIu64
			" steps: the Model and Perf parts are per step, the tables are totals.\n",
			b->perf.steps, a->perf.steps);
	putc('\n', out);
	put_perf(out, b, a);
	put_model(out, b, a);
	put_data(out, before, after);
	for (int k = 0; k < PT_DIFF__TABLES; k++)
		put_rows(out, before, after, (enum pt_diff_table)k, o->top);
	fflush(out);
	return ferror(out) ? PT_EIO : 0;
}

/* ---- JSON ---- */

static void jnum(struct pt_buf *j, double v)
{
	if (isfinite(v))
		pt_buf_printf(j, "%.10g", v);
	else
		PUT_LIT(j, "null");
}

static void jside(struct pt_buf *j, const char *key, const struct pt_diff_side *d)
{
	const struct pt_summary *s = pt_diff_side_summary(d);
	const char *label = pt_diff_side_label(d);
	pt_buf_printf(j, "  \"%s\": {\"source\": ", key);
	pt_buf_json_str(j, label, strlen(label));
	pt_buf_printf(j, ", \"events\": %" PRIu64 ", \"steps\": %" PRIu64 ", \"ips_unit\": \"%s\"}",
		      s->events, s->perf.steps, s->perf.ips_samples ? "samples/s" : "steps/s");
}

/* "before", "after", "delta", "delta_pct", "ratio" of two figures */
static void jpair(struct pt_buf *j, double b, double a, int hb, int ha)
{
	PUT_LIT(j, "{\"before\": ");
	jnum(j, hb ? b : NAN);
	PUT_LIT(j, ", \"after\": ");
	jnum(j, ha ? a : NAN);
	PUT_LIT(j, ", \"delta\": ");
	jnum(j, hb && ha ? a - b : NAN);
	PUT_LIT(j, ", \"delta_pct\": ");
	jnum(j, hb && ha && b != 0 ? 100.0 * (a - b) / b : NAN);
	PUT_LIT(j, ", \"ratio\": ");
	jnum(j, hb && ha && b != 0 ? a / b : NAN);
	pt_buf_putc(j, '}');
}

static void jrows(struct pt_buf *j, const struct pt_diff_side *b, const struct pt_diff_side *a,
		  enum pt_diff_table k, size_t top)
{
	struct pt_diff_row *rows;
	size_t n = pt_diff_rows(b, a, k, top, &rows);
	pt_buf_printf(j, ",\n  \"%s\": [", pt_diff_table_key(k));
	for (size_t i = 0; i < n; i++) {
		const struct pt_diff_row *r = &rows[i];
		static const char *const st[] = {"changed", "new", "vanished"};
		pt_buf_printf(j, "%s\n    {\"name\": ", i ? "," : "");
		pt_buf_json_str(j, r->name, r->nlen);
		pt_buf_printf(j, ", \"status\": \"%s\", \"device\": %s", st[r->status],
			      (r->after ? r->after : r->before)->is_device ? "true" : "false");
		pt_buf_printf(j, ", \"calls_before\": %" PRIu64 ", \"calls_after\": %" PRIu64,
			      r->before ? row_calls(r->before) : 0,
			      r->after ? row_calls(r->after) : 0);
		PUT_LIT(j, ", \"total_ms\": ");
		jpair(j, ms_of(r->before_ns), ms_of(r->after_ns), 1, 1);
		uint64_t gb = r->before ? r->before->gpu.total_ns : 0;
		uint64_t ga = r->after ? r->after->gpu.total_ns : 0;
		PUT_LIT(j, ", \"gpu_total_ms\": ");
		jpair(j, ms_of(gb), ms_of(ga), 1, 1);
		pt_buf_putc(j, '}');
	}
	if (n)
		PUT_LIT(j, "\n  ]");
	else
		PUT_LIT(j, "]");
	free(rows);
}

static void jdata_side(struct pt_buf *j, const struct pt_diff_data *d)
{
	if (!d->present) {
		PUT_LIT(j, "null");
		return;
	}
	pt_buf_printf(j, "{\"queue_samples\": %" PRIu64 ", \"queue_empty_pct\": ", d->queue_samples);
	if (d->queue_samples)
		jnum(j, d->queue_empty_pct);
	else
		PUT_LIT(j, "null");
	PUT_LIT(j, ", \"queue_mean\": ");
	if (d->queue_samples)
		jnum(j, d->queue_mean);
	else
		PUT_LIT(j, "null");
	pt_buf_printf(j, ", \"workers\": %zu, \"workers_busy_pct\": ", d->workers);
	jnum(j, d->workers_busy_pct);
	PUT_LIT(j, ", \"stages\": [");
	for (size_t i = 0; i < d->nstages; i++) {
		if (i)
			PUT_LIT(j, ", ");
		PUT_LIT(j, "{\"name\": ");
		pt_buf_json_str(j, d->stages[i].name, strlen(d->stages[i].name));
		pt_buf_printf(j, ", \"calls\": %" PRIu64 ", \"total_ms\": ", d->stages[i].calls);
		jnum(j, d->stages[i].total_ms);
		PUT_LIT(j, ", \"per_sample_ms\": ");
		jnum(j, d->stages[i].per_sample_ms);
		PUT_LIT(j, ", \"busy_pct\": ");
		jnum(j, d->stages[i].busy_pct);
		pt_buf_putc(j, '}');
	}
	PUT_LIT(j, "]}");
}

int pt_diff_json(FILE *out, const struct pt_diff_side *before, const struct pt_diff_side *after,
		 const struct pt_diff_opts *o)
{
	struct pt_diff_opts defaults;
	if (!o) {
		pt_diff_opts_init(&defaults);
		o = &defaults;
	}
	const struct pt_summary *b = pt_diff_side_summary(before), *a = pt_diff_side_summary(after);
	struct pt_buf j = {0};
	PUT_LIT(&j, "{\n  \"schema\": \"proftop.diff/1\",\n");
	jside(&j, "before", before);
	PUT_LIT(&j, ",\n");
	jside(&j, "after", after);
	PUT_LIT(&j, ",\n  \"perf\": {");
	int first = 1;
	for (size_t i = 0; pt_diff_metric_names[i]; i++) {
		const char *nm = pt_diff_metric_names[i];
		double vb = 0, va = 0;
		int hb = pt_diff_metric_value(b, nm, &vb) == 0;
		int ha = pt_diff_metric_value(a, nm, &va) == 0;
		if (!hb && !ha)
			continue;
		pt_buf_printf(&j, "%s\n    \"%s\": ", first ? "" : ",", nm);
		jpair(&j, vb, va, hb, ha);
		first = 0;
	}
	if (first)
		PUT_LIT(&j, "}");
	else
		PUT_LIT(&j, "\n  }");
	PUT_LIT(&j, ",\n  \"model_summary\": [");
	for (int r = 0; r < PT_MS__COUNT; r++) {
		pt_buf_printf(&j, "%s\n    {\"name\": \"%s\", \"cpu_ms_per_step\": ", r ? "," : "",
			      ms_names[r]);
		jpair(&j, per_step_ms(b, b->model[r].cpu.total_ns),
		      per_step_ms(a, a->model[r].cpu.total_ns), b->perf.steps > 0,
		      a->perf.steps > 0);
		PUT_LIT(&j, ", \"gpu_ms_per_step\": ");
		jpair(&j, per_step_ms(b, b->model[r].gpu.total_ns),
		      per_step_ms(a, a->model[r].gpu.total_ns), b->perf.steps > 0,
		      a->perf.steps > 0);
		PUT_LIT(&j, ", \"cpu_total_ms\": ");
		jpair(&j, ms_of(b->model[r].cpu.total_ns), ms_of(a->model[r].cpu.total_ns), 1, 1);
		pt_buf_putc(&j, '}');
	}
	PUT_LIT(&j, "\n  ]");
	for (int k = 0; k < PT_DIFF__TABLES; k++)
		jrows(&j, before, after, (enum pt_diff_table)k, o->top);
	if (pt_diff_side_data(before)->present || pt_diff_side_data(after)->present) {
		PUT_LIT(&j, ",\n  \"data_pipeline\": {\"before\": ");
		jdata_side(&j, pt_diff_side_data(before));
		PUT_LIT(&j, ", \"after\": ");
		jdata_side(&j, pt_diff_side_data(after));
		pt_buf_putc(&j, '}');
	}
	PUT_LIT(&j, "\n}\n");
	fwrite(j.p, 1, j.len, out);
	pt_buf_free(&j);
	fflush(out);
	return ferror(out) ? PT_EIO : 0;
}
