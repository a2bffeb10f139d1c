/*
 * canvas.h - the in-memory screen every view draws into: a grid of cells,
 * each one character (a Unicode code point, or ASCII in --ascii mode), a
 * style (colour role + attributes). Tests and benchmarks render into it and
 * read it back as text; the curses backend (term.c) copies only the cells
 * that changed since the last flush. No curses types here.
 *
 * Text from traces must already be escaped (pt_escape_term); the canvas
 * additionally refuses control characters. A wide character (CJK, emoji:
 * pt_cp_width() == 2) takes two cells: its own and a continuation cell
 * (ch == TUI_CH_CONT) that the terminal backend skips; overwriting either
 * half blanks the other, so a row never holds half a character. Zero-width
 * marks show as '?', variation selectors are dropped.
 */
#ifndef TUI_CANVAS_H
#define TUI_CANVAS_H

#include <stddef.h>
#include <stdint.h>

/* Colour roles; term.c maps them to colour pairs (or to attributes in mono). */
enum tui_color {
	TUI_C_DEFAULT = 0,
	TUI_C_HEADER,   /* table header, title bars */
	TUI_C_SELECT,   /* selected row */
	TUI_C_MATCH,    /* fuzzy-search matched letters */
	TUI_C_METER_LO, /* bar fill below 50 % */
	TUI_C_METER_MID,
	TUI_C_METER_HI, /* >= 80 % */
	TUI_C_DIM,      /* labels, units, empty bar */
	TUI_C_KEY,      /* key hint in the bottom bar */
	TUI_C_WARN,     /* drops, too-small notice */
	TUI_C_K_STEP,   /* timeline / stacked bar: one per kind family */
	TUI_C_K_DATA,
	TUI_C_K_FWD,
	TUI_C_K_BWD,
	TUI_C_K_OPT,
	TUI_C_K_OP,
	TUI_C_K_RUNTIME,
	TUI_C_K_KERNEL,
	TUI_C_K_MEM,
	TUI_C_K_COMM,
	TUI_C_K_USER,
	TUI_C__COUNT
};

#define TUI_A_BOLD 0x1u
#define TUI_A_REVERSE 0x2u
#define TUI_A_UNDERLINE 0x4u

struct tui_style {
	uint8_t color; /* enum tui_color */
	uint8_t attr;  /* TUI_A_* */
};

#define TUI_CH_CONT 0u /* the right half of the wide character on its left */

struct tui_cell {
	uint32_t ch;   /* code point (two columns when wide), or TUI_CH_CONT */
	uint8_t color;
	uint8_t attr;
	uint16_t pad;
};

struct tui_rect {
	int x, y, w, h;
};

struct tui_canvas {
	int w, h;
	int ascii;            /* draw with ASCII only (glyph fallbacks) */
	struct tui_cell *cells;
};

void tui_canvas_init(struct tui_canvas *c, int w, int h, int ascii);
void tui_canvas_resize(struct tui_canvas *c, int w, int h);
void tui_canvas_free(struct tui_canvas *c);
void tui_canvas_clear(struct tui_canvas *c);
static inline struct tui_cell *tui_canvas_at(struct tui_canvas *c, int x, int y)
{
	return &c->cells[(size_t)y * (size_t)c->w + (size_t)x];
}

void tui_put_ch(struct tui_canvas *c, int x, int y, uint32_t ch, struct tui_style st);
/* Fills a rectangle with ch. */
void tui_fill(struct tui_canvas *c, struct tui_rect r, uint32_t ch, struct tui_style st);
/*
 * Writes UTF-8 text at (x, y), clipped to max_x (exclusive); returns the
 * column after the last cell written. Text must be display-safe already
 * (escaped); anything else is replaced cell by cell.
 */
int tui_put_str(struct tui_canvas *c, int x, int y, int max_x, const char *s, struct tui_style st);
int tui_printf(struct tui_canvas *c, int x, int y, int max_x, struct tui_style st, const char *fmt,
	       ...) __attribute__((format(printf, 6, 7)));
/* Escapes an untrusted name and writes it within cols columns; a longer one
 * keeps its start and its end around an ellipsis ("aten::cudnn_c…ward_input"),
 * so names that differ only at the end stay apart. */
int tui_put_name(struct tui_canvas *c, int x, int y, int cols, const char *s, size_t len,
		 struct tui_style st);
/* Sets the style of cells [x, x+n) on row y, keeping their characters. */
void tui_restyle(struct tui_canvas *c, int x, int y, int n, struct tui_style st);

/* Glyphs with their ASCII fallbacks. */
enum tui_glyph {
	TUI_G_BAR_FULL,  /* full block / '|' */
	TUI_G_HLINE,     /* ─ / - */
	TUI_G_VLINE,     /* │ / | */
	TUI_G_CURSOR,    /* ▼ / v */
	TUI_G_ELLIPSIS,
	TUI_G_MARK,      /* ◀ / < : points at a row (the slowest rank) */
	TUI_G__COUNT
};
uint32_t tui_glyph(const struct tui_canvas *c, enum tui_glyph g);
/* Sparkline level 0..7 as a glyph (▁..█, or " .:-=+*#"). */
uint32_t tui_spark(const struct tui_canvas *c, int level);

/* Row y as UTF-8 text (no styles, trailing spaces kept; a wide character
 * once) into buf; returns length. */
size_t tui_canvas_row_text(const struct tui_canvas *c, int y, char *buf, size_t cap);
/* UTF-8 encoding of cp into out (4 bytes room); returns bytes. */
int tui_utf8_put(uint32_t cp, char *out);

#endif
