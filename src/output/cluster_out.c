/*
 * cluster_out.c - the Ranks view of a whole job (cluster.h) as text and
 * JSON, for `proftop cluster`. Every name came from a Prometheus server:
 * escaped for the terminal (text) or as JSON strings.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/report.h"
#include "model/util.h"
#include "proftop/cluster.h"

static const char *esc(const char *s, char *buf, size_t len)
{
	pt_escape_term(buf, len, s, strlen(s), 0, 0);
	return buf;
}

void pt_cluster_text(FILE *out, const struct pt_cluster *c, size_t max_rows)
{
	char e1[256], e2[800];
	fprintf(out, "%zu ranks on %zu hosts | median step %.2f ms | spread %.2fx max/median\n",
		c->n, c->nhosts, c->median_step_ms, c->spread);
	if (c->hang[0])
		fprintf(out, "HANG: %s\n", esc(c->hang, e2, sizeof e2));
	if (c->straggler < c->n)
		fprintf(out, "Straggler: %s\n", esc(c->reason, e2, sizeof e2));
	else
		fputs("Straggler: none stands out\n", out);
	fprintf(out, "%-8s %-20s %8s %10s %8s %7s %7s  %s\n", "Rank", "Host", "Pid", "Step ms",
		"Steps", "Coll%", "Data%", "");
	/* more ranks than rows: the ones that matter first, then the slowest */
	size_t n = c->n, shown = 0;
	unsigned char *pick = pt_xcalloc(n ? n : 1, 1);
	if (!max_rows || max_rows >= n) {
		memset(pick, 1, n);
		shown = n;
	} else {
		for (size_t i = 0; i < n && shown < max_rows; i++)
			if (c->r[i].straggler || c->r[i].missing)
				pick[i] = 1, shown++;
		while (shown < max_rows) {
			size_t best = SIZE_MAX;
			for (size_t i = 0; i < n; i++)
				if (!pick[i] && (best == SIZE_MAX || c->r[i].step_ms > c->r[best].step_ms))
					best = i;
			if (best == SIZE_MAX)
				break;
			pick[best] = 1;
			shown++;
		}
	}
	for (size_t i = 0; i < n; i++) {
		const struct pt_cluster_rank *r = &c->r[i];
		if (!pick[i])
			continue;
		char rank[24], step[24], wait[16];
		snprintf(rank, sizeof rank, "%" PRId64, r->rank);
		snprintf(step, sizeof step, r->step_ms >= 0 ? "%.2f" : "-", r->step_ms);
		snprintf(wait, sizeof wait, r->wait_ratio >= 0 ? "%.1f" : "-", 100 * r->wait_ratio);
		const char *mark = r->straggler ? "< straggler" : r->missing ? "< missing" : r->waiting ? "waiting" : "";
		fprintf(out, "%-8s %-20.20s %8" PRId64 " %10s %8" PRIu64 " %7s %7.1f  %s", rank,
			esc(r->host, e1, sizeof e1), r->pid, step, r->steps, wait, 100 * r->phase[0], mark);
		if (r->missing && r->open[0])
			fprintf(out, " (%s open %.0f s)", esc(r->open, e2, sizeof e2), r->open_s);
		putc('\n', out);
	}
	if (shown < n)
		fprintf(out, "(%zu more ranks; --once prints every rank)\n", n - shown);
	free(pick);
}

void pt_cluster_json(FILE *out, const struct pt_cluster *c)
{
	struct pt_buf b = {0};
	pt_buf_printf(&b, "{\"schema\":\"proftop.cluster/1\",\"ranks_n\":%zu,\"hosts\":%zu,"
			  "\"median_step_ms\":%.4f,\"spread\":%.4f,\"straggler\":",
		      c->n, c->nhosts, c->median_step_ms, c->spread);
	if (c->straggler < c->n)
		pt_buf_printf(&b, "%" PRId64, c->r[c->straggler].rank);
	else
		pt_buf_put(&b, "null", 4);
	pt_buf_put(&b, ",\"straggler_reason\":", 20);
	pt_buf_json_str(&b, c->reason, strlen(c->reason));
	pt_buf_put(&b, ",\"hang\":", 8);
	if (c->hang[0]) {
		pt_buf_put(&b, "{\"text\":", 8);
		pt_buf_json_str(&b, c->hang, strlen(c->hang));
		pt_buf_printf(&b, ",\"since_s\":%.3f,\"waiting_ranks\":[", c->hang_s);
		int f = 1;
		for (size_t i = 0; i < c->n; i++)
			if (c->r[i].waiting) {
				pt_buf_printf(&b, "%s%" PRId64, f ? "" : ",", c->r[i].rank);
				f = 0;
			}
		pt_buf_put(&b, "],\"missing_ranks\":[", 19);
		f = 1;
		for (size_t i = 0; i < c->n; i++)
			if (c->r[i].missing) {
				pt_buf_printf(&b, "%s%" PRId64, f ? "" : ",", c->r[i].rank);
				f = 0;
			}
		pt_buf_put(&b, "]}", 2);
	} else {
		pt_buf_put(&b, "null", 4);
	}
	pt_buf_put(&b, ",\"ranks\":[", 10);
	for (size_t i = 0; i < c->n; i++) {
		const struct pt_cluster_rank *r = &c->r[i];
		pt_buf_printf(&b, "%s\n {\"rank\":%" PRId64 ",\"host\":", i ? "," : "", r->rank);
		pt_buf_json_str(&b, r->host, strlen(r->host));
		pt_buf_printf(&b, ",\"pid\":%" PRId64 ",\"step_ms\":%.4f,\"steps\":%" PRIu64
				  ",\"wait_ratio\":%.4f,\"dataloader_ratio\":%.4f,\"straggler\":%s,"
				  "\"waiting\":%s,\"missing\":%s,\"open\":",
			      r->pid, r->step_ms, r->steps, r->wait_ratio, r->phase[0],
			      r->straggler ? "true" : "false", r->waiting ? "true" : "false",
			      r->missing ? "true" : "false");
		pt_buf_json_str(&b, r->open, strlen(r->open));
		pt_buf_putc(&b, '}');
	}
	pt_buf_put(&b, "]}\n", 3);
	fwrite(b.p, 1, b.len, out);
	pt_buf_free(&b);
	fflush(out);
}
