/*
 * gate.h - the CI gate: a small condition language over named figures,
 *
 *   ips<120 || reader_ratio>0.2
 *   ips_delta<-5% && step_p99_ms>200
 *
 * so a training-performance regression can fail a build (`--fail-if` on
 * report, record and diff). Comparisons < <= > >= == != between a figure and
 * a number (a trailing % divides by 100), joined by && and || (&& binds
 * tighter), with parentheses and !. The figures come from a lookup callback,
 * so report, record and diff each offer their own (diff adds *_delta, the
 * relative change: -0.05 = 5% lower).
 */
#ifndef PROFTOP_GATE_H
#define PROFTOP_GATE_H

#include <stddef.h>

/* Looks a figure up: 0 and *value, or PT_ENOENT when the name is unknown. */
typedef int (*pt_metric_fn)(void *ctx, const char *name, double *value);

struct pt_gate;

/* Parses expr; on error returns PT_EINVAL with a one-line reason in err. */
int pt_gate_parse(const char *expr, struct pt_gate **out, char *err, size_t errlen);
/*
 * Evaluates the condition: 1 when it holds (the build should fail; reason
 * says which comparison(s) held, with the figures, e.g. "ips 101.3 < 120"),
 * 0 when it does not, a negative PT_E* code when a figure is unknown or
 * undefined (reason names it).
 */
int pt_gate_eval(const struct pt_gate *g, pt_metric_fn fn, void *ctx, char *reason, size_t len);
void pt_gate_free(struct pt_gate *g);

#endif
