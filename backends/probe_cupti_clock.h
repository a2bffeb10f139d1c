/*
 * probe_cupti_clock.h - which clock CUPTI's timestamps are on, and the way
 * back to the session clock (CLOCK_MONOTONIC ns). The probe asks CUPTI for
 * CLOCK_MONOTONIC (cuptiActivityRegisterTimestampCallback), but that is a
 * process-wide setting: another profiler in the process (torch.profiler's
 * Kineto registers raw TSC ticks) may replace it, an old libcupti may ignore
 * it after the context exists, and a libcupti with the zero-timestamp bug is
 * better left on its default clock (CLOCK_REALTIME). So the clock of every
 * record is checked, never assumed:
 *
 *  - coarse: a start must map into [tracing start - 1 s, now + 1 s]. The
 *    candidate clocks (MONOTONIC, REALTIME, TSC, whatever cuptiGetTimestamp
 *    returns) are 1e12 to 1e18 ns apart, so exactly one fits; the clock of
 *    the previous record is tried first.
 *  - fine: a kernel must start after the runtime or driver call that
 *    launched it (its correlation id's entry in the launch table, written on
 *    the launching thread) and within PT_CUPTI_LAUNCH_BOUND_NS of it. A
 *    start before its launch on a clock the probe maps by a measured offset
 *    (REALTIME, TSC, CUPTI's) means the offset is off: it is realigned by the
 *    difference. Every early or late start is counted, for a note.
 *
 * Anchors (raw, mono) pairs are taken by the caller about once a second
 * (pt_cupti_clock_anchor); slopes come from the baseline since the first
 * anchor of a clock, so the TSC needs no frequency from anywhere else.
 *
 * Threading: the launch table is written by any launching thread
 * (pt_cupti_launch_note, two relaxed stores and a release) and read by the
 * translating thread (a torn entry is detected and ignored); the rest of
 * struct pt_cupti_clock belongs to the translating thread.
 */
#ifndef PT_PROBE_CUPTI_CLOCK_H
#define PT_PROBE_CUPTI_CLOCK_H

#include <stdint.h>

enum pt_cupti_dom {
	PT_CLK_MONO = 0,  /* CLOCK_MONOTONIC ns: the probe's own timestamp callback */
	PT_CLK_REALTIME,  /* CLOCK_REALTIME ns: CUPTI's default on Linux */
	PT_CLK_TSC,       /* raw TSC ticks (Kineto's approximate clock on x86-64) */
	PT_CLK_CUPTI,     /* whatever cuptiGetTimestamp returns now */
	PT_CLK__N
};

#define PT_CUPTI_LAUNCHES 65536u                       /* power of two */
#define PT_CUPTI_LAUNCH_SLACK_NS 100000ull             /* start may precede its launch by this */
#define PT_CUPTI_LAUNCH_BOUND_NS 30000000000ull        /* 30 s from launch to start */
#define PT_CUPTI_PLAUSIBLE_NS 1000000000ull            /* the coarse window's margins */

struct pt_cupti_launch {
	uint32_t corr; /* 0 = empty */
	uint32_t pad;
	uint64_t ns;   /* session clock at the launch call's entry */
};

struct pt_cupti_map {
	int valid;
	double ns_per_unit;       /* slope */
	uint64_t raw0, mono0;     /* latest anchor */
	uint64_t raw_base, mono_base; /* first anchor of this clock (slope baseline) */
	int64_t realign_ns;       /* learnt from kernels that started before their launch */
};

struct pt_cupti_clock {
	int dom;                  /* clock of the latest record */
	uint64_t start_ns;        /* session clock when tracing started */
	struct pt_cupti_map map[PT_CLK__N];
	struct pt_cupti_launch *launches; /* PT_CUPTI_LAUNCHES entries, or NULL */
	/* what the checks saw */
	uint64_t checked;         /* records whose launch was known */
	uint64_t early, late;     /* started before / long after their launch */
	uint64_t max_early_ns, max_late_ns;
	uint64_t switches;        /* changes of clock between records */
	uint64_t unmapped;        /* on no candidate clock */
	uint64_t realigned;       /* corrections applied */
};

/* Names for messages: "CLOCK_MONOTONIC", "CLOCK_REALTIME", "TSC", "CUPTI's clock". */
const char *pt_cupti_dom_name(int dom);
void pt_cupti_clock_init(struct pt_cupti_clock *c, struct pt_cupti_launch *launches,
			 uint64_t start_ns, int dom);
/*
 * One (raw, mono) pair of clock dom, read as close together as possible.
 * REALTIME keeps slope 1 (an offset; NTP steps are followed); TSC and
 * CUPTI's clock get the slope of their baseline once it spans 1 ms. A
 * CUPTI pair far off the line of the last ones (that clock was replaced)
 * restarts that clock's baseline. Returns 1 when dom's line jumped.
 */
int pt_cupti_clock_anchor(struct pt_cupti_clock *c, int dom, uint64_t raw, uint64_t mono);
/* raw on clock dom as session nanoseconds; 0 when dom is not mapped yet. */
uint64_t pt_cupti_clock_to(const struct pt_cupti_clock *c, int dom, uint64_t raw);
/*
 * Maps one device record [raw_start, raw_end] launched with correlation id
 * corr, at session time now_ns. Returns 1 with *start, *end on the session
 * clock, or 0 when no candidate clock puts it in range (counted in unmapped).
 */
int pt_cupti_clock_map(struct pt_cupti_clock *c, uint32_t corr, uint64_t raw_start,
		       uint64_t raw_end, uint64_t now_ns, uint64_t *start, uint64_t *end);

/* On the launching thread, at the launch call's entry. */
static inline void pt_cupti_launch_note(struct pt_cupti_launch *tab, uint32_t corr, uint64_t ns)
{
	struct pt_cupti_launch *e = &tab[corr & (PT_CUPTI_LAUNCHES - 1)];
	__atomic_store_n(&e->corr, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE); /* a reader never pairs the new ns with corr */
	__atomic_store_n(&e->ns, ns, __ATOMIC_RELAXED);
	__atomic_store_n(&e->corr, corr, __ATOMIC_RELEASE);
}

/* The launch time of corr, 0 when unknown (never seen, overwritten, or torn). */
static inline uint64_t pt_cupti_launch_of(const struct pt_cupti_launch *tab, uint32_t corr)
{
	if (!tab || !corr)
		return 0;
	const struct pt_cupti_launch *e = &tab[corr & (PT_CUPTI_LAUNCHES - 1)];
	if (__atomic_load_n(&e->corr, __ATOMIC_ACQUIRE) != corr)
		return 0;
	uint64_t ns = __atomic_load_n(&e->ns, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&e->corr, __ATOMIC_RELAXED) == corr ? ns : 0;
}

#endif
