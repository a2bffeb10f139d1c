/*
 * report_ranks.c - the report's per-rank parts for a trace with several
 * ranks (a merged trace): the Rank Summary table (one row per rank, the
 * slowest marked, the spread of step times below), the Distributed Summary
 * with a row per rank, and the "ranks" array of the JSON report. They are
 * only printed when the caller passes ranks (pt_report_opts.ranks with two
 * or more), so a single-rank report stays byte for byte what it was. The
 * layout follows report.c: left-aligned columns two spaces apart, a title
 * centred in dashes, rows of dashes around the header, no trailing blanks.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/colls.h"
#include "proftop/ranks.h"
#include "output/report_int.h"
#include "model/util.h"

#define RCELL 48

static void put_n(FILE *out, char c, int n)
{
	for (int i = 0; i < n; i++)
		putc(c, out);
}

static int width_of(const int *w, int n)
{
	int sum = 2 * (n - 1);
	for (int i = 0; i < n; i++)
		sum += w[i];
	return sum;
}

static void put_title(FILE *out, const char *title, int total)
{
	int len = (int)strlen(title);
	int left = total > len ? (total - len) / 2 : 0;
	put_n(out, '-', left);
	fputs(title, out);
	put_n(out, '-', total > len ? total - len - left : 0);
	putc('\n', out);
}

static void put_sep(FILE *out, const int *w, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			fputs("  ", out);
		put_n(out, '-', w[i]);
	}
	putc('\n', out);
}

static void put_row(FILE *out, const int *w, int n, char cells[][RCELL])
{
	int pending = 0;
	for (int i = 0; i < n; i++) {
		int cols = (int)strlen(cells[i]);
		if (cols) {
			put_n(out, ' ', pending);
			fputs(cells[i], out);
			pending = 0;
		}
		pending += (w[i] > cols ? w[i] - cols : 0) + 2;
	}
	putc('\n', out);
}

/* Every rank gave sample counts: IPS is samples/s, else steps/s. */
static int ips_in_samples(const struct pt_ranks *r)
{
	int any = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (!r->r[i].steps)
			continue;
		if (r->r[i].samples_per_s <= 0)
			return 0;
		any = 1;
	}
	return any;
}

static void fmt_pct(char *c, double share01)
{
	snprintf(c, RCELL, "%.2f", share01 * 100.0);
}

#define RANK_COLS 11

void pt_report_ranks_text(FILE *out, const struct pt_ranks *r)
{
	if (!r || r->n < 2)
		return;
	static const char *const head[RANK_COLS] = {
	    "Rank", "Host",	 "Steps",   "Avg(ms)",	  "P50(ms)",	"Max(ms)",
	    "IPS",  "Reader(%)", "Comm(%)", "CommOvl(%)", "GPU Util(%)"};
	int w[RANK_COLS] = {8, 4, 6, 10, 10, 10, 10, 9, 8, 10, 11};
	int samples = ips_in_samples(r), hosts = 0;
	char(*cells)[RANK_COLS][RCELL] = pt_xcalloc(r->n, sizeof *cells);
	for (size_t i = 0; i < r->n; i++) {
		const struct pt_rank_stat *s = &r->r[i];
		char(*c)[RCELL] = cells[i];
		int slow = i == r->slowest && s->steps && r->spread > 0;
		snprintf(c[0], RCELL, "%s%s", s->name, slow ? " *" : "");
		pt_escape_term(c[1], RCELL, s->host, strlen(s->host), 24, PT_ESC_ASCII);
		hosts |= s->host[0] != 0;
		snprintf(c[2], RCELL, "%" PRIu64, s->steps);
		if (s->steps) {
			snprintf(c[3], RCELL, "%.2f", s->step_avg_ms);
			snprintf(c[4], RCELL, "%.2f", s->step_p50_ms);
			snprintf(c[5], RCELL, "%.2f", s->step_max_ms);
			snprintf(c[6], RCELL, "%.2f", samples ? s->samples_per_s : s->ips);
			if (!s->summary || s->summary->perf.has_reader)
				fmt_pct(c[7], s->reader_ratio);
			else
				snprintf(c[7], RCELL, "n/a");
		} else {
			for (int k = 3; k < 8; k++)
				snprintf(c[k], RCELL, "-");
		}
		fmt_pct(c[8], s->comm_share);
		if (s->comm_share > 0)
			fmt_pct(c[9], s->comm_overlap);
		else
			snprintf(c[9], RCELL, "-");
		if (s->gpu_util_pct >= 0)
			snprintf(c[10], RCELL, "%.2f", s->gpu_util_pct);
		else
			snprintf(c[10], RCELL, "-");
		for (int k = 0; k < RANK_COLS; k++) {
			int len = (int)strlen(c[k]);
			if (len > w[k])
				w[k] = len;
		}
	}
	if (!hosts)
		w[1] = 0;
	/* without hosts the column goes: shift the rest left */
	int cols[RANK_COLS], nc = 0;
	for (int k = 0; k < RANK_COLS; k++)
		if (k != 1 || hosts)
			cols[nc++] = k;
	int ww[RANK_COLS];
	char row[RANK_COLS][RCELL];
	for (int j = 0; j < nc; j++)
		ww[j] = w[cols[j]];
	int tw = width_of(ww, nc);
	put_title(out, "Rank Summary", tw);
	fprintf(out,
		"Time unit: ms; IPS in %s; Comm(%%) of step time, CommOvl(%%): its share "
		"overlapped by computation\n",
		samples ? "samples/s" : "steps/s");
	put_sep(out, ww, nc);
	for (int j = 0; j < nc; j++)
		snprintf(row[j], RCELL, "%s", head[cols[j]]);
	put_row(out, ww, nc, row);
	put_sep(out, ww, nc);
	for (size_t i = 0; i < r->n; i++) {
		for (int j = 0; j < nc; j++)
			memcpy(row[j], cells[i][cols[j]], RCELL);
		put_row(out, ww, nc, row);
	}
	put_sep(out, ww, nc);
	const struct pt_rank_stat *sl = &r->r[r->slowest];
	if (r->spread > 0)
		fprintf(out,
			"Slowest: %s (* above), avg step %.2f ms; median %.2f ms; spread "
			"(max/median) %.2fx\n",
			sl->name, sl->step_avg_ms, r->median_step_ms, r->spread);
	else
		fputs("Slowest: fewer than two ranks with steps, no spread\n", out);
	fputs("The Model and Perf Summaries add up every rank's steps, each with its own "
	      "rank's phases: their ratios are the ranks' mean weighted by step time; this table "
	      "has each rank.\n",
	      out);
	putc('\n', out);
	free(cells);
}

