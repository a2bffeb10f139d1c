/*
 * report_brief.c - the summary that fits a terminal: what `run` and attach
 * print when their screen closes (the full Paddle-style tables are
 * pt_report_text, with --full). A dozen lines, none wider than cols: the
 * steps and their figures, where a step goes, the costliest operators and
 * kernels, the advice and the notes wrapped to the width, and how to get
 * the full tables. Names from the trace are escaped.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/agg.h"
#include "proftop/error.h"
#include "proftop/report.h"
#include "proftop/trace.h"
#include "output/report_int.h"

/* text after a first-line label, wrapped at cols under an indent. */
static void wrapped(FILE *out, const char *label, const char *text, int cols, int indent)
{
	pt_put_wrapped(out, label, text, cols, indent, 1);
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* the top rows of a table, one line each: "  1. name   12.34 ms  30.1%" */
static void top_rows(FILE *out, const struct pt_trace *t, const struct pt_table *src,
		     enum pt_sort_key key, const char *title, int gpu, int cols)
{
	struct pt_table v = pt_table_view(src, key, 5, t);
	if (v.n) {
		fprintf(out, "%s\n", title);
		int name_w = cols - 26 > 10 ? cols - 26 : 10;
		for (size_t i = 0; i < v.n; i++) {
			const struct pt_row *r = &v.rows[i];
			const char *nm = pt_trace_str(t, r->name_id);
			char esc[512];
			pt_escape_term(esc, sizeof esc, nm, strlen(nm), (size_t)name_w, 0);
			uint64_t tot = gpu ? r->gpu.total_ns : r->cpu.total_ns;
			double pct = gpu ? pt_row_gpu_pct(&v, r) : pt_row_cpu_pct(&v, r);
			int used = (int)pt_escape_term_cols(esc, strlen(esc), 0);
			fprintf(out, "  %zu. %s%*s %10.2f ms %5.1f%%\n", i + 1, esc,
				name_w - used > 0 ? name_w - used : 0, "", ms(tot), pct);
		}
	}
	pt_table_view_free(&v);
}

int pt_report_brief(FILE *out, const struct pt_trace *t, const struct pt_summary *s,
		    const struct pt_report_opts *o, int cols)
{
	struct pt_report_opts defaults;
	if (!o) {
		pt_report_opts_init(&defaults);
		o = &defaults;
	}
	if (cols < 50)
		cols = 50;
	if (cols > 160)
		cols = 160;
	struct pt_report_adv *adv = pt_xmalloc(sizeof *adv);
	pt_report_adv_start(adv, t, s, o);
	char line[1024];
	uint64_t by_source = pt_trace_source_lost(t), by_cap = t->warnings[PT_WARN_STORE_DROPPED];
	uint64_t span = s->t1_ns > s->t0_ns ? s->t1_ns - s->t0_ns : 0;
	int hn = snprintf(line, sizeof line,
			 "Summary: %zu step%s, span %.2f s, %" PRIu64 " events, %" PRIu64 " dropped",
			 s->nsteps, s->nsteps == 1 ? "" : "s", (double)span / 1e9, t->events_seen,
			 by_source + by_cap);
	if (by_source + by_cap && hn > 0 && (size_t)hn < sizeof line)
		snprintf(line + hn, sizeof line - (size_t)hn,
			 " (%" PRIu64 " by the source; %" PRIu64
			 " oldest events dropped by the memory cap)",
			 by_source, by_cap);
	wrapped(out, "", line, cols, 2);
	const struct pt_perf *p = &s->perf;
	if (s->nsteps) {
		char rr[48] = "reader n/a", tok[48] = "";
		if (p->has_reader)
			snprintf(rr, sizeof rr, "reader ratio %.1f%%", p->reader_ratio_pct);
		if (p->has_tokens)
			snprintf(tok, sizeof tok, " | %.0f tokens/s", p->tokens_avg);
		snprintf(line, sizeof line,
			 "Step: avg %.2f ms, max %.2f, min %.2f | ips %.1f %s%s | %s",
			 p->batch.n ? ms(p->batch.total_ns) / (double)p->batch.n : 0.0,
			 ms(p->batch.max_ns), ms(pt_stat_min(&p->batch)), p->ips_avg,
			 p->ips_samples ? "samples/s" : "steps/s", tok, rr);
		wrapped(out, "", line, cols, 2);
		uint64_t step = s->model[PT_MS_STEP].cpu.total_ns;
		size_t n = 0;
		for (int r = PT_MS_DATALOADER; r < PT_MS__COUNT && n < sizeof line; r++)
			n += (size_t)snprintf(line + n, sizeof line - n, "%s%s %.1f%%",
					      r == PT_MS_DATALOADER ? "" : " | ", pt_ms_row_name(r),
					      pt_pct(s->model[r].cpu.total_ns, step));
		wrapped(out, "Where a step goes (CPU): ", line, cols, 2);
		if (pt_compile_line(s, line, sizeof line, 0))
			wrapped(out, "", line, cols, 2);
	}
	top_rows(out, t, &s->operators, PT_SORT_TOTAL, "Costliest operators (CPU total):", 0,
		 cols);
	top_rows(out, t, &s->kernels, PT_SORT_TOTAL, "Costliest kernels (GPU total):", 1, cols);
	pt_report_adv_wait(adv);
	pt_datapipe_free(&adv->dp);
	if (!o->no_advice)
		for (size_t i = 0; i < adv->al.n; i++) {
			const struct pt_advice *a = &adv->al.v[i];
			snprintf(line, sizeof line, "%s. %s", a->title, a->evidence);
			char label[40];
			snprintf(label, sizeof label, "Advice %zu: ", i + 1);
			wrapped(out, label, line, cols, 2);
			wrapped(out, "  Try: ", a->suggestion, cols, 7);
		}
	free(adv);
	for (uint32_t i = 0; i < t->nnotes && i < 3; i++) {
		const char *nt = pt_trace_note_text(t, i);
		char esc[1024];
		pt_escape_term(esc, sizeof esc, nt, strlen(nt), 0, 0);
		wrapped(out, "Note: ", esc, cols, 2);
	}
	fflush(out);
	return ferror(out) ? PT_EIO : 0;
}
