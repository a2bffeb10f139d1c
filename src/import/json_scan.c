/*
 * json_scan.c - the JSON tokenizer of the Chrome-trace reader: string scanning
 * (SSE2 where available), iterative value skipping, exact µs->ns number
 * conversion and the object splitter (json_event.c parses one object). Nothing
 * here allocates per event except the side buffer for strings that carried
 * escapes; nothing recurses, so nesting depth only costs a byte per level.
 */
#include "import/json_scan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/trace.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#define PT_HAVE_SSE2 1
#endif

void pt_json_side_reset(struct pt_json_side *s)
{
	s->strs.len = 0;
	s->nctr = 0;
}

void pt_json_side_free(struct pt_json_side *s)
{
	pt_buf_free(&s->strs);
	free(s->ctr);
	memset(s, 0, sizeof *s);
}

static inline int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* ---- strings ---- */

/* First '"' or '\\' in [p, end), or end. */
static inline const char *find_quote_or_bs(const char *p, const char *end)
{
#ifdef PT_HAVE_SSE2
	const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
	while (end - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		int m =
		    _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, bs)));
		if (m)
			return p + __builtin_ctz((unsigned)m);
		p += 16;
	}
#endif
	while (p < end && *p != '"' && *p != '\\')
		p++;
	return p;
}

const char *pt_json_str_end(const char *p, const char *end, int *has_esc, const char **bad)
{
	for (;;) {
		p = find_quote_or_bs(p, end);
		if (p >= end)
			return NULL;
		if (*p == '"')
			return p;
		*has_esc = 1;
		if (p + 1 >= end)
			return NULL;
		switch (p[1]) {
		case '"':
		case '\\':
		case '/':
		case 'b':
		case 'f':
		case 'n':
		case 'r':
		case 't':
			p += 2;
			break;
		case 'u':
			if (end - p < 6)
				return NULL;
			for (int k = 2; k < 6; k++)
				if (hexval(p[k]) < 0) {
					*bad = p;
					return NULL;
				}
			p += 6;
			break;
		default:
			*bad = p;
			return NULL;
		}
	}
}

static void put_utf8(struct pt_buf *out, uint32_t cp)
{
	char b[4];
	size_t n;
	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | (cp >> 18));
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	pt_buf_put(out, b, n);
}

static uint32_t hex4(const char *p)
{
	return (uint32_t)(hexval(p[0]) << 12 | hexval(p[1]) << 8 | hexval(p[2]) << 4 |
			  hexval(p[3]));
}

void pt_json_unescape(const char *p, size_t len, struct pt_buf *out)
{
	const char *end = p + len;
	pt_buf_reserve(out, len);
	while (p < end) {
		const char *bs = memchr(p, '\\', (size_t)(end - p));
		if (!bs) {
			pt_buf_put(out, p, (size_t)(end - p));
			return;
		}
		pt_buf_put(out, p, (size_t)(bs - p));
		char c = bs[1];
		p = bs + 2;
		switch (c) {
		case 'b':
			pt_buf_putc(out, '\b');
			break;
		case 'f':
			pt_buf_putc(out, '\f');
			break;
		case 'n':
			pt_buf_putc(out, '\n');
			break;
		case 'r':
			pt_buf_putc(out, '\r');
			break;
		case 't':
			pt_buf_putc(out, '\t');
			break;
		case 'u': {
			uint32_t cp = hex4(p);
			p += 4;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				/* a high surrogate needs its low half right after */
				if (end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
					uint32_t lo = hex4(p + 2);
					if (lo >= 0xdc00 && lo <= 0xdfff) {
						cp =
						    0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
						p += 6;
					} else {
						cp = 0xfffd;
					}
				} else {
					cp = 0xfffd;
				}
			} else if (cp >= 0xdc00 && cp <= 0xdfff) {
				cp = 0xfffd; /* lone low surrogate */
			}
			put_utf8(out, cp);
			break;
		}
		default:
			pt_buf_putc(out, c);
			break; /* " \ / */
		}
	}
}

/* ---- numbers ---- */

