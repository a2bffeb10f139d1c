/*
 * probe_api.c - the public C API of include/proftop/proftop.h, the only
 * symbols libproftop.so exports besides the injection entry points
 * (InitializeInjectionNvtx2, InitializeInjection) and the CUPTI files'
 * interposed cupti* and _exit/_Exit (probe_cupti_share.c, _flow.c). Each
 * call takes a timestamp and writes at most one 32-byte record into the
 * calling thread's ring (probe_int.h); with the probe off, in a forked child
 * or after the thread's exit handler ran, every call returns at once.
 */
#include <string.h>

#include "probe_int.h"
#include "proftop/proftop.h"

/* the counter of a step's tokens: PT_STEP_TOKENS in agg.h, which reads it */
#define PT_STEP_TOKENS_NAME "Step tokens"

#define G pt_probe_g

/* A thread with no ring counts the events it would have written. */
#define SELF_OR(t, on_noring)                                                                      \
	struct pt_tstate *t = pt_probe_self();                                                     \
	if (PT_UNLIKELY(PT_TS_SPECIAL(t))) {                                                       \
		if (t == PT_TS_NORING) {                                                           \
			on_noring;                                                                 \
		}                                                                                  \
		return;                                                                            \
	}

PT_EXPORT int proftop_abi_version(void)
{
	return PROFTOP_ABI_VERSION;
}

PT_EXPORT int proftop_enabled(void)
{
	return __atomic_load_n(&G.state, __ATOMIC_ACQUIRE) == PT_PROBE_ON && !G.forked &&
	       pt_probe_tls != PT_TS_DEAD;
}

PT_EXPORT void proftop_step(uint64_t samples)
{
	SELF_OR(t, pt_probe_count_noring());
	if (PT_UNLIKELY(!__atomic_load_n(&G.cost_done, __ATOMIC_RELAXED)))
		pt_probe_cost_measure(); /* once, when the clock has settled */
	uint64_t now = pt_clock_now(&t->clk);
	uint64_t start = t->step_start_ns;
	t->step_start_ns = now;
	t->last_step_ns = start;
	pt_probe_emit(t, now, start, now > start ? now - start : 0, samples,
		      G.phase_name[PT_KIND_PROFILE_STEP], PT_KIND_PROFILE_STEP, 0,
		      (uint16_t)(t->depth < 0xffff ? t->depth : 0xffff));
}

PT_EXPORT void proftop_step_span(uint64_t start_ns, uint64_t end_ns, uint64_t samples)
{
	SELF_OR(t, pt_probe_count_noring());
	if (PT_UNLIKELY(!__atomic_load_n(&G.cost_done, __ATOMIC_RELAXED)))
		pt_probe_cost_measure();
	uint64_t now = pt_clock_now(&t->clk);
	/* never in the future, never inverted: a caller's bad times give a short step */
	if (end_ns > now)
		end_ns = now;
	if (start_ns > end_ns)
		start_ns = end_ns;
	t->step_start_ns = end_ns;
	t->last_step_ns = start_ns;
	pt_probe_emit(t, now, start_ns, end_ns - start_ns, samples,
		      G.phase_name[PT_KIND_PROFILE_STEP], PT_KIND_PROFILE_STEP, 0, 0);
}

PT_EXPORT uint64_t proftop_now(void)
{
	struct pt_tstate *t = pt_probe_self();
	if (PT_UNLIKELY(PT_TS_SPECIAL(t)))
		return pt_clock_mono_ns();
	return pt_clock_now(&t->clk);
}

PT_EXPORT int proftop_reader_attached(void)
{
	if (__atomic_load_n(&G.state, __ATOMIC_ACQUIRE) != PT_PROBE_ON || G.forked)
		return 0;
	return pt_probe_reader_attached(pt_clock_mono_ns());
}

PT_EXPORT void proftop_step_begin(void)
{
	SELF_OR(t, (void)0);
	t->step_start_ns = pt_clock_now(&t->clk);
}

PT_EXPORT void proftop_phase_push(enum proftop_phase phase)
{
	SELF_OR(t, (void)0);
	uint8_t kind = phase >= PROFTOP_PHASE_DATALOADER && phase <= PROFTOP_PHASE_OPTIMIZATION
			       ? (uint8_t)phase
			       : PT_KIND_USER_DEFINED;
	/* enum proftop_phase values are the pt_kind values of the phases */
	pt_probe_push(t, kind == PT_KIND_USER_DEFINED ? 0 : G.phase_name[kind], kind, 0);
}

static inline void pop0(void)
{
	SELF_OR(t, pt_probe_count_noring());
	pt_probe_pop(t, 0);
}

PT_EXPORT void proftop_phase_pop(void)
{
	pop0();
}

static inline void push_named(const char *name, uint8_t kind)
{
	SELF_OR(t, (void)0);
	uint8_t phase;
	uint32_t off = name ? pt_probe_name(t, name, 0, &phase) : 0;
	pt_probe_push(t, off, name && !off ? PT_PROBE_KIND_DROP : kind, 0);
}

PT_EXPORT void proftop_op_push(const char *name)
{
	push_named(name, PT_KIND_OPERATOR);
}

PT_EXPORT void proftop_op_pop(void)
{
	pop0();
}

PT_EXPORT void proftop_range_push(const char *name)
{
	push_named(name, PT_KIND_USER_DEFINED);
}

