/*
 * json_scan.h - a fast, strict JSON tokenizer for Chrome traces: string and
 * value skipping (iterative, no recursion however deep the nesting), exact
 * microsecond-to-nanosecond number conversion, the splitter that finds where
 * each top-level event object ends in a stream of chunks, and the parser
 * that turns one event object into a compact raw record without building a
 * DOM. Strings in a raw record are slices of the caller's chunk, or of a
 * side buffer when they had to be unescaped.
 *
 * Threading: every function is reentrant; the parser writes only to the
 * record and the side buffer it is given, so workers can parse chunks in
 * parallel.
 */
#ifndef PT_JSON_SCAN_H
#define PT_JSON_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "model/util.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* A string: offset and length in the chunk, or in the side buffer when
 * PT_JSL_SIDE is set in len (it had escapes). */
struct pt_jslice {
	uint32_t off, len;
};
#define PT_JSL_SIDE   0x80000000u
#define PT_JSL_LEN(s) ((s).len & ~PT_JSL_SIDE)

/* One numeric counter value of a "C" event. */
struct pt_jcounter {
	struct pt_jslice key;
	double value;
};

/* What a parser writes besides records: unescaped strings and counters. */
struct pt_json_side {
	struct pt_buf strs;
	struct pt_jcounter *ctr;
	uint32_t nctr, ctr_cap;
};
void pt_json_side_reset(struct pt_json_side *s);
void pt_json_side_free(struct pt_json_side *s);

/* have bits of a raw record */
#define PT_RAW_TS	0x0001u
#define PT_RAW_DUR	0x0002u
#define PT_RAW_PID_STR	0x0004u
#define PT_RAW_TID_STR	0x0008u
#define PT_RAW_ID	0x0010u
#define PT_RAW_ID_STR	0x0020u
#define PT_RAW_DEVICE	0x0040u
#define PT_RAW_STREAM	0x0080u
#define PT_RAW_BYTES	0x0100u
#define PT_RAW_SAMPLES	0x0200u
#define PT_RAW_SORT	0x0400u
#define PT_RAW_ARGNAME	0x0800u
#define PT_RAW_LABELS	0x1000u
#define PT_RAW_NAME	0x2000u
#define PT_RAW_CAT	0x4000u
#define PT_RAW_DEV_HINT 0x8000u /* args look like a device task (grid, block_dim...) */
#define PT_RAW_ID_RANGE 0x10000u /* a pid/tid/id number beyond int64: kept as its text */
#define PT_RAW_DIMS	0x20000u /* "Input Dims" (raw JSON text in arg_dims) */
#define PT_RAW_TYPES	0x40000u /* "Input type" */
#define PT_RAW_CONC	0x80000u /* "Concrete Inputs" */
#define PT_RAW_FLOPS	0x100000u /* "flops" (torch's with_flops, or proftop's export) */
#define PT_RAW_DTYPE	0x200000u /* "dtype" (proftop's export: a FLOPs dtype class) */

/* ph value when "ph" was missing / not one character */
#define PT_RAW_PH_NONE 0
#define PT_RAW_PH_LONG 1

/*
 * One event object, parsed but not interpreted. ts_ns/dur_ns are exact
 * (microseconds times 1000, fractions kept, rounded to the nearest ns);
 * a negative duration stays negative so the caller can say so.
 *
 * The fields every event has come first and are zeroed for each event; the
 * rest hold a value only when their PT_RAW_* bit in have is set (id: ID or
 * ID_STR, device: DEVICE, ..., ctr_first: nctr > 0) and are garbage
 * otherwise. A parsed batch holds thousands of these on their way to another
 * thread: zeroing all 200 bytes of each cost more than parsing most events'
 * other fields.
 */
struct pt_raw_event {
	int64_t ts_ns, dur_ns;
	int64_t pid, tid;
	struct pt_jslice name, cat;
	uint32_t corr;
	uint32_t have;	   /* PT_RAW_* */
	uint8_t ph;	   /* 'X', 'B', ... or PT_RAW_PH_* */
	uint8_t bp, scope; /* first letters of "bp" and "s", 0 when absent */
	uint8_t warn;	   /* enum pt_warn + 1 when the event must be skipped */
	uint32_t nctr;
	/* valid under their have bit only */
	int64_t id;
	int64_t device, stream, sort_index;
	uint64_t bytes, samples;
	struct pt_jslice pid_s, tid_s, id_s, arg_name, arg_labels;
	/* operator input shapes, as raw JSON text in the chunk (flops.h) */
	struct pt_jslice arg_dims, arg_types, arg_conc;
	int64_t flops, dtype;
	uint32_t ctr_first; /* counters in side->ctr[ctr_first, +nctr) */
};
/* the part zeroed for each event */
#define PT_RAW_HOT_BYTES offsetof(struct pt_raw_event, id)
_Static_assert(PT_RAW_HOT_BYTES <= 64, "the fields every event has fit one cache line");

/* Where a parse failed and why (a file-level syntax error). */
struct pt_json_err {
	const char *at;
	const char *msg;
};

