/*
 * chrome_doc.c - the top-level JSON of a Chrome trace: {"traceEvents":
 * [...], ...} or a bare array whose "]" may be missing. It walks the text
 * that the pipeline (chrome_read.c) makes available, records where each
 * event object of the array begins and ends (the spans of a batch), skips
 * top-level values of any size with a constant window, and parses the small
 * ones it needs whole (distributedInfo, displayTimeUnit, otherData of
 * proftop's own export). It runs on the reader thread (or the caller's, with
 * one thread) and writes only rd and the current batch.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/chrome_int.h"
#include "import/chrome_rdr.h"
#include "proftop/chrome.h"
#include "proftop/error.h"
#include "model/util.h"

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
		int r = cr_refill(rd);
		if (r <= 0)
			return r;
	}
}

/* Ends rd with "unexpected end of input" (a truncated file). */
static int truncated(struct rdr *rd, const char *what)
{
	cr_rd_fail(rd, PT_ETRUNC, rd->end, what);
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
			cr_rd_fail(rd, PT_EFORMAT, (size_t)(err.at - b), err.msg);
			return -1;
		}
		if (rd->end - rd->pos > limit)
			return -2;
		rd->keep = rd->pos;
		int r = cr_refill(rd);
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
					cr_rd_fail(rd, PT_EFORMAT, rd->pos - 1, "mismatched bracket");
					goto out;
				}
				if (--stk.len == 0) {
					ret = 0;
					goto out;
				}
			}
		}
		rd->keep = rd->pos;
		int r = cr_refill(rd);
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

/* Room in b for one more span at least. */
static void span_room(struct cr_batch *b)
{
	if (b->nspans == b->spans_cap) {
		b->spans_cap = b->spans_cap ? b->spans_cap * 2 : 4096;
		b->spans = pt_xrealloc(b->spans, b->spans_cap * sizeof *b->spans);
	}
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
				cr_rd_fail(rd, PT_EFORMAT, rd->pos, "expected ',' or ']'");
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
		/* a run of objects in one pass while it is regular; the walk
		 * below takes whatever that leaves (an escape, the buffer's end) */
		struct cr_batch *cb = rd->cur;
		span_room(cb);
		uint32_t room = cb->spans_cap - cb->nspans;
		if (room > MAX_BATCH_EVENTS - cb->nspans)
			room = MAX_BATCH_EVENTS - cb->nspans;
		size_t run = pt_json_split_run(cb->buf + rd->pos, rd->end - rd->pos,
					       (uint32_t)rd->pos, cb->spans + cb->nspans, room);
		if (run) {
			cb->nspans += (uint32_t)run;
			rd->obj_start = cb->spans[cb->nspans - 1].begin;
			rd->pos = cb->spans[cb->nspans - 1].end;
			rd->keep = rd->pos;
			sep = 1;
			if (cb->nspans >= MAX_BATCH_EVENTS && cr_emit(rd, 0) < 0)
				return -1;
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
			int rr = cr_refill(rd);
			if (rr < 0)
				return -1;
			if (rr == 0)
				return truncated(rd,
						 "unexpected end of input inside an event object "
						 "(truncated file?)");
		}
		struct cr_batch *b = rd->cur; /* a refill may have handed cb on */
		span_room(b);
		b->spans[b->nspans].begin = (uint32_t)rd->obj_start;
		b->spans[b->nspans].end = (uint32_t)rd->pos;
		b->nspans++;
		rd->keep = rd->pos;
		sep = 1;
		/* tiny objects ("{}" is 2 bytes) would give a batch millions of
		 * raw records (~320 bytes each): hand it on at MAX_BATCH_EVENTS */
		if (b->nspans >= MAX_BATCH_EVENTS && cr_emit(rd, 0) < 0)
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
	/* the Python helper's, beside it */
	const cJSON *hcost = cJSON_GetObjectItemCaseSensitive(v, "helper_ns_per_call");
	if (cJSON_IsNumber(hcost) && hcost->valuedouble > 0 && hcost->valuedouble < 1e5)
		rd->helper_ns = hcost->valuedouble;
	const cJSON *hcalls = cJSON_GetObjectItemCaseSensitive(v, "helper_calls");
	if (cJSON_IsNumber(hcalls) && hcalls->valuedouble > 0 && hcalls->valuedouble < 9e15)
		rd->helper_calls = (uint64_t)hcalls->valuedouble;
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

/* A pid or tid of a proftopCollectives row: a number, or a string. */
static int coll_key(const cJSON *v, int64_t *num, char *str, size_t len)
{
	*num = 0;
	str[0] = 0;
	if (cJSON_IsNumber(v) && v->valuedouble > -9e15 && v->valuedouble < 9e15) {
		*num = (int64_t)v->valuedouble;
		return 0;
	}
	if (cJSON_IsString(v) && strlen(v->valuestring) < len) {
		snprintf(str, len, "%s", v->valuestring);
		return 0;
	}
	return -1;
}

static int coll_u64(const cJSON *v, uint64_t *out)
{
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1.8e19)
		return -1;
	*out = (uint64_t)v->valuedouble;
	return 0;
}

