/*
 * layout.c - pane rectangles from the screen size (layout.h). Pure code.
 *
 * Meters take the minimum width of their form (full 44, compact 24, mini
 * 12 columns) and are spread over as many columns as fit; the header may use
 * at most a third of the rows (at least one), so the body always keeps room.
 * When the full form needs more rows it folds to compact, then to mini; mini
 * meters that still do not fit are dropped (the Summary's device table still
 * lists every device).
 */
#include <string.h>

#include "layout.h"

static const int form_min_w[3] = {44, 24, 12};

int tui_rect_overlap(struct tui_rect a, struct tui_rect b)
{
	if (a.w <= 0 || a.h <= 0 || b.w <= 0 || b.h <= 0)
		return 0;
	return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

void tui_layout_compute(int w, int h, int nmeters, struct tui_layout *out)
{
	memset(out, 0, sizeof *out);
	if (w < TUI_MIN_W || h < TUI_MIN_H) {
		out->too_small = 1;
		return;
	}
	if (nmeters > TUI_MAX_METERS)
		nmeters = TUI_MAX_METERS;
	if (nmeters < 0)
		nmeters = 0;
	int max_rows = h / 3;
	if (max_rows < 1)
		max_rows = 1;
	int form = TUI_METER_FULL, cols = 1, rows = 0;
	for (form = TUI_METER_FULL; form <= TUI_METER_MINI; form++) {
		cols = w / form_min_w[form];
		if (cols < 1)
			cols = 1;
		if (cols > nmeters)
			cols = nmeters ? nmeters : 1;
		rows = (nmeters + cols - 1) / cols;
		if (rows <= max_rows)
			break;
	}
	if (form > TUI_METER_MINI) {
		form = TUI_METER_MINI;
		rows = max_rows;
		if (nmeters > rows * cols)
			nmeters = rows * cols;
	}
	out->form = form;
	out->nmeters = nmeters;
	out->meter_cols = cols;
	int cw = w / cols;
	for (int i = 0; i < nmeters; i++) {
		int c = i % cols, r = i / cols;
		/* the last column takes the remainder so meters reach the right edge */
		int mw = c == cols - 1 ? w - c * cw : cw;
		out->meters[i] = (struct tui_rect){c * cw, r, mw, 1};
	}
	int y = rows;
	out->session = (struct tui_rect){0, y++, w, 1};
	out->tabs = (struct tui_rect){0, y++, w, 1};
	out->help = (struct tui_rect){0, h - 1, w, 1};
	out->body = (struct tui_rect){0, y, w, h - 1 - y};
}
