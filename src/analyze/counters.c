/*
 * counters.c - statistics of counter series kept in a trace's store
 * (counters.h). One pass over the kept events; the counter's name is looked
 * up once, so a trace without it costs a hash probe.
 */
#include <math.h>
#include <string.h>

#include "proftop/counters.h"
#include "proftop/store.h"
#include "proftop/strtab.h"

struct visit {
	uint32_t name;
	uint64_t t0_ns, t1_ns;
	uint64_t n;
	double sum, min, max;
};

static int visit_one(void *ctx, struct pt_event *ev)
{
	struct visit *v = ctx;
	if (ev->kind != PT_KIND_COUNTER || ev->name_id != v->name || ev->start_ns < v->t0_ns ||
	    ev->start_ns > v->t1_ns)
		return 0;
	double x;
	memcpy(&x, &ev->arg, sizeof x);
	if (!isfinite(x))
		return 0;
	if (v->n == 0 || x < v->min)
		v->min = x;
	if (v->n == 0 || x > v->max)
		v->max = x;
	v->sum += x;
	v->n++;
	return 0;
}

uint64_t pt_counter_stat(const struct pt_trace *t, const char *name, uint64_t t0_ns,
			 uint64_t t1_ns, struct pt_counter_stat *out)
{
	memset(out, 0, sizeof *out);
	struct visit v = {0};
	v.name = pt_strtab_find(t->strings, name, strlen(name));
	if (!v.name)
		return 0;
	v.t0_ns = t0_ns;
	v.t1_ns = t1_ns;
	pt_store_foreach(t->store, visit_one, &v);
	if (v.n) {
		out->n = v.n;
		out->avg = v.sum / (double)v.n;
		out->min = v.min;
		out->max = v.max;
	}
	return v.n;
}
