/*
 * report_json.c - the summary as one JSON object (pt_report_json), for
 * machines: CI checks, dashboards, diffs between runs. The schema is stable;
 * additions get new keys, changes a new "schema" value.
 *
 * Schema "proftop.report/2" (times in ms with up to 6 decimals, exact from
 * nanoseconds; percentages 0-100, each of its table's documented base; a
 * figure that does not apply is null; never NaN):
 *
 * {
 *   "schema": "proftop.report/2",
 *   "source": "path or session",
 *   "events": N,               events kept in the store
 *   "events_seen": N,          events the source delivered
 *   "dropped": {"by_source": N, "by_memory_cap": N, "pct": x, "rings_full": N,
 *      "overwritten_while_detached": N, "missed_by_reader": N},
 *                              events lost by the source (full rings, before
 *                              proftop read them) and by the memory cap
 *                              (--max-mem, oldest first; also of the session
 *                              that wrote a re-read export); pct of all produced
 *   "span_ms": x,              time covered by the summarized events
 *   "steps": N,                ProfileSteps summarized
 *   "rank": N | null, "world_size": N | null,
 *   "model_summary": [         always these six rows, in this order:
 *     {"name": "ProfileStep" | "Dataloader" | "Forward" | "Backward" |
 *              "Optimization" | "Others",
 *      "calls", "cpu_total_ms", "cpu_avg_ms", "cpu_max_ms", "cpu_min_ms",
 *      "cpu_ratio_pct", "gpu_total_ms", "gpu_avg_ms", "gpu_max_ms",
 *      "gpu_min_ms", "gpu_ratio_pct"} ],  ratios are shares of ProfileStep's total;
 *                              all null without steps, Others' calls and spread null,
 *                              Backward adds "cpu_busy_ms" (its events' union)
 *   "perf_summary": {"reader_ratio_pct", "reader_cost_ms": {"avg","max","min"},
 *      "batch_cost_ms": {"avg","max","min"}, "ips": {"avg","max","min"},
 *      "ips_unit": "steps/s" | "samples/s",
 *      "tokens_per_s": {"avg","max","min"} (only when the steps carry token counts),
 *      "compile": {"steps", "steps_ms", "compile_ms", "compiles", "recompiles",
 *         "graph_breaks", "left_out"}},  only when a step compiled
 *                              (torch.compile) or a graph break was found;
 *                              left_out: those steps are not in the figures
 *   "operators", "kernels", "user_defined", "memory": [
 *     {"name", "calls", "cpu_total_ms", "cpu_self_ms", "cpu_avg_ms", "cpu_max_ms",
 *      "cpu_min_ms", "cpu_ratio_pct", "gpu_total_ms", "gpu_avg_ms", "gpu_max_ms",
 *      "gpu_min_ms", "gpu_ratio_pct"} ],  sorted by --sort, cut to --top
 *   "op_detail": [ {"name", "depth", "kind", "calls", "cpu_total_ms",
 *      "gpu_total_ms"} ],      operator tree in pre-order (--top cuts top-level ops)
 *   "overview": {"<kind>": {"calls", "cpu_ms" (host kinds) | "gpu_ms" (device
 *      kinds), "ratio_pct"}, ...},  one key per kind with calls, Paddle's names
 *   "distributed": {"step_ms", "communication_ms", "computation_ms", "overlap_ms",
 *      "communication_pct", "computation_pct", "overlap_pct",
 *      "communication_overlapped_pct" (overlap / communication), "from_host_calls",
 *      "within_steps", "msprof_overlap_analysis": null | {"computing_ms",
 *      "communication_ms", "communication_not_overlapped_ms",
 *      "largest_difference_pct"}},
 *   "device": [ {"device", "utilization_pct", "busy_ms", "kernels", "memcpys",
 *      "memsets", "memcpy_bytes"} ],  GPUs; sampled CPU rows come first as
 *      {"device": "CPU(Process)" | "CPU(System)", "utilization_pct", "samples"},
 *   "steps_detail": [ {"number", "start_ms" (from the span's start),
 *      "batch_cost_ms", "reader_cost_ms", "samples"} ],  a step that compiled
 *      adds "compile_ms", "compiles", "recompiles", "graph_breaks"
 *   "advice": [ {"key", "severity": "warning" | "critical", "title", "evidence",
 *      "suggestion", "value", "threshold", "unit": "%" | "x"} ],  the advisor's
 *      findings (advisor.h), critical first; [] when none or --no-advice
 *   "warnings": {"<key>": count, ...},  non-zero counters only
 *   "notes": ["...", ...],  what the sources said of themselves (e.g. how the
 *                           Python helper counted steps), in the order seen
 *   "events_dropped": N        by the memory cap and by the source
 * }
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/colls.h"
#include "proftop/counters.h"
#include "proftop/datapipe.h"
#include "proftop/error.h"
#include "proftop/report.h"
#include "output/advisor_int.h"
#include "analyze/overhead.h"
#include "output/report_int.h"
#include "model/util.h"

static const char *const ms_names[PT_MS__COUNT] = {
	"ProfileStep", "Dataloader", "Forward", "Backward", "Optimization", "Others",
};

/* Drops trailing zeros (and a bare '.') of a fixed-point number at p. */
static void trim_zeros(struct pt_buf *b, size_t start)
{
	char *p = b->p + start;
	if (!strchr(p, '.'))
		return;
	size_t n = b->len - start;
	while (n > 1 && p[n - 1] == '0')
		n--;
	if (n > 1 && p[n - 1] == '.')
		n--;
	b->len = start + n;
	b->p[b->len] = 0;
}

