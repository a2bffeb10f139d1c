/*
 * probe_clock.c - calibration of the probe's TSC clock against
 * CLOCK_MONOTONIC (see probe_clock.h). The slope is measured over the whole
 * time since the probe started: (mono - mono0) / (tsc - tsc0), refined each
 * time a thread re-anchors and the baseline has doubled, so its error falls
 * from ~30 ppm at 2 ms to well below 0.1 ppm after a second, with no wait at
 * process start. The TSC is used only when cpuid says it is invariant and
 * the kernel itself uses it as its clocksource (otherwise its ticks may not
 * agree between CPUs) and PROFTOP_CLOCK is not "monotonic".
 */
#include "probe_clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#define MIN_BASELINE_NS 2000000ull   /* first slope after 2 ms */
#define MAX_BRACKET_TICKS 4000ull    /* a pair read further apart was preempted */

static int g_tsc_ok;
static uint64_t g_tsc0, g_mono0;
static uint64_t g_mult;        /* atomic; 0 = not calibrated yet */
static uint64_t g_baseline_ns; /* atomic; baseline of g_mult */

#if defined(__x86_64__)
static int tsc_usable(void)
{
	const char *env = getenv("PROFTOP_CLOCK");
	if (env && strcmp(env, "monotonic") == 0)
		return 0;
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return 0;
	__get_cpuid(0x80000007u, &a, &b, &c, &d);
	if (!(d & (1u << 8)))
		return 0; /* not invariant: rate changes with frequency scaling */
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
	if (!f)
		return 1;
	char buf[32] = "";
	int ok = fgets(buf, sizeof buf, f) && strncmp(buf, "tsc", 3) == 0;
	fclose(f);
	return ok;
}

/* A (tsc, mono) pair: mono bracketed by two TSC reads; returns the bracket width. */
static uint64_t read_pair(uint64_t *tsc, uint64_t *mono)
{
	uint64_t a = __rdtsc();
	*mono = pt_clock_mono_ns();
	uint64_t b = __rdtsc();
	*tsc = a + (b - a) / 2;
	return b - a;
}
#endif

void pt_clock_init(void)
{
#if defined(__x86_64__)
	g_tsc_ok = tsc_usable();
	if (!g_tsc_ok)
		return;
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 5; i++) {
		uint64_t t, m, w = read_pair(&t, &m);
		if (w < best) {
			best = w;
			g_tsc0 = t;
			g_mono0 = m;
		}
	}
#endif
}

int pt_clock_settled(void)
{
	return !g_tsc_ok || __atomic_load_n(&g_mult, __ATOMIC_RELAXED) != 0;
}

int pt_clock_uses_tsc(void)
{
	return g_tsc_ok && __atomic_load_n(&g_mult, __ATOMIC_RELAXED) != 0;
}

uint64_t pt_clock_slow(struct pt_tclock *c)
{
#if defined(__x86_64__)
	if (!g_tsc_ok) {
		c->limit = 0;
		return pt_clock_mono_ns();
	}
	/* A pair whose reads were far apart (the thread was preempted between
	 * them) pins the TSC to the wrong nanosecond by up to half the gap,
	 * for every read until the next anchor: try again, and never anchor
	 * on a wide one (this read then returns the exact time and the next
	 * one tries anew). */
	uint64_t tsc, mono, width = read_pair(&tsc, &mono);
	for (int i = 0; i < 3 && width >= MAX_BRACKET_TICKS; i++)
		width = read_pair(&tsc, &mono);
	uint64_t base_ns = mono - g_mono0, base_tsc = tsc - g_tsc0;
	uint64_t have = __atomic_load_n(&g_baseline_ns, __ATOMIC_RELAXED);
	if (width < MAX_BRACKET_TICKS && base_ns >= MIN_BASELINE_NS && base_ns >= 2 * have &&
	    base_tsc > 0) {
		unsigned __int128 m = ((unsigned __int128)base_ns << 32) / base_tsc;
		if (m > 0 && m < ((unsigned __int128)1 << 40)) {
			/* Two threads may race here; either value is a good slope. */
			__atomic_store_n(&g_mult, (uint64_t)m, __ATOMIC_RELAXED);
			__atomic_store_n(&g_baseline_ns, base_ns, __ATOMIC_RELAXED);
		}
	}
	uint64_t mult = __atomic_load_n(&g_mult, __ATOMIC_RELAXED);
	if (mult == 0 || width >= MAX_BRACKET_TICKS) {
		c->limit = 0;
		return mono;
	}
	c->anchor_tsc = tsc;
	c->anchor_ns = mono;
	c->mult = mult;
	c->limit = (uint64_t)(((unsigned __int128)PT_CLOCK_REANCHOR_NS << 32) / mult);
	return mono;
#else
	c->limit = 0;
	return pt_clock_mono_ns();
#endif
}
