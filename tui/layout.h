/*
 * layout.h - where each pane goes, as a pure function of the screen size and
 * the number of meters (CPU(Process), CPU(System), one per GPU). No drawing,
 * no state: unit-tested for 40x12, 80x24 and 250x70 with 1 to 8 GPUs.
 *
 * From the top: the meters (in as many columns as fit; folded into a
 * compact form, then a minimal "label pct" form, when a full form would take
 * more than a third of the screen), the session line, the tab bar, the body
 * (the current view), and the key-hint bar on the bottom row.
 */
#ifndef TUI_LAYOUT_H
#define TUI_LAYOUT_H

#include "canvas.h"

#define TUI_MIN_W 40
#define TUI_MIN_H 10
#define TUI_MAX_METERS 18 /* 2 CPU + 16 GPU; more GPUs are not drawn */

enum tui_meter_form {
	TUI_METER_FULL = 0, /* label [bar] pct  sparkline */
	TUI_METER_COMPACT,  /* label [bar] pct */
	TUI_METER_MINI,     /* label pct */
};

struct tui_layout {
	int too_small;           /* below TUI_MIN_W x TUI_MIN_H: draw only a notice */
	int form;                /* enum tui_meter_form */
	int nmeters;             /* meters placed (<= requested, <= TUI_MAX_METERS) */
	int meter_cols;
	struct tui_rect meters[TUI_MAX_METERS];
	struct tui_rect session; /* one row */
	struct tui_rect tabs;    /* one row */
	struct tui_rect body;
	struct tui_rect help;    /* one row, the bottom one */
};

void tui_layout_compute(int w, int h, int nmeters, struct tui_layout *out);
/* 1 when a and b share a cell (empty rectangles share none). */
int tui_rect_overlap(struct tui_rect a, struct tui_rect b);

#endif
