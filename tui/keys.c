/*
 * keys.c - the key table (keys.h) and its lookup. Rules that shaped it:
 * htop's function keys (F1 help, F3 search, F6 sort, F10 quit) next to the
 * letters; the timeline's w/a/s/d (chrome://tracing, Perfetto) with layout-
 * independent aliases (+/- zoom, Shift+arrows and ,/. pan), arrows moving
 * the cursor between slices and rows; number keys 1-9 for the views;
 * r / R to filter every view to one rank (like htop's u for a user); one
 * meaning per key in every view (0 is Data everywhere, < > sort wherever
 * they are bound; the Timeline fits with F and changes depth with { }).
 * Bindings limited to some views come before the ones for every view, so a
 * key can mean something specific in one view and something general in the
 * others (Up moves a table's selection and the timeline's lane).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "keys.h"

#define K(...) {__VA_ARGS__}

const struct tui_binding tui_bindings[] = {
	/* timeline */
	{TUI_ACT_ZOOM_IN, 0, TUI_VM_TL, K('w', '+', '='), "zoom in around the cursor", "Zoom"},
	{TUI_ACT_ZOOM_OUT, 0, TUI_VM_TL, K('s', '-', '_'), "zoom out around the cursor", NULL},
	{TUI_ACT_PAN_LEFT, 0, TUI_VM_TL, K('a', TUI_KEY_SLEFT, ','), "pan left (earlier)", "Pan"},
	{TUI_ACT_PAN_RIGHT, 0, TUI_VM_TL, K('d', TUI_KEY_SRIGHT, '.'), "pan right (later)", NULL},
	{TUI_ACT_EV_PREV, 0, TUI_VM_TL, K(TUI_KEY_LEFT), "cursor to the previous slice on its row", NULL},
	{TUI_ACT_EV_NEXT, 0, TUI_VM_TL, K(TUI_KEY_RIGHT), "cursor to the next slice on its row", NULL},
	{TUI_ACT_LANE_UP, 0, TUI_VM_TL, K(TUI_KEY_UP, 'k'), "cursor to the row above", NULL},
	{TUI_ACT_LANE_DOWN, 0, TUI_VM_TL, K(TUI_KEY_DOWN, 'j'), "cursor to the row below", NULL},
	{TUI_ACT_SLOWEST, 0, TUI_VM_TL, K('S'), "jump to the slowest step (again: the next slowest)",
	 "Slowest"},
	{TUI_ACT_GOTO_STEP, 0, TUI_VM_TL, K(':'), "go to step N (type the number, Enter)", "Step"},
	{TUI_ACT_STEP_PREV, 0, TUI_VM_TL, K('['), "jump to the previous step", NULL},
	{TUI_ACT_STEP_NEXT, 0, TUI_VM_TL, K(']'), "jump to the next step", NULL},
	{TUI_ACT_SEARCH, 0, TUI_VM_TL, K('/', TUI_KEY_F(3)),
	 "search slice names: matches highlighted, Enter goes to the next (Esc clears)", "Search"},
	{TUI_ACT_SEARCH_NEXT, 0, TUI_VM_TL, K('n'), "next match (later)", NULL},
	{TUI_ACT_SEARCH_PREV, 0, TUI_VM_TL, K('N'), "previous match (earlier)", NULL},
	{TUI_ACT_ENTER, 0, TUI_VM_TL, K(TUI_KEY_ENTER),
	 "details of the slice under the cursor (in them: Up/Down, Enter goes to a linked slice)",
	 "Details"},
	{TUI_ACT_COLLAPSE, 0, TUI_VM_TL, K('c'), "collapse the cursor's lane to one row (again: expand)",
	 NULL},
	{TUI_ACT_COLLAPSE_ALL, 0, TUI_VM_TL, K('C'), "collapse every lane (again: expand all)", NULL},
	{TUI_ACT_DEPTH_LESS, 0, TUI_VM_TL, K('{'), "show fewer nesting rows per lane", "Depth"},
	{TUI_ACT_DEPTH_MORE, 0, TUI_VM_TL, K('}'), "show more nesting rows per lane", NULL},
	{TUI_ACT_EMPTY_LANES, 0, TUI_VM_TL, K('H'), "hide / show lanes with nothing in view", NULL},
	{TUI_ACT_FOLLOW, 0, TUI_VM_TL, K('f'), "follow the live edge (zoom keeps it; panning ends it)",
	 "Follow"},
	{TUI_ACT_FIT, 0, TUI_VM_TL, K('F'), "fit everything", "Fit"},
	/* tables */
	{TUI_ACT_SEARCH, 0, TUI_VM_TABLES, K('/', TUI_KEY_F(3)), "fuzzy search (Esc clears)",
	 "Search"},
	{TUI_ACT_SEARCH_NEXT, 0, TUI_VM_TABLES, K('n'), "next match", NULL},
	{TUI_ACT_SEARCH_PREV, 0, TUI_VM_TABLES, K('N'), "previous match", NULL},
	{TUI_ACT_SORT_NEXT, 0, TUI_VM_SORTABLE, K('>', TUI_KEY_F(6)),
	 "sort by the next column (Summary: steps by number / by duration)", "Sort"},
	{TUI_ACT_SORT_PREV, 0, TUI_VM_SORTABLE, K('<'), "sort by the previous column", NULL},
	{TUI_ACT_SORT_INVERT, 0, TUI_VM_SORTABLE, K('I'), "invert the sort order", NULL},
	{TUI_ACT_ENTER, 0, TUI_VM(TUI_V_OPERATORS), K(TUI_KEY_ENTER),
	 "expand an operator into its inner ops and kernels", "Expand"},
	{TUI_ACT_GROUP, 0, TUI_VM(TUI_V_OPERATORS), K('t'),
	 "single operators / operator types", "Types"},
	{TUI_ACT_ENTER, 0, TUI_VM(TUI_V_RANKS), K(TUI_KEY_ENTER),
	 "show only this rank in every view, from its Summary", "Select"},
	{TUI_ACT_ENTER, 0, TUI_VM(TUI_V_SUMMARY), K(TUI_KEY_ENTER),
	 "open the selected step in the Timeline", "Open"},
	/* every view */
	{TUI_ACT_HELP, 0, TUI_VM_ALL, K('?', 'h', TUI_KEY_F(1)), "this help", "Help"},
	{TUI_ACT_VIEW, TUI_V_SUMMARY, TUI_VM_ALL, K('1'), "Summary: model, perf, overview", NULL},
	{TUI_ACT_VIEW, TUI_V_OPERATORS, TUI_VM_ALL, K('2'), "Operators", NULL},
	{TUI_ACT_VIEW, TUI_V_KERNELS, TUI_VM_ALL, K('3'), "Kernels", NULL},
	{TUI_ACT_VIEW, TUI_V_TIMELINE, TUI_VM_ALL, K('4'), "Timeline", NULL},
	{TUI_ACT_VIEW, TUI_V_MEMORY, TUI_VM_ALL, K('5'), "Memory (memcpy / memset)", NULL},
	{TUI_ACT_VIEW, TUI_V_DISTRIBUTED, TUI_VM_ALL, K('6'), "Distributed", NULL},
	{TUI_ACT_VIEW, TUI_V_USER, TUI_VM_ALL, K('7'), "UserDefined", NULL},
	{TUI_ACT_VIEW, TUI_V_RANKS, TUI_VM_ALL, K('8'), "Ranks: one row per rank, the slowest marked",
	 NULL},
	{TUI_ACT_VIEW, TUI_V_ADVICE, TUI_VM_ALL, K('9'),
	 "Advice: what bounds the job and what to change", NULL},
	{TUI_ACT_VIEW, TUI_V_DATA, TUI_VM_ALL, K('0'),
	 "Data: the loader's queue per step, its workers and the pipeline's stages", NULL},
	{TUI_ACT_NEXT_VIEW, 0, TUI_VM_ALL, K(TUI_KEY_TAB), "next view", "View"},
	{TUI_ACT_PREV_VIEW, 0, TUI_VM_ALL, K(TUI_KEY_BTAB), "previous view", NULL},
	{TUI_ACT_UP, 0, TUI_VM_ALL, K(TUI_KEY_UP, 'k'), "move up", NULL},
	{TUI_ACT_DOWN, 0, TUI_VM_ALL, K(TUI_KEY_DOWN, 'j'), "move down", NULL},
	{TUI_ACT_PGUP, 0, TUI_VM_ALL, K(TUI_KEY_PGUP), "page up", NULL},
	{TUI_ACT_PGDN, 0, TUI_VM_ALL, K(TUI_KEY_PGDN, ' '), "page down", NULL},
	{TUI_ACT_HOME, 0, TUI_VM_ALL, K(TUI_KEY_HOME, 'g'), "first row", NULL},
	{TUI_ACT_END, 0, TUI_VM_ALL, K(TUI_KEY_END, 'G'), "last row", NULL},
	{TUI_ACT_RANK_NEXT, 0, TUI_VM_ALL, K('r'), "show the next rank only (two or more ranks)",
	 "Rank"},
	{TUI_ACT_RANK_PREV, 0, TUI_VM_ALL, K(TUI_CTRL('r')), "show the previous rank only", NULL},
	{TUI_ACT_RANK_ALL, 0, TUI_VM_ALL, K('R'), "all ranks merged", NULL},
	{TUI_ACT_WINDOW, 0, TUI_VM_ALL, K('W'), "window: all / last 10 steps / last 30 s", "Window"},
	{TUI_ACT_EXPORT, 0, TUI_VM_ALL, K('e'), "export a snapshot (Chrome trace) to ./proftop-*.json",
	 "Export"},
	{TUI_ACT_CAPTURE, 0, TUI_VM_ALL, K('T'),
	 "capture the next steps (5, or --capture-steps N) with torch.profiler (a PyTorch job "
	 "under proftop): every aten op, nested here; saved to ./proftop-capture-*.json (several "
	 "ranks: the same steps on each, saved together in ./proftop-capture-steps-A-B/)",
	 NULL},
	{TUI_ACT_PAUSE, 0, TUI_VM_ALL, K('p'), "pause the view (data keeps coming)", "Pause"},
	{TUI_ACT_BASELINE, 0, TUI_VM_ALL, K('B'),
	 "keep the figures now as a baseline: tables show deltas from here (B again: drop)", NULL},
	{TUI_ACT_CANCEL, 0, TUI_VM_ALL, K(TUI_KEY_ESC), "clear search / close a popup", NULL},
	{TUI_ACT_REDRAW, 0, TUI_VM_ALL, K(TUI_CTRL('l')), "redraw the screen", NULL},
	{TUI_ACT_QUIT, 0, TUI_VM_ALL, K('q', TUI_KEY_F(10)),
	 "quit (in run, while the job runs: asks whether to stop it or leave it running)", "Quit"},
};
const size_t tui_nbindings = sizeof tui_bindings / sizeof tui_bindings[0];

