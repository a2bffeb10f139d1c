/*
 * report.c - the summary as text, in the layout of Paddle's profiler tables
 * (pt_report_text): a header, then Device, Overview, Model, Distributed,
 * Operator, Kernel, Memory Manipulation and UserDefined summaries, the Perf
 * Summary benchmark block and the warnings, each only when it has data.
 *
 * Layout follows Paddle's profiler_statistic output: every column is left
 * aligned in a fixed width and followed by two spaces, tables open with a
 * title centred in dashes over the table's width, "Time unit: ms", and rows
 * of dashes around the header; combined columns read
 * "Total / Avg / Max / Min / Ratio(%)" with two decimals and widen when the
 * numbers need it. Trailing blanks are not printed. Every name from a trace
 * goes through pt_escape_term and is cut to its column with "...".
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/advisor.h"
#include "proftop/colls.h"
#include "proftop/counters.h"
#include "proftop/datapipe.h"
#include "proftop/error.h"
#include "proftop/report.h"
#include "analyze/overhead.h"
#include "output/report_int.h"
#include "model/util.h"

#define NAME_W_DEFAULT 52   /* Operator, Memory, UserDefined */
#define KERNEL_W_DEFAULT 90 /* Kernel Summary: kernel names are long */
#define COMBINED_W 40
#define CELL 64             /* a formatted number cell */
#define NAME_CAP 1024       /* escaped, cut name */

static const char *const dash5 = "- / - / - / - / -";

static const char *const ms_names[PT_MS__COUNT] = {
	"ProfileStep", "Dataloader", "Forward", "Backward", "Optimization", "Others",
};

