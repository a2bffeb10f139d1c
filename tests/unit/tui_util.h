/*
 * tui_util.h - what the screen's tests share (test_tui_screen.c,
 * test_tui_ranks.c): a fixture loaded, the app rendered into the in-memory
 * canvas as text, keys typed, rows counted.
 */
#ifndef TUI_UTIL_H
#define TUI_UTIL_H

#include "testutil.h"

#include <unistd.h>

#include "app.h"
#include "layout.h"
#include "proftop/chrome.h"
#include "proftop/ranks.h"
#include "proftop/store.h"
#include "model/util.h"


/* ---- rendering ---- */

static inline struct pt_trace *load(const char *path)
{
	if (access(path, R_OK) != 0)
		skip(); /* the shared traces are absent (or left out under valgrind) */
	struct pt_trace *t = pt_trace_new(64u << 20);
	char err[256];
	assert_int_equal(pt_chrome_read(t, path, NULL, err, sizeof err), 0);
	return t;
}

static char screen[300 * 80 * 4];

static inline const char *render(struct tui_app *a, struct tui_canvas *c)
{
	tui_app_draw(a, c);
	size_t n = 0;
	for (int y = 0; y < c->h; y++) {
		n += tui_canvas_row_text(c, y, screen + n, sizeof screen - n - 2);
		screen[n++] = '\n';
	}
	screen[n] = 0;
	/* nothing below 0x20 except the newlines */
	for (size_t i = 0; i < n; i++)
		assert_true((unsigned char)screen[i] >= 0x20 || screen[i] == '\n');
	return screen;
}

static inline int count_rows(const char *s, const char *needle)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static inline void keys(struct tui_app *a, const char *s)
{
	for (; *s; s++)
		tui_app_key(a, (unsigned char)*s);
}

#endif
