/*
 * prom.c - the Prometheus text exposition (format 0.0.4) of per-rank
 * figures (prom.h): one pass per metric family over the ranks, so each
 * family's # HELP / # TYPE comes once and its samples stay together as the
 * format requires. The constant part of every sample's labels (host, rank,
 * pid) is escaped once per rank, and each rank's top-N operators are chosen
 * and their names escaped and made unique once, before the families are
 * written. Numbers are written without printf where it matters: counts as
 * integers and nanosecond totals as exact decimal seconds.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "output/prom.h"

void pt_prom_opts_init(struct pt_prom_opts *o)
{
	memset(o, 0, sizeof *o);
	o->top = PT_PROM_DEFAULT_TOP;
	o->render_s = -1;
}

/* ---- numbers ---- */

static void put_u64(struct pt_buf *b, uint64_t v)
{
	char tmp[24];
	int i = sizeof tmp;
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	pt_buf_put(b, tmp + i, sizeof tmp - (size_t)i);
}

static void put_i64(struct pt_buf *b, int64_t v)
{
	if (v < 0) {
		pt_buf_putc(b, '-');
		put_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(b, (uint64_t)v);
	}
}

/* Nanoseconds as exact decimal seconds ("1.5", "0.000001234", "3"). */
static void put_ns_s(struct pt_buf *b, uint64_t ns)
{
	put_u64(b, ns / 1000000000ull);
	uint64_t frac = ns % 1000000000ull;
	if (!frac)
		return;
	char tmp[10];
	int len = 9;
	tmp[0] = '.';
	for (int i = 9; i >= 1; i--) {
		tmp[i] = (char)('0' + frac % 10);
		frac /= 10;
	}
	while (tmp[len] == '0')
		len--;
	pt_buf_put(b, tmp, (size_t)len + 1);
}

/* A float as the format spells it: NaN, +Inf, -Inf, else %.15g. */
static void put_f64(struct pt_buf *b, double v)
{
	if (isnan(v)) {
		pt_buf_put(b, "NaN", 3);
	} else if (isinf(v)) {
		pt_buf_put(b, v > 0 ? "+Inf" : "-Inf", 4);
	} else if (v == (double)(int64_t)v && fabs(v) < 1e15) {
		put_i64(b, (int64_t)v);
	} else {
		char tmp[32];
		int n = snprintf(tmp, sizeof tmp, "%.15g", v);
		pt_buf_put(b, tmp, (size_t)n);
	}
}

/* ---- label values ---- */

