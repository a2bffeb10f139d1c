/*
 * test_tui_timeline.c - the screen explains a slow step, rendered into the
 * in-memory canvas: a synthetic job of 30 steps (phases, operators, inner
 * operators, launches and their kernels on a GPU stream) where one
 * operator of one step is slow. The Timeline draws each depth on its own
 * row; S jumps to the slowest step with the slow operator named on its own
 * row; ':' goes to step N; search marks matches and n goes to them; the
 * details name the step, the share of it, the parents and the launch
 * links, and Enter follows a link; ruler labels differ at every zoom; c, <,
 * H reshape the lanes; follow mode survives zoom and says when it ends.
 * The Summary's step list sorts by duration and opens a step in the
 * Timeline; step numbers stay the job's in "last 10 steps"; the tab bar at
 * 80 columns; the sort column kept visible; long names that differ at the
 * end stay apart; wide characters take two cells; a file's GPU meter shows
 * the verdict's figure; mouse clicks and the wheel; and docs/tui.md lists
 * every key of the key table, docs/screens.md and timeline.md every view.
 */
#include "testutil.h"

#include <stdio.h>
#include <unistd.h>

#include "app.h"
#include "proftop/store.h"
#include "model/util.h"

#define SLOW_STEP 17

/* 30 steps of 10 ms (step 17: 50 ms, its "slow_conv" takes 40 of them). */
static struct pt_trace *job(int numbered)
{
	struct pt_trace *t = pt_trace_new(64u << 20);
	uint32_t h = tu_track(t, 100, 100, -1), g = tu_track(t, 100, 7, 0);
	double now = 0;
	uint32_t corr = 1;
	for (int i = 0; i < 30; i++) {
		double len = i == SLOW_STEP ? 50000 : 10000;
		char nm[32];
		snprintf(nm, sizeof nm, numbered ? "ProfilerStep#%d" : "ProfileStep", i);
		tu_ev(t, h, PT_KIND_PROFILE_STEP, nm, now, len, 0);
		tu_ev(t, h, PT_KIND_DATALOADER, "Dataloader", now + 10, 900, 0);
		tu_ev(t, h, PT_KIND_FORWARD, "Forward", now + 1000, len - 6000, 0);
		double op = now + 1100;
		const char *ops[3] = {"aten::linear", i == SLOW_STEP ? "slow_conv" : "aten::conv2d",
				      "aten::relu"};
		for (int k = 0; k < 3; k++) {
			double ol = i == SLOW_STEP && k == 1 ? 40000 : 1000;
			tu_ev(t, h, PT_KIND_OPERATOR, ops[k], op, ol, 0);
			tu_ev(t, h, PT_KIND_OPERATOR_INNER, "aten::mm", op + 10, ol / 2, 0);
			tu_ev(t, h, PT_KIND_CUDA_RUNTIME, "cudaLaunchKernel", op + 20, 5, corr);
			tu_ev(t, g, PT_KIND_KERNEL, k == 1 ? "conv_kernel" : "gemm_kernel", op + 50,
			      ol / 3, corr);
			corr++;
			op += ol + 100;
		}
		tu_ev(t, h, PT_KIND_BACKWARD, "Backward", now + len - 4800, 3000, 0);
		tu_ev(t, h, PT_KIND_OPTIMIZATION, "Optimization", now + len - 1700, 1500, 0);
		now += len + 100;
	}
	return t;
}

static char screen[300 * 80 * 4];

static const char *render(struct tui_app *a, struct tui_canvas *c)
{
	tui_app_draw(a, c);
	size_t n = 0;
	for (int y = 0; y < c->h; y++) {
		n += tui_canvas_row_text(c, y, screen + n, sizeof screen - n - 2);
		screen[n++] = '\n';
	}
	screen[n] = 0;
	return screen;
}

static void keys(struct tui_app *a, const char *s)
{
	for (; *s; s++)
		tui_app_key(a, (unsigned char)*s);
}

/* The text of row y. */
static const char *row(struct tui_canvas *c, int y)
{
	static char buf[2048];
	tui_canvas_row_text(c, y, buf, sizeof buf);
	return buf;
}

