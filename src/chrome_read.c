/*
 * chrome_read.c - the Chrome-trace file source: input (plain or gzip,
 * detected by its magic bytes, concatenated members allowed), the top-level
 * JSON ({"traceEvents":[...], ...} or a bare array whose "]" may be missing),
 * and the pipeline. The splitter walks the text in chunks and records where
 * each event object begins and ends; a chunk of whole objects is a batch.
 * Batches are parsed by worker threads into raw records and handed to the
 * sink on the caller's thread strictly in file order, so the result does not
 * depend on the number of threads. Memory follows the batches in flight (a
 * few chunks) plus the events kept, never the size of the text.
 *
 * Threading: pt_chrome_read* may start threads of its own and joins them all
 * before returning; the trace is written only from the caller's thread.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "chrome_int.h"
#include "proftop/chrome.h"
#include "proftop/error.h"
#include "proftop/store.h"
#include "util.h"

#define CHUNK_BYTES	((size_t)2 << 20)   /* text per batch */
#define MAX_VALUE_BYTES ((size_t)256 << 20) /* one object or key may not pass this */
#define CAPTURE_BYTES	((size_t)1 << 20)   /* top-level values we parse whole */
#define RAW_BYTES	((size_t)256 << 10)
#define MAX_SLOTS	8
#define MAX_BATCH_EVENTS 16384u /* objects per batch: bounds its raw records */

/* ---- input: plain or gzip, from a file or memory ---- */

struct src {
	int fd;			 /* -1 for memory */
	const unsigned char *in; /* raw bytes not yet consumed */
	size_t in_len;
	unsigned char *own; /* raw buffer for files */
	int raw_eof;
	int gz, z_init, member_done;
	z_stream z;
	int err; /* deferred error (PT_E*) */
	char msg[160];
};

/* read(2) retried on EINTR; at the end sets raw_eof, on error s->err. */
static ssize_t read_some(struct src *s, void *buf, size_t cap)
{
	for (;;) {
		ssize_t n = read(s->fd, buf, cap);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			s->err = PT_EIO;
			snprintf(s->msg, sizeof s->msg, "%s", strerror(errno));
			return -1;
		}
		if (n == 0)
			s->raw_eof = 1;
		return n;
	}
}

static int raw_fill(struct src *s)
{
	if (s->raw_eof || s->fd < 0) {
		s->raw_eof = 1;
		return 0;
	}
	ssize_t n = read_some(s, s->own, RAW_BYTES);
	if (n < 0)
		return -1;
	s->in = s->own;
	s->in_len = (size_t)n;
	return n > 0;
}

static int src_open(struct src *s, int fd, const void *mem, size_t len)
{
	memset(s, 0, sizeof *s);
	s->fd = fd;
	if (fd >= 0) {
		s->own = pt_xmalloc(RAW_BYTES);
		/* two bytes tell gzip from text */
		while (s->in_len < 2 && !s->raw_eof) {
			size_t have = s->in_len;
			ssize_t n = read_some(s, s->own + have, RAW_BYTES - have);
			if (n < 0)
				return s->err;
			s->in = s->own;
			s->in_len = have + (size_t)n;
		}
	} else {
		s->in = mem;
		s->in_len = len;
		s->raw_eof = 1;
	}
	if (s->in_len >= 2 && s->in[0] == 0x1f && s->in[1] == 0x8b) {
		s->gz = 1;
		if (inflateInit2(&s->z, 16 + MAX_WBITS) != Z_OK)
			abort();
		s->z_init = 1;
		s->z.next_in = (unsigned char *)s->in;
		s->z.avail_in = (uInt)(s->in_len > UINT32_MAX ? UINT32_MAX : s->in_len);
	}
	return 0;
}

static void src_close(struct src *s)
{
	if (s->z_init)
		inflateEnd(&s->z);
	free(s->own);
}

