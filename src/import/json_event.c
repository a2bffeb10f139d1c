/*
 * json_event.c - one Chrome trace event object to a raw record: walks the
 * object's members once, picks out the fields the reader uses by key (ph,
 * name, cat, pid, tid, ts, dur, id, bp, s and a few args), converts times
 * exactly, and skips every other value with the iterative skipper of
 * json_scan.c. Strings stay slices of the chunk unless they need unescaping.
 */
#include <string.h>

#include "import/json_scan.h"
#include "proftop/trace.h"

/* read_key and next_member run for every member of every event: inlined,
 * as their call cost was a tenth of the parse. */
#define PT_JSON_INLINE static inline __attribute__((always_inline))

static inline int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* ---- the event parser ---- */

struct pctx {
	const char *base, *end;
	struct pt_raw_event *ev;
	struct pt_json_side *side;
	struct pt_json_err *err;
};

static inline void set_warn(struct pt_raw_event *ev, enum pt_warn w)
{
	if (!ev->warn)
		ev->warn = (uint8_t)(w + 1);
}

/* Parses the string at p (on '"') into a slice; returns the byte after it. */
static const char *str_slice(struct pctx *c, const char *p, struct pt_jslice *out)
{
	int esc = 0;
	const char *bad = NULL;
	const char *e = pt_json_str_end_fast(p + 1, c->end, &esc, &bad);
	if (!e) {
		c->err->at = bad ? bad : p;
		c->err->msg = bad ? "invalid escape in string" : "unterminated string";
		return NULL;
	}
	if (!esc) {
		out->off = (uint32_t)(p + 1 - c->base);
		out->len = (uint32_t)(e - p - 1);
	} else {
		size_t at = c->side->strs.len;
		pt_json_unescape(p + 1, (size_t)(e - p - 1), &c->side->strs);
		out->off = (uint32_t)at;
		out->len = (uint32_t)(c->side->strs.len - at) | PT_JSL_SIDE;
	}
	return e + 1;
}

/* A number token at p as int64 (integers exactly, others truncated). */
static const char *num_i64(struct pctx *c, const char *p, int64_t *out, int *nonfinite)
{
	{ /* the common case in one pass: up to 18 digits, no fraction or exponent */
		const char *q = p + (*p == '-');
		uint64_t v = 0;
		int nd = 0;
		while (q < c->end && is_digit(*q) && nd < 19) {
			v = v * 10 + (uint64_t)(*q - '0');
			q++;
			nd++;
		}
		if (nd && nd < 19 &&
		    (q >= c->end || (*q != '.' && *q != 'e' && *q != 'E' && !is_digit(*q)))) {
			*out = *p == '-' ? -(int64_t)v : (int64_t)v;
			return q;
		}
	}
	const char *e = pt_json_num_end(p, c->end, nonfinite);
	if (!e) {
		c->err->at = p;
		c->err->msg = "expected a value";
		return NULL;
	}
	if (*nonfinite)
		return e;
	const char *q = p;
	int neg = *q == '-';
	q += neg;
	uint64_t v = 0;
	int nd = 0;
	while (q < e && is_digit(*q) && nd < 19) {
		v = v * 10 + (uint64_t)(*q - '0');
		q++;
		nd++;
	}
	if (q == e && v <= (uint64_t)INT64_MAX) {
		*out = neg ? -(int64_t)v : (int64_t)v;
		return e;
	}
	double d = pt_json_num_double(p, e);
	*out = d >= 9.2e18 ? INT64_MAX : d <= -9.2e18 ? INT64_MIN : (int64_t)d;
	return e;
}

static const char *skip(struct pctx *c, const char *p)
{
	return pt_json_skip_value(p, c->end, c->err);
}

