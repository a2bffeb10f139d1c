/*
 * util.c - allocation that aborts on exhaustion, hashing, byte buffers and
 * escaping of untrusted names (terminal and JSON).
 */
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proftop/error.h"

static void oom(size_t n)
{
	fprintf(stderr, "proftop: out of memory (allocating %zu bytes)\n", n);
	abort();
}

void *pt_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *pt_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *pt_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *pt_xstrdup(const char *s)
{
	return pt_xstrndup(s, strlen(s));
}

char *pt_xstrndup(const char *s, size_t n)
{
	char *p = pt_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

/* 8 bytes at a time, multiply-xorshift mixing; good enough for interning. */
uint64_t pt_hash_bytes(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (len * 0xff51afd7ed558ccdull);
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ (w * 0xc4ceb9fe1a85ec53ull)) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
		s += 8;
		len -= 8;
	}
	uint64_t w = 0;
	memcpy(&w, s, len);
	h = (h ^ (w * 0xc4ceb9fe1a85ec53ull)) * 0x9e3779b97f4a7c15ull;
	return pt_hash_u64(h);
}

uint64_t pt_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void pt_buf_reserve(struct pt_buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + extra + 1)
		cap *= 2;
	b->p = pt_xrealloc(b->p, cap);
	b->cap = cap;
}

void pt_buf_put(struct pt_buf *b, const void *p, size_t n)
{
	pt_buf_reserve(b, n);
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = 0;
}

void pt_buf_putc(struct pt_buf *b, char c)
{
	pt_buf_reserve(b, 1);
	b->p[b->len++] = c;
	b->p[b->len] = 0;
}

void pt_buf_printf(struct pt_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char tmp[256];
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof tmp) {
		pt_buf_put(b, tmp, (size_t)n);
		return;
	}
	pt_buf_reserve(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void pt_buf_free(struct pt_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/*
 * Decodes one UTF-8 sequence at s (n bytes available). Returns its length
 * and the code point, or 0 when the bytes are not valid UTF-8 (overlongs,
 * surrogates and values past U+10FFFF are invalid).
 */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char c = s[0];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	size_t len;
	uint32_t v, min;
	if ((c & 0xe0) == 0xc0) {
		len = 2;
		v = c & 0x1f;
		min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3;
		v = c & 0x0f;
		min = 0x800;
	} else if ((c & 0xf8) == 0xf0) {
		len = 4;
		v = c & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

int pt_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < len) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		uint32_t cp;
		size_t k = utf8_decode(p + i, len - i, &cp);
		if (!k)
			return 0;
		i += k;
	}
	return 1;
}

/*
 * Code points a terminal may act on rather than show, or that hide or
 * reorder the text around them: C1 controls, bidi marks/embeddings/
 * overrides/isolates, zero-width and invisible format characters, line and
 * paragraph separators, interlinear annotation marks.
 */
static int cp_is_dangerous(uint32_t cp)
{
	return (cp >= 0x80 && cp < 0xa0) || (cp >= 0x200b && cp <= 0x200f) ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x206f) || cp == 0x061c ||
	       cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb);
}

/*
 * One escaped token for the sequence at s: writes up to 12 bytes to tok and
 * returns the bytes consumed from s; *cols gets the columns it takes.
 */
static size_t escape_one(const unsigned char *s, size_t n, unsigned flags, char *tok,
			 size_t *toklen, size_t *cols)
{
	unsigned char c = s[0];
	if (c >= 0x20 && c < 0x7f) {
		tok[0] = (char)c;
		*toklen = 1;
		*cols = 1;
		return 1;
	}
	if (c < 0x80) { /* C0 control or DEL */
		const char *named = NULL;
		switch (c) {
		case '\n': named = "\\n"; break;
		case '\t': named = "\\t"; break;
		case '\r': named = "\\r"; break;
		case 0x1b: named = "\\e"; break;
		}
		if (named) {
			memcpy(tok, named, 2);
			*toklen = 2;
		} else {
			*toklen = (size_t)snprintf(tok, 12, "\\x%02x", c);
		}
		*cols = *toklen;
		return 1;
	}
	uint32_t cp;
	size_t k = utf8_decode(s, n, &cp);
	if (!k) {
		*toklen = (size_t)snprintf(tok, 12, "\\x%02x", c);
		*cols = *toklen;
		return 1;
	}
	if ((flags & PT_ESC_ASCII) || cp_is_dangerous(cp)) {
		*toklen = (size_t)snprintf(tok, 12, "\\u{%x}", cp);
		*cols = *toklen;
		return k;
	}
	memcpy(tok, s, k);
	*toklen = k;
	*cols = 1;
	return k;
}

