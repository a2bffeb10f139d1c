/*
 * app.h - the TUI's state and its internal API, shared by the files of
 * tui/: the model the views read (model.c: the summary of the selected
 * window, the header's meters and sparklines), the table widget (table.c),
 * the views (view_*.c, a small vtable), the frame (app.c: tabs, key bar,
 * popups, key dispatch; header.c, help.c) and the curses backend (term.c).
 *
 * Everything here reads the trace and the summaries; nothing talks to a
 * backend. Single-threaded: the live loop calls in between polls.
 */
#ifndef TUI_APP_H
#define TUI_APP_H

#include <stdint.h>

#include "canvas.h"
#include "keys.h"
#include "layout.h"
#include "proftop/advisor.h"
#include "proftop/agg.h"
#include "proftop/diff.h"
#include "proftop/flops.h"
#include "proftop/datapipe.h"
#include "proftop/fuzzy.h"
#include "proftop/ranks.h"
#include "proftop/timeline.h"
#include "proftop/trace.h"
#include "tui.h"
#include "model/u32map.h"

#define TUI_SPARK_N 60        /* sparkline samples: the last minute, 1 s each */
#define TUI_SPARK_BUCKET_NS 1000000000ull

struct tui_meter {
	char label[16];       /* "CPU(Proc)", "GPU0" */
	int valid;            /* 0: N/A */
	double pct;           /* latest value */
	double spark[TUI_SPARK_N]; /* oldest first; < 0 = no data */
	int has_mem;
	double mem_used_bytes, mem_total_bytes;
	int has_dev;          /* GPU: a device-wide utilization (NVML) shown beside pct */
	double dev_pct;
};

enum tui_window { TUI_WIN_ALL = 0, TUI_WIN_STEPS, TUI_WIN_SECS, TUI_WIN__COUNT };
#define TUI_WIN_STEPS_N 10
#define TUI_WIN_SECS_NS (30ull * 1000000000ull)

/*
 * The screen's comparison with an earlier run, baseline.c (`view AFTER
 * --baseline BEFORE`, `run --baseline FILE`): delta columns in the tables,
 * per-step deltas on the Model Summary rows and before/after figures in the
 * Perf part. The baseline is a pt_diff_side (diff.h) made once by the
 * caller; what is rebuilt is only a map from the current summary's name ids
 * to the baseline's rows, once per model generation and table, so a redraw
 * costs one lookup per visible cell.
 */
struct tui_base {
	unsigned gen[PT_DIFF__TABLES];		       /* model gen the map was built for */
	const struct pt_summary *sum[PT_DIFF__TABLES]; /* and the summary */
	int built[PT_DIFF__TABLES];
	struct pt_u32map map[PT_DIFF__TABLES]; /* current name id -> baseline row + 1 */
};

struct tui_model {
	struct pt_summary *sum;   /* of the selected window, all ranks; never NULL after build */
	uint64_t built_events;    /* t->events_seen when built */
	int built_window;
	unsigned gen;             /* bumps on every rebuild: caches key on it */
	uint64_t cost_ns;         /* CPU a rebuild takes now (summary + ranks when needed) */
	uint64_t sum_cost_ns, ranks_cost_ns;
	/* Per-rank figures (ranks.h), computed only when the trace may hold two
	 * or more ranks and someone looks: the Ranks view, a rank filter, or new
	 * tracks (a rank may have appeared). Otherwise kept as last computed. */
	struct pt_ranks ranks;
	int ranks_ok;             /* ranks match the current data and window */
	uint32_t ranks_ntracks;   /* t->ntracks when ranks were computed */
	int rank;                 /* index into ranks.r shown by every view, -1 = all */
	int nmeters;
	struct tui_meter meters[TUI_MAX_METERS];
	int ngpu;
	char window_label[48];
	/* the advisor over what the views show (advisor.h): rebuilt with the
	 * summary and when the rank filter moves */
	struct pt_advice_list advice;
	uint64_t advice_cost_ns;
	uint64_t advice_due_ns;   /* the next rebuild that recomputes the advice */
	int advice_window;        /* the window the advice is of */
	/* FLOPs per operator and kernel name over the window (flops.h), built
	 * with the summary when the trace has operators with FLOPs; the index
	 * maps a name id to its first (largest) row + 1 */
	struct pt_flops_table flops;
	struct pt_u32map flops_ops, flops_kernels;
	struct pt_peak peak;
	int has_peak;
	struct pt_mfu mfu;        /* over the summary's steps, with the tables */
	int has_mfu;
	struct pt_datapipe dp;    /* the data pipeline over the same window (Data view) */
	/* the whole-session summary of a trace that grows (agg.h): made at the
	 * first rebuild that finds new events, so a file never pays for it */
	struct pt_agg_live *live_sum;
	struct pt_ranks_live *live_ranks; /* the same for the per-rank figures */
	/* "last 30 s" / "last 10 steps" of a trace that grows: the window from
	 * win_start[0] and the next two (15 and 30 s, or 5 and 10 steps, later),
	 * each made when its start is about now and kept up to date as events
	 * arrive: a refresh costs what arrived, and the window moves on at no
	 * cost (model.c) */
	struct pt_agg_live *win_live[3];
	uint64_t win_start[3];
};

