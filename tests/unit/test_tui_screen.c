/*
 * test_tui_screen.c - the TUI without a terminal: pure layout (40x12, 80x24,
 * 250x70 with 1 to 8 GPUs: panes inside the screen, not overlapping), the
 * key table (no key bound twice in one view, every action reachable, help
 * and bar driven by it), the operator-type rule, and every view rendered
 * into the in-memory canvas from a fixture: expected rows, search narrowing,
 * w then s restoring the zoom, a/d panning, and names with escape sequences
 * never putting a control character on the screen. The Ranks view is
 * test_tui_ranks.c's.
 */
#include "tui_util.h"

static int inside(struct tui_rect r, int w, int h)
{
	return r.x >= 0 && r.y >= 0 && r.x + r.w <= w && r.y + r.h <= h;
}

static void test_layout(void **state)
{
	(void)state;
	int sizes[][2] = {{40, 12}, {80, 24}, {250, 70}, {200, 50}, {120, 40}};
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		for (int gpus = 0; gpus <= 8; gpus++) {
			int w = sizes[s][0], h = sizes[s][1];
			struct tui_layout l;
			tui_layout_compute(w, h, 2 + gpus, &l);
			assert_false(l.too_small);
			assert_int_equal(l.nmeters, 2 + gpus); /* every meter placed */
			struct tui_rect all[TUI_MAX_METERS + 4];
			int n = 0;
			for (int i = 0; i < l.nmeters; i++)
				all[n++] = l.meters[i];
			all[n++] = l.session;
			all[n++] = l.tabs;
			all[n++] = l.body;
			all[n++] = l.help;
			for (int i = 0; i < n; i++) {
				assert_true(inside(all[i], w, h));
				for (int j = i + 1; j < n; j++)
					assert_false(tui_rect_overlap(all[i], all[j]));
			}
			assert_true(l.body.h >= h / 2 - 2); /* the header never eats the view */
			if (w >= 200 && gpus <= 2)
				assert_int_equal(l.form, TUI_METER_FULL);
		}
	}
	struct tui_layout l;
	tui_layout_compute(39, 24, 3, &l);
	assert_true(l.too_small);
	tui_layout_compute(80, 9, 3, &l);
	assert_true(l.too_small);
}