/* Exact ns -> ms with up to 6 decimals. */
static void j_ms(struct pt_buf *b, uint64_t ns)
{
	size_t start = b->len;
	pt_buf_printf(b, "%" PRIu64 ".%06" PRIu64, ns / 1000000, ns % 1000000);
	trim_zeros(b, start);
}

static void j_num(struct pt_buf *b, double v)
{
	if (!(v == v) || v > 1e300 || v < -1e300)
		v = 0; /* JSON has no NaN or Infinity */
	size_t start = b->len;
	pt_buf_printf(b, "%.6f", v);
	trim_zeros(b, start);
	if (!strcmp(b->p + start, "-0")) {
		b->len = start;
		pt_buf_putc(b, '0');
	}
}

static void j_key(struct pt_buf *b, int *first, const char *key)
{
	if (!*first)
		pt_buf_putc(b, ',');
	*first = 0;
	pt_buf_printf(b, "\"%s\":", key);
}

/* A top-level key on a line of its own. */
static void top_key(struct pt_buf *b, int *first, const char *key)
{
	pt_buf_put(b, *first ? "\n  " : ",\n  ", *first ? 3 : 4);
	*first = 0;
	pt_buf_printf(b, "\"%s\": ", key);
}

static void list_close(struct pt_buf *b, size_t n)
{
	if (n)
		pt_buf_put(b, "\n  ]", 4);
	else
		pt_buf_putc(b, ']');
}

static void kv_ms(struct pt_buf *b, int *first, const char *key, uint64_t ns)
{
	j_key(b, first, key);
	j_ms(b, ns);
}

static void kv_num(struct pt_buf *b, int *first, const char *key, double v)
{
	j_key(b, first, key);
	j_num(b, v);
}

static void kv_u64(struct pt_buf *b, int *first, const char *key, uint64_t v)
{
	j_key(b, first, key);
	pt_buf_printf(b, "%" PRIu64, v);
}

static void kv_null(struct pt_buf *b, int *first, const char *key)
{
	j_key(b, first, key);
	pt_buf_put(b, "null", 4);
}

static void kv_name(struct pt_buf *b, int *first, const struct pt_trace *t, uint32_t id)
{
	j_key(b, first, "name");
	pt_buf_json_str(b, pt_trace_str(t, id), pt_strtab_len(t->strings, id));
}

static double avg_ms(const struct pt_stat *st)
{
	return st->n ? (double)st->total_ns / 1e6 / (double)st->n : 0.0;
}

/*
 * The five stat columns; prefix "cpu" or "gpu". mode 0: as counted (avg,
 * max and min null when nothing was counted); 1: total and ratio only, the
 * spread null (Others); 2: all null (not applicable: a device row's CPU
 * columns, a summary without steps).
 */