const struct tui_binding *tui_key_lookup(int key, int view)
{
	if (key == 0)
		return NULL;
	for (size_t i = 0; i < tui_nbindings; i++) {
		const struct tui_binding *b = &tui_bindings[i];
		if (b->views && !(b->views & TUI_VM(view)))
			continue;
		for (int k = 0; k < TUI_BIND_KEYS && b->keys[k]; k++)
			if (b->keys[k] == key)
				return b;
	}
	return NULL;
}

void tui_key_name(int key, char *buf, size_t len)
{
	static const char *const special[] = {
		"Up", "Down", "Left", "Right", "S-Left", "S-Right", "PgUp", "PgDn", "Home", "End",
		"Enter", "Esc", "Tab", "S-Tab", "Bksp", "Resize", "Mouse"};
	if (key >= TUI_KEY_F1 && key <= TUI_KEY_F12)
		snprintf(buf, len, "F%d", key - TUI_KEY_F1 + 1);
	else if (key >= TUI_KEY_UP && key < TUI_KEY_F1)
		snprintf(buf, len, "%s", special[key - TUI_KEY_UP]);
	else if (key == ' ')
		snprintf(buf, len, "Space");
	else if (key > 0 && key < 32)
		snprintf(buf, len, "Ctrl-%c", key + 'A' - 1);
	else if (key > 32 && key < 127)
		snprintf(buf, len, "%c", key);
	else
		snprintf(buf, len, "#%d", key);
}