/* Length of the valid UTF-8 sequence at p (n bytes left) and its code point; 0 if invalid. */
static size_t utf8_seq(const unsigned char *p, size_t n, uint32_t *cp)
{
	unsigned char c = p[0];
	size_t len;
	uint32_t v, min;
	if (c < 0xc2 || c > 0xf4)
		return 0; /* continuation byte, overlong lead, or past U+10FFFF */
	if (c < 0xe0) {
		len = 2;
		v = c & 0x1f;
		min = 0x80;
	} else if (c < 0xf0) {
		len = 3;
		v = c & 0x0f;
		min = 0x800;
	} else {
		len = 4;
		v = c & 0x07;
		min = 0x10000;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (p[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

static const char hexd[] = "0123456789ABCDEF";

void pt_prom_label_value(struct pt_buf *out, const char *s, size_t len, size_t max_bytes)
{
	const unsigned char *p = (const unsigned char *)s;
	/* room for the text; a cut one ends with "..." within max_bytes */
	size_t budget = max_bytes > 3 ? max_bytes - 3 : max_bytes ? 1 : SIZE_MAX;
	size_t start = out->len, i = 0;
	if (max_bytes && len <= max_bytes) {
		/* short enough whole if nothing grows: then no cut is needed */
		size_t j = 0;
		while (j < len && p[j] >= 0x20 && p[j] < 0x7f && p[j] != '\\' && p[j] != '"')
			j++;
		if (j == len) {
			pt_buf_put(out, s, len);
			return;
		}
	}
	while (i < len) {
		size_t used = out->len - start;
		/* plain printable ASCII runs go through in one copy */
		size_t j = i;
		while (j < len && p[j] >= 0x20 && p[j] < 0x7f && p[j] != '\\' && p[j] != '"')
			j++;
		if (j > i) {
			size_t n = j - i;
			if (used + n > budget) {
				pt_buf_put(out, s + i, budget - used);
				pt_buf_put(out, "...", 3);
				return;
			}
			pt_buf_put(out, s + i, n);
			i = j;
			continue;
		}
		unsigned char c = p[i];
		uint32_t cp = 0;
		size_t n = 1;
		char e[8];
		size_t elen;
		if (c == '\\' || c == '"') {
			e[0] = '\\';
			e[1] = (char)c;
			elen = 2;
		} else if (c == '\n') {
			memcpy(e, "\\n", 2);
			elen = 2;
		} else if (c < 0x20 || c == 0x7f) {
			/* shown as the text \xNN: an escaped backslash, then x and hex */
			memcpy(e, "\\\\x", 3);
			e[3] = hexd[c >> 4];
			e[4] = hexd[c & 15];
			elen = 5;
		} else if ((n = utf8_seq(p + i, len - i, &cp)) == 0) {
			memcpy(e, "\xef\xbf\xbd", 3); /* U+FFFD per invalid byte */
			elen = 3;
			n = 1;
		} else if (cp <= 0x9f) {
			/* C1 controls: as the text \u0085 */
			memcpy(e, "\\\\u00", 5);
			e[5] = hexd[cp >> 4];
			e[6] = hexd[cp & 15];
			elen = 7;
		} else {
			memcpy(e, s + i, n);
			elen = n;
		}
		if (used + elen > budget) {
			pt_buf_put(out, "...", 3);
			return;
		}
		pt_buf_put(out, e, elen);
		i += n;
	}
}

/* ---- per-rank preparation ---- */

struct op_pick {
	uint64_t total_ns;
	uint32_t row;
};

struct rank_prep {
	const struct pt_rank_stat *st;
	struct pt_buf labels; /* host="..",rank="..",pid=".." */
	struct op_pick *ops;  /* chosen operator rows, highest total first */
	size_t nops;
	struct pt_buf names; /* escaped, unique op label values, back to back */
	size_t *name_off;    /* nops + 1 offsets into names */
};

/* Highest total first; ties by row so the output is stable. */
static int pick_cmp(const void *a, const void *b)
{
	const struct op_pick *x = a, *y = b;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/* Min-heap on (total, -row): the root is the weakest of the kept rows. */
static int pick_weaker(const struct op_pick *a, const struct op_pick *b)
{
	return pick_cmp(a, b) > 0;
}

static void heap_down(struct op_pick *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && pick_weaker(&h[l], &h[m]))
			m = l;
		if (r < n && pick_weaker(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		struct op_pick t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* The top rows of tab by total CPU time: O(n log top). */
static size_t pick_top(const struct pt_table *tab, size_t top, struct op_pick **out)
{
	size_t k = tab->n < top ? tab->n : top;
	*out = NULL;
	if (!k)
		return 0;
	struct op_pick *h = pt_xmalloc(k * sizeof *h);
	size_t n = 0;
	for (size_t i = 0; i < tab->n; i++) {
		struct op_pick p = {tab->rows[i].cpu.total_ns, (uint32_t)i};
		if (n < k) {
			h[n++] = p;
			if (n == k)
				for (size_t j = k / 2 + 1; j-- > 0;)
					heap_down(h, k, j);
		} else if (pick_weaker(&h[0], &p)) {
			h[0] = p;
			heap_down(h, k, 0);
		}
	}
	qsort(h, k, sizeof *h, pick_cmp);
	*out = h;
	return k;
}

/* Open-addressing set of the names written so far (indices into offsets). */
struct name_set {
	uint32_t *slot; /* index + 1, 0 = empty */
	size_t mask;
};

static int name_seen(const struct name_set *set, const struct pt_buf *names, const size_t *off,
		     const char *s, size_t len, uint64_t h)
{
	for (size_t i = h & set->mask;; i = (i + 1) & set->mask) {
		uint32_t v = set->slot[i];
		if (!v)
			return 0;
		size_t a = off[v - 1], l = off[v] - a;
		if (l == len && !memcmp(names->p + a, s, len))
			return 1;
	}
}

static void name_add(struct name_set *set, uint64_t h, uint32_t idx)
{
	size_t i = h & set->mask;
	while (set->slot[i])
		i = (i + 1) & set->mask;
	set->slot[i] = idx + 1;
}

static void prep_ops(struct rank_prep *rp, const struct pt_prom_opts *o)
{
	const struct pt_summary *s = rp->st->summary;
	if (!s || !o->strings || !o->top)
		return;
	rp->nops = pick_top(&s->operators, o->top, &rp->ops);
	if (!rp->nops)
		return;
	rp->name_off = pt_xmalloc((rp->nops + 1) * sizeof *rp->name_off);
	struct name_set set;
	size_t cap = 8;
	while (cap < rp->nops * 2)
		cap <<= 1;
	set.slot = pt_xcalloc(cap, sizeof *set.slot);
	set.mask = cap - 1;
	for (size_t i = 0; i < rp->nops; i++) {
		uint32_t id = s->operators.rows[rp->ops[i].row].name_id;
		const char *name = pt_strtab_get(o->strings, id);
		size_t len = pt_strtab_len(o->strings, id);
		size_t at = rp->names.len;
		rp->name_off[i] = at;
		pt_prom_label_value(&rp->names, name, len, PT_PROM_MAX_LABEL_BYTES);
		size_t base = rp->names.len;
		/* a name that shows the same as an earlier one gets " [k]" */
		for (unsigned k = 2;; k++) {
			uint64_t h = pt_hash_bytes(rp->names.p + at, rp->names.len - at);
			if (!name_seen(&set, &rp->names, rp->name_off, rp->names.p + at,
				       rp->names.len - at, h)) {
				rp->name_off[i + 1] = rp->names.len;
				name_add(&set, h, (uint32_t)i);
				break;
			}
			rp->names.len = base;
			pt_buf_printf(&rp->names, " [%u]", k);
		}
	}
	free(set.slot);
}

static void put_label(struct pt_buf *b, const char *name, const char *val, size_t len)
{
	pt_buf_printf(b, "%s=\"", name);
	pt_prom_label_value(b, val, len, PT_PROM_MAX_LABEL_BYTES);
	pt_buf_putc(b, '"');
}

static const char *host_of(const struct pt_rank_stat *st, const struct pt_prom_opts *o)
{
	return st->host[0] ? st->host : o->host ? o->host : "";
}

static void prep_rank(struct rank_prep *rp, const struct pt_rank_stat *st,
		      const struct pt_prom_opts *o)
{
	memset(rp, 0, sizeof *rp);
	rp->st = st;
	const char *host = host_of(st, o);
	put_label(&rp->labels, "host", host, strlen(host));
	if (st->rank >= 0) {
		pt_buf_put(&rp->labels, ",rank=\"", 7);
		put_i64(&rp->labels, st->rank);
		pt_buf_putc(&rp->labels, '"');
	}
	pt_buf_put(&rp->labels, ",pid=\"", 6);
	put_i64(&rp->labels, st->pid);
	pt_buf_putc(&rp->labels, '"');
	prep_ops(rp, o);
}

static void free_rank(struct rank_prep *rp)
{
	pt_buf_free(&rp->labels);
	pt_buf_free(&rp->names);
	free(rp->ops);
	free(rp->name_off);
}

/* ---- writing ---- */

static void family(struct pt_buf *b, const char *name, const char *type, const char *help)
{
	pt_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{labels[,extra]} — the value follows. */
static void sample(struct pt_buf *b, const char *name, const struct pt_buf *labels,
		   const char *extra)
{
	pt_buf_put(b, name, strlen(name));
	pt_buf_putc(b, '{');
	pt_buf_put(b, labels->p, labels->len);
	if (extra && *extra) {
		pt_buf_putc(b, ',');
		pt_buf_put(b, extra, strlen(extra));
	}
	pt_buf_put(b, "} ", 2);
}

static void end_f64(struct pt_buf *b, double v)
{
	put_f64(b, v);
	pt_buf_putc(b, '\n');
}

/* The per-rank figures written as plain gauges. */
enum rank_fig {
	FIG_STEPS,
	FIG_LAST_STEP,
	FIG_STEP_MEAN,
	FIG_IPS,
	FIG_SAMPLES,
	FIG_READER,
	FIG_COMM,
	FIG_OVERLAP,
	FIG_CPU,
	FIG_EVENTS,
};

static double rank_fig(const struct pt_rank_stat *st, enum rank_fig f)
{
	switch (f) {
	case FIG_STEPS:
		return (double)st->steps;
	case FIG_LAST_STEP:
		return (double)st->last_step;
	case FIG_STEP_MEAN:
		return st->step_avg_ms / 1e3;
	case FIG_IPS:
		return st->ips;
	case FIG_SAMPLES:
		return st->samples_per_s;
	case FIG_READER:
		return st->reader_ratio;
	case FIG_COMM:
		return st->comm_share;
	case FIG_OVERLAP:
		return st->comm_overlap;
	case FIG_CPU:
		return st->cpu_util_pct / 100.0;
	case FIG_EVENTS:
		return (double)st->events;
	}
	return NAN;
}

struct rank_gauge {
	const char *name, *help;
	enum rank_fig fig;
	int skip_negative; /* leave the series out when the figure is unknown (< 0) */
};

static const struct rank_gauge rank_gauges_a[] = {
    {"proftop_steps", "Complete training steps in the window.", FIG_STEPS, 0},
    {"proftop_last_step", "Number of the last complete step.", FIG_LAST_STEP, 1},
    {"proftop_step_mean_seconds", "Mean step time over the window.", FIG_STEP_MEAN, 0},
    {"proftop_ips", "Steps per second (Paddle's ips).", FIG_IPS, 0},
    {"proftop_samples_per_second", "Samples per second; 0 when the trainer gave no sample counts.",
     FIG_SAMPLES, 0},
    {"proftop_reader_ratio", "Dataloader time / step time (0..1).", FIG_READER, 0},
};

static const struct rank_gauge rank_gauges_b[] = {
    {"proftop_communication_ratio", "Communication time / step time (0..1).", FIG_COMM, 0},
    {"proftop_communication_overlap_ratio",
     "Communication overlapped with computation / communication (0..1).", FIG_OVERLAP, 0},
    {"proftop_process_cpu_ratio",
     "CPU(Process): process CPU time / elapsed time; 1 = one core, above 1 with several "
     "busy threads.",
     FIG_CPU, 1},
    {"proftop_rank_events", "Events aggregated for this rank in the window.", FIG_EVENTS, 0},
};

static void rank_gauges(struct pt_buf *b, const struct rank_gauge *g, size_t n,
			const struct rank_prep *rp, size_t nr)
{
	for (size_t k = 0; k < n; k++) {
		family(b, g[k].name, "gauge", g[k].help);
		for (size_t i = 0; i < nr; i++) {
			double v = rank_fig(rp[i].st, g[k].fig);
			if (g[k].skip_negative && v < 0)
				continue;
			sample(b, g[k].name, &rp[i].labels, NULL);
			end_f64(b, v);
		}
	}
}

static void host_sample(struct pt_buf *b, const char *name, const struct pt_buf *hl,
			const char *extra)
{
	sample(b, name, hl, extra);
}

static void write_exporter(struct pt_buf *b, const struct pt_buf *hl, const struct pt_ranks *r,
			   const struct pt_prom_opts *o)
{
	if (o->version) {
		family(b, "proftop_build_info", "gauge", "The proftop exporting these figures.");
		struct pt_buf ex = {0};
		put_label(&ex, "version", o->version, strlen(o->version));
		pt_buf_putc(&ex, 0);
		host_sample(b, "proftop_build_info", hl, ex.p);
		pt_buf_put(b, "1\n", 2);
		pt_buf_free(&ex);
	}
	family(b, "proftop_sessions", "gauge", "Live profiling sessions being read.");
	host_sample(b, "proftop_sessions", hl, NULL);
	end_f64(b, o->sessions_up);
	family(b, "proftop_ranks", "gauge", "Processes (ranks) with events in the window.");
	host_sample(b, "proftop_ranks", hl, NULL);
	end_f64(b, r ? (double)r->n : 0);
	family(b, "proftop_events_total", "counter", "Events received from the sources.");
	host_sample(b, "proftop_events_total", hl, NULL);
	put_u64(b, o->events_total);
	pt_buf_putc(b, '\n');
	family(b, "proftop_events_kept", "gauge", "Events held in memory under the --max-mem cap.");
	host_sample(b, "proftop_events_kept", hl, NULL);
	put_u64(b, o->events_kept);
	pt_buf_putc(b, '\n');
	family(b, "proftop_store_bytes", "gauge", "Memory used by the events held.");
	host_sample(b, "proftop_store_bytes", hl, NULL);
	put_u64(b, o->store_bytes);
	pt_buf_putc(b, '\n');
	family(b, "proftop_dropped_events_total", "counter",
	       "Events lost: by the probe (full rings) or by the memory cap (oldest first).");
	host_sample(b, "proftop_dropped_events_total", hl, "reason=\"source\"");
	put_u64(b, o->dropped_source);
	pt_buf_putc(b, '\n');
	host_sample(b, "proftop_dropped_events_total", hl, "reason=\"memory_cap\"");
	put_u64(b, o->dropped_store);
	pt_buf_putc(b, '\n');
	family(b, "proftop_window_seconds", "gauge",
	       "Span of recent time the figures cover (--window moves on in steps of half "
	       "of it); 0 = every event kept.");
	host_sample(b, "proftop_window_seconds", hl, NULL);
	end_f64(b, o->window_s);
	if (o->render_s >= 0) {
		family(b, "proftop_refresh_seconds", "gauge",
		       "Time the previous refresh took to compute and render the figures.");
		host_sample(b, "proftop_refresh_seconds", hl, NULL);
		end_f64(b, o->render_s);
	}
	if (o->updated_unix_s > 0) {
		family(b, "proftop_last_refresh_timestamp_seconds", "gauge",
		       "Unix time the figures were computed.");
		host_sample(b, "proftop_last_refresh_timestamp_seconds", hl, NULL);
		end_f64(b, o->updated_unix_s);
	}
	if (r && r->n >= 2) {
		family(b, "proftop_step_spread", "gauge",
		       "Slowest rank's mean step time / the median over ranks (1 = even).");
		host_sample(b, "proftop_step_spread", hl, NULL);
		end_f64(b, r->spread);
	}
}

static const char *const phase_label[PT_RANK__PHASES] = {
    "phase=\"dataloader\"",   "phase=\"forward\"", "phase=\"backward\"",
    "phase=\"optimization\"", "phase=\"other\"",
};

static void write_step_summary(struct pt_buf *b, const struct rank_prep *rp, size_t nr)
{
	static const char q50[] = "quantile=\"0.5\"", q99[] = "quantile=\"0.99\"",
			  q100[] = "quantile=\"1\"";
	family(b, "proftop_step_seconds", "summary",
	       "Step time over the window: median, 99th percentile, maximum (quantile 1).");
	for (size_t i = 0; i < nr; i++) {
		const struct pt_rank_stat *st = rp[i].st;
		int none = st->steps == 0;
		sample(b, "proftop_step_seconds", &rp[i].labels, q50);
		end_f64(b, none ? NAN : st->step_p50_ms / 1e3);
		sample(b, "proftop_step_seconds", &rp[i].labels, q99);
		end_f64(b, none ? NAN : st->step_p99_ms / 1e3);
		sample(b, "proftop_step_seconds", &rp[i].labels, q100);
		end_f64(b, none ? NAN : st->step_max_ms / 1e3);
		sample(b, "proftop_step_seconds_sum", &rp[i].labels, NULL);
		end_f64(b, st->step_avg_ms / 1e3 * (double)st->steps);
		sample(b, "proftop_step_seconds_count", &rp[i].labels, NULL);
		put_u64(b, st->steps);
		pt_buf_putc(b, '\n');
	}
}

static void write_phases(struct pt_buf *b, const struct rank_prep *rp, size_t nr)
{
	family(b, "proftop_phase_ratio", "gauge",
	       "Share of step time per phase: dataloader, forward, backward, optimization, other.");
	for (size_t i = 0; i < nr; i++)
		for (int p = 0; p < PT_RANK__PHASES; p++) {
			sample(b, "proftop_phase_ratio", &rp[i].labels, phase_label[p]);
			end_f64(b, rp[i].st->phase_share[p]);
		}
}

static void write_gpu(struct pt_buf *b, const struct rank_prep *rp, size_t nr)
{
	family(b, "proftop_gpu_utilization_ratio", "gauge",
	       "Device busy time (kernels merged across streams) / elapsed time, per device.");
	for (size_t i = 0; i < nr; i++) {
		const struct pt_rank_stat *st = rp[i].st;
		const struct pt_summary *s = st->summary;
		char dev[40];
		if (s && s->ndevices) {
			for (size_t d = 0; d < s->ndevices; d++) {
				snprintf(dev, sizeof dev, "device=\"%d\"",
					 (int)s->devices[d].device);
				sample(b, "proftop_gpu_utilization_ratio", &rp[i].labels, dev);
				end_f64(b, s->devices[d].util_pct / 100.0);
			}
		} else if (st->gpu_util_pct >= 0) {
			/* figures without a per-device table: all of the rank's devices */
			sample(b, "proftop_gpu_utilization_ratio", &rp[i].labels, "device=\"all\"");
			end_f64(b, st->gpu_util_pct / 100.0);
		}
	}
}

/* One operator family: field 0 CPU total, 1 GPU total, 2 calls. */
static void write_ops(struct pt_buf *b, const struct rank_prep *rp, size_t nr, int field)
{
	static const char *const names[3] = {
	    "proftop_operator_seconds", "proftop_operator_gpu_seconds", "proftop_operator_calls"};
	static const char *const helps[3] = {
	    "CPU time of the operator over the window (inclusive), top operators per rank.",
	    "GPU time launched from inside the operator over the window, top operators per rank.",
	    "Calls of the operator over the window, top operators per rank."};
	family(b, names[field], "gauge", helps[field]);
	size_t nlen = strlen(names[field]);
	for (size_t i = 0; i < nr; i++) {
		const struct pt_summary *s = rp[i].st->summary;
		for (size_t k = 0; k < rp[i].nops; k++) {
			const struct pt_row *row = &s->operators.rows[rp[i].ops[k].row];
			pt_buf_put(b, names[field], nlen);
			pt_buf_putc(b, '{');
			pt_buf_put(b, rp[i].labels.p, rp[i].labels.len);
			pt_buf_put(b, ",op=\"", 5);
			pt_buf_put(b, rp[i].names.p + rp[i].name_off[k],
				   rp[i].name_off[k + 1] - rp[i].name_off[k]);
			pt_buf_put(b, "\"} ", 3);
			if (field == 0)
				put_ns_s(b, row->cpu.total_ns);
			else if (field == 1)
				put_ns_s(b, row->gpu.total_ns);
			else
				put_u64(b, row->cpu.n);
			pt_buf_putc(b, '\n');
		}
	}
}

/* ---- collectives (colls.h) ---- */

/* host, group and op labels of a collective's series */
static void coll_labels(struct pt_buf *b, const struct pt_buf *hl, const char *group,
			const char *op)
{
	b->len = 0;
	pt_buf_put(b, hl->p, hl->len);
	pt_buf_putc(b, ',');
	put_label(b, "group", group, strlen(group));
	pt_buf_putc(b, ',');
	put_label(b, "op", op, strlen(op));
}

static void rank_labels(struct pt_buf *b, const struct pt_buf *hl, int64_t rank, int64_t pid)
{
	b->len = 0;
	pt_buf_put(b, hl->p, hl->len);
	pt_buf_put(b, ",rank=\"", 7);
	put_i64(b, rank);
	pt_buf_put(b, "\",pid=\"", 7);
	put_i64(b, pid);
	pt_buf_putc(b, '"');
}

enum coll_fig { CF_CALLS, CF_SKEW_AVG, CF_SKEW_MAX, CF_LAST_RANK, CF_LAST_SHARE, CF_BUSBW,
		CF__COUNT };

static void write_colls(struct pt_buf *b, const struct pt_buf *hl, const struct pt_prom_opts *o)
{
	static const struct {
		const char *name, *type, *help;
	} fam[CF__COUNT] = {
	    {"proftop_collective_calls_total", "counter",
	     "Collectives two ranks or more entered (matched by group and sequence number)."},
	    {"proftop_collective_skew_avg_seconds", "gauge",
	     "Arrival skew (last arrival less the first), mean per call."},
	    {"proftop_collective_skew_max_seconds", "gauge", "Arrival skew, the largest."},
	    {"proftop_collective_last_rank", "gauge",
	     "The rank most often last to arrive (its number)."},
	    {"proftop_collective_last_ratio", "gauge",
	     "Of the calls, the share where that rank arrived last (0..1)."},
	    {"proftop_collective_busbw_bytes_per_second", "gauge",
	     "Bus bandwidth as nccl-tests counts it (left out when unknown)."},
	};
	const struct pt_coll_stats *c = o->colls;
	struct pt_buf l = {0};
	for (int f = 0; f < CF__COUNT; f++) {
		family(b, fam[f].name, fam[f].type, fam[f].help);
		for (size_t i = 0; i < c->nops; i++) {
			const struct pt_coll_op_stat *s = &c->ops[i];
			double v = 0;
			switch (f) {
			case CF_CALLS: v = (double)s->calls; break;
			case CF_SKEW_AVG: v = s->skew_ms_avg / 1e3; break;
			case CF_SKEW_MAX: v = s->skew_ms_max / 1e3; break;
			case CF_LAST_RANK: v = (double)s->last_rank; break;
			case CF_LAST_SHARE:
				v = s->calls ? (double)s->last_count / (double)s->calls : 0;
				break;
			default: v = s->busbw_gb_per_s * 1e9; break;
			}
			if (s->p2p || ((f == CF_LAST_RANK || f == CF_LAST_SHARE) && s->last_rank < 0) ||
			    (f == CF_BUSBW && s->busbw_gb_per_s <= 0))
				continue;
			coll_labels(&l, hl, s->group, s->op);
			sample(b, fam[f].name, &l, NULL);
			end_f64(b, v);
		}
	}
	family(b, "proftop_rank_collective_seconds_total", "counter",
	       "Time in blocking collectives since the start, per rank (the ranks that wait "
	       "for a straggler spend more).");
	for (size_t i = 0; i < c->nranks; i++) {
		rank_labels(&l, hl, c->ranks[i].rank, c->ranks[i].pid);
		sample(b, "proftop_rank_collective_seconds_total", &l, NULL);
		end_f64(b, c->ranks[i].coll_total_s);
	}
	family(b, "proftop_rank_collective_wait_seconds", "gauge",
	       "Over the window: time in collectives spent waiting for later ranks of this node.");
	for (size_t i = 0; i < c->nranks; i++) {
		rank_labels(&l, hl, c->ranks[i].rank, c->ranks[i].pid);
		sample(b, "proftop_rank_collective_wait_seconds", &l, NULL);
		end_f64(b, c->ranks[i].wait_ms / 1e3);
	}
	const struct pt_straggler *sg = o->straggler;
	family(b, "proftop_straggler_late_seconds", "gauge",
	       "The straggler (the rank whose lateness at the collectives is half the job's or "
	       "more) and by how much it arrives late, mean; phase: its step phase that is "
	       "longer than the others' (none when none).");
	if (sg && sg->valid && sg->by_collectives) {
		static const char *const ph[PT_RANK__PHASES] = {"dataloader", "forward",
								 "backward", "optimization", "other"};
		int64_t pid = -1;
		for (size_t i = 0; i < c->nranks; i++)
			if (c->ranks[i].rank == sg->rank)
				pid = c->ranks[i].pid;
		rank_labels(&l, hl, sg->rank, pid);
		pt_buf_printf(&l, ",phase=\"%s\"", sg->phase >= 0 ? ph[sg->phase] : "none");
		sample(b, "proftop_straggler_late_seconds", &l, NULL);
		end_f64(b, sg->late_ms_avg / 1e3);
	}
	const struct pt_coll_hang *h = &c->hang;
	family(b, "proftop_hang_seconds", "gauge",
	       "A collective that ranks entered and that has not completed for --hang-after: "
	       "how long the first rank has waited in it (no series when none).");
	if (h->active) {
		coll_labels(&l, hl, h->group, h->op);
		pt_buf_printf(&l, ",seq=\"%" PRIu64 "\"", h->seq);
		sample(b, "proftop_hang_seconds", &l, NULL);
		end_f64(b, h->since_s);
	}
	family(b, "proftop_hang_missing", "gauge",
	       "1 for each rank that never entered the hanging collective; process: running, "
	       "exited or died.");
	size_t nm = h->nmissing < PT_HANG_MAX_RANKS ? h->nmissing : PT_HANG_MAX_RANKS;
	for (size_t i = 0; h->active && i < nm; i++) {
		const struct pt_hang_missing *m = &h->missing[i];
		rank_labels(&l, hl, m->rank, m->pid);
		pt_buf_printf(&l, ",process=\"%s\"",
			      m->ended == 2 ? "died" : m->ended == 1 ? "exited" : "running");
		sample(b, "proftop_hang_missing", &l, NULL);
		end_f64(b, 1);
	}
	family(b, "proftop_hang_waiting", "gauge", "1 for each rank waiting in the hanging collective.");
	size_t nw = h->nwaiting < PT_HANG_MAX_RANKS ? h->nwaiting : PT_HANG_MAX_RANKS;
	for (size_t i = 0; h->active && i < nw; i++) {
		const struct pt_coll_rank_stat *r = pt_coll_rank(c, h->waiting[i]);
		rank_labels(&l, hl, h->waiting[i], r ? r->pid : -1);
		sample(b, "proftop_hang_waiting", &l, NULL);
		end_f64(b, 1);
	}
	/* what a rank has had open for a second or more (a stuck rank's "doing"),
	 * so a view of many nodes can say what a missing rank is doing */
	family(b, "proftop_rank_open_range_seconds", "gauge",
	       "Ranges a rank has had open for 1 s or more, outermost first (depth), and for "
	       "how long.");
	for (size_t i = 0; i < c->nranks; i++) {
		const struct pt_coll_rank_stat *r = &c->ranks[i];
		for (size_t k = 0; k < r->nopen; k++) {
			if (r->open_s[k] < 1.0)
				continue;
			rank_labels(&l, hl, r->rank, r->pid);
			pt_buf_printf(&l, ",depth=\"%zu\",", k);
			put_label(&l, "name", r->open[k], strlen(r->open[k]));
			sample(b, "proftop_rank_open_range_seconds", &l, NULL);
			end_f64(b, r->open_s[k]);
		}
	}
	family(b, "proftop_hang_waiting_ranks", "gauge",
	       "Ranks waiting in the hanging collective (0: no hang).");
	sample(b, "proftop_hang_waiting_ranks", hl, NULL);
	end_f64(b, h->active ? (double)h->nwaiting : 0);
	pt_buf_free(&l);
}

/* Two entries naming the same series: the later one is left out. */
static int same_series(const struct pt_rank_stat *a, const struct pt_rank_stat *b)
{
	return a->pid == b->pid && a->rank == b->rank && !strcmp(a->host, b->host);
}

void pt_prom_render(struct pt_buf *out, const struct pt_ranks *r, const struct pt_prom_opts *o)
{
	struct pt_prom_opts def;
	if (!o) {
		pt_prom_opts_init(&def);
		o = &def;
	}
	size_t n = r ? r->n : 0, nr = 0;
	struct rank_prep *rp = n ? pt_xcalloc(n, sizeof *rp) : NULL;
	for (size_t i = 0; i < n; i++) {
		int dup = 0;
		for (size_t j = 0; j < i && !dup; j++)
			dup = same_series(&r->r[i], &r->r[j]);
		if (!dup)
			prep_rank(&rp[nr++], &r->r[i], o);
	}
	struct pt_buf hl = {0};
	const char *host = o->host ? o->host : "";
	put_label(&hl, "host", host, strlen(host));

	/* room for the usual output up front: ~60 lines per rank + operators */
	size_t ops = 0;
	for (size_t i = 0; i < nr; i++)
		ops += rp[i].nops;
	pt_buf_reserve(out, 4096 + nr * 5000 + ops * 3 * 160);

	write_exporter(out, &hl, r, o);
	rank_gauges(out, rank_gauges_a, sizeof rank_gauges_a / sizeof rank_gauges_a[0], rp, nr);
	write_step_summary(out, rp, nr);
	write_phases(out, rp, nr);
	write_gpu(out, rp, nr);
	rank_gauges(out, rank_gauges_b, sizeof rank_gauges_b / sizeof rank_gauges_b[0], rp, nr);
	if (o->top && o->strings)
		for (int f = 0; f < 3; f++)
			write_ops(out, rp, nr, f);
	if (o->colls)
		write_colls(out, &hl, o);

	for (size_t i = 0; i < nr; i++)
		free_rank(&rp[i]);
	free(rp);
	pt_buf_free(&hl);
}