/* Up to cap bytes of text: > 0 bytes, 0 at the end, < 0 error (s->err). */
static long src_read(struct src *s, char *dst, size_t cap)
{
	if (s->err)
		return -1;
	if (!s->gz) {
		if (s->in_len == 0 && s->fd >= 0 && !s->raw_eof) {
			/* plain file: straight into the caller's buffer, no
			 * second copy through the raw one */
			return (long)read_some(s, dst, cap);
		}
		while (s->in_len == 0) {
			int r = raw_fill(s);
			if (r <= 0)
				return r;
		}
		size_t n = s->in_len < cap ? s->in_len : cap;
		memcpy(dst, s->in, n);
		s->in += n;
		s->in_len -= n;
		return (long)n;
	}
	z_stream *z = &s->z;
	z->next_out = (unsigned char *)dst;
	z->avail_out = (uInt)(cap > UINT32_MAX ? UINT32_MAX : cap);
	while (z->avail_out > 0) {
		if (z->avail_in == 0 && s->fd < 0 && s->in_len > 0) {
			/* memory input larger than 4 GiB: feed the rest */
			size_t used = (size_t)(z->next_in - s->in);
			s->in += used;
			s->in_len -= used;
			z->next_in = (unsigned char *)s->in;
			z->avail_in = (uInt)(s->in_len > UINT32_MAX ? UINT32_MAX : s->in_len);
		}
		if (z->avail_in == 0 && !s->raw_eof) {
			if (raw_fill(s) < 0)
				break;
			z->next_in = (unsigned char *)s->in;
			z->avail_in = (uInt)s->in_len;
			continue;
		}
		if (s->member_done) {
			if (z->avail_in == 0)
				break;	 /* end of the last member */
			inflateReset(z); /* concatenated gzip members */
			s->member_done = 0;
		}
		int ret = inflate(z, Z_NO_FLUSH);
		if (ret == Z_STREAM_END) {
			s->member_done = 1;
		} else if (ret == Z_BUF_ERROR) {
			if (z->avail_in == 0 && s->raw_eof) {
				s->err = PT_ETRUNC;
				snprintf(s->msg, sizeof s->msg, "unexpected end of gzip data");
				break;
			}
		} else if (ret != Z_OK) {
			s->err = PT_EFORMAT;
			snprintf(s->msg, sizeof s->msg, "corrupt gzip data (%s)",
				 z->msg ? z->msg : "inflate failed");
			break;
		}
	}
	size_t got = cap - z->avail_out;
	if (got)
		return (long)got;
	return s->err ? -1 : 0;
}

/* ---- the pipeline ---- */

enum { SLOT_FREE, SLOT_READING, SLOT_FILLED, SLOT_PARSING, SLOT_PARSED };

struct rdr;

struct pipe {
	struct cr_batch slots[MAX_SLOTS];
	int nslots;
	int threaded;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t fill_seq, parse_seq;
	int stop;
	struct cr_sink *sink; /* single-threaded mode feeds it from emit() */
	struct pt_store *store; /* faulted in ahead by the reader thread */
	int sync_perr;	      /* single-threaded: a parse error was met */
	uint64_t perr_off;
	const char *perr_msg;
};

struct rdr {
	struct src *src;
	struct pipe *pp;
	struct cr_batch *cur;
	size_t pos, end, keep, obj_start;
	int eof;
	int have_events;
	int display_unit_set, display_ns;
	int64_t rank, world;
	int native;                        /* otherData.generator is proftop */
	uint64_t imp_warn[PT_WARN__COUNT]; /* otherData.warnings of our export */
	double ns_per_event;               /* otherData.probe_ns_per_event, 0 = none */
	char device[64];                   /* otherData.device_name, or Kineto's first
					      deviceProperties name (FLOPs' peak) */
	struct rd_proc {
		int64_t pid, rank;
		char host[64];
	} *procs;                          /* otherData.ranks of our export (a merge) */
	size_t nprocs;
	uint64_t bad_elems;
	uint64_t dup_keys; /* top-level keys met again (only the first is read) */
	unsigned seen_keys;
	int err; /* PT_E*, or 1 when stopped by the consumer */
	uint64_t err_off;
	char msg[200];
};

static void rd_fail(struct rdr *rd, int code, size_t at, const char *msg)
{
	if (rd->err)
		return;
	rd->err = code;
	rd->err_off = rd->cur->base_off + at;
	snprintf(rd->msg, sizeof rd->msg, "%s", msg);
}

static void batch_reserve(struct cr_batch *b, size_t cap)
{
	if (b->cap >= cap)
		return;
	b->buf = pt_xrealloc(b->buf, cap);
	b->cap = cap;
}

