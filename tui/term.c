/*
 * term.c - the curses backend: starts and restores the terminal, maps
 * curses keys to ours, and flushes the canvas by writing only the cells
 * that changed since the last flush (curses then sends only what differs),
 * at most about 10 times a second. The palette uses the terminal's default
 * background with a few foreground colours (no white or black text), so it
 * reads on dark and light themes; NO_COLOR / --no-color keep attributes
 * only. The terminal is restored from atexit, from tui_close, and from the
 * crash signals (SEGV, BUS, FPE, ILL, ABRT, QUIT, SYS) before they re-raise;
 * SIGINT, SIGTERM and SIGHUP end the loop through the caller's handlers
 * (live.c) or ours (view). The crash path cannot call endwin() (curses may
 * be half-way through an update, and stdio is not async-signal-safe), so
 * tui_open prepares the reset bytes (from terminfo) and the shell's termios
 * beforehand and the handler only write()s and tcsetattr()s them.
 * No mouse reporting unless --mouse: then a click or the wheel becomes
 * TUI_KEY_MOUSE with its place in tui_app.mouse.
 *
 * What an idle screen sends is bounded (over a slow SSH link the screen
 * must stay usable): redraws that come from a refresh, not from a key, may
 * send about TUI_IDLE_BYTES_PER_S on average (a token bucket over an
 * estimate of the bytes each flush makes curses send: per changed run a
 * cursor move and an attribute change, plus the characters; curses often
 * sends less). A refresh whose changes would pass that waits, and is not
 * even computed until it may be sent; a key always redraws at once. curses
 * may scroll the terminal for a list that moved by a line (idlok).
 * PROFTOP_SCREEN_BYTES_PER_S changes the budget (0: none).
 */
#include <curses.h>
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "app.h"
#include "proftop/capture.h"
#include "proftop/error.h"
#include "model/util.h"

#define MIN_FLUSH_NS 100000000ull /* ~10 Hz cap on redraws */
#define TUI_IDLE_BYTES_PER_S 2000.0
#define TUI_IDLE_BURST_BYTES 6000.0

struct tui {
	struct tui_app app;
	struct tui_canvas back, front;
	int front_valid;
	int colors;
	int open;
	int dirty;                /* a redraw is due */
	int key_dirty;            /* ... because of a key: not held back by the budget */
	int live_seen;            /* st.live at the last refresh */
	uint64_t last_tick_ns, last_flush_ns;
	uint64_t refreshes;
	double bytes_per_s;       /* idle budget (0: none) */
	double tokens;            /* bytes the idle screen may send now */
	uint64_t tokens_ns;
	uint64_t bytes_est;       /* estimate of every byte sent so far */
	SCREEN *scr;              /* newterm's, when not the tty (benchmarks) */
};

static volatile sig_atomic_t curses_on;

/* What the crash handler needs, prepared while it is safe to call curses. */
static struct termios crash_tio;
static int crash_tio_ok;
static char crash_reset[512];
static size_t crash_reset_len;

static void restore_terminal(void)
{
	if (curses_on) {
		curses_on = 0;
		endwin();
	}
}

static void reset_add(const char *s)
{
	size_t n = s && s != (const char *)-1 ? strlen(s) : 0;
	if (n && crash_reset_len + n < sizeof crash_reset) {
		memcpy(crash_reset + crash_reset_len, s, n);
		crash_reset_len += n;
	}
}

/*
 * The bytes that undo what curses set up, in endwin's order: CAN first
 * (ends any escape sequence a crash cut in half), mouse reporting off,
 * attributes and colours off, keypad transmit off, cursor visible, out of
 * the alternate screen. Terminfo strings without padding are plain bytes.
 */
static void prepare_crash_reset(int mouse)
{
	crash_reset_len = 0;
	reset_add("\030");
	if (mouse)
		reset_add("\033[?1006l\033[?1003l\033[?1002l\033[?1000l");
	reset_add(tigetstr("sgr0"));
	reset_add(tigetstr("op"));
	reset_add(tigetstr("rmkx"));
	reset_add(tigetstr("cnorm"));
	reset_add(tigetstr("rmcup"));
	reset_add("\r\n");
}

