/*
 * view_data.c - the Data view (key 0): the data pipeline (datapipe.h) over
 * the window and rank the other views show. The queue: the share of fetches
 * that found it empty, the mean ready, and a strip with one cell per step
 * (the batches ready when the step asked for one: '0' in the warning
 * colour is a wait, '.' no sample); the lanes (workers, the training
 * thread, the pin-memory thread) with how busy each was; the stages table.
 * The model computes the figures with the advice (model.c); names are
 * escaped. The tab shows only when the trace has a data pipeline.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "proftop/datapipe.h"
#include "model/util.h"

#define NAME_W_MAX 48

static int title(struct tui_canvas *c, int x, int y, int w, const char *s)
{
	tui_fill(c, (struct tui_rect){x, y, w, 1}, ' ', tui_st(TUI_C_HEADER, TUI_A_REVERSE));
	tui_put_str(c, x, y, x + w, s, tui_st(TUI_C_HEADER, TUI_A_REVERSE | TUI_A_BOLD));
	return y + 1;
}

static int name_of(const struct tui_app *a, uint32_t id, char *buf, size_t cap, int max_cols)
{
	const char *s = pt_trace_str(a->t, id);
	size_t skip = strlen(PT_DP_PREFIX);
	if (s && strncmp(s, PT_DP_PREFIX, skip) == 0)
		s += skip;
	return (int)pt_escape_term(buf, cap, s ? s : "?", s ? strlen(s) : 1, (size_t)max_cols, 0);
}

static void lane_name(const struct tui_app *a, const struct pt_dp_lane *l, char *buf, size_t cap)
{
	const struct pt_track *tr = &a->t->tracks[l->track];
	const char *s = tr->label ? pt_trace_str(a->t, tr->label) : NULL;
	if (s && *s)
		pt_escape_term(buf, cap, s, strlen(s), 24, 0);
	else
		snprintf(buf, cap, "tid %" PRId64, tr->key.tid);
}

void tui_data_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r)
{
	const struct pt_datapipe *dp = &a->model.dp;
	int x = r.x, y = r.y, w = r.w, end = r.y + r.h;
	char line[512], nm[256];
	/* the name column takes what the numbers (59 columns) leave */
	int name_w = w - 60 < 12 ? 12 : w - 60 > NAME_W_MAX ? NAME_W_MAX : w - 60;
	y = title(c, x, y, w, "Data Pipeline: the loader's queue");
	if (pt_datapipe_empty(dp)) {
		const char *msg[] = {
		    "No data pipeline in this window: no \"" PT_DP_QUEUE "\" counter and no \"" PT_DP_PREFIX
		    "...\" stages.",
		    "PyTorch jobs started by proftop get them with no code change; from C, see",
		    "docs/data.md."};
		for (size_t i = 0; i < 3 && y < end; i++)
			tui_put_str(c, x, y++, x + w, msg[i], tui_st(TUI_C_DIM, 0));
		return;
	}
	if (dp->queue_samples) {
		snprintf(line, sizeof line,
			 "%.1f%% of %" PRIu64 " fetches found it empty, %.2f ready on average", dp->queue_empty_pct,
			 dp->queue_samples, dp->queue_mean);
		int xx = tui_put_str(c, x, y, x + w, line,
				     tui_st(dp->queue_empty_pct >= 50 ? TUI_C_WARN : TUI_C_DEFAULT, 0));
		if (dp->queue_capacity > 0)
			tui_printf(c, xx, y, x + w, tui_st(TUI_C_DIM, 0), ", capacity %.0f", dp->queue_capacity);
		y++;
		if (y < end && dp->nsteps) {
			/* the newest steps that fit: one cell each */
			int room = w - 7;
			size_t n = dp->nsteps, from = n > (size_t)room ? n - (size_t)room : 0;
			xx = tui_put_str(c, x, y, x + w, "steps ", tui_st(TUI_C_DIM, 0));
			for (size_t i = from; i < n && xx < x + w; i++) {
				int v = dp->step_ready[i];
				char ch[2] = {v < 0 ? '.' : v > 9 ? '+' : (char)('0' + v), 0};
				xx = tui_put_str(c, xx, y, x + w, ch,
						 v == 0 ? tui_st(TUI_C_WARN, TUI_A_BOLD)
							: tui_st(v < 0 ? TUI_C_DIM : TUI_C_METER_LO, 0));
			}
			y++;
			if (y < end)
				tui_put_str(c, x, y++, x + w,
					    "      a cell per step: batches ready when it asked (0: it waited)",
					    tui_st(TUI_C_DIM, 0));
		}
	} else if (y < end) {
		tui_put_str(c, x, y++, x + w,
			    dp->on_training && !dp->workers
				? "none: the loader has no workers, its stages run on the training thread"
				: "not recorded (no \"" PT_DP_QUEUE "\" counter)",
			    tui_st(TUI_C_DIM, 0));
	}
	if (y < end)
		y++;
	if (y < end) {
		snprintf(line, sizeof line, "Lanes: %zu worker%s", dp->workers, dp->workers == 1 ? "" : "s");
		if (dp->workers)
			snprintf(line + strlen(line), sizeof line - strlen(line), ", busy %.1f%% of their time",
				 dp->workers_busy_pct);
		y = title(c, x, y, w, line);
	}
	for (size_t i = 0; i < dp->nlanes && y < end; i++) {
		const struct pt_dp_lane *l = &dp->lanes[i];
		lane_name(a, l, nm, sizeof nm);
		snprintf(line, sizeof line, "%-24s %-8s %6.1f%% busy  %" PRIu64 " calls%s", nm,
			 l->training ? "training" : l->pin_only ? "pin" : "worker", l->busy_pct, l->calls,
			 l->processes > 1 ? " (restarted)" : "");
		int xx = tui_put_str(c, x, y, x + w, line, tui_st(TUI_C_DEFAULT, 0));
		int barw = x + w - xx - 2 > 40 ? 40 : x + w - xx - 2;
		if (barw > 6) {
			int fill = (int)(l->busy_pct / 100.0 * barw + 0.5);
			tui_fill(c, (struct tui_rect){xx + 2, y, fill, 1}, '#',
				 tui_st(l->busy_pct >= 80 ? TUI_C_METER_HI : TUI_C_METER_LO, 0));
			tui_fill(c, (struct tui_rect){xx + 2 + fill, y, barw - fill, 1}, '.', tui_st(TUI_C_DIM, 0));
		}
		y++;
	}
	if (y < end)
		y++;
	if (y < end) {
		snprintf(line, sizeof line, "%-*s %7s %10s %10s %9s %11s %6s", name_w, "Stage", "Calls",
			 "Total", "Self", "Avg", "Per sample", "Busy%");
		y = title(c, x, y, w, line);
	}
	for (size_t i = 0; i < dp->nstages && y < end; i++) {
		const struct pt_dp_stage *st = &dp->stages[i];
		char tot[24], self[24], avg[24], ps[24];
		int cols = name_of(a, st->name_id, nm, sizeof nm, name_w);
		tui_fmt_ns(tot, sizeof tot, st->total_ns);
		tui_fmt_ns(self, sizeof self, st->self_ns);
		tui_fmt_ns(avg, sizeof avg, st->calls ? st->total_ns / st->calls : 0);
		tui_fmt_ns(ps, sizeof ps, (uint64_t)(st->per_sample_ms * 1e6 + 0.5));
		int xx = tui_put_str(c, x, y, x + w, nm,
				     tui_st((ptrdiff_t)i == dp->slowest ? TUI_C_WARN : TUI_C_DEFAULT,
					    (ptrdiff_t)i == dp->slowest ? TUI_A_BOLD : 0));
		xx += name_w - cols > 0 ? name_w - cols : 0;
		snprintf(line, sizeof line, " %7" PRIu64 " %10s %10s %9s %11s %6.1f", st->calls, tot, self,
			 avg, ps, st->busy_pct);
		tui_put_str(c, xx, y, x + w, line, tui_st(TUI_C_DEFAULT, 0));
		y++;
	}
	if (y < end && dp->slowest >= 0)
		tui_put_str(c, x, y++, x + w,
			    "bold: the stage with the most self time; Total includes nested stages",
			    tui_st(TUI_C_DIM, 0));
}