void cr_parse_batch(struct cr_batch *b)
{
	if (b->ev_cap < b->nspans) {
		b->ev_cap = b->nspans;
		free(b->ev);
		b->ev = pt_xmalloc((size_t)b->ev_cap * sizeof *b->ev);
	}
	pt_json_side_reset(&b->side);
	b->nev = 0;
	b->perr = 0;
	for (uint32_t i = 0; i < b->nspans; i++) {
		struct pt_json_err err = {NULL, NULL};
		const char *p = b->buf + b->spans[i].begin, *e = b->buf + b->spans[i].end;
		if (pt_json_parse_event(b->buf, p, e, &b->ev[b->nev], &b->side, &err) < 0) {
			b->perr = 1;
			b->perr_off = b->base_off + (uint64_t)((err.at ? err.at : p) - b->buf);
			b->perr_msg = err.msg ? err.msg : "invalid event object";
			return;
		}
		b->nev++;
	}
}

/* Hands the current batch on and starts the next with the unconsumed tail. */
static int emit(struct rdr *rd, int final)
{
	struct pipe *pp = rd->pp;
	struct cr_batch *b = rd->cur, *next;
	b->final = final;
	b->native = rd->native;
	if (!pp->threaded) {
		if (!pp->sync_perr) {
			cr_parse_batch(b);
			cr_sink_batch(pp->sink, b);
			if (b->perr) {
				pp->sync_perr = 1;
				pp->perr_off = b->perr_off;
				pp->perr_msg = b->perr_msg;
				rd->err = 1;
			}
		}
		next = b == &pp->slots[0] ? &pp->slots[1] : &pp->slots[0];
	} else {
		/* the store's next pages, faulted in here rather than on the
		 * thread that appends (it is the pipeline's busiest) */
		pt_store_prefault(pp->store, (size_t)b->nspans * 2);
		pthread_mutex_lock(&pp->mu);
		b->state = SLOT_FILLED;
		pp->fill_seq++;
		pthread_cond_broadcast(&pp->cv);
		if (final) {
			pthread_mutex_unlock(&pp->mu);
			return 0;
		}
		next = &pp->slots[pp->fill_seq % (uint64_t)pp->nslots];
		while (next->state != SLOT_FREE && !pp->stop)
			pthread_cond_wait(&pp->cv, &pp->mu);
		if (pp->stop) {
			pthread_mutex_unlock(&pp->mu);
			if (!rd->err)
				rd->err = 1;
			return -1;
		}
		next->state = SLOT_READING;
		pthread_mutex_unlock(&pp->mu);
	}
	if (final)
		return 0;
	size_t tail = rd->end - rd->keep;
	/* handed on early (MAX_BATCH_EVENTS), the text not yet split fits as
	 * it is: growing for it would compound from batch to batch */
	size_t want = rd->pos < rd->end ? tail : tail * 2;
	batch_reserve(next, want > CHUNK_BYTES ? want : CHUNK_BYTES);
	memcpy(next->buf, b->buf + rd->keep, tail);
	next->base_off = b->base_off + rd->keep;
	next->nspans = 0;
	rd->pos -= rd->keep;
	rd->obj_start -= rd->obj_start >= rd->keep ? rd->keep : rd->obj_start;
	rd->end = tail;
	rd->keep = 0;
	rd->cur = next;
	return rd->err ? -1 : 0;
}

/*
 * Makes more text available after rd->end, keeping [rd->keep, end). Returns
 * 1 when bytes were added, 0 at the end of input, -1 on error.
 */
static int refill(struct rdr *rd)
{
	if (rd->err)
		return -1;
	struct cr_batch *b = rd->cur;
	if (b->nspans) {
		if (emit(rd, 0) < 0)
			return -1;
		b = rd->cur;
	} else if (rd->keep > 0) {
		memmove(b->buf, b->buf + rd->keep, rd->end - rd->keep);
		b->base_off += rd->keep;
		rd->pos -= rd->keep;
		rd->obj_start -= rd->obj_start >= rd->keep ? rd->keep : rd->obj_start;
		rd->end -= rd->keep;
		rd->keep = 0;
	}
	if (rd->eof)
		return 0;
	if (rd->end == b->cap) {
		if (b->cap >= MAX_VALUE_BYTES) {
			rd_fail(rd, PT_ENOMEM, rd->keep, "one JSON value is larger than 256 MiB");
			return -1;
		}
		batch_reserve(b, b->cap * 2);
	}
	size_t before = rd->end;
	while (rd->end < b->cap) {
		long n = src_read(rd->src, b->buf + rd->end, b->cap - rd->end);
		if (n < 0) {
			rd_fail(rd, rd->src->err, rd->end, rd->src->msg);
			return -1;
		}
		if (n == 0) {
			rd->eof = 1;
			break;
		}
		rd->end += (size_t)n;
	}
	return rd->end > before;
}