static void test_keys(void **state)
{
	(void)state;
	/* no key bound twice within one view */
	for (int v = 0; v < TUI_V__COUNT; v++) {
		for (size_t i = 0; i < tui_nbindings; i++) {
			const struct tui_binding *b = &tui_bindings[i];
			if (b->views && !(b->views & TUI_VM(v)))
				continue;
			for (int k = 0; k < TUI_BIND_KEYS && b->keys[k]; k++)
				assert_ptr_equal(tui_key_lookup(b->keys[k], v) == b ? b : tui_key_lookup(b->keys[k], v),
						 tui_key_lookup(b->keys[k], v));
		}
	}
	/* the keys */
	assert_int_equal(tui_key_lookup('q', TUI_V_SUMMARY)->act, TUI_ACT_QUIT);
	assert_int_equal(tui_key_lookup(TUI_KEY_F(10), TUI_V_TIMELINE)->act, TUI_ACT_QUIT);
	assert_int_equal(tui_key_lookup('?', TUI_V_KERNELS)->act, TUI_ACT_HELP);
	assert_int_equal(tui_key_lookup(TUI_KEY_F(1), TUI_V_KERNELS)->act, TUI_ACT_HELP);
	for (int v = 0; v < TUI_V__COUNT; v++) {
		const struct tui_binding *b = tui_key_lookup('0' + (v + 1) % 10, TUI_V_SUMMARY); /* 1..9, 0 */
		assert_int_equal(b->act, TUI_ACT_VIEW);
		assert_int_equal(b->arg, v);
	}
	assert_int_equal(tui_key_lookup('w', TUI_V_TIMELINE)->act, TUI_ACT_ZOOM_IN);
	assert_int_equal(tui_key_lookup('+', TUI_V_TIMELINE)->act, TUI_ACT_ZOOM_IN);
	assert_int_equal(tui_key_lookup('s', TUI_V_TIMELINE)->act, TUI_ACT_ZOOM_OUT);
	assert_int_equal(tui_key_lookup('-', TUI_V_TIMELINE)->act, TUI_ACT_ZOOM_OUT);
	assert_int_equal(tui_key_lookup('a', TUI_V_TIMELINE)->act, TUI_ACT_PAN_LEFT);
	assert_int_equal(tui_key_lookup(TUI_KEY_SLEFT, TUI_V_TIMELINE)->act, TUI_ACT_PAN_LEFT);
	assert_int_equal(tui_key_lookup('d', TUI_V_TIMELINE)->act, TUI_ACT_PAN_RIGHT);
	assert_int_equal(tui_key_lookup(TUI_KEY_LEFT, TUI_V_TIMELINE)->act, TUI_ACT_EV_PREV);
	assert_int_equal(tui_key_lookup('/', TUI_V_OPERATORS)->act, TUI_ACT_SEARCH);
	assert_int_equal(tui_key_lookup(TUI_KEY_F(6), TUI_V_OPERATORS)->act, TUI_ACT_SORT_NEXT);
	assert_int_equal(tui_key_lookup('t', TUI_V_OPERATORS)->act, TUI_ACT_GROUP);
	assert_int_equal(tui_key_lookup(TUI_KEY_TAB, TUI_V_USER)->act, TUI_ACT_NEXT_VIEW);
	assert_int_equal(tui_key_lookup(TUI_KEY_UP, TUI_V_OPERATORS)->act, TUI_ACT_UP);
	assert_int_equal(tui_key_lookup(TUI_KEY_UP, TUI_V_TIMELINE)->act, TUI_ACT_LANE_UP);
	assert_null(tui_key_lookup('w', TUI_V_OPERATORS));
	/* one meaning per key: a key bound in several views does the same
	 * there (moving up a table's rows or the Timeline's lanes is one) */
	for (size_t i = 0; i < tui_nbindings; i++)
		for (size_t j = i + 1; j < tui_nbindings; j++) {
			const struct tui_binding *x = &tui_bindings[i], *y = &tui_bindings[j];
			for (int k = 0; k < TUI_BIND_KEYS && x->keys[k]; k++)
				for (int l = 0; l < TUI_BIND_KEYS && y->keys[l]; l++) {
					if (x->keys[k] != y->keys[l])
						continue;
					int xa = x->act == TUI_ACT_LANE_UP ? TUI_ACT_UP
						 : x->act == TUI_ACT_LANE_DOWN ? TUI_ACT_DOWN : (int)x->act;
					int ya = y->act == TUI_ACT_LANE_UP ? TUI_ACT_UP
						 : y->act == TUI_ACT_LANE_DOWN ? TUI_ACT_DOWN : (int)y->act;
					if (xa != ya || x->arg != y->arg)
						fail_msg("key %d: '%s' and '%s'", x->keys[k], x->help, y->help);
				}
		}
	assert_int_equal(tui_key_lookup('0', TUI_V_TIMELINE)->act, TUI_ACT_VIEW);
	assert_int_equal(tui_key_lookup('F', TUI_V_TIMELINE)->act, TUI_ACT_FIT);
	assert_int_equal(tui_key_lookup('}', TUI_V_TIMELINE)->act, TUI_ACT_DEPTH_MORE);
	/* every action but NONE is reachable */
	for (int act = TUI_ACT_QUIT; act < TUI_ACT__COUNT; act++) {
		int found = 0;
		for (size_t i = 0; i < tui_nbindings; i++)
			found |= tui_bindings[i].act == (enum tui_action)act && tui_bindings[i].keys[0];
		assert_true(found);
	}
	char buf[16];
	tui_key_name(TUI_KEY_F(10), buf, sizeof buf);
	assert_string_equal(buf, "F10");
	tui_key_name(TUI_CTRL('l'), buf, sizeof buf);
	assert_string_equal(buf, "Ctrl-L");
}

static void test_op_type(void **state)
{
	(void)state;
	struct {
		const char *in, *out;
	} cases[] = {{"aten::mm", "aten"},	     {"autograd::engine::evaluate_function: X", "autograd"},
		     {"matmul dygraph", "matmul"}, {"linear_0", "linear"},
		     {"conv2d_12", "conv2d"},	     {"conv2d", "conv2d"},
		     {"ProfilerStep#3", "ProfilerStep"}, {"relu", "relu"}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t n = tui_op_type(cases[i].in, strlen(cases[i].in));
		assert_int_equal(n, strlen(cases[i].out));
		assert_memory_equal(cases[i].in, cases[i].out, n);
	}
}



