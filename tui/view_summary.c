/*
 * view_summary.c - the Summary view (a verdict line saying what bounds the
 * job, Model Summary with CPU and GPU per phase, one stacked bar per recent
 * step, Perf Summary, Overview) and the Distributed view (communication,
 * computation, overlap, and the per-device table). Reads the model's
 * pt_summary only.
 *
 * Verdict rule (shown first, so a glance answers "what bounds this job"):
 * reader ratio >= 20 % -> input-bound; else exposed communication (comm not
 * overlapped by computation) >= 20 % of step time -> communication-bound;
 * else with a GPU: busy >= 60 % -> compute-bound (GPU), below -> host-bound
 * (the GPU waits for the CPU: launch overhead, Python, syncs); without a
 * GPU -> CPU compute.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "proftop/report.h"
#include "model/util.h"

static const enum tui_color phase_color[PT_MS__COUNT] = {
	TUI_C_K_STEP, TUI_C_K_DATA, TUI_C_K_FWD, TUI_C_K_BWD, TUI_C_K_OPT, TUI_C_DIM};
static const char phase_glyph[PT_MS__COUNT] = {'S', 'D', 'F', 'B', 'O', '.'};

static void fmt_opt_ns(char *b, size_t n, const struct pt_stat *s, int which)
{
	if (!s->n) {
		snprintf(b, n, "-");
		return;
	}
	uint64_t v = which == 0 ? s->total_ns : which == 1 ? s->total_ns / s->n
					    : which == 2 ? s->max_ns
							 : s->min_ns;
	tui_fmt_ns(b, n, v);
}

static double gpu_busy_pct(const struct pt_summary *s)
{
	uint64_t busy = 0, span = 0;
	for (size_t i = 0; i < s->ndevices; i++) {
		busy += s->devices[i].busy_ns;
		span += s->devices[i].span_ns;
	}
	return span ? 100.0 * (double)busy / (double)span : 0;
}

static void verdict(const struct pt_summary *s, char *buf, size_t len, int *color)
{
	uint64_t step = s->dist.step_ns;
	uint64_t exposed = s->dist.comm_ns > s->dist.overlap_ns ? s->dist.comm_ns - s->dist.overlap_ns : 0;
	*color = TUI_C_WARN;
	if (s->perf.steps && s->perf.reader_ratio_pct >= 20.0)
		snprintf(buf, len, "input-bound: the dataloader takes %.1f%% of each step",
			 s->perf.reader_ratio_pct);
	else if (step && exposed * 5 >= step)
		snprintf(buf, len, "communication-bound: %.1f%% of step time is communication not "
				   "overlapped by compute",
			 100.0 * (double)exposed / (double)step);
	else if (s->has_gpu && gpu_busy_pct(s) >= 60.0)
		snprintf(buf, len, "compute-bound: GPUs busy %.1f%%", gpu_busy_pct(s));
	else if (s->has_gpu)
		snprintf(buf, len, "host-bound: GPUs busy only %.1f%% (launch overhead, Python, syncs)",
			 gpu_busy_pct(s));
	else if (s->events) {
		snprintf(buf, len, "CPU only: no GPU activity in this window");
		*color = TUI_C_DIM;
	} else {
		snprintf(buf, len, "no events yet");
		*color = TUI_C_DIM;
	}
}

static int section(struct tui_canvas *c, int x, int y, int w, const char *title)
{
	tui_fill(c, (struct tui_rect){x, y, w, 1}, ' ', tui_st(TUI_C_HEADER, TUI_A_REVERSE));
	tui_put_str(c, x, y, x + w, title, tui_st(TUI_C_HEADER, TUI_A_REVERSE | TUI_A_BOLD));
	return y + 1;
}

void tui_steps_free(struct tui_steps *sv)
{
	free(sv->order);
	sv->order = NULL;
	sv->norder = sv->cap = 0;
}

static const struct pt_step *g_steps;
static int g_invert;
static int dur_cmp(const void *pa, const void *pb)
{
	size_t x = *(const size_t *)pa, y = *(const size_t *)pb;
	uint64_t dx = g_steps[x].dur_ns, dy = g_steps[y].dur_ns;
	int c = dx > dy ? -1 : dx < dy ? 1 : (x < y ? -1 : x > y);
	return g_invert ? -c : c;
}

/* The shown order of the summary's steps, made again when the summary or
 * the sort changed; the selection stays on its step (or on the newest). */
