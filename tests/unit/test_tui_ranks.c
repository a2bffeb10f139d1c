/*
 * test_tui_ranks.c - the Ranks view, its wide figures and the rank filter
 * on a synthetic 4-rank trace with one rank slowed down, a trace of one
 * rank, and the Advice view.
 */
#include "tui_util.h"

/* ---- ranks ---- */

/*
 * Rank r (pid 1000 + 10r): 10 steps of step_us, a Dataloader of dl_us at
 * each step's start, an operator, a kernel and an NCCL kernel on a device
 * stream of the same pid, and a CPU(Process) sample per step.
 */
static void add_rank(struct pt_trace *t, int r, double step_us, double dl_us)
{
	int64_t pid = 1000 + r * 10;
	uint32_t host = tu_track(t, pid, pid + 1, -1);
	uint32_t dev = tu_track(t, pid, 7, 0);
	uint32_t cnt = tu_track(t, pid, 999, -1);
	for (int i = 0; i < 10; i++) {
		double s = 5e6 + r * 333 + i * step_us;
		char name[32];
		snprintf(name, sizeof name, "ProfilerStep#%d", i + 1);
		tu_ev(t, host, PT_KIND_PROFILE_STEP, name, s, step_us, 0);
		tu_ev(t, host, PT_KIND_DATALOADER, "DataLoader", s, dl_us, 0);
		tu_ev(t, host, PT_KIND_OPERATOR, "aten::mm", s + dl_us, 10, 0);
		tu_ev(t, dev, PT_KIND_KERNEL, "gemm", s + dl_us + 20, 40e3, 0);
		tu_ev(t, dev, PT_KIND_COMMUNICATION, "ncclAllReduce", s + dl_us + 40e3 + 20, 10e3, 0);
		struct pt_event ev = {0};
		ev.start_ns = US(s + 1);
		double v = 50.0 + r;
		memcpy(&ev.arg, &v, sizeof v);
		ev.name_id = pt_trace_intern(t, "CPU(Process)", 12);
		ev.track_id = cnt;
		ev.kind = PT_KIND_COUNTER;
		pt_trace_add(t, &ev);
	}
}

/* Four ranks; rank 2 takes 150 ms a step (60 ms of it loading data), the
 * others 100 ms (20 ms loading). Rank 3's host name carries an escape. */
static struct pt_trace *four_ranks(void)
{
	struct pt_trace *t = pt_trace_new(16u << 20);
	for (int r = 0; r < 4; r++) {
		add_rank(t, r, r == 2 ? 150e3 : 100e3, r == 2 ? 60e3 : 20e3);
		pt_trace_set_proc(t, 1000 + r * 10, r, r == 3 ? "node\x1b[2J1" : r < 2 ? "node0" : "node1");
	}
	return t;
}

/* The screen line that holds needle, or NULL. */
static const char *line_of(const char *s, const char *needle, char *buf, size_t len)
{
	const char *p = strstr(s, needle);
	if (!p)
		return NULL;
	while (p > s && p[-1] != '\n')
		p--;
	const char *e = strchr(p, '\n');
	size_t n = e ? (size_t)(e - p) : strlen(p);
	if (n >= len)
		n = len - 1;
	memcpy(buf, p, n);
	buf[n] = 0;
	return buf;
}