static void kv_stat(struct pt_buf *b, int *first, const char *prefix, const struct pt_stat *st,
		    double pct, int mode, const uint64_t *self_ns)
{
	char key[32];
	snprintf(key, sizeof key, "%s_total_ms", prefix);
	if (mode == 2)
		kv_null(b, first, key);
	else
		kv_ms(b, first, key, st->total_ns);
	if (self_ns) { /* the table rows' "cpu_self_ms" */
		snprintf(key, sizeof key, "%s_self_ms", prefix);
		if (mode == 2)
			kv_null(b, first, key);
		else
			kv_ms(b, first, key, *self_ns);
	}
	static const char *const spread[3] = {"avg", "max", "min"};
	for (int i = 0; i < 3; i++) {
		snprintf(key, sizeof key, "%s_%s_ms", prefix, spread[i]);
		if (mode != 0 || !st->n)
			kv_null(b, first, key);
		else if (i == 0)
			kv_num(b, first, key, avg_ms(st));
		else
			kv_ms(b, first, key, i == 1 ? st->max_ns : st->min_ns);
	}
	snprintf(key, sizeof key, "%s_ratio_pct", prefix);
	if (mode == 2)
		kv_null(b, first, key);
	else
		kv_num(b, first, key, pct);
}

static void j_model(struct pt_buf *b, const struct pt_summary *s)
{
	uint64_t cbase = s->model[PT_MS_STEP].cpu.total_ns;
	uint64_t gbase = s->model[PT_MS_STEP].gpu.total_ns;
	pt_buf_put(b, ",\n  \"model_summary\": [", 22);
	for (int r = 0; r < PT_MS__COUNT; r++) {
		const struct pt_model_row *m = &s->model[r];
		int first = 1;
		/* without steps nothing here applies; Others has no calls or spread */
		int mode = !s->nsteps ? 2 : r == PT_MS_OTHERS ? 1 : 0;
		pt_buf_put(b, r ? ",\n    {" : "\n    {", r ? 7 : 6);
		j_key(b, &first, "name");
		pt_buf_printf(b, "\"%s\"", ms_names[r]);
		if (mode)
			kv_null(b, &first, "calls");
		else
			kv_u64(b, &first, "calls", m->calls);
		kv_stat(b, &first, "cpu", &m->cpu, pt_pct(m->cpu.total_ns, cbase), mode, NULL);
		kv_stat(b, &first, "gpu", &m->gpu, pt_pct(m->gpu.total_ns, gbase), mode, NULL);
		if (r == PT_MS_BACKWARD) {
			/* the span is the figure; what its events take, by its own name */
			if (mode)
				kv_null(b, &first, "cpu_busy_ms");
			else
				kv_ms(b, &first, "cpu_busy_ms", s->backward_busy_ns);
		}
		pt_buf_putc(b, '}');
	}
	list_close(b, PT_MS__COUNT);
}

static void j_minmax(struct pt_buf *b, int *first, const char *key, double avg, double max,
		     double min)
{
	j_key(b, first, key);
	int f = 1;
	pt_buf_putc(b, '{');
	kv_num(b, &f, "avg", avg);
	kv_num(b, &f, "max", max);
	kv_num(b, &f, "min", min);
	pt_buf_putc(b, '}');
}

/* torch.compile's steps (struct pt_perf), when there were any */
static void j_compile(struct pt_buf *b, int *first, const struct pt_perf *p)
{
	if (!p->compile_steps && !p->graph_breaks)
		return;
	j_key(b, first, "compile");
	int f = 1;
	pt_buf_putc(b, '{');
	kv_u64(b, &f, "steps", p->compile_steps);
	kv_ms(b, &f, "steps_ms", p->compile_step_ns);
	kv_ms(b, &f, "compile_ms", p->compile_ns);
	kv_u64(b, &f, "compiles", p->compiles);
	kv_u64(b, &f, "recompiles", p->recompiles);
	kv_u64(b, &f, "graph_breaks", p->graph_breaks);
	j_key(b, &f, "left_out");
	pt_buf_printf(b, "%s", p->compile_left_out ? "true" : "false");
	pt_buf_putc(b, '}');
}

