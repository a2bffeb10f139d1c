/*
 * advisor_scan.c - the facts the advisor needs that the summary does not
 * keep (pt_advisor_scan): time in kernel-launch runtime calls, time in
 * synchronizing calls, and for each synchronizing call the operators open
 * around it on its thread - the outermost one is what the user wrote
 * (aten::item for `.item()`, aten::to for `.cpu()`), the innermost what
 * actually copied (aten::_local_scalar_dense, aten::copy_). One pass over
 * the host tracks of the window with a per-track stack of open operators;
 * the aggregator's op-detail tree holds operators only, not the runtime
 * calls under them, so it cannot answer "who synchronized".
 */
#include <stdlib.h>
#include <string.h>

#include "proftop/advisor.h"
#include "proftop/store.h"
#include "model/util.h"

#define SCAN_MAX_DEPTH 64

/* Per name id, decided once: bit 1 = kernel launch, bit 2 = synchronizing. */
#define NM_KNOWN  0x80u
#define NM_LAUNCH 0x01u
#define NM_SYNC	  0x02u

struct open_op {
	uint64_t end_ns;
	uint32_t name_id;
};

struct name_cache {
	uint8_t *v;
	size_t n;
};

static int has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static uint8_t classify_name(const char *s)
{
	uint8_t f = NM_KNOWN;
	if (has_prefix(s, "cudaLaunch") || has_prefix(s, "cuLaunch") ||
	    has_prefix(s, "hipLaunch") || has_prefix(s, "hipExtLaunch") ||
	    has_prefix(s, "hipModuleLaunch") || has_prefix(s, "cudaGraphLaunch"))
		f |= NM_LAUNCH;
	/* the classifier's list (classify.c) plus the driver API spellings,
	 * for events whose source set no flags */
	if (has_prefix(s, "cudaDeviceSynchronize") || has_prefix(s, "cudaStreamSynchronize") ||
	    has_prefix(s, "cudaEventSynchronize") || has_prefix(s, "cuCtxSynchronize") ||
	    has_prefix(s, "cuStreamSynchronize") || has_prefix(s, "cuEventSynchronize") ||
	    has_prefix(s, "hipDeviceSynchronize") || has_prefix(s, "hipStreamSynchronize") ||
	    has_prefix(s, "hipEventSynchronize") ||
	    ((has_prefix(s, "cudaMemcpy") || has_prefix(s, "hipMemcpy") ||
	      has_prefix(s, "cuMemcpy")) &&
	     !strstr(s, "Async")))
		f |= NM_SYNC;
	return f;
}

static uint8_t name_flags(struct name_cache *c, const struct pt_trace *t, uint32_t id)
{
	if (id >= c->n) {
		size_t nn = c->n ? c->n : 256;
		while (nn <= id)
			nn *= 2;
		c->v = pt_xrealloc(c->v, nn);
		memset(c->v + c->n, 0, nn - c->n);
		c->n = nn;
	}
	if (!c->v[id])
		c->v[id] = classify_name(pt_trace_str(t, id));
	return c->v[id];
}

static void add_site(struct pt_advisor_facts *f, uint32_t outer, uint32_t inner, uint32_t call,
		     uint64_t ns)
{
	for (size_t i = 0; i < f->nsites; i++) {
		struct pt_sync_site *s = &f->sites[i];
		if (s->outer_op == outer && s->inner_op == inner && s->call == call) {
			s->ns += ns;
			s->calls++;
			return;
		}
	}
	if (f->nsites == PT_ADVISOR_SITES) {
		f->other_ns += ns;
		return;
	}
	f->sites[f->nsites++] = (struct pt_sync_site){outer, inner, call, ns, 1};
}

int pt_advisor_scan(const struct pt_trace *t, uint64_t t0_ns, uint64_t t1_ns, int64_t pid,
		    struct pt_advisor_facts *f)
{
	memset(f, 0, sizeof *f);
	f->scanned = 1;
	struct name_cache nc = {0};
	struct open_op stack[SCAN_MAX_DEPTH];
	uint32_t ntr = pt_store_track_count(t->store);
	for (uint32_t tr = 0; tr < ntr && tr < t->ntracks; tr++) {
		const struct pt_track *track = &t->tracks[tr];
		if (pt_track_is_device(track) || (pid >= 0 && track->key.pid != pid))
			continue;
		if (!pt_store_track_events(t->store, tr))
			continue;
		size_t depth = 0;
		struct pt_store_iter it;
		pt_store_iter_init(&it, t->store, tr, t0_ns, t1_ns);
		const struct pt_event *ev;
		while ((ev = pt_store_iter_next(&it)) != NULL) {
			while (depth && stack[depth - 1].end_ns <= ev->start_ns)
				depth--;
			if (ev->kind == PT_KIND_OPERATOR) {
				/* deeper ones are left out: the outermost names
				 * the call site, and pops go by end time */
				if (depth < SCAN_MAX_DEPTH)
					stack[depth++] =
					    (struct open_op){pt_event_end(ev), ev->name_id};
				continue;
			}
			if (ev->kind != PT_KIND_CUDA_RUNTIME)
				continue;
			f->runtime_ns += ev->dur_ns;
			uint8_t nf = name_flags(&nc, t, ev->name_id);
			if (nf & NM_LAUNCH) {
				f->launch_ns += ev->dur_ns;
				f->launch_calls++;
			}
			if ((nf & NM_SYNC) || (ev->flags & PT_EVF_SYNC)) {
				f->sync_ns += ev->dur_ns;
				f->sync_calls++;
				add_site(f, depth ? stack[0].name_id : 0,
					 depth ? stack[depth - 1].name_id : 0, ev->name_id,
					 ev->dur_ns);
			}
		}
		pt_store_iter_done(&it);
	}
	free(nc.v);
	return 0;
}
