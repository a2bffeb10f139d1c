/*
 * live.h - the loop shared by `proftop run`, `record`, `serve` and
 * attaching: opens the session and /proc backends, polls them on a timer
 * (never spinning), feeds the trace, watches a launched child, handles
 * Ctrl-C, and either redraws a text summary every refresh period or stays
 * quiet (the caller prints or exports at the end). One session (a child,
 * -p PID) or many at once (-p A,B,..., --all: one process per rank of the
 * trace, sessions that appear later picked up). Its options and result:
 * live_opts.h.
 */
#ifndef PT_LIVE_H
#define PT_LIVE_H

#include <stdint.h>
#include <stdio.h>

#include "live/live_opts.h"
#include "proftop/trace.h"

/* Runs until the session or child ends, Ctrl-C, or the duration. */
int pt_live_run(struct pt_trace *t, const struct pt_live_opts *o, struct pt_live_result *res);
/* Installs the SIGINT/SIGTERM handlers (call before forking a child). */
void pt_live_signals(void);
/* Prints the text view (a status line and the summary tables, top rows;
 * with several ranks in t, the Rank Summary too). inc, rinc: the summary
 * and the per-rank figures kept from the previous print of the same trace
 * (agg.h, ranks.h), or NULL for a full pt_summarize / pt_ranks_compute. */
struct pt_agg_live;
struct pt_ranks_live;
/* The summary that fits a terminal of cols columns (pt_report_brief), after
 * a status line: what run and attach print when their screen closes. */
void pt_live_print_brief(FILE *out, struct pt_trace *t, const struct pt_live_result *res,
			 int cols);
void pt_live_print(FILE *out, struct pt_trace *t, const struct pt_live_result *res, int top,
		   int clear, struct pt_agg_live *inc, struct pt_ranks_live *rinc);
/*
 * One line of figures for logs (--every), over the steps that began since
 * the last line (st, zero at first), e.g.
 *   proftop: t=10.0s step=1234 steps=56 ips=456.7 reader_cost_ms=1.234
 *   batch_cost_ms=4.567 reader_ratio=27.0% dataloader=27.0% forward=30.1%
 *   backward=40.2% optimization=2.0% others=0.7% dropped=0
 * (one line; ips in samples/s when every step has a sample count, else
 * steps/s with "ips_unit=steps/s"; no steps: "steps=0" and no figures).
 */
struct pt_live_line_state {
	uint64_t since_ns; /* the last counted step's end */
	uint64_t steps;    /* steps counted so far (step= is the last one's number, from 0) */
};
void pt_live_line(FILE *out, struct pt_trace *t, struct pt_live_line_state *st,
		  uint64_t elapsed_ns);
/* Exit code of a wait status: the code, or 128 + signal. */
int pt_live_exit_code(int status);

#endif