/* Skips whitespace; 1 = a byte is there, 0 = end of input, -1 = error. */
static int ws_more(struct rdr *rd)
{
	for (;;) {
		const char *p = rd->cur->buf;
		while (rd->pos < rd->end && pt_json_is_ws(p[rd->pos]))
			rd->pos++;
		if (rd->pos < rd->end)
			return 1;
		rd->keep = rd->pos;
		int r = refill(rd);
		if (r <= 0)
			return r;
	}
}

/* Ends rd with "unexpected end of input" (a truncated file). */
static int truncated(struct rdr *rd, const char *what)
{
	rd_fail(rd, PT_ETRUNC, rd->end, what);
	return -1;
}

/* Makes the whole value at pos available (refilling as needed) and returns
 * its end offset, or -1 (error set). limit: give up (return -2) past it. */
static long value_span(struct rdr *rd, size_t limit)
{
	for (;;) {
		struct pt_json_err err = {NULL, NULL};
		const char *b = rd->cur->buf;
		const char *e = pt_json_skip_value(b + rd->pos, b + rd->end, &err);
		/* a number could go on in the next chunk */
		if (e && (e < b + rd->end || rd->eof))
			return (long)(e - b);
		if (!e && err.at < b + rd->end) {
			rd_fail(rd, PT_EFORMAT, (size_t)(err.at - b), err.msg);
			return -1;
		}
		if (rd->end - rd->pos > limit)
			return -2;
		rd->keep = rd->pos;
		int r = refill(rd);
		if (r < 0)
			return -1;
		if (r == 0 && !e)
			return truncated(rd, "unexpected end of input (truncated file?)");
	}
}

/* Skips a top-level value of any size with a constant window: strings and
 * brackets are tracked byte by byte, never held whole. */
static int skip_stream(struct rdr *rd)
{
	char c = rd->cur->buf[rd->pos];
	if (c != '{' && c != '[') {
		long e = value_span(rd, MAX_VALUE_BYTES);
		if (e < 0)
			return -1;
		rd->pos = (size_t)e;
		return 0;
	}
	struct pt_buf stk = {0};
	int in_str = 0, esc = 0, ret = -1;
	for (;;) {
		const char *p = rd->cur->buf;
		while (rd->pos < rd->end) {
			char ch = p[rd->pos++];
			if (in_str) {
				if (esc)
					esc = 0;
				else if (ch == '\\')
					esc = 1;
				else if (ch == '"')
					in_str = 0;
				continue;
			}
			if (ch == '"') {
				in_str = 1;
			} else if (ch == '{' || ch == '[') {
				pt_buf_putc(&stk, ch == '{' ? '}' : ']');
			} else if (ch == '}' || ch == ']') {
				if (!stk.len || stk.p[stk.len - 1] != ch) {
					rd_fail(rd, PT_EFORMAT, rd->pos - 1, "mismatched bracket");
					goto out;
				}
				if (--stk.len == 0) {
					ret = 0;
					goto out;
				}
			}
		}
		rd->keep = rd->pos;
		int r = refill(rd);
		if (r < 0)
			goto out;
		if (r == 0) {
			truncated(rd, "unexpected end of input (truncated file?)");
			goto out;
		}
	}
out:
	pt_buf_free(&stk);
	return ret;
}