static void test_views(void **state)
{
	(void)state;
	struct pt_trace *t = load(tu_path(tu_traces(),
					  "kineto_tb_plugin/samples__resnet50_num_workers_0__worker0."
					  "1623143089861.pt.trace.json.gz"));
	struct tui_opts o;
	tui_opts_init(&o);
	struct tui_app a;
	tui_app_init(&a, t, &o);
	struct tui_canvas c;
	tui_canvas_init(&c, 200, 50, 0);
	const char *s = render(&a, &c);
	assert_non_null(strstr(s, "Model Summary"));
	assert_non_null(strstr(s, "Dataloader"));
	assert_non_null(strstr(s, "input-bound"));
	assert_non_null(strstr(s, "reader ratio 39.6"));
	assert_non_null(strstr(s, "GPU0"));
	keys(&a, "2");
	s = render(&a, &c);
	assert_non_null(strstr(s, "aten::conv2d"));
	assert_non_null(strstr(s, "CPU Total"));
	int before = count_rows(s, "aten::");
	keys(&a, "/conv2d");
	s = render(&a, &c);
	assert_non_null(strstr(s, "Search: conv2d"));
	int after = count_rows(s, "aten::");
	assert_true(after > 0 && after < before);
	/* matched letters are highlighted */
	int hl = 0;
	for (int i = 0; i < c.w * c.h; i++)
		hl += c.cells[i].color == TUI_C_MATCH;
	assert_true(hl >= 6);
	tui_app_key(&a, TUI_KEY_ESC);
	s = render(&a, &c);
	assert_null(strstr(s, "Search:"));
	keys(&a, "t");
	s = render(&a, &c);
	assert_non_null(strstr(s, "Type"));
	keys(&a, "t");
	tui_app_key(&a, TUI_KEY_ENTER); /* expand the top operator */
	s = render(&a, &c);
	assert_non_null(strstr(s, "  - "));
	keys(&a, "3");
	s = render(&a, &c);
	assert_non_null(strstr(s, "GPU Total"));
	keys(&a, "5");
	s = render(&a, &c);
	assert_non_null(strstr(s, "Memcpy") ? strstr(s, "Memcpy") : strstr(s, "memcpy"));
	keys(&a, "6");
	s = render(&a, &c);
	assert_non_null(strstr(s, "Communication"));
	keys(&a, "7");
	render(&a, &c);
	/* timeline: w then s restores the range; a/d move it */
	keys(&a, "4");
	s = render(&a, &c);
	assert_non_null(strstr(s, "GPU 0 stream 7"));
	assert_non_null(strstr(s, "ProfilerStep"));
	uint64_t t0 = a.tl.t0_ns, t1 = a.tl.t1_ns;
	keys(&a, "w");
	assert_true(a.tl.t1_ns - a.tl.t0_ns < t1 - t0);
	keys(&a, "s");
	assert_true(a.tl.t0_ns + 1 >= t0 && a.tl.t0_ns <= t0 + 1);
	assert_true(a.tl.t1_ns + 1 >= t1 && a.tl.t1_ns <= t1 + 1);
	keys(&a, "ww");
	uint64_t z0 = a.tl.t0_ns;
	keys(&a, "d");
	assert_true(a.tl.t0_ns > z0);
	keys(&a, "aa");
	assert_true(a.tl.t0_ns < z0);
	keys(&a, "]");
	tui_app_key(&a, TUI_KEY_ENTER);
	s = render(&a, &c);
	assert_non_null(strstr(s, "Slice details"));
	keys(&a, "0");
	/* small screens */
	tui_canvas_resize(&c, 80, 24);
	for (int v = '1'; v <= '7'; v++) {
		tui_app_key(&a, v);
		s = render(&a, &c);
		assert_null(strstr(s, "too small"));
	}
	tui_canvas_resize(&c, 30, 8);
	s = render(&a, &c);
	assert_non_null(strstr(s, "terminal too small"));
	assert_non_null(strstr(s, "(need 40x10)"));
	/* window selector */
	tui_canvas_resize(&c, 120, 40);
	keys(&a, "1W");
	s = render(&a, &c);
	/* at least the last 10 steps, from a start that moves on every 5:
	 * the fixture has 6, all of them */
	const char *w = strstr(s, "[W] last ");
	assert_non_null(w);
	unsigned steps = 0;
	char unit[8] = "";
	assert_int_equal(sscanf(w, "[W] last %u %7s", &steps, unit), 2);
	assert_string_equal(unit, "steps");
	assert_int_equal(steps, 6);
	keys(&a, "W");
	s = render(&a, &c);
	/* at least the last 30 s: from a start that moves on every 15 s (the
	 * fixture is shorter: all of it, 1.2 s) */
	w = strstr(s, "[W] last ");
	assert_non_null(w);
	double secs = 0;
	assert_int_equal(sscanf(w, "[W] last %lf %7s", &secs, unit), 2);
	assert_string_equal(unit, "s");
	assert_true(secs > 1.0 && secs < 1.5);
	/* a narrow screen: a chosen window stays in the tab bar (the tabs
	 * fold to numbers for it) */
	tui_canvas_resize(&c, 66, 24);
	s = render(&a, &c);
	assert_non_null(strstr(s, "[W] last "));
	keys(&a, "W"); /* back to the whole session: the names come back */
	s = render(&a, &c);
	assert_non_null(strstr(s, "2 Ops"));
	tui_canvas_resize(&c, 120, 40);
	/* help lists the key table: the view's own keys and every view's */
	keys(&a, "4?");
	s = render(&a, &c);
	assert_non_null(strstr(s, "zoom in around the cursor"));
	assert_non_null(strstr(s, "the views: 1 Sum, 2 Ops"));
	/* long texts wrap at words, never cut (two columns at 120) */
	assert_non_null(strstr(s, "proftop-capture-*.json"));
	assert_non_null(strstr(s, "leave it running)"));
	assert_true(tui_nbindings <= TUI_BIND_MAX);
	assert_int_equal(tui_app_key(&a, 'x'), 0); /* closes help */
	assert_int_equal(tui_app_key(&a, 'q'), 1);
	tui_canvas_free(&c);
	tui_app_free(&a);
	pt_trace_free(t);
}