/* Async-signal-safe: write(), tcsetattr(), signal() and raise() only. */
static void on_crash(int sig)
{
	if (curses_on) {
		curses_on = 0;
		size_t off = 0;
		while (off < crash_reset_len) {
			ssize_t w = write(STDOUT_FILENO, crash_reset + off, crash_reset_len - off);
			if (w <= 0)
				break;
			off += (size_t)w;
		}
		if (crash_tio_ok)
			tcsetattr(STDOUT_FILENO, TCSADRAIN, &crash_tio);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static short pair_fg[TUI_C__COUNT] = {
	[TUI_C_DEFAULT] = -1,	     [TUI_C_HEADER] = COLOR_CYAN,   [TUI_C_SELECT] = COLOR_BLUE,
	[TUI_C_MATCH] = COLOR_MAGENTA,  [TUI_C_METER_LO] = COLOR_GREEN, [TUI_C_METER_MID] = COLOR_BLUE,
	[TUI_C_METER_HI] = COLOR_RED,   [TUI_C_DIM] = -1,		[TUI_C_KEY] = -1,
	[TUI_C_WARN] = COLOR_RED,	     [TUI_C_K_STEP] = COLOR_BLUE,   [TUI_C_K_DATA] = COLOR_YELLOW,
	[TUI_C_K_FWD] = COLOR_GREEN,    [TUI_C_K_BWD] = COLOR_MAGENTA, [TUI_C_K_OPT] = COLOR_CYAN,
	[TUI_C_K_OP] = COLOR_BLUE,	     [TUI_C_K_RUNTIME] = COLOR_RED, [TUI_C_K_KERNEL] = COLOR_GREEN,
	[TUI_C_K_MEM] = COLOR_YELLOW,   [TUI_C_K_COMM] = COLOR_RED,    [TUI_C_K_USER] = COLOR_CYAN,
};

static int ascii_needed(const struct tui_opts *o)
{
	if (o->ascii)
		return 1;
#ifndef PT_HAVE_NCURSESW
	return 1;
#else
	const char *cs = nl_langinfo(CODESET);
	return !(cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8")));
#endif
}

/* The screen set up on the current terminal (curses is started). */
static void setup_screen(struct tui *u, const struct tui_opts *o)
{
	curses_on = 1;
	u->open = 1;
	cbreak(); /* Ctrl-C stays a signal */
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	leaveok(stdscr, TRUE);
	idlok(stdscr, TRUE); /* a list that moved by a line: the terminal scrolls it */
	if (o->mouse) {
		mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
		mouseinterval(0); /* a press is the click: no waiting for a release */
	}
	if (!o->no_color && !getenv("NO_COLOR") && has_colors()) {
		start_color();
		use_default_colors();
		u->colors = 1;
		for (int i = 1; i < TUI_C__COUNT; i++)
			init_pair((short)i, pair_fg[i], -1);
	}
	tui_canvas_init(&u->back, COLS, LINES, ascii_needed(o));
	tui_canvas_init(&u->front, COLS, LINES, ascii_needed(o));
	u->dirty = 1;
	u->key_dirty = 1; /* the first frame is no idle redraw */
	u->last_tick_ns = pt_now_ns();
	const char *b = getenv("PROFTOP_SCREEN_BYTES_PER_S");
	u->bytes_per_s = b && *b ? atof(b) : TUI_IDLE_BYTES_PER_S;
	if (u->bytes_per_s < 0)
		u->bytes_per_s = 0;
	u->tokens = TUI_IDLE_BURST_BYTES;
	u->tokens_ns = u->last_tick_ns;
}

struct tui *tui_open(struct pt_trace *t, const struct tui_opts *o)
{
	if (!isatty(0) || !isatty(1)) {
		fprintf(stderr, "proftop: the screen needs a terminal (use --no-screen or report)\n");
		return NULL;
	}
	setlocale(LC_ALL, "");
	struct tui *u = pt_xcalloc(1, sizeof *u);
	tui_app_init(&u->app, t, o);
	if (!getenv("ESCDELAY"))
		setenv("ESCDELAY", "25", 0); /* Esc answers at once; no alt-combos needed */
	static int hooks;
	if (!hooks) {
		hooks = 1;
		atexit(restore_terminal);
	}
	crash_tio_ok = tcgetattr(STDOUT_FILENO, &crash_tio) == 0; /* the shell's modes */
	if (!initscr()) {
		tui_app_free(&u->app);
		free(u);
		fprintf(stderr, "proftop: cannot start the screen (TERM?)\n");
		return NULL;
	}
	prepare_crash_reset(o->mouse);
	static int crash_hooks;
	if (!crash_hooks) {
		crash_hooks = 1;
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_crash;
		sigemptyset(&sa.sa_mask);
		int crash[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGQUIT, SIGSYS};
		for (size_t i = 0; i < sizeof crash / sizeof crash[0]; i++)
			sigaction(crash[i], &sa, NULL);
	}
	setup_screen(u, o);
	return u;
}

struct tui *tui_open_on(struct pt_trace *t, const struct tui_opts *o, const char *term, FILE *out,
			FILE *in, int w, int h)
{
	setlocale(LC_ALL, "");
	struct tui *u = pt_xcalloc(1, sizeof *u);
	tui_app_init(&u->app, t, o);
	u->scr = newterm(term, out, in);
	if (!u->scr) {
		tui_app_free(&u->app);
		free(u);
		return NULL;
	}
	set_term(u->scr);
	resizeterm(h, w);
	setup_screen(u, o);
	curses_on = 0; /* not the user's terminal: nothing to restore on a crash */
	return u;
}

struct tui_app *tui_app_of(struct tui *u)
{
	return &u->app;
}

void tui_close(struct tui *u)
{
	if (!u)
		return;
	if (u->open) {
		u->open = 0;
		if (u->scr) {
			endwin();
			delscreen(u->scr);
		} else {
			restore_terminal();
		}
	}
	tui_app_free(&u->app);
	tui_canvas_free(&u->back);
	tui_canvas_free(&u->front);
	free(u);
}

static attr_t cell_attr(const struct tui *u, const struct tui_cell *c)
{
	attr_t a = 0;
	if (c->attr & TUI_A_BOLD)
		a |= A_BOLD;
	if (c->attr & TUI_A_REVERSE)
		a |= A_REVERSE;
	if (c->attr & TUI_A_UNDERLINE)
		a |= A_UNDERLINE;
	if (c->color == TUI_C_DIM && !(c->attr & TUI_A_REVERSE))
		a |= A_DIM;
	if (u->colors && c->color && c->color < TUI_C__COUNT && pair_fg[c->color] >= 0)
		a |= COLOR_PAIR(c->color);
	return a;
}

/* Copies what changed into curses and sends it; returns an estimate of the
 * bytes that go to the terminal (see the file comment). */
static size_t flush(struct tui *u)
{
	struct tui_canvas *b = &u->back, *f = &u->front;
	char run[4096];
	size_t est = 0;
	for (int y = 0; y < b->h; y++) {
		int x = 0;
		while (x < b->w) {
			struct tui_cell *bc = tui_canvas_at(b, x, y);
			if (u->front_valid && !memcmp(bc, tui_canvas_at(f, x, y), sizeof *bc)) {
				x++;
				continue;
			}
			/* a run of changed cells with one style; the right half of a
			 * wide character is sent with its left half */
			int x0 = x;
			size_t n = 0;
			while (x < b->w && n + 4 < sizeof run) {
				struct tui_cell *c = tui_canvas_at(b, x, y);
				if (c->color != bc->color || c->attr != bc->attr)
					break;
				if (u->front_valid && x > x0 && !memcmp(c, tui_canvas_at(f, x, y), sizeof *c))
					break;
				if (c->ch != TUI_CH_CONT)
					n += (size_t)tui_utf8_put(c->ch, run + n);
				*tui_canvas_at(f, x, y) = *c;
				x++;
			}
			if (n) {
				attrset(cell_attr(u, bc));
				mvaddnstr(y, x0, run, (int)n);
				est += n + 16; /* the characters, a move and an attribute change */
			}
		}
	}
	attrset(A_NORMAL);
	if (!u->front_valid)
		est += (size_t)b->w * (size_t)b->h; /* a full repaint */
	u->front_valid = 1;
	wnoutrefresh(stdscr);
	doupdate();
	u->bytes_est += est;
	return est;
}

static int map_key(int ch)
{
	if (ch >= KEY_F(1) && ch <= KEY_F(12))
		return TUI_KEY_F1 + (ch - KEY_F(1));
	switch (ch) {
	case KEY_UP:
		return TUI_KEY_UP;
	case KEY_DOWN:
		return TUI_KEY_DOWN;
	case KEY_LEFT:
		return TUI_KEY_LEFT;
	case KEY_RIGHT:
		return TUI_KEY_RIGHT;
	case KEY_SLEFT:
		return TUI_KEY_SLEFT;
	case KEY_SRIGHT:
		return TUI_KEY_SRIGHT;
	case KEY_PPAGE:
		return TUI_KEY_PGUP;
	case KEY_NPAGE:
		return TUI_KEY_PGDN;
	case KEY_HOME:
		return TUI_KEY_HOME;
	case KEY_END:
		return TUI_KEY_END;
	case KEY_ENTER:
	case '\n':
	case '\r':
		return TUI_KEY_ENTER;
	case 27:
		return TUI_KEY_ESC;
	case '\t':
		return TUI_KEY_TAB;
	case KEY_BTAB:
		return TUI_KEY_BTAB;
	case KEY_BACKSPACE:
	case 127:
	case 8:
		return TUI_KEY_BACKSPACE;
	case KEY_RESIZE:
		return TUI_KEY_RESIZE;
	case KEY_MOUSE:
		return TUI_KEY_MOUSE;
	}
	return ch >= 0 && ch < 256 ? ch : 0;
}

/* The mouse event behind a TUI_KEY_MOUSE into the app; 0 when not one we use. */
static int read_mouse(struct tui *u)
{
	MEVENT ev;
	if (getmouse(&ev) != OK)
		return 0;
	struct tui_mouse *m = &u->app.mouse;
	m->x = ev.x;
	m->y = ev.y;
	m->button = ev.bstate & BUTTON1_PRESSED ? 1 : ev.bstate & BUTTON4_PRESSED ? 4
		    : ev.bstate & BUTTON5_PRESSED ? 5 : 0;
	return m->button != 0;
}

static void redraw(struct tui *u)
{
	struct tui_app *a = &u->app;
	a->now_ns = pt_now_ns();
	if (u->back.w != COLS || u->back.h != LINES) {
		tui_canvas_resize(&u->back, COLS, LINES);
		tui_canvas_resize(&u->front, COLS, LINES);
		u->front_valid = 0;
		clearok(curscr, TRUE);
	}
	tui_app_draw(a, &u->back);
	size_t est = flush(u);
	if (!u->key_dirty && u->bytes_per_s > 0)
		u->tokens -= (double)est;
	u->last_flush_ns = a->now_ns;
	u->dirty = 0;
	u->key_dirty = 0;
}

size_t tui_frame(struct tui *u)
{
	uint64_t before = u->bytes_est;
	u->key_dirty = 1;
	redraw(u);
	return (size_t)(u->bytes_est - before);
}

/* The refresh period: -d as given, or, by default, short but never so short
 * that rebuilding the summary takes more than 1/TUI_MODEL_BUDGET_DIV of a core. */
static uint64_t refresh_period(const struct tui_app *a)
{
	if (!a->o.refresh_auto)
		return a->o.refresh_ns;
	uint64_t need = a->model.cost_ns * TUI_MODEL_BUDGET_DIV;
	return need > a->o.refresh_ns ? need : a->o.refresh_ns;
}

/* Refills the idle budget; 1 when an idle redraw may go now. */
static int budget_ok(struct tui *u, uint64_t now)
{
	if (u->bytes_per_s <= 0)
		return 1;
	u->tokens += u->bytes_per_s * (double)(now - u->tokens_ns) / 1e9;
	if (u->tokens > TUI_IDLE_BURST_BYTES)
		u->tokens = TUI_IDLE_BURST_BYTES;
	u->tokens_ns = now;
	return u->tokens >= 0;
}

int tui_quit_how(const struct tui *u)
{
	return u && u->app.quit_how ? u->app.quit_how : TUI_QUIT_STOP;
}

int tui_wait(struct tui *u, const struct tui_status *st, uint64_t wait_ns)
{
	if (!u || !u->open)
		return 1;
	struct tui_app *a = &u->app;
	a->st = *st;
	if (a->quit_ask && !a->st.live) { /* the job ended while the question was up */
		a->quit_ask = 0;
		tui_app_message(a, "the job ended; q quits");
		u->dirty = 1;
	}
	uint64_t start = pt_now_ns(), deadline = start + wait_ns;
	for (;;) {
		uint64_t now = pt_now_ns();
		int may = budget_ok(u, now);
		if (now - u->last_tick_ns >= refresh_period(a) && may) {
			u->last_tick_ns = now;
			u->refreshes++;
			if (!a->paused)
				tui_model_build(a, a->st.live != u->live_seen); /* ended: the window's figures */
			u->live_seen = a->st.live;
			u->dirty = 1;
			if (a->o.max_refreshes && u->refreshes >= a->o.max_refreshes) {
				redraw(u);
				a->quit = 1;
			}
		}
		if (a->msg[0] && now >= a->msg_until_ns && a->msg_until_ns) {
			a->msg_until_ns = 0;
			u->dirty = 1;
		}
		if (u->dirty && now - u->last_flush_ns >= MIN_FLUSH_NS && (u->key_dirty || may))
			redraw(u);
		if (a->quit) {
			restore_terminal();
			u->open = 0;
			return 1;
		}
		now = pt_now_ns();
		if (now >= deadline)
			return 0;
		uint64_t until = deadline;
		if (u->last_tick_ns + refresh_period(a) < until)
			until = u->last_tick_ns + refresh_period(a);
		if (u->dirty && u->last_flush_ns + MIN_FLUSH_NS < until)
			until = u->last_flush_ns + MIN_FLUSH_NS;
		if (u->bytes_per_s > 0 && u->tokens < 0) { /* over the budget: wake when it allows */
			uint64_t when = now + (uint64_t)(-u->tokens / u->bytes_per_s * 1e9) + 1000000;
			if (until < when)
				until = when;
			if (until > deadline)
				until = deadline;
		}
		int ms = until > now ? (int)((until - now + 999999) / 1000000) : 0;
		struct pollfd pfd = {0, POLLIN, 0};
		int pr = poll(&pfd, 1, ms);
		if (pr < 0 && errno == EINTR)
			return 0; /* a signal: let the caller look */
		if (pr > 0 && (pfd.revents & (POLLHUP | POLLERR | POLLNVAL))) {
			a->quit = 1; /* the terminal went away: as SIGHUP does, the job gets SIGINT */
			a->quit_how = TUI_QUIT_STOP;
			continue;
		}
		int ch;
		while ((ch = getch()) != ERR) {
			int key = map_key(ch);
			if (key == TUI_KEY_MOUSE && !read_mouse(u))
				continue;
			if (key == TUI_KEY_RESIZE || key == TUI_CTRL('l')) {
				u->front_valid = 0;
				clearok(curscr, TRUE);
			}
			if (key && tui_app_key(a, key))
				break;
			u->dirty = 1;
			u->key_dirty = 1;
		}
		if (a->capture_req)
			return 0; /* the loop asks the job at once */
		if (a->t->captures && a->t->captures->gen != a->capture_gen)
			u->dirty = 1; /* a capture moved on: its line changes */
	}
}

uint32_t tui_take_capture(struct tui *u)
{
	if (!u)
		return 0;
	uint32_t n = u->app.capture_req;
	u->app.capture_req = 0;
	return n;
}

static volatile sig_atomic_t view_stop;
static void on_stop(int sig)
{
	(void)sig;
	view_stop = 1;
}

int tui_view_file(struct pt_trace *t, const struct tui_opts *o, const char *describe)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	struct tui *u = tui_open(t, o);
	if (!u)
		return PT_EINVAL;
	struct tui_status st = {describe, "file", 0, 0, NULL};
	while (!view_stop && !tui_wait(u, &st, 250000000ull))
		;
	tui_close(u);
	return 0;
}