const char *tui_binding_where(const struct tui_binding *b)
{
	if (!b->views)
		return "";
	if (b->views == TUI_VM_TL)
		return "Timeline";
	if (b->views == TUI_VM_TABLES)
		return "tables";
	if (b->views == TUI_VM_SORTABLE)
		return "tables, Ranks, Summary";
	for (int v = 0; v < TUI_V__COUNT; v++)
		if (b->views == TUI_VM(v))
			return tui_view_name(v);
	return "some views";
}

/* Appends text to buf[*n..cap) wrapped at 100 columns, continuation lines
 * indented by two spaces; 0 when it does not fit. */
static int put_wrapped(char *buf, size_t cap, size_t *n, const char *text)
{
	const int width = 100;
	int col = 0;
	const char *p = text;
	while (*p) {
		const char *w = p;
		while (*w == ' ')
			w++;
		const char *e = w;
		while (*e && *e != ' ')
			e++;
		int len = (int)(e - w), gap = col ? 1 : 0;
		if (!len)
			break;
		if (col && col + gap + len > width) {
			if (*n + 3 >= cap)
				return 0;
			memcpy(buf + *n, "\n  ", 3);
			*n += 3;
			col = 2;
			gap = 0;
		}
		if (*n + (size_t)(gap + len) + 1 >= cap)
			return 0;
		if (gap)
			buf[(*n)++] = ' ';
		memcpy(buf + *n, w, (size_t)len);
		*n += (size_t)len;
		col += gap + len;
		p = e;
	}
	if (*n + 2 >= cap)
		return 0;
	buf[(*n)++] = '\n';
	buf[*n] = 0;
	return 1;
}