/* The traceEvents array (or the bare array), from just after its '['. */
static int run_array(struct rdr *rd, int object_form)
{
	int sep = 0; /* 0: just opened, 1: after an element, 2: after ',' */
	for (;;) {
		int r = ws_more(rd);
		if (r < 0)
			return -1;
		if (r == 0) {
			if (object_form)
				return truncated(rd, "unexpected end of input inside traceEvents "
						     "(truncated file?)");
			return 0; /* a bare array may end without ']' */
		}
		char c = rd->cur->buf[rd->pos];
		if (c == ']') {
			rd->pos++;
			return 0;
		}
		if (sep == 1) {
			if (c != ',') {
				rd_fail(rd, PT_EFORMAT, rd->pos, "expected ',' or ']'");
				return -1;
			}
			rd->pos++;
			sep = 2;
			continue;
		}
		if (c != '{') {
			/* not an object: skip it, count it as a bad event */
			rd->keep = rd->pos;
			if (skip_stream(rd) < 0)
				return -1;
			rd->bad_elems++;
			sep = 1;
			continue;
		}
		struct pt_json_split split = {0, 0, 0};
		rd->obj_start = rd->pos;
		for (;;) {
			size_t k =
			    pt_json_split_scan(&split, rd->cur->buf + rd->pos, rd->end - rd->pos);
			if (k != PT_JSON_SPLIT_MORE) {
				rd->pos += k;
				break;
			}
			rd->pos = rd->end;
			int rr = refill(rd);
			if (rr < 0)
				return -1;
			if (rr == 0)
				return truncated(rd,
						 "unexpected end of input inside an event object "
						 "(truncated file?)");
		}
		struct cr_batch *b = rd->cur;
		if (b->nspans == b->spans_cap) {
			b->spans_cap = b->spans_cap ? b->spans_cap * 2 : 4096;
			b->spans = pt_xrealloc(b->spans, b->spans_cap * sizeof *b->spans);
		}
		b->spans[b->nspans].begin = (uint32_t)rd->obj_start;
		b->spans[b->nspans].end = (uint32_t)rd->pos;
		b->nspans++;
		rd->keep = rd->pos;
		sep = 1;
		/* tiny objects ("{}" is 2 bytes) would give a batch millions of
		 * raw records (~320 bytes each): hand it on at MAX_BATCH_EVENTS */
		if (b->nspans >= MAX_BATCH_EVENTS && emit(rd, 0) < 0)
			return -1;
	}
}

/*
 * otherData of proftop's own export: its generator says "cat" names the
 * kind exactly (so read-back never re-applies the name rules), and its
 * warnings carry the original load's counts over the round trip.
 */
static void capture_other(struct rdr *rd, const cJSON *v)
{
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(v, "generator");
	if (!cJSON_IsString(g) || strncmp(g->valuestring, "proftop ", 8) != 0)
		return;
	rd->native = 1;
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(v, "warnings"), *it;
	cJSON_ArrayForEach(it, w)
	{
		if (!cJSON_IsNumber(it) || it->valuedouble < 0 || it->valuedouble > 1e18)
			continue;
		for (int k = 0; k < PT_WARN__COUNT; k++)
			if (it->string && !strcmp(it->string, pt_warn_key((enum pt_warn)k)))
				rd->imp_warn[k] += (uint64_t)it->valuedouble;
	}
	const cJSON *dn = cJSON_GetObjectItemCaseSensitive(v, "device_name");
	if (cJSON_IsString(dn))
		snprintf(rd->device, sizeof rd->device, "%s", dn->valuestring);
	/* the probe's measured cost per event (the overhead figure) */
	const cJSON *cost = cJSON_GetObjectItemCaseSensitive(v, "probe_ns_per_event");
	if (cJSON_IsNumber(cost) && cost->valuedouble > 0 && cost->valuedouble < 1e5)
		rd->ns_per_event = cost->valuedouble;
	const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(v, "ranks");
	cJSON_ArrayForEach(it, ranks)
	{
		const cJSON *pid = cJSON_GetObjectItemCaseSensitive(it, "pid");
		const cJSON *rank = cJSON_GetObjectItemCaseSensitive(it, "rank");
		const cJSON *host = cJSON_GetObjectItemCaseSensitive(it, "host");
		if (!cJSON_IsNumber(pid) || !cJSON_IsNumber(rank) || pid->valuedouble > 9e15 ||
		    pid->valuedouble < -9e15 || rank->valuedouble < -1 || rank->valuedouble > 9e15 ||
		    rd->nprocs >= 1 << 20)
			continue;
		rd->procs = pt_xrealloc(rd->procs, (rd->nprocs + 1) * sizeof *rd->procs);
		struct rd_proc *p = &rd->procs[rd->nprocs++];
		p->pid = (int64_t)pid->valuedouble;
		p->rank = (int64_t)rank->valuedouble;
		snprintf(p->host, sizeof p->host, "%s", cJSON_IsString(host) ? host->valuestring : "");
	}
}

