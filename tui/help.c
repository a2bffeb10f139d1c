/*
 * help.c - the help screen (h / ?): every key of the key table with what
 * it does in the current view, wrapped to the screen and scrolled, after
 * the anomalies recorded so far when there are any.
 */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "proftop/anomaly.h"
#include "model/util.h"

/* One row of the help: line k of help_lines, from byte off of its text, len bytes. */
struct help_row {
	int li;
	int off, len;
};

/* The help screen's last rows: the anomaly files kept, newest last. Returns the rows used. */
static int draw_help_anomalies(struct tui_app *a, struct tui_canvas *c, struct tui_rect r)
{
	const struct pt_anomaly_rec *v;
	size_t n = pt_anomaly_files(a->o.anomalies, &v);
	int rows = n ? (int)n + 1 : 0;
	if (rows > r.h / 3)
		rows = r.h / 3;
	if (rows < 2)
		return 0;
	int y = r.y + r.h - rows;
	tui_printf(c, r.x, y++, r.x + r.w, tui_st(TUI_C_HEADER, TUI_A_BOLD),
		   "Anomalies saved (%zu kept, newest last)", n);
	for (size_t i = n - (size_t)(rows - 1); i < n; i++, y++) {
		int x = tui_printf(c, r.x, y, r.x + r.w, tui_st(TUI_C_WARN, 0), "step %-8lld %5.1fx %s ",
				   (long long)v[i].step, v[i].ratio,
				   v[i].reasons & PT_ANOMALY_READER ? "reader" : "slow  ");
		tui_put_name(c, x, y, r.x + r.w - x, v[i].path, strlen(v[i].path),
			     tui_st(TUI_C_DEFAULT, 0));
	}
	return rows;
}

/* The help's lines: the current view's own keys, then every view's (the
 * view keys 1-9 folded into one line); -1 and -2 are section titles, -3 the
 * folded view keys. Returns the count. */
static int help_lines(const struct tui_app *a, int *out, int max)
{
	int n = 0, views_done = 0;
	if (n < max)
		out[n++] = -1;
	for (size_t i = 0; i < tui_nbindings && n < max; i++)
		if (tui_bindings[i].views & TUI_VM(a->view))
			out[n++] = (int)i;
	if (n < max)
		out[n++] = -2;
	for (size_t i = 0; i < tui_nbindings && n < max; i++) {
		const struct tui_binding *b = &tui_bindings[i];
		if (b->views)
			continue;
		if (b->act == TUI_ACT_VIEW) {
			if (!views_done)
				out[n++] = -3;
			views_done = 1;
			continue;
		}
		out[n++] = (int)i;
	}
	return n;
}

/* The folded view keys' text: "the views: 1 Sum, 2 Ops, ..." */
static const char *views_text(void)
{
	static char buf[200];
	if (!buf[0]) {
		size_t o = 0;
		for (int v = 0; v < TUI_V__COUNT && o < sizeof buf; v++)
			o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%d %s", v ? ", " : "the views: ",
					      (v + 1) % 10, tui_view_short(v));
	}
	return buf;
}

/* The help's rows with each key's text wrapped at words to width columns
 * (from column 17); returns the count. */
static int help_rows(const int *lines, int n, int width, struct help_row *out, int max)
{
	int m = 0;
	int avail = width - 18 > 20 ? width - 18 : 20;
	for (int k = 0; k < n && m < max; k++) {
		if (lines[k] < 0 && lines[k] != -3) {
			out[m++] = (struct help_row){lines[k], 0, 0};
			continue;
		}
		const char *h = lines[k] == -3 ? views_text() : tui_bindings[lines[k]].help;
		int len = (int)strlen(h), off = 0;
		do {
			int take = len - off;
			if (take > avail) { /* at the last space that fits */
				take = avail;
				while (take > avail / 2 && h[off + take] != ' ')
					take--;
			}
			out[m++] = (struct help_row){lines[k], off, take};
			off += take;
			while (off < len && h[off] == ' ')
				off++;
		} while (off < len && m < max);
	}
	return m;
}

void tui_help_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r)
{
	int y = r.y;
	char title[96];
	snprintf(title, sizeof title, "Keys in %s (Up/Down/PgDn scroll, any other key closes this help)",
		 tui_view_name(a->view));
	tui_put_str(c, r.x, y++, r.x + r.w, title, tui_st(TUI_C_HEADER, TUI_A_BOLD));
	r.h -= draw_help_anomalies(a, c, r);
	int lines[TUI_BIND_MAX + 8];
	int n = help_lines(a, lines, (int)(sizeof lines / sizeof lines[0]));
	int per = r.y + r.h - y;
	if (per < 1)
		return;
	/* the whole width when everything fits one below the other (or the
	 * terminal is narrow); else two columns; long texts wrap, never cut */
	static struct help_row rows[4 * (TUI_BIND_MAX + 8)];
	int max = (int)(sizeof rows / sizeof rows[0]);
	int nr = help_rows(lines, n, r.w, rows, max), cols = 1, colw = r.w;
	if (nr > per && r.w >= 120) {
		cols = 2;
		colw = r.w / 2;
		nr = help_rows(lines, n, colw, rows, max);
	}
	int max_top = nr - per * cols > 0 ? nr - per * cols : 0;
	if (a->help_top > max_top)
		a->help_top = max_top;
	if (a->help_top < 0)
		a->help_top = 0;
	for (int k = 0; k < per * cols && a->help_top + k < nr; k++) {
		const struct help_row *hr = &rows[a->help_top + k];
		int li = hr->li;
		int x = r.x + (k / per) * colw, yy = y + k % per;
		if (li == -1 || li == -2) {
			tui_printf(c, x, yy, x + colw - 1, tui_st(TUI_C_HEADER, TUI_A_BOLD | TUI_A_UNDERLINE),
				   "%s", li == -1 ? tui_view_name(a->view) : "Every view");
			continue;
		}
		if (li == -3) {
			if (hr->off == 0)
				tui_printf(c, x, yy, x + colw, tui_st(TUI_C_KEY, TUI_A_BOLD), "%-16s",
					   "1 .. 9, 0");
			tui_printf(c, x + 17, yy, x + colw - 1, tui_st(TUI_C_DEFAULT, 0), "%.*s", hr->len,
				   views_text() + hr->off);
			continue;
		}
		const struct tui_binding *b = &tui_bindings[li];
		if (hr->off == 0) {
			char keys[48] = "", kn[16];
			for (int j = 0; j < TUI_BIND_KEYS && b->keys[j]; j++) {
				tui_key_name(b->keys[j], kn, sizeof kn);
				if (j)
					strncat(keys, " ", sizeof keys - strlen(keys) - 1);
				strncat(keys, kn, sizeof keys - strlen(keys) - 1);
			}
			tui_printf(c, x, yy, x + colw, tui_st(TUI_C_KEY, TUI_A_BOLD), "%-16s", keys);
		}
		tui_printf(c, x + 17, yy, x + colw - 1, tui_st(TUI_C_DEFAULT, 0), "%.*s", hr->len,
			   b->help + hr->off);
	}
	if (a->help_top + per * cols < nr)
		tui_put_str(c, r.x + r.w - 10, r.y, r.x + r.w, "(more ...)", tui_st(TUI_C_DIM, 0));
}
