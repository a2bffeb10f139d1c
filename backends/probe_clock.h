/*
 * probe_clock.h - the probe's fast session clock. Values are CLOCK_MONOTONIC
 * nanoseconds; on x86-64 with an invariant, kernel-trusted TSC they are
 * computed from rdtsc with a per-thread anchor (tsc, ns) and a global slope
 * calibrated against CLOCK_MONOTONIC. Each thread re-anchors itself on
 * clock_gettime every PT_CLOCK_REANCHOR_NS (on a pair read close together:
 * a preempted one is not used), so the error stays below
 * slope error x interval (well under a microsecond once calibrated) however
 * long the process runs, and NTP slewing of CLOCK_MONOTONIC is followed.
 * Until the slope is known (the first ~2 ms of the process) and whenever the
 * TSC is unusable or PROFTOP_CLOCK=monotonic, every read is clock_gettime.
 *
 * Threading: a struct pt_tclock belongs to one thread; the global slope is
 * read and refined with relaxed atomics, no locks.
 */
#ifndef PT_PROBE_CLOCK_H
#define PT_PROBE_CLOCK_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define PT_CLOCK_REANCHOR_NS 20000000ull /* 20 ms */

struct pt_tclock {
	uint64_t anchor_tsc;
	uint64_t anchor_ns;
	uint64_t mult;  /* ns per tick, 32.32 fixed point */
	uint64_t limit; /* ticks after the anchor before re-anchoring; 0 = always slow */
};

/* Detects the TSC and takes the calibration base. Called once, early. */
void pt_clock_init(void);
/* 1 when reads come from the TSC (after calibration), 0 for clock_gettime. */
int pt_clock_uses_tsc(void);
/* 1 once reads run at their final speed: the TSC slope is known, or the TSC
 * is not used at all (for the probe's own cost measurement). */
int pt_clock_settled(void);
/* Re-anchors c (or falls back to clock_gettime) and returns the time. */
uint64_t pt_clock_slow(struct pt_tclock *c);

static inline uint64_t pt_clock_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t pt_clock_now(struct pt_tclock *c)
{
#if defined(__x86_64__)
	uint64_t d = __rdtsc() - c->anchor_tsc;
	if (__builtin_expect(d < c->limit, 1))
		return c->anchor_ns + ((d * c->mult) >> 32);
#endif
	return pt_clock_slow(c);
}

#endif
