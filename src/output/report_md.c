/*
 * report_md.c - the summary as GitHub Markdown (`proftop report --format md`)
 * for CI logs and pull requests: a heading with the trace's facts, then pipe
 * tables for the Perf, Model, Overview, Distributed, Rank, Operator and
 * Kernel summaries. Numbers are formatted as in the text report (ms, %.2f).
 * Names from the trace are escaped twice: pt_escape_term first (control
 * characters, invalid UTF-8 become \xNN), then every character Markdown or
 * HTML would act on gets a backslash, so a name can neither break a table
 * (|), open code (`) or emphasis, nor inject HTML (<).
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "analyze/overhead.h"
#include "proftop/error.h"
#include "proftop/ranks.h"
#include "proftop/report.h"
#include "output/report_int.h"
#include "model/util.h"

#define MD_TOP_DEFAULT 20 /* rows per table when --top is not given */
#define MD_NAME_COLS 200  /* longer names are cut with "..." */

static double ms_of(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* Writes s escaped for a Markdown table cell (see the file comment). */
static void md_text(FILE *out, const char *s, size_t len)
{
	char esc[4 * MD_NAME_COLS + 16];
	pt_escape_term(esc, sizeof esc, s, len, MD_NAME_COLS, 0);
	for (const char *p = esc; *p; p++) {
		if (strchr("\\`*_[]<>|~&#!", *p))
			putc('\\', out);
		putc(*p, out);
	}
}

static void md_name(FILE *out, const struct pt_trace *t, uint32_t id)
{
	const char *s = pt_trace_str(t, id);
	md_text(out, s ? s : "", s ? strlen(s) : 0);
}

/* A header row and its alignment row: the first column left, the rest right. */
static void md_head(FILE *out, const char *const *cols, int n)
{
	for (int i = 0; i < n; i++)
		fprintf(out, "| %s ", cols[i]);
	fputs("|\n", out);
	for (int i = 0; i < n; i++)
		fputs(i ? "| ---: " : "| :--- ", out);
	fputs("|\n", out);
}

/* Total / Avg / Max / Min / Ratio(%) as five cells; "-" where nothing was
 * counted (not applicable), as the text report. */
static void md_stat(FILE *out, const struct pt_stat *st, double pct)
{
	if (!st->n) {
		fprintf(out, "| %.2f | - | - | - | %.2f ", ms_of(st->total_ns), pct);
		return;
	}
	double avg = ms_of(st->total_ns) / (double)st->n;
	fprintf(out, "| %.2f | %.2f | %.2f | %.2f | %.2f ", ms_of(st->total_ns), avg,
		ms_of(st->max_ns), ms_of(pt_stat_min(st)), pct);
}

static void md_header(FILE *out, const struct pt_trace *t, const struct pt_summary *s)
{
	const char *source = t->source ? t->source : "(unnamed)";
	fputs("# proftop report: ", out);
	md_text(out, source, strlen(source));
	fputs("\n\n", out);
	uint64_t by_source = pt_trace_source_lost(t);
	uint64_t by_cap = t->warnings[PT_WARN_STORE_DROPPED];
	fprintf(out, "- Events: %" PRIu64 " kept of %" PRIu64 " seen, %" PRIu64 " dropped\n",
		pt_store_count(t->store), t->events_seen, by_source + by_cap);
	if (by_source) {
		char causes[200];
		pt_trace_loss_causes(t, causes, sizeof causes, 0);
		fprintf(out, "- Lost by the source: %s\n", causes);
	}
	for (uint32_t i = 0; i < t->nnotes; i++) {
		const char *n = pt_trace_note_text(t, i);
		fputs("- Note: ", out);
		md_text(out, n, strlen(n));
		putc('\n', out);
	}
	uint64_t span = s->t1_ns > s->t0_ns ? s->t1_ns - s->t0_ns : 0;
	fprintf(out, "- Span: %.2f ms\n", ms_of(span));
	if (s->nsteps) {
		int64_t lo = s->steps[0].number, hi = s->steps[0].number;
		for (size_t i = 1; i < s->nsteps; i++) {
			lo = s->steps[i].number < lo ? s->steps[i].number : lo;
			hi = s->steps[i].number > hi ? s->steps[i].number : hi;
		}
		fprintf(out, "- Steps: %zu (%" PRId64 " to %" PRId64 ")\n", s->nsteps, lo, hi);
	} else {
		fputs("- Steps: none\n", out);
	}
	if (t->rank >= 0) {
		fprintf(out, "- Rank: %" PRId64, t->rank);
		if (t->world_size > 0)
			fprintf(out, " of %" PRId64, t->world_size);
		putc('\n', out);
	}
	for (size_t i = 0; i < s->ndevices; i++) {
		double u = s->devices[i].util_pct;
		fprintf(out, "- GPU%" PRId32 " utilization: %.2f%%\n", s->devices[i].device,
			u == u ? u : 0.0);
	}
	struct pt_overhead oh;
	char line[160];
	pt_overhead_of(&oh, t, s);
	if (pt_overhead_format(&oh, line, sizeof line))
		fprintf(out, "- %c%s\n", line[0] - 32, line + 1);
	putc('\n', out);
}

static void md_perf(FILE *out, const struct pt_summary *s)
{
	const struct pt_perf *p = &s->perf;
	fputs("## Perf Summary\n\n", out);
	if (!p->steps) {
		fputs("No steps found.\n\n", out);
		return;
	}
	double rr = p->reader_ratio_pct;
	if (p->has_reader)
		fprintf(out, "Reader Ratio: %.3f%%. ", rr == rr ? rr : 0.0);
	else
		fputs("Reader Ratio: n/a (no Dataloader events in the steps). ", out);
	fprintf(out, "Time unit: s, IPS unit: %s.\n\n", p->ips_samples ? "samples/s" : "steps/s");
	md_head(out, (const char *const[]){"", "avg", "max", "min"}, 4);
	const struct pt_stat *st[2] = {&p->reader, &p->batch};
	const char *names[2] = {"reader_cost", "batch_cost"};
	if (!p->has_reader)
		fputs("| reader_cost | n/a | n/a | n/a |\n", out);
	for (int i = !p->has_reader; i < 2; i++)
		fprintf(out, "| %s | %.5f | %.5f | %.5f |\n", names[i],
			st[i]->n ? (double)st[i]->total_ns / 1e9 / (double)st[i]->n : 0.0,
			(double)st[i]->max_ns / 1e9, (double)pt_stat_min(st[i]) / 1e9);
	fprintf(out, "| ips | %.5f | %.5f | %.5f |\n\n", p->ips_avg == p->ips_avg ? p->ips_avg : 0.0,
		p->ips_max == p->ips_max ? p->ips_max : 0.0,
		p->ips_min == p->ips_min ? p->ips_min : 0.0);
}

static const char *const stat_cols[] = {"Name",      "Calls",     "CPU Total", "CPU Avg",
					"CPU Max",   "CPU Min",   "CPU %",     "GPU Total",
					"GPU Avg",   "GPU Max",   "GPU Min",   "GPU %"};

static void md_model(FILE *out, const struct pt_summary *s)
{
	static const char *const names[PT_MS__COUNT] = {"ProfileStep",	"Dataloader",
							"Forward",	"Backward",
							"Optimization", "Others"};
	fputs("## Model Summary\n\n", out);
	if (!s->nsteps && !s->model[PT_MS_STEP].calls) {
		fputs("No steps found.\n\n", out);
		return;
	}
	fputs("Time unit: ms.\n\n", out);
	md_head(out, stat_cols, 12);
	uint64_t cbase = s->model[PT_MS_STEP].cpu.total_ns;
	uint64_t gbase = s->model[PT_MS_STEP].gpu.total_ns;
	for (int r = 0; r < PT_MS__COUNT; r++) {
		const struct pt_model_row *m = &s->model[r];
		if (r == PT_MS_OTHERS) {
			fprintf(out, "| %s | - | %.2f | - | - | - | %.2f | %.2f | - | - | - | %.2f |\n",
				names[r], ms_of(m->cpu.total_ns), pt_pct(m->cpu.total_ns, cbase),
				ms_of(m->gpu.total_ns), pt_pct(m->gpu.total_ns, gbase));
			continue;
		}
		fprintf(out, "| %s | %" PRIu64 " ", names[r], m->calls);
		md_stat(out, &m->cpu, pt_pct(m->cpu.total_ns, cbase));
		md_stat(out, &m->gpu, pt_pct(m->gpu.total_ns, gbase));
		fputs("|\n", out);
	}
	putc('\n', out);
}

static int md_kind_shown(int k)
{
	return k != PT_KIND_INSTANT && k != PT_KIND_COUNTER && k != PT_KIND_OTHER;
}

static void md_overview(FILE *out, const struct pt_summary *s)
{
	int host[PT_KIND__COUNT], nh = 0;
	for (int k = 0; k < PT_KIND__COUNT; k++)
		if (s->overview[k].calls && md_kind_shown(k) && k != PT_KIND_PROFILE_STEP &&
		    !pt_kind_is_device((enum pt_kind)k))
			host[nh++] = k;
	/* as the text report: host kinds by time, largest first */
	for (int i = 1; i < nh; i++) {
		int k = host[i], j = i;
		while (j > 0 && s->overview[host[j - 1]].union_ns < s->overview[k].union_ns) {
			host[j] = host[j - 1];
			j--;
		}
		host[j] = k;
	}
	int has_step = s->overview[PT_KIND_PROFILE_STEP].calls > 0;
	fputs("## Overview Summary\n\n", out);
	fputs(has_step ? "Time unit: ms; times within the steps, ratios of ProfileStep time; "
			 "overlapping events of a type merged; the phases are the Model "
			 "Summary's figures.\n\n"
		       : "Time unit: ms; no ProfileStep: times and ratios over the profiled "
			 "span.\n\n",
	      out);
	md_head(out, (const char *const[]){"Event Type", "Calls", "Time", "Ratio (%)"}, 4);
	for (int i = -1; i < nh; i++) {
		int k = i < 0 ? PT_KIND_PROFILE_STEP : host[i];
		if (i < 0 && !has_step)
			continue;
		fprintf(out, "| %s (CPU) | %" PRIu64 " | %.2f | %.2f |\n",
			pt_kind_name((enum pt_kind)k), s->overview[k].calls,
			ms_of(s->overview[k].union_ns), pt_overview_pct(s, k));
	}
	static const int dev_kinds[] = {PT_KIND_KERNEL, PT_KIND_MEMCPY, PT_KIND_MEMSET,
					PT_KIND_COMMUNICATION};
	for (size_t i = 0; i < sizeof dev_kinds / sizeof dev_kinds[0]; i++) {
		int k = dev_kinds[i];
		if (s->overview[k].calls)
			fprintf(out, "| %s (GPU) | %" PRIu64 " | %.2f | %.2f |\n",
				pt_kind_name((enum pt_kind)k), s->overview[k].calls,
				ms_of(s->overview[k].union_ns), pt_overview_pct(s, k));
	}
	putc('\n', out);
}

static void md_distributed(FILE *out, const struct pt_summary *s, const struct pt_report_opts *o)
{
	struct pt_distributed dd;
	pt_report_dist(s, o, &dd);
	const struct pt_distributed *d = &dd;
	if (!d->comm_ns)
		return;
	fputs("## Distributed Summary\n\nTime unit: ms.\n\n", out);
	md_head(out, (const char *const[]){"Name", "Total Time", "Ratio (%)"}, 3);
	const char *names[4] = {"ProfileStep", "Communication", "Computation", "Overlap"};
	uint64_t vals[4] = {d->step_ns, d->comm_ns, d->comp_ns, d->overlap_ns};
	for (int i = 0; i < 4; i++)
		fprintf(out, "| %s | %.2f | %.2f |\n", names[i], ms_of(vals[i]),
			pt_pct(vals[i], d->step_ns));
	fprintf(out, "\nOverlap is %.2f%% of Communication (HTA's overlap ratio).\n",
		pt_pct(d->overlap_ns, d->comm_ns));
	if (d->comm_from_host)
		fputs("\nNo communication kernels on a device; Communication is the time of "
		      "host-side communication calls.\n",
		      out);
	putc('\n', out);
}

static void md_pct_cell(FILE *out, double share01, int shown)
{
	if (shown)
		fprintf(out, "| %.2f ", share01 * 100.0);
	else
		fputs("| - ", out);
}

static void md_ranks(FILE *out, const struct pt_ranks *r)
{
	if (!r || r->n < 2)
		return;
	int samples = 1, hosts = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (r->r[i].steps && !(r->r[i].samples_per_s > 0))
			samples = 0;
		hosts |= r->r[i].host[0] != 0;
	}
	fprintf(out, "## Rank Summary\n\nTime unit: ms; IPS in %s.\n\n",
		samples ? "samples/s" : "steps/s");
	static const char *const head[] = {"Rank",     "Host",	      "Steps",	     "Avg",
					   "P50",      "Max",	      "IPS",	     "Reader (%)",
					   "Comm (%)", "CommOvl (%)", "GPU Util (%)"};
	if (hosts) {
		md_head(out, head, 11);
	} else { /* no host names: no Host column */
		const char *h[10] = {head[0]};
		memcpy(h + 1, head + 2, 9 * sizeof *h);
		md_head(out, h, 10);
	}
	for (size_t i = 0; i < r->n; i++) {
		const struct pt_rank_stat *s = &r->r[i];
		int slow = i == r->slowest && s->steps && r->spread > 0;
		fputs("| ", out);
		md_text(out, s->name, strlen(s->name));
		fputs(slow ? " (slowest) " : " ", out);
		if (hosts) {
			fputs("| ", out);
			md_text(out, s->host, strlen(s->host));
			putc(' ', out);
		}
		fprintf(out, "| %" PRIu64 " ", s->steps);
		if (s->steps)
			fprintf(out, "| %.2f | %.2f | %.2f | %.2f ", s->step_avg_ms, s->step_p50_ms,
				s->step_max_ms, samples ? s->samples_per_s : s->ips);
		else
			fputs("| - | - | - | - ", out);
		md_pct_cell(out, s->reader_ratio, s->steps > 0);
		md_pct_cell(out, s->comm_share, 1);
		md_pct_cell(out, s->comm_overlap, s->comm_share > 0);
		if (s->gpu_util_pct >= 0)
			fprintf(out, "| %.2f |\n", s->gpu_util_pct);
		else
			fputs("| - |\n", out);
	}
	if (r->spread > 0)
		fprintf(out, "\nSpread (slowest / median step time): %.2fx.\n", r->spread);
	putc('\n', out);
}

