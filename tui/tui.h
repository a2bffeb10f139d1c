/*
 * tui.h - the terminal UI as the command-line front end sees it: options,
 * the session line's inputs, and a screen that the live loop drives between
 * polls (tui_open / tui_wait / tui_close) or that runs on its own over a
 * loaded file (tui_view_file). No curses types: src/cli_*.c include this.
 *
 * The screen reads the trace only while the caller is not writing to it
 * (the live loop calls tui_wait between polls, on the same thread).
 */
#ifndef TUI_TUI_H
#define TUI_TUI_H

#include <stdint.h>
#include <stdio.h>

#include "proftop/trace.h"

struct pt_anomaly;
struct pt_diff_side;
struct tui_opts {
	int ascii;               /* 1: ASCII only; 0: auto (UTF-8 locale -> Unicode) */
	int no_color;            /* 1: monochrome (also when NO_COLOR is set) */
	int mouse;               /* enable mouse reporting (off unless asked) */
	int exit_on_end;         /* run / attach: close the screen when the job ends */
	/* run: q while the job runs asks (stop it / leave it running / stay);
	 * 0: q stops it at once (--kill-on-quit), or there is no job to stop */
	int ask_quit;
	uint64_t refresh_ns;     /* model/header refresh period (-d), default 1 s */
	int refresh_auto;        /* no -d given: stretch the period so that rebuilding the
	                            summary takes at most TUI_MODEL_BUDGET of a core */
	uint64_t max_refreshes;  /* -n N: quit after N refreshes (0: never) */
	/* the live session's anomaly recorder (anomaly.h), or NULL: the session
	 * line counts the files, the help screen lists them */
	const struct pt_anomaly *anomalies;
	/* --baseline: a run to compare with (delta columns; diff.h); not owned,
	 * must outlive the screen. NULL: none. */
	const struct pt_diff_side *baseline;
	/* A live session whose loop takes capture requests (pt_live_ctl): key
	 * T asks for a deep capture of the next capture_steps steps. 0: T says
	 * why it cannot (a file, a record without a screen). */
	int can_capture;
	uint32_t capture_steps;  /* default 5 */
	/* the FLOPs columns' device peak (flops.h): --peak-tflops, --peak-gbps;
	 * 0: from the device's name, when known */
	double peak_tflops, peak_gbps;
};
void tui_opts_init(struct tui_opts *o);

/* Without -d, the screen refreshes every TUI_AUTO_REFRESH_NS, so an event
 * reaches the screen within about 250 ms (100 ms drain + this), unless
 * rebuilding the summary would then cost more than 1/TUI_MODEL_BUDGET_DIV
 * of a core: the period stretches to keep proftop's own CPU low on big
 * sessions. */
#define TUI_AUTO_REFRESH_NS 150000000ull
#define TUI_MODEL_BUDGET_DIV 25u
/* The advice and the Data view's figures take at most 1/this of a core
 * (model.c): recomputed at most every their cost times this. */
#define TUI_ADVICE_BUDGET_DIV 50u

/* What the session line shows; strings are the caller's (already escaped). */
struct tui_status {
	const char *describe;    /* "1234 (python train.py)" or the file name */
	const char *state;       /* "running", "exited (code 0)", "file", "waiting" */
	uint64_t started_ns;     /* CLOCK_MONOTONIC at start (0: elapsed from the trace) */
	int live;                /* 1: data may still grow */
	/* run: CMD failed on its own: its log's path, a newline, and the log's
	 * last lines (raw: the screen escapes them); NULL otherwise */
	const char *failure;
};

struct tui;
/* Starts the screen (curses); NULL with a message on stderr when it cannot. */
struct tui *tui_open(struct pt_trace *t, const struct tui_opts *o);
/*
 * Waits up to wait_ns for keys, handling them and redrawing; rebuilds the
 * model at most once per refresh period when new events arrived. Returns
 * 1 when the user quit (or -n was reached): the screen is closed by then.
 */
int tui_wait(struct tui *u, const struct tui_status *st, uint64_t wait_ns);
/* How the user quit: TUI_QUIT_STOP (q, or q/y at the question, or the
 * terminal went away: stop the job), TUI_QUIT_DETACH (d at the question:
 * leave the job running). Valid after tui_wait returned 1. */
enum { TUI_QUIT_STOP = 1, TUI_QUIT_DETACH = 2 };
int tui_quit_how(const struct tui *u);
/* Steps of the capture the user asked for with T since the last call (0:
 * none); the caller passes it to the live loop (pt_live_ctl). */
uint32_t tui_take_capture(struct tui *u);
/* Restores the terminal and frees the screen (NULL is fine; idempotent). */
void tui_close(struct tui *u);
/*
 * For benchmarks: the screen on a terminal of type `term` that is not the
 * user's (out / in: files, e.g. /dev/null), w x h; nothing is restored on
 * a crash. tui_frame draws and sends one frame, as a key would, and returns
 * the estimate of the bytes sent; tui_app_of gives the app for keys.
 */
struct tui *tui_open_on(struct pt_trace *t, const struct tui_opts *o, const char *term, FILE *out,
			FILE *in, int w, int h);
size_t tui_frame(struct tui *u);
struct tui_app *tui_app_of(struct tui *u);
/* Runs the screen over a loaded trace until quit. Returns 0 or PT_E*. */
int tui_view_file(struct pt_trace *t, const struct tui_opts *o, const char *describe);

#endif
