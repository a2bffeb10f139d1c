/*
 * test_json_split.c - the object splitter (pt_json_split_scan) against a
 * byte-at-a-time reference, on random objects full of strings, escapes,
 * braces inside strings and nesting, fed in random pieces so every block
 * boundary (64-byte fast path, 16-byte path, escapes straddling them) is
 * crossed in and out of strings.
 */
#include "testutil.h"

#include "json_scan.h"

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

static void test_split_random(void **state)
{
	(void)state;
	uint64_t seed = 0x5eed;
	for (int round = 0; round < 3000; round++) {
		struct pt_buf b = {0};
		pt_buf_putc(&b, '{');
		unsigned n = (unsigned)(rng(&seed) % 8);
		for (unsigned i = 0; i < n; i++) {
			if (i)
				pt_buf_putc(&b, ',');
			pt_buf_printf(&b, "\"key%u\":", i);
			gen_value(&b, &seed, 0);
		}
		pt_buf_putc(&b, '}');
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_split_random),
	    cmocka_unit_test(test_split_long_strings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
