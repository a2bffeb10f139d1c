/*
 * canvas.c - the in-memory screen (canvas.h): cells, clipped text output,
 * UTF-8 decoding into one-column cells, glyphs with ASCII fallbacks, and
 * reading rows back as text for tests. Pure memory; no terminal here.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canvas.h"
#include "model/util.h"

void tui_canvas_init(struct tui_canvas *c, int w, int h, int ascii)
{
	memset(c, 0, sizeof *c);
	c->ascii = ascii;
	tui_canvas_resize(c, w, h);
}

void tui_canvas_resize(struct tui_canvas *c, int w, int h)
{
	if (w < 1)
		w = 1;
	if (h < 1)
		h = 1;
	free(c->cells);
	c->w = w;
	c->h = h;
	c->cells = pt_xcalloc((size_t)w * (size_t)h, sizeof *c->cells);
	tui_canvas_clear(c);
}

void tui_canvas_free(struct tui_canvas *c)
{
	free(c->cells);
	c->cells = NULL;
}

void tui_canvas_clear(struct tui_canvas *c)
{
	size_t n = (size_t)c->w * (size_t)c->h;
	struct tui_cell blank = {' ', 0, 0, 0};
	for (size_t i = 0; i < n; i++)
		c->cells[i] = blank;
}

/* Blanks the other half of a wide character that cell (x, y) is part of. */
static void unsplit(struct tui_canvas *c, int x, int y)
{
	struct tui_cell *cell = tui_canvas_at(c, x, y);
	if (cell->ch == TUI_CH_CONT && x > 0)
		tui_canvas_at(c, x - 1, y)->ch = ' ';
	else if (x + 1 < c->w && tui_canvas_at(c, x + 1, y)->ch == TUI_CH_CONT)
		tui_canvas_at(c, x + 1, y)->ch = ' ';
}

void tui_put_ch(struct tui_canvas *c, int x, int y, uint32_t ch, struct tui_style st)
{
	if (x < 0 || y < 0 || x >= c->w || y >= c->h)
		return;
	unsplit(c, x, y);
	struct tui_cell *cell = tui_canvas_at(c, x, y);
	cell->ch = ch == TUI_CH_CONT ? ' ' : ch;
	cell->color = st.color;
	cell->attr = st.attr;
}

/* A two-column character at x, x+1 (the caller checked that both fit). */
static void put_wide(struct tui_canvas *c, int x, int y, uint32_t ch, struct tui_style st)
{
	tui_put_ch(c, x, y, ch, st);
	if (x + 1 >= c->w)
		return;
	unsplit(c, x + 1, y);
	struct tui_cell *cell = tui_canvas_at(c, x + 1, y);
	cell->ch = TUI_CH_CONT;
	cell->color = st.color;
	cell->attr = st.attr;
}

void tui_fill(struct tui_canvas *c, struct tui_rect r, uint32_t ch, struct tui_style st)
{
	for (int y = r.y; y < r.y + r.h; y++)
		for (int x = r.x; x < r.x + r.w; x++)
			tui_put_ch(c, x, y, ch, st);
}

void tui_restyle(struct tui_canvas *c, int x, int y, int n, struct tui_style st)
{
	if (y < 0 || y >= c->h)
		return;
	for (int i = x; i < x + n && i < c->w; i++) {
		if (i < 0)
			continue;
		struct tui_cell *cell = tui_canvas_at(c, i, y);
		cell->color = st.color;
		cell->attr = st.attr;
	}
}

/* Decodes one UTF-8 sequence; returns bytes used (>= 1); bad input gives U+FFFD. */
static int utf8_next(const unsigned char *s, uint32_t *cp)
{
	unsigned char b = s[0];
	int n;
	uint32_t v;
	if (b < 0x80) {
		*cp = b;
		return 1;
	} else if ((b & 0xe0) == 0xc0) {
		n = 2;
		v = b & 0x1f;
	} else if ((b & 0xf0) == 0xe0) {
		n = 3;
		v = b & 0x0f;
	} else if ((b & 0xf8) == 0xf0) {
		n = 4;
		v = b & 0x07;
	} else {
		*cp = 0xfffd;
		return 1;
	}
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			*cp = 0xfffd;
			return i;
		}
		v = (v << 6) | (s[i] & 0x3f);
	}
	*cp = v;
	return n;
}