static void j_perf(struct pt_buf *b, const struct pt_summary *s)
{
	const struct pt_perf *p = &s->perf;
	int first = 1;
	pt_buf_put(b, ",\n  \"perf_summary\": {", 21);
	if (!p->steps) { /* no steps: none of it applies */
		static const char *const keys[5] = {"reader_ratio_pct", "reader_cost_ms",
						    "batch_cost_ms", "ips", "ips_unit"};
		for (int i = 0; i < 5; i++)
			kv_null(b, &first, keys[i]);
		pt_buf_putc(b, '}');
		return;
	}
	if (p->has_reader) {
		kv_num(b, &first, "reader_ratio_pct", p->reader_ratio_pct);
		j_minmax(b, &first, "reader_cost_ms", avg_ms(&p->reader),
			 (double)p->reader.max_ns / 1e6, (double)pt_stat_min(&p->reader) / 1e6);
	} else { /* no Dataloader events: not applicable, not zero */
		kv_null(b, &first, "reader_ratio_pct");
		kv_null(b, &first, "reader_cost_ms");
	}
	j_minmax(b, &first, "batch_cost_ms", avg_ms(&p->batch), (double)p->batch.max_ns / 1e6,
		 (double)pt_stat_min(&p->batch) / 1e6);
	j_minmax(b, &first, "ips", p->ips_avg, p->ips_max, p->ips_min);
	j_key(b, &first, "ips_unit");
	pt_buf_printf(b, "\"%s\"", p->ips_samples ? "samples/s" : "steps/s");
	if (p->has_tokens)
		j_minmax(b, &first, "tokens_per_s", p->tokens_avg, p->tokens_max, p->tokens_min);
	j_compile(b, &first, p);
	pt_buf_putc(b, '}');
}

static void j_rows(struct pt_buf *b, const char *key, const struct pt_trace *t,
		   const struct pt_table *src, const struct pt_report_opts *o)
{
	struct pt_table v = pt_table_view(src, o->sort, o->top, t);
	pt_buf_printf(b, ",\n  \"%s\": [", key);
	for (size_t i = 0; i < v.n; i++) {
		const struct pt_row *r = &v.rows[i];
		int first = 1;
		pt_buf_put(b, i ? ",\n    {" : "\n    {", i ? 7 : 6);
		kv_name(b, &first, t, r->name_id);
		kv_u64(b, &first, "calls", pt_row_calls(r));
		/* a device row has no CPU side: null, as the text's "-" */
		int cmode = r->is_device ? 2 : 0;
		kv_stat(b, &first, "cpu", &r->cpu, pt_row_cpu_pct(&v, r), cmode, &r->cpu_self_ns);
		kv_stat(b, &first, "gpu", &r->gpu, pt_row_gpu_pct(&v, r), 0, NULL);
		pt_buf_putc(b, '}');
	}
	list_close(b, v.n);
	pt_table_view_free(&v);
}

static void j_op_detail(struct pt_buf *b, const struct pt_trace *t, const struct pt_summary *s,
			const struct pt_report_opts *o)
{
	struct pt_table v = pt_table_view(&s->op_detail, o->sort, o->top, t);
	pt_buf_put(b, ",\n  \"op_detail\": [", 18);
	for (size_t i = 0; i < v.n; i++) {
		const struct pt_row *r = &v.rows[i];
		int first = 1;
		pt_buf_put(b, i ? ",\n    {" : "\n    {", i ? 7 : 6);
		kv_name(b, &first, t, r->name_id);
		kv_u64(b, &first, "depth", r->depth);
		j_key(b, &first, "kind");
		pt_buf_printf(b, "\"%s\"", pt_kind_name((enum pt_kind)r->kind));
		kv_u64(b, &first, "calls", pt_row_calls(r));
		if (r->is_device)
			kv_null(b, &first, "cpu_total_ms");
		else
			kv_ms(b, &first, "cpu_total_ms", r->cpu.total_ns);
		kv_ms(b, &first, "gpu_total_ms", r->gpu.total_ns);
		pt_buf_putc(b, '}');
	}
	list_close(b, v.n);
	pt_table_view_free(&v);
}

