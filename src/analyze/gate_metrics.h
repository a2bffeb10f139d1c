/*
 * gate_metrics.h - the figures `--fail-if` can test on report and record
 * (ips, step_p99_ms, reader_ratio, ...), looked up over a trace and its
 * summary, and the command-line side of the gate every command shares:
 * the exit codes, parse errors with a caret under the column, the one-line
 * reason on stderr. `proftop diff` reuses this with its own lookup.
 */
#ifndef PT_GATE_METRICS_H
#define PT_GATE_METRICS_H

#include <stdio.h>

#include "proftop/agg.h"
#include "proftop/gate.h"
#include "proftop/trace.h"

/* Exit codes of commands with --fail-if (0-2 as every command). */
#define PT_EXIT_OK 0
#define PT_EXIT_ERROR 1  /* the command failed, or a figure is undefined here */
#define PT_EXIT_USAGE 2  /* bad command line, bad --fail-if, unknown figure */
#define PT_EXIT_GATE 3   /* the --fail-if condition held */

/* What report/record figures are computed from (neither owned). */
struct pt_gate_figures {
	const struct pt_trace *t; /* may be NULL: dropped* and overhead then unknown */
	const struct pt_summary *s;
};

struct pt_gate_figure_info {
	const char *name;
	const char *help;
};
/* The report figures with one line of help each; ends with {NULL, NULL}. */
extern const struct pt_gate_figure_info pt_gate_figure_names[];

/* 0 and *v; PT_ENOENT unknown name; PT_ENOTAVAIL undefined for this trace. */
int pt_gate_figure(const struct pt_gate_figures *f, const char *name, double *v);
/* The same as a pt_metric_fn (ctx = struct pt_gate_figures *). */
int pt_gate_metric(void *ctx, const char *name, double *v);

/* Prints the report figures and their help, indented, one per line. */
void pt_gate_list_figures(FILE *out, const char *indent);

/*
 * Parses a --fail-if expression. On error prints
 *   proftop: --fail-if: at column 5: expected a number after '<'
 *     ips <
 *         ^
 * to err and returns PT_EXIT_USAGE; else 0 with *out set.
 */
int pt_gate_cli_parse(const char *expr, struct pt_gate **out, FILE *err);

/*
 * Checks before any work that every figure in g is one names_fn knows
 * (a lookup that may answer PT_ENOTAVAIL for everything it knows). On an
 * unknown figure prints the error and the known names (list(err)) and
 * returns PT_EXIT_USAGE; else 0.
 */
int pt_gate_cli_check_names(const struct pt_gate *g, pt_metric_fn names_fn, void *ctx,
			    void (*list)(FILE *out), FILE *err);

/*
 * Evaluates g; when it holds prints "proftop: --fail-if: REASON" and returns
 * PT_EXIT_GATE. Unknown figure: the error and list(err), PT_EXIT_USAGE.
 * Undefined figure: the error, PT_EXIT_ERROR. Otherwise 0.
 */
int pt_gate_cli_eval(const struct pt_gate *g, pt_metric_fn fn, void *ctx,
		     void (*list)(FILE *out), FILE *err);

/* The report figures' list for the functions above. */
void pt_gate_list_report_figures(FILE *out);
/* A names-only lookup over the report figures (for pt_gate_cli_check_names). */
int pt_gate_report_name(void *ctx, const char *name, double *v);

#endif