/* The screen row holding `needle`, -1 if none. */
static int find_row(struct tui_canvas *c, const char *needle)
{
	for (int y = 0; y < c->h; y++)
		if (strstr(row(c, y), needle))
			return y;
	return -1;
}

static void open_app(struct tui_app *a, struct pt_trace *t, struct tui_canvas *c, int w, int h)
{
	struct tui_opts o;
	tui_opts_init(&o);
	tui_app_init(a, t, &o);
	tui_canvas_init(c, w, h, 0);
	render(a, c);
}

static void close_app(struct tui_app *a, struct tui_canvas *c, struct pt_trace *t)
{
	tui_canvas_free(c);
	tui_app_free(a);
	pt_trace_free(t);
}

static void test_slowest_step(void **state)
{
	(void)state;
	int sizes[2][2] = {{200, 50}, {80, 24}};
	for (int z = 0; z < 2; z++) {
		struct pt_trace *t = job(1);
		struct tui_app a;
		struct tui_canvas c;
		open_app(&a, t, &c, sizes[z][0], sizes[z][1]);
		keys(&a, "4");
		const char *s = render(&a, &c);
		assert_non_null(strstr(s, "span "));
		keys(&a, "S");
		s = render(&a, &c);
		/* the slowest step is shown with its number, the slow operator by
		 * name on a row of its own, below the step's and the phase's rows */
		assert_non_null(strstr(s, "step 17"));
		int ys = find_row(&c, "ProfilerStep#17"), yo = find_row(&c, "slow_conv");
		assert_true(ys >= 0 && yo > ys + 1);
		assert_null(strstr(row(&c, yo), "ProfilerStep#17"));
		assert_non_null(strstr(row(&c, yo - 1), "Forward"));
		assert_true(a.tl.has_sel && a.tl.sel.kind == PT_KIND_PROFILE_STEP);
		/* S again: the next slowest (any of the 10 ms ones) */
		keys(&a, "S");
		assert_true(a.tl.sel.dur_ns == US(10000));
		close_app(&a, &c, t);
	}
}

/* Ruler labels (the tick labels on the row under the tabs) as words. */
static int ruler_labels(struct tui_app *a, struct tui_canvas *c, char out[][32], int max)
{
	render(a, c);
	const char *r = row(c, a->lay.body.y) + 0;
	int n = 0;
	/* skip the "span ..." corner: labels start after the lane label column */
	int col = a->tl.gx;
	const char *p = r;
	for (int i = 0; i < col && *p; i++) { /* ASCII up to the graph */
		unsigned char ch = (unsigned char)*p;
		p += ch < 0x80 ? 1 : ch < 0xe0 ? 2 : ch < 0xf0 ? 3 : 4;
	}
	while (*p && n < max) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		/* a label is a number and its unit ("1.5 ms", "0") */
		int k = 0;
		while (*p && !(p[0] == ' ' && p[1] == ' ') && k < 31)
			out[n][k++] = *p++;
		while (k > 0 && out[n][k - 1] == ' ')
			k--;
		out[n][k] = 0;
		n++;
	}
	return n;
}

static void test_ruler_labels_differ(void **state)
{
	(void)state;
	struct pt_trace *t = job(1);
	struct tui_app a;
	struct tui_canvas c;
	open_app(&a, t, &c, 200, 50);
	keys(&a, "4]");
	/* five zoom levels around a cursor deep in the trace: every pair of
	 * labels differs, and there are several of them */
	for (int level = 0; level < 5; level++) {
		char lab[64][32];
		int n = ruler_labels(&a, &c, lab, 64);
		assert_true(n >= 4);
		for (int i = 0; i < n; i++)
			for (int j = i + 1; j < n; j++)
				if (!strcmp(lab[i], lab[j])) {
					print_message("level %d: '%s' twice in '%s'\n", level,
						      lab[i], row(&c, a.lay.body.y));
					fail();
				}
		keys(&a, "www");
	}
	/* the absolute position is said once, on the status line */
	const char *s = render(&a, &c);
	const char *at = strstr(s, "at ");
	assert_non_null(at);
	assert_non_null(strstr(at, "step "));
	close_app(&a, &c, t);
}