static void test_ranks_view(void **state)
{
	(void)state;
	struct pt_trace *t = four_ranks();
	struct tui_opts o;
	tui_opts_init(&o);
	struct tui_app a;
	tui_app_init(&a, t, &o);
	assert_int_equal(tui_nranks(&a), 4);
	struct tui_canvas c;
	tui_canvas_init(&c, 160, 40, 0);
	const char *s = render(&a, &c);
	assert_non_null(strstr(s, "8 Ranks"));
	assert_non_null(strstr(s, "[r] all 4 ranks"));
	assert_non_null(strstr(s, "40 steps")); /* all ranks merged */
	keys(&a, "8");
	s = render(&a, &c);
	if (getenv("PT_SHOW_SCREEN"))
		fputs(s, stderr);
	char l[400];
	assert_non_null(strstr(s, "slowest rank 2 (150.00 ms/step) | spread 1.50x max/median | "
				  "median 100.00 ms | 4 ranks"));
	assert_int_equal(count_rows(s, "\n  rank "), 4);
	assert_int_equal(count_rows(s, "\xe2\x97\x80 slowest"), 1); /* one row marked */
	assert_non_null(line_of(s, "  rank 2", l, sizeof l));
	assert_non_null(strstr(l, "\xe2\x97\x80 slowest")); /* ◀ */
	assert_non_null(strstr(l, "150.00"));
	assert_non_null(strstr(l, "40.0")); /* reader ratio */
	assert_non_null(strstr(l, "node1"));
	assert_non_null(line_of(s, "  rank 0", l, sizeof l));
	assert_null(strstr(l, "slowest"));
	assert_non_null(strstr(l, "100.00"));
	/* the slow row is bold in the warning colour */
	int y = 0;
	for (const char *p = s; p < strstr(s, "  rank 2"); p++)
		y += *p == '\n';
	assert_int_equal(tui_canvas_at(&c, 4, y)->color, TUI_C_WARN);
	assert_true(tui_canvas_at(&c, 4, y)->attr & TUI_A_BOLD);
	/* the host with an escape sequence is shown escaped */
	assert_non_null(line_of(s, "  rank 3", l, sizeof l));
	assert_null(strchr(l, 0x1b));
	/* sort: > up to "Avg ms" puts the slowest first */
	for (int i = 0; i < TUI_RCOL_AVG; i++)
		keys(&a, ">");
	s = render(&a, &c);
	assert_non_null(strstr(s, "Avg msv"));
	const char *r2 = strstr(s, "  rank 2"), *r0 = strstr(s, "  rank 0");
	assert_true(r2 && r0 && r2 < r0);
	keys(&a, "I");
	s = render(&a, &c);
	r2 = strstr(s, "  rank 2");
	r0 = strstr(s, "  rank 0");
	assert_true(r2 && r0 && r2 > r0);
	keys(&a, "I");
	/* Enter on the top row (rank 2) filters and opens its Summary */
	tui_app_key(&a, TUI_KEY_ENTER);
	assert_int_equal(a.view, TUI_V_SUMMARY);
	assert_int_equal(a.model.rank, 2);
	s = render(&a, &c);
	assert_non_null(strstr(s, "[r] rank 2 of 4"));
	assert_non_null(strstr(s, "batch_cost avg 150.00ms"));
	assert_non_null(strstr(s, "reader ratio 40.00%"));
	assert_non_null(strstr(s, "10 steps"));
	assert_non_null(strstr(s, "input-bound"));
	/* 80x24 keeps the straggler's figures and its marker; ASCII marker */
	tui_canvas_free(&c);
	tui_canvas_init(&c, 80, 24, 1);
	keys(&a, "8");
	s = render(&a, &c);
	if (getenv("PT_SHOW_SCREEN"))
		fputs(s, stderr);
	assert_non_null(line_of(s, "* rank 2", l, sizeof l)); /* '*': the rank shown elsewhere */
	assert_non_null(strstr(l, "< slowest"));
	assert_non_null(strstr(l, "150.00"));
	assert_non_null(line_of(s, "  Rank ", l, sizeof l));
	assert_non_null(strstr(l, "IPS"));
	assert_non_null(strstr(s, "[r] rank 2 of 4")); /* the filter stays in the header */
	assert_non_null(strstr(s, "median 100.00 ms")); /* the line fits 80 columns */
	tui_canvas_free(&c);
	tui_app_free(&a);
	pt_trace_free(t);
}

/* Wide figures keep the space before them: 14285.71 steps/s fills the old
 * 8-column IPS cell, which then ran into the step time before it; a figure
 * too wide even for its cell loses decimals instead. */
static void test_ranks_wide_figures(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(16u << 20);
	add_rank(t, 0, 70, 20);	    /* 1e6 / 70 = 14285.71 steps/s */
	add_rank(t, 1, 0.05, 0.01); /* 2e7 steps/s: "20000000" */
	pt_trace_set_proc(t, 1000, 0, "node0");
	pt_trace_set_proc(t, 1010, 1, "node0");
	struct tui_opts o;
	tui_opts_init(&o);
	struct tui_app a;
	tui_app_init(&a, t, &o);
	static const int size[2][2] = {{200, 50}, {80, 24}};
	for (int k = 0; k < 2; k++) {
		struct tui_canvas c;
		tui_canvas_init(&c, size[k][0], size[k][1], 0);
		keys(&a, "8");
		const char *s = render(&a, &c);
		if (getenv("PT_SHOW_SCREEN"))
			fputs(s, stderr);
		char l[512];
		assert_non_null(line_of(s, "  rank 0", l, sizeof l));
		assert_non_null(strstr(l, "0.07 ")); /* the step time, then a space */
		assert_non_null(strstr(l, " 14285.71 "));
		assert_non_null(line_of(s, "  rank 1", l, sizeof l));
		assert_non_null(strstr(l, " 20000000 "));
		tui_canvas_free(&c);
	}
	tui_app_free(&a);
	pt_trace_free(t);
}

