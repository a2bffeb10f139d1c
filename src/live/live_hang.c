/*
 * live_hang.c - the hang, looked for while the job runs (live_opts.h): a
 * collective some ranks entered and that has not completed for hang_after.
 * A pass over the rows that are open costs little; the full figures
 * (colls.h) are worked out only when one is old enough.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "live/live_hang.h"
#include "proftop/colls.h"

void pt_live_hang_check(struct pt_trace *t, const struct pt_live_opts *o,
			struct pt_live_result *res, uint64_t now_ns)
{
	uint64_t after = o->hang_after_ns ? o->hang_after_ns : PT_HANG_AFTER_DEFAULT_NS;
	const struct pt_colls *c = &t->colls;
	const struct pt_coll *oldest = NULL;
	for (size_t i = 0; i < c->n; i++) {
		const struct pt_coll *r = &c->v[i];
		if (!r->end_ns && !(r->flags & PT_COLL_P2P) && now_ns >= r->start_ns &&
		    now_ns - r->start_ns >= after && (!oldest || r->start_ns < oldest->start_ns))
			oldest = r;
	}
	if (!oldest) {
		if (res->hang[0] && o->hang_out) {
			fprintf(o->hang_out,
				"proftop: hang over: collective #%" PRIu64 " completed after %.0f s\n",
				res->hang_seq, (double)(now_ns - res->hang_since_ns) / 1e9);
			fflush(o->hang_out);
		}
		res->hang[0] = 0;
		return;
	}
	struct pt_coll_stats s;
	pt_coll_stats_compute(t, 0, now_ns, after, &s);
	if (s.hang.active) {
		int fresh = !res->hang[0] || res->hang_seq != s.hang.seq ||
			    res->hang_group != oldest->group;
		pt_coll_hang_line(&s.hang, res->hang, sizeof res->hang);
		res->hang_seq = s.hang.seq;
		res->hang_group = oldest->group;
		res->hang_since_ns = now_ns - (uint64_t)(s.hang.since_s * 1e9);
		if (fresh && o->hang_out) {
			fprintf(o->hang_out, "proftop: hang: %s\n", res->hang);
			fflush(o->hang_out);
		}
	}
	pt_coll_stats_free(&s);
}