size_t tui_keys_markdown(char *buf, size_t cap)
{
	size_t n = 0;
	const char *prev = NULL;
	if (cap)
		buf[0] = 0;
	for (size_t i = 0; i < tui_nbindings; i++) {
		const struct tui_binding *b = &tui_bindings[i];
		const char *w = tui_binding_where(b);
		char line[512];
		int k = 0;
		if (!prev || strcmp(prev, w) != 0) {
			k = snprintf(line, sizeof line, "%s**%c%s**\n\n", prev ? "\n" : "",
				     w[0] ? toupper((unsigned char)w[0]) : 'E', w[0] ? w + 1 : "very view");
			if (k < 0 || n + (size_t)k >= cap)
				return 0;
			memcpy(buf + n, line, (size_t)k + 1);
			n += (size_t)k;
			prev = w;
		}
		k = snprintf(line, sizeof line, "-");
		for (int j = 0; j < TUI_BIND_KEYS && b->keys[j] && k < (int)sizeof line; j++) {
			char name[16];
			tui_key_name(b->keys[j], name, sizeof name);
			k += snprintf(line + k, sizeof line - (size_t)k, " `%s`", name);
		}
		if (k < (int)sizeof line)
			snprintf(line + k, sizeof line - (size_t)k, ": %s", b->help);
		if (!put_wrapped(buf, cap, &n, line))
			return 0;
	}
	return n;
}

const char *tui_view_name(int v)
{
	static const char *const names[TUI_V__COUNT] = {
		"Summary", "Operators", "Kernels", "Timeline", "Memory", "Distributed", "UserDefined",
		"Ranks", "Advice", "Data"};
	return v >= 0 && v < TUI_V__COUNT ? names[v] : "?";
}