static void steps_order(struct tui_app *a, const struct pt_summary *s)
{
	struct tui_steps *sv = &a->steps;
	if (sv->order && sv->built_gen == a->model.gen && sv->built_by_dur == sv->by_dur &&
	    sv->built_invert == sv->invert && sv->norder == s->nsteps)
		return;
	/* the selected step, to find it again */
	uint64_t sel_start = 0;
	uint32_t sel_track = 0;
	int had = sv->order && sv->sel >= 0 && (size_t)sv->sel < sv->norder && g_steps;
	if (had && sv->built_gen == a->model.gen) {
		sel_start = s->steps[sv->order[sv->sel]].start_ns;
		sel_track = s->steps[sv->order[sv->sel]].track;
	} else if (had) {
		had = 0;
	}
	if (s->nsteps > sv->cap) {
		sv->cap = s->nsteps;
		sv->order = pt_xrealloc(sv->order, sv->cap * sizeof *sv->order);
	}
	sv->norder = s->nsteps;
	for (size_t i = 0; i < s->nsteps; i++)
		sv->order[i] = sv->invert && !sv->by_dur ? s->nsteps - 1 - i : i;
	g_steps = s->steps;
	g_invert = sv->invert;
	if (sv->by_dur && s->nsteps > 1)
		qsort(sv->order, s->nsteps, sizeof *sv->order, dur_cmp);
	if (!sv->order)
		sv->order = pt_xmalloc(sizeof *sv->order);
	if (sv->at_end) {
		sv->sel = sv->norder ? (int)sv->norder - 1 : 0;
	} else if (had) {
		for (size_t i = 0; i < sv->norder; i++)
			if (s->steps[sv->order[i]].start_ns == sel_start &&
			    s->steps[sv->order[i]].track == sel_track)
				sv->sel = (int)i;
	}
	if (sv->sel >= (int)sv->norder)
		sv->sel = sv->norder ? (int)sv->norder - 1 : 0;
	/* one scale for the list, so bars keep their length as it scrolls: the
	 * longest step, but at most 4x the median so that usual steps stay
	 * readable beside a stall (which then ends with '>') */
	uint64_t *d = pt_xmalloc((s->nsteps ? s->nsteps : 1) * sizeof *d), mx = 1;
	for (size_t i = 0; i < s->nsteps; i++) {
		d[i] = s->steps[i].dur_ns;
		if (d[i] > mx)
			mx = d[i];
	}
	uint64_t med = s->nsteps ? pt_u64_kth(d, s->nsteps, s->nsteps / 2) : 0;
	sv->scale_ns = med && mx > 4 * med ? 4 * med : mx;
	free(d);
	sv->built_gen = a->model.gen;
	sv->built_by_dur = sv->by_dur;
	sv->built_invert = sv->invert;
}

/* The step list: "#number duration bar" per step, the bar's phases as
 * glyphs; the selected step highlighted. Returns the next row. */
