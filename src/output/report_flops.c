/*
 * report_flops.c - the FLOPs Summary of `proftop report` (text and JSON):
 * per operator with FLOPs from its input shapes (flops.h), and per kernel
 * launched from such operators, the work done, the achieved TFLOP/s and
 * GB/s, and with a known device peak the share of the roofline. The text
 * section is printed only when the trace has operators with FLOPs; the
 * JSON always has a "flops" object (empty arrays without them).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/flops.h"
#include "output/report_int.h"

static const char *dtype_name(int d)
{
	return pt_dtype_name(d);
}

/* "fp16/bf16 989.5, tf32 494.7, fp32 66.9, fp64 66.9, fp8 1978.9" (the
 * classes the device has) into buf */
static void peak_list(char *buf, size_t n, const struct pt_peak *pk)
{
	static const struct {
		int d;
		const char *name;
	} order[] = {{PT_DT_F16, "fp16"}, {PT_DT_BF16, "bf16"}, {PT_DT_TF32, "tf32"},
		     {PT_DT_F32, "fp32"}, {PT_DT_F64, "fp64"},  {PT_DT_FP8, "fp8"}};
	size_t k = 0;
	buf[0] = 0;
	int same16 = pk->tflops[PT_DT_F16] == pk->tflops[PT_DT_BF16];
	for (size_t i = 0; i < sizeof order / sizeof order[0] && k < n; i++)
		if (same16 && order[i].d == PT_DT_F16 && pk->tflops[PT_DT_F16] > 0)
			k += (size_t)snprintf(buf + k, n - k, "%sfp16/bf16 %.1f", k ? ", " : "",
					      pk->tflops[PT_DT_F16]);
		else if (same16 && order[i].d == PT_DT_BF16)
			continue;
		else if (pk->tflops[order[i].d] > 0)
			k += (size_t)snprintf(buf + k, n - k, "%s%s %.1f", k ? ", " : "", order[i].name,
					      pk->tflops[order[i].d]);
}

int pt_report_flops_mfu(const struct pt_trace *t, const struct pt_summary *s, uint64_t t0_ns,
			uint64_t t1_ns, const struct pt_peak *pk, struct pt_flops_table *tab,
			struct pt_mfu *m)
{
	struct pt_step *st = pt_xmalloc((s->nsteps ? s->nsteps : 1) * sizeof *st);
	size_t n = 0;
	for (size_t i = 0; i < s->nsteps; i++)
		if (!(s->perf.compile_left_out && s->steps[i].compile_ns))
			st[n++] = s->steps[i];
	memset(m, 0, sizeof *m); /* set when no step has FLOPs too */
	int rc = pt_flops_summarize_mfu((struct pt_trace *)t, t0_ns, t1_ns, st, n, pk, tab, m);
	free(st);
	return rc;
}

size_t pt_report_mfu_line(char *buf, size_t len, const struct pt_mfu *m, const struct pt_peak *pk)
{
	int n;
	char dev[100] = "";
	if (!len)
		return 0;
	if (pk)
		pt_escape_term(dev, sizeof dev, pk->device, strlen(pk->device), 40, 0);
	char cover[64] = "";
	if (m->gpu_trace && m->step_gpu_ns)
		snprintf(cover, sizeof cover, "; %.1f%% of device time has FLOPs",
			 100.0 * (double)m->covered_gpu_ns / (double)m->step_gpu_ns);
	if (m->mfu_pct >= 0)
		n = snprintf(buf, len, "MFU %.2f%% of the %s dense peak (%s), %.3f TFLOP/s a step%s",
			     m->mfu_pct, pt_dtype_name(m->dtype), dev, m->tflops_avg, cover);
	else
		n = snprintf(buf, len, "MFU n/a (%s), %.3f TFLOP/s a step%s",
			     m->mfu_pct == -2 ? "past the peak given"
			     : !m->gpu_trace ? "CPU: no peak"
					     : "no peak known",
			     m->tflops_avg, cover);
	return n < 0 ? 0 : ((size_t)n < len ? (size_t)n : len - 1);
}