static void test_rank_filter(void **state)
{
	(void)state;
	struct pt_trace *t = four_ranks();
	struct tui_opts o;
	tui_opts_init(&o);
	struct tui_app a;
	tui_app_init(&a, t, &o);
	struct tui_canvas c;
	tui_canvas_init(&c, 200, 50, 0);
	const char *s = render(&a, &c);
	/* all merged: 40 steps, batch_cost average 112.5 ms */
	assert_non_null(strstr(s, "40 steps"));
	assert_non_null(strstr(s, "batch_cost avg 112.50ms"));
	assert_int_equal(tui_key_lookup('r', TUI_V_SUMMARY)->act, TUI_ACT_RANK_NEXT);
	assert_int_equal(tui_key_lookup('R', TUI_V_TIMELINE)->act, TUI_ACT_RANK_ALL);
	keys(&a, "r");
	s = render(&a, &c);
	assert_non_null(strstr(s, "[r] rank 0 of 4"));
	assert_non_null(strstr(s, "10 steps"));
	assert_non_null(strstr(s, "batch_cost avg 100.00ms"));
	assert_non_null(strstr(s, "reader ratio 20.00%"));
	keys(&a, "rr");
	s = render(&a, &c);
	assert_non_null(strstr(s, "[r] rank 2 of 4"));
	assert_non_null(strstr(s, "batch_cost avg 150.00ms"));
	/* the same summary as pt_ranks' own for that rank */
	struct pt_ranks rk;
	assert_int_equal(pt_ranks_compute(t, NULL, &rk), 0);
	assert_int_equal(tui_view_sum(&a)->nsteps, rk.r[2].summary->nsteps);
	assert_int_equal(tui_view_sum(&a)->perf.batch.total_ns, rk.r[2].summary->perf.batch.total_ns);
	assert_int_equal(tui_view_sum(&a)->model[PT_MS_DATALOADER].cpu.total_ns,
			 rk.r[2].summary->model[PT_MS_DATALOADER].cpu.total_ns);
	pt_ranks_free(&rk);
	/* tables: one rank's operator calls (10), not all ranks' (40) */
	keys(&a, "2");
	s = render(&a, &c);
	char l[400];
	assert_non_null(line_of(s, "aten::mm", l, sizeof l));
	assert_non_null(strstr(l, " 10 "));
	/* the timeline keeps that rank's lanes only */
	keys(&a, "4");
	render(&a, &c);
	assert_int_equal(a.tl.nlanes, 3); /* main thread, counter thread, GPU stream */
	for (size_t i = 0; i < a.tl.nlanes; i++)
		assert_int_equal(t->tracks[a.tl.lanes[i].track].key.pid, 1020);
	keys(&a, "R");
	render(&a, &c);
	assert_int_equal(a.tl.nlanes, 12);
	assert_int_equal(a.model.rank, -1);
	/* Ctrl-R goes backwards, r past the last rank comes back to all */
	tui_app_key(&a, TUI_CTRL('r'));
	assert_int_equal(a.model.rank, 3);
	keys(&a, "r");
	assert_int_equal(a.model.rank, -1);
	keys(&a, "1");
	s = render(&a, &c);
	assert_non_null(strstr(s, "[r] all 4 ranks"));
	assert_non_null(strstr(s, "40 steps"));
	/* Tab reaches the Ranks view */
	keys(&a, "7");
	tui_app_key(&a, TUI_KEY_TAB);
	assert_int_equal(a.view, TUI_V_RANKS);
	tui_canvas_free(&c);
	tui_app_free(&a);
	pt_trace_free(t);
}

