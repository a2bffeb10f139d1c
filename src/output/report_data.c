/*
 * report_data.c - the Data Pipeline section of the report (datapipe.h): the
 * loader's queue, the workers' lanes and the stages table, as text and as
 * the JSON "data_pipeline" object. Names from the trace are escaped (text)
 * or JSON-quoted.
 */
#include <inttypes.h>
#include <string.h>

#include "proftop/advisor.h"
#include "proftop/datapipe.h"
#include "output/report_int.h"
#include "model/util.h"

#define CELL 64
#define NAME_CAP 512
#define STAGE_W 44

static void bputs(struct pt_buf *b, const char *s)
{
	pt_buf_put(b, s, strlen(s));
}

static const char *stage_text(const struct pt_trace *t, uint32_t id)
{
	const char *s = pt_trace_str(t, id);
	return s ? s + strlen(PT_DP_PREFIX) : "?";
}

/* The lane's label ("data worker 0", a thread name), else its thread id. */
void pt_dp_lane_name(const struct pt_trace *t, const struct pt_dp_lane *l, char *buf, size_t cap)
{
	const struct pt_track *tr = &t->tracks[l->track];
	const char *s = tr->label ? pt_trace_str(t, tr->label) : NULL;
	if (s && *s)
		pt_escape_term(buf, cap, s, strlen(s), 32, 0);
	else
		snprintf(buf, cap, "tid %" PRId64, tr->key.tid);
}

static const char *samples_basis(const struct pt_datapipe *dp)
{
	switch (dp->samples_from) {
	case 1:
		return "the dataset's __getitem__ calls";
	case 2:
		return "the steps' samples";
	default:
		return "calls (no sample count known)";
	}
}

void pt_report_data_text(FILE *out, const struct pt_trace *t, const struct pt_datapipe *dp)
{
	if (pt_datapipe_empty(dp))
		return;
	pt_box_title(out, "Data Pipeline Summary", 100, '-');
	if (dp->queue_samples) {
		fprintf(out,
			"Queue: %.1f%% of %" PRIu64 " fetches found no batch ready (the training "
			"waited); %.2f ready on average",
			dp->queue_empty_pct, dp->queue_samples, dp->queue_mean);
		if (dp->queue_capacity > 0)
			fprintf(out, ", capacity %.0f", dp->queue_capacity);
		fputs("\n", out);
	} else if (dp->on_training && !dp->workers) {
		fputs("Queue: none: the loader has no workers, its stages run on the training "
		      "thread when a batch is asked for\n",
		      out);
	} else {
		fputs("Queue: not recorded (no \"" PT_DP_QUEUE "\" counter)\n", out);
	}
	if (dp->nlanes) {
		char name[NAME_CAP];
		fprintf(out, "Workers: %zu", dp->workers);
		if (dp->workers)
			fprintf(out, ", busy %.1f%% of their time", dp->workers_busy_pct);
		fputs("\n", out);
		for (size_t i = 0; i < dp->nlanes; i++) {
			const struct pt_dp_lane *l = &dp->lanes[i];
			pt_dp_lane_name(t, l, name, sizeof name);
			fprintf(out, "  %-32s %-9s busy %6.1f%%  %8.2f of %.2f ms, %" PRIu64 " calls",
				name,
				l->training ? "training" : l->pin_only ? "pin" : "worker",
				l->busy_pct, (double)l->busy_ns / 1e6, (double)l->wall_ns / 1e6,
				l->calls);
			if (l->processes > 1)
				fprintf(out, ", %u threads or processes (restarted)", l->processes);
			fputc('\n', out);
		}
	}
	if (dp->nstages) {
		int w[7] = {5, 6, 10, 9, 8, 15, 8};
		char cells[7][CELL], name[NAME_CAP];
		int cols[PT_DP_MAX_STAGES];
		for (size_t i = 0; i < dp->nstages; i++) {
			const char *s = stage_text(t, dp->stages[i].name_id);
			cols[i] = (int)pt_escape_term(name, sizeof name, s, strlen(s), STAGE_W, 0);
			if (cols[i] > w[0])
				w[0] = cols[i];
		}
		pt_box_sep(out, w, 7);
		pt_box_row(out, w, 7,
			   (const char *const[]){"Stage", "Calls", "Total(ms)", "Self(ms)",
						 "Avg(ms)", "Per sample(ms)", "Busy(%)"},
			   -1);
		pt_box_sep(out, w, 7);
		for (size_t i = 0; i < dp->nstages; i++) {
			const struct pt_dp_stage *st = &dp->stages[i];
			const char *s = stage_text(t, st->name_id);
			pt_escape_term(name, sizeof name, s, strlen(s), STAGE_W, 0);
			snprintf(cells[1], CELL, "%" PRIu64, st->calls);
			snprintf(cells[2], CELL, "%.2f", (double)st->total_ns / 1e6);
			snprintf(cells[3], CELL, "%.2f", (double)st->self_ns / 1e6);
			snprintf(cells[4], CELL, "%.3f",
				 st->calls ? (double)st->total_ns / 1e6 / (double)st->calls : 0.0);
			snprintf(cells[5], CELL, "%.4f", st->per_sample_ms);
			snprintf(cells[6], CELL, "%.1f", st->busy_pct);
			pt_box_row(out, w, 7,
				   (const char *const[]){name, cells[1], cells[2], cells[3], cells[4],
							 cells[5], cells[6]},
				   cols[i]);
		}
		pt_box_sep(out, w, 7);
		fprintf(out,
			"Note: Total counts a stage's outermost calls (it includes the stages nested "
			"in it; Self does not). Per sample: over %s. Busy(%%): a share of the busy "
			"time of every lane that ran stages.\n",
			samples_basis(dp));
		if (dp->stages_dropped)
			fprintf(out, "Note: %" PRIu64 " calls of stages past the first %d names are not shown.\n",
				dp->stages_dropped, PT_DP_MAX_STAGES);
	}
	putc('\n', out);
}