PT_EXPORT void proftop_range_pop(void)
{
	pop0();
}

PT_EXPORT uint32_t proftop_name(const char *name)
{
	if (!name || __atomic_load_n(&G.state, __ATOMIC_ACQUIRE) != PT_PROBE_ON || G.forked)
		return 0;
	return pt_probe_intern(name, strlen(name));
}

static inline uint32_t valid_id(uint32_t id)
{
	/* ids come from proftop_name(); anything else is recorded unnamed */
	return id < G.strings_bytes && (id & 7u) == 0 ? id : 0;
}

PT_EXPORT void proftop_op_push_id(uint32_t name_id)
{
	SELF_OR(t, (void)0);
	pt_probe_push(t, valid_id(name_id), PT_KIND_OPERATOR, 0);
}

PT_EXPORT void proftop_range_push_id(uint32_t name_id)
{
	SELF_OR(t, (void)0);
	pt_probe_push(t, valid_id(name_id), PT_KIND_USER_DEFINED, 0);
}

static inline void instant(const char *name, uint8_t kind, uint64_t arg)
{
	SELF_OR(t, pt_probe_count_noring());
	uint8_t phase;
	uint32_t off = name ? pt_probe_name(t, name, 0, &phase) : 0;
	if (name && !off)
		return; /* counted in dropped_no_string */
	uint64_t now = pt_clock_now(&t->clk);
	pt_probe_emit(t, now, now, 0, arg, off, kind, 0,
		      (uint16_t)(t->depth < 0xffff ? t->depth : 0xffff));
}

/* One collective record and its group record, both or neither (coll.h). */
static void coll_emit(uint32_t op_id, uint32_t group_id, uint64_t seq, uint64_t time_ns,
		      uint64_t start_ns, uint64_t bytes, uint32_t group_size, uint32_t flags,
		      uint8_t done)
{
	SELF_OR(t, pt_probe_count_noring());
	uint64_t now = pt_clock_now(&t->clk);
	/* a reader behind: both dropped (with none, the oldest go, as ever) */
	if (pt_probe_ring_free(t, 2) < 2 && pt_probe_reader_attached(now)) {
		pt_probe_count_dropped(t);
		pt_probe_count_dropped(t);
		return;
	}
	if (!time_ns)
		time_ns = now;
	pt_probe_emit(t, now, time_ns, seq, bytes, valid_id(op_id), PT_SHM_REC_COLL, done,
		      (uint16_t)(flags & 0xffffu));
	pt_probe_emit(t, now, done ? start_ns : 0, group_size, 0, valid_id(group_id),
		      PT_SHM_REC_COLL_GROUP, 0, 0);
}

PT_EXPORT void proftop_coll_enter(uint32_t op_id, uint32_t group_id, uint64_t seq,
				  uint64_t bytes, uint32_t group_size, uint32_t flags)
{
	coll_emit(op_id, group_id, seq, 0, 0, bytes, group_size, flags, 0);
}

PT_EXPORT void proftop_coll_done(uint32_t op_id, uint32_t group_id, uint64_t seq,
				 uint64_t start_ns, uint64_t bytes, uint32_t group_size,
				 uint32_t flags)
{
	coll_emit(op_id, group_id, seq, 0, start_ns, bytes, group_size, flags, PT_SHM_COLL_DONE);
}

PT_HIDDEN void pt_probe_coll_done_at(uint32_t op_id, uint32_t group_id, uint64_t seq,
				     uint64_t start_ns, uint64_t end_ns, uint64_t bytes,
				     uint32_t group_size, uint32_t flags)
{
	coll_emit(op_id, group_id, seq, end_ns, start_ns, bytes, group_size, flags,
		  PT_SHM_COLL_DONE);
}

PT_EXPORT void proftop_mark(const char *name)
{
	instant(name, PT_KIND_INSTANT, 0);
}

PT_EXPORT void proftop_helper_stats(uint64_t calls, uint64_t cost_ps)
{
	struct pt_shm_header *h = pt_probe_g.hdr;
	if (!h || pt_probe_g.forked || pt_probe_g.child)
		return;
	if (cost_ps)
		__atomic_store_n(&h->helper_cost_ps, cost_ps, __ATOMIC_RELAXED);
	if (calls)
		__atomic_store_n(&h->helper_calls, calls, __ATOMIC_RELAXED);
}

PT_EXPORT void proftop_step_tokens(uint64_t tokens)
{
	SELF_OR(t, pt_probe_count_noring());
	if (!tokens)
		return;
	uint8_t phase;
	uint32_t off = pt_probe_name(t, PT_STEP_TOKENS_NAME, 0, &phase);
	if (!off)
		return; /* counted in dropped_no_string */
	double v = (double)tokens;
	uint64_t bits;
	memcpy(&bits, &v, sizeof bits);
	/* at the step's own start, so that it counts in that step */
	pt_probe_emit(t, pt_clock_now(&t->clk), t->last_step_ns, 0, bits, off, PT_KIND_COUNTER, 0,
		      (uint16_t)(t->depth < 0xffff ? t->depth : 0xffff));
}

PT_EXPORT void proftop_counter(const char *name, double value)
{
	uint64_t bits;
	memcpy(&bits, &value, sizeof bits);
	instant(name, PT_KIND_COUNTER, bits);
}
