/*
 * gate_metrics.c - the report/record figures of the CI gate and the
 * command-line side shared by report, record and diff (gate_metrics.h).
 * Ratios are fractions (0.2 = 20%; write either in a condition). A figure
 * a trace cannot give (gpu_util without device activity, ips without steps)
 * is "not available" rather than 0, so a gate never passes on no data.
 */
#include "analyze/gate_metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/overhead.h"
#include "proftop/error.h"
#include "model/util.h"

const struct pt_gate_figure_info pt_gate_figure_names[] = {
	{"ips", "throughput: samples/s when steps carry a batch size, else steps/s"},
	{"samples_per_s", "samples/s (only when steps carry a batch size)"},
	{"step_ms", "mean step time (ms)"},
	{"step_p50_ms", "median step time (ms)"},
	{"step_p99_ms", "99th percentile step time (ms)"},
	{"step_max_ms", "longest step (ms)"},
	{"reader_ratio", "Perf Summary reader ratio: data loading / step time (0..1)"},
	{"dataloader_ratio", "Dataloader share of step CPU time (0..1)"},
	{"forward_ratio", "Forward share of step CPU time (0..1)"},
	{"backward_ratio", "Backward share of step CPU time (0..1)"},
	{"optimization_ratio", "Optimization share of step CPU time (0..1)"},
	{"gpu_util", "GPU utilization, mean over devices (0..1; needs device activity)"},
	{"comm_ratio", "communication time / step time (0..1)"},
	{"steps", "number of steps"},
	{"events", "events aggregated"},
	{"dropped", "events lost (full rings or the memory cap)"},
	{"dropped_ratio", "events lost / events produced (0..1)"},
	{"events_per_step", "host events recorded per step"},
	{"overhead_ratio", "estimated profiling overhead / step time (0..1; needs the "
			   "probe's measurement)"},
	{NULL, NULL},
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of the step durations, in ms. */
static int step_percentile_ms(const struct pt_summary *s, double p, double *v)
{
	if (!s->nsteps)
		return PT_ENOTAVAIL;
	uint64_t *d = pt_xmalloc(s->nsteps * sizeof *d);
	for (size_t i = 0; i < s->nsteps; i++)
		d[i] = s->steps[i].dur_ns;
	qsort(d, s->nsteps, sizeof *d, cmp_u64);
	size_t k = (size_t)ceil(p * (double)s->nsteps);
	k = k ? k - 1 : 0;
	if (k >= s->nsteps)
		k = s->nsteps - 1;
	*v = (double)d[k] / 1e6;
	free(d);
	return 0;
}

static int phase_share(const struct pt_summary *s, enum pt_ms_row row, double *v)
{
	uint64_t base = s->model[PT_MS_STEP].cpu.total_ns;
	if (!base)
		return PT_ENOTAVAIL;
	*v = (double)s->model[row].cpu.total_ns / (double)base;
	return 0;
}

static uint64_t dropped_of(const struct pt_trace *t)
{
	return t->warnings[PT_WARN_STORE_DROPPED] + pt_trace_source_lost(t);
}

int pt_gate_figure(const struct pt_gate_figures *f, const char *name, double *v)
{
	const struct pt_summary *s = f->s;
	const struct pt_perf *p = &s->perf;
	if (!strcmp(name, "ips") || !strcmp(name, "samples_per_s")) {
		if (!p->steps || (name[0] == 's' && !p->ips_samples))
			return PT_ENOTAVAIL;
		*v = p->ips_avg;
		return 0;
	}
	if (!strcmp(name, "step_ms")) {
		if (!p->batch.n)
			return PT_ENOTAVAIL;
		*v = (double)p->batch.total_ns / (double)p->batch.n / 1e6;
		return 0;
	}
	if (!strcmp(name, "step_p50_ms"))
		return step_percentile_ms(s, 0.50, v);
	if (!strcmp(name, "step_p99_ms"))
		return step_percentile_ms(s, 0.99, v);
	if (!strcmp(name, "step_max_ms")) {
		if (!p->batch.n)
			return PT_ENOTAVAIL;
		*v = (double)p->batch.max_ns / 1e6;
		return 0;
	}
	if (!strcmp(name, "reader_ratio")) {
		/* without Dataloader events the ratio is not applicable, not 0 */
		if (!p->steps || !p->has_reader)
			return PT_ENOTAVAIL;
		*v = p->reader_ratio_pct / 100.0;
		return 0;
	}
	if (!strcmp(name, "dataloader_ratio"))
		return phase_share(s, PT_MS_DATALOADER, v);
	if (!strcmp(name, "forward_ratio"))
		return phase_share(s, PT_MS_FORWARD, v);
	if (!strcmp(name, "backward_ratio"))
		return phase_share(s, PT_MS_BACKWARD, v);
	if (!strcmp(name, "optimization_ratio"))
		return phase_share(s, PT_MS_OPTIMIZATION, v);
	if (!strcmp(name, "gpu_util")) {
		if (!s->ndevices)
			return PT_ENOTAVAIL;
		double sum = 0;
		for (size_t i = 0; i < s->ndevices; i++)
			sum += s->devices[i].util_pct;
		*v = sum / (double)s->ndevices / 100.0;
		return 0;
	}
	if (!strcmp(name, "comm_ratio")) {
		if (!s->dist.step_ns)
			return PT_ENOTAVAIL;
		*v = (double)s->dist.comm_ns / (double)s->dist.step_ns;
		return 0;
	}
	if (!strcmp(name, "steps")) {
		*v = (double)p->steps;
		return 0;
	}
	if (!strcmp(name, "events")) {
		*v = (double)s->events;
		return 0;
	}
	if (!strcmp(name, "dropped") || !strcmp(name, "dropped_ratio")) {
		if (!f->t)
			return PT_ENOTAVAIL;
		uint64_t lost = dropped_of(f->t);
		if (name[7] == '\0') {
			*v = (double)lost;
			return 0;
		}
		uint64_t produced = f->t->events_seen + pt_trace_source_lost(f->t);
		*v = produced ? (double)lost / (double)produced : 0.0;
		return 0;
	}
	if (!strcmp(name, "events_per_step") || !strcmp(name, "overhead_ratio")) {
		struct pt_overhead o;
		pt_overhead_of(&o, f->t, s);
		*v = name[0] == 'e' ? o.events_per_step : o.share;
		return isnan(*v) ? PT_ENOTAVAIL : 0;
	}
	return PT_ENOENT;
}

int pt_gate_metric(void *ctx, const char *name, double *v)
{
	return pt_gate_figure(ctx, name, v);
}

int pt_gate_report_name(void *ctx, const char *name, double *v)
{
	(void)ctx;
	for (size_t i = 0; pt_gate_figure_names[i].name; i++)
		if (!strcmp(pt_gate_figure_names[i].name, name)) {
			*v = 0;
			return 0;
		}
	return PT_ENOENT;
}

void pt_gate_list_figures(FILE *out, const char *indent)
{
	for (size_t i = 0; pt_gate_figure_names[i].name; i++)
		fprintf(out, "%s%-20s %s\n", indent, pt_gate_figure_names[i].name,
			pt_gate_figure_names[i].help);
}

void pt_gate_list_report_figures(FILE *out)
{
	fputs("Known figures:\n", out);
	pt_gate_list_figures(out, "  ");
}

int pt_gate_cli_parse(const char *expr, struct pt_gate **out, FILE *err)
{
	char msg[256];
	if (!pt_gate_parse(expr, out, msg, sizeof msg))
		return 0;
	fprintf(err, "proftop: --fail-if: %s\n", msg);
	/* Echo the condition (escaped: it may hold anything) with a caret. */
	size_t col = 0;
	if (!strncmp(msg, "at column ", 10))
		col = (size_t)strtoul(msg + 10, NULL, 10);
	size_t n = strlen(expr);
	if (col && n < 200) {
		char esc[1024];
		int plain = 1;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)expr[i] < 0x20 || (unsigned char)expr[i] >= 0x7f)
				plain = 0;
		pt_escape_term(esc, sizeof esc, expr, n, 0, PT_ESC_ASCII);
		fprintf(err, "  %s\n", esc);
		if (plain)
			fprintf(err, "  %*s^\n", (int)(col - 1), "");
	}
	return PT_EXIT_USAGE;
}