/* Results of converting a number's text to nanoseconds. */
enum pt_jnum_status { PT_JNUM_OK = 0, PT_JNUM_RANGE, PT_JNUM_NONFINITE };

static inline int pt_json_is_ws(char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}
static inline const char *pt_json_ws(const char *p, const char *end)
{
	while (p < end && pt_json_is_ws(*p))
		p++;
	return p;
}

/* p is just past an opening quote: returns the closing quote, or NULL if the
 * string does not end before end (or has a malformed escape; *err says). */
const char *pt_json_str_end(const char *p, const char *end, int *has_esc, const char **bad);
/* The same, inline for the common case: a string of under 16 bytes without
 * escapes (keys, most names) costs one compare and no call. */
static inline const char *pt_json_str_end_fast(const char *p, const char *end, int *has_esc,
					       const char **bad)
{
#if defined(__SSE2__)
	if (end - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(
		    _mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
		if (!m)
			return pt_json_str_end(p + 16, end, has_esc, bad);
		const char *q = p + __builtin_ctz(m);
		if (*q == '"')
			return q;
		return pt_json_str_end(q, end, has_esc, bad);
	}
#endif
	return pt_json_str_end(p, end, has_esc, bad);
}
/* The digits at q (just after a decimal point) as the nanoseconds of a
 * microsecond value: the first three digits, rounded half up on the fourth,
 * into *ns_frac (0..1000). Returns the end of the digits. */
static inline const char *pt_json_us_frac(const char *q, const char *end, uint64_t *ns_frac)
{
	uint64_t frac = 0;
	int nf = 0, round_up = 0;
	for (; q < end && *q >= '0' && *q <= '9'; q++, nf++) {
		if (nf < 3)
			frac = frac * 10 + (uint64_t)(*q - '0');
		else if (nf == 3)
			round_up = *q >= '5';
	}
	for (; nf < 3; nf++)
		frac *= 10;
	*ns_frac = frac + (uint64_t)round_up;
	return q;
}
/* Appends the unescaped form of the string body [p, p+len) (escapes already
 * validated) to out. \uXXXX surrogate pairs become one UTF-8 sequence. */
void pt_json_unescape(const char *p, size_t len, struct pt_buf *out);

/*
 * Lexes one number token (JSON syntax, plus NaN, Infinity and -Infinity).
 * Returns the end of the token or NULL if p does not start a valid number.
 */
const char *pt_json_num_end(const char *p, const char *end, int *nonfinite);
/* Number text (already lexed) to double. */
double pt_json_num_double(const char *p, const char *e);
/* Number text (already lexed) in microseconds to exact integer nanoseconds. */
enum pt_jnum_status pt_json_us_to_ns(const char *p, const char *e, int64_t *ns);

/*
 * Skips one value of any kind starting at p (after whitespace), validating
 * its syntax without recursion. Returns the first byte after it, or NULL
 * with err filled in. Nesting depth is bounded only by memory.
 */
const char *pt_json_skip_value(const char *p, const char *end, struct pt_json_err *err);

/*
 * The splitter: finds the end of one object in a stream given in pieces.
 * Start with a zeroed state positioned on the object's '{'. Returns the index
 * just past the closing '}' within buf[0, n), or PT_JSON_SPLIT_MORE when the
 * object goes on (the state remembers where it was). Does not validate: the
 * parser does.
 */
#define PT_JSON_SPLIT_MORE ((size_t)-1)
struct pt_json_split {
	uint32_t depth;
	uint8_t in_str, esc;
};
size_t pt_json_split_scan(struct pt_json_split *s, const char *buf, size_t n);

/* One object's place in a buffer: [begin, end). */
struct pt_json_span {
	uint32_t begin, end;
};
/*
 * pt_json_split_scan over a run of objects at once, each byte looked at
 * once: buf[0] is the '{' of an element of an array. Takes the objects of
 * the run "{...}, {...}, ..." (whitespace around each ','), at most max,
 * into out[] as offsets from buf plus base. Stops before an object it
 * cannot take whole: one that goes on past buf's last full 64-byte block,
 * one with a backslash in a block, and after the last object that a ','
 * and a '{' do not follow (the array's end, an element of another kind,
 * anything unexpected). Returns the objects taken: the caller's walk goes
 * on just after the last one, where a separator or the array's end comes,
 * as after an object pt_json_split_scan found. 0: the first needs that
 * walk (also where SSE2 is missing).
 */
size_t pt_json_split_run(const char *buf, size_t n, uint32_t base, struct pt_json_span *out,
			 size_t max);

/*
 * Parses the event object [p, end) (p on '{', end just past its '}');
 * base is the chunk start that slices are relative to. Returns 0, or -1 on a
 * syntax error (err filled in). Events that are valid JSON but not a usable
 * event come back with ev->warn set.
 */
int pt_json_parse_event(const char *base, const char *p, const char *end, struct pt_raw_event *ev,
			struct pt_json_side *side, struct pt_json_err *err);

#endif