size_t pt_escape_term(char *dst, size_t cap, const char *s, size_t len, size_t max_cols,
		      unsigned flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, out = 0, cols = 0;
	if (cap == 0)
		return 0;
	size_t total_cols = max_cols ? pt_escape_term_cols(s, len, flags) : 0;
	int cut = max_cols && total_cols > max_cols;
	size_t limit = cut ? (max_cols > 3 ? max_cols - 3 : 0) : (size_t)-1;
	/* where the last tokens ended, to step back when dst fills up first */
	size_t back_out[4] = {0}, back_cols[4] = {0}, nback = 0;
	while (i < len) {
		char tok[16];
		size_t tl, tc;
		size_t used = escape_one(p + i, len - i, flags, tok, &tl, &tc);
		if (cols + tc > limit)
			break;
		if (out + tl + 4 > cap) { /* dst is full: still show that the name goes on */
			cut = 1;
			while (max_cols && cols + 3 > max_cols && nback > 1) {
				nback--;
				out = back_out[(nback - 1) % 4];
				cols = back_cols[(nback - 1) % 4];
			}
			if (max_cols && cols + 3 > max_cols)
				out = cols = 0;
			break;
		}
		memcpy(dst + out, tok, tl);
		out += tl;
		cols += tc;
		i += used;
		back_out[nback % 4] = out;
		back_cols[nback % 4] = cols;
		nback++;
	}
	if (cut) {
		size_t dots = max_cols && max_cols < 3 ? max_cols : 3;
		for (size_t d = 0; d < dots && out + 1 < cap; d++) {
			dst[out++] = '.';
			cols++;
		}
	}
	dst[out] = 0;
	return cols;
}

size_t pt_escape_term_cols(const char *s, size_t len, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, cols = 0;
	while (i < len) {
		char tok[16];
		size_t tl, tc;
		i += escape_one(p + i, len - i, flags, tok, &tl, &tc);
		cols += tc;
	}
	return cols;
}

void pt_buf_json_str(struct pt_buf *b, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	pt_buf_putc(b, '"');
	size_t i = 0;
	while (i < len) {
		unsigned char c = p[i];
		size_t run = i;
		while (run < len && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' &&
		       p[run] != '\\' && p[run] != 0x7f)
			run++;
		if (run > i) {
			pt_buf_put(b, p + i, run - i);
			i = run;
			continue;
		}
		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};
			pt_buf_put(b, e, 2);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			pt_buf_printf(b, "\\u%04x", c);
			i++;
		} else {
			uint32_t cp;
			size_t k = utf8_decode(p + i, len - i, &cp);
			if (!k) {
				pt_buf_put(b, "\\ufffd", 6);
				i++;
			} else if (cp_is_dangerous(cp)) {
				pt_buf_printf(b, "\\u%04x", cp);
				i += k;
			} else {
				pt_buf_put(b, p + i, k);
				i += k;
			}
		}
	}
	pt_buf_putc(b, '"');
}

void pt_json_str(FILE *f, const char *s, size_t len)
{
	struct pt_buf b = {0};
	pt_buf_json_str(&b, s, len);
	fwrite(b.p, 1, b.len, f);
	pt_buf_free(&b);
}

int pt_parse_size(const char *s, size_t *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || v < 0)
		return PT_EINVAL;
	double mul = 1;
	switch (*end) {
	case 'k': case 'K': mul = 1024.0; end++; break;
	case 'm': case 'M': mul = 1024.0 * 1024; end++; break;
	case 'g': case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
	case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
	}
	if (*end == 'i' || *end == 'B')
		end++;
	if (*end == 'B')
		end++;
	if (*end)
		return PT_EINVAL;
	double bytes = v * mul;
	if (bytes > 1e18)
		return PT_EINVAL;
	*out = (size_t)bytes;
	return 0;
}

int64_t pt_step_number(const char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	size_t e = n;
	while (n && s[n - 1] >= '0' && s[n - 1] <= '9' && e - n < 18)
		n--;
	if (n == e)
		return -1;
	int64_t v = 0;
	for (size_t i = n; i < e; i++)
		v = v * 10 + (s[i] - '0');
	return v;
}

int pt_u64_cmp(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return a < b ? -1 : a > b;
}

uint64_t pt_pct_nearest(const uint64_t *v, size_t n, double p)
{
	size_t k = (size_t)ceil(p / 100.0 * (double)n);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}