static int report_err(int rc, const char *why, void (*list)(FILE *out), FILE *err)
{
	fprintf(err, "proftop: --fail-if: %s\n", why);
	if (rc == PT_ENOENT) {
		if (list)
			list(err);
		return PT_EXIT_USAGE;
	}
	return PT_EXIT_ERROR;
}

int pt_gate_cli_check_names(const struct pt_gate *g, pt_metric_fn names_fn, void *ctx,
			    void (*list)(FILE *out), FILE *err)
{
	char why[256];
	int rc = pt_gate_eval(g, names_fn, ctx, why, sizeof why);
	if (rc == PT_ENOENT)
		return report_err(rc, why, list, err);
	return 0;
}

int pt_gate_cli_eval(const struct pt_gate *g, pt_metric_fn fn, void *ctx,
		     void (*list)(FILE *out), FILE *err)
{
	char why[512];
	int rc = pt_gate_eval(g, fn, ctx, why, sizeof why);
	if (rc < 0)
		return report_err(rc, why, list, err);
	if (rc == 0)
		return PT_EXIT_OK;
	char esc[1024];
	pt_escape_term(esc, sizeof esc, why, strlen(why), 0, 0);
	fprintf(err, "proftop: --fail-if: %s\n", esc);
	return PT_EXIT_GATE;
}