/* proftopCollectives of our export (export.c): the rows, checked one by one. */
static void capture_colls(struct rdr *rd, const cJSON *v)
{
	const cJSON *rows = cJSON_GetObjectItemCaseSensitive(v, "rows"), *it;
	cJSON_ArrayForEach(it, rows)
	{
		struct rd_coll c;
		memset(&c, 0, sizeof c);
		const cJSON *f[11];
		int n = 0;
		const cJSON *e;
		cJSON_ArrayForEach(e, it)
		{
			if (n < 11)
				f[n] = e;
			n++;
		}
		uint64_t gs = 0, fl = 0, ep = 0;
		if ((n != 10 && n != 11) || (n == 11 && (coll_u64(f[10], &ep) || ep > UINT32_MAX)) || rd->ncolls >= (size_t)1 << 22 ||
		    coll_key(f[0], &c.pid, c.pid_s, sizeof c.pid_s) ||
		    coll_key(f[1], &c.tid, c.tid_s, sizeof c.tid_s) || coll_u64(f[2], &c.start_ns) ||
		    coll_u64(f[3], &c.end_ns) || !cJSON_IsString(f[4]) || !cJSON_IsString(f[5]) ||
		    !f[4]->valuestring[0] || strlen(f[4]->valuestring) >= sizeof c.op ||
		    strlen(f[5]->valuestring) >= sizeof c.group || coll_u64(f[6], &c.seq) ||
		    coll_u64(f[7], &c.bytes) || coll_u64(f[8], &gs) || coll_u64(f[9], &fl) ||
		    gs > UINT32_MAX || (c.end_ns && c.end_ns < c.start_ns) ||
		    c.start_ns > (uint64_t)INT64_MAX || c.end_ns > (uint64_t)INT64_MAX) {
			rd->bad_colls++;
			continue;
		}
		snprintf(c.op, sizeof c.op, "%s", f[4]->valuestring);
		snprintf(c.group, sizeof c.group, "%s", f[5]->valuestring);
		c.group_size = (uint32_t)gs;
		c.flags = (uint32_t)fl & PT_COLL_FLAGS;
		c.epoch = (uint32_t)ep;
		rd->colls = pt_xrealloc(rd->colls, (rd->ncolls + 1) * sizeof *rd->colls);
		rd->colls[rd->ncolls++] = c;
	}
}

/* distributedInfo / displayTimeUnit / otherData: small values, parsed whole. */
static int capture(struct rdr *rd, int which)
{
	size_t start = rd->pos;
	rd->keep = rd->pos;
	long e = value_span(rd, which == 4 ? MAX_VALUE_BYTES : CAPTURE_BYTES);
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
	} else if (which == 4 && cJSON_IsObject(v)) {
		capture_colls(rd, v);
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
		cr_rd_fail(rd, PT_EFORMAT, rd->pos, "unexpected data after the JSON value");
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
			cr_rd_fail(rd, PT_EFORMAT, rd->pos, "expected a string key");
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
			cr_rd_fail(rd, PT_EFORMAT, rd->pos, "expected ':'");
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
		} else if (!strcmp(key, "proftopCollectives")) {
			r = capture(rd, 4);
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
		cr_rd_fail(rd, PT_EFORMAT, rd->pos, "expected ',' or '}'");
		return -1;
	}
}

/* The whole input; afterwards the final batch is emitted (also on error). */
void cr_run_top(struct rdr *rd)
{
	int r = cr_refill(rd);
	if (r < 0)
		goto out;
	const unsigned char *u = (const unsigned char *)rd->cur->buf;
	if (rd->end >= 3 && u[0] == 0xef && u[1] == 0xbb && u[2] == 0xbf)
		rd->pos = 3; /* UTF-8 byte order mark */
	r = ws_more(rd);
	if (r < 0)
		goto out;
	if (r == 0) {
		cr_rd_fail(rd, PT_EFORMAT, rd->pos, "empty file");
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
			cr_rd_fail(rd, PT_EFORMAT, 0, "not a Chrome trace (no traceEvents array)");
			rd->err_off = 0; /* about the whole file */
		}
	} else {
		cr_rd_fail(rd, PT_EFORMAT, rd->pos, "not a Chrome trace (expected '{' or '[')");
	}
out:
	if (rd->err != 1)
		cr_emit(rd, 1);
}
