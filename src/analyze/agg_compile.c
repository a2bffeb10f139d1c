/*
 * agg_compile.c - torch.compile's steps in words: the one line that the
 * report (under the Perf Summary) and the screen (under the verdict) give
 * when some steps compiled. The counting itself is agg_steps.c's
 * (settle_compile), from the Python helper's "torch.compile: ..." ranges.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "proftop/agg.h"

static void add(char *buf, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
	if (*len >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = *len + (size_t)n < cap ? *len + (size_t)n : cap - 1;
}

/* seconds from 1 s on, else milliseconds */
static const char *dur(char *buf, size_t cap, uint64_t ns)
{
	if (ns >= 1000000000ull)
		snprintf(buf, cap, "%.3f s", (double)ns / 1e9);
	else
		snprintf(buf, cap, "%.1f ms", (double)ns / 1e6);
	return buf;
}

int pt_compile_line(const struct pt_summary *s, char *buf, size_t cap, int brief)
{
	const struct pt_perf *p = &s->perf;
	if (!cap)
		return 0;
	buf[0] = 0;
	if (!p->compile_steps && !p->graph_breaks)
		return 0;
	size_t len = 0;
	if (brief) {
		add(buf, cap, &len, "compile: %" PRIu64 "/%zu steps compiling%s; %" PRIu64
				    " recompile%s, %" PRIu64 " graph break%s",
		    p->compile_steps, s->nsteps, p->compile_left_out ? ", not in figures" : "",
		    p->recompiles, p->recompiles == 1 ? "" : "s", p->graph_breaks,
		    p->graph_breaks == 1 ? "" : "s");
		return 1;
	}
	add(buf, cap, &len, "torch.compile: %" PRIu64 " of %zu steps compiled", p->compile_steps,
	    s->nsteps);
	if (p->compile_steps) {
		add(buf, cap, &len, " (");
		uint64_t shown = 0;
		for (size_t i = 0; i < s->nsteps; i++) {
			if (!s->steps[i].compile_ns)
				continue;
			if (shown == 4) {
				add(buf, cap, &len, " ...");
				break;
			}
			add(buf, cap, &len, "%s#%" PRId64, shown ? " " : "", s->steps[i].number);
			shown++;
		}
		char d1[32], d2[32];
		add(buf, cap, &len, ", %s; %s compiling), %s", dur(d1, sizeof d1, p->compile_step_ns),
		    dur(d2, sizeof d2, p->compile_ns),
		    p->compile_left_out ? "left out of the figures"
		    : p->compile_steps == s->nsteps ? "in the figures (every step compiled)"
						    : "in the figures (--with-compile)");
	}
	add(buf, cap, &len, "; %" PRIu64 " compile%s (%" PRIu64 " recompile%s), %" PRIu64
			    " graph break%s",
	    p->compiles, p->compiles == 1 ? "" : "s", p->recompiles, p->recompiles == 1 ? "" : "s",
	    p->graph_breaks, p->graph_breaks == 1 ? "" : "s");
	return 1;
}
