/*
 * test_json_split.c - the object splitter (pt_json_split_scan) against a
 * byte-at-a-time reference, on random objects full of strings, escapes,
 * braces inside strings and nesting, fed in random pieces so every block
 * boundary (64-byte fast path, 16-byte path, escapes straddling them) is
 * crossed in and out of strings; its run form (pt_json_split_run) on
 * arrays of such objects.
 */
#include "testutil.h"

#include "import/json_scan.h"

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Appends a random JSON value (depth-limited) to b. */
static void gen_value(struct pt_buf *b, uint64_t *s, int depth)
{
	static const char *pieces[] = {"a",   "{",   "}",	"[",   "]",  "\\\"", "\\\\",
				       "\\n", "x y", "\\u00e9", "}}}", "{{", ":",    ","};
	unsigned r = (unsigned)(rng(s) % 10);
	if (depth > 3)
		r = 0;
	if (r < 4) { /* a string with specials inside */
		pt_buf_putc(b, '"');
		unsigned n = (unsigned)(rng(s) % 12);
		for (unsigned i = 0; i < n; i++) {
			const char *p = pieces[rng(s) % (sizeof pieces / sizeof pieces[0])];
			pt_buf_put(b, p, strlen(p));
		}
		pt_buf_putc(b, '"');
	} else if (r < 6) {
		pt_buf_printf(b, "%llu.%03u", (unsigned long long)(rng(s) % 100000000),
			      (unsigned)(rng(s) % 1000));
	} else if (r < 8) { /* an object */
		pt_buf_putc(b, '{');
		unsigned n = (unsigned)(rng(s) % 6);
		for (unsigned i = 0; i < n; i++) {
			if (i)
				pt_buf_putc(b, ',');
			pt_buf_printf(b, "\"k%u\":", i);
			gen_value(b, s, depth + 1);
		}
		pt_buf_putc(b, '}');
	} else { /* an array */
		pt_buf_putc(b, '[');
		unsigned n = (unsigned)(rng(s) % 5);
		for (unsigned i = 0; i < n; i++) {
			if (i)
				pt_buf_putc(b, ',');
			gen_value(b, s, depth + 1);
		}
		pt_buf_putc(b, ']');
	}
}

/* Where the object starting at p[0] == '{' ends (index past its '}'). */
static size_t ref_end(const char *p, size_t n)
{
	int in_str = 0, esc = 0;
	size_t depth = 0;
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (in_str) {
			if (esc)
				esc = 0;
			else if (c == '\\')
				esc = 1;
			else if (c == '"')
				in_str = 0;
			continue;
		}
		if (c == '"')
			in_str = 1;
		else if (c == '{')
			depth++;
		else if (c == '}' && --depth == 0)
			return i + 1;
	}
	return (size_t)-1;
}

/* Appends a random object of fewer than maxn members (gen_value's kinds
 * inside); no backslash when plain. */
static void gen_object(struct pt_buf *b, uint64_t *s, int plain, unsigned maxn)
{
	size_t at = b->len;
	pt_buf_putc(b, '{');
	unsigned n = (unsigned)(rng(s) % maxn);
	for (unsigned i = 0; i < n; i++) {
		if (i)
			pt_buf_putc(b, ',');
		pt_buf_printf(b, "\"key%u\":", i);
		gen_value(b, s, 0);
	}
	pt_buf_putc(b, '}');
	if (plain) /* escapes out (each with its escaped byte): no block stops the run */
		for (size_t i = at; i < b->len; i++)
			if (b->p[i] == '\\') {
				b->p[i] = 'e';
				b->p[++i] = 'e';
			}
}