const char *pt_json_num_end(const char *p, const char *end, int *nonfinite)
{
	const char *q = p;
	if (q < end && *q == '-')
		q++;
	if (q < end && (*q == 'I' || *q == 'N')) {
		const char *w = *q == 'I' ? "Infinity" : "NaN";
		size_t n = strlen(w);
		if (*q == 'N' && q != p)
			return NULL; /* "-NaN" is not a token */
		if ((size_t)(end - q) < n || memcmp(q, w, n) != 0)
			return NULL;
		*nonfinite = 1;
		return q + n;
	}
	if (q >= end || !is_digit(*q))
		return NULL;
	while (q < end && is_digit(*q))
		q++;
	if (q < end && *q == '.') {
		q++;
		if (q >= end || !is_digit(*q))
			return NULL;
		while (q < end && is_digit(*q))
			q++;
	}
	if (q < end && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < end && (*q == '+' || *q == '-'))
			q++;
		if (q >= end || !is_digit(*q))
			return NULL;
		while (q < end && is_digit(*q))
			q++;
	}
	return q;
}

double pt_json_num_double(const char *p, const char *e)
{
	char tmp[64];
	size_t n = (size_t)(e - p);
	if (n < sizeof tmp) {
		memcpy(tmp, p, n);
		tmp[n] = 0;
		return strtod(tmp, NULL);
	}
	char *h = pt_xstrndup(p, n);
	double d = strtod(h, NULL);
	free(h);
	return d;
}

enum pt_jnum_status pt_json_us_to_ns(const char *p, const char *e, int64_t *ns)
{
	const char *q = p;
	int neg = 0;
	if (q < e && *q == '-') {
		neg = 1;
		q++;
	}
	if (q < e && (*q == 'I' || *q == 'N'))
		return PT_JNUM_NONFINITE;
	uint64_t ip = 0;
	int nd = 0;
	while (q < e && is_digit(*q)) {
		if (nd || *q != '0') {
			ip = ip * 10 + (uint64_t)(*q - '0');
			nd++;
		}
		q++;
		if (nd > 16)
			goto slow;
	}
	uint64_t frac = 0;
	if (q < e && *q == '.')
		q = pt_json_us_frac(q + 1, e, &frac);
	if (q < e)
		goto slow; /* exponent */
	/* ip < 10^16, so this cannot wrap a uint64 */
	uint64_t v = ip * 1000 + frac;
	if (v > (uint64_t)INT64_MAX)
		return PT_JNUM_RANGE;
	*ns = neg ? -(int64_t)v : (int64_t)v;
	return PT_JNUM_OK;
slow : {
	double d = pt_json_num_double(p, e) * 1000.0;
	if (!isfinite(d))
		return PT_JNUM_RANGE;
	if (!(d < 9.2e18 && d > -9.2e18))
		return PT_JNUM_RANGE;
	*ns = llround(d);
	return PT_JNUM_OK;
}
}

/* ---- skipping values ---- */

static const char *match_lit(const char *p, const char *end, const char *lit, size_t n)
{
	if ((size_t)(end - p) < n || memcmp(p, lit, n) != 0)
		return NULL;
	return p + n;
}

/* A scalar cut by the end of the buffer (more text may complete it)? */
static int ran_out(const char *p, const char *end)
{
	for (; p < end; p++)
		if (!strchr("0123456789+-.eEtrufalsnNIiy", *p) || !*p)
			return 0;
	return 1;
}

/* Skips a scalar at p (string, number, literal). NULL with err on failure;
 * err->at == end when the input stopped inside it. */
static const char *skip_scalar(const char *p, const char *end, struct pt_json_err *err)
{
	const char *q;
	int dummy = 0;
	switch (*p) {
	case '"': {
		const char *bad = NULL;
		q = pt_json_str_end(p + 1, end, &dummy, &bad);
		if (!q) {
			err->at = bad ? bad : end;
			err->msg = bad ? "invalid escape in string" : "unterminated string";
			return NULL;
		}
		return q + 1;
	}
	case 't':
		q = match_lit(p, end, "true", 4);
		break;
	case 'f':
		q = match_lit(p, end, "false", 5);
		break;
	case 'n':
		q = match_lit(p, end, "null", 4);
		break;
	default:
		q = pt_json_num_end(p, end, &dummy);
		break;
	}
	if (!q) {
		int out = ran_out(p, end);
		err->at = out ? end : p;
		err->msg = out ? "unexpected end of input" : "expected a value";
	}
	return q;
}