/* One displayed table row (operators, kernels, memory, user-defined). */
struct tui_trow {
	const struct pt_row *row;
	const char *name;
	size_t nlen;
	uint16_t depth;           /* expansion depth (0 = ranking row) */
	struct pt_fuzzy_match m;  /* valid when searching */
};

enum tui_col {
	TUI_COL_NAME = 0,
	TUI_COL_CALLS,
	TUI_COL_CPU_TOTAL,
	TUI_COL_CPU_AVG,
	TUI_COL_CPU_MAX,
	TUI_COL_CPU_MIN,
	TUI_COL_CPU_RATIO,
	TUI_COL_GPU_TOTAL,
	TUI_COL_GPU_AVG,
	TUI_COL_GPU_MAX,
	TUI_COL_GPU_MIN,
	TUI_COL_GPU_RATIO,
	TUI_COL_TFLOPS,           /* with FLOPs (flops.h): achieved TFLOP/s */
	TUI_COL_PEAK,             /* ... and the share of the device's roofline */
	TUI_COL_DELTA,            /* with a baseline: change of the row's time (baseline.c) */
	TUI_COL_DELTA_PCT,
	TUI_COL__COUNT
};

struct tui_table {
	int view;
	int sort_col;             /* enum tui_col */
	int invert;
	int group;                /* operators: by type */
	char pat[64];
	size_t plen;
	int sel, top;
	uint32_t expanded;        /* name id of the expanded operator, 0 = none */
	/* cache, rebuilt when any input changes */
	unsigned built_gen;
	int built_sort, built_invert, built_group;
	char built_pat[64];
	uint32_t built_expanded;
	int built;
	struct tui_trow *rows;
	size_t nrows, cap;
	struct pt_row *grouped;   /* operator types */
	char **group_names;
	size_t ngrouped;
	int vis_cols[TUI_COL__COUNT]; /* columns shown at the last draw */
	int nvis;
};

/* The Ranks view: its sort and selection (rows are model.ranks). */
enum tui_rcol {
	TUI_RCOL_RANK = 0,
	TUI_RCOL_PID,
	TUI_RCOL_HOST,
	TUI_RCOL_STEPS,
	TUI_RCOL_LAST,
	TUI_RCOL_AVG,
	TUI_RCOL_P50,
	TUI_RCOL_MAX,
	TUI_RCOL_IPS,
	TUI_RCOL_READER,
	TUI_RCOL_GPU,
	TUI_RCOL_COMM,
	TUI_RCOL_CPU,
	TUI_RCOL__COUNT
};

struct tui_ranks_view {
	int sort_col;             /* enum tui_rcol */
	int invert;
	int sel, top;
	size_t *order;            /* row -> index into model.ranks.r */
	size_t norder, cap;
	int vis_cols[TUI_RCOL__COUNT];
	int nvis;
	/* the straggler's reason and the hang (colls.h), worked out again when
	 * the model is rebuilt (gen) or the collectives grow */
	unsigned coll_gen;
	size_t coll_rows;
	int coll_ok;
	char straggler[256];
	char hang[768];
	int64_t straggler_pid;    /* the straggler's process, -1: none from the collectives */
};

/* One display row of the Timeline: a row (depth) of a lane, or a device's heading. */
struct tui_tl_row {
	int lane;                 /* index into lanes; -1: the heading of `device`'s streams */
	int device;
	uint16_t depth;
	uint16_t hidden;          /* the lane's last row shown: deeper rows not shown */
};

/* An event the details popup links to (Enter goes there). */
struct tui_tl_item {
	struct pt_event ev;
	unsigned depth;
	const char *what;         /* "parent", "launched by", "launched" */
};

#define TUI_TL_ITEMS 24
#define TUI_TL_DEPTH_DEFAULT 8 /* nesting rows shown per lane at first (< > change it) */

