/*
 * prom.h - renders per-rank figures (struct pt_ranks) as Prometheus' text
 * exposition format, version 0.0.4, for `proftop serve`'s /metrics.
 *
 * Every metric is named proftop_* in base units (seconds, ratios 0..1,
 * bytes), each family is written once with its # HELP and # TYPE lines and
 * all of its samples together, and every series carries host, rank (left
 * out when the rank is unknown) and pid labels; per-device series add
 * device, per-operator series add op, phase shares add phase. Label values
 * are escaped as the format requires (\\, \", \n); other control characters
 * become the visible text \xNN and invalid UTF-8 becomes U+FFFD, so a
 * hostile name from a trace can neither break the format nor the scraper.
 * Two names that would show the same (after escaping or cutting) get a
 * " [2]", " [3]"... suffix: Prometheus rejects a whole scrape that repeats
 * a series.
 *
 * Pure: no I/O, no globals; reads its inputs and appends to a pt_buf, so
 * the exporter can render on its own thread and publish the finished text.
 */
#ifndef PT_PROM_H
#define PT_PROM_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/colls.h"
#include "proftop/ranks.h"
#include "proftop/strtab.h"
#include "model/util.h"

/* The content type of the text format. */
#define PT_PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
/* Default operators per rank (top by total CPU time). */
#define PT_PROM_DEFAULT_TOP 20
/* Longest label value written, in bytes (longer names end with "..."). */
#define PT_PROM_MAX_LABEL_BYTES 1024

struct pt_prom_opts {
	const struct pt_strtab *strings; /* names of operator rows (NULL: no operators) */
	size_t top;			 /* operators per rank, by total CPU time; 0 = none */
	const char *host;		 /* host label where a rank has none (NULL: "") */
	const char *version;		 /* proftop_build_info's version label (NULL: none) */
	/* exporter-wide figures; the labels are host only */
	uint64_t events_total;	 /* events seen since start (counter) */
	uint64_t events_kept;	 /* events held under the memory cap */
	uint64_t dropped_source; /* events the probe lost (full rings; counter) */
	uint64_t dropped_store;	 /* events the memory cap dropped (counter) */
	uint64_t store_bytes;	 /* memory the kept events use */
	int sessions_up;	 /* live sessions being read */
	double window_s;	 /* window the figures cover, 0 = everything kept */
	double render_s;	 /* how long the previous refresh took (< 0: none yet) */
	double updated_unix_s;	 /* wall-clock time of this refresh (0: leave out) */
	/* the collectives across ranks (colls.h), the straggler and the hang;
	 * NULL: none of their families */
	const struct pt_coll_stats *colls;
	const struct pt_straggler *straggler;
};
void pt_prom_opts_init(struct pt_prom_opts *o);

/*
 * Appends the exposition for r (may be NULL or empty: only the exporter-wide
 * families then) to out. Never fails; memory exhaustion aborts.
 */
void pt_prom_render(struct pt_buf *out, const struct pt_ranks *r, const struct pt_prom_opts *o);

/*
 * Appends s (len bytes, untrusted) to out as a label value's text, without
 * the quotes; at most max_bytes of it (0 = no limit), then "...".
 */
void pt_prom_label_value(struct pt_buf *out, const char *s, size_t len, size_t max_bytes);

#endif