/* "MFU: ..." lines under the FLOPs tables */
static void put_mfu(FILE *out, const struct pt_peak *pk, const struct pt_mfu *mp, int have)
{
	if (!have)
		return;
	const struct pt_mfu m = *mp;
	fprintf(out,
		"MFU: achieved %.3f TFLOP/s a step (min %.3f, max %.3f) over %zu steps, %.3f GFLOP a "
		"step (%s: %.0f%% of the FLOPs)",
		m.tflops_avg, m.tflops_min, m.tflops_max, m.steps, m.flops_per_step / 1e9,
		pt_dtype_name(m.dtype), m.dtype_share_pct);
	if (m.gpu_trace && m.step_gpu_ns)
		fprintf(out, "; the operators with FLOPs hold %.1f%% of the steps' device time",
			100.0 * (double)m.covered_gpu_ns / (double)m.step_gpu_ns);
	fputc('\n', out);
	char dev[100];
	if (pk)
		pt_escape_term(dev, sizeof dev, pk->device, strlen(pk->device), 60, 0);
	if (m.mfu_pct >= 0)
		fprintf(out, "     = %.2f%% of the %s dense peak, %.1f TFLOP/s (%s)\n", m.mfu_pct,
			pt_dtype_name(m.dtype), m.peak_tflops, dev);
	else if (m.mfu_pct == -2)
		fprintf(out,
			"     past the %s dense peak given, %.1f TFLOP/s (%s): the peak is too low "
			"for this device, or the shapes overstate the work; no MFU\n",
			pt_dtype_name(m.dtype), m.peak_tflops, dev);
	else if (!m.gpu_trace && !(pk && pk->from_user))
		fputs("     no MFU: the operators ran on the CPU, which has no peak here "
		      "(--peak-tflops N gives one)\n",
		      out);
	else
		fprintf(out, "     no MFU: no %s peak known for this device (--peak-tflops N)\n",
			pt_dtype_name(m.dtype));
}

static void put_rows(FILE *out, const struct pt_trace *t, const struct pt_flops_row *rows,
		     size_t n, size_t top, const struct pt_peak *pk, const char *what)
{
	int w[9] = {44, 9, 7, 10, 9, 10, 9, 9, 8};
	static const char *const head[9] = {"Name",	"Type",	   "Calls", "GFLOP",  "GB",
					    "Time(ms)", "TFLOP/s", "GB/s",  "Peak(%)"};
	const char *h[9];
	char hname[64];
	snprintf(hname, sizeof hname, "%s", what);
	for (int i = 0; i < 9; i++)
		h[i] = head[i];
	h[0] = hname;
	pt_box_sep(out, w, 9);
	pt_box_row(out, w, 9, h, -1);
	pt_box_sep(out, w, 9);
	size_t shown = top && top < n ? top : n;
	for (size_t i = 0; i < shown; i++) {
		const struct pt_flops_row *r = &rows[i];
		char name[200], c[7][32];
		const char *nm = pt_trace_str(t, r->name_id);
		size_t cols = pt_escape_term(name, sizeof name, nm, strlen(nm), (size_t)w[0], 0);
		snprintf(c[0], 32, "%" PRIu64, r->calls);
		snprintf(c[1], 32, "%.3f", r->flops / 1e9);
		snprintf(c[2], 32, "%.3f", r->bytes / 1e9);
		snprintf(c[3], 32, "%.3f", (double)(r->gpu_ns ? r->gpu_ns : r->cpu_ns) / 1e6);
		if (pt_flops_row_tflops(r) >= 0) {
			snprintf(c[4], 32, "%.3f", pt_flops_row_tflops(r));
			snprintf(c[5], 32, "%.1f", pt_flops_row_gbps(r));
		} else { /* a GPU trace whose kernels for these calls are not in it */
			snprintf(c[4], 32, "-");
			snprintf(c[5], 32, "-");
		}
		double pct = pt_flops_row_peak_pct(r, pk);
		if (pct >= 0)
			snprintf(c[6], 32, "%.1f", pct);
		else
			snprintf(c[6], 32, pct == -2 ? ">100" : "-");
		const char *cells[9] = {name, dtype_name(r->dtype), c[0], c[1], c[2],
					c[3], c[4], c[5], c[6]};
		pt_box_row(out, w, 9, cells, (int)cols);
	}
	if (shown < n)
		fprintf(out, "(%zu more)\n", n - shown);
	pt_box_sep(out, w, 9);
}