/* "25738" names the same thread as 25738. */
static int numeric_string(const char *s, size_t n, int64_t *out)
{
	size_t i = 0;
	int neg = 0;
	if (n && s[0] == '-') {
		neg = 1;
		i = 1;
	}
	if (i == n || n - i > 18)
		return 0;
	int64_t v = 0;
	for (; i < n; i++) {
		if (!is_digit(s[i]))
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	*out = neg ? -v : v;
	return 1;
}

/* pid / tid / id: a number, or a string kept as a slice. */
static const char *id_value(struct pctx *c, const char *p, int64_t *num, struct pt_jslice *s,
			    uint32_t str_bit)
{
	if (*p == '"') {
		p = str_slice(c, p, s);
		if (p && !(s->len & PT_JSL_SIDE) && numeric_string(c->base + s->off, s->len, num))
			return p;
		if (p)
			c->ev->have |= str_bit;
		return p;
	}
	if (*p == '-' || is_digit(*p) || *p == 'N' || *p == 'I') {
		int nf = 0;
		const char *start = p;
		p = num_i64(c, p, num, &nf);
		if (p && nf)
			set_warn(c->ev, PT_WARN_NONFINITE);
		else if (p && (*num == INT64_MAX || *num == INT64_MIN) &&
			 !(p - start == 19 && !memcmp(start, "9223372036854775807", 19)) &&
			 !(p - start == 20 && !memcmp(start, "-9223372036854775808", 20))) {
			/* beyond int64: every such value would be the same clamped number
			 * and merge distinct processes; its digits keep it apart */
			s->off = (uint32_t)(start - c->base);
			s->len = (uint32_t)(p - start < 4096 ? p - start : 4096);
			c->ev->have |= str_bit | PT_RAW_ID_RANGE;
		}
		return p;
	}
	if (*p != 'n') /* null: absent */
		set_warn(c->ev, PT_WARN_BAD_EVENT);
	return skip(c, p);
}

/* ts / dur in µs -> ns. */
static const char *time_value(struct pctx *c, const char *p, int64_t *ns, uint32_t bit)
{
	if (!(*p == '-' || is_digit(*p) || *p == 'N' || *p == 'I')) {
		set_warn(c->ev, PT_WARN_BAD_EVENT);
		return skip(c, p);
	}
	{ /* the common case in one pass: [-]digits[.digits], at most 16 integer
	   * digits, as pt_json_us_to_ns computes it */
		const char *q = p + (*p == '-');
		uint64_t ip = 0, frac = 0;
		int nd = 0, lead = 1;
		const char *d0 = q;
		while (q < c->end && is_digit(*q) && nd <= 16) {
			if (!lead || *q != '0') {
				ip = ip * 10 + (uint64_t)(*q - '0');
				nd++;
				lead = 0;
			}
			q++;
		}
		int ok = q > d0 && nd <= 16;
		if (ok && q < c->end && *q == '.') {
			const char *f0 = ++q;
			q = pt_json_us_frac(q, c->end, &frac);
			ok = q > f0;
		}
		if (ok && (q >= c->end || (*q != 'e' && *q != 'E' && !is_digit(*q)))) {
			uint64_t v = ip * 1000 + frac; /* ip < 10^16 */
			if (v <= (uint64_t)INT64_MAX) {
				*ns = *p == '-' ? -(int64_t)v : (int64_t)v;
				c->ev->have |= bit;
				return q;
			}
		}
	}
	int nf = 0;
	const char *e = pt_json_num_end(p, c->end, &nf);
	if (!e) {
		c->err->at = p;
		c->err->msg = "expected a value";
		return NULL;
	}
	if (nf) {
		set_warn(c->ev, PT_WARN_NONFINITE);
		return e;
	}
	enum pt_jnum_status st = pt_json_us_to_ns(p, e, ns);
	if (st != PT_JNUM_OK) {
		/* only a timestamp can be "absurd"; a duration is "huge" */
		set_warn(c->ev, bit == PT_RAW_TS ? PT_WARN_BAD_TS : PT_WARN_HUGE_DUR);
		if (*p == '-' && bit == PT_RAW_DUR)
			c->ev->warn = PT_WARN_NEGATIVE_DUR + 1;
		return e;
	}
	c->ev->have |= bit;
	return e;
}

/* A one-letter string ("ph", "bp", "s"). */
static const char *letter_value(struct pctx *c, const char *p, uint8_t *out, int is_ph)
{
	if (*p != '"') {
		set_warn(c->ev, PT_WARN_BAD_EVENT);
		return skip(c, p);
	}
	if (c->end - p >= 3 && p[2] == '"' && (uint8_t)p[1] >= 0x20 && p[1] != '\\' &&
	    p[1] != '"') { /* one plain letter, the common case ("X") */
		*out = (uint8_t)p[1]; /* above PT_RAW_PH_LONG, as a letter is */
		return p + 3;
	}
	struct pt_jslice s;
	p = str_slice(c, p, &s);
	if (!p)
		return NULL;
	size_t n = PT_JSL_LEN(s);
	const char *sp = (s.len & PT_JSL_SIDE) ? c->side->strs.p + s.off : c->base + s.off;
	if (n == 1 && (uint8_t)sp[0] > PT_RAW_PH_LONG)
		*out = (uint8_t)sp[0];
	else
		*out = is_ph ? PT_RAW_PH_LONG : (n ? (uint8_t)sp[0] : 0);
	return p;
}

#define KEY_IS(k, kl, lit) ((kl) == sizeof(lit) - 1 && memcmp((k), (lit), sizeof(lit) - 1) == 0)

/* A numeric argument; anything else is skipped quietly. */
static const char *arg_num(struct pctx *c, const char *p, int64_t *out, uint32_t bit)
{
	if (!(*p == '-' || is_digit(*p)))
		return skip(c, p);
	int nf = 0;
	p = num_i64(c, p, out, &nf);
	if (p && !nf)
		c->ev->have |= bit;
	return p;
}

/* A count (bytes, samples): negative ones count as 0; a value that is no
 * integer leaves out and the have bit as they were. */
static const char *arg_count(struct pctx *c, const char *p, uint64_t *out, uint32_t bit)
{
	if (!(*p == '-' || is_digit(*p)))
		return skip(c, p);
	int nf = 0;
	int64_t v = 0;
	p = num_i64(c, p, &v, &nf);
	if (p && !nf) {
		c->ev->have |= bit;
		*out = v > 0 ? (uint64_t)v : 0;
	}
	return p;
}

/* A value of any kind kept as raw JSON text (an array of shapes). */
static const char *arg_raw(struct pctx *c, const char *p, struct pt_jslice *s, uint32_t bit)
{
	const char *e = skip(c, p);
	if (e && *p == '[' && e - p < 0x7fffffff) {
		s->off = (uint32_t)(p - c->base);
		s->len = (uint32_t)(e - p);
		c->ev->have |= bit;
	}
	return e;
}

static const char *arg_str(struct pctx *c, const char *p, struct pt_jslice *s, uint32_t bit)
{
	if (*p != '"')
		return skip(c, p);
	p = str_slice(c, p, s);
	if (p)
		c->ev->have |= bit;
	return p;
}

/* Reads a key at p (on '"'), then the ':' and whitespace; k and kl give the key
 * (unescaped into kbuf when needed). Returns the value's first byte. */
PT_JSON_INLINE const char *read_key(struct pctx *c, const char *p, const char **k, size_t *kl,
				    char *kbuf, size_t kcap)
{
	if (p >= c->end || *p != '"') {
		c->err->at = p;
		c->err->msg = p >= c->end ? "unexpected end of object" : "expected a string key";
		return NULL;
	}
	int esc = 0;
	const char *bad = NULL;
	const char *e = pt_json_str_end_fast(p + 1, c->end, &esc, &bad);
	if (!e) {
		c->err->at = bad ? bad : p;
		c->err->msg = bad ? "invalid escape in string" : "unterminated string";
		return NULL;
	}
	*k = p + 1;
	*kl = (size_t)(e - p - 1);
	if (esc) {
		struct pt_buf b = {0};
		pt_json_unescape(p + 1, *kl, &b);
		*kl = b.len < kcap ? b.len : kcap;
		memcpy(kbuf, b.p, *kl);
		pt_buf_free(&b);
		*k = kbuf;
	}
	p = pt_json_ws(e + 1, c->end);
	if (p >= c->end || *p != ':') {
		c->err->at = p;
		c->err->msg = "expected ':'";
		return NULL;
	}
	p = pt_json_ws(p + 1, c->end);
	if (p >= c->end) {
		c->err->at = p;
		c->err->msg = "unexpected end of object";
		return NULL;
	}
	return p;
}

/* After a member: ',' (returns next key start) or the closing brace. */
PT_JSON_INLINE const char *next_member(struct pctx *c, const char *p, int *done)
{
	p = pt_json_ws(p, c->end);
	if (p < c->end && *p == ',')
		return pt_json_ws(p + 1, c->end);
	if (p < c->end && *p == '}') {
		*done = 1;
		return p + 1;
	}
	c->err->at = p;
	c->err->msg = "expected ',' or '}'";
	return NULL;
}

static const char *parse_args(struct pctx *c, const char *p)
{
	struct pt_raw_event *ev = c->ev;
	char kbuf[64];
	p = pt_json_ws(p + 1, c->end);
	if (p < c->end && *p == '}')
		return p + 1;
	for (;;) {
		const char *k;
		size_t kl;
		p = read_key(c, p, &k, &kl, kbuf, sizeof kbuf);
		if (!p)
			return NULL;
		switch (kl) {
		case 4:
			if (KEY_IS(k, kl, "name"))
				p = arg_str(c, p, &ev->arg_name, PT_RAW_ARGNAME);
			else
				p = skip(c, p);
			break;
		case 5:
			if (KEY_IS(k, kl, "bytes")) {
				p = arg_count(c, p, &ev->bytes, PT_RAW_BYTES);
			} else if (KEY_IS(k, kl, "flops")) {
				p = arg_num(c, p, &ev->flops, PT_RAW_FLOPS);
			} else if (KEY_IS(k, kl, "dtype")) {
				p = arg_num(c, p, &ev->dtype, PT_RAW_DTYPE);
			} else {
				p = skip(c, p);
			}
			break;
		case 6:
			if (KEY_IS(k, kl, "device"))
				p = arg_num(c, p, &ev->device, PT_RAW_DEVICE);
			else if (KEY_IS(k, kl, "stream"))
				p = arg_num(c, p, &ev->stream, PT_RAW_STREAM);
			else if (KEY_IS(k, kl, "labels"))
				p = arg_str(c, p, &ev->arg_labels, PT_RAW_LABELS);
			else
				p = skip(c, p);
			break;
		case 7:
			if (KEY_IS(k, kl, "samples")) {
				p = arg_count(c, p, &ev->samples, PT_RAW_SAMPLES);
			} else {
				p = skip(c, p);
			}
			break;
		case 8:
			if (KEY_IS(k, kl, "grid_dim"))
				ev->have |= PT_RAW_DEV_HINT;
			p = skip(c, p);
			break;
		case 9:
			if (KEY_IS(k, kl, "block_dim") || KEY_IS(k, kl, "Task Type"))
				ev->have |= PT_RAW_DEV_HINT;
			p = skip(c, p);
			break;
		case 10:
			if (KEY_IS(k, kl, "sort_index"))
				p = arg_num(c, p, &ev->sort_index, PT_RAW_SORT);
			else if (KEY_IS(k, kl, "Input Dims"))
				p = arg_raw(c, p, &ev->arg_dims, PT_RAW_DIMS);
			else if (KEY_IS(k, kl, "Input type"))
				p = arg_raw(c, p, &ev->arg_types, PT_RAW_TYPES);
			else
				p = skip(c, p);
			break;
		case 11:
			if (KEY_IS(k, kl, "correlation")) {
				int64_t corr = 0;
				p = arg_num(c, p, &corr, 0);
				ev->corr = (uint32_t)(uint64_t)corr;
			} else if (KEY_IS(k, kl, "num_samples")) {
				p = arg_count(c, p, &ev->samples, PT_RAW_SAMPLES);
			} else {
				p = skip(c, p);
			}
			break;
		case 15:
			if (KEY_IS(k, kl, "Concrete Inputs"))
				p = arg_raw(c, p, &ev->arg_conc, PT_RAW_CONC);
			else
				p = skip(c, p);
			break;
		default:
			p = skip(c, p);
			break;
		}
		if (!p)
			return NULL;
		int done = 0;
		p = next_member(c, p, &done);
		if (!p || done)
			return p;
	}
}

/* Second walk over args for a "C" event: every numeric member is a series. */
static int parse_counters(struct pctx *c, const char *p)
{
	struct pt_raw_event *ev = c->ev;
	struct pt_json_side *sd = c->side;
	char kbuf[64];
	ev->ctr_first = sd->nctr;
	p = pt_json_ws(p + 1, c->end);
	if (p < c->end && *p == '}')
		return 0;
	for (;;) {
		const char *k;
		size_t kl;
		const char *ks = p;
		p = read_key(c, p, &k, &kl, kbuf, sizeof kbuf);
		if (!p)
			return -1;
		if (*p == '-' || is_digit(*p) || *p == 'N' || *p == 'I') {
			int nf = 0;
			const char *e = pt_json_num_end(p, c->end, &nf);
			if (!e) {
				c->err->at = p;
				c->err->msg = "expected a value";
				return -1;
			}
			if (nf) {
				set_warn(ev, PT_WARN_NONFINITE);
			} else {
				if (sd->nctr == sd->ctr_cap) {
					sd->ctr_cap = sd->ctr_cap ? sd->ctr_cap * 2 : 64;
					sd->ctr =
					    pt_xrealloc(sd->ctr, sd->ctr_cap * sizeof *sd->ctr);
				}
				struct pt_jcounter *jc = &sd->ctr[sd->nctr++];
				if (str_slice(c, ks, &jc->key) == NULL)
					return -1;
				jc->value = pt_json_num_double(p, e);
				ev->nctr++;
			}
			p = e;
		} else {
			p = skip(c, p);
			if (!p)
				return -1;
		}
		int done = 0;
		p = next_member(c, p, &done);
		if (!p)
			return -1;
		if (done)
			return 0;
	}
}

/* The event's keys the parser reads. */
enum ev_key { K_OTHER, K_S, K_PH, K_TS, K_ID, K_BP, K_PID, K_TID, K_CAT, K_DUR, K_NAME, K_ARGS };

/* A key read whole (k, kl: unescaped) to its enum. */
static enum ev_key key_of(const char *k, size_t kl)
{
	switch (kl) {
	case 1:
		return k[0] == 's' ? K_S : K_OTHER;
	case 2:
		return KEY_IS(k, kl, "ph")   ? K_PH
		       : KEY_IS(k, kl, "ts") ? K_TS
		       : KEY_IS(k, kl, "id") ? K_ID
		       : KEY_IS(k, kl, "bp") ? K_BP
					     : K_OTHER;
	case 3:
		return KEY_IS(k, kl, "pid")   ? K_PID
		       : KEY_IS(k, kl, "tid") ? K_TID
		       : KEY_IS(k, kl, "cat") ? K_CAT
		       : KEY_IS(k, kl, "dur") ? K_DUR
					      : K_OTHER;
	case 4:
		return KEY_IS(k, kl, "name") ? K_NAME : KEY_IS(k, kl, "args") ? K_ARGS : K_OTHER;
	default:
		return K_OTHER;
	}
}

/*
 * The common case of a key, from the 8 bytes at p (on its '"'): one of the
 * keys above written plainly and followed at once by ':' ("ts": ...). The
 * key's enum, *len the bytes up to and with the ':'; K_OTHER when it is not
 * so (another key, an escape, space before the ':'): read_key decides.
 */
PT_JSON_INLINE enum ev_key key_fast(uint64_t w, size_t *len)
{
	/* little-endian: the quote is the lowest byte; lit: the key's bytes */
#define KEY_W(lit, n) ((w & ((~0ull) >> (64 - 8 * (n)))) == (lit))
	switch ((uint8_t)(w >> 8)) {
	case 'p':
		if (KEY_W(0x3a22687022ull, 5)) /* "ph": */
			return *len = 5, K_PH;
		if (KEY_W(0x3a2264697022ull, 6)) /* "pid": */
			return *len = 6, K_PID;
		break;
	case 't':
		if (KEY_W(0x3a22737422ull, 5)) /* "ts": */
			return *len = 5, K_TS;
		if (KEY_W(0x3a2264697422ull, 6)) /* "tid": */
			return *len = 6, K_TID;
		break;
	case 'c':
		if (KEY_W(0x3a2274616322ull, 6)) /* "cat": */
			return *len = 6, K_CAT;
		break;
	case 'd':
		if (KEY_W(0x3a2272756422ull, 6)) /* "dur": */
			return *len = 6, K_DUR;
		break;
	case 'n':
		if (KEY_W(0x3a22656d616e22ull, 7)) /* "name": */
			return *len = 7, K_NAME;
		break;
	case 'a':
		if (KEY_W(0x3a227367726122ull, 7)) /* "args": */
			return *len = 7, K_ARGS;
		break;
	case 'i':
		if (KEY_W(0x3a22646922ull, 5)) /* "id": */
			return *len = 5, K_ID;
		break;
	case 'b':
		if (KEY_W(0x3a22706222ull, 5)) /* "bp": */
			return *len = 5, K_BP;
		break;
	case 's':
		if (KEY_W(0x3a227322ull, 4)) /* "s": */
			return *len = 4, K_S;
		break;
	}
#undef KEY_W
	return K_OTHER;
}

int pt_json_parse_event(const char *base, const char *p, const char *end, struct pt_raw_event *ev,
			struct pt_json_side *side, struct pt_json_err *err)
{
	struct pctx c = {base, end, ev, side, err};
	const char *args = NULL;
	char kbuf[64];
	memset(ev, 0, PT_RAW_HOT_BYTES); /* the rest counts only under its have bit */
	p = pt_json_ws(p + 1, end);
	if (p < end && *p == '}') {
		p++;
		goto done;
	}
	for (;;) {
		enum ev_key key = K_OTHER;
		size_t klen = 0;
		if (end - p >= 8) {
			uint64_t w;
			memcpy(&w, p, 8);
			key = key_fast(w, &klen);
		}
		if (key != K_OTHER) {
			p = pt_json_ws(p + klen, end);
			if (p >= end) {
				err->at = p;
				err->msg = "unexpected end of object";
				return -1;
			}
		} else {
			const char *k;
			size_t kl;
			p = read_key(&c, p, &k, &kl, kbuf, sizeof kbuf);
			if (!p)
				return -1;
			key = key_of(k, kl);
		}
		switch (key) {
		case K_S:
			p = letter_value(&c, p, &ev->scope, 0);
			break;
		case K_PH:
			p = letter_value(&c, p, &ev->ph, 1);
			break;
		case K_TS:
			p = time_value(&c, p, &ev->ts_ns, PT_RAW_TS);
			break;
		case K_ID:
			ev->id = 0; /* null */
			p = id_value(&c, p, &ev->id, &ev->id_s, PT_RAW_ID_STR);
			ev->have |= PT_RAW_ID;
			break;
		case K_BP:
			p = letter_value(&c, p, &ev->bp, 0);
			break;
		case K_PID:
			p = id_value(&c, p, &ev->pid, &ev->pid_s, PT_RAW_PID_STR);
			break;
		case K_TID:
			p = id_value(&c, p, &ev->tid, &ev->tid_s, PT_RAW_TID_STR);
			break;
		case K_CAT:
			if (*p == '"') {
				p = str_slice(&c, p, &ev->cat);
				ev->have |= PT_RAW_CAT;
			} else {
				p = skip(&c, p);
			}
			break;
		case K_DUR:
			p = time_value(&c, p, &ev->dur_ns, PT_RAW_DUR);
			break;
		case K_NAME:
			if (*p == '"') {
				p = str_slice(&c, p, &ev->name);
				ev->have |= PT_RAW_NAME;
			} else {
				if (*p != 'n')
					set_warn(ev, PT_WARN_BAD_EVENT);
				p = skip(&c, p);
			}
			break;
		case K_ARGS:
			if (*p == '{') {
				args = p;
				p = parse_args(&c, p);
			} else {
				p = skip(&c, p);
			}
			break;
		default:
			p = skip(&c, p);
			break;
		}
		if (!p)
			return -1;
		int fin = 0;
		p = next_member(&c, p, &fin);
		if (!p)
			return -1;
		if (fin)
			break;
	}
done:
	if (p != end) {
		err->at = p;
		err->msg = "unexpected data after an event object";
		return -1;
	}
	if (ev->ph == 'C' && args && parse_counters(&c, args) < 0)
		return -1;
	return 0;
}