const char *pt_json_skip_value(const char *p, const char *end, struct pt_json_err *err)
{
	uint8_t small[256];
	uint8_t *stk = small; /* 1 = object, 0 = array */
	size_t depth = 0, cap = sizeof small;
	const char *ret = NULL;

value:
	p = pt_json_ws(p, end);
	if (p >= end) {
		err->at = p;
		err->msg = "unexpected end of input";
		goto out;
	}
	if (*p == '{' || *p == '[') {
		if (depth == cap) {
			cap *= 2;
			if (stk == small) {
				stk = pt_xmalloc(cap);
				memcpy(stk, small, sizeof small);
			} else {
				stk = pt_xrealloc(stk, cap);
			}
		}
		uint8_t obj = *p == '{';
		stk[depth++] = obj;
		p = pt_json_ws(p + 1, end);
		if (p < end && *p == (obj ? '}' : ']')) {
			p++;
			depth--;
			goto after;
		}
		if (obj)
			goto key;
		goto value;
	}
	p = skip_scalar(p, end, err);
	if (!p)
		goto out;
after:
	if (depth == 0) {
		ret = p;
		goto out;
	}
	p = pt_json_ws(p, end);
	if (p < end && *p == ',') {
		p++;
		if (stk[depth - 1])
			goto key;
		goto value;
	}
	if (p < end && *p == (stk[depth - 1] ? '}' : ']')) {
		p++;
		depth--;
		goto after;
	}
	err->at = p;
	err->msg = p >= end	    ? "unexpected end of input"
		   : stk[depth - 1] ? "expected ',' or '}'"
				    : "expected ',' or ']'";
	goto out;
key:
	p = pt_json_ws(p, end);
	if (p >= end || *p != '"') {
		err->at = p;
		err->msg = p >= end ? "unexpected end of input" : "expected a string key";
		goto out;
	}
	p = skip_scalar(p, end, err);
	if (!p)
		goto out;
	p = pt_json_ws(p, end);
	if (p >= end || *p != ':') {
		err->at = p;
		err->msg = p >= end ? "unexpected end of input" : "expected ':'";
		goto out;
	}
	p++;
	goto value;
out:
	if (stk != small)
		free(stk);
	return ret;
}

/* ---- the splitter ---- */

/* One byte of the object scan; returns 1 when the object closed. */
static inline int split_byte(struct pt_json_split *s, char c)
{
	if (s->in_str) {
		if (c == '\\')
			s->esc = 1;
		else if (c == '"')
			s->in_str = 0;
		return 0;
	}
	if (c == '"')
		s->in_str = 1;
	else if (c == '{')
		s->depth++;
	else if (c == '}' && s->depth && --s->depth == 0)
		return 1;
	return 0;
}

/* The byte-at-a-time scan of [i, lim) (16 bytes at a time between special
 * bytes); returns the index past the closing '}', or PT_JSON_SPLIT_MORE
 * with *next where it stopped (lim, or one further past an escape). */
static size_t split_slow(struct pt_json_split *s, const char *buf, size_t i, size_t lim,
			 size_t *next_out)
{
#ifdef PT_HAVE_SSE2
	const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
	const __m128i lb = _mm_set1_epi8('{'), rb = _mm_set1_epi8('}');
#endif
	while (i < lim) {
		if (s->esc) {
			s->esc = 0;
			i++;
			continue;
		}
#ifdef PT_HAVE_SSE2
		if (lim - i >= 16) {
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(buf + i));
			__m128i m1 = _mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, bs));
			__m128i m2 = _mm_or_si128(_mm_cmpeq_epi8(v, lb), _mm_cmpeq_epi8(v, rb));
			unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(m1, m2));
			size_t next = i + 16;
			while (m) {
				unsigned b = (unsigned)__builtin_ctz(m);
				m &= m - 1;
				if (split_byte(s, buf[i + b]))
					return i + b + 1;
				if (s->esc && b + 1 < 16) {
					/* the escaped byte is never special */
					s->esc = 0;
					m &= ~(1u << (b + 1));
				}
				/* else it is the next window's first byte (maybe in
				 * the next piece of input): the loop's top skips it */
			}
			i = next;
			continue;
		}
#endif
		if (split_byte(s, buf[i]))
			return i + 1;
		i++;
	}
	*next_out = i;
	return PT_JSON_SPLIT_MORE;
}

#ifdef PT_HAVE_SSE2
/* Bit k set where p[k] == c, for 64 bytes. */
static inline uint64_t eq64(__m128i v0, __m128i v1, __m128i v2, __m128i v3, char c)
{
	const __m128i k = _mm_set1_epi8(c);
	return (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v0, k)) |
	       (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v1, k)) << 16 |
	       (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v2, k)) << 32 |
	       (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v3, k)) << 48;
}