struct tui_tl {
	uint64_t t0_ns, t1_ns;    /* visible range */
	uint64_t cursor_ns;
	int lane;                 /* cursor lane (index into lanes) */
	int depth;                /* cursor row within the lane */
	int top;                  /* first display row shown */
	int follow;
	int inited;
	int details;              /* details popup open */
	struct pt_event sel;      /* event under the cursor (valid when has_sel) */
	unsigned sel_depth;
	int has_sel;
	struct pt_lane *lanes;
	size_t nlanes, lanes_cap;
	uint64_t lanes_gen;       /* the cache generation they were listed at */
	int lanes_rank_on;        /* the rank filter they were listed for */
	int64_t lanes_rank_pid;
	uint8_t *collapsed;       /* per track id: shown as one row */
	size_t ncollapsed;
	int max_depth;            /* rows shown per lane at most */
	int show_empty;           /* 1: also lanes with nothing in view */
	struct tui_tl_row *rows;  /* display rows of the last frame */
	size_t nrows, rows_cap;
	int rows_h;               /* display rows that fit */
	/* search: names matching pat are highlighted; n / N go to the next / previous */
	char pat[64];
	size_t plen;
	uint8_t *match;           /* per name id */
	size_t nmatch;
	char match_pat[64];
	uint32_t match_names;     /* names in the string table when match was made */
	/* ':' go to step N */
	int prompt;
	char num[24];
	size_t numlen;
	size_t slow_k;            /* S pressed k times in a row: the k-th slowest */
	/* details popup: the related events listed, the one chosen (-1: none) */
	struct tui_tl_item items[TUI_TL_ITEMS];
	int nitems, item;
	struct pt_timeline_cache *cache; /* the per-lane index (timeline.h) */
	/* bucketed cells per display row, reused while the range, width and data stay */
	struct pt_cell *cells;
	size_t cells_cap;
	struct tui_tl_ck {
		uint32_t track;
		int depth, ok;
	} * ck;
	size_t ck_cap;
	uint64_t ck_t0, ck_t1, ck_gen;
	int ck_w;
	/* the ruler of the last frame (mouse clicks map columns to times) */
	int gx, gw, gy;
};

/* The Summary's step list: scrolls and sorts; Enter opens a step in the Timeline. */
struct tui_steps {
	int sel, top;             /* index into the shown order */
	int by_dur;               /* sorted slowest first (else by step number) */
	int invert;
	int at_end;               /* the selection follows the newest step */
	size_t *order;            /* shown order -> index into the summary's steps */
	size_t norder, cap;
	unsigned built_gen;
	int built_by_dur, built_invert;
	int y0, rows;             /* where the list was drawn (mouse) */
	uint64_t scale_ns;        /* a full bar: the longest step, at most 4x the median */
};

struct tui_mouse {
	int x, y;
	int button;               /* 1: left press, 4: wheel up, 5: wheel down */
};

struct tui_app {
	struct pt_trace *t;
	struct tui_opts o;
	struct tui_status st;     /* session line inputs, set by the caller */
	struct tui_model model;
	int view;
	int help;
	int help_top;             /* the help's first line shown */
	int paused;
	int searching;            /* typing into the search line */
	int window;               /* enum tui_window */
	int rank_on;              /* filter every view to the rank of rank_pid */
	int64_t rank_pid;         /* (by pid: indices move when ranks appear) */
	int quit;
	int quit_how;             /* TUI_QUIT_* once quit */
	int quit_ask;             /* the stop / leave running / stay question is up */
	struct tui_table tables[TUI_V__COUNT];
	struct tui_tl tl;
	struct tui_ranks_view rv;
	int advice_top;           /* Advice view: first line shown */
	struct tui_steps steps;   /* Summary's step list */
	struct tui_mouse mouse;   /* the last mouse event (TUI_KEY_MOUSE) */
	int tab_x0[TUI_V__COUNT], tab_x1[TUI_V__COUNT]; /* tab v's columns at the last draw */
	struct tui_base base;     /* baseline matching (baseline.c), when o.baseline */
	struct pt_diff_side *snap_base;        /* B: a snapshot of this session, owned */
	const struct pt_diff_side *file_base;  /* the --baseline FILE it replaces, if any */
	struct tui_layout lay;
	char msg[256];            /* transient status message */
	uint64_t msg_until_ns;
	uint64_t anomalies_seen;  /* anomaly files announced so far (o.anomalies) */
	uint32_t notes_seen;      /* the trace's notes announced so far */
	uint64_t now_ns;
	uint64_t ended_ns;        /* when a live session was first seen ended (elapsed stops) */
	uint32_t capture_req;     /* T: steps asked for, taken by tui_take_capture */
	uint32_t capture_gen;     /* the trace's capture list generation last shown */
	uint64_t capture_seen_ns; /* when it last changed */
};