void pt_report_data_json(struct pt_buf *b, const struct pt_trace *t, const struct pt_datapipe *dp)
{
	pt_buf_put(b, ",\n  \"data_pipeline\": ", 21);
	if (pt_datapipe_empty(dp)) {
		pt_buf_put(b, "null", 4);
		return;
	}
	pt_buf_putc(b, '{');
	if (dp->queue_samples)
		pt_buf_printf(b, "\"queue_samples\":%" PRIu64 ",\"queue_empty_pct\":%.3f,\"queue_mean\":%.3f",
			      dp->queue_samples, dp->queue_empty_pct, dp->queue_mean);
	else
		bputs(b, "\"queue_samples\":0,\"queue_empty_pct\":null,\"queue_mean\":null");
	if (dp->queue_capacity > 0)
		pt_buf_printf(b, ",\"queue_capacity\":%.0f", dp->queue_capacity);
	else
		bputs(b, ",\"queue_capacity\":null");
	pt_buf_printf(b, ",\"workers\":%zu,\"workers_busy_pct\":%.3f,\"on_training_thread\":%s",
		      dp->workers, dp->workers_busy_pct, dp->on_training ? "true" : "false");
	pt_buf_printf(b, ",\"samples\":%" PRIu64 ",\"samples_from\":\"%s\"", dp->samples,
		      dp->samples_from == 1 ? "getitem" : dp->samples_from == 2 ? "steps" : "calls");
	bputs(b, ",\"lanes\":[");
	for (size_t i = 0; i < dp->nlanes; i++) {
		const struct pt_dp_lane *l = &dp->lanes[i];
		const struct pt_track *tr = &t->tracks[l->track];
		const char *s = tr->label ? pt_trace_str(t, tr->label) : "";
		bputs(b, i ? ",{\"name\":" : "{\"name\":");
		pt_buf_json_str(b, s, strlen(s));
		pt_buf_printf(b,
			      ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"role\":\"%s\",\"busy_ms\":%.3f,"
			      "\"wall_ms\":%.3f,\"busy_pct\":%.3f,\"calls\":%" PRIu64 ",\"processes\":%u}",
			      tr->key.pid, tr->key.tid,
			      l->training ? "training" : l->pin_only ? "pin_memory" : "worker",
			      (double)l->busy_ns / 1e6, (double)l->wall_ns / 1e6, l->busy_pct, l->calls,
			      l->processes);
	}
	bputs(b, "],\"stages\":[");
	for (size_t i = 0; i < dp->nstages; i++) {
		const struct pt_dp_stage *st = &dp->stages[i];
		const char *s = stage_text(t, st->name_id);
		bputs(b, i ? ",{\"name\":" : "{\"name\":");
		pt_buf_json_str(b, s, strlen(s));
		pt_buf_printf(b,
			      ",\"calls\":%" PRIu64 ",\"total_ms\":%.4f,\"self_ms\":%.4f,"
			      "\"per_sample_ms\":%.5f,\"busy_pct\":%.3f}",
			      st->calls, (double)st->total_ns / 1e6, (double)st->self_ns / 1e6,
			      st->per_sample_ms, st->busy_pct);
	}
	pt_buf_putc(b, ']');
	if (dp->slowest >= 0) {
		const char *s = stage_text(t, dp->stages[dp->slowest].name_id);
		bputs(b, ",\"slowest_stage\":");
		pt_buf_json_str(b, s, strlen(s));
	} else {
		bputs(b, ",\"slowest_stage\":null");
	}
	pt_buf_putc(b, '}');
}

void pt_report_dp_advice(const struct pt_trace *t, const struct pt_summary *s,
			 const struct pt_report_opts *o, struct pt_datapipe *dp,
			 struct pt_advice_list *al)
{
	al->n = 0;
	struct pt_advisor_opts ao;
	pt_advisor_opts_init(&ao);
	ao.hang_after_ns = o->hang_after_ns; /* --hang-after */
	if (!o->no_advice)
		pt_advise_trace_pre(t, s, o->ranks, -1, &ao, al, dp, o->prescan);
	else
		pt_datapipe_compute(t, s, dp);
}

static void *adv_main(void *arg)
{
	struct pt_report_adv *j = arg;
	pt_report_dp_advice(j->t, j->s, j->o, &j->dp, &j->al);
	return NULL;
}

void pt_report_adv_start(struct pt_report_adv *j, const struct pt_trace *t,
			 const struct pt_summary *s, const struct pt_report_opts *o)
{
	j->t = t;
	j->s = s;
	j->o = o;
	j->threaded = 0;
	if (t && t->store && pt_store_count(t->store) >= PT_SUMMARIZE_PIPE_EVENTS) {
		pt_store_sort(t->store); /* sorted before: from here only read */
		j->threaded = pt_thread_start_apart(&j->th, adv_main, j) == 0;
	}
	if (!j->threaded)
		adv_main(j);
}

void pt_report_adv_wait(struct pt_report_adv *j)
{
	if (j->threaded)
		pthread_join(j->th, NULL);
	j->threaded = 0;
}