static void test_goto_and_search(void **state)
{
	(void)state;
	struct pt_trace *t = job(1);
	struct tui_app a;
	struct tui_canvas c;
	open_app(&a, t, &c, 160, 40);
	keys(&a, "4:12");
	const char *s = render(&a, &c);
	assert_non_null(strstr(s, "Go to step: 12"));
	tui_app_key(&a, TUI_KEY_ENTER);
	s = render(&a, &c);
	assert_non_null(strstr(s, "step 12:"));
	assert_true(a.tl.has_sel && a.tl.sel.kind == PT_KIND_PROFILE_STEP);
	assert_int_equal(a.tl.sel.dur_ns, US(10000));
	keys(&a, ":99");
	tui_app_key(&a, TUI_KEY_ENTER);
	s = render(&a, &c);
	assert_non_null(strstr(s, "no step 99 here: the steps kept are 0 to 29"));
	/* search: matches marked, Enter goes to the first after the cursor */
	keys(&a, "F/slow");
	s = render(&a, &c);
	assert_non_null(strstr(s, "Search: slow"));
	int marked = 0;
	for (int i = 0; i < c.w * c.h; i++)
		marked += c.cells[i].color == TUI_C_MATCH && (c.cells[i].attr & TUI_A_UNDERLINE);
	assert_true(marked > 0);
	keys(&a, "\r");
	tui_app_key(&a, TUI_KEY_ENTER);
	assert_true(a.tl.has_sel);
	assert_string_equal(pt_trace_str(t, a.tl.sel.name_id), "slow_conv");
	keys(&a, "n");
	s = render(&a, &c);
	assert_non_null(strstr(s, "no later match"));
	assert_string_equal(pt_trace_str(t, a.tl.sel.name_id), "slow_conv");
	close_app(&a, &c, t);
}

static void test_details_and_links(void **state)
{
	(void)state;
	struct pt_trace *t = job(1);
	struct tui_app a;
	struct tui_canvas c;
	open_app(&a, t, &c, 200, 50);
	keys(&a, "4/slow");
	tui_app_key(&a, TUI_KEY_ENTER);
	tui_app_key(&a, TUI_KEY_ENTER); /* details of slow_conv */
	const char *s = render(&a, &c);
	assert_non_null(strstr(s, "Slice details"));
	assert_non_null(strstr(s, "into step 17"));
	assert_non_null(strstr(s, "80.0% of step 17")); /* 40 of 50 ms */
	assert_non_null(strstr(s, "ProfilerStep#17 > Forward"));
	assert_non_null(strstr(s, "self 20 ms"));  /* 40 ms less its aten::mm */
	assert_non_null(strstr(s, "conv_kernel")); /* what it launched */
	/* go to the kernel it launched, then back to its launch */
	int k = -1;
	for (int i = 0; i < a.tl.nitems; i++)
		if (!strcmp(a.tl.items[i].what, "launched"))
			k = i;
	assert_true(k >= 0);
	while (a.tl.item != k)
		tui_app_key(&a, TUI_KEY_DOWN);
	tui_app_key(&a, TUI_KEY_ENTER);
	assert_string_equal(pt_trace_str(t, a.tl.sel.name_id), "conv_kernel");
	assert_true(a.tl.details);
	s = render(&a, &c);
	assert_non_null(strstr(s, "launched by"));
	int op = -1;
	for (int i = 0; i < a.tl.nitems; i++)
		if (!strcmp(a.tl.items[i].what, "operator"))
			op = i;
	assert_true(op >= 0);
	while (a.tl.item != op)
		tui_app_key(&a, TUI_KEY_DOWN);
	tui_app_key(&a, TUI_KEY_ENTER);
	/* the innermost operator around the launch; slow_conv is its parent */
	assert_string_equal(pt_trace_str(t, a.tl.sel.name_id), "aten::mm");
	s = render(&a, &c);
	assert_non_null(strstr(s, "parent      40 ms     slow_conv"));
	tui_app_key(&a, TUI_KEY_ESC);
	assert_false(a.tl.details);
	close_app(&a, &c, t);
}