/* distributedInfo / displayTimeUnit / otherData: small values, parsed whole. */
static int capture(struct rdr *rd, int which)
{
	size_t start = rd->pos;
	rd->keep = rd->pos;
	long e = value_span(rd, CAPTURE_BYTES);
	if (e == -2)
		return skip_stream(rd); /* too big to be what we look for */
	if (e < 0)
		return -1;
	start = rd->pos;
	cJSON *v = cJSON_ParseWithLength(rd->cur->buf + start, (size_t)e - start);
	rd->pos = (size_t)e;
	if (!v)
		return 0; /* NaN and friends: valid to us, not to cJSON; ignore */
	if (which == 0 && cJSON_IsString(v)) {
		rd->display_unit_set = 1;
		rd->display_ns = strcmp(v->valuestring, "ns") == 0;
	} else if (which == 1 && cJSON_IsObject(v)) {
		cJSON *r = cJSON_GetObjectItemCaseSensitive(v, "rank");
		cJSON *w = cJSON_GetObjectItemCaseSensitive(v, "world_size");
		if (cJSON_IsNumber(r))
			rd->rank = (int64_t)r->valuedouble;
		if (cJSON_IsNumber(w))
			rd->world = (int64_t)w->valuedouble;
	} else if (which == 2 && cJSON_IsObject(v)) {
		capture_other(rd, v);
	} else if (which == 3 && cJSON_IsArray(v)) {
		/* Kineto's deviceProperties: [{"id":0,"name":"NVIDIA A100-SXM4-80GB",...}] */
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(v, 0), "name");
		if (cJSON_IsString(n) && !rd->device[0])
			snprintf(rd->device, sizeof rd->device, "%s", n->valuestring);
	}
	cJSON_Delete(v);
	return 0;
}

static int expect_eof(struct rdr *rd)
{
	int r = ws_more(rd);
	if (r < 0)
		return -1;
	if (r > 0) {
		rd_fail(rd, PT_EFORMAT, rd->pos, "unexpected data after the JSON value");
		return -1;
	}
	return 0;
}

static int run_object(struct rdr *rd)
{
	rd->pos++;
	int r = ws_more(rd);
	if (r <= 0)
		return r < 0 ? -1 : truncated(rd, "unexpected end of input (truncated file?)");
	if (rd->cur->buf[rd->pos] == '}') {
		rd->pos++;
		return expect_eof(rd);
	}
	for (;;) {
		r = ws_more(rd);
		if (r <= 0)
			return r < 0 ? -1
				     : truncated(rd, "unexpected end of input (truncated file?)");
		if (rd->cur->buf[rd->pos] != '"') {
			rd_fail(rd, PT_EFORMAT, rd->pos, "expected a string key");
			return -1;
		}
		rd->keep = rd->pos;
		long ke = value_span(rd, MAX_VALUE_BYTES);
		if (ke < 0)
			return -1;
		char key[24] = "";
		size_t klen = (size_t)ke - rd->pos - 2;
		if (klen < sizeof key) {
			memcpy(key, rd->cur->buf + rd->pos + 1, klen);
			key[klen] = 0;
		}
		rd->pos = (size_t)ke;
		r = ws_more(rd);
		if (r <= 0)
			return r < 0 ? -1
				     : truncated(rd, "unexpected end of input (truncated file?)");
		if (rd->cur->buf[rd->pos] != ':') {
			rd_fail(rd, PT_EFORMAT, rd->pos, "expected ':'");
			return -1;
		}
		rd->pos++;
		r = ws_more(rd);
		if (r <= 0)
			return r < 0 ? -1
				     : truncated(rd, "unexpected end of input (truncated file?)");
		char c = rd->cur->buf[rd->pos];
		static const char *const known[] = {"traceEvents", "displayTimeUnit",
						    "distributedInfo", "otherData"};
		for (unsigned k = 0; k < sizeof known / sizeof *known; k++) {
			if (strcmp(key, known[k]))
				continue;
			if (rd->seen_keys & (1u << k))
				rd->dup_keys++; /* JSON leaves it open; say which one counts */
			rd->seen_keys |= 1u << k;
		}
		if (!strcmp(key, "traceEvents") && c == '[' && !rd->have_events) {
			rd->have_events = 1;
			rd->pos++;
			r = run_array(rd, 1);
		} else if (!strcmp(key, "displayTimeUnit")) {
			r = capture(rd, 0);
		} else if (!strcmp(key, "distributedInfo")) {
			r = capture(rd, 1);
		} else if (!strcmp(key, "otherData")) {
			r = capture(rd, 2);
		} else if (!strcmp(key, "deviceProperties")) {
			r = capture(rd, 3);
		} else {
			rd->keep = rd->pos;
			r = skip_stream(rd);
		}
		if (r < 0)
			return -1;
		r = ws_more(rd);
		if (r <= 0)
			return r < 0 ? -1
				     : truncated(rd, "unexpected end of input (truncated file?)");
		c = rd->cur->buf[rd->pos];
		if (c == ',') {
			rd->pos++;
			continue;
		}
		if (c == '}') {
			rd->pos++;
			return expect_eof(rd);
		}
		rd_fail(rd, PT_EFORMAT, rd->pos, "expected ',' or '}'");
		return -1;
	}
}