/*
 * q in run while the job runs: a question on the bottom line, never a
 * quit on one key. q/y stop the job, d leaves it running, any other key
 * stays; a job that ended, --kill-on-quit or an attach quit at once.
 */
static void test_quit_asks(void **state)
{
	(void)state;
	struct pt_trace *t = load(tu_path(tu_traces(),
					  "kineto_tb_plugin/samples__resnet50_num_workers_0__worker0."
					  "1623143089861.pt.trace.json.gz"));
	struct tui_opts o;
	tui_opts_init(&o);
	o.ask_quit = 1;
	struct tui_app a;
	tui_app_init(&a, t, &o);
	a.st.live = 1;
	struct tui_canvas c;
	tui_canvas_init(&c, 120, 30, 0);
	assert_int_equal(tui_app_key(&a, 'q'), 0);
	const char *s = render(&a, &c);
	assert_non_null(strstr(s, "Stop the job? q/y: stop it (SIGINT) | d: leave it running | other key: stay"));
	assert_int_equal(tui_app_key(&a, '2'), 0); /* any other key: stay, in the view it was */
	assert_int_equal(a.quit, 0);
	s = render(&a, &c);
	assert_null(strstr(s, "Stop the job?"));
	assert_non_null(strstr(s, "the job runs on"));
	assert_int_equal(tui_app_key(&a, 'q'), 0);
	assert_int_equal(tui_app_key(&a, 'q'), 1);
	assert_int_equal(a.quit_how, TUI_QUIT_STOP);
	a.quit = a.quit_how = 0;
	assert_int_equal(tui_app_key(&a, TUI_KEY_F(10)), 0);
	assert_int_equal(tui_app_key(&a, 'y'), 1);
	assert_int_equal(a.quit_how, TUI_QUIT_STOP);
	a.quit = a.quit_how = 0;
	assert_int_equal(tui_app_key(&a, 'q'), 0);
	assert_int_equal(tui_app_key(&a, 'd'), 1);
	assert_int_equal(a.quit_how, TUI_QUIT_DETACH);
	a.quit = a.quit_how = 0;
	a.st.live = 0; /* the job ended: nothing to stop */
	assert_int_equal(tui_app_key(&a, 'q'), 1);
	a.quit = a.quit_how = 0;
	a.st.live = 1;
	a.o.ask_quit = 0; /* --kill-on-quit, or an attach */
	assert_int_equal(tui_app_key(&a, 'q'), 1);
	assert_int_equal(a.quit_how, TUI_QUIT_STOP);
	tui_canvas_free(&c);
	tui_app_free(&a);
	pt_trace_free(t);
}