static void test_lane_shape_and_follow(void **state)
{
	(void)state;
	struct pt_trace *t = job(1);
	struct tui_app a;
	struct tui_canvas c;
	open_app(&a, t, &c, 160, 40);
	keys(&a, "4S");
	render(&a, &c);
	size_t rows = a.tl.nrows;
	assert_true(rows >= 5); /* step, phases, ops, inner ops, launches, the stream */
	keys(&a, "c");
	render(&a, &c);
	assert_true(a.tl.nrows < rows);
	keys(&a, "c{{{{");
	render(&a, &c);
	assert_true(a.tl.nrows < rows);
	const char *s = render(&a, &c);
	assert_non_null(strstr(s, "deeper"));
	keys(&a, "}}}}");
	/* zoomed into one step, the stream still has kernels in view; far
	 * past the data nothing does, and the lanes go (H shows them) */
	for (int i = 0; i < 8; i++)
		keys(&a, "d");
	keys(&a, "dddddddddddddddddddddddddddddddddddddddd");
	render(&a, &c);
	size_t hidden = a.tl.nrows;
	keys(&a, "H");
	render(&a, &c);
	assert_true(a.tl.nrows > hidden);
	/* follow mode: zoom keeps it, a pan ends it and says so */
	keys(&a, "Ff");
	s = render(&a, &c);
	assert_non_null(strstr(s, "[follow]"));
	keys(&a, "ww");
	s = render(&a, &c);
	assert_non_null(strstr(s, "[follow]"));
	assert_true(a.tl.t1_ns >= pt_store_last_ns(t->store) - 1);
	keys(&a, "a");
	s = render(&a, &c);
	assert_null(strstr(s, "[follow]"));
	assert_non_null(strstr(s, "follow off"));
	close_app(&a, &c, t);
}

/* Lanes whose labels are cut at 80 columns still tell apart: two loader
 * workers keep their numbers and pids ("worker 0 4242"), not "data wo…". */
static void test_worker_labels_cut(void **state)
{
	(void)state;
	struct pt_trace *t = job(1);
	for (int w = 0; w < 2; w++) {
		uint32_t tr = tu_track(t, 4242 + w, 4242 + w, -1);
		struct pt_track_key k = {4242 + w, 4242 + w, 0, 0};
		char lab[32];
		snprintf(lab, sizeof lab, "data worker %d", w);
		pt_trace_set_thread_label(t, &k, pt_trace_intern(t, lab, strlen(lab)));
		for (int i = 0; i < 5; i++)
			tu_ev(t, tr, PT_KIND_USER_DEFINED, "read_batch", 1000.0 + i * 20000, 5000, 0);
	}
	struct tui_app a;
	struct tui_canvas c;
	open_app(&a, t, &c, 80, 24);
	keys(&a, "4");
	const char *s = render(&a, &c);
	assert_non_null(strstr(s, "worker 0 4242"));
	assert_non_null(strstr(s, "worker 1 4243"));
	assert_null(strstr(s, "data wo"));
	close_app(&a, &c, t);
}

static void test_step_list(void **state)
{
	(void)state;
	struct pt_trace *t = job(1);
	struct tui_app a;
	struct tui_canvas c;
	open_app(&a, t, &c, 160, 60);
	const char *s = render(&a, &c);
	assert_non_null(strstr(s, "Steps, in order (30)"));
	assert_true(find_row(&c, "#29 ") >= 0); /* the newest is shown */
	keys(&a, ">");
	s = render(&a, &c);
	assert_non_null(strstr(s, "Steps, slowest first"));
	int y = find_row(&c, "Steps, slowest first");
	assert_non_null(strstr(row(&c, y + 1), "#17 "));
	tui_app_key(&a, TUI_KEY_DOWN);
	tui_app_key(&a, TUI_KEY_UP);
	tui_app_key(&a, TUI_KEY_ENTER);
	assert_int_equal(a.view, TUI_V_TIMELINE);
	assert_true(a.tl.has_sel && a.tl.sel.kind == PT_KIND_PROFILE_STEP);
	assert_int_equal(a.tl.sel.dur_ns, US(50000));
	s = render(&a, &c);
	assert_non_null(strstr(s, "slow_conv"));
	close_app(&a, &c, t);
}

