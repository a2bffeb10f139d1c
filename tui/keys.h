/*
 * keys.h - the one key table: every binding (keys, the views it applies to,
 * the action, a help line and an optional bottom-bar hint). Dispatch, the
 * help screen and the bottom bar all read this table, so they cannot
 * disagree. Key codes are our own (term.c translates curses codes), so the
 * table and its tests need no curses.
 */
#ifndef TUI_KEYS_H
#define TUI_KEYS_H

#include <stddef.h>

/* Views, in the order of their number keys. */
enum tui_view_id {
	TUI_V_SUMMARY = 0,
	TUI_V_OPERATORS,
	TUI_V_KERNELS,
	TUI_V_TIMELINE,
	TUI_V_MEMORY,
	TUI_V_DISTRIBUTED,
	TUI_V_USER,
	TUI_V_RANKS, /* shown when the trace holds two or more ranks */
	TUI_V_ADVICE, /* the bottleneck advisor's findings (view_advice.c) */
	TUI_V_DATA,   /* the data pipeline: queue, lanes, stages (view_data.c) */
	TUI_V__COUNT
};
#define TUI_VM(v) (1u << (v))
#define TUI_VM_ALL 0u /* every view */
#define TUI_VM_TABLES (TUI_VM(TUI_V_OPERATORS) | TUI_VM(TUI_V_KERNELS) | TUI_VM(TUI_V_MEMORY) | \
		       TUI_VM(TUI_V_USER))
#define TUI_VM_TL TUI_VM(TUI_V_TIMELINE)
#define TUI_VM_SORTABLE (TUI_VM_TABLES | TUI_VM(TUI_V_RANKS) | TUI_VM(TUI_V_SUMMARY))

/* Special keys (above any byte). */
enum {
	TUI_KEY_UP = 0x10000,
	TUI_KEY_DOWN,
	TUI_KEY_LEFT,
	TUI_KEY_RIGHT,
	TUI_KEY_SLEFT,  /* shift+left */
	TUI_KEY_SRIGHT,
	TUI_KEY_PGUP,
	TUI_KEY_PGDN,
	TUI_KEY_HOME,
	TUI_KEY_END,
	TUI_KEY_ENTER,
	TUI_KEY_ESC,
	TUI_KEY_TAB,
	TUI_KEY_BTAB,
	TUI_KEY_BACKSPACE,
	TUI_KEY_RESIZE,
	TUI_KEY_MOUSE,  /* a click or the wheel: where and which in tui_app.mouse */
	TUI_KEY_F1,     /* F1..F12 follow */
	TUI_KEY_F12 = TUI_KEY_F1 + 11,
};
#define TUI_KEY_F(n) (TUI_KEY_F1 + (n)-1)
#define TUI_CTRL(c) ((c)&0x1f)

enum tui_action {
	TUI_ACT_NONE = 0,
	TUI_ACT_QUIT,
	TUI_ACT_HELP,
	TUI_ACT_VIEW,        /* arg: the view */
	TUI_ACT_NEXT_VIEW,
	TUI_ACT_PREV_VIEW,
	TUI_ACT_UP,
	TUI_ACT_DOWN,
	TUI_ACT_PGUP,
	TUI_ACT_PGDN,
	TUI_ACT_HOME,
	TUI_ACT_END,
	TUI_ACT_SORT_NEXT,
	TUI_ACT_SORT_PREV,
	TUI_ACT_SORT_INVERT,
	TUI_ACT_SEARCH,
	TUI_ACT_SEARCH_NEXT,
	TUI_ACT_SEARCH_PREV,
	TUI_ACT_CANCEL,      /* Esc: clears the search, closes details/help */
	TUI_ACT_ENTER,       /* expand an operator / event details */
	TUI_ACT_GROUP,       /* single ops <-> operator types */
	TUI_ACT_WINDOW,      /* all / last 10 steps / last 30 s */
	TUI_ACT_EXPORT,
	TUI_ACT_PAUSE,
	TUI_ACT_BASELINE,
	TUI_ACT_REDRAW,
	TUI_ACT_ZOOM_IN,
	TUI_ACT_ZOOM_OUT,
	TUI_ACT_PAN_LEFT,
	TUI_ACT_PAN_RIGHT,
	TUI_ACT_EV_PREV,
	TUI_ACT_EV_NEXT,
	TUI_ACT_LANE_UP,
	TUI_ACT_LANE_DOWN,
	TUI_ACT_STEP_PREV,
	TUI_ACT_STEP_NEXT,
	TUI_ACT_FOLLOW,
	TUI_ACT_FIT,
	TUI_ACT_SLOWEST,     /* timeline: the slowest step, again: the next slowest */
	TUI_ACT_GOTO_STEP,   /* timeline: ':' step number prompt */
	TUI_ACT_COLLAPSE,    /* timeline: the cursor's lane to one row and back */
	TUI_ACT_COLLAPSE_ALL,
	TUI_ACT_DEPTH_LESS,  /* timeline: fewer / more nesting rows per lane */
	TUI_ACT_DEPTH_MORE,
	TUI_ACT_EMPTY_LANES, /* timeline: hide / show lanes with nothing in view */
	TUI_ACT_RANK_NEXT,   /* every view: show the next rank only */
	TUI_ACT_RANK_PREV,
	TUI_ACT_RANK_ALL,    /* every view: all ranks merged */
	TUI_ACT_CAPTURE,     /* live: torch.profiler for the next N steps (capture.h) */
	TUI_ACT__COUNT
};

#define TUI_BIND_KEYS 4
#define TUI_BIND_MAX 96 /* bindings in the table at most (the help's line list) */

struct tui_binding {
	enum tui_action act;
	int arg;
	unsigned views;            /* TUI_VM_* mask, 0 = every view */
	int keys[TUI_BIND_KEYS];   /* 0-terminated */
	const char *help;          /* help screen line */
	const char *hint;          /* bottom-bar label, NULL = not shown there */
};

extern const struct tui_binding tui_bindings[];
extern const size_t tui_nbindings;

/* The binding for key in view, or NULL. Earlier entries win. */
const struct tui_binding *tui_key_lookup(int key, int view);
/* A key's display name ("q", "F10", "Up", "Tab", "Ctrl-L"). */
void tui_key_name(int key, char *buf, size_t len);
/* Where a binding applies, for the help screen and docs ("Timeline",
 * "tables", ...; "" for every view). */
const char *tui_binding_where(const struct tui_binding *b);
/* The key table as Markdown (docs/tui.md, `make docs`) into buf: a bold
 * line per place the keys work, then one list item per binding, wrapped at
 * 100 columns; returns its length (0 when buf is too small). */
size_t tui_keys_markdown(char *buf, size_t cap);
/* Names of view v ("Summary", ...). */
const char *tui_view_name(int v);

#endif