static void md_table(FILE *out, const struct pt_trace *t, const struct pt_table *src,
		     const struct pt_report_opts *o, const char *title, int with_cpu)
{
	size_t top = o->top ? o->top : MD_TOP_DEFAULT;
	struct pt_table v = pt_table_view(src, o->sort, top, t);
	fprintf(out, "## %s\n\n", title);
	if (!v.n) {
		fputs("None found.\n\n", out);
		goto out;
	}
	if (v.n < src->n)
		fprintf(out, "Top %zu of %zu. ", v.n, src->n);
	fputs("Time unit: ms.\n\n", out);
	if (with_cpu)
		md_head(out, stat_cols, 12);
	else
		md_head(out, (const char *const[]){"Name", "Calls", "GPU Total", "GPU Avg", "GPU Max",
						   "GPU Min", "GPU %"},
			7);
	for (size_t i = 0; i < v.n; i++) {
		const struct pt_row *r = &v.rows[i];
		fputs("| ", out);
		md_name(out, t, r->name_id);
		fprintf(out, " | %" PRIu64 " ", pt_row_calls(r));
		if (with_cpu) {
			if (r->is_device)
				fputs("| - | - | - | - | - ", out);
			else
				md_stat(out, &r->cpu, pt_row_cpu_pct(&v, r));
		}
		md_stat(out, &r->gpu, pt_row_gpu_pct(&v, r));
		fputs("|\n", out);
	}
	putc('\n', out);
out:
	pt_table_view_free(&v);
}

static void md_warnings(FILE *out, const struct pt_trace *t)
{
	if (!pt_trace_warn_total(t))
		return;
	fputs("## Warnings\n\n", out);
	for (int w = 0; w < PT_WARN__COUNT; w++)
		if (t->warnings[w])
			fprintf(out, "- %" PRIu64 " %s\n", t->warnings[w],
				pt_warn_text((enum pt_warn)w));
	putc('\n', out);
}

int pt_report_md(FILE *out, const struct pt_trace *t, const struct pt_summary *s,
		 const struct pt_report_opts *o)
{
	struct pt_report_opts defaults;
	if (!o) {
		pt_report_opts_init(&defaults);
		o = &defaults;
	}
	md_header(out, t, s);
	md_perf(out, s);
	md_model(out, s);
	struct pt_summary ov;
	md_overview(out, pt_report_overview_of(s, o, &ov));
	md_distributed(out, s, o);
	md_ranks(out, o->ranks);
	md_table(out, t, &s->operators, o, "Operator Summary", 1);
	md_table(out, t, &s->kernels, o, "Kernel Summary", 0);
	md_warnings(out, t);
	fflush(out);
	return ferror(out) ? PT_EIO : 0;
}