static void test_split_random(void **state)
{
	(void)state;
	uint64_t seed = 0x5eed;
	for (int round = 0; round < 3000; round++) {
		struct pt_buf b = {0};
		gen_object(&b, &seed, 0, 8);
		size_t obj = b.len;
		pt_buf_put(&b, ",{\"next\":1}  ", 13); /* what follows must not matter */
		size_t want = ref_end(b.p, b.len);
		assert_int_equal(want, obj);
		/* in random pieces */
		struct pt_json_split sp = {0, 0, 0};
		size_t at = 0, got = PT_JSON_SPLIT_MORE;
		while (at < b.len) {
			size_t piece = (size_t)(rng(&seed) % 150) + 1;
			if (piece > b.len - at)
				piece = b.len - at;
			size_t k = pt_json_split_scan(&sp, b.p + at, piece);
			if (k != PT_JSON_SPLIT_MORE) {
				got = at + k;
				break;
			}
			at += piece;
		}
		assert_int_equal(got, want);
		/* and whole */
		struct pt_json_split sp2 = {0, 0, 0};
		assert_int_equal(pt_json_split_scan(&sp2, b.p, b.len), want);
		pt_buf_free(&b);
	}
}

/* Long strings full of braces, so 64-byte blocks start and end inside
 * them, with and without escapes. */
static void test_split_long_strings(void **state)
{
	(void)state;
	for (int esc = 0; esc < 2; esc++) {
		for (size_t len = 50; len < 300; len += 7) {
			struct pt_buf b = {0};
			pt_buf_put(&b, "{\"a\":\"", 6);
			for (size_t i = 0; i < len; i++) {
				if (esc && i % 37 == 5)
					pt_buf_put(&b, "\\\"", 2);
				else
					pt_buf_putc(&b, "{}x"[i % 3]);
			}
			pt_buf_put(&b, "\",\"b\":{\"c\":\"}\"}}", 16);
			size_t want = ref_end(b.p, b.len);
			assert_int_equal(want, b.len);
			for (size_t cut = 1; cut < b.len; cut += 13) {
				struct pt_json_split sp = {0, 0, 0};
				size_t k = pt_json_split_scan(&sp, b.p, cut);
				assert_true(k == PT_JSON_SPLIT_MORE);
				k = pt_json_split_scan(&sp, b.p + cut, b.len - cut);
				assert_int_equal(cut + k, want);
			}
			pt_buf_free(&b);
		}
	}
}

/*
 * pt_json_split_run on arrays of random objects (strings full of braces,
 * nesting, escapes or none, separators with and without whitespace, now
 * and then something that is no object, or the array's end): every object
 * it takes is the next one the byte-at-a-time reference finds, with its
 * exact bounds, and it takes all of them up to the first it must leave to
 * the caller (an escape in the block, the last full 64-byte block, the
 * end of the run, max).
 */
static void test_split_run(void **state)
{
	(void)state;
	static const char *const seps[] = {",", ", ", "\n,", ",\n", " \t,\r\n "};
	uint64_t seed = 0xfeed;
	for (int round = 0; round < 4000; round++) {
		int plain = rng(&seed) % 3 != 0;
		struct pt_buf b = {0};
		size_t begin[64], end[64];
		unsigned nobj = 1 + (unsigned)(rng(&seed) % 40), k;
		for (k = 0; k < nobj; k++) {
			if (k) {
				const char *sep = seps[rng(&seed) % 5];
				pt_buf_put(&b, sep, strlen(sep));
			}
			begin[k] = b.len;
			gen_object(&b, &seed, plain, 6);
			end[k] = b.len;
			assert_int_equal(ref_end(b.p + begin[k], b.len - begin[k]),
					 end[k] - begin[k]);
		}
		/* what ends the run: the array, another kind of element, more text */
		static const char *const tails[] = {"]",	",1,{}", "  ]}",  ",\"x\"",
						    ",{\"a\":", ",,{}",	 ",[{}]", ""};
		const char *tail = tails[rng(&seed) % 8];
		pt_buf_put(&b, tail, strlen(tail));
		size_t max = rng(&seed) % 4 ? 64 : 1 + rng(&seed) % 8;
		uint32_t base = (uint32_t)(rng(&seed) % 1000);
		struct pt_json_span out[64];
		size_t got = pt_json_split_run(b.p, b.len, base, out, max);
		assert_true(got <= nobj && got <= max);
		for (size_t i = 0; i < got; i++) {
			assert_int_equal(out[i].begin, base + begin[i]);
			assert_int_equal(out[i].end, base + end[i]);
		}
		/* with no escape, it stops only where it must */
		size_t full = b.len / 64 * 64; /* its last full block ends there */
		size_t want = 0;
		while (want < nobj && want < max && end[want] <= full) {
			want++;
			if (want < nobj && begin[want] >= full)
				break; /* the next '{' lies past the blocks: fine either way */
		}
		if (plain)
			assert_true(got >= want);
		pt_buf_free(&b);
	}
}