/*
 * The windows of a session that grows for 100 s, refreshed every second:
 * at every refresh the screen's summary is pt_summarize's over the window
 * (at least the last 30 s from a multiple of 15 s, or at least the last 10
 * steps from a multiple of 5; the job's step numbers), though it is kept
 * between refreshes and moves on.
 */
static void window_live_check(int by_steps)
{
	struct pt_trace *t = pt_trace_new(64u << 20);
	uint32_t th = tu_track(t, 1, 1, -1);
	struct tui_opts o;
	tui_opts_init(&o);
	struct tui_app a;
	tui_app_init(&a, t, &o);
	const uint64_t s = 1000000ull, base = 1000 * s; /* tu_ev's microseconds */
	tu_ev(t, th, PT_KIND_PROFILE_STEP, "step", base, s / 4, 0);
	tui_model_build(&a, 0);
	keys(&a, by_steps ? "W" : "WW"); /* whole session -> last 10 steps -> last 30 s */
	uint64_t nsteps = 1;
	for (int sec = 0; sec < 100; sec++) {
		for (int k = 0; k < 4; k++) { /* four unnumbered steps a second, an op in each */
			uint64_t st = base + (uint64_t)sec * s + (uint64_t)k * (s / 4);
			if (sec || k) {
				tu_ev(t, th, PT_KIND_PROFILE_STEP, "step", st, s / 4 - 1000, 0);
				nsteps++;
			}
			tu_ev(t, th, PT_KIND_OPERATOR, k % 2 ? "aten::mm" : "aten::add", st + 1000,
			      s / 8 + (uint64_t)sec * 1000, 0);
		}
		tui_model_build(&a, 0);
		const struct pt_summary *got = a.model.sum;
		struct pt_agg_opts ao;
		pt_agg_opts_init(&ao);
		if (by_steps) { /* step i starts at base + i s/4 */
			uint64_t first = nsteps > 10 ? (nsteps - 10) / 5 * 5 : 0;
			ao.t0_ns = US(base + first * (s / 4));
		} else {
			uint64_t last = pt_store_last_ns(t->store), half = 15 * US(s);
			ao.t0_ns = last > 30 * US(s) ? (last - 30 * US(s)) / half * half : 0;
		}
		ao.step_ordinal0 = (int64_t)tu_steps_before(t, ao.t0_ns);
		struct pt_summary *want = pt_summarize(t, &ao);
		assert_non_null(got);
		assert_int_equal(got->events, want->events);
		assert_int_equal(got->nsteps, want->nsteps);
		for (size_t i = 0; i < want->nsteps; i++) {
			assert_int_equal(got->steps[i].number, want->steps[i].number);
			assert_int_equal(got->steps[i].dur_ns, want->steps[i].dur_ns);
		}
		assert_int_equal(got->operators.n, want->operators.n);
		for (size_t i = 0; i < want->operators.n; i++) {
			assert_int_equal(got->operators.rows[i].name_id, want->operators.rows[i].name_id);
			assert_int_equal(got->operators.rows[i].cpu.n, want->operators.rows[i].cpu.n);
			assert_int_equal(got->operators.rows[i].cpu.total_ns,
					 want->operators.rows[i].cpu.total_ns);
		}
		pt_summary_free(want);
	}
	tui_app_free(&a);
	pt_trace_free(t);
}

static void test_window_secs_live(void **state)
{
	(void)state;
	window_live_check(0);
}

static void test_window_steps_live(void **state)
{
	(void)state;
	window_live_check(1);
}

