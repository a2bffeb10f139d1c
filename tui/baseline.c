/*
 * baseline.c - delta columns against a baseline run (app.h). Rows are
 * matched by name: per table, a map from the current trace's name ids to
 * the baseline's rows, built on first use after each model rebuild (one
 * hash lookup per row of the current table), so drawing a cell is one
 * radix lookup. A row's time is what `proftop diff` compares: CPU total for
 * host rows, GPU total for device rows. Operator types ('t') and the rows
 * of an expanded subtree have no counterpart in the baseline's tables and
 * show no delta; a name the baseline lacks shows "new".
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "model/util.h"

int tui_base_on(const struct tui_app *a)
{
	return a->o.baseline != NULL;
}

static enum pt_diff_table table_of_view(int view)
{
	switch (view) {
	case TUI_V_KERNELS:
		return PT_DIFF_KERNELS;
	case TUI_V_MEMORY:
		return PT_DIFF_MEMORY;
	case TUI_V_USER:
		return PT_DIFF_USER;
	default:
		return PT_DIFF_OPERATORS;
	}
}

static void ensure_map(struct tui_app *a, enum pt_diff_table k)
{
	struct tui_base *b = &a->base;
	const struct pt_summary *s = tui_view_sum(a);
	if (b->built[k] && b->gen[k] == a->model.gen && b->sum[k] == s)
		return;
	pt_u32map_free(&b->map[k]);
	const struct pt_table *tb = pt_diff_table_of(s, k);
	const struct pt_table *bt = pt_diff_table_of(pt_diff_side_summary(a->o.baseline), k);
	for (size_t i = 0; i < tb->n; i++) {
		uint32_t id = tb->rows[i].name_id;
		const char *nm = pt_trace_str(a->t, id);
		size_t len = pt_strtab_len(a->t->strings, id);
		const struct pt_row *br = pt_diff_side_find(a->o.baseline, k, nm, len);
		if (br && id)
			pt_u32map_put(&b->map[k], id, (uint32_t)(br - bt->rows) + 1);
	}
	b->built[k] = 1;
	b->gen[k] = a->model.gen;
	b->sum[k] = s;
}

/*
 * The baseline row of a displayed row: 1 and *br (NULL when new), or 0 when
 * no delta applies to the row.
 */
static int match(struct tui_app *a, int view, const struct tui_trow *tr, const struct pt_row **br)
{
	if (!tui_base_on(a) || tr->depth || !tr->row->name_id)
		return 0;
	enum pt_diff_table k = table_of_view(view);
	const struct pt_table *cur = pt_diff_table_of(tui_view_sum(a), k);
	if (tr->row < cur->rows || tr->row >= cur->rows + cur->n)
		return 0; /* a grouped or detail row */
	ensure_map(a, k);
	uint32_t at = pt_u32map_get(&a->base.map[k], tr->row->name_id);
	const struct pt_table *bt = pt_diff_table_of(pt_diff_side_summary(a->o.baseline), k);
	*br = at && at - 1 < bt->n ? &bt->rows[at - 1] : NULL;
	return 1;
}

static void fmt_signed_ns(char *buf, size_t len, int64_t d)
{
	char v[24];
	tui_fmt_ns(v, sizeof v, d < 0 ? -(uint64_t)d : (uint64_t)d);
	snprintf(buf, len, "%s%s", d < 0 ? "-" : d > 0 ? "+" : "", v);
}

void tui_base_cell(struct tui_app *a, int view, const struct tui_trow *tr, int col, char *buf,
		   size_t len)
{
	const struct pt_row *br;
	buf[0] = 0;
	if (!match(a, view, tr, &br))
		return;
	if (!br) {
		snprintf(buf, len, "new");
		return;
	}
	uint64_t now = pt_diff_row_ns(tr->row), was = pt_diff_row_ns(br);
	int64_t d = (int64_t)now - (int64_t)was;
	if (col == TUI_COL_DELTA)
		fmt_signed_ns(buf, len, d);
	else if (!was)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%+.1f%%", 100.0 * (double)d / (double)was);
}