void pt_report_flops_text(FILE *out, const struct pt_trace *t, const struct pt_summary *s,
			  const struct pt_report_opts *o)
{
	if (!t->flop_events)
		return;
	struct pt_peak pk;
	int have_peak = pt_peak_of_trace(t, o->peak_tflops, o->peak_gbps, &pk) == 0;
	struct pt_flops_table tab;
	struct pt_mfu m;
	int have_mfu = pt_report_flops_mfu(t, s, s->t0_ns, s->t1_ns + 1, have_peak ? &pk : NULL,
					   &tab, &m) == 0;
	if (!tab.nops) {
		pt_flops_table_free(&tab);
		pt_mfu_free(&m);
		return;
	}
	pt_box_title(out, "FLOPs Summary", 127, '-');
	if (have_peak) {
		char dev[100];
		pt_escape_term(dev, sizeof dev, pk.device, strlen(pk.device), 60, 0);
		char list[200];
		peak_list(list, sizeof list, &pk);
		fprintf(out, "Peak: %s: %s TFLOP/s (dense)", dev, list);
		if (pk.gbps > 0)
			fprintf(out, ", memory %.0f GB/s", pk.gbps);
		fputc('\n', out);
	} else {
		fputs("Peak: unknown (no known GPU; --peak-tflops N [--peak-gbps N] gives one)\n", out);
	}
	put_rows(out, t, tab.ops, tab.nops, o->top, have_peak ? &pk : NULL, "Operator");
	if (tab.nkernels)
		put_rows(out, t, tab.kernels, tab.nkernels, o->top, have_peak ? &pk : NULL,
			 "Kernel (launched by those operators)");
	fputs("Note:\nFLOPs and bytes come from the operators' input shapes (a trace recorded with "
	      "record_shapes, or a proftop capture); a multiply-add is 2 FLOPs. Time is the "
	      "operator's GPU kernel time when it launched kernels, else its CPU time. A kernel "
	      "takes the share of its operator's FLOPs that its time is of the operator's kernel "
	      "time. Peak(%) is the achieved rate over the roofline of the operator's data type: "
	      "min(peak, FLOPs per byte x memory bandwidth), for device time only (none for a "
	      "rate timed on the CPU); >100: past the compute peak or moving more bytes than the "
	      "memory bandwidth given (the shapes overstate the traffic: an expanded input, data "
	      "in cache; or the peak is wrong). MFU: the steps' FLOPs (outermost calls with "
	      "shapes, so covering only those) over their time, against the dense peak of the "
	      "data type with the most FLOPs.\n",
	      out);
	put_mfu(out, have_peak ? &pk : NULL, &m, have_mfu);
	pt_mfu_free(&m);
	pt_box_n(out, '-', 127);
	fputs("\n\n", out);
	pt_flops_table_free(&tab);
}

static void j_rows(struct pt_buf *b, const struct pt_trace *t, const struct pt_flops_row *rows,
		   size_t n, size_t top, const struct pt_peak *pk)
{
	size_t shown = top && top < n ? top : n;
	pt_buf_putc(b, '[');
	for (size_t i = 0; i < shown; i++) {
		const struct pt_flops_row *r = &rows[i];
		const char *nm = pt_trace_str(t, r->name_id);
		pt_buf_put(b, i ? ",\n    {\"name\":" : "\n    {\"name\":", i ? 14 : 13);
		pt_buf_json_str(b, nm, strlen(nm));
		double pct = pt_flops_row_peak_pct(r, pk);
		pt_buf_printf(b,
			      ",\"calls\":%" PRIu64 ",\"dtype\":\"%s\",\"flops\":%.6g,\"bytes\":%.6g,"
			      "\"cpu_ms\":%.6f,\"gpu_ms\":%.6f,\"tflops_per_s\":",
			      r->calls, dtype_name(r->dtype), r->flops, r->bytes,
			      (double)r->cpu_ns / 1e6, (double)r->gpu_ns / 1e6);
		if (pt_flops_row_tflops(r) >= 0)
			pt_buf_printf(b, "%.6g,\"gb_per_s\":%.6g,\"peak_pct\":", pt_flops_row_tflops(r),
				      pt_flops_row_gbps(r));
		else
			pt_buf_printf(b, "null,\"gb_per_s\":null,\"peak_pct\":");
		if (pct >= 0)
			pt_buf_printf(b, "%.4g}", pct);
		else if (pct == -2) /* past the compute peak: the peak is wrong */
			pt_buf_printf(b, "null,\"over_peak\":true}");
		else
			pt_buf_put(b, "null}", 5);
	}
	pt_buf_putc(b, ']');
}