/* The 64 bytes at p when none is a backslash (0 otherwise): the braces
 * outside strings into *br, and whether the block ends inside a string into
 * *in_str (all ones or zero; on entry, whether it starts inside one). With
 * no backslash the bytes inside strings are the prefix XOR of the quotes. */
static inline int block64(const char *p, uint64_t *in_str, uint64_t *br)
{
	const __m128i *v = (const __m128i *)(const void *)p;
	__m128i v0 = _mm_loadu_si128(v), v1 = _mm_loadu_si128(v + 1);
	__m128i v2 = _mm_loadu_si128(v + 2), v3 = _mm_loadu_si128(v + 3);
	if (eq64(v0, v1, v2, v3, '\\'))
		return 0;
	uint64_t x = eq64(v0, v1, v2, v3, '"');
	x ^= x << 1;
	x ^= x << 2;
	x ^= x << 4;
	x ^= x << 8;
	x ^= x << 16;
	x ^= x << 32;
	x ^= *in_str;
	*br = (eq64(v0, v1, v2, v3, '{') | eq64(v0, v1, v2, v3, '}')) & ~x;
	*in_str = (uint64_t)0 - (x >> 63);
	return 1;
}
#endif

/* After an object that ends at i: whitespace, ',', whitespace, then '{'.
 * Its offset, or 0 when anything else comes or buf ends first. */
static size_t next_object(const char *buf, size_t n, size_t i)
{
	while (i < n && pt_json_is_ws(buf[i]))
		i++;
	if (i >= n || buf[i] != ',')
		return 0;
	i++;
	while (i < n && pt_json_is_ws(buf[i]))
		i++;
	return i < n && buf[i] == '{' ? i : 0;
}

size_t pt_json_split_run(const char *buf, size_t n, uint32_t base, struct pt_json_span *out,
			 size_t max)
{
	size_t taken = 0;
#ifdef PT_HAVE_SSE2
	/* One pass of 64-byte blocks from the first '{': the quote bits' prefix
	 * XOR gives the bytes inside strings (no backslash in the block), the
	 * braces outside them the depth. An object closing at depth 0 is taken
	 * when the bytes after it are a separator and the next '{' (checked
	 * byte by byte: a few), which must then be the next '{' at depth 0. */
	size_t begin = 0, expect = 0; /* the object open at depth 1, the next '{' */
	uint32_t depth = 0;
	uint64_t in_str = 0;
	for (size_t i = 0; taken < max && n - i >= 64; i += 64) {
		uint64_t br;
		if (!block64(buf + i, &in_str, &br))
			break;
		while (br) {
			size_t k = i + (unsigned)__builtin_ctzll(br);
			br &= br - 1;
			if (buf[k] == '{') {
				if (depth++ == 0) {
					if (k != expect)
						return taken; /* a '{' where none was due */
					begin = k;
				}
			} else if (depth == 0) {
				return taken;
			} else if (--depth == 0) {
				out[taken].begin = base + (uint32_t)begin;
				out[taken].end = base + (uint32_t)(k + 1);
				taken++;
				expect = next_object(buf, n, k + 1);
				if (!expect || taken == max)
					return taken;
			}
		}
	}
#else
	(void)buf;
	(void)n;
	(void)base;
	(void)out;
	(void)max;
#endif
	return taken;
}

size_t pt_json_split_scan(struct pt_json_split *s, const char *buf, size_t n)
{
	size_t i = 0;
	while (i < n) {
#ifdef PT_HAVE_SSE2
		/* 64 bytes at a time: with no backslash in the block, the bytes
		 * inside strings are the prefix XOR of the quote bits, and only
		 * the braces outside them need a look. */
		uint64_t in_str = s->in_str ? ~(uint64_t)0 : 0, br;
		if (n - i >= 64 && !s->esc && block64(buf + i, &in_str, &br)) {
			while (br) {
				unsigned k = (unsigned)__builtin_ctzll(br);
				br &= br - 1;
				if (buf[i + k] == '{') {
					s->depth++;
				} else if (s->depth && --s->depth == 0) {
					s->in_str = 0;
					return i + k + 1;
				}
			}
			s->in_str = (uint8_t)(in_str & 1);
			i += 64;
			continue;
		}
#endif
		size_t lim = n - i >= 64 ? i + 64 : n;
		size_t r = split_slow(s, buf, i, lim, &i);
		if (r != PT_JSON_SPLIT_MORE)
			return r;
	}
	return PT_JSON_SPLIT_MORE;
}
