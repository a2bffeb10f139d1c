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
#include <string.h>

#include "app.h"

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

void tui_summary_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r)
{
	const struct pt_summary *s = tui_view_sum(a);
	int y = r.y, end = r.y + r.h, x = r.x, w = r.w;
	char v[8][24], line[512];
	int vc;
	verdict(s, line, sizeof line, &vc);
	int nx = tui_put_str(c, x, y, x + w, "Verdict: ", tui_st(TUI_C_DEFAULT, TUI_A_BOLD));
	tui_put_str(c, nx, y++, x + w, line, tui_st(vc, TUI_A_BOLD));
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
		snprintf(line, sizeof line,
			 "reader_cost avg %s max %s min %s | batch_cost avg %s max %s min %s", v[0], v[1],
			 v[2], v[3], v[4], v[5]);
		tui_put_str(c, x, y++, x + w, line, tui_st(TUI_C_DEFAULT, 0));
	}
	if (y < end) {
		snprintf(line, sizeof line, "ips avg %.2f max %.2f min %.2f %s | reader ratio %.2f%% | %llu steps",
			 p->ips_avg, p->ips_max, p->ips_min, p->ips_samples ? "samples/s" : "steps/s",
			 p->reader_ratio_pct, (unsigned long long)p->steps);
		tui_put_str(c, x, y++, x + w, line, tui_st(TUI_C_DEFAULT, 0));
	}
	y = tui_base_perf_draw(a, c, x, y, end, w); /* before/after, with a baseline */
	/* Steps: stacked bars for the most recent steps that fit (keep 3 rows for Overview) */
	int room = end - y - 4;
	if (room > 0 && s->nsteps) {
		y = section(c, x, y, w, "Steps (D dataloader F forward B backward O optimizer . others)");
		room = end - y - 3;
		size_t n = s->nsteps < (size_t)room ? s->nsteps : (size_t)(room > 0 ? room : 0);
		uint64_t maxdur = 1;
		for (size_t i = s->nsteps - n; i < s->nsteps; i++)
			if (s->steps[i].dur_ns > maxdur)
				maxdur = s->steps[i].dur_ns;
		int barw = w - 26;
		for (size_t i = s->nsteps - n; i < s->nsteps && barw > 4; i++) {
			const struct pt_step *st = &s->steps[i];
			char dur[24];
			tui_fmt_ns(dur, sizeof dur, st->dur_ns);
			tui_printf(c, x, y, x + w, tui_st(TUI_C_DIM, 0), "#%-7lld %10s ",
				   (long long)st->number, dur);
			int bx = x + 20;
			int len = (int)((double)barw * (double)st->dur_ns / (double)maxdur);
			int filled = 0;
			for (int ph = PT_MS_DATALOADER; ph < PT_MS__COUNT; ph++) {
				uint64_t pn = st->cpu_ns[ph];
				int k = st->dur_ns ? (int)((double)len * (double)pn / (double)st->dur_ns + 0.5) : 0;
				if (filled + k > len)
					k = len - filled;
				for (int j = 0; j < k; j++)
					tui_put_ch(c, bx + filled + j, y, (uint32_t)phase_glyph[ph],
						   tui_st(phase_color[ph], TUI_A_REVERSE));
				filled += k;
			}
			y++;
		}
	}
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