static void test_window_numbers(void **state)
{
	(void)state;
	struct pt_trace *t = job(0); /* "ProfileStep": ordinals */
	struct tui_app a;
	struct tui_canvas c;
	open_app(&a, t, &c, 160, 60);
	keys(&a, "W");
	const char *s = render(&a, &c);
	assert_non_null(strstr(s, "last 10 steps"));
	assert_true(find_row(&c, "#20 ") >= 0);
	assert_true(find_row(&c, "#29 ") >= 0);
	assert_true(find_row(&c, "#0 ") < 0);
	assert_true(find_row(&c, "#9 ") < 0);
	keys(&a, "4:25");
	tui_app_key(&a, TUI_KEY_ENTER);
	s = render(&a, &c);
	assert_non_null(strstr(s, "step 25:"));
	close_app(&a, &c, t);
}

static void test_tabs_and_sort_at_80(void **state)
{
	(void)state;
	struct pt_trace *t = job(1);
	struct tui_app a;
	struct tui_canvas c;
	open_app(&a, t, &c, 80, 24);
	for (int v = 0; v < TUI_V__COUNT; v++) {
		if (v == TUI_V_RANKS)
			continue;
		tui_app_key(&a, '0' + (v + 1) % 10); /* 1..9, 0 */
		render(&a, &c);
		const char *tabs = row(&c, a.lay.tabs.y);
		/* every tab named (short names when full ones do not fit) */
		assert_non_null(strstr(tabs, tui_view_name(v)));
		assert_non_null(strstr(tabs, "7 User"));
		assert_null(strstr(tabs, "7 9"));
		/* the key bar always says how to get help and to quit */
		const char *bar = row(&c, a.lay.help.y);
		assert_non_null(strstr(bar, "?Help"));
		assert_non_null(strstr(bar, "qQuit"));
	}
	/* sort by the last column: it stays on screen at 80 columns */
	keys(&a, "2");
	for (int i = 0; i < 6; i++)
		keys(&a, ">");
	int col = a.tables[TUI_V_OPERATORS].sort_col;
	const char *s = render(&a, &c);
	assert_non_null(strstr(s, tui_col_name(col)));
	close_app(&a, &c, t);
}

static void test_names_apart_and_wide(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(16u << 20);
	uint32_t h = tu_track(t, 1, 1, -1);
	tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfilerStep#1", 0, 1000, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "aten::cudnn_convolution_backward_input", 10, 300, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "aten::cudnn_convolution_backward_weight", 320, 200, 0);
	tu_ev(t, h, PT_KIND_OPERATOR, "aten::cudnn_convolution_backward_bias", 530, 100, 0);
	tu_ev(t, h, PT_KIND_OPERATOR,
	      "\xe5\x89\x8d\xe5\x90\x91\xe4\xbc\xa0\xe6\x92\xad \xf0\x9f\x94\xa5", 640, 50, 0);
	struct tui_app a;
	struct tui_canvas c;
	open_app(&a, t, &c, 80, 24);
	keys(&a, "2");
	render(&a, &c);
	/* the three names differ at their ends: the rows keep the ends */
	assert_true(find_row(&c, "_input") >= 0);
	assert_true(find_row(&c, "_weight") >= 0);
	assert_true(find_row(&c, "_bias") >= 0);
	/* the CJK name and the emoji: two cells each, shown as they are */
	int y = find_row(&c, "\xe5\x89\x8d\xe5\x90\x91\xe4\xbc\xa0\xe6\x92\xad \xf0\x9f\x94\xa5");
	assert_true(y >= 0);
	int x = 0;
	while (x < c.w && tui_canvas_at(&c, x, y)->ch != 0x524d)
		x++;
	assert_true(x < c.w - 1);
	assert_int_equal(tui_canvas_at(&c, x + 1, y)->ch, TUI_CH_CONT);
	assert_int_equal(tui_canvas_at(&c, x + 2, y)->ch, 0x5411);
	/* overwriting half of a wide character blanks the other half */
	tui_put_ch(&c, x + 1, y, 'z', tui_st(TUI_C_DEFAULT, 0));
	assert_int_equal(tui_canvas_at(&c, x, y)->ch, ' ');
	/* a wide character that would not fit whole is not drawn in half */
	struct tui_canvas n;
	tui_canvas_init(&n, 5, 1, 0);
	int end = tui_put_str(&n, 0, 0, 5, "ab\xe5\x89\x8d\xe5\x90\x91", tui_st(TUI_C_DEFAULT, 0));
	assert_int_equal(end, 5);
	assert_int_equal(tui_canvas_at(&n, 4, 0)->ch, ' ');
	tui_canvas_free(&n);
	/* --ascii: escaped, as before */
	struct tui_canvas ac;
	tui_canvas_init(&ac, 80, 24, 1);
	render(&a, &ac);
	assert_true(find_row(&ac, "\\u{524d}") >= 0);
	tui_canvas_free(&ac);
	close_app(&a, &c, t);
}

