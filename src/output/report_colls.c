/*
 * report_colls.c - the collectives across ranks (colls.h) in the report:
 * the Collective Summary table, the straggler and the hang (text), and
 * "collectives", "hang" and rank_summary's reason (JSON).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "output/report_int.h"
#include "model/util.h"
#include "proftop/colls.h"

#define PUTS(b, s) pt_buf_put((b), (s), sizeof(s) - 1)

static void num(struct pt_buf *b, double v)
{
	pt_buf_printf(b, "%.4f", v);
}

void pt_report_colls_json(struct pt_buf *b, const struct pt_coll_stats *c)
{
	PUTS(b, ",\n  \"collectives\": [");
	for (size_t i = 0; c && i < c->nops; i++) {
		const struct pt_coll_op_stat *o = &c->ops[i];
		pt_buf_put(b, i ? ",\n    {" : "\n    {", i ? 7 : 6);
		PUTS(b, "\"op\":");
		pt_buf_json_str(b, o->op, strlen(o->op));
		PUTS(b, ",\"group\":");
		pt_buf_json_str(b, o->group, strlen(o->group));
		pt_buf_printf(b,
			      ",\"group_size\":%" PRIu32 ",\"p2p\":%s,\"calls\":%" PRIu64
			      ",\"rows\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"skew_ms_avg\":",
			      o->group_size, o->p2p ? "true" : "false", o->calls, o->rows, o->bytes);
		num(b, o->skew_ms_avg);
		PUTS(b, ",\"skew_ms_max\":");
		num(b, o->skew_ms_max);
		if (o->last_rank >= 0)
			pt_buf_printf(b, ",\"last_rank\":%" PRId64 ",\"last_count\":%" PRIu64,
				      o->last_rank, o->last_count);
		else
			PUTS(b, ",\"last_rank\":null,\"last_count\":0");
		PUTS(b, ",\"time_ms_avg\":");
		num(b, o->time_ms_avg);
		PUTS(b, ",\"busbw_gb_per_s\":");
		if (o->busbw_gb_per_s > 0)
			pt_buf_printf(b, "%.6g", o->busbw_gb_per_s);
		else
			PUTS(b, "null");
		pt_buf_putc(b, '}');
	}
	PUTS(b, "\n  ]");
	PUTS(b, ",\n  \"collective_ranks\": [");
	for (size_t i = 0; c && i < c->nranks; i++) {
		const struct pt_coll_rank_stat *r = &c->ranks[i];
		pt_buf_printf(b, "%s{\"rank\":%" PRId64 ",\"pid\":%" PRId64 ",\"calls\":%" PRIu64
			      ",\"coll_ms\":", i ? ",\n    " : "\n    ", r->rank, r->pid, r->calls);
		num(b, r->coll_ms);
		PUTS(b, ",\"wait_ms\":");
		num(b, r->wait_ms);
		pt_buf_printf(b, ",\"last\":%" PRIu64 ",\"late_ms_avg\":", r->last);
		num(b, r->last ? r->late_ms / (double)r->last : 0);
		pt_buf_putc(b, '}');
	}
	PUTS(b, "\n  ]");
	PUTS(b, ",\n  \"hang\": ");
	const struct pt_coll_hang *h = c ? &c->hang : NULL;
	if (!h || !h->active) {
		PUTS(b, "null");
		return;
	}
	PUTS(b, "{\"op\":");
	pt_buf_json_str(b, h->op, strlen(h->op));
	PUTS(b, ",\"group\":");
	pt_buf_json_str(b, h->group, strlen(h->group));
	pt_buf_printf(b, ",\"seq\":%" PRIu64 ",\"since_s\":", h->seq);
	num(b, h->since_s);
	PUTS(b, ",\"waiting_ranks\":[");
	size_t nw = h->nwaiting < PT_HANG_MAX_RANKS ? h->nwaiting : PT_HANG_MAX_RANKS;
	for (size_t i = 0; i < nw; i++)
		pt_buf_printf(b, "%s%" PRId64, i ? "," : "", h->waiting[i]);
	pt_buf_printf(b, "],\"waiting\":%zu,\"missing_ranks\":[", h->nwaiting);
	size_t nm = h->nmissing < PT_HANG_MAX_RANKS ? h->nmissing : PT_HANG_MAX_RANKS;
	for (size_t i = 0; i < nm; i++)
		pt_buf_printf(b, "%s%" PRId64, i ? "," : "", h->missing[i].rank);
	pt_buf_printf(b, "],\"missing\":[");
	for (size_t i = 0; i < nm; i++) {
		const struct pt_hang_missing *m = &h->missing[i];
		pt_buf_printf(b, "%s{\"rank\":%" PRId64 ",\"pid\":%" PRId64 ",\"process\":\"%s\"",
			      i ? "," : "", m->rank, m->pid,
			      m->ended == 2 ? "died" : m->ended == 1 ? "exited" : "running");
		PUTS(b, ",\"open_ranges\":[");
		for (size_t k = 0; k < m->nopen; k++) {
			PUTS(b, k ? ",{\"name\":" : "{\"name\":");
			pt_buf_json_str(b, m->open[k], strlen(m->open[k]));
			PUTS(b, ",\"open_s\":");
			num(b, m->open_s[k]);
			pt_buf_putc(b, '}');
		}
		PUTS(b, "],\"quiet_s\":");
		if (m->quiet_s >= 0)
			num(b, m->quiet_s);
		else
			PUTS(b, "null");
		pt_buf_putc(b, '}');
	}
	char line[1024];
	pt_coll_hang_line(h, line, sizeof line);
	PUTS(b, "],\"text\":");
	pt_buf_json_str(b, line, strlen(line));
	pt_buf_putc(b, '}');
}

void pt_report_colls_text(FILE *out, const struct pt_coll_stats *c, const struct pt_straggler *sg)
{
	if (!c || (!c->nops && !c->hang.active))
		return;
	fputs("---------------------------------Collective Summary---------------------------------\n",
	      out);
	fputs("Time unit: ms; Skew: last arrival less the first, per call; Last: the rank most "
	      "often last (its share of the calls); BusBW as nccl-tests counts it\n",
	      out);
	int gw = 6; /* the Group column: as wide as its longest name, within reason */
	for (size_t i = 0; i < c->nops; i++) {
		int n = (int)strlen(c->ops[i].group);
		gw = n > gw ? (n < 24 ? n : 24) : gw;
	}
	fprintf(out, "%-22s %-*s %7s %10s %9s %9s %-12s %10s\n", "Op", gw, "Group", "Calls",
		"Bytes", "Skew avg", "Skew max", "Last", "BusBW GB/s");
	for (size_t i = 0; i < c->nops; i++) {
		const struct pt_coll_op_stat *o = &c->ops[i];
		char last[32] = "-", bw[24] = "-";
		if (o->last_rank >= 0 && o->calls)
			snprintf(last, sizeof last, "%" PRId64 " (%.0f%%)", o->last_rank,
				 100.0 * (double)o->last_count / (double)o->calls);
		if (o->busbw_gb_per_s > 0)
			snprintf(bw, sizeof bw, "%.4g", o->busbw_gb_per_s);
		fprintf(out, "%-22.22s %-*.*s %7" PRIu64 " %10" PRIu64 " %9.3f %9.3f %-12s %10s\n",
			o->op, gw, gw, o->group, o->p2p ? o->rows : o->calls, o->bytes, o->skew_ms_avg,
			o->skew_ms_max, last, bw);
	}
	for (size_t i = 0; i < c->nranks; i++) {
		const struct pt_coll_rank_stat *r = &c->ranks[i];
		fprintf(out,
			"rank %" PRId64 ": %" PRIu64 " calls, %.2f ms in them, %.2f ms of it "
			"waiting for later ranks; last at %" PRIu64 "\n",
			r->rank, r->calls, r->coll_ms, r->wait_ms, r->last);
	}
	if (sg && sg->valid)
		fprintf(out, "Straggler: %s\n", sg->reason);
	if (c->hang.active) {
		char line[1024];
		pt_coll_hang_line(&c->hang, line, sizeof line);
		fprintf(out, "Hang: %s\n", line);
	}
	if (c->dropped)
		fprintf(out, "(%" PRIu64 " oldest calls dropped by the memory cap)\n", c->dropped);
	putc('\n', out);
}

void pt_report_colls_compute(const struct pt_trace *t, const struct pt_report_opts *o,
			     struct pt_coll_stats *c, struct pt_straggler *sg)
{
	uint64_t now = o && o->now_ns ? o->now_ns : t->last_ns;
	pt_coll_stats_compute(t, 0, now, o ? o->hang_after_ns : 0, c);
	pt_straggler_find(o ? o->ranks : NULL, c, sg);
}