void pt_report_flops_json(struct pt_buf *b, const struct pt_trace *t, const struct pt_summary *s,
			  const struct pt_report_opts *o)
{
	struct pt_peak pk;
	int have_peak = pt_peak_of_trace(t, o->peak_tflops, o->peak_gbps, &pk) == 0;
	struct pt_flops_table tab;
	struct pt_mfu m;
	int have_mfu = pt_report_flops_mfu(t, s, s->t0_ns, s->t1_ns + 1, have_peak ? &pk : NULL,
					   &tab, &m) == 0;
	pt_buf_put(b, ",\n  \"flops\": {\"peak\":", 21);
	if (have_peak) {
		pt_buf_put(b, "{\"device\":", 10);
		pt_buf_json_str(b, pk.device, strlen(pk.device));
		static const int order[] = {PT_DT_F16, PT_DT_BF16, PT_DT_TF32,
					    PT_DT_F32, PT_DT_F64,  PT_DT_FP8};
		pt_buf_put(b, ",\"tflops_per_s\":{", 17);
		for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
			const char *nm = pt_dtype_name(order[i]);
			pt_buf_printf(b, "%s\"%s\":", i ? "," : "", nm);
			if (pk.tflops[order[i]] > 0)
				pt_buf_printf(b, "%.6g", pk.tflops[order[i]]);
			else
				pt_buf_put(b, "null", 4);
		}
		pt_buf_printf(b, "},\"gb_per_s\":%.6g}", pk.gbps);
	} else {
		pt_buf_put(b, "null", 4);
	}
	pt_buf_put(b, ",\"operators\":", 13);
	j_rows(b, t, tab.ops, tab.nops, o->top, have_peak ? &pk : NULL);
	pt_buf_put(b, ",\"kernels\":", 11);
	j_rows(b, t, tab.kernels, tab.nkernels, o->top, have_peak ? &pk : NULL);
	pt_buf_printf(b, ",\n    \"mfu\":");
	if (have_mfu) {
		pt_buf_printf(b,
			      "{\"steps\":%zu,\"flops_per_step\":%.6g,\"tflops_per_s\":{\"avg\":%.6g,"
			      "\"max\":%.6g,\"min\":%.6g},\"dtype\":\"%s\",\"dtype_share_pct\":%.4g,"
			      "\"peak_tflops_per_s\":",
			      m.steps, m.flops_per_step, m.tflops_avg, m.tflops_max, m.tflops_min,
			      pt_dtype_name(m.dtype), m.dtype_share_pct);
		if (m.peak_tflops > 0)
			pt_buf_printf(b, "%.6g", m.peak_tflops);
		else
			pt_buf_put(b, "null", 4);
		pt_buf_put(b, ",\"mfu_pct\":", 11);
		if (m.mfu_pct >= 0)
			pt_buf_printf(b, "%.4g", m.mfu_pct);
		else
			pt_buf_put(b, "null", 4);
		if (m.mfu_pct == -2)
			pt_buf_put(b, ",\"over_peak\":true", 17);
		pt_buf_printf(b, ",\"no_peak_reason\":");
		if (m.mfu_pct >= 0 || m.mfu_pct == -2)
			pt_buf_put(b, "null", 4);
		else if (!m.gpu_trace && !(have_peak && pk.from_user))
			pt_buf_printf(b, "\"cpu\"");
		else
			pt_buf_printf(b, "\"unknown device\"");
		pt_buf_printf(b, ",\"device_time_covered_pct\":");
		if (m.gpu_trace && m.step_gpu_ns)
			pt_buf_printf(b, "%.4g",
				      100.0 * (double)m.covered_gpu_ns / (double)m.step_gpu_ns);
		else
			pt_buf_put(b, "null", 4);
		pt_buf_put(b, ",\"per_step_tflops_per_s\":[", 26);
		for (size_t i = 0; i < m.nper_step; i++)
			pt_buf_printf(b, "%s%.6g", i ? "," : "", m.per_step[i]);
		pt_buf_put(b, "]}", 2);
	} else {
		pt_buf_put(b, "null", 4);
	}
	pt_mfu_free(&m);
	pt_buf_putc(b, '}');
	pt_flops_table_free(&tab);
}
