/*
 * view_advice.c - the Advice view (key 9): the bottleneck advisor's
 * findings over the window and rank the other views show, critical first,
 * each with its evidence and suggestion wrapped to the screen, scrolled
 * with the usual movement keys. With nothing found it lists what the rules
 * check and their thresholds, so "no advice" reads as "checked, fine".
 * The model recomputes the advice on every refresh (model.c); this file
 * only lays it out. Evidence and suggestions come escaped from the advisor
 * (names from the trace went through pt_escape_term there).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "model/util.h"

#define INDENT 15 /* "   Suggestion: " */

struct aline {
	const char *label; /* at column 3, or NULL */
	const char *s;	   /* text from s, len bytes */
	size_t len;
	int x; /* column the text starts at */
	struct tui_style st;
};

struct lines {
	struct aline *v;
	size_t n, cap;
};

static void add(struct lines *l, const char *label, const char *s, size_t len, int x,
		struct tui_style st)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->v = pt_xrealloc(l->v, l->cap * sizeof *l->v);
	}
	l->v[l->n++] = (struct aline){label, s, len, x, st};
}

/* Word-wraps text into lines of at most w - INDENT columns (a word longer
 * than that gets a line of its own and is clipped by the canvas). */
static void wrap(struct lines *l, const char *label, const char *text, int w, struct tui_style st)
{
	int room = w - INDENT > 20 ? w - INDENT : 20;
	const char *p = text;
	int first = 1;
	while (*p == ' ')
		p++;
	if (!*p) {
		add(l, label, "", 0, INDENT, st);
		return;
	}
	while (*p) {
		/* greedy: words while they fit; q ends at the next word */
		const char *start = p, *end = NULL, *q = p;
		for (;;) {
			const char *e = q;
			while (*e && *e != ' ')
				e++;
			if (end && (int)(e - start) > room)
				break;
			end = e;
			q = e;
			while (*q == ' ')
				q++;
			if (!*q)
				break;
		}
		add(l, first ? label : NULL, start, (size_t)(end - start), INDENT, st);
		first = 0;
		p = q;
	}
}

static const char *const checks[] = {
    "input_bound      reader ratio (Dataloader share of the step) >= 20%",
    "gpu_starved      GPU busy < 40% outside the data loader, with launches >= 10% of step",
    "                 time or Forward CPU >= 2x its GPU time",
    "sync             synchronizing calls (cudaDeviceSynchronize, cudaMemcpy...) >= 5%",
    "comm_bound       communication >= 20% of step time, less than 50% of it overlapped",
    "memcpy_pageable  copies through pageable host memory >= 5% of step time",
    "straggler        slowest rank's step >= 1.2x the median (two or more ranks)",
    "step_jitter      p99 step time >= 1.5x p50 (5 steps or more)",
};

static void build(struct tui_app *a, struct lines *l, int w, char (*heads)[160])
{
	const struct pt_advice_list *al = &a->model.advice;
	for (size_t i = 0; i < al->n; i++) {
		const struct pt_advice *ad = &al->v[i];
		int crit = ad->severity == PT_ADV_CRITICAL;
		snprintf(heads[i], sizeof heads[0], "%zu. [%s] %s (%s)", i + 1,
			 pt_advice_severity_name(ad->severity), ad->title,
			 pt_advice_key_name(ad->key));
		add(l, NULL, heads[i], strlen(heads[i]), 0,
		    tui_st(TUI_C_WARN, crit ? TUI_A_BOLD | TUI_A_REVERSE : TUI_A_BOLD));
		wrap(l, "Evidence:", ad->evidence, w, tui_st(TUI_C_DEFAULT, 0));
		wrap(l, "Suggestion:", ad->suggestion, w, tui_st(TUI_C_DEFAULT, 0));
		add(l, NULL, "", 0, 0, tui_st(TUI_C_DEFAULT, 0));
	}
	if (!al->n) {
		add(l, NULL, "Checked, nothing to advise. The rules and their default thresholds:",
		    strlen("Checked, nothing to advise. The rules and their default thresholds:"),
		    0, tui_st(TUI_C_DEFAULT, 0));
		for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++)
			add(l, NULL, checks[i], strlen(checks[i]), 2, tui_st(TUI_C_DIM, 0));
	}
}

void tui_advice_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r)
{
	if (r.h < 2 || r.w < 10)
		return;
	const struct pt_advice_list *al = &a->model.advice;
	char lab[64] = "";
	tui_rank_label(a, lab, sizeof lab);
	tui_printf(c, r.x, r.y, r.x + r.w, tui_st(TUI_C_HEADER, TUI_A_BOLD),
		   "Advice: %zu finding%s over %s%s%s", al->n, al->n == 1 ? "" : "s",
		   a->model.window_label, lab[0] ? ", " : "", lab);
	struct lines l = {0};
	char heads[PT_ADV__COUNT][160];
	build(a, &l, r.w, heads);
	int rows = r.h - 1;
	int max_top = (int)l.n > rows ? (int)l.n - rows : 0;
	if (a->advice_top > max_top)
		a->advice_top = max_top;
	if (a->advice_top < 0)
		a->advice_top = 0;
	for (int i = 0; i < rows && (size_t)(a->advice_top + i) < l.n; i++) {
		const struct aline *x = &l.v[a->advice_top + i];
		int y = r.y + 1 + i;
		if (x->label)
			tui_put_str(c, r.x + 3, y, r.x + r.w, x->label,
				    tui_st(TUI_C_DIM, TUI_A_BOLD));
		char buf[PT_ADVICE_TEXT + 1];
		size_t n = x->len < PT_ADVICE_TEXT ? x->len : PT_ADVICE_TEXT;
		memcpy(buf, x->s, n);
		buf[n] = 0;
		tui_put_str(c, r.x + x->x, y, r.x + r.w, buf, x->st);
	}
	free(l.v);
}

int tui_advice_action(struct tui_app *a, const struct tui_binding *b)
{
	switch (b->act) {
	case TUI_ACT_UP:
		a->advice_top--;
		return 1;
	case TUI_ACT_DOWN:
		a->advice_top++;
		return 1;
	case TUI_ACT_PGUP:
		a->advice_top -= 10;
		return 1;
	case TUI_ACT_PGDN:
		a->advice_top += 10;
		return 1;
	case TUI_ACT_HOME:
		a->advice_top = 0;
		return 1;
	case TUI_ACT_END:
		a->advice_top = 1 << 20; /* clamped when drawn */
		return 1;
	default:
		return 0;
	}
}