#define DIST_COLS 7

void pt_report_ranks_dist_text(FILE *out, const struct pt_ranks *r)
{
	if (!r || r->n < 2)
		return;
	int any = 0;
	for (size_t i = 0; i < r->n; i++)
		any |= r->r[i].summary && r->r[i].summary->dist.comm_ns > 0;
	if (!any)
		return;
	static const char *const head[DIST_COLS] = {"Rank",	   "ProfileStep", "Communication",
						    "Computation", "Overlap",	  "Comm(%)",
						    "CommOvl(%)"};
	int w[DIST_COLS] = {10, 12, 14, 12, 10, 8, 10};
	char(*cells)[DIST_COLS][RCELL] = pt_xcalloc(r->n, sizeof *cells);
	for (size_t i = 0; i < r->n; i++) {
		const struct pt_distributed *d = &r->r[i].summary->dist;
		char(*c)[RCELL] = cells[i];
		snprintf(c[0], RCELL, "%s", r->r[i].name);
		snprintf(c[1], RCELL, "%.2f", (double)d->step_ns / 1e6);
		snprintf(c[2], RCELL, "%.2f", (double)d->comm_ns / 1e6);
		snprintf(c[3], RCELL, "%.2f", (double)d->comp_ns / 1e6);
		snprintf(c[4], RCELL, "%.2f", (double)d->overlap_ns / 1e6);
		snprintf(c[5], RCELL, "%.2f", pt_pct(d->comm_ns, d->step_ns));
		snprintf(c[6], RCELL, "%.2f", pt_pct(d->overlap_ns, d->comm_ns));
		for (int k = 0; k < DIST_COLS; k++) {
			int len = (int)strlen(c[k]);
			if (len > w[k])
				w[k] = len;
		}
	}
	char row[DIST_COLS][RCELL];
	put_title(out, "Distributed Summary per Rank", width_of(w, DIST_COLS));
	fputs("Time unit: ms; Comm(%) of ProfileStep, CommOvl(%): Overlap / Communication "
	      "(HTA's overlap ratio)\n",
	      out);
	put_sep(out, w, DIST_COLS);
	for (int k = 0; k < DIST_COLS; k++)
		snprintf(row[k], RCELL, "%s", head[k]);
	put_row(out, w, DIST_COLS, row);
	put_sep(out, w, DIST_COLS);
	for (size_t i = 0; i < r->n; i++)
		put_row(out, w, DIST_COLS, cells[i]);
	put_sep(out, w, DIST_COLS);
	putc('\n', out);
	free(cells);
}

/* ---- JSON ---- */

#define PUTS(b, lit) pt_buf_put((b), (lit), sizeof(lit) - 1)

static void j_num(struct pt_buf *b, double v)
{
	if (!(v == v) || v > 1e300 || v < -1e300)
		v = 0;
	size_t start = b->len;
	pt_buf_printf(b, "%.6f", v);
	char *p = b->p + start;
	size_t n = b->len - start;
	while (n > 1 && p[n - 1] == '0')
		n--;
	if (n > 1 && p[n - 1] == '.')
		n--;
	b->len = start + n;
	b->p[b->len] = 0;
	if (!strcmp(p, "-0")) {
		b->len = start;
		pt_buf_putc(b, '0');
	}
}

static void kv(struct pt_buf *b, const char *key, double v)
{
	pt_buf_printf(b, ",\"%s\":", key);
	j_num(b, v);
}