int tui_put_str(struct tui_canvas *c, int x, int y, int max_x, const char *s, struct tui_style st)
{
	if (max_x > c->w)
		max_x = c->w;
	const unsigned char *p = (const unsigned char *)s;
	while (*p && x < max_x) {
		uint32_t cp;
		p += utf8_next(p, &cp);
		int w = pt_cp_width(cp);
		if (c->ascii && cp > 0x7e)
			w = -1;
		if (w == 0 && cp >= 0xfe00 && cp <= 0xfe0f)
			continue; /* a variation selector only picks a presentation */
		if (w == 2) {
			if (x + 1 >= max_x) { /* half would not fit: blank, and stop */
				tui_put_ch(c, x++, y, ' ', st);
				break;
			}
			put_wide(c, x, y, cp, st);
			x += 2;
			continue;
		}
		tui_put_ch(c, x, y, w == 1 ? cp : '?', st);
		x++;
	}
	return x;
}

int tui_printf(struct tui_canvas *c, int x, int y, int max_x, struct tui_style st, const char *fmt,
	       ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return tui_put_str(c, x, y, max_x, buf, st);
}

/* Byte offset in s (display-safe UTF-8) after `cols` columns, and the columns there. */
static size_t cols_prefix(const char *s, int cols, int *got)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t off = 0;
	int n = 0;
	while (p[off]) {
		uint32_t cp;
		int k = utf8_next(p + off, &cp), w = pt_cp_width(cp);
		w = w == 2 ? 2 : w == 0 && cp >= 0xfe00 && cp <= 0xfe0f ? 0 : 1;
		if (n + w > cols)
			break;
		n += w;
		off += (size_t)k;
	}
	*got = n;
	return off;
}

int tui_put_name(struct tui_canvas *c, int x, int y, int cols, const char *s, size_t len,
		 struct tui_style st)
{
	char buf[1024];
	if (cols <= 0)
		return x;
	if (cols > 300)
		cols = 300;
	unsigned fl = c->ascii ? PT_ESC_ASCII : 0;
	if (cols < 8 || pt_escape_term_cols(s, len, fl) <= (size_t)cols) {
		pt_escape_term(buf, sizeof buf, s, len, (size_t)cols, fl);
		return tui_put_str(c, x, y, x + cols, buf, st);
	}
	/* too long: the head and the tail around an ellipsis; each escaped from
	 * at most 1000 bytes of the name (at least 250 columns, more than the
	 * 150 each side needs) into 4 KiB (an escape takes at most 4 bytes per
	 * byte of the name) */
	static char part[4096];
	int head = (cols - 1) / 2, tail = cols - 1 - head, got;
	size_t hn = len < 1000 ? len : 1000;
	pt_escape_term(part, sizeof part, s, hn, 0, fl);
	part[cols_prefix(part, head, &got)] = 0;
	int nx = tui_put_str(c, x, y, x + head, part, st);
	nx = tui_put_str(c, nx, y, nx + 1, c->ascii ? "~" : "\xe2\x80\xa6", st);
	size_t from = len > 1000 ? len - 1000 : 0;
	while (from > 0 && from < len && ((unsigned char)s[from] & 0xc0) == 0x80)
		from++; /* start at a character */
	pt_escape_term(part, sizeof part, s + from, len - from, 0, fl);
	int total;
	cols_prefix(part, 1 << 30, &total);
	size_t skip = cols_prefix(part, total > tail ? total - tail : 0, &got);
	if (got < total - tail) /* a wide character straddles the cut */
		skip = cols_prefix(part, got + 2, &got);
	return tui_put_str(c, nx, y, x + cols, part + skip, st);
}

static const uint32_t glyph_utf8[TUI_G__COUNT] = {0x2588, 0x2500, 0x2502, 0x25bc, 0x2026,
							  0x25c0};
static const char glyph_ascii[TUI_G__COUNT] = {'|', '-', '|', 'v', '~', '<'};

uint32_t tui_glyph(const struct tui_canvas *c, enum tui_glyph g)
{
	return c->ascii ? (uint32_t)glyph_ascii[g] : glyph_utf8[g];
}

uint32_t tui_spark(const struct tui_canvas *c, int level)
{
	static const char ascii[] = " .:-=+*#";
	if (level < 0)
		level = 0;
	if (level > 7)
		level = 7;
	return c->ascii ? (uint32_t)ascii[level] : 0x2581u + (uint32_t)level;
}

int tui_utf8_put(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

size_t tui_canvas_row_text(const struct tui_canvas *c, int y, char *buf, size_t cap)
{
	size_t n = 0;
	if (cap == 0)
		return 0;
	for (int x = 0; x < c->w && y >= 0 && y < c->h; x++) {
		char tmp[4];
		uint32_t ch = c->cells[(size_t)y * (size_t)c->w + (size_t)x].ch;
		if (ch == TUI_CH_CONT)
			continue;
		int k = tui_utf8_put(ch, tmp);
		if (n + (size_t)k + 1 > cap)
			break;
		memcpy(buf + n, tmp, (size_t)k);
		n += (size_t)k;
	}
	buf[n] = 0;
	return n;
}