static int draw_steps(struct tui_app *a, struct tui_canvas *c, int x, int y, int w, int room)
{
	const struct pt_summary *s = tui_view_sum(a);
	struct tui_steps *sv = &a->steps;
	steps_order(a, s);
	char title[160];
	snprintf(title, sizeof title, "Steps, %s (%zu)   D dataloader F forward B backward O optimizer . others%s",
		 sv->by_dur ? (sv->invert ? "fastest first" : "slowest first")
			    : (sv->invert ? "newest first" : "in order"),
		 s->nsteps, s->perf.compile_steps ? " C compiling" : "");
	y = section(c, x, y, w, title);
	int rows = room - 1;
	if (rows <= 0)
		return y;
	if (sv->sel < sv->top)
		sv->top = sv->sel;
	if (sv->sel >= sv->top + rows)
		sv->top = sv->sel - rows + 1;
	if (sv->top > (int)sv->norder - rows)
		sv->top = (int)sv->norder - rows;
	if (sv->top < 0)
		sv->top = 0;
	sv->y0 = y;
	sv->rows = rows;
	uint64_t maxdur = sv->scale_ns ? sv->scale_ns : 1;
	int barw = w - 22;
	for (int k = 0; k < rows && (size_t)(sv->top + k) < sv->norder; k++) {
		const struct pt_step *st = &s->steps[sv->order[sv->top + k]];
		int sel = sv->top + k == sv->sel;
		char dur[24];
		tui_fmt_ns(dur, sizeof dur, st->dur_ns);
		struct tui_style ls = sel ? tui_st(TUI_C_SELECT, TUI_A_REVERSE) : tui_st(TUI_C_DIM, 0);
		tui_printf(c, x, y, x + w, ls, "#%-8lld %10s ", (long long)st->number, dur);
		if (st->compile_ns) /* torch.compile compiled in this step: before its time */
			tui_put_ch(c, x + 9, y, 'C', tui_st(TUI_C_WARN, TUI_A_BOLD));
		int bx = x + 21;
		int over = st->dur_ns > maxdur;
		int len = barw > 4 ? (int)((double)barw * (double)(over ? maxdur : st->dur_ns) / (double)maxdur) : 0;
		int filled = 0;
		for (int ph = PT_MS_DATALOADER; ph < PT_MS__COUNT; ph++) {
			uint64_t pn = st->cpu_ns[ph];
			int k2 = st->dur_ns ? (int)((double)len * (double)pn / (double)st->dur_ns + 0.5) : 0;
			if (filled + k2 > len)
				k2 = len - filled;
			for (int j = 0; j < k2; j++)
				tui_put_ch(c, bx + filled + j, y, (uint32_t)phase_glyph[ph],
					   tui_st(phase_color[ph], TUI_A_REVERSE));
			filled += k2;
		}
		if (over && barw > 4)
			tui_put_ch(c, bx + len, y, '>', tui_st(TUI_C_WARN, TUI_A_BOLD));
		y++;
	}
	return sv->y0 + rows;
}

static void open_step(struct tui_app *a)
{
	const struct pt_summary *s = tui_view_sum(a);
	struct tui_steps *sv = &a->steps;
	if (!sv->order || sv->sel < 0 || (size_t)sv->sel >= sv->norder || sv->norder != s->nsteps)
		return;
	const struct pt_step *st = &s->steps[sv->order[sv->sel]];
	a->view = TUI_V_TIMELINE;
	a->searching = 0;
	tui_tl_open_step(a, st->track, st->start_ns);
}

int tui_summary_action(struct tui_app *a, const struct tui_binding *b)
{
	const struct pt_summary *s = tui_view_sum(a);
	struct tui_steps *sv = &a->steps;
	steps_order(a, s);
	int page = sv->rows > 1 ? sv->rows - 1 : 1;
	switch (b->act) {
	case TUI_ACT_UP:
		sv->sel--;
		break;
	case TUI_ACT_DOWN:
		sv->sel++;
		break;
	case TUI_ACT_PGUP:
		sv->sel -= page;
		break;
	case TUI_ACT_PGDN:
		sv->sel += page;
		break;
	case TUI_ACT_HOME:
		sv->sel = 0;
		break;
	case TUI_ACT_END:
		sv->sel = (int)sv->norder - 1;
		break;
	case TUI_ACT_SORT_NEXT:
	case TUI_ACT_SORT_PREV:
	case TUI_ACT_SORT_INVERT:
		if (b->act == TUI_ACT_SORT_INVERT)
			sv->invert = !sv->invert;
		else
			sv->by_dur = !sv->by_dur;
		steps_order(a, s);
		/* a new order starts at its top; in order, at the newest */
		sv->sel = !sv->by_dur && !sv->invert ? (int)sv->norder - 1 : 0;
		sv->top = 0;
		if (b->act != TUI_ACT_SORT_INVERT)
			tui_app_message(a, "steps %s", sv->by_dur ? "slowest first (> again: in order)" : "in order");
		break;
	case TUI_ACT_ENTER:
		open_step(a);
		return 1;
	default:
		return 0;
	}
	if (sv->sel >= (int)sv->norder)
		sv->sel = (int)sv->norder - 1;
	if (sv->sel < 0)
		sv->sel = 0;
	/* at the newest step in time order: follow the new ones as they come */
	sv->at_end = !sv->by_dur && !sv->invert && sv->norder && sv->sel == (int)sv->norder - 1;
	steps_order(a, s);
	return 1;
}