/* A random number token, often malformed: signs, leading zeros, long digit
 * runs (past int64 and past 16 integer digits), fractions of any length,
 * exponents, bare '-' or '.', NaN / Infinity. */
static void gen_number(struct pt_buf *b, uint64_t *s)
{
	static const char *odd[] = {"-", "-.5", ".5", "1.", "-0", "00012", "NaN", "-Infinity",
				    "Infinity", "-NaN", "1e3", "2.5E-2", "9223372036854775.807",
				    "9223372036854775.808", "9999999999999999.9995", "1.0005",
				    "159.9999964237213", "-1.0004999", "1669783687464181",
				    "1669783687464181.25", "12345678", "1234567:", "12345678/89",
				    "9999999999999999", "10000000000000000", "1234567812345678e1"};
	if (rng(s) % 8 == 0) {
		const char *o = odd[rng(s) % (sizeof odd / sizeof odd[0])];
		pt_buf_put(b, o, strlen(o));
		return;
	}
	if (rng(s) % 4 == 0)
		pt_buf_putc(b, '-');
	unsigned nd = (unsigned)(rng(s) % 22), lead = (unsigned)(rng(s) % 3 == 0);
	for (unsigned i = 0; i < nd; i++)
		pt_buf_putc(b, (char)('0' + (lead && i < 2 ? 0 : rng(s) % 10)));
	if (rng(s) % 2) {
		pt_buf_putc(b, '.');
		unsigned nf = (unsigned)(rng(s) % 9);
		for (unsigned i = 0; i < nf; i++)
			pt_buf_putc(b, (char)('0' + rng(s) % 10));
	}
	if (rng(s) % 10 == 0)
		pt_buf_printf(b, "e%d", (int)(rng(s) % 7) - 3);
}

/*
 * The event parser's one-pass number paths (ts/dur in µs, integer pid/tid)
 * against the general lexer and converter (pt_json_num_end,
 * pt_json_us_to_ns): the same value, the same "have" bits, the same
 * error, on every token; and strings short and long, with and without
 * escapes, end where pt_json_str_end says.
 */