static double ms_of(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* "total / avg / max / min / ratio" in ms; avg, max and min are "-" (not
 * applicable) when nothing was counted. */
static void fmt_combined(char *buf, const struct pt_stat *st, double pct)
{
	uint64_t n = st->n;
	if (!n) {
		snprintf(buf, CELL, "%.2f / - / - / - / %.2f", ms_of(st->total_ns), pct);
		return;
	}
	double avg = ms_of(st->total_ns) / (double)n;
	snprintf(buf, CELL, "%.2f / %.2f / %.2f / %.2f / %.2f", ms_of(st->total_ns), avg,
		 ms_of(st->max_ns), ms_of(pt_stat_min(st)), pct);
}

/* Escaped name cut to max_cols; returns its display columns. */
static int fmt_name(char *buf, const struct pt_trace *t, uint32_t id, int indent, int max_cols)
{
	int k = 0;
	for (; k < indent && k < 64; k++)
		buf[k] = ' ';
	const char *s = pt_trace_str(t, id);
	size_t len = pt_strtab_len(t->strings, id);
	int room = max_cols - k;
	if (room < 4)
		room = 4;
	return k + (int)pt_escape_term(buf + k, NAME_CAP - (size_t)k, s, len, (size_t)room, 0);
}

static int max_i(int a, int b)
{
	return a > b ? a : b;
}

/* ---- header ---- */

/*
 * Drops that are not this load's own memory cap: the source's (full rings in
 * a live session, or carried in a re-read export's metadata) and the cap of
 * the session that wrote a re-read export. Shares are of every event
 * produced: kept + dropped (a store drop was seen, then dropped).
 */
static void put_drop_notes(FILE *out, const struct pt_trace *t)
{
	uint64_t by_source = pt_trace_source_lost(t);
	uint64_t by_cap = t->warnings[PT_WARN_STORE_DROPPED];
	uint64_t here = pt_store_dropped(t->store);
	uint64_t earlier = by_cap > here ? by_cap - here : 0;
	uint64_t all = pt_store_count(t->store) + by_source + by_cap;
	if (by_source) {
		char causes[200];
		pt_trace_loss_causes(t, causes, sizeof causes, 0);
		fprintf(out,
			"Note: the source lost %" PRIu64 " events (%.1f%% of %" PRIu64
			") before proftop read them: %s; the totals below undercount.\n",
			by_source, 100.0 * (double)by_source / (double)all, all, causes);
	}
	if (earlier)
		fprintf(out,
			"Note: the memory cap (--max-mem) of the session that wrote this file "
			"dropped its %" PRIu64 " oldest events.\n",
			earlier);
}

static void put_header(FILE *out, const struct pt_trace *t, const struct pt_summary *s)
{
	char src[NAME_CAP];
	const char *source = t->source ? t->source : "(unnamed)";
	pt_escape_term(src, sizeof src, source, strlen(source), 200, 0);
	fprintf(out, "proftop report: %s\n", src);
	uint64_t kept = pt_store_count(t->store);
	uint64_t by_source = pt_trace_source_lost(t);
	uint64_t by_cap = t->warnings[PT_WARN_STORE_DROPPED];
	fprintf(out, "Events: %" PRIu64 " kept of %" PRIu64 " seen", kept, t->events_seen);
	if (s->events != kept)
		fprintf(out, " (%" PRIu64 " summarized)", s->events);
	/* always said, so "0 dropped" is a statement and not an omission */
	if (by_source + by_cap)
		fprintf(out, ", %" PRIu64 " dropped (%" PRIu64 " by the source, %" PRIu64
			" by the memory cap)", by_source + by_cap, by_source, by_cap);
	else
		fputs(", 0 dropped", out);
	uint64_t span = s->t1_ns > s->t0_ns ? s->t1_ns - s->t0_ns : 0;
	fprintf(out, ", span %.2f ms", ms_of(span));
	if (s->nsteps) {
		int64_t lo = s->steps[0].number, hi = s->steps[0].number;
		for (size_t i = 1; i < s->nsteps; i++) {
			if (s->steps[i].number < lo)
				lo = s->steps[i].number;
			if (s->steps[i].number > hi)
				hi = s->steps[i].number;
		}
		fprintf(out, ", %zu step%s (%" PRId64 " to %" PRId64 ")", s->nsteps,
			s->nsteps == 1 ? "" : "s", lo, hi);
	} else {
		fputs(", no steps", out);
	}
	if (t->rank >= 0) {
		fprintf(out, ", rank %" PRId64, t->rank);
		if (t->world_size > 0)
			fprintf(out, " of %" PRId64, t->world_size);
	}
	putc('\n', out);
	if (t->probe_ns_per_event > 0) {
		/* only traces proftop recorded carry the probe's cost per event */
		struct pt_overhead oh;
		char line[160];
		pt_overhead_of(&oh, t, s);
		if (pt_overhead_format(&oh, line, sizeof line))
			fprintf(out, "%c%s\n", line[0] - 32, line + 1);
	}
	put_drop_notes(out, t);
	for (uint32_t i = 0; i < t->nnotes; i++) {
		const char *n = pt_trace_note_text(t, i);
		char esc[NAME_CAP];
		pt_escape_term(esc, sizeof esc, n, strlen(n), 400, 0);
		fprintf(out, "Note: %s\n", esc);
	}
	if (t->notes_dropped)
		fprintf(out, "Note: %" PRIu64 " further notes of the source not shown.\n",
			t->notes_dropped);
	uint64_t dropped = pt_store_dropped(t->store);
	if (dropped) {
		uint64_t from = pt_store_complete_from_ns(t->store);
		uint64_t rel = from > t->first_ns ? from - t->first_ns : 0;
		fprintf(out,
			"Note: the memory cap (--max-mem) dropped the %" PRIu64
			" oldest events; the data is complete only from %.2f ms after the "
			"trace's start.\n",
			dropped, ms_of(rel));
	}
	putc('\n', out);
}

/* ---- Device Summary ---- */

static void put_device(FILE *out, const struct pt_trace *t, const struct pt_summary *s)
{
	/* CPU rows come from the /proc sampler's counters (live sessions) */
	static const char *const cpu_rows[2] = {"CPU(Process)", "CPU(System)"};
	struct pt_counter_stat cpu[2];
	int ncpu = 0;
	for (int i = 0; i < 2; i++)
		ncpu += pt_counter_stat(t, cpu_rows[i], s->t0_ns, s->t1_ns, &cpu[i]) > 0;
	if (!s->ndevices && !ncpu) {
		fputs("Device Summary: no GPU activity found\n\n", out);
		return;
	}
	int w[2] = {30, 20};
	int tw = pt_box_width(w, 2);
	pt_box_title(out, "Device Summary", tw, '-');
	pt_box_sep(out, w, 2);
	pt_box_row(out, w, 2, (const char *const[]){"Device", "Utilization (%)"}, -1);
	pt_box_sep(out, w, 2);
	for (int i = 0; i < 2; i++) {
		char util[CELL];
		if (!cpu[i].n)
			continue;
		snprintf(util, sizeof util, "%.2f", cpu[i].avg);
		pt_box_row(out, w, 2, (const char *const[]){cpu_rows[i], util}, -1);
	}
	for (size_t i = 0; i < s->ndevices; i++) {
		char dev[32], util[CELL];
		snprintf(dev, sizeof dev, "GPU%" PRId32, s->devices[i].device);
		double u = s->devices[i].util_pct;
		snprintf(util, sizeof util, "%.2f", u == u ? u : 0.0);
		pt_box_row(out, w, 2, (const char *const[]){dev, util}, -1);
	}
	if (ncpu) {
		pt_box_sep(out, w, 2);
		fputs("Note:\nCPU(Process) Utilization = Current process CPU time over all cpu cores / "
		      "elapsed time, so max utilization can be reached 100% * number of cpu cores.\n"
		      "CPU(System) Utilization = All processes CPU time over all cpu cores(busy time) / "
		      "(busy time + idle time).\n",
		      out);
		if (s->ndevices)
			fputs("GPU Utilization = Current process GPU time / elapsed time.\n", out);
		pt_box_n(out, '-', tw);
		fputs("\n\n", out);
		return;
	}
	pt_box_sep(out, w, 2);
	fputs("Note:\nGPU Utilization = Current process GPU time / elapsed time.\n", out);
	pt_box_n(out, '-', tw);
	fputs("\n\n", out);
}

/* ---- Overview Summary ---- */

static int kind_shown(int k)
{
	return k != PT_KIND_INSTANT && k != PT_KIND_COUNTER && k != PT_KIND_OTHER;
}

static void put_overview(FILE *out, const struct pt_summary *s)
{
	int host[PT_KIND__COUNT], nh = 0, ndev = 0;
	for (int k = 0; k < PT_KIND__COUNT; k++) {
		if (!s->overview[k].calls || !kind_shown(k))
			continue;
		if (pt_kind_is_device((enum pt_kind)k))
			ndev++;
		else if (k != PT_KIND_PROFILE_STEP)
			host[nh++] = k;
	}
	int has_step = s->overview[PT_KIND_PROFILE_STEP].calls > 0;
	if (!nh && !ndev && !has_step)
		return;
	/* other host kinds by time, largest first (insertion sort: a dozen at most) */
	for (int i = 1; i < nh; i++) {
		int k = host[i], j = i;
		while (j > 0 && s->overview[host[j - 1]].union_ns < s->overview[k].union_ns) {
			host[j] = host[j - 1];
			j--;
		}
		host[j] = k;
	}
	int w[4] = {25, 25, 25, 25};
	int tw = pt_box_width(w, 4);
	const char *ind = has_step ? "  " : "";
	char name[64], calls[CELL], tm[CELL], ratio[CELL];
	pt_box_title(out, "Overview Summary", tw, '-');
	fputs("Time unit: ms\n", out);
	pt_box_sep(out, w, 4);
	pt_box_row(out, w, 4, (const char *const[]){"Event Type", "Calls", "CPU Time", "Ratio (%)"}, -1);
	pt_box_sep(out, w, 4);
	for (int i = -1; i < nh; i++) {
		int k = i < 0 ? PT_KIND_PROFILE_STEP : host[i];
		if (i < 0 && !has_step)
			continue;
		snprintf(name, sizeof name, "%s%s", i < 0 ? "" : ind, pt_kind_name((enum pt_kind)k));
		snprintf(calls, sizeof calls, "%" PRIu64, s->overview[k].calls);
		snprintf(tm, sizeof tm, "%.2f", ms_of(s->overview[k].union_ns));
		snprintf(ratio, sizeof ratio, "%.2f", pt_overview_pct(s, k));
		pt_box_row(out, w, 4, (const char *const[]){name, calls, tm, ratio}, -1);
	}
	pt_box_sep(out, w, 4);
	if (ndev) {
		pt_box_row(out, w, 4, (const char *const[]){"", "Calls", "GPU Time", "Ratio (%)"}, -1);
		pt_box_sep(out, w, 4);
		static const int dev_kinds[] = {PT_KIND_KERNEL, PT_KIND_MEMCPY, PT_KIND_MEMSET,
						PT_KIND_COMMUNICATION};
		for (size_t i = 0; i < sizeof dev_kinds / sizeof dev_kinds[0]; i++) {
			int k = dev_kinds[i];
			if (!s->overview[k].calls)
				continue;
			snprintf(name, sizeof name, "  %s", pt_kind_name((enum pt_kind)k));
			snprintf(calls, sizeof calls, "%" PRIu64, s->overview[k].calls);
			snprintf(tm, sizeof tm, "%.2f", ms_of(s->overview[k].union_ns));
			snprintf(ratio, sizeof ratio, "%.2f", pt_overview_pct(s, k));
			pt_box_row(out, w, 4, (const char *const[]){name, calls, tm, ratio}, -1);
		}
		pt_box_sep(out, w, 4);
	}
	fputs("Note:\n"
	      "In this table, We sum up all collected events in terms of event type.\n"
	      "The time of events collected on host are presented as CPU Time, and as GPU Time if "
	      "on device.\n"
	      "Events with different types may overlap or inclusion, e.g. Operator includes "
	      "OperatorInner, so the sum of ratios is not 100%.\n"
	      "The time of events in the same type with overlap will not calculate twice, and all "
	      "time is summed after merged.\n",
	      out);
	if (!has_step)
		fputs("No ProfileStep in this trace: times and ratios are over the profiled span "
		      "(the profiler's own spans left out).\n",
		      out);
	else
		fputs("Times are the parts within the steps, ratios are of the steps' time; the "
		      "phases (Dataloader, Forward, Backward, Optimization) are the Model Summary's "
		      "figures, with Calls counting the steps each ran in.\n",
		      out);
	pt_box_n(out, '-', tw);
	fputs("\n\n", out);
}

/* ---- Model Summary ---- */

static void model_cells(const struct pt_summary *s, int r, char *calls, char *cpu, char *gpu)
{
	const struct pt_model_row *m = &s->model[r];
	uint64_t cbase = s->model[PT_MS_STEP].cpu.total_ns;
	uint64_t gbase = s->model[PT_MS_STEP].gpu.total_ns;
	if (r == PT_MS_OTHERS) {
		strcpy(calls, "-");
		snprintf(cpu, CELL, "%.2f / - / - / - / %.2f", ms_of(m->cpu.total_ns),
			 pt_pct(m->cpu.total_ns, cbase));
		snprintf(gpu, CELL, "%.2f / - / - / - / %.2f", ms_of(m->gpu.total_ns),
			 pt_pct(m->gpu.total_ns, gbase));
		return;
	}
	snprintf(calls, CELL, "%" PRIu64, m->calls);
	fmt_combined(cpu, &m->cpu, pt_pct(m->cpu.total_ns, cbase));
	fmt_combined(gpu, &m->gpu, pt_pct(m->gpu.total_ns, gbase));
}

static void put_model(FILE *out, const struct pt_summary *s)
{
	if (!s->nsteps && !s->model[PT_MS_STEP].calls) {
		fputs("Model Summary: no steps found\n\n", out);
		return;
	}
	char calls[CELL], cpu[CELL], gpu[CELL], name[32];
	int w[4] = {15, 6, COMBINED_W, COMBINED_W};
	for (int r = 0; r < PT_MS__COUNT; r++) {
		model_cells(s, r, calls, cpu, gpu);
		w[1] = max_i(w[1], (int)strlen(calls));
		w[2] = max_i(w[2], (int)strlen(cpu));
		w[3] = max_i(w[3], (int)strlen(gpu));
	}
	int tw = pt_box_width(w, 4);
	pt_box_title(out, "Model Summary", tw, '-');
	fputs("Time unit: ms\n", out);
	pt_box_sep(out, w, 4);
	pt_box_row(out, w, 4,
		(const char *const[]){"Name", "Calls", "CPU Total / Avg / Max / Min / Ratio(%)",
				      "GPU Total / Avg / Max / Min / Ratio(%)"},
		-1);
	pt_box_sep(out, w, 4);
	for (int r = 0; r < PT_MS__COUNT; r++) {
		model_cells(s, r, calls, cpu, gpu);
		snprintf(name, sizeof name, "%s%s", r ? "  " : "", ms_names[r]);
		pt_box_row(out, w, 4, (const char *const[]){name, calls, cpu, gpu}, -1);
	}
	pt_box_sep(out, w, 4);
	if (s->model[PT_MS_BACKWARD].calls &&
	    s->backward_busy_ns != s->model[PT_MS_BACKWARD].cpu.total_ns)
		fprintf(out,
			"Note: Backward is each step's span from its first backward event to its "
			"last, as Paddle times it; the backward events themselves take %.2f ms of "
			"it (Backward busy).\n",
			ms_of(s->backward_busy_ns));
	putc('\n', out);
}

/* ---- Distributed Summary ---- */

/* The ranks whose own summaries a report adds up: two or more, each with
 * its summary; else NULL. */
static const struct pt_ranks *ranks_summed(const struct pt_report_opts *o)
{
	const struct pt_ranks *r = o ? o->ranks : NULL;
	if (!r || r->n < 2)
		return NULL;
	for (size_t i = 0; i < r->n; i++)
		if (!r->r[i].summary)
			return NULL;
	return r;
}

const struct pt_summary *pt_report_overview_of(const struct pt_summary *s,
					       const struct pt_report_opts *o,
					       struct pt_summary *tmp)
{
	const struct pt_ranks *r = ranks_summed(o);
	if (!r)
		return s;
	*tmp = *s; /* read only: the pointers are s's */
	memset(tmp->overview, 0, sizeof tmp->overview);
	for (size_t i = 0; i < r->n; i++)
		for (int k = 0; k < PT_KIND__COUNT; k++) {
			const struct pt_overview_row *x = &r->r[i].summary->overview[k];
			tmp->overview[k].calls += x->calls;
			tmp->overview[k].union_ns += x->union_ns;
			tmp->overview[k].ratio_base_ns += x->ratio_base_ns;
		}
	return tmp;
}

size_t pt_report_dist(const struct pt_summary *s, const struct pt_report_opts *o,
		      struct pt_distributed *d)
{
	*d = s->dist;
	const struct pt_ranks *r = ranks_summed(o);
	if (!r)
		return 0;
	memset(d, 0, sizeof *d);
	for (size_t i = 0; i < r->n; i++) {
		const struct pt_distributed *x = &r->r[i].summary->dist;
		d->step_ns += x->step_ns;
		d->comm_ns += x->comm_ns;
		d->comp_ns += x->comp_ns;
		d->overlap_ns += x->overlap_ns;
		d->comm_from_host |= x->comm_from_host;
	}
	return r->n;
}

/* The largest difference, in percent of msprof's figure, between proftop's
 * computation / communication / exposed communication and msprof's own
 * Overlap Analysis (report_int.h). */
double pt_vendor_overlap_diff_pct(const struct pt_distributed *d)
{
	uint64_t ours[3] = {d->comp_ns, d->comm_ns,
			    d->comm_ns > d->overlap_ns ? d->comm_ns - d->overlap_ns : 0};
	uint64_t theirs[3] = {d->vendor_comp_ns, d->vendor_comm_ns, d->vendor_exposed_ns};
	double worst = 0;
	for (int i = 0; i < 3; i++) {
		double a = (double)ours[i], b = (double)theirs[i];
		double diff = b > 0 ? 100.0 * (a > b ? a - b : b - a) / b : (a > 0 ? 100.0 : 0.0);
		if (diff > worst)
			worst = diff;
	}
	return worst;
}

static void put_vendor_overlap(FILE *out, const struct pt_distributed *d)
{
	if (!d->has_vendor)
		return;
	uint64_t exposed = d->comm_ns > d->overlap_ns ? d->comm_ns - d->overlap_ns : 0;
	double diff = pt_vendor_overlap_diff_pct(d);
	fprintf(out,
		"msprof's own Overlap Analysis (same window): Computing %.2f ms, Communication "
		"%.2f ms, Communication(Not Overlapped) %.2f ms; proftop: %.2f, %.2f, %.2f ms "
		"(%s, largest difference %.1f%%).\n",
		ms_of(d->vendor_comp_ns), ms_of(d->vendor_comm_ns), ms_of(d->vendor_exposed_ns),
		ms_of(d->comp_ns), ms_of(d->comm_ns), ms_of(exposed),
		diff <= 10.0 ? "they agree" : "THEY DIFFER", diff);
}

static void put_distributed(FILE *out, const struct pt_summary *s, const struct pt_report_opts *o)
{
	struct pt_distributed dd;
	size_t summed = pt_report_dist(s, o, &dd);
	const struct pt_distributed *d = &dd;
	if (!d->comm_ns)
		return;
	int w[3] = {25, 25, 25};
	int tw = pt_box_width(w, 3);
	char tm[CELL], ratio[CELL];
	pt_box_title(out, "Distributed Summary", tw, '-');
	fputs("Time unit: ms\n", out);
	pt_box_sep(out, w, 3);
	pt_box_row(out, w, 3, (const char *const[]){"Name", "Total Time", "Ratio (%)"}, -1);
	pt_box_sep(out, w, 3);
	const char *names[4] = {"ProfileStep", "  Communication", "  Computation", "  Overlap"};
	uint64_t vals[4] = {d->step_ns, d->comm_ns, d->comp_ns, d->overlap_ns};
	for (int i = 0; i < 4; i++) {
		snprintf(tm, sizeof tm, "%.2f", ms_of(vals[i]));
		snprintf(ratio, sizeof ratio, "%.2f", pt_pct(vals[i], d->step_ns));
		pt_box_row(out, w, 3, (const char *const[]){names[i], tm, ratio}, -1);
	}
	pt_box_sep(out, w, 3);
	fprintf(out,
		"Note: times within the %s, ratios of %s; Overlap is %.2f%% of Communication "
		"(communication overlapped by computation, HTA's overlap ratio).\n",
		s->nsteps ? "steps" : "profiled span", s->nsteps ? "ProfileStep" : "the span",
		pt_pct(d->overlap_ns, d->comm_ns));
	if (d->comm_from_host)
		fputs("Note: no communication kernels on a device; Communication is the time of "
		      "host-side communication calls.\n",
		      out);
	if (summed)
		fprintf(out,
			"Note: the sum of the %zu ranks' own figures (each rank's communication "
			"overlapped only by its own computation); per rank below.\n",
			summed);
	put_vendor_overlap(out, d);
	putc('\n', out);
}

/* ---- the row tables: Operator, Kernel, Memory Manipulation, UserDefined ---- */

struct tspec {
	const char *title;
	int name_w;      /* name column; cut names to it */
	int fit_names;   /* shrink the name column to the longest name */
	int with_cpu;
	int thread_line; /* "Thread: All threads merged" */
	const char *note; /* what the Ratio columns are shares of, or NULL */
};

/* Cells of row i of a sorted view; returns the name's display columns. */
static int row_cells(const struct pt_trace *t, const struct pt_table *v, size_t i, int name_w,
		     char *name, char *calls, char *cpu, char *gpu)
{
	const struct pt_row *r = &v->rows[i];
	int cols = fmt_name(name, t, r->name_id, 2 * r->depth, name_w);
	snprintf(calls, CELL, "%" PRIu64, pt_row_calls(r));
	if (r->is_device)
		strcpy(cpu, dash5);
	else
		fmt_combined(cpu, &r->cpu, pt_row_cpu_pct(v, r));
	fmt_combined(gpu, &r->gpu, pt_row_gpu_pct(v, r));
	return cols;
}

static void put_table(FILE *out, const struct pt_trace *t, const struct pt_table *v,
		      const struct tspec *sp)
{
	char name[NAME_CAP], calls[CELL], cpu[CELL], gpu[CELL];
	int name_w = sp->name_w;
	if (sp->fit_names) {
		int longest = 4;
		for (size_t i = 0; i < v->n; i++)
			longest = max_i(longest, row_cells(t, v, i, name_w, name, calls, cpu, gpu));
		name_w = longest < name_w ? longest : name_w;
	}
	int w[4] = {name_w, 6, COMBINED_W, COMBINED_W};
	for (size_t i = 0; i < v->n; i++) {
		row_cells(t, v, i, name_w, name, calls, cpu, gpu);
		w[1] = max_i(w[1], (int)strlen(calls));
		w[2] = max_i(w[2], (int)strlen(cpu));
		w[3] = max_i(w[3], (int)strlen(gpu));
	}
	int nc = 4;
	if (!sp->with_cpu) { /* Name, Calls, GPU */
		w[2] = w[3];
		nc = 3;
	}
	int tw = pt_box_width(w, nc);
	pt_box_title(out, sp->title, tw, '-');
	fputs("Time unit: ms\n", out);
	pt_box_sep(out, w, nc);
	if (sp->with_cpu)
		pt_box_row(out, w, nc,
			(const char *const[]){"Name", "Calls", "CPU Total / Avg / Max / Min / Ratio(%)",
					      "GPU Total / Avg / Max / Min / Ratio(%)"},
			-1);
	else
		pt_box_row(out, w, nc,
			(const char *const[]){"Name", "Calls", "GPU Total / Avg / Max / Min / Ratio(%)"},
			-1);
	pt_box_sep(out, w, nc);
	if (sp->thread_line)
		pt_box_title(out, "Thread: All threads merged", tw, '-');
	for (size_t i = 0; i < v->n; i++) {
		int cols = row_cells(t, v, i, name_w, name, calls, cpu, gpu);
		if (sp->with_cpu)
			pt_box_row(out, w, nc, (const char *const[]){name, calls, cpu, gpu}, cols);
		else
			pt_box_row(out, w, nc, (const char *const[]){name, calls, gpu}, cols);
	}
	pt_box_sep(out, w, nc);
	if (sp->note)
		fprintf(out, "Note: %s\n", sp->note);
	putc('\n', out);
}

/* ---- Perf Summary ---- */

/* Python's str.center: the odd blank goes left when the width is odd. */
static void put_centered(FILE *out, const char *s, int width)
{
	int len = (int)strlen(s);
	int marg = width - len;
	if (marg < 0)
		marg = 0;
	int left = marg / 2 + (marg & width & 1);
	pt_box_n(out, ' ', left);
	fputs(s, out);
	pt_box_n(out, ' ', marg - left);
}

static void put_perf_cells(FILE *out, const char *const *cells)
{
	putc('|', out);
	for (int i = 0; i < 4; i++) {
		put_centered(out, cells[i], 17);
		putc('|', out);
	}
	putc('\n', out);
}

static void put_perf_row(FILE *out, const char *name, double avg, double max, double min)
{
	char a[CELL], b[CELL], c[CELL];
	snprintf(a, sizeof a, "%.5f", avg == avg ? avg : 0.0);
	snprintf(b, sizeof b, "%.5f", max == max ? max : 0.0);
	snprintf(c, sizeof c, "%.5f", min == min ? min : 0.0);
	put_perf_cells(out, (const char *const[]){name, a, b, c});
}

static double sec_of(uint64_t ns)
{
	return (double)ns / 1e9;
}

static double stat_avg_s(const struct pt_stat *st)
{
	return st->n ? sec_of(st->total_ns) / (double)st->n : 0.0;
}

/* torch.compile's steps: which compiled, what it cost, whether they are in
 * the figures (one line under the Perf Summary). */
static void put_compile(FILE *out, const struct pt_summary *s)
{
	char line[PT_COMPILE_LINE_MAX];
	if (pt_compile_line(s, line, sizeof line, 0))
		fprintf(out, "%s\n", line);
}

static void put_perf(FILE *out, const struct pt_summary *s)
{
	const struct pt_perf *p = &s->perf;
	if (!p->steps) {
		fputs("Perf Summary: no steps found\n", out);
		put_compile(out, s);
		putc('\n', out);
		return;
	}
	double rr = p->reader_ratio_pct;
	pt_box_title(out, "Perf Summary", 100, '=');
	if (p->has_reader)
		fprintf(out, "Reader Ratio: %.3f%%\n", rr == rr ? rr : 0.0);
	else
		fputs("Reader Ratio: n/a (no Dataloader events in the steps)\n", out);
	fprintf(out, "Time Unit: s, IPS Unit: %s\n", p->ips_samples ? "samples/s" : "steps/s");
	put_perf_cells(out, (const char *const[]){"", "avg", "max", "min"});
	if (p->has_reader)
		put_perf_row(out, "reader_cost", stat_avg_s(&p->reader), sec_of(p->reader.max_ns),
			     sec_of(pt_stat_min(&p->reader)));
	else
		put_perf_cells(out, (const char *const[]){"reader_cost", "n/a", "n/a", "n/a"});
	put_perf_row(out, "batch_cost", stat_avg_s(&p->batch), sec_of(p->batch.max_ns),
		     sec_of(pt_stat_min(&p->batch)));
	put_perf_row(out, "ips", p->ips_avg, p->ips_max, p->ips_min);
	if (p->has_tokens)
		put_perf_row(out, "tokens/s", p->tokens_avg, p->tokens_max, p->tokens_min);
	put_compile(out, s);
	putc('\n', out);
}

/* ---- warnings ---- */

static void put_warnings(FILE *out, const struct pt_trace *t)
{
	if (!pt_trace_warn_total(t))
		return;
	fputs("Warnings:\n", out);
	for (int w = 0; w < PT_WARN__COUNT; w++)
		if (t->warnings[w])
			fprintf(out, "  %" PRIu64 " %s\n", t->warnings[w], pt_warn_text((enum pt_warn)w));
}

int pt_report_text(FILE *out, const struct pt_trace *t, const struct pt_summary *s,
		   const struct pt_report_opts *o)
{
	struct pt_report_opts defaults;
	if (!o) {
		pt_report_opts_init(&defaults);
		o = &defaults;
	}
	int name_w = o->width > 0 ? o->width : NAME_W_DEFAULT;
	int kernel_w = o->width > 0 ? o->width : KERNEL_W_DEFAULT;
	/* the data pipeline and the advice, worked out while the tables are
	 * written */
	struct pt_report_adv *adv = pt_xmalloc(sizeof *adv);
	pt_report_adv_start(adv, t, s, o);

	put_header(out, t, s);
	pt_report_ranks_text(out, o->ranks);
	put_device(out, t, s);
	struct pt_summary ov;
	put_overview(out, pt_report_overview_of(s, o, &ov));
	put_model(out, s);
	put_distributed(out, s, o);
	pt_report_ranks_dist_text(out, o->ranks);
	{
		struct pt_coll_stats cs;
		struct pt_straggler sg;
		pt_report_colls_compute(t, o, &cs, &sg);
		pt_report_colls_text(out, &cs, &sg);
		pt_coll_stats_free(&cs);
	}

	const struct pt_table *ops = o->op_detail && s->op_detail.n ? &s->op_detail : &s->operators;
	struct pt_table v = pt_table_view(ops, o->sort, o->top, t);
	if (v.n) {
		struct tspec sp = {"Operator Summary", name_w, 0, 1, 1,
				   ops == &s->op_detail
				       ? "Ratio(%) of a top-level operator is its share of all top-level "
					 "operators' time (GPU: of all device time); an inner row's, of "
					 "its parent's."
				       : "Ratio(%) is a share of the top-level operators' time (GPU: of "
					 "all device time). A row includes its inner operators, which "
					 "have rows of their own, so the column adds up to more than "
					 "100%; a call nested in a call of the same name counts once."};
		put_table(out, t, &v, &sp);
	} else {
		fputs("Operator Summary: no operators found\n\n", out);
	}
	pt_table_view_free(&v);

	v = pt_table_view(&s->kernels, o->sort, o->top, t);
	if (v.n) {
		struct tspec sp = {"Kernel Summary", kernel_w, 0, 0, 0,
				   "Ratio(%) is a share of all kernel time (communication included)."};
		put_table(out, t, &v, &sp);
	} else {
		fputs("Kernel Summary: no GPU kernels found\n\n", out);
	}
	pt_table_view_free(&v);
	pt_report_flops_text(out, t, s, o);

	char note[256];
	v = pt_table_view(&s->memory, o->sort, o->top, t);
	if (v.n) {
		snprintf(note, sizeof note,
			 "CPU Ratio(%%) is a share of the wall time of the %u thread%s that made "
			 "memory calls (%u x the profiled span); GPU, of all device time.",
			 v.threads, v.threads == 1 ? "" : "s", v.threads);
		struct tspec sp = {"Memory Manipulation Summary", name_w, 1, 1, 0,
				   v.threads ? note : "GPU Ratio(%) is a share of all device time."};
		put_table(out, t, &v, &sp);
	}
	pt_table_view_free(&v);

	v = pt_table_view(&s->user_defined, o->sort, o->top, t);
	if (v.n) {
		snprintf(note, sizeof note,
			 "CPU Ratio(%%) is a share of the wall time of the %u thread%s that recorded "
			 "user ranges (%u x the profiled span); GPU, of all device time.",
			 v.threads, v.threads == 1 ? "" : "s", v.threads);
		struct tspec sp = {"UserDefined Summary", name_w, 1, 1, 1, note};
		put_table(out, t, &v, &sp);
	}
	pt_table_view_free(&v);

	/* the Data Pipeline section, and the advisor's rules over this summary
	 * (advisor.h), printed after the Perf Summary */
	pt_report_adv_wait(adv);
	pt_report_data_text(out, t, &adv->dp);
	pt_datapipe_free(&adv->dp);
	put_perf(out, s);
	if (!o->no_advice)
		pt_advice_text(out, &adv->al);
	free(adv);
	put_warnings(out, t);
	fflush(out);
	return ferror(out) ? PT_EIO : 0;
}