void tui_summary_mouse(struct tui_app *a)
{
	struct tui_steps *sv = &a->steps;
	const struct tui_mouse *m = &a->mouse;
	static const struct tui_binding up = {TUI_ACT_UP, 0, 0, {0}, "", NULL};
	static const struct tui_binding down = {TUI_ACT_DOWN, 0, 0, {0}, "", NULL};
	static const struct tui_binding enter = {TUI_ACT_ENTER, 0, 0, {0}, "", NULL};
	if (m->button == 4 || m->button == 5) {
		for (int i = 0; i < 3; i++)
			tui_summary_action(a, m->button == 4 ? &up : &down);
		return;
	}
	int k = m->y - sv->y0;
	if (m->button != 1 || k < 0 || k >= sv->rows || (size_t)(sv->top + k) >= sv->norder)
		return;
	if (sv->top + k == sv->sel) {
		tui_summary_action(a, &enter);
		return;
	}
	sv->sel = sv->top + k;
	sv->at_end = !sv->by_dur && !sv->invert && sv->sel == (int)sv->norder - 1;
}

void tui_summary_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r)
{
	const struct pt_summary *s = tui_view_sum(a);
	int y = r.y, end = r.y + r.h, x = r.x, w = r.w;
	char v[8][24], line[512];
	int vc;
	verdict(s, line, sizeof line, &vc);
	int nx = tui_put_str(c, x, y, x + w, "Verdict: ", tui_st(TUI_C_DEFAULT, TUI_A_BOLD));
	tui_put_str(c, nx, y++, x + w, line, tui_st(vc, TUI_A_BOLD));
	/* run: the job failed on its own: the end of its output, before
	 * anything else (its tables are often empty then) */
	const char *fail = a->st.failure;
	if (fail && y < end) {
		const char *nl = strchr(fail, '\n');
		size_t l = nl ? (size_t)(nl - fail) : strlen(fail);
		nx = tui_put_str(c, x, y, x + w, "The job failed; the end of its output (",
				 tui_st(TUI_C_WARN, TUI_A_BOLD));
		nx = tui_put_name(c, nx, y, x + w - nx, fail, l, tui_st(TUI_C_WARN, 0));
		tui_put_str(c, nx, y++, x + w, "):", tui_st(TUI_C_WARN, TUI_A_BOLD));
		if (nl && !nl[1] && y < end)
			tui_put_str(c, x + 2, y++, x + w, "(nothing)", tui_st(TUI_C_DIM, 0));
		for (const char *p = nl ? nl + 1 : NULL; p && *p && y < end;) {
			const char *e = strchr(p, '\n');
			size_t pl = e ? (size_t)(e - p) : strlen(p);
			nx = tui_put_str(c, x, y, x + w, "| ", tui_st(TUI_C_DIM, 0));
			tui_put_name(c, nx, y++, x + w - nx, p, pl, tui_st(TUI_C_DEFAULT, 0));
			p = e ? e + 1 : NULL;
		}
	}
	/* what the sources said of themselves (how the Python helper counts
	 * steps, or why there are none), escaped like every name */
	for (uint32_t i = 0; a->t && i < a->t->nnotes && i < 3 && y < end; i++) {
		const char *n = pt_trace_note_text(a->t, i);
		nx = tui_put_str(c, x, y, x + w, "Note: ", tui_st(TUI_C_DIM, TUI_A_BOLD));
		tui_put_name(c, nx, y++, x + w - nx, n, strlen(n), tui_st(TUI_C_DIM, 0));
	}
	/* torch.compile: which steps compiled, left out of the figures */
	if (y < end && pt_compile_line(s, line, sizeof line, 0)) {
		if ((int)strlen(line) > w)
			pt_compile_line(s, line, sizeof line, 1);
		tui_put_str(c, x, y++, x + w, line, tui_st(TUI_C_WARN, 0));
	}
	if (y >= end)
		return;
	/* Model Summary */
	y = section(c, x, y, w, "Model Summary");
	int wide = w >= 110;
	if (y < end) {
		if (wide)
			snprintf(line, sizeof line, "%-14s %6s %10s %10s %10s %10s %7s %10s %10s %7s",
				 "", "Calls", "CPU Total", "CPU Avg", "CPU Max", "CPU Min", "CPU%",
				 "GPU Total", "GPU Avg", "GPU%");
		else
			snprintf(line, sizeof line, "%-13s %5s %10s %10s %6s %10s %6s", "", "Calls",
				 "CPU Total", "CPU Avg", "CPU%", "GPU Total", "GPU%");
		if (tui_base_on(a)) /* baseline: the phase's CPU time per step, change */
			snprintf(line + strlen(line), sizeof line - strlen(line), " %18s", "CPU/step vs base");
		tui_put_str(c, x, y++, x + w, line, tui_st(TUI_C_DIM, TUI_A_BOLD));
	}
	uint64_t step_cpu = s->model[PT_MS_STEP].cpu.total_ns;
	uint64_t step_gpu = s->model[PT_MS_STEP].gpu.total_ns;
	for (int i = 0; i < PT_MS__COUNT && y < end; i++) {
		const struct pt_model_row *m = &s->model[i];
		fmt_opt_ns(v[0], sizeof v[0], &m->cpu, 0);
		fmt_opt_ns(v[1], sizeof v[1], &m->cpu, 1);
		fmt_opt_ns(v[2], sizeof v[2], &m->cpu, 2);
		fmt_opt_ns(v[3], sizeof v[3], &m->cpu, 3);
		fmt_opt_ns(v[4], sizeof v[4], &m->gpu, 0);
		fmt_opt_ns(v[5], sizeof v[5], &m->gpu, 1);
		double cr = step_cpu ? 100.0 * (double)m->cpu.total_ns / (double)step_cpu : 0;
		double gr = step_gpu ? 100.0 * (double)m->gpu.total_ns / (double)step_gpu : 0;
		char calls[24] = "-"; /* Others (the remainder) has no calls and no spread */
		if (i == PT_MS_OTHERS) {
			static const int spread[4] = {1, 2, 3, 5}; /* CPU avg/max/min, GPU avg */
			for (int k = 0; k < 4; k++)
				snprintf(v[spread[k]], sizeof v[spread[k]], "-");
		} else
			snprintf(calls, sizeof calls, "%llu", (unsigned long long)m->calls);
		if (wide)
			snprintf(line, sizeof line,
				 "%-14s %6s %10s %10s %10s %10s %7.2f %10s %10s %7.2f",
				 pt_ms_row_name((enum pt_ms_row)i), calls, v[0], v[1], v[2], v[3],
				 cr, v[4], v[5], gr);
		else
			snprintf(line, sizeof line, "%-13s %5s %10s %10s %6.2f %10s %6.2f",
				 pt_ms_row_name((enum pt_ms_row)i), calls, v[0], v[1], cr, v[4],
				 gr);
		if (tui_base_on(a)) {
			char dcell[64];
			tui_base_model_cell(a, i, dcell, sizeof dcell);
			snprintf(line + strlen(line), sizeof line - strlen(line), " %18s", dcell);
		}
		tui_put_str(c, x, y, x + w, line, tui_st(TUI_C_DEFAULT, 0));
		tui_put_ch(c, x, y, phase_glyph[i], tui_st(phase_color[i], TUI_A_BOLD));
		tui_put_ch(c, x + 1, y, ' ', tui_st(TUI_C_DEFAULT, 0));
		tui_put_name(c, x + 2, y, 12, pt_ms_row_name((enum pt_ms_row)i), strlen(pt_ms_row_name((enum pt_ms_row)i)), tui_st(TUI_C_DEFAULT, 0));
		y++;
	}
	/* Perf Summary: one or two lines */
	if (y < end)
		y = section(c, x, y, w, "Perf Summary");
	const struct pt_perf *p = &s->perf;
	if (y < end) {
		fmt_opt_ns(v[0], sizeof v[0], &p->reader, 1);
		fmt_opt_ns(v[1], sizeof v[1], &p->reader, 2);
		fmt_opt_ns(v[2], sizeof v[2], &p->reader, 3);
		fmt_opt_ns(v[3], sizeof v[3], &p->batch, 1);
		fmt_opt_ns(v[4], sizeof v[4], &p->batch, 2);
		fmt_opt_ns(v[5], sizeof v[5], &p->batch, 3);
		if (p->has_reader)
			snprintf(line, sizeof line,
				 "reader_cost avg %s max %s min %s | batch_cost avg %s max %s min %s",
				 v[0], v[1], v[2], v[3], v[4], v[5]);
		else /* no Dataloader in the steps: not applicable, not zero (as in report) */
			snprintf(line, sizeof line, "reader_cost n/a | batch_cost avg %s max %s min %s",
				 v[3], v[4], v[5]);
		tui_put_str(c, x, y++, x + w, line, tui_st(TUI_C_DEFAULT, 0));
	}
	if (y < end) {
		char rr[32] = "n/a";
		if (p->has_reader)
			snprintf(rr, sizeof rr, "%.2f%%", p->reader_ratio_pct);
		snprintf(line, sizeof line, "ips avg %.2f max %.2f min %.2f %s | reader ratio %s | %llu steps",
			 p->ips_avg, p->ips_max, p->ips_min, p->ips_samples ? "samples/s" : "steps/s",
			 rr, (unsigned long long)p->steps);
		tui_put_str(c, x, y++, x + w, line, tui_st(TUI_C_DEFAULT, 0));
	}
	if (y < end && p->has_tokens) {
		snprintf(line, sizeof line, "tokens/s avg %.0f max %.0f min %.0f", p->tokens_avg,
			 p->tokens_max, p->tokens_min);
		tui_put_str(c, x, y++, x + w, line, tui_st(TUI_C_DEFAULT, 0));
	}
	if (y < end && a->model.has_mfu && !tui_nranks(a)) {
		/* the operators' FLOPs over the steps (a trace with shapes), as report's */
		pt_report_mfu_line(line, sizeof line, &a->model.mfu,
				   a->model.has_peak ? &a->model.peak : NULL);
		tui_put_str(c, x, y++, x + w, line, tui_st(TUI_C_DEFAULT, 0));
	}
	y = tui_base_perf_draw(a, c, x, y, end, w); /* before/after, with a baseline */
	/* Steps: a list that scrolls and sorts (keep 3 rows for Overview) */
	int room = end - y - 4;
	a->steps.rows = 0;
	if (room > 0 && s->nsteps)
		y = draw_steps(a, c, x, y, w, end - y - 3);
	/* Overview: event types by merged time, on as many lines as needed */
	if (y < end)
		y = section(c, x, y, w, "Overview (time per event type, overlaps merged)");
	int ox = x;
	for (int k = 0; k < PT_KIND__COUNT && y < end; k++) {
		if (!s->overview[k].calls || k == PT_KIND_COUNTER || k == PT_KIND_INSTANT)
			continue;
		char d[24], item[64];
		tui_fmt_ns(d, sizeof d, s->overview[k].union_ns);
		snprintf(item, sizeof item, "%s %s  ", pt_kind_name((enum pt_kind)k), d);
		int len = (int)strlen(item);
		if (ox + len > x + w) {
			y++;
			ox = x;
			if (y >= end)
				break;
		}
		tui_put_str(c, ox, y, x + w, item, tui_st(tui_kind_color(k), 0));
		ox += len;
	}
}