uint64_t tui_base_sort_key(struct tui_app *a, int view, const struct tui_trow *tr, int col)
{
	const struct pt_row *br;
	if (!match(a, view, tr, &br))
		return 0;
	uint64_t now = pt_diff_row_ns(tr->row), was = br ? pt_diff_row_ns(br) : 0;
	if (col == TUI_COL_DELTA_PCT) {
		/* new rows first, then by relative growth; order-preserving map to uint64 */
		double p = was ? (double)now / (double)was : HUGE_VAL;
		return p >= 1.8e19 ? UINT64_MAX : (uint64_t)(p * 1e6);
	}
	return (uint64_t)((int64_t)now - (int64_t)was) ^ (1ull << 63);
}

void tui_base_model_cell(const struct tui_app *a, int row, char *buf, size_t len)
{
	buf[0] = 0;
	if (!tui_base_on(a) || row < 0 || row >= PT_MS__COUNT)
		return;
	const struct pt_summary *s = tui_view_sum(a), *b = pt_diff_side_summary(a->o.baseline);
	if (!s->perf.steps || !b->perf.steps)
		return;
	double now = (double)s->model[row].cpu.total_ns / (double)s->perf.steps;
	double was = (double)b->model[row].cpu.total_ns / (double)b->perf.steps;
	char d[32];
	fmt_signed_ns(d, sizeof d, (int64_t)llround(now - was));
	if (was > 0)
		snprintf(buf, len, "%s %+.0f%%", d, 100.0 * (now - was) / was);
	else
		snprintf(buf, len, "%s", d);
}

/* "name a -> b (+x%)" for one figure; "" when neither side has it. */
static int perf_item(char *buf, size_t len, const struct pt_summary *b, const struct pt_summary *s,
		     const char *name, const char *label, double scale, const char *unit)
{
	double vb, va;
	int hb = pt_diff_metric_value(b, name, &vb) == 0;
	int ha = pt_diff_metric_value(s, name, &va) == 0;
	if (!hb && !ha)
		return 0;
	char cb[24] = "-", ca[24] = "-", cp[24] = "";
	if (hb)
		snprintf(cb, sizeof cb, "%.2f%s", vb * scale, unit);
	if (ha)
		snprintf(ca, sizeof ca, "%.2f%s", va * scale, unit);
	if (hb && ha && vb != 0)
		snprintf(cp, sizeof cp, " (%+.1f%%)", 100.0 * (va - vb) / vb);
	snprintf(buf, len, "%s %s -> %s%s", label, cb, ca, cp);
	return 1;
}

int tui_base_perf_draw(struct tui_app *a, struct tui_canvas *c, int x, int y, int end, int w)
{
	if (!tui_base_on(a) || y >= end)
		return y;
	const struct pt_summary *s = tui_view_sum(a), *b = pt_diff_side_summary(a->o.baseline);
	static const struct {
		const char *name, *label, *unit;
		double scale;
	} items[] = {
	    {"ips", "ips", "", 1},
	    {"step_ms", "step", "ms", 1},
	    {"reader_ratio", "reader ratio", "%", 100},
	    {"step_p99_ms", "p99 step", "ms", 1},
	};
	const char *label = pt_diff_side_label(a->o.baseline);
	char src[200], line[512], item[128];
	pt_escape_term(src, sizeof src, label, strlen(label), 60, c->ascii ? PT_ESC_ASCII : 0);
	int nx = tui_put_str(c, x, y, x + w, "vs baseline ", tui_st(TUI_C_DIM, TUI_A_BOLD));
	tui_put_str(c, nx, y++, x + w, src, tui_st(TUI_C_DIM, 0));
	if (y >= end)
		return y;
	size_t n = 0;
	line[0] = 0;
	for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
		if (!perf_item(item, sizeof item, b, s, items[i].name, items[i].label,
			       items[i].scale, items[i].unit))
			continue;
		n += (size_t)snprintf(line + n, sizeof line - n, "%s%s", n ? " | " : "", item);
		if (n >= sizeof line)
			break;
	}
	tui_put_str(c, x, y++, x + w, line, tui_st(TUI_C_DEFAULT, 0));
	return y;
}

void tui_base_free(struct tui_base *b)
{
	for (int k = 0; k < PT_DIFF__TABLES; k++)
		pt_u32map_free(&b->map[k]);
	memset(b, 0, sizeof *b);
}
