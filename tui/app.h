/*
 * app.h - the TUI's state and its internal API, shared by the files of
 * tui/: the model the views read (model.c: the summary of the selected
 * window, the header's meters and sparklines), the table widget (table.c),
 * the views (view_*.c, a small vtable), the frame (app.c: header, tabs, help
 * bar, popups, key dispatch) and the curses backend (term.c).
 *
 * Everything here reads the trace and the summaries; nothing talks to a
 * backend. Single-threaded: the live loop calls in between polls.
 */
#ifndef TUI_APP_H
#define TUI_APP_H

#include <stdint.h>

#include "baseline.h"
#include "canvas.h"
#include "keys.h"
#include "layout.h"
#include "proftop/advisor.h"
#include "proftop/agg.h"
#include "proftop/fuzzy.h"
#include "proftop/ranks.h"
#include "proftop/timeline.h"
#include "proftop/trace.h"
#include "tui.h"

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

struct tui_model {
	struct pt_summary *sum;   /* of the selected window, all ranks; never NULL after build */
	uint64_t built_events;    /* t->events_seen when built */
	int built_window;
	unsigned gen;             /* bumps on every rebuild: caches key on it */
	uint64_t cost_ns;         /* what a rebuild takes now (summary + ranks when needed) */
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
};

struct tui_tl {
	uint64_t t0_ns, t1_ns;    /* visible range */
	uint64_t cursor_ns;
	int lane;                 /* cursor lane (index into lanes) */
	int lane_top;             /* first lane shown */
	int follow;
	int inited;
	int details;              /* details popup open */
	struct pt_event sel;      /* event under the cursor (valid when has_sel) */
	int has_sel;
	struct pt_lane *lanes;
	size_t nlanes;
	uint32_t lanes_for_tracks;/* t->ntracks when lanes were listed */
	int lanes_rank_on;        /* the rank filter they were listed for */
	int64_t lanes_rank_pid;
	struct pt_timeline_cache *cache; /* per-lane index: frames cost O(cells), not O(events) */
	/* bucketed cells per lane, reused while the range, width and data stay */
	struct pt_cell *cells;
	size_t cells_cap;
	uint8_t *cell_ok;
	uint64_t ck_t0, ck_t1, ck_events;
	int ck_w;
	size_t ck_lanes;
};

struct tui_app {
	struct pt_trace *t;
	struct tui_opts o;
	struct tui_status st;     /* session line inputs, set by the caller */
	struct tui_model model;
	int view;
	int help;
	int paused;
	int searching;            /* typing into the search line */
	int window;               /* enum tui_window */
	int rank_on;              /* filter every view to the rank of rank_pid */
	int64_t rank_pid;         /* (by pid: indices move when ranks appear) */
	int quit;
	struct tui_table tables[TUI_V__COUNT];
	struct tui_tl tl;
	struct tui_ranks_view rv;
	int advice_top;           /* Advice view: first line shown */
	struct tui_base base;     /* baseline matching (baseline.c), when o.baseline */
	struct pt_diff_side *snap_base;        /* B: a snapshot of this session, owned */
	const struct pt_diff_side *file_base;  /* the --baseline FILE it replaces, if any */
	struct tui_layout lay;
	char msg[256];            /* transient status message */
	uint64_t msg_until_ns;
	uint64_t anomalies_seen;  /* anomaly files announced so far (o.anomalies) */
	uint32_t notes_seen;      /* the trace's notes announced so far */
	uint64_t now_ns;
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

/* table.c */
void tui_table_init(struct tui_table *tb, int view);
void tui_table_free(struct tui_table *tb);
void tui_table_draw(struct tui_app *a, struct tui_table *tb, struct tui_canvas *c, struct tui_rect r);
int tui_table_action(struct tui_app *a, struct tui_table *tb, const struct tui_binding *b);
const char *tui_col_name(int col);

/* view_summary.c */
void tui_summary_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r);
void tui_dist_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r);

/* view_ranks.c */
void tui_ranks_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r);
int tui_ranks_action(struct tui_app *a, const struct tui_binding *b);
void tui_ranks_free(struct tui_ranks_view *rv);
/* "rank 3 of 8" / "all 8 ranks" into buf; "" with fewer than two ranks. */
void tui_rank_label(const struct tui_app *a, char *buf, size_t len);

/* view_advice.c */
void tui_advice_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r);
int tui_advice_action(struct tui_app *a, const struct tui_binding *b);

/* view_timeline.c */
void tui_tl_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r);
int tui_tl_action(struct tui_app *a, const struct tui_binding *b);
void tui_tl_free(struct tui_tl *tl);
enum tui_color tui_kind_color(int kind);

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