static void test_parse_numbers_same(void **state)
{
	(void)state;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 200000; i++) {
		struct pt_buf num = {0}, ev = {0};
		gen_number(&num, &seed);
		pt_buf_putc(&num, 0);
		const char *n = num.p;
		size_t nl = strlen(n);
		int which = (int)(rng(&seed) % 3); /* ts, dur, pid */
		static const char *key[] = {"ts", "dur", "pid"};
		if (rng(&seed) % 2) /* the number last: little text after it */
			pt_buf_printf(&ev, "{\"ph\":\"X\",\"%s\":%s}", key[which], n);
		else
			pt_buf_printf(&ev, "{\"%s\":%s,\"ph\":\"X\"}", key[which], n);
		struct pt_raw_event r;
		struct pt_json_side side = {0};
		struct pt_json_err err = {0};
		int rc = pt_json_parse_event(ev.p, ev.p, ev.p + ev.len, &r, &side, &err);
		/* the general path */
		int nf = 0;
		const char *e = pt_json_num_end(n, n + nl, &nf);
		if (!e || e != n + nl) { /* not one whole token: an error either way */
			if (rc == 0)
				fail_msg("'%s' (%s) parsed", n, key[which]);
		} else if (which < 2) {
			int64_t want = 0;
			uint32_t bit = which ? PT_RAW_DUR : PT_RAW_TS;
			int ok = !nf && pt_json_us_to_ns(n, e, &want) == PT_JNUM_OK;
			assert_int_equal(rc, 0);
			if (ok != !!(r.have & bit))
				fail_msg("'%s' (%s): have %d, want %d", n, key[which], !!(r.have & bit), ok);
			if (ok && (which ? r.dur_ns : r.ts_ns) != want)
				fail_msg("'%s' (%s): %lld ns, want %lld", n, key[which],
					 (long long)(which ? r.dur_ns : r.ts_ns), (long long)want);
		} else {
			assert_int_equal(rc, 0);
			const char *d = n + (n[0] == '-');
			size_t dl = strspn(d, "0123456789");
			if (!nf && dl == strlen(d) && dl <= 18) {
				long long want = strtoll(n, NULL, 10);
				if (r.pid != want)
					fail_msg("'%s' (pid): %lld, want %lld", n, (long long)r.pid, want);
			}
		}
		pt_json_side_free(&side);
		pt_buf_free(&num);
		pt_buf_free(&ev);
	}
	/* names of every length up to 40, with an escape at every place */
	for (size_t len = 0; len < 40; len++) {
		for (size_t at = 0; at <= len; at++) {
			struct pt_buf ev = {0};
			pt_buf_put(&ev, "{\"name\":\"", 9);
			for (size_t k = 0; k < len; k++)
				pt_buf_put(&ev, k == at ? "\\n" : "a", k == at ? 2 : 1);
			pt_buf_put(&ev, "\",\"ph\":\"X\"}", 11);
			struct pt_raw_event r;
			struct pt_json_side side = {0};
			struct pt_json_err err = {0};
			assert_int_equal(pt_json_parse_event(ev.p, ev.p, ev.p + ev.len, &r, &side, &err),
					 0);
			assert_int_equal(r.ph, 'X');
			assert_int_equal(PT_JSL_LEN(r.name), len);
			assert_int_equal(!!(r.name.len & PT_JSL_SIDE), at < len);
			pt_json_side_free(&side);
			pt_buf_free(&ev);
		}
	}
}

/* A slice's text: in the event's own text or the side buffer (escaped). */
static void slice_text(const char *base, const struct pt_json_side *sd, struct pt_jslice sl,
		       struct pt_buf *out)
{
	const char *p = (sl.len & PT_JSL_SIDE) ? sd->strs.p + sl.off : base + sl.off;
	pt_buf_put(out, p, PT_JSL_LEN(sl));
	pt_buf_putc(out, 0);
}

/*
 * The event parser reads its keys written plainly ("ts":) by their first
 * bytes and any other way (a space before the ':', an escape) by reading
 * the whole key, and a one-letter value ("X") at a glance, an escaped one
 * whole: random events (known keys in any order, with values of every
 * kind, unknown keys alike in their first bytes, duplicates) give the same
 * record written both ways.
 */