static void j_overview(struct pt_buf *b, const struct pt_summary *s)
{
	pt_buf_put(b, ",\n  \"overview\": {", 17);
	int n = 0;
	for (int k = 0; k < PT_KIND__COUNT; k++) {
		const struct pt_overview_row *r = &s->overview[k];
		if (!r->calls)
			continue;
		int first = 1;
		pt_buf_printf(b, "%s\n    \"%s\": {", n++ ? "," : "", pt_kind_name((enum pt_kind)k));
		kv_u64(b, &first, "calls", r->calls);
		kv_ms(b, &first, pt_kind_is_device((enum pt_kind)k) ? "gpu_ms" : "cpu_ms", r->union_ns);
		kv_num(b, &first, "ratio_pct", pt_overview_pct(s, k));
		pt_buf_putc(b, '}');
	}
	pt_buf_put(b, n ? "\n  }" : "}", n ? 4 : 1);
}

static void j_distributed(struct pt_buf *b, const struct pt_summary *s,
			  const struct pt_report_opts *o)
{
	struct pt_distributed dd;
	size_t summed = pt_report_dist(s, o, &dd);
	const struct pt_distributed *d = &dd;
	int first = 1;
	pt_buf_put(b, ",\n  \"distributed\": {", 20);
	kv_ms(b, &first, "step_ms", d->step_ns);
	kv_ms(b, &first, "communication_ms", d->comm_ns);
	kv_ms(b, &first, "computation_ms", d->comp_ns);
	kv_ms(b, &first, "overlap_ms", d->overlap_ns);
	kv_num(b, &first, "communication_pct", pt_pct(d->comm_ns, d->step_ns));
	kv_num(b, &first, "computation_pct", pt_pct(d->comp_ns, d->step_ns));
	kv_num(b, &first, "overlap_pct", pt_pct(d->overlap_ns, d->step_ns));
	/* HTA's overlap ratio: overlapped communication / communication */
	if (d->comm_ns)
		kv_num(b, &first, "communication_overlapped_pct",
		       pt_pct(d->overlap_ns, d->comm_ns));
	else
		kv_null(b, &first, "communication_overlapped_pct");
	j_key(b, &first, "from_host_calls");
	pt_buf_printf(b, "%s", d->comm_from_host ? "true" : "false");
	j_key(b, &first, "within_steps");
	pt_buf_printf(b, "%s", s->nsteps ? "true" : "false");
	if (summed) {
		j_key(b, &first, "ranks_summed");
		pt_buf_printf(b, "%zu", summed);
	}
	j_key(b, &first, "msprof_overlap_analysis");
	if (d->has_vendor) {
		int f = 1;
		pt_buf_putc(b, '{');
		kv_ms(b, &f, "computing_ms", d->vendor_comp_ns);
		kv_ms(b, &f, "communication_ms", d->vendor_comm_ns);
		kv_ms(b, &f, "communication_not_overlapped_ms", d->vendor_exposed_ns);
		kv_num(b, &f, "largest_difference_pct", pt_vendor_overlap_diff_pct(d));
		pt_buf_putc(b, '}');
	} else {
		pt_buf_put(b, "null", 4);
	}
	pt_buf_putc(b, '}');
}

static void j_devices(struct pt_buf *b, const struct pt_trace *t, const struct pt_summary *s)
{
	/* CPU rows from the /proc sampler's counters, averaged over the window */
	static const char *const cpu_rows[2] = {"CPU(Process)", "CPU(System)"};
	size_t k = 0;
	pt_buf_put(b, ",\n  \"device\": [", 15);
	for (int c = 0; c < 2; c++) {
		struct pt_counter_stat cs;
		if (!pt_counter_stat(t, cpu_rows[c], s->t0_ns, s->t1_ns, &cs))
			continue;
		int first = 1;
		pt_buf_put(b, k ? ",\n    {" : "\n    {", k ? 7 : 6);
		j_key(b, &first, "device");
		pt_buf_printf(b, "\"%s\"", cpu_rows[c]);
		kv_num(b, &first, "utilization_pct", cs.avg);
		kv_u64(b, &first, "samples", cs.n);
		pt_buf_putc(b, '}');
		k++;
	}
	for (size_t i = 0; i < s->ndevices; i++, k++) {
		const struct pt_device_row *d = &s->devices[i];
		int first = 1;
		pt_buf_put(b, k ? ",\n    {" : "\n    {", k ? 7 : 6);
		j_key(b, &first, "device");
		pt_buf_printf(b, "%" PRId32, d->device);
		kv_num(b, &first, "utilization_pct", d->util_pct);
		kv_ms(b, &first, "busy_ms", d->busy_ns);
		kv_u64(b, &first, "kernels", d->kernels);
		kv_u64(b, &first, "memcpys", d->memcpys);
		kv_u64(b, &first, "memsets", d->memsets);
		kv_u64(b, &first, "memcpy_bytes", d->memcpy_bytes);
		pt_buf_putc(b, '}');
	}
	list_close(b, k);
}