/* model.c */
void tui_model_build(struct tui_app *a, int force);
void tui_model_free(struct tui_model *m);
void tui_fmt_ns(char *buf, size_t len, uint64_t ns);
/* The summary the views show: the filtered rank's, else all ranks'. */
struct pt_summary *tui_view_sum(const struct tui_app *a);
/* Ranks known to the model (0 when the trace holds fewer than two). */
size_t tui_nranks(const struct tui_app *a);
/* Filters every view to rank index i of model.ranks (-1: all ranks). */
void tui_rank_select(struct tui_app *a, int i);
/* Operator type of a name (see model.c for the rule); returns the length kept. */
size_t tui_op_type(const char *name, size_t len);

/* FLOPs of a table row (the model's FLOPs tables, by name): NULL when none. */
const struct pt_flops_row *tui_flops_of(const struct tui_app *a, const struct pt_row *r);

/* table.c */
void tui_table_init(struct tui_table *tb, int view);
void tui_table_free(struct tui_table *tb);
void tui_table_draw(struct tui_app *a, struct tui_table *tb, struct tui_canvas *c, struct tui_rect r);
int tui_table_action(struct tui_app *a, struct tui_table *tb, const struct tui_binding *b);
void tui_table_mouse(struct tui_app *a, struct tui_table *tb);
const char *tui_col_name(int col);

/* view_summary.c */
void tui_summary_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r);
int tui_summary_action(struct tui_app *a, const struct tui_binding *b);
void tui_summary_mouse(struct tui_app *a);
void tui_steps_free(struct tui_steps *sv);
void tui_dist_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r);

/* view_ranks.c */
void tui_ranks_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r);
int tui_ranks_action(struct tui_app *a, const struct tui_binding *b);
void tui_ranks_free(struct tui_ranks_view *rv);
/* "rank 3 of 8" / "all 8 ranks" into buf; "" with fewer than two ranks. */
void tui_rank_label(const struct tui_app *a, char *buf, size_t len);

/* baseline.c (struct tui_base above) */
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

/* header.c: a meter in its rect; the session line (announces new notes). */
void tui_meter_draw(struct tui_app *a, struct tui_canvas *c, const struct tui_meter *m,
		    struct tui_rect r);
void tui_session_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r);

/* A view's short name for a narrow tab bar ("Sum", "Kern"). */
const char *tui_view_short(int v);

/* help.c: the help screen in the body's rect. */
void tui_help_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r);

/* view_data.c */
void tui_data_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r);

/* view_advice.c */
void tui_advice_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r);
int tui_advice_action(struct tui_app *a, const struct tui_binding *b);

/* view_timeline.c */
void tui_tl_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r);
void tui_tl_free(struct tui_tl *tl);
enum tui_color tui_kind_color(int kind);
/* The lanes (listed again when the data or the rank filter changed). */
void tui_tl_refresh_lanes(struct tui_app *a);
/* Lane index of a track, -1 when it has none. */
int tui_tl_lane_of(const struct tui_tl *tl, uint32_t track);
/* Time at column x of the last frame's graph, 0 when x is outside it. */
int tui_tl_time_at(const struct tui_app *a, int x, uint64_t *t_ns);

/* timeline_nav.c: the Timeline's keys, search, jumps and details */
int tui_tl_action(struct tui_app *a, const struct tui_binding *b);
/* Typing into the ':' prompt; 1 when the key was taken. */
int tui_tl_prompt_key(struct tui_app *a, int key);
/* The search pattern changed (typing): matches are marked again. */
void tui_tl_search_changed(struct tui_app *a);
/* Shows step i of the timeline's step list (pt_timeline_steps) and selects it. */
void tui_tl_goto_step(struct tui_app *a, long i, const char *why);
/* Shows the step starting at start_ns on track (the Summary's Enter). */
void tui_tl_open_step(struct tui_app *a, uint32_t track, uint64_t start_ns);
/* The event under the cursor again (after the cursor or the data moved). */
void tui_tl_select(struct tui_app *a, int dir);
/* A mouse event in the Timeline's body. */
void tui_tl_mouse(struct tui_app *a);
/* The details popup over the view's rect r. */
void tui_tl_details_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r);

/* app.c */
void tui_app_init(struct tui_app *a, struct pt_trace *t, const struct tui_opts *o);
void tui_app_free(struct tui_app *a);
/* Draws the whole screen into c (sized by the caller). */
void tui_app_draw(struct tui_app *a, struct tui_canvas *c);
/* Handles one key (TUI_KEY_* or a byte); returns 1 when the user quits. */
int tui_app_key(struct tui_app *a, int key);
void tui_app_message(struct tui_app *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline struct tui_style tui_st(int color, int attr)
{
	struct tui_style s = {(uint8_t)color, (uint8_t)attr};
	return s;
}

#endif
