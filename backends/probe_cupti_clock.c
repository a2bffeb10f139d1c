/*
 * probe_cupti_clock.c - mapping CUPTI timestamps to the session clock and
 * checking each kernel against its launch (see probe_cupti_clock.h). Pure
 * arithmetic on what the caller measured: no clock is read here, so the
 * unit tests drive it with made-up clocks.
 */
#include "probe_cupti_clock.h"

#include <string.h>

#define JUMP_NS 1000000ll        /* a CUPTI-clock pair this far off its line: another clock */
#define MIN_BASELINE_NS 1000000u /* slope of a baseline at least this long */

const char *pt_cupti_dom_name(int dom)
{
	static const char *const names[PT_CLK__N] = {"CLOCK_MONOTONIC", "CLOCK_REALTIME", "TSC",
						     "CUPTI's clock"};
	return dom >= 0 && dom < PT_CLK__N ? names[dom] : "an unknown clock";
}

void pt_cupti_clock_init(struct pt_cupti_clock *c, struct pt_cupti_launch *launches,
			 uint64_t start_ns, int dom)
{
	memset(c, 0, sizeof *c);
	c->launches = launches;
	c->start_ns = start_ns;
	c->dom = dom >= 0 && dom < PT_CLK__N ? dom : PT_CLK_MONO;
	c->map[PT_CLK_MONO].valid = 1;
	c->map[PT_CLK_MONO].ns_per_unit = 1.0;
}

static int64_t diff(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b);
}

uint64_t pt_cupti_clock_to(const struct pt_cupti_clock *c, int dom, uint64_t raw)
{
	if (dom == PT_CLK_MONO)
		return raw;
	if (dom < 0 || dom >= PT_CLK__N || !c->map[dom].valid)
		return 0;
	const struct pt_cupti_map *m = &c->map[dom];
	double d = (double)diff(raw, m->raw0) * m->ns_per_unit;
	if (d > 9e18 || d < -9e18)
		return 0;
	int64_t v = (int64_t)m->mono0 + (int64_t)d + m->realign_ns;
	return v > 0 ? (uint64_t)v : 0;
}

int pt_cupti_clock_anchor(struct pt_cupti_clock *c, int dom, uint64_t raw, uint64_t mono)
{
	if (dom <= PT_CLK_MONO || dom >= PT_CLK__N)
		return 0;
	struct pt_cupti_map *m = &c->map[dom];
	int jumped = 0;
	if (m->raw_base && m->valid && dom == PT_CLK_CUPTI) {
		/* where the line so far puts this pair (without the realignment); a
		 * line without a slope yet cannot tell */
		uint64_t want = pt_cupti_clock_to(c, dom, raw) - (uint64_t)m->realign_ns;
		int64_t off = diff(want, mono);
		if (off > JUMP_NS || off < -JUMP_NS)
			jumped = 1;
	}
	if (!m->raw_base || jumped) {
		m->raw_base = m->raw0 = raw;
		m->mono_base = m->mono0 = mono;
		m->realign_ns = 0;
		m->ns_per_unit = 1.0;
		/* an offset is enough for REALTIME; the others need a slope first */
		m->valid = dom == PT_CLK_REALTIME;
		return jumped;
	}
	m->raw0 = raw;
	m->mono0 = mono;
	if (dom != PT_CLK_REALTIME && mono - m->mono_base >= MIN_BASELINE_NS && raw > m->raw_base) {
		m->ns_per_unit = (double)(mono - m->mono_base) / (double)(raw - m->raw_base);
		m->valid = 1;
	}
	return 0;
}

int pt_cupti_clock_map(struct pt_cupti_clock *c, uint32_t corr, uint64_t raw_start,
		       uint64_t raw_end, uint64_t now_ns, uint64_t *start, uint64_t *end)
{
	uint64_t lo = c->start_ns > PT_CUPTI_PLAUSIBLE_NS ? c->start_ns - PT_CUPTI_PLAUSIBLE_NS : 0;
	uint64_t hi = now_ns + PT_CUPTI_PLAUSIBLE_NS;
	int order[PT_CLK__N + 1] = {c->dom, PT_CLK_MONO, PT_CLK_REALTIME, PT_CLK_TSC, PT_CLK_CUPTI};
	int dom = -1;
	uint64_t s = 0;
	for (int i = 0; i <= PT_CLK__N; i++) {
		if (i > 0 && order[i] == c->dom)
			continue;
		s = pt_cupti_clock_to(c, order[i], raw_start);
		if (s && s >= lo && s <= hi) {
			dom = order[i];
			break;
		}
	}
	if (dom < 0) {
		c->unmapped++;
		return 0;
	}
	if (dom != c->dom) {
		c->switches++;
		c->dom = dom;
	}
	struct pt_cupti_map *m = &c->map[dom];
	double dur = (double)(raw_end - raw_start) * (dom == PT_CLK_MONO ? 1.0 : m->ns_per_unit);
	uint64_t launch = pt_cupti_launch_of(c->launches, corr);
	if (launch) {
		c->checked++;
		if (s + PT_CUPTI_LAUNCH_SLACK_NS < launch) {
			uint64_t e = launch - s;
			c->early++;
			if (e > c->max_early_ns)
				c->max_early_ns = e;
			if (dom != PT_CLK_MONO) {
				/* the measured offset is off by at least e: realign */
				m->realign_ns += (int64_t)e;
				c->realigned++;
				s = launch;
			}
		} else if (s > launch + PT_CUPTI_LAUNCH_BOUND_NS) {
			c->late++;
			if (s - launch > c->max_late_ns)
				c->max_late_ns = s - launch;
		}
	}
	*start = s;
	*end = s + (uint64_t)(dur > 0 ? dur + 0.5 : 0);
	return 1;
}