static void kv_or_null(struct pt_buf *b, const char *key, double v, int known)
{
	if (known)
		kv(b, key, v);
	else
		pt_buf_printf(b, ",\"%s\":null", key);
}

void pt_report_ranks_json(struct pt_buf *b, const struct pt_ranks *r, const struct pt_straggler *sg)
{
	if (!r || r->n < 2)
		return;
	static const char *const phase[PT_RANK__PHASES] = {"dataloader", "forward", "backward",
							   "optimization", "other"};
	PUTS(b, ",\n  \"ranks\": [");
	for (size_t i = 0; i < r->n; i++) {
		const struct pt_rank_stat *s = &r->r[i];
		pt_buf_printf(b, "%s", i ? ",\n    {" : "\n    {");
		if (s->rank >= 0)
			pt_buf_printf(b, "\"rank\":%" PRId64, s->rank);
		else
			PUTS(b, "\"rank\":null");
		PUTS(b, ",\"name\":");
		pt_buf_json_str(b, s->name, strlen(s->name));
		pt_buf_printf(b, ",\"pid\":%" PRId64 ",\"host\":", s->pid);
		if (s->host[0])
			pt_buf_json_str(b, s->host, strlen(s->host));
		else
			PUTS(b, "null");
		pt_buf_printf(b, ",\"slowest\":%s", i == r->slowest && s->steps ? "true" : "false");
		pt_buf_printf(b, ",\"events\":%" PRIu64 ",\"steps\":%" PRIu64, s->events, s->steps);
		if (s->last_step >= 0)
			pt_buf_printf(b, ",\"last_step\":%" PRId64, s->last_step);
		else
			PUTS(b, ",\"last_step\":null");
		kv(b, "step_avg_ms", s->step_avg_ms);
		kv(b, "step_p50_ms", s->step_p50_ms);
		kv(b, "step_p99_ms", s->step_p99_ms);
		kv(b, "step_max_ms", s->step_max_ms);
		kv(b, "ips", s->ips);
		kv(b, "samples_per_s", s->samples_per_s);
		/* not applicable without steps or without Dataloader events */
		kv_or_null(b, "reader_ratio_pct", s->reader_ratio * 100.0,
			   s->steps && (!s->summary || s->summary->perf.has_reader));
		PUTS(b, ",\"phase_pct\":{");
		for (int p = 0; p < PT_RANK__PHASES; p++) {
			pt_buf_printf(b, "%s\"%s\":", p ? "," : "", phase[p]);
			j_num(b, s->phase_share[p] * 100.0);
		}
		pt_buf_putc(b, '}');
		kv(b, "communication_pct", s->comm_share * 100.0);
		/* overlapped communication / communication (HTA's overlap ratio),
		 * named as in "distributed"; null without communication */
		kv_or_null(b, "communication_overlapped_pct", s->comm_overlap * 100.0,
			   s->comm_share > 0);
		kv_or_null(b, "gpu_util_pct", s->gpu_util_pct, s->gpu_util_pct >= 0);
		kv_or_null(b, "cpu_util_pct", s->cpu_util_pct, s->cpu_util_pct >= 0);
		if (s->summary) {
			const struct pt_distributed *d = &s->summary->dist;
			PUTS(b, ",\"distributed\":{\"step_ms\":");
			j_num(b, (double)d->step_ns / 1e6);
			kv(b, "communication_ms", (double)d->comm_ns / 1e6);
			kv(b, "computation_ms", (double)d->comp_ns / 1e6);
			kv(b, "overlap_ms", (double)d->overlap_ns / 1e6);
			pt_buf_putc(b, '}');
		}
		pt_buf_putc(b, '}');
	}
	PUTS(b, "\n  ]");
	PUTS(b, ",\n  \"rank_summary\": {\"slowest\":");
	/* the straggler (colls.h): by its arrivals at the collectives, else by
	 * its step time, with why */
	if (sg && sg->valid)
		pt_buf_json_str(b, sg->name, strlen(sg->name));
	else if (r->spread > 0)
		pt_buf_json_str(b, r->r[r->slowest].name, strlen(r->r[r->slowest].name));
	else
		PUTS(b, "null");
	PUTS(b, ",\"slowest_reason\":");
	if (sg && sg->valid)
		pt_buf_json_str(b, sg->reason, strlen(sg->reason));
	else
		PUTS(b, "null");
	PUTS(b, ",\"slowest_by\":");
	if (sg && sg->valid)
		pt_buf_printf(b, "\"%s\"", sg->by_collectives ? "collectives" : "step_time");
	else
		PUTS(b, "null");
	if (sg && sg->valid && sg->phase >= 0) {
		static const char *const ph[PT_RANK__PHASES] = {"dataloader", "forward", "backward",
								 "optimization", "other"};
		pt_buf_printf(b, ",\"slowest_phase\":\"%s\"", ph[sg->phase]);
	} else {
		PUTS(b, ",\"slowest_phase\":null");
	}
	kv(b, "median_step_ms", r->median_step_ms);
	kv(b, "spread", r->spread);
	pt_buf_putc(b, '}');
}