static void j_steps(struct pt_buf *b, const struct pt_summary *s)
{
	pt_buf_put(b, ",\n  \"steps_detail\": [", 21);
	for (size_t i = 0; i < s->nsteps; i++) {
		const struct pt_step *st = &s->steps[i];
		int first = 1;
		pt_buf_put(b, i ? ",\n    {" : "\n    {", i ? 7 : 6);
		j_key(b, &first, "number");
		pt_buf_printf(b, "%" PRId64, st->number);
		kv_ms(b, &first, "start_ms", st->start_ns > s->t0_ns ? st->start_ns - s->t0_ns : 0);
		kv_ms(b, &first, "batch_cost_ms", st->dur_ns);
		kv_ms(b, &first, "reader_cost_ms", st->cpu_ns[PT_MS_DATALOADER]);
		kv_u64(b, &first, "samples", st->samples);
		if (st->compile_ns || st->graph_breaks) {
			kv_ms(b, &first, "compile_ms", st->compile_ns);
			kv_u64(b, &first, "compiles", st->compiles);
			kv_u64(b, &first, "recompiles", st->recompiles);
			kv_u64(b, &first, "graph_breaks", st->graph_breaks);
		}
		pt_buf_putc(b, '}');
	}
	list_close(b, s->nsteps);
}

/* What profiling cost (overhead.h): null figures when unknown. */
static void j_overhead(struct pt_buf *b, const struct pt_trace *t, const struct pt_summary *s)
{
	struct pt_overhead o;
	pt_overhead_of(&o, t, s);
	pt_buf_put(b, ",\n  \"overhead\": {\"events_per_step\":", 35);
	if (isnan(o.events_per_step))
		pt_buf_put(b, "null", 4);
	else
		j_num(b, o.events_per_step);
	pt_buf_put(b, ",\"ns_per_event\":", 16);
	if (o.measured)
		j_num(b, o.ns_per_event);
	else
		pt_buf_put(b, "null", 4);
	pt_buf_put(b, ",\"share\":", 9);
	if (isnan(o.share))
		pt_buf_put(b, "null", 4);
	else
		pt_buf_printf(b, "%.6g", o.share);
	if (o.helper_calls_per_step > 0) { /* a Python job: its helper's part */
		static const char k1[] = ",\"helper_calls_per_step\":", k2[] = ",\"helper_ns_per_call\":";
		pt_buf_put(b, k1, sizeof k1 - 1);
		j_num(b, o.helper_calls_per_step);
		pt_buf_put(b, k2, sizeof k2 - 1);
		j_num(b, o.helper_ns_per_call);
	}
	pt_buf_putc(b, '}');
}

