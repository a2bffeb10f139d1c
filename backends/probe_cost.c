/*
 * probe_cost.c - the probe measures what it costs, so proftop can show its
 * own overhead (events per step x cost per event, src/analyze/overhead.c). Once the
 * session clock has settled (the TSC slope is known, ~2 ms into the process,
 * or clock_gettime is the clock), the first thread to claim a ring or end a
 * step times COST_ROUNDS x COST_PAIRS push/pop pairs of the real hot path
 * (two clock reads, one 32-byte record, the release store of head) into a
 * private scratch ring, and writes the median round's cost per event into
 * the segment header (event_cost_ps). Well under a millisecond, once per
 * process; nothing reaches the session's rings. Static scratch storage, no
 * allocation: the first claim may happen inside a signal handler.
 */
#include "probe_int.h"

#define G pt_probe_g

#define COST_PAIRS 256u /* per round; fits the scratch ring without wrapping */
#define COST_ROUNDS 9u
#define COST_SLOTS 512u

static struct {
	struct pt_shm_ring ring;
	struct pt_shm_rec recs[COST_SLOTS];
} scratch_ring;
static struct pt_tstate scratch;
static int busy; /* one measuring thread at a time */

static void sort_u64(uint64_t *v, unsigned n)
{
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
			uint64_t x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
}

void pt_probe_cost_measure(void)
{
	if (__atomic_load_n(&G.cost_done, __ATOMIC_RELAXED) || !G.hdr || G.forked || G.child ||
	    !pt_clock_settled())
		return;
	int expect = 0;
	if (!__atomic_compare_exchange_n(&busy, &expect, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	struct pt_tstate *t = &scratch;
	t->ring = &scratch_ring.ring;
	t->recs = scratch_ring.recs;
	t->mask = COST_SLOTS - 1;
	t->depth = 0;
	(void)pt_clock_now(&t->clk); /* anchor the scratch clock */
	uint32_t name = G.phase_name[PT_KIND_PROFILE_STEP];
	uint64_t ps[COST_ROUNDS];
	for (unsigned r = 0; r < COST_ROUNDS; r++) {
		t->head = 0;
		t->cached_tail = 0;
		uint64_t a = pt_clock_mono_ns();
		for (unsigned i = 0; i < COST_PAIRS; i++) {
			pt_probe_push(t, name, PT_KIND_USER_DEFINED, 0);
			pt_probe_pop(t, 0);
		}
		uint64_t b = pt_clock_mono_ns();
		ps[r] = (b - a) * 1000u / COST_PAIRS;
	}
	sort_u64(ps, COST_ROUNDS);
	uint64_t cost = ps[COST_ROUNDS / 2];
	__atomic_store_n(&G.hdr->event_cost_ps, cost ? cost : 1, __ATOMIC_RELAXED);
	__atomic_store_n(&G.cost_done, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
}