static void test_parse_keys_same(void **state)
{
	(void)state;
	static const char *const keys[] = {"ph",  "cat", "name", "pid", "tid",	 "ts",	 "dur",
					   "id",  "bp",  "s",	 "args", "phx", "p",	 "names",
					   "tss", "ca",  "idx", "sb",	 "du",	 "argsx", "pi"};
	static const char *const vals[] = {"\"X\"", "\"B\"", "\"cpu_op\"", "\"aten::mm\"", "\"a\\\"b\"",
					   "7", "-3", "\"12\"", "\"str id\"", "1.5", "2000.125",
					   "null", "true", "[1,2]", "{\"External id\":3,\"correlation\":9}",
					   "{\"name\":\"t\\u00e9\",\"device\":1}", "\"\""};
	uint64_t seed = 0xabcdef;
	for (int round = 0; round < 20000; round++) {
		struct pt_buf a = {0}, b = {0};
		pt_buf_putc(&a, '{');
		pt_buf_putc(&b, '{');
		unsigned n = 1 + (unsigned)(rng(&seed) % 8);
		for (unsigned i = 0; i < n; i++) {
			const char *k = keys[rng(&seed) % (sizeof keys / sizeof *keys)];
			const char *v = vals[rng(&seed) % (sizeof vals / sizeof *vals)];
			const char *ws = rng(&seed) % 2 ? " " : "";
			pt_buf_printf(&a, "%s\"%s\":%s%s", i ? "," : "", k, ws, v);
			if (rng(&seed) % 2) /* space before the ':' */
				pt_buf_printf(&b, "%s\"%s\" :%s", i ? "," : "", k, ws);
			else /* the key's first letter escaped */
				pt_buf_printf(&b, "%s\"\\u%04x%s\":%s", i ? "," : "", (unsigned)k[0],
					      k + 1, ws);
			if (strlen(v) == 3 && v[0] == '"') /* a letter: escaped too */
				pt_buf_printf(&b, "\"\\u%04x\"", (unsigned)v[1]);
			else
				pt_buf_put(&b, v, strlen(v));
		}
		pt_buf_put(&a, "}", 1);
		pt_buf_put(&b, "}", 1);
		struct pt_raw_event ra, rb;
		struct pt_json_side sa = {0}, sb = {0};
		struct pt_json_err ea = {0}, eb = {0};
		int rca = pt_json_parse_event(a.p, a.p, a.p + a.len, &ra, &sa, &ea);
		int rcb = pt_json_parse_event(b.p, b.p, b.p + b.len, &rb, &sb, &eb);
		assert_int_equal(rca, rcb);
		if (rca == 0) {
			assert_int_equal(ra.have, rb.have);
			assert_int_equal(ra.ph, rb.ph);
			assert_int_equal(ra.bp, rb.bp);
			assert_int_equal(ra.scope, rb.scope);
			assert_int_equal(ra.warn, rb.warn);
			assert_int_equal(ra.corr, rb.corr);
			if (ra.have & PT_RAW_TS)
				assert_int_equal(ra.ts_ns, rb.ts_ns);
			if (ra.have & PT_RAW_DUR)
				assert_int_equal(ra.dur_ns, rb.dur_ns);
			assert_int_equal(ra.pid, rb.pid);
			assert_int_equal(ra.tid, rb.tid);
			if (ra.have & PT_RAW_ID)
				assert_int_equal(ra.id, rb.id);
			struct pt_buf x = {0}, y = {0};
			if (ra.have & PT_RAW_NAME) {
				slice_text(a.p, &sa, ra.name, &x);
				slice_text(b.p, &sb, rb.name, &y);
			}
			if (ra.have & PT_RAW_CAT) {
				slice_text(a.p, &sa, ra.cat, &x);
				slice_text(b.p, &sb, rb.cat, &y);
			}
			if (ra.have & PT_RAW_PID_STR) {
				slice_text(a.p, &sa, ra.pid_s, &x);
				slice_text(b.p, &sb, rb.pid_s, &y);
			}
			assert_int_equal(x.len, y.len);
			if (x.len)
				assert_memory_equal(x.p, y.p, x.len);
			pt_buf_free(&x);
			pt_buf_free(&y);
		}
		pt_json_side_free(&sa);
		pt_json_side_free(&sb);
		pt_buf_free(&a);
		pt_buf_free(&b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_split_random),
	    cmocka_unit_test(test_split_long_strings),
	    cmocka_unit_test(test_split_run),
	    cmocka_unit_test(test_parse_numbers_same),
	    cmocka_unit_test(test_parse_keys_same),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