static void test_hostile_names(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(16u << 20);
	uint32_t th = tu_track(t, 1, 1, -1);
	tu_ev(t, th, PT_KIND_PROFILE_STEP, "ProfilerStep#1", 0, 1000, 0);
	tu_ev(t, th, PT_KIND_OPERATOR, "evil\x1b]0;pwned\x07\x1b[2J\x9b" "31m", 10, 500, 0);
	tu_ev(t, th, PT_KIND_OPERATOR, "bidi\xe2\x80\xaeoverride", 600, 100, 0);
	tu_ev(t, th, PT_KIND_OPERATOR, "wide \xe4\xb8\xad\xe6\x96\x87 name", 700, 100, 0);
	struct tui_opts o;
	tui_opts_init(&o);
	struct tui_app a;
	tui_app_init(&a, t, &o);
	struct tui_canvas c;
	tui_canvas_init(&c, 120, 30, 0);
	for (int v = '1'; v <= '7'; v++) {
		tui_app_key(&a, v);
		const char *s = render(&a, &c);
		assert_null(strchr(s, 0x1b));
		for (int i = 0; i < c.w * c.h; i++) {
			uint32_t ch = c.cells[i].ch;
			if (ch == TUI_CH_CONT) /* the right half of a wide character */
				continue;
			assert_true(ch >= 0x20 && !(ch >= 0x7f && ch < 0xa0) && ch != 0x202e);
		}
	}
	tui_app_key(&a, '2');
	const char *s = render(&a, &c);
	assert_non_null(strstr(s, "evil\\e]0;pw")); /* escaped (its middle may be cut) */
	tui_canvas_free(&c);
	tui_app_free(&a);
	pt_trace_free(t);
}

/* A note a source adds (the probe: GPU tracing stopped, torch.profiler took
 * CUPTI...) is announced once on the message line, escaped. */
static void test_notes_announced(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(16u << 20);
	uint32_t th = tu_track(t, 1, 1, -1);
	tu_ev(t, th, PT_KIND_PROFILE_STEP, "ProfilerStep#1", 0, 1000, 0);
	tu_ev(t, th, PT_KIND_INSTANT, "proftop: GPU tracing off: a\x1b[2J reason", 10, 0, 0);
	struct tui_opts o;
	tui_opts_init(&o);
	struct tui_app a;
	tui_app_init(&a, t, &o);
	struct tui_canvas c;
	tui_canvas_init(&c, 120, 30, 0);
	const char *s = render(&a, &c);
	assert_non_null(strstr(s, "note: GPU tracing off: a\\e[2J reason"));
	tu_ev(t, th, PT_KIND_INSTANT, "proftop: the other profiler's GPU collection ended", 20, 0, 0);
	s = render(&a, &c);
	assert_non_null(strstr(s, "note: the other profiler's GPU collection ended"));
	tui_canvas_free(&c);
	tui_app_free(&a);
	pt_trace_free(t);
}

/*
 * The edges of promise 5: a NUL inside a name (JSON \u0000) is shown
 * escaped with what follows it, a 10,000-character name is cut with an
 * ellipsis inside its column (its start and its end kept), invisible format characters (zero-width, line
 * separator) are escaped, and pt_escape_term stays within max_cols even
 * when the output buffer fills up before the column limit.
 */