void pt_report_json_buf(struct pt_buf *b, const struct pt_trace *t, const struct pt_summary *s,
			const struct pt_report_opts *o)
{
	struct pt_report_opts defaults;
	if (!o) {
		pt_report_opts_init(&defaults);
		o = &defaults;
	}
	/* the data pipeline and the advice, worked out while the tables are
	 * written */
	struct pt_report_adv *adv = pt_xmalloc(sizeof *adv);
	pt_report_adv_start(adv, t, s, o);
	int first = 1;
	pt_buf_putc(b, '{');
	top_key(b, &first, "schema");
	pt_buf_put(b, "\"proftop.report/2\"", 18);
	top_key(b, &first, "source");
	const char *src = t->source ? t->source : "";
	pt_buf_json_str(b, src, strlen(src));
	top_key(b, &first, "events");
	pt_buf_printf(b, "%" PRIu64, pt_store_count(t->store));
	top_key(b, &first, "events_seen");
	pt_buf_printf(b, "%" PRIu64, t->events_seen);
	/* where events were lost: the text header's "N dropped (A by the source, B by the cap)" */
	uint64_t by_source = pt_trace_source_lost(t);
	uint64_t by_cap = t->warnings[PT_WARN_STORE_DROPPED];
	uint64_t all = pt_store_count(t->store) + by_source + by_cap;
	top_key(b, &first, "dropped");
	pt_buf_printf(b, "{\"by_source\":%" PRIu64 ",\"by_memory_cap\":%" PRIu64 ",\"pct\":",
		      by_source, by_cap);
	j_num(b, all ? 100.0 * (double)(by_source + by_cap) / (double)all : 0.0);
	/* by_source, by cause */
	pt_buf_printf(b,
		      ",\"rings_full\":%" PRIu64 ",\"overwritten_while_detached\":%" PRIu64
		      ",\"missed_by_reader\":%" PRIu64,
		      t->warnings[PT_WARN_SOURCE_DROPPED], t->warnings[PT_WARN_SOURCE_OVERWRITTEN],
		      t->warnings[PT_WARN_READER_MISSED]);
	pt_buf_putc(b, '}');
	top_key(b, &first, "notes");
	pt_buf_putc(b, '[');
	for (uint32_t i = 0; i < t->nnotes; i++) {
		const char *n = pt_trace_note_text(t, i);
		if (i)
			pt_buf_putc(b, ',');
		pt_buf_json_str(b, n, strlen(n));
	}
	pt_buf_putc(b, ']');
	top_key(b, &first, "span_ms");
	j_ms(b, s->t1_ns > s->t0_ns ? s->t1_ns - s->t0_ns : 0);
	top_key(b, &first, "steps");
	pt_buf_printf(b, "%zu", s->nsteps);
	top_key(b, &first, "rank");
	if (t->rank >= 0)
		pt_buf_printf(b, "%" PRId64, t->rank);
	else
		pt_buf_put(b, "null", 4);
	top_key(b, &first, "world_size");
	if (t->world_size >= 0)
		pt_buf_printf(b, "%" PRId64, t->world_size);
	else
		pt_buf_put(b, "null", 4);
	j_model(b, s);
	j_perf(b, s);
	j_rows(b, "operators", t, &s->operators, o);
	j_rows(b, "kernels", t, &s->kernels, o);
	j_rows(b, "user_defined", t, &s->user_defined, o);
	j_rows(b, "memory", t, &s->memory, o);
	j_op_detail(b, t, s, o);
	pt_report_flops_json(b, t, s, o);
	struct pt_summary ov;
	j_overview(b, pt_report_overview_of(s, o, &ov));
	j_distributed(b, s, o);
	j_devices(b, t, s);
	j_steps(b, s);
	j_overhead(b, t, s);
	{
		/* the advisor's findings (advisor.h; [] with --no-advice) come
		 * last, but are worked out with the data pipeline's figures */
		pt_report_adv_wait(adv);
		pt_report_data_json(b, t, &adv->dp);
		pt_datapipe_free(&adv->dp);
		struct pt_coll_stats cs;
		struct pt_straggler sg;
		pt_report_colls_compute(t, o, &cs, &sg);
		pt_report_ranks_json(b, o ? o->ranks : NULL, &sg);
		pt_report_colls_json(b, &cs);
		pt_coll_stats_free(&cs);
		pt_advice_json_buf(b, &adv->al);
		free(adv);
	}
	pt_buf_put(b, ",\n  \"warnings\": {", 17);
	int n = 0;
	for (int w = 0; w < PT_WARN__COUNT; w++)
		if (t->warnings[w])
			pt_buf_printf(b, "%s\"%s\":%" PRIu64, n++ ? "," : "",
				      pt_warn_key((enum pt_warn)w), t->warnings[w]);
	pt_buf_putc(b, '}');
	top_key(b, &first, "events_dropped");
	pt_buf_printf(b, "%" PRIu64, t->warnings[PT_WARN_STORE_DROPPED] + pt_trace_source_lost(t));
	pt_buf_put(b, "\n}", 2);
}

int pt_report_json(FILE *out, const struct pt_trace *t, const struct pt_summary *s,
		   const struct pt_report_opts *o)
{
	struct pt_buf b = {0};
	pt_report_json_buf(&b, t, s, o);
	pt_buf_putc(&b, '\n');
	fwrite(b.p, 1, b.len, out);
	pt_buf_free(&b);
	fflush(out);
	return ferror(out) ? PT_EIO : 0;
}
