/*
 * export.c - writes a trace's event store as Chrome Trace Event Format JSON
 * (pt_chrome_export) that opens in Perfetto and chrome://tracing and reads
 * back into proftop unchanged: one "X" event per kept event with the kind as
 * "cat" (Paddle's type names), instants as "i", counters as "C", "M" events
 * for process and thread names, "s"/"f" flow pairs from each CPU launch to
 * the device activity with the same correlation id, and otherData with the
 * generator, source, drop counts and warnings.
 *
 * Timestamps are printed from integer nanoseconds as microseconds with an
 * exact three-digit fraction (never through a double), so a round trip keeps
 * every nanosecond. Numbers and the fixed parts of each record are formatted
 * by hand into one large buffer that goes out with write(2) (xwrite.c):
 * export runs at several million events per second. Names are JSON-escaped once per name id
 * and cached.
 *
 * The file goes out through safefile.c: an unnamed temporary beside OUT
 * (mode 0600: exports hold training data), fsynced, then linked (no --force)
 * or renamed (--force) into place and the directory fsynced; on any error
 * (a full disk included) the temporary goes and OUT is untouched, and a
 * SIGKILL at any moment leaves the old OUT or the complete new one.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proftop/chrome.h"
#include "proftop/coll.h"
#include "proftop/flops.h"
#include "proftop/error.h"
#include "output/report_int.h"
#include "output/xwrite.h"
#include "model/safefile.h"
#include "model/util.h"
#include "model/version.h"

/* Decimal digits of v at p; returns the length. */
static inline size_t fmt_u64(char *p, uint64_t v)
{
	char tmp[24];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

/* ns as microseconds with an exact 3-digit fraction: 1234567 -> "1234.567". */
static inline size_t fmt_us(char *p, uint64_t ns)
{
	size_t n = fmt_u64(p, ns / 1000);
	uint32_t f = (uint32_t)(ns % 1000);
	p[n] = '.';
	p[n + 1] = (char)('0' + f / 100);
	p[n + 2] = (char)('0' + f / 10 % 10);
	p[n + 3] = (char)('0' + f % 10);
	return n + 4;
}

/* JSON-escaped names, computed once per string id. */
struct name_cache {
	struct pt_buf text;
	uint32_t *off, *len; /* len 0 = not yet escaped (an escaped name is >= 2 bytes) */
	uint32_t n;
};

static const char *name_json(struct name_cache *nc, const struct pt_trace *t, uint32_t id,
			     size_t *len)
{
	if (id >= nc->n) {
		uint32_t n = pt_strtab_count(t->strings);
		if (id >= n)
			n = id + 1;
		nc->off = pt_xrealloc(nc->off, (size_t)n * sizeof *nc->off);
		nc->len = pt_xrealloc(nc->len, (size_t)n * sizeof *nc->len);
		memset(nc->len + nc->n, 0, (size_t)(n - nc->n) * sizeof *nc->len);
		nc->n = n;
	}
	if (!nc->len[id]) {
		size_t start = nc->text.len;
		pt_buf_json_str(&nc->text, pt_trace_str(t, id), pt_strtab_len(t->strings, id));
		nc->off[id] = (uint32_t)start;
		nc->len[id] = (uint32_t)(nc->text.len - start);
	}
	*len = nc->len[id];
	return nc->text.p + nc->off[id];
}

/* Per track: `,"pid":P,"tid":T,"ts":` and the device args `"device":D,"stream":S`. */
struct track_fmt {
	char *who;
	size_t who_len;
	char dev[64];
	size_t dev_len;
};

static void fmt_key_part(struct pt_buf *b, const struct pt_trace *t, int64_t num, uint32_t str)
{
	if (str)
		pt_buf_json_str(b, pt_trace_str(t, str), pt_strtab_len(t->strings, str));
	else
		pt_buf_printf(b, "%" PRId64, num);
}

static void track_fmt_init(struct track_fmt *tf, const struct pt_trace *t, const struct pt_track *tr)
{
	struct pt_buf b = {0};
	pt_buf_put(&b, ",\"pid\":", 7);
	fmt_key_part(&b, t, tr->key.pid, tr->key.pid_str);
	pt_buf_put(&b, ",\"tid\":", 7);
	fmt_key_part(&b, t, tr->key.tid, tr->key.tid_str);
	tf->who_len = b.len;
	tf->who = b.p;
	tf->dev_len = 0;
	if (pt_track_is_device(tr))
		tf->dev_len = (size_t)snprintf(tf->dev, sizeof tf->dev,
					       "\"device\":%" PRId32 ",\"stream\":%" PRId64,
					       tr->device, tr->stream);
}

/* corr -> the CPU launch it belongs to (first one seen; a repeated corr gets no flow). */
struct launch {
	uint32_t corr; /* 0 = empty slot */
	uint32_t track;
	uint64_t start_ns;
	uint8_t set, dup, used;
};

struct launch_map {
	struct launch *e;
	uint32_t mask, n;
};

static struct launch *lmap_slot(struct launch_map *m, uint32_t corr, int insert)
{
	if (!m->e) {
		if (!insert)
			return NULL;
		m->mask = 1023;
		m->e = pt_xcalloc(1024, sizeof *m->e);
	}
	if (insert && (m->n + 1) * 2 > m->mask + 1) {
		uint32_t nmask = m->mask * 2 + 1;
		struct launch *ne = pt_xcalloc((size_t)nmask + 1, sizeof *ne);
		for (uint32_t i = 0; i <= m->mask; i++) {
			if (!m->e[i].corr)
				continue;
			uint32_t j = (uint32_t)pt_hash_u64(m->e[i].corr) & nmask;
			while (ne[j].corr)
				j = (j + 1) & nmask;
			ne[j] = m->e[i];
		}
		free(m->e);
		m->e = ne;
		m->mask = nmask;
	}
	uint32_t i = (uint32_t)pt_hash_u64(corr) & m->mask;
	for (;;) {
		struct launch *l = &m->e[i];
		if (l->corr == corr)
			return l;
		if (!l->corr) {
			if (!insert)
				return NULL;
			l->corr = corr;
			m->n++;
			return l;
		}
		i = (i + 1) & m->mask;
	}
}

struct exporter {
	struct pt_trace *t;
	struct xw w;
	struct name_cache names;
	struct track_fmt *tf;
	struct launch_map launches;
	uint64_t t0_ns, t1_ns;
	int64_t only_pid; /* 0: every process */
	int first; /* no record written yet (comma handling) */
};

/* A track of the process the export is for (every track without only_pid). */
static inline int track_kept(const struct exporter *x, const struct pt_track *tr)
{
	return !x->only_pid || (!tr->key.pid_str && tr->key.pid == x->only_pid);
}

static inline void rec_sep(struct exporter *x)
{
	char *p = xw_room(&x->w, 2);
	if (x->first) {
		p[0] = '\n';
		x->w.len += 1;
		x->first = 0;
	} else {
		p[0] = ',';
		p[1] = '\n';
		x->w.len += 2;
	}
}

/* Appends a literal to p and advances it. */
#define PUT_LIT(p, s)                                                                              \
	do {                                                                                       \
		memcpy((p), (s), sizeof(s) - 1);                                                   \
		(p) += sizeof(s) - 1;                                                              \
	} while (0)

static void write_counter_value(char *p, size_t cap, uint64_t bits)
{
	double v;
	memcpy(&v, &bits, sizeof v);
	if (v != v || v > 1.7976931348623157e308 || v < -1.7976931348623157e308)
		v = 0; /* JSON has no NaN or Infinity */
	snprintf(p, cap, "%.17g", v);
}

/* Formats one event at p0 (room for the size write_event reserves); returns its length. */
static size_t format_event(char *p0, const struct pt_event *ev, const struct track_fmt *tf,
			   const char *name, size_t nlen)
{
	char *p = p0;
	const char *cat = pt_kind_name((enum pt_kind)ev->kind);
	size_t clen = strlen(cat);
	switch (ev->kind) {
	case PT_KIND_INSTANT:
		if (ev->flags & PT_EVF_GLOBAL)
			PUT_LIT(p, "{\"ph\":\"i\",\"s\":\"g\",\"cat\":\"");
		else
			PUT_LIT(p, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"");
		break;
	case PT_KIND_COUNTER:
		PUT_LIT(p, "{\"ph\":\"C\",\"cat\":\"");
		break;
	default:
		PUT_LIT(p, "{\"ph\":\"X\",\"cat\":\"");
		break;
	}
	memcpy(p, cat, clen);
	p += clen;
	PUT_LIT(p, "\",\"name\":");
	memcpy(p, name, nlen);
	p += nlen;
	memcpy(p, tf->who, tf->who_len);
	p += tf->who_len;
	PUT_LIT(p, ",\"ts\":");
	p += fmt_us(p, ev->start_ns);
	if (ev->kind == PT_KIND_COUNTER) {
		PUT_LIT(p, ",\"args\":{\"value\":");
		write_counter_value(p, 32, ev->arg);
		p += strlen(p);
		PUT_LIT(p, "}}");
		return (size_t)(p - p0);
	}
	if (ev->kind != PT_KIND_INSTANT) {
		PUT_LIT(p, ",\"dur\":");
		p += fmt_us(p, ev->dur_ns);
	}
	int nargs = 0;
	if (ev->corr) {
		PUT_LIT(p, ",\"args\":{\"correlation\":");
		p += fmt_u64(p, ev->corr);
		nargs++;
	}
	const char *argkey = NULL;
	size_t arglen = 0;
	if (ev->kind == PT_KIND_MEMCPY || ev->kind == PT_KIND_MEMSET) {
		argkey = "\"bytes\":";
		arglen = 8;
	} else if (ev->kind == PT_KIND_PROFILE_STEP && ev->arg > 0) {
		argkey = "\"samples\":";
		arglen = 10;
	}
	if (argkey) {
		if (nargs++)
			*p++ = ',';
		else
			PUT_LIT(p, ",\"args\":{");
		memcpy(p, argkey, arglen);
		p += arglen;
		p += fmt_u64(p, ev->arg);
	}
	if (ev->flags & PT_EVF_FLOPS) { /* flops.h: what the shapes gave, read back as is */
		double fl, by;
		int dt;
		pt_flops_unpack(ev->arg, &fl, &by, &dt);
		if (nargs++)
			*p++ = ',';
		else
			PUT_LIT(p, ",\"args\":{");
		p += snprintf(p, 80, "\"flops\":%.9g,\"bytes\":%.9g,\"dtype\":%d", fl, by, dt);
	}
	if (tf->dev_len) {
		if (nargs++)
			*p++ = ',';
		else
			PUT_LIT(p, ",\"args\":{");
		memcpy(p, tf->dev, tf->dev_len);
		p += tf->dev_len;
	}
	if (nargs)
		*p++ = '}';
	*p++ = '}';
	return (size_t)(p - p0);
}


static void write_event(struct exporter *x, const struct pt_event *ev)
{
	const struct track_fmt *tf = &x->tf[ev->track_id];
	size_t nlen;
	const char *name = name_json(&x->names, x->t, ev->name_id, &nlen);
	/* fixed parts, the cat (<= 16), three numbers and the counter value */
	size_t need = 256 + 80 + nlen + tf->who_len + tf->dev_len; /* 80: FLOPs args */
	rec_sep(x);
	if (need > OUTBUF_BYTES / 2) { /* a huge name: format aside, xw_put splits it */
		char *tmp = pt_xmalloc(need);
		size_t n = format_event(tmp, ev, tf, name, nlen);
		xw_put(&x->w, tmp, n);
		free(tmp);
		return;
	}
	x->w.len += format_event(xw_room(&x->w, need), ev, tf, name, nlen);
}

static void write_flow(struct exporter *x, const struct launch *l, const struct pt_event *dst)
{
	const struct track_fmt *src = &x->tf[l->track], *tf = &x->tf[dst->track_id];
	char idbuf[24];
	size_t idn = fmt_u64(idbuf, l->corr);
	rec_sep(x);
	char *p0 = xw_room(&x->w, 320 + src->who_len + tf->who_len), *p = p0;
	PUT_LIT(p, "{\"ph\":\"s\",\"id\":");
	memcpy(p, idbuf, idn);
	p += idn;
	PUT_LIT(p, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"");
	memcpy(p, src->who, src->who_len);
	p += src->who_len;
	PUT_LIT(p, ",\"ts\":");
	p += fmt_us(p, l->start_ns);
	PUT_LIT(p, "},\n{\"ph\":\"f\",\"bp\":\"e\",\"id\":");
	memcpy(p, idbuf, idn);
	p += idn;
	PUT_LIT(p, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"");
	memcpy(p, tf->who, tf->who_len);
	p += tf->who_len;
	PUT_LIT(p, ",\"ts\":");
	p += fmt_us(p, dst->start_ns);
	*p++ = '}';
	x->w.len += (size_t)(p - p0);
}

static int in_window(const struct exporter *x, const struct pt_event *ev)
{
	return ev->start_ns >= x->t0_ns && (!x->t1_ns || ev->start_ns < x->t1_ns);
}

static int collect_launch(void *ctx, struct pt_event *ev)
{
	struct exporter *x = ctx;
	if (ev->kind != PT_KIND_CUDA_RUNTIME || !ev->corr || !in_window(x, ev) ||
	    (x->only_pid && (ev->track_id >= x->t->ntracks ||
			     !track_kept(x, &x->t->tracks[ev->track_id]))))
		return 0;
	struct launch *l = lmap_slot(&x->launches, ev->corr, 1);
	if (l->set) { /* two launches share the id (merged processes): no arrow */
		l->dup = 1;
		return 0;
	}
	l->set = 1;
	l->track = ev->track_id;
	l->start_ns = ev->start_ns;
	return 0;
}

static void write_meta_name(struct exporter *x, const char *what, const struct track_fmt *tf,
			    int with_tid, const char *label, size_t label_len)
{
	rec_sep(x);
	xw_puts(&x->w, "{\"ph\":\"M\",\"name\":\"");
	xw_puts(&x->w, what);
	xw_puts(&x->w, "\"");
	if (with_tid) {
		xw_put(&x->w, tf->who, tf->who_len);
	} else {
		/* the pid part of `,"pid":P,"tid":T` */
		const char *tid = strstr(tf->who + 7, ",\"tid\":");
		size_t plen = tid ? (size_t)(tid - tf->who) : tf->who_len;
		xw_put(&x->w, tf->who, plen);
		xw_puts(&x->w, ",\"tid\":0");
	}
	struct pt_buf b = {0};
	pt_buf_json_str(&b, label, label_len);
	xw_puts(&x->w, ",\"args\":{\"name\":");
	xw_put(&x->w, b.p, b.len);
	xw_puts(&x->w, "}}");
	pt_buf_free(&b);
}

static int proc_cmp(const void *a, const void *b, void *ctx)
{
	const struct pt_trace *t = ctx;
	const struct pt_track *ta = &t->tracks[*(const uint32_t *)a];
	const struct pt_track *tb = &t->tracks[*(const uint32_t *)b];
	if (ta->key.pid_str != tb->key.pid_str)
		return ta->key.pid_str < tb->key.pid_str ? -1 : 1;
	if (ta->key.pid != tb->key.pid)
		return ta->key.pid < tb->key.pid ? -1 : 1;
	uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
	return ia < ib ? -1 : ia > ib;
}

static int same_process(const struct pt_track *a, const struct pt_track *b)
{
	return a->key.pid == b->key.pid && a->key.pid_str == b->key.pid_str;
}

/* process_name for every process: its label, else "GPU n" for a device process, else "pid N". */
static void write_process_names(struct exporter *x)
{
	struct pt_trace *t = x->t;
	char tmp[64];
	uint32_t *idx = pt_xmalloc((size_t)(t->ntracks ? t->ntracks : 1) * sizeof *idx);
	uint32_t ntr = 0;
	for (uint32_t i = 0; i < t->ntracks; i++)
		if (track_kept(x, &t->tracks[i]))
			idx[ntr++] = i;
	qsort_r(idx, ntr, sizeof *idx, proc_cmp, t);
	for (uint32_t a = 0; a < ntr;) {
		const struct pt_track *tr = &t->tracks[idx[a]];
		uint32_t b = a, plabel = 0;
		int32_t dev = -1;
		for (; b < ntr && same_process(&t->tracks[idx[b]], tr); b++) {
			const struct pt_track *o = &t->tracks[idx[b]];
			if (!plabel)
				plabel = o->process_label;
			if (dev < 0 && pt_track_is_device(o))
				dev = o->device;
		}
		const struct track_fmt *tf = &x->tf[idx[a]];
		if (plabel) {
			write_meta_name(x, "process_name", tf, 0, pt_trace_str(t, plabel),
					pt_strtab_len(t->strings, plabel));
		} else if (dev >= 0) {
			int n = snprintf(tmp, sizeof tmp, "GPU %d", dev);
			write_meta_name(x, "process_name", tf, 0, tmp, (size_t)n);
		} else if (tr->key.pid_str) {
			struct pt_buf nb = {0};
			pt_buf_put(&nb, "pid ", 4);
			pt_buf_put(&nb, pt_trace_str(t, tr->key.pid_str),
				   pt_strtab_len(t->strings, tr->key.pid_str));
			write_meta_name(x, "process_name", tf, 0, nb.p, nb.len);
			pt_buf_free(&nb);
		} else {
			int n = snprintf(tmp, sizeof tmp, "pid %" PRId64, tr->key.pid);
			write_meta_name(x, "process_name", tf, 0, tmp, (size_t)n);
		}
		const struct pt_proc *pp = tr->key.pid_str ? NULL : pt_trace_proc(t, tr->key.pid);
		if (pp && pp->rank >= 0) { /* ranks in rank order in Perfetto */
			const char *tid = strstr(tf->who + 7, ",\"tid\":");
			rec_sep(x);
			xw_puts(&x->w, "{\"ph\":\"M\",\"name\":\"process_sort_index\"");
			xw_put(&x->w, tf->who, tid ? (size_t)(tid - tf->who) : tf->who_len);
			int k = snprintf(tmp, sizeof tmp, ",\"tid\":0,\"args\":{\"sort_index\":%" PRId64 "}}",
					 pp->rank);
			xw_put(&x->w, tmp, (size_t)k);
		}
		a = b;
	}
	free(idx);
}

static void write_metadata(struct exporter *x)
{
	struct pt_trace *t = x->t;
	char tmp[64];
	write_process_names(x);
	for (uint32_t i = 0; i < t->ntracks; i++) {
		const struct pt_track *tr = &t->tracks[i];
		if (!track_kept(x, tr))
			continue;
		if (tr->label) {
			write_meta_name(x, "thread_name", &x->tf[i], 1, pt_trace_str(t, tr->label),
					pt_strtab_len(t->strings, tr->label));
		} else if (pt_track_is_device(tr)) {
			int n = snprintf(tmp, sizeof tmp, "stream %" PRId64, tr->stream);
			write_meta_name(x, "thread_name", &x->tf[i], 1, tmp, (size_t)n);
		}
		if (tr->sort_index) {
			rec_sep(x);
			xw_puts(&x->w, "{\"ph\":\"M\",\"name\":\"thread_sort_index\"");
			xw_put(&x->w, x->tf[i].who, x->tf[i].who_len);
			int n = snprintf(tmp, sizeof tmp, ",\"args\":{\"sort_index\":%" PRId64 "}}",
					 tr->sort_index);
			xw_put(&x->w, tmp, (size_t)n);
		}
	}
}

static void write_events(struct exporter *x)
{
	struct pt_trace *t = x->t;
	uint32_t ntr = pt_store_track_count(t->store);
	if (ntr > t->ntracks)
		ntr = t->ntracks;
	for (uint32_t tr = 0; tr < ntr && !x->w.err; tr++) {
		if (!track_kept(x, &t->tracks[tr]))
			continue;
		struct pt_store_iter it;
		pt_store_iter_init(&it, t->store, tr, x->t0_ns, x->t1_ns ? x->t1_ns : UINT64_MAX);
		struct pt_event *ev;
		while ((ev = pt_store_iter_next(&it)) && !x->w.err) {
			write_event(x, ev);
			if (ev->corr && pt_kind_is_device((enum pt_kind)ev->kind)) {
				struct launch *l = lmap_slot(&x->launches, ev->corr, 0);
				if (l && !l->dup && !l->used) {
					l->used = 1;
					write_flow(x, l, ev);
				}
			}
		}
		pt_store_iter_done(&it);
	}
}

/* The process table (ranks of a merged trace) as otherData "ranks". */
static void write_procs(struct pt_buf *b, const struct pt_trace *t, int64_t only_pid)
{
	if (!t->nprocs)
		return;
	pt_buf_put(b, ",\"ranks\":[", 10);
	int n = 0;
	for (uint32_t i = 0; i < t->nprocs; i++) {
		const struct pt_proc *p = &t->procs[i];
		if (only_pid && p->pid != only_pid)
			continue;
		pt_buf_printf(b, "%s{\"pid\":%" PRId64 ",\"rank\":%" PRId64, n++ ? "," : "", p->pid,
			      p->rank);
		if (p->host) {
			pt_buf_put(b, ",\"host\":", 8);
			pt_buf_json_str(b, pt_trace_str(t, p->host), pt_strtab_len(t->strings, p->host));
		}
		pt_buf_putc(b, '}');
	}
	pt_buf_putc(b, ']');
}

/*
 * The metadata goes before traceEvents (as Kineto does with distributedInfo):
 * a streaming reader knows the file is proftop's own export, and the rank,
 * before the first event.
 */
static void write_head(struct exporter *x, const struct pt_export_opts *o)
{
	struct pt_trace *t = x->t;
	struct pt_buf b = {0};
	pt_buf_put(&b, "{\"displayTimeUnit\":\"ms\",", 24);
	/* one process of several (a rank's file): its own rank */
	int64_t rank = t->rank;
	if (x->only_pid) {
		const struct pt_proc *p = pt_trace_proc(t, x->only_pid);
		rank = p ? p->rank : -1;
	}
	if (rank >= 0 || t->world_size >= 0) {
		pt_buf_put(&b, "\"distributedInfo\":{", 19);
		if (rank >= 0)
			pt_buf_printf(&b, "\"rank\":%" PRId64, rank);
		if (t->world_size >= 0)
			pt_buf_printf(&b, "%s\"world_size\":%" PRId64, rank >= 0 ? "," : "",
				      t->world_size);
		pt_buf_put(&b, "},", 2);
	}
	pt_buf_printf(&b, "\"otherData\":{\"generator\":\"proftop %s\"", PROFTOP_VERSION);
	pt_buf_put(&b, ",\"source\":", 10);
	const char *src = t->source ? t->source : "";
	pt_buf_json_str(&b, src, strlen(src));
	if (t->device_name) { /* the FLOPs tables' peak (flops.h) */
		pt_buf_put(&b, ",\"device_name\":", 15);
		pt_buf_json_str(&b, pt_trace_str(t, t->device_name),
				pt_strtab_len(t->strings, t->device_name));
	}
	pt_buf_printf(&b, ",\"events_dropped\":%" PRIu64,
		      t->warnings[PT_WARN_STORE_DROPPED] + pt_trace_source_lost(t));
	pt_buf_put(&b, ",\"warnings\":{", 13);
	int n = 0;
	for (int w = 0; w < PT_WARN__COUNT; w++) {
		if (!t->warnings[w])
			continue;
		pt_buf_printf(&b, "%s\"%s\":%" PRIu64, n++ ? "," : "", pt_warn_key((enum pt_warn)w),
			      t->warnings[w]);
	}
	pt_buf_putc(&b, '}');
	if (rank >= 0)
		pt_buf_printf(&b, ",\"rank\":%" PRId64, rank);
	if (t->world_size >= 0)
		pt_buf_printf(&b, ",\"world_size\":%" PRId64, t->world_size);
	write_procs(&b, t, x->only_pid);
	if (t->probe_ns_per_event > 0) /* the overhead figure's measured cost */
		pt_buf_printf(&b, ",\"probe_ns_per_event\":%.3f", t->probe_ns_per_event);
	if (t->helper_ns_per_call > 0 && t->helper_calls) /* the Python helper's, beside it */
		pt_buf_printf(&b, ",\"helper_ns_per_call\":%.3f,\"helper_calls\":%" PRIu64,
			      t->helper_ns_per_call, t->helper_calls);
	if (o && o->other_json && *o->other_json)
		pt_buf_printf(&b, ",%s", o->other_json);
	pt_buf_put(&b, "},\"traceEvents\":[", 17);
	xw_put(&x->w, b.p, b.len);
	pt_buf_free(&b);
}

/*
 * The collectives (coll.h) as a top-level "proftopCollectives" after the
 * events, which other readers skip: rows [pid, tid, start_ns, end_ns (0:
 * open), op, group, seq, bytes, group_size, flags, epoch], those that overlap the
 * window. The calls themselves are events too ("c10d::OP").
 */
static void write_colls(struct exporter *x, struct pt_buf *b)
{
	const struct pt_trace *t = x->t;
	const struct pt_colls *c = &t->colls;
	if (!c->n)
		return;
	static const char head[] = ",\n\"proftopCollectives\":{\"version\":1,\"rows\":[";
	pt_buf_put(b, head, sizeof head - 1);
	int first = 1;
	for (size_t i = 0; i < c->n; i++) {
		const struct pt_coll *r = &c->v[i];
		uint64_t end = r->end_ns ? r->end_ns : UINT64_MAX;
		if (r->track >= t->ntracks || end < x->t0_ns || (x->t1_ns && r->start_ns >= x->t1_ns) ||
		    !track_kept(x, &t->tracks[r->track]))
			continue;
		const struct pt_track *tr = &t->tracks[r->track];
		pt_buf_put(b, first ? "\n[" : ",\n[", first ? 2 : 3);
		first = 0;
		fmt_key_part(b, t, tr->key.pid, tr->key.pid_str);
		pt_buf_putc(b, ',');
		fmt_key_part(b, t, tr->key.tid, tr->key.tid_str);
		pt_buf_printf(b, ",%" PRIu64 ",%" PRIu64 ",", r->start_ns, r->end_ns);
		const char *op = pt_trace_str(t, r->op), *g = pt_trace_str(t, r->group);
		pt_buf_json_str(b, op ? op : "", op ? strlen(op) : 0);
		pt_buf_putc(b, ',');
		pt_buf_json_str(b, g ? g : "", g ? strlen(g) : 0);
		pt_buf_printf(b, ",%" PRIu64 ",%" PRIu64 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32 "]",
			      r->seq, r->bytes, r->group_size, r->flags & PT_COLL_FLAGS, r->epoch);
		if (b->len > OUTBUF_BYTES) {
			xw_put(&x->w, b->p, b->len);
			b->len = 0;
		}
	}
	pt_buf_put(b, "]}", 2);
}

/* After the events: the collectives, the optional summary (large, so after the events) and the end. */
static void write_tail(struct exporter *x, const struct pt_export_opts *o)
{
	struct pt_buf b = {0};
	pt_buf_put(&b, "\n]", 2);
	write_colls(x, &b);
	if (o && o->summary) {
		struct pt_report_opts ro;
		pt_report_opts_init(&ro);
		pt_buf_put(&b, ",\"proftop\":", 11);
		pt_report_json_buf(&b, x->t, o->summary, &ro);
	}
	pt_buf_put(&b, "}\n", 2);
	xw_put(&x->w, b.p, b.len);
	pt_buf_free(&b);
}

int pt_chrome_export(struct pt_trace *t, const char *path, const struct pt_export_opts *o,
		     char *err, size_t errlen)
{
	int force = o && o->force;
	int rc;
	struct exporter x = {0};
	struct pt_safe_file f;

	if (!path || !*path) {
		if (err && errlen)
			snprintf(err, errlen, "no output file given");
		return PT_EINVAL;
	}
	/* stdout (-o -) and its like are streams: written in place, as they come */
	int stream_fd = pt_out_fd(path);
	if (stream_fd >= 0) {
		int fl = fcntl(stream_fd, F_GETFL);
		if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY)
			return pt_safe_fail(err, errlen, path, fl < 0 ? errno : EBADF);
		fflush(NULL); /* what stdio holds for it goes first */
		f.fd = stream_fd;
	} else if ((rc = pt_safe_open(&f, path, force, err, errlen))) {
		return rc;
	}

	x.t = t;
	x.w.fd = f.fd;
	x.w.buf = pt_xmalloc(OUTBUF_BYTES);
	x.first = 1;
	x.t0_ns = o ? o->t0_ns : 0;
	x.t1_ns = o ? o->t1_ns : 0;
	x.only_pid = o ? o->only_pid : 0;
	x.tf = pt_xcalloc(t->ntracks ? t->ntracks : 1, sizeof *x.tf);
	for (uint32_t i = 0; i < t->ntracks; i++)
		track_fmt_init(&x.tf[i], t, &t->tracks[i]);

	pt_store_sort(t->store);
	pt_store_foreach(t->store, collect_launch, &x);

	write_head(&x, o);
	write_metadata(&x);
	write_events(&x);
	write_tail(&x, o);
	xw_finish(&x.w);
	/* on a write error (ENOSPC...) the temporary goes and OUT stays as it was */
	if (stream_fd < 0)
		rc = pt_safe_commit(&f, force, x.w.err, err, errlen);
	else
		rc = x.w.err ? pt_safe_fail(err, errlen, path, x.w.err) : 0;

	free(x.w.buf);
	for (uint32_t i = 0; i < t->ntracks; i++)
		free(x.tf[i].who);
	free(x.tf);
	free(x.launches.e);
	free(x.names.off);
	free(x.names.len);
	pt_buf_free(&x.names.text);
	return rc;
}
