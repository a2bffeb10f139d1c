/*
 * baseline.h - the screen's comparison with an earlier run (`view AFTER
 * --baseline BEFORE`, `run --baseline FILE`): delta columns in the tables,
 * per-step deltas on the Model Summary rows and before/after figures in the
 * Perf part. The baseline is a pt_diff_side (diff.h) made once by the
 * caller; what is rebuilt is only a map from the current summary's name ids
 * to the baseline's rows, once per model generation and table, so a redraw
 * costs one lookup per visible cell.
 */
#ifndef TUI_BASELINE_H
#define TUI_BASELINE_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/diff.h"
#include "model/u32map.h"

struct tui_app;
struct tui_trow;
struct tui_canvas;

struct tui_base {
	unsigned gen[PT_DIFF__TABLES];		       /* model gen the map was built for */
	const struct pt_summary *sum[PT_DIFF__TABLES]; /* and the summary */
	int built[PT_DIFF__TABLES];
	struct pt_u32map map[PT_DIFF__TABLES]; /* current name id -> baseline row + 1 */
};

/* 1 when the screen compares with a baseline. */
int tui_base_on(const struct tui_app *a);
/*
 * Text of a delta column (TUI_COL_DELTA: "+1.20ms", TUI_COL_DELTA_PCT:
 * "-12.5%") for a table row of view; "new" when the baseline has no row of
 * that name; "" where no delta applies (operator types, expanded subtrees).
 */
void tui_base_cell(struct tui_app *a, int view, const struct tui_trow *tr, int col, char *buf,
		   size_t len);
/* A sort key for the delta columns: larger = grew more (new rows by their time). */
uint64_t tui_base_sort_key(struct tui_app *a, int view, const struct tui_trow *tr, int col);
/* The Model Summary row's CPU per-step delta vs the baseline, e.g. "-9.81ms -78%". */
void tui_base_model_cell(const struct tui_app *a, int row, char *buf, size_t len);
/* Draws the before/after lines of the Perf part from y; returns the next y. */
int tui_base_perf_draw(struct tui_app *a, struct tui_canvas *c, int x, int y, int end, int w);
void tui_base_free(struct tui_base *b);

#endif