/* One process: no Ranks tab, Tab skips it, r says why, and the per-rank
 * pass is never run (pt_ranks_possible). */
static void test_one_rank(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(16u << 20);
	add_rank(t, 0, 100e3, 20e3);
	struct tui_opts o;
	tui_opts_init(&o);
	struct tui_app a;
	tui_app_init(&a, t, &o);
	assert_int_equal(a.model.ranks.n, 0);
	assert_int_equal(tui_nranks(&a), 0);
	struct tui_canvas c;
	tui_canvas_init(&c, 160, 40, 0);
	const char *s = render(&a, &c);
	assert_null(strstr(s, "Ranks"));
	assert_null(strstr(s, "[r]"));
	assert_null(strstr(s, "rRank"));
	keys(&a, "7");
	tui_app_key(&a, TUI_KEY_TAB);
	assert_int_equal(a.view, TUI_V_ADVICE); /* Ranks skipped */
	tui_app_key(&a, TUI_KEY_TAB);
	assert_int_equal(a.view, TUI_V_SUMMARY);
	keys(&a, "r");
	s = render(&a, &c);
	assert_non_null(strstr(s, "one rank in this trace"));
	assert_int_equal(a.model.rank, -1);
	keys(&a, "8");
	s = render(&a, &c);
	assert_non_null(strstr(s, "needs two or more processes"));
	assert_int_equal(a.model.ranks.n, 0);
	tui_canvas_free(&c);
	tui_app_free(&a);
	pt_trace_free(t);
}

/* The advisor in the TUI (view_advice.c): a loader-bound trace shows
 * "1 advice [9]" on the session line and 9 opens the finding; four ranks,
 * one twice as slow, add the straggler; filtering to a rank re-advises over
 * that rank alone. */
static void test_advice_view(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(16u << 20);
	add_rank(t, 0, 100e3, 50e3);
	struct tui_opts o;
	tui_opts_init(&o);
	struct tui_app a;
	tui_app_init(&a, t, &o);
	struct tui_canvas c;
	tui_canvas_init(&c, 160, 40, 0);
	const char *s = render(&a, &c);
	assert_non_null(strstr(s, "1 advice [9]"));
	keys(&a, "9");
	assert_int_equal(a.view, TUI_V_ADVICE);
	s = render(&a, &c);
	assert_non_null(strstr(s, "Advice: 1 finding over"));
	assert_non_null(strstr(s, "[critical] input-bound"));
	assert_non_null(strstr(s, "Evidence:   reader ratio 50.00%"));
	assert_non_null(strstr(s, "Suggestion: Prepare batches"));
	keys(&a, "jjjjG");
	keys(&a, "g");
	tui_canvas_free(&c);
	tui_app_free(&a);
	pt_trace_free(t);

	/* a healthy one: no hint, the view lists what was checked */
	t = pt_trace_new(16u << 20);
	add_rank(t, 0, 100e3, 1e3);
	tui_app_init(&a, t, &o);
	tui_canvas_init(&c, 160, 40, 0);
	s = render(&a, &c);
	assert_null(strstr(s, "advice ["));
	keys(&a, "9");
	s = render(&a, &c);
	assert_non_null(strstr(s, "Checked, nothing to advise"));
	tui_canvas_free(&c);
	tui_app_free(&a);
	pt_trace_free(t);

	/* four ranks, rank 2 at 200 ms steps: a straggler over all ranks */
	t = pt_trace_new(16u << 20);
	for (int r = 0; r < 4; r++)
		add_rank(t, r, r == 2 ? 200e3 : 100e3, 1e3);
	tui_app_init(&a, t, &o);
	tui_canvas_init(&c, 160, 40, 0);
	keys(&a, "8"); /* the Ranks view computes the per-rank figures */
	keys(&a, "9");
	s = render(&a, &c);
	assert_non_null(strstr(s, "(straggler)"));
	keys(&a, "r"); /* rank 0 alone: no straggler */
	s = render(&a, &c);
	assert_null(strstr(s, "(straggler)"));
	tui_canvas_free(&c);
	tui_app_free(&a);
	pt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ranks_view),
	    cmocka_unit_test(test_ranks_wide_figures),
	    cmocka_unit_test(test_rank_filter),
	    cmocka_unit_test(test_one_rank),
	    cmocka_unit_test(test_advice_view),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