/* On a file the GPU meter shows the window's figure, the one the verdict
 * reads, not the last second's. */
static void test_file_meter(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(16u << 20);
	uint32_t h = tu_track(t, 1, 1, -1), g = tu_track(t, 1, 7, 0);
	for (int i = 0; i < 5; i++) { /* 5 s busy 80 %, then a last second at 20 % */
		tu_ev(t, h, PT_KIND_PROFILE_STEP, "ProfilerStep#1", i * 1e6, 1e6, 0);
		tu_ev(t, g, PT_KIND_KERNEL, "k", i * 1e6, i < 4 ? 0.9e6 : 0.2e6, 0);
	}
	struct tui_app a;
	struct tui_canvas c;
	open_app(&a, t, &c, 120, 30);
	const struct pt_summary *s = a.model.sum;
	assert_int_equal(s->ndevices, 1);
	int gm = -1;
	for (int i = 0; i < a.model.nmeters; i++)
		if (!strcmp(a.model.meters[i].label, "GPU0"))
			gm = i;
	assert_true(gm >= 0);
	assert_true(a.model.meters[gm].pct > 70); /* the last second alone: 20 % */
	char want[16];
	snprintf(want, sizeof want, "%5.1f%%", s->devices[0].util_pct);
	assert_non_null(strstr(render(&a, &c), want));
	close_app(&a, &c, t);
}

/* A session that ended: the session line says how, and its elapsed time
 * stops at the end while the screen stays. */
static void test_ended_session(void **state)
{
	(void)state;
	struct pt_trace *t = job(1);
	struct tui_app a;
	struct tui_canvas c;
	open_app(&a, t, &c, 160, 40);
	uint64_t t0 = pt_now_ns();
	a.st = (struct tui_status){"1234 (train)", "running", t0, 1, NULL};
	a.now_ns = t0 + 5000000000ull;
	assert_non_null(strstr(render(&a, &c), "running 5.000s"));
	a.st = (struct tui_status){"1234 (train)", "exited (code 0)", t0, 0, NULL};
	a.now_ns = t0 + 6000000000ull;
	assert_non_null(strstr(render(&a, &c), "exited (code 0) 6.000s"));
	a.now_ns = t0 + 30000000000ull; /* later: still the run's own time */
	assert_non_null(strstr(render(&a, &c), "exited (code 0) 6.000s"));
	close_app(&a, &c, t);
}

/* At 80 columns the session line keeps the script's name: paths cut to
 * their last part, the interpreter left out, cut at the end. */
static void test_session_line_narrow(void **state)
{
	(void)state;
	struct pt_trace *t = job(1);
	struct tui_app a;
	struct tui_canvas c;
	open_app(&a, t, &c, 80, 24);
	a.st = (struct tui_status){"4242 (/usr/bin/python3 /home/user/experiments/imagenet/train.py "
				   "--lr 0.1 --epochs 90)",
				   "running", pt_now_ns(), 1, NULL};
	const char *s = render(&a, &c);
	assert_non_null(strstr(s, "4242 (train.py --lr"));
	assert_non_null(strstr(s, "running"));
	a.st.describe = "77 (sh)"; /* short: as it is */
	assert_non_null(strstr(render(&a, &c), "77 (sh) running"));
	close_app(&a, &c, t);
}

static void mouse(struct tui_app *a, int x, int y, int button)
{
	a->mouse = (struct tui_mouse){x, y, button};
	tui_app_key(a, TUI_KEY_MOUSE);
}