static void bar(struct tui_canvas *c, int x, int y, int w, double pct, int color)
{
	int k = (int)(pct / 100.0 * w + 0.5);
	if (k > w)
		k = w;
	for (int i = 0; i < w; i++)
		tui_put_ch(c, x + i, y, i < k ? tui_glyph(c, TUI_G_BAR_FULL) : ' ',
			   tui_st(i < k ? color : TUI_C_DIM, 0));
}

void tui_dist_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r)
{
	const struct pt_summary *s = tui_view_sum(a);
	const struct pt_distributed *d = &s->dist;
	int y = r.y, end = r.y + r.h, x = r.x, w = r.w;
	char line[256], v[24];
	y = section(c, x, y, w, "Distributed Summary");
	struct {
		const char *name;
		uint64_t ns;
		int color;
	} rows[4] = {{"ProfileStep", d->step_ns, TUI_C_K_STEP},
		     {"Communication", d->comm_ns, TUI_C_K_COMM},
		     {"Computation", d->comp_ns, TUI_C_K_KERNEL},
		     {"Overlap", d->overlap_ns, TUI_C_METER_MID}};
	int barw = w - 40;
	for (int i = 0; i < 4 && y < end; i++) {
		tui_fmt_ns(v, sizeof v, rows[i].ns);
		double pct = d->step_ns ? 100.0 * (double)rows[i].ns / (double)d->step_ns : 0;
		snprintf(line, sizeof line, "%-14s %11s %6.2f%% ", rows[i].name, v, pct);
		tui_put_str(c, x, y, x + w, line, tui_st(TUI_C_DEFAULT, 0));
		if (barw > 4)
			bar(c, x + 35, y, barw, pct, rows[i].color);
		y++;
	}
	if (y < end && d->comm_from_host)
		tui_put_str(c, x, y++, x + w,
			    "(no device communication: host communication calls used)",
			    tui_st(TUI_C_DIM, 0));
	if (y < end && !d->comm_ns)
		tui_put_str(c, x, y++, x + w, "no communication in this window",
			    tui_st(TUI_C_DIM, 0));
	if (y < end)
		y++;
	if (y < end)
		y = section(c, x, y, w, "Device Summary");
	if (y < end) {
		snprintf(line, sizeof line, "%-8s %7s %11s %9s %9s %9s %12s", "Device", "Util%",
			 "Busy", "Kernels", "Memcpys", "Memsets", "Memcpy bytes");
		tui_put_str(c, x, y++, x + w, line, tui_st(TUI_C_DIM, TUI_A_BOLD));
	}
	for (size_t i = 0; i < s->ndevices && y < end; i++) {
		const struct pt_device_row *dv = &s->devices[i];
		tui_fmt_ns(v, sizeof v, dv->busy_ns);
		snprintf(line, sizeof line, "GPU %-4d %7.2f %11s %9llu %9llu %9llu %12llu",
			 (int)dv->device, dv->util_pct, v, (unsigned long long)dv->kernels,
			 (unsigned long long)dv->memcpys, (unsigned long long)dv->memsets,
			 (unsigned long long)dv->memcpy_bytes);
		tui_put_str(c, x, y++, x + w, line, tui_st(TUI_C_DEFAULT, 0));
	}
	if (y < end && !s->ndevices)
		tui_put_str(c, x, y, x + w, "no GPU activity in this window", tui_st(TUI_C_DIM, 0));
}