static void test_hostile_edges(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(16u << 20);
	uint32_t th = tu_track(t, 1, 1, -1);
	tu_ev(t, th, PT_KIND_PROFILE_STEP, "ProfilerStep#1", 0, 1000, 0);
	struct pt_event ev = {0};
	ev.start_ns = US(10);
	ev.dur_ns = US(50);
	ev.name_id = pt_trace_intern(t, "nul\0after\x1b[2J", 13);
	ev.track_id = th;
	ev.kind = PT_KIND_OPERATOR;
	pt_trace_add(t, &ev);
	static char longname[10001];
	memset(longname, 'x', 10000);
	memcpy(longname, "long", 4);
	tu_ev(t, th, PT_KIND_OPERATOR, longname, 100, 50, 0);
	tu_ev(t, th, PT_KIND_OPERATOR, "zw\xe2\x80\x8bls\xe2\x80\xa8" "end", 200, 50, 0);
	struct tui_opts o;
	tui_opts_init(&o);
	struct tui_app a;
	tui_app_init(&a, t, &o);
	struct tui_canvas c;
	tui_canvas_init(&c, 120, 30, 0);
	tui_app_key(&a, '2');
	const char *s = render(&a, &c);
	assert_non_null(strstr(s, "nul\\x00after\\e[2J"));
	assert_non_null(strstr(s, "zw\\u{200b}ls\\u{2028}end"));
	const char *l = strstr(s, "longxxx");
	assert_non_null(l);
	const char *eol = strchr(l, '\n');
	const char *dots = strstr(l, "\xe2\x80\xa6");
	assert_true(dots && dots < eol);
	assert_true(dots[3] == 'x'); /* the end of the name after the ellipsis */
	assert_true(eol - l < c.w + 2); /* one column, three bytes */
	tui_canvas_free(&c);
	tui_app_free(&a);
	pt_trace_free(t);

	/* U+10000 is one column but four bytes: the buffer fills first */
	static char wide4[300 * 4];
	for (int i = 0; i < 300; i++)
		memcpy(wide4 + i * 4, "\xf0\x90\x80\x80", 4);
	char out[1024];
	size_t cols = pt_escape_term(out, sizeof out, wide4, sizeof wide4, 300, 0);
	assert_true(cols <= 300);
	assert_true(strlen(out) < sizeof out);
	assert_string_equal(out + strlen(out) - 3, "...");
	assert_true(pt_utf8_valid(out, strlen(out)));
	/* no column limit: a full buffer still ends with "..." */
	pt_escape_term(out, 16, longname, 10000, 0, 0);
	assert_string_equal(out, "longxxxxxxxx...");
	/* a limit of two columns gives two dots */
	cols = pt_escape_term(out, sizeof out, "\x1b\x1b\x1b", 3, 2, 0);
	assert_int_equal(cols, 2);
	assert_string_equal(out, "..");
}

/* A GPU with both this process's kernels and NVML's device-wide figure:
 * the bar is the kernel busy time, NVML's number stands beside it. */
static void test_gpu_meter_both_utilizations(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(16u << 20);
	uint32_t th = tu_track(t, 1, 1, -1), g = tu_track(t, 0, 7, 0);
	struct pt_track_key k = {1, 0, 0, pt_trace_intern(t, "NVML GPU 0", 10)};
	uint32_t nv = pt_trace_track(t, &k);
	pt_trace_track_device(t, nv, 0, -1);
	tu_ev(t, th, PT_KIND_PROFILE_STEP, "ProfilerStep#1", 0, 2000000, 0);
	/* kernels busy 25% of every second over two seconds */
	for (int i = 0; i < 8; i++)
		tu_ev(t, g, PT_KIND_KERNEL, "k", i * 250000.0, 62500, 0);
	for (int s = 0; s < 2; s++) {
		double v = 87;
		struct pt_event ev = {0};
		ev.start_ns = (uint64_t)s * 1000000000ull + 500000000ull;
		ev.name_id = pt_trace_intern(t, "GPU Utilization %", 17);
		ev.track_id = nv;
		ev.kind = PT_KIND_COUNTER;
		memcpy(&ev.arg, &v, sizeof v);
		pt_trace_add(t, &ev);
	}
	struct tui_opts o;
	tui_opts_init(&o);
	struct tui_app a;
	tui_app_init(&a, t, &o);
	struct tui_canvas c;
	tui_canvas_init(&c, 160, 40, 0);
	const char *s = render(&a, &c);
	const char *line = strstr(s, "GPU0");
	assert_non_null(line);
	assert_non_null(strstr(line, "dev 87%"));
	assert_non_null(strstr(line, "25.0%"));
	tui_canvas_free(&c);
	tui_app_free(&a);
	pt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layout),
	    cmocka_unit_test(test_keys),
	    cmocka_unit_test(test_op_type),
	    cmocka_unit_test(test_views),
	    cmocka_unit_test(test_quit_asks),
	    cmocka_unit_test(test_window_secs_live),
	    cmocka_unit_test(test_window_steps_live),
	    cmocka_unit_test(test_hostile_names),
	    cmocka_unit_test(test_hostile_edges),
	    cmocka_unit_test(test_notes_announced),
	    cmocka_unit_test(test_gpu_meter_both_utilizations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