static void test_mouse(void **state)
{
	(void)state;
	struct pt_trace *t = job(1);
	struct tui_app a;
	struct tui_canvas c;
	open_app(&a, t, &c, 160, 50);
	/* a tab */
	mouse(&a, a.tab_x0[TUI_V_OPERATORS] + 1, a.lay.tabs.y, 1);
	assert_int_equal(a.view, TUI_V_OPERATORS);
	render(&a, &c);
	mouse(&a, 5, a.lay.body.y + 3, 1); /* the third row */
	assert_int_equal(a.tables[TUI_V_OPERATORS].sel, 2);
	mouse(&a, 5, a.lay.body.y + 3, 5); /* the wheel scrolls */
	assert_true(a.tables[TUI_V_OPERATORS].sel > 2);
	/* the Timeline: the wheel zooms, a click picks a slice, again opens it */
	mouse(&a, a.tab_x0[TUI_V_TIMELINE], a.lay.tabs.y, 1);
	assert_int_equal(a.view, TUI_V_TIMELINE);
	render(&a, &c);
	uint64_t span = a.tl.t1_ns - a.tl.t0_ns;
	mouse(&a, a.tl.gx + a.tl.gw / 2, a.tl.gy, 4);
	assert_true(a.tl.t1_ns - a.tl.t0_ns < span);
	keys(&a, "S");
	render(&a, &c);
	int y = find_row(&c, "slow_conv");
	assert_true(y >= 0);
	const char *r = row(&c, y);
	int x = (int)(strstr(r, "slow_conv") - r); /* ASCII before it on this row? */
	(void)x;
	/* click the middle of the graph on that row: slow_conv spans most of it */
	mouse(&a, a.tl.gx + a.tl.gw / 2, y, 1);
	assert_string_equal(pt_trace_str(t, a.tl.sel.name_id), "slow_conv");
	mouse(&a, a.tl.gx + a.tl.gw / 2, y, 1);
	assert_true(a.tl.details);
	close_app(&a, &c, t);
}

/* docs/tui.md lists every binding of the key table (tui/keys.c; `make docs`
 * rewrites the list), and docs/screens.md or docs/timeline.md has a capture
 * of every view. */
static char *read_doc(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *doc = malloc(1 << 20);
	assert_non_null(doc);
	size_t n = fread(doc, 1, (1 << 20) - 1, f);
	fclose(f);
	doc[n] = 0;
	return doc;
}

static void test_docs_keys(void **state)
{
	(void)state;
	static char want[1 << 16];
	size_t wn = tui_keys_markdown(want, sizeof want);
	assert_true(wn > 0);
	char *doc = read_doc("docs/tui.md");
	if (!doc)
		skip();
	const char *b = strstr(doc, "<!-- keys: generated by `make docs` from tui/keys.c -->\n");
	const char *e = strstr(doc, "<!-- end of keys -->");
	assert_non_null(b);
	assert_non_null(e);
	b = strchr(b, '\n') + 1;
	if ((size_t)(e - b) != wn || memcmp(b, want, wn)) {
		print_message("docs/tui.md's key list differs from tui/keys.c: run make docs\n");
		fail();
	}
	free(doc);
	char *shots = read_doc("docs/screens.md"), *tl = read_doc("docs/timeline.md");
	assert_non_null(shots);
	assert_non_null(tl);
	for (int v = 0; v < TUI_V__COUNT; v++) {
		char h[64];
		snprintf(h, sizeof h, "### %d %s", (v + 1) % 10, tui_view_name(v));
		if (!strstr(shots, h) && !strstr(tl, h)) {
			print_message("neither docs/screens.md nor docs/timeline.md has '%s'\n", h);
			fail();
		}
	}
	free(shots);
	free(tl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_slowest_step),
	    cmocka_unit_test(test_ruler_labels_differ),
	    cmocka_unit_test(test_goto_and_search),
	    cmocka_unit_test(test_details_and_links),
	    cmocka_unit_test(test_lane_shape_and_follow),
	    cmocka_unit_test(test_step_list),
	    cmocka_unit_test(test_window_numbers),
	    cmocka_unit_test(test_tabs_and_sort_at_80),
	    cmocka_unit_test(test_names_apart_and_wide),
	    cmocka_unit_test(test_file_meter),
	    cmocka_unit_test(test_ended_session),
	    cmocka_unit_test(test_session_line_narrow),
	    cmocka_unit_test(test_mouse),
	    cmocka_unit_test(test_docs_keys),
	    cmocka_unit_test(test_worker_labels_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