/* The whole input; afterwards the final batch is emitted (also on error). */
static void run_top(struct rdr *rd)
{
	int r = refill(rd);
	if (r < 0)
		goto out;
	const unsigned char *u = (const unsigned char *)rd->cur->buf;
	if (rd->end >= 3 && u[0] == 0xef && u[1] == 0xbb && u[2] == 0xbf)
		rd->pos = 3; /* UTF-8 byte order mark */
	r = ws_more(rd);
	if (r < 0)
		goto out;
	if (r == 0) {
		rd_fail(rd, PT_EFORMAT, rd->pos, "empty file");
		goto out;
	}
	char c = rd->cur->buf[rd->pos];
	if (c == '[') {
		rd->have_events = 1;
		rd->pos++;
		if (run_array(rd, 0) == 0)
			expect_eof(rd);
	} else if (c == '{') {
		if (run_object(rd) == 0 && !rd->have_events) {
			rd_fail(rd, PT_EFORMAT, 0, "not a Chrome trace (no traceEvents array)");
			rd->err_off = 0; /* about the whole file */
		}
	} else {
		rd_fail(rd, PT_EFORMAT, rd->pos, "not a Chrome trace (expected '{' or '[')");
	}
out:
	if (rd->err != 1)
		emit(rd, 1);
}

static void *reader_main(void *arg)
{
	run_top(arg);
	return NULL;
}

static void *worker_main(void *arg)
{
	struct pipe *pp = arg;
	pthread_mutex_lock(&pp->mu);
	for (;;) {
		struct cr_batch *b = &pp->slots[pp->parse_seq % (uint64_t)pp->nslots];
		while (!pp->stop && b->state != SLOT_FILLED) {
			pthread_cond_wait(&pp->cv, &pp->mu);
			b = &pp->slots[pp->parse_seq % (uint64_t)pp->nslots];
		}
		if (pp->stop)
			break;
		b->state = SLOT_PARSING;
		pp->parse_seq++;
		pthread_mutex_unlock(&pp->mu);
		cr_parse_batch(b);
		pthread_mutex_lock(&pp->mu);
		b->state = SLOT_PARSED;
		pthread_cond_broadcast(&pp->cv);
	}
	pthread_mutex_unlock(&pp->mu);
	return NULL;
}

static int auto_threads(const struct pt_read_opts *o, size_t size_hint, int gz)
{
	int n = o ? o->threads : 0;
	if (n <= 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		n = c < 1 ? 1 : c > 4 ? 4 : (int)c;
		/* small inputs are not worth the threads */
		if (size_hint && size_hint < (gz ? CHUNK_BYTES / 16 : CHUNK_BYTES))
			n = 1;
	}
	return n > 16 ? 16 : n;
}

static int read_src(struct pt_trace *t, struct src *s, const char *name, int threads, char *err,
		    size_t errlen)
{
	struct pipe pp;
	memset(&pp, 0, sizeof pp);
	struct rdr rd;
	memset(&rd, 0, sizeof rd);
	rd.src = s;
	rd.pp = &pp;
	rd.rank = -1;
	rd.world = -1;
	struct cr_sink *sink = cr_sink_new(t);
	pp.sink = sink;
	pp.store = t->store;
	pp.threaded = threads > 1;
	pp.nslots = pp.threaded ? (threads + 3 > MAX_SLOTS ? MAX_SLOTS : threads + 3) : 2;
	for (int i = 0; i < pp.nslots; i++)
		batch_reserve(&pp.slots[i], CHUNK_BYTES);
	rd.cur = &pp.slots[0];
	rd.cur->state = SLOT_READING;
	int ret = 0;
	uint64_t perr_off = 0;
	const char *perr_msg = NULL;
	if (!pp.threaded) {
		run_top(&rd);
		if (pp.sync_perr) {
			perr_off = pp.perr_off;
			perr_msg = pp.perr_msg;
		}
	} else {
		pthread_t rth, wth[16];
		int nw = threads;
		pthread_mutex_init(&pp.mu, NULL);
		pthread_cond_init(&pp.cv, NULL);
		pthread_create(&rth, NULL, reader_main, &rd);
		for (int i = 0; i < nw; i++)
			pthread_create(&wth[i], NULL, worker_main, &pp);
		uint64_t cons = 0;
		for (;;) {
			struct cr_batch *b = &pp.slots[cons % (uint64_t)pp.nslots];
			pthread_mutex_lock(&pp.mu);
			while (b->state != SLOT_PARSED)
				pthread_cond_wait(&pp.cv, &pp.mu);
			pthread_mutex_unlock(&pp.mu);
			cr_sink_batch(sink, b);
			int final = b->final;
			if (b->perr) {
				perr_off = b->perr_off;
				perr_msg = b->perr_msg;
			}
			pthread_mutex_lock(&pp.mu);
			b->state = SLOT_FREE;
			cons++;
			if (final || perr_msg)
				pp.stop = 1;
			pthread_cond_broadcast(&pp.cv);
			pthread_mutex_unlock(&pp.mu);
			if (final || perr_msg)
				break;
		}
		pthread_join(rth, NULL);
		for (int i = 0; i < nw; i++)
			pthread_join(wth[i], NULL);
		pthread_mutex_destroy(&pp.mu);
		pthread_cond_destroy(&pp.cv);
	}
	if (perr_msg) {
		ret = PT_EFORMAT;
		snprintf(err, errlen, "%s: byte %" PRIu64 ": %s", name, perr_off, perr_msg);
	} else if (rd.err) {
		ret = rd.err;
		snprintf(err, errlen, "%s: byte %" PRIu64 ": %s", name, rd.err_off, rd.msg);
	} else {
		cr_sink_finish(sink);
		if (rd.bad_elems)
			pt_trace_warn(t, PT_WARN_BAD_EVENT, rd.bad_elems);
		if (rd.dup_keys)
			pt_trace_warn(t, PT_WARN_DUP_KEY, rd.dup_keys);
		if (rd.display_unit_set)
			t->display_unit = rd.display_ns ? 1 : 0;
		if (rd.rank >= 0)
			t->rank = rd.rank;
		if (rd.world >= 0)
			t->world_size = rd.world;
		for (int k = 0; k < PT_WARN__COUNT; k++)
			pt_trace_warn(t, (enum pt_warn)k, rd.imp_warn[k]);
		if (rd.ns_per_event > 0)
			t->probe_ns_per_event = rd.ns_per_event;
		if (rd.device[0] && !t->device_name)
			t->device_name = pt_trace_intern(t, rd.device, strlen(rd.device));
		for (size_t i = 0; i < rd.nprocs; i++)
			pt_trace_set_proc(t, rd.procs[i].pid, rd.procs[i].rank, rd.procs[i].host);
	}
	free(rd.procs);
	cr_sink_free(sink);
	for (int i = 0; i < pp.nslots; i++) {
		free(pp.slots[i].buf);
		free(pp.slots[i].spans);
		free(pp.slots[i].ev);
		pt_json_side_free(&pp.slots[i].side);
	}
	return ret;
}

int pt_chrome_read_mem(struct pt_trace *t, const void *buf, size_t len, const char *name,
		       const struct pt_read_opts *o, char *err, size_t errlen)
{
	struct src s;
	char dummy[8];
	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof dummy;
	}
	err[0] = 0;
	if (!name)
		name = "(memory)";
	src_open(&s, -1, buf, len);
	int ret = read_src(t, &s, name, auto_threads(o, len ? len : 1, s.gz), err, errlen);
	src_close(&s);
	return ret;
}

int pt_chrome_read(struct pt_trace *t, const char *path, const struct pt_read_opts *o, char *err,
		   size_t errlen)
{
	char dummy[8];
	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof dummy;
	}
	err[0] = 0;
	/* O_NONBLOCK: a FIFO nobody writes must not hang the open; back to
	 * blocking reads at once (a FIFO without a writer then reads as empty) */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return e == ENOENT ? PT_ENOENT : e == EACCES ? PT_EPERM : PT_EIO;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		snprintf(err, errlen, "%s: is a directory", path);
		return PT_EIO;
	}
	if (!t->source)
		pt_trace_set_source(t, path);
	struct src s;
	int ret = src_open(&s, fd, NULL, 0);
	if (ret == 0) {
		size_t hint = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size : 0;
		ret = read_src(t, &s, path, auto_threads(o, hint, s.gz), err, errlen);
	} else {
		snprintf(err, errlen, "%s: %s", path, s.msg);
	}
	src_close(&s);
	close(fd);
	return ret;
}
