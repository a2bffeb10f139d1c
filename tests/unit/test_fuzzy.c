/*
 * test_fuzzy.c - the fuzzy matcher: ranking order (exact prefix over word
 * start over scattered), ties, smart case, empty and non-matching patterns,
 * exact highlight positions, UTF-8 names (byte offsets), very long names
 * and patterns (bounded time), and, over random names, that the reported
 * positions are a real alignment scoring what the matcher says and never
 * worse than the leftmost one.
 */
#include "testutil.h"

#include <time.h>

#include "proftop/fuzzy.h"

static size_t rank(const char *pat, const char *const *names, size_t n, uint32_t *out)
{
	size_t lens[64];
	for (size_t i = 0; i < n; i++)
		lens[i] = strlen(names[i]);
	return pt_fuzzy_rank(pat, strlen(pat), names, lens, n, out);
}

static int match(const char *pat, const char *name, struct pt_fuzzy_match *m)
{
	return pt_fuzzy_match(pat, strlen(pat), name, strlen(name), m);
}

static void assert_pos(const struct pt_fuzzy_match *m, const uint16_t *want, size_t n)
{
	assert_int_equal(m->npos, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(m->pos[i], want[i]);
}

static void test_header_example(void **state)
{
	const char *names[] = {"aten::max_pool2d_with_mem", "aten::mm"};
	uint32_t out[2];
	assert_int_equal(rank("mm", names, 2, out), 2);
	assert_int_equal(out[0], 1);
	assert_int_equal(out[1], 0);
	struct pt_fuzzy_match m;
	assert_true(match("mm", "aten::mm", &m));
	assert_pos(&m, (const uint16_t[]){6, 7}, 2);
}

static void test_prefix_wordstart_scattered(void **state)
{
	/* lengths chosen so "shorter first" would give the opposite order */
	const char *names[] = {"xcxoxnxv", "aten::conv", "conv2d_forward"};
	uint32_t out[3];
	assert_int_equal(rank("conv", names, 3, out), 3);
	assert_int_equal(out[0], 2);
	assert_int_equal(out[1], 1);
	assert_int_equal(out[2], 0);
	struct pt_fuzzy_match a, b, c;
	assert_true(match("conv", names[2], &a));
	assert_true(match("conv", names[1], &b));
	assert_true(match("conv", names[0], &c));
	assert_true(a.score > b.score);
	assert_true(b.score > c.score);
	/* camelCase and '<' '(' starts beat mid-word letters */
	assert_true(match("kar", "ncclKernel_AllReduce_Sum", &a));
	assert_pos(&a, (const uint16_t[]){4, 11, 14}, 3);
}

static void test_ties(void **state)
{
	const char *names[] = {"ab_xyz", "ab_x", "abc2", "abc1"};
	uint32_t out[4];
	assert_int_equal(rank("ab", names, 4, out), 4);
	/* same score: shorter first, then the caller's order */
	assert_int_equal(out[0], 1);
	assert_int_equal(out[1], 2);
	assert_int_equal(out[2], 3);
	assert_int_equal(out[3], 0);
}

static void test_smart_case(void **state)
{
	struct pt_fuzzy_match m;
	assert_true(match("mm", "aten::MM", &m));
	assert_false(match("MM", "aten::mm", &m));
	assert_true(match("Conv", "Conv2d", &m));
	assert_false(match("Conv", "conv2d", &m));
	assert_true(match("AR", "ncclKernel_AllReduce", &m));
	assert_pos(&m, (const uint16_t[]){11, 14}, 2);
}

static void test_empty_and_no_match(void **state)
{
	struct pt_fuzzy_match m;
	memset(&m, 0xff, sizeof m);
	assert_true(match("", "anything", &m));
	assert_int_equal(m.score, 0);
	assert_int_equal(m.npos, 0);
	assert_true(match("", "", NULL));
	assert_false(match("xyz", "aten::mm", &m));
	assert_false(match("mmm", "mm", &m)); /* longer than the name */
	assert_false(match("a", "", &m));
	const char *names[] = {"b", "a", "c"};
	uint32_t out[3];
	assert_int_equal(rank("", names, 3, out), 3); /* all, caller's order */
	assert_int_equal(out[0], 0);
	assert_int_equal(out[2], 2);
	assert_int_equal(rank("zz", names, 3, out), 0);
	assert_int_equal(rank("a", names, 0, out), 0);
}

static void test_best_alignment_not_leftmost(void **state)
{
	struct pt_fuzzy_match m;
	assert_true(match("ab", "a_xxxxxx_ab", &m));
	assert_pos(&m, (const uint16_t[]){9, 10}, 2);
	assert_true(match("cudnn", "void cudnn::detail::implicit_convolve_sgemm", &m));
	assert_pos(&m, (const uint16_t[]){5, 6, 7, 8, 9}, 5);
	assert_true(match("sgemm", "void cudnn::detail::implicit_convolve_sgemm<float>", &m));
	assert_pos(&m, (const uint16_t[]){38, 39, 40, 41, 42}, 5);
	assert_true(match("float", "gemm<float, 512>(float*)", &m));
	assert_pos(&m, (const uint16_t[]){5, 6, 7, 8, 9}, 5);
}

static void test_utf8(void **state)
{
	struct pt_fuzzy_match m;
	const char *name = "gr\xc3\xb6\xc3\x9f" "e_kernel"; /* größe_kernel */
	assert_true(match("ke", name, &m));
	assert_pos(&m, (const uint16_t[]){8, 9}, 2);
	assert_true(match("\xc3\xb6", name, &m)); /* ö: both bytes */
	assert_pos(&m, (const uint16_t[]){2, 3}, 2);
	/* no folding outside ASCII: Ö does not match ö, and turns on case */
	assert_false(match("\xc3\x96", name, &m));
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void test_long_names(void **state)
{
	size_t n = 10000;
	char *name = malloc(n + 1);
	for (size_t i = 0; i < n; i++)
		name[i] = "abcdefgh_xyz"[i % 12];
	name[n] = 0;
	memcpy(name + n - 8, "aten::mm", 8);
	struct pt_fuzzy_match m;
	double t0 = now_ms();
	for (int r = 0; r < 100; r++) {
		assert_true(pt_fuzzy_match("atmm", 4, name, n, &m));
		assert_true(pt_fuzzy_match("ahz", 3, name, n, &m));
		assert_false(pt_fuzzy_match("q", 1, name, n, &m));
	}
	double ms = (now_ms() - t0) / 100;
	print_message("3 matches over a 10,000-byte name: %.3f ms\n", ms);
	assert_true(ms < 5.0); /* bounded: a few passes over the name */
	assert_true(pt_fuzzy_match("atmm", 4, name, n, &m));
	for (int i = 1; i < m.npos; i++)
		assert_true(m.pos[i] > m.pos[i - 1]);
	assert_pos(&m, (const uint16_t[]){9992, 9993, 9998, 9999}, 4);
	/* a pattern longer than PT_FUZZY_MAX_POS: matched, first 64 reported */
	char pat[101];
	for (int i = 0; i < 100; i++)
		pat[i] = "abcdefgh_xyz"[i % 12];
	pat[100] = 0;
	assert_true(pt_fuzzy_match(pat, 100, name, n, &m));
	assert_int_equal(m.npos, PT_FUZZY_MAX_POS);
	for (int i = 0; i < m.npos; i++)
		assert_int_equal((unsigned char)name[m.pos[i]], (unsigned char)pat[i]);
	for (int i = 1; i < m.npos; i++)
		assert_true(m.pos[i] > m.pos[i - 1]);
	free(name);
}

/* The scoring rule written out again, to price an alignment independently. */
static int cls(unsigned char c)
{
	if (c >= 'a' && c <= 'z')
		return 2;
	if (c >= 'A' && c <= 'Z')
		return 3;
	if (c >= '0' && c <= '9')
		return 4;
	return strchr("_:./ <(", c) && c ? 1 : 0;
}

static int bonus(const char *s, size_t j)
{
	int c = cls((unsigned char)s[j]);
	if (c == 1)
		return 8;
	if (j == 0)
		return 10;
	int p = cls((unsigned char)s[j - 1]);
	if (p == 1)
		return 8;
	if ((p == 2 && c == 3) || ((p == 2 || p == 3) && c == 4))
		return 7;
	return 0;
}

static int price(const char *s, const uint16_t *pos, size_t m)
{
	int score = 0, run = 0;
	for (size_t i = 0; i < m; i++) {
		int b = bonus(s, pos[i]);
		if (i == 0) {
			score += 16 + 2 * b;
			run = b;
		} else if (pos[i] == pos[i - 1] + 1) {
			if (b >= 8 && b > run)
				run = b;
			int cb = b > run ? b : run;
			score += 16 + (cb > 4 ? cb : 4);
		} else {
			score += -3 - (pos[i] - pos[i - 1] - 2) + 16 + b;
			run = b;
		}
	}
	return score;
}

static void test_random_alignments(void **state)
{
	uint64_t x = 12345;
	char name[48], pat[6];
	const char alpha[] = "abAB_:c.d";
	for (int r = 0; r < 20000; r++) {
		size_t n = 1 + r % 40, m = 1 + r % 5;
		for (size_t i = 0; i < n; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			name[i] = alpha[(x >> 33) % 9];
		}
		name[n] = 0;
		for (size_t i = 0; i < m; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			pat[i] = "abc_:"[(x >> 33) % 5];
		}
		pat[m] = 0;
		struct pt_fuzzy_match fm;
		if (!pt_fuzzy_match(pat, m, name, n, &fm))
			continue;
		assert_int_equal(fm.npos, m);
		for (size_t i = 0; i < m; i++) {
			char c = name[fm.pos[i]];
			if (c >= 'A' && c <= 'Z')
				c = (char)(c | 0x20);
			assert_int_equal(c, pat[i]);
			if (i)
				assert_true(fm.pos[i] > fm.pos[i - 1]);
		}
		assert_int_equal(price(name, fm.pos, m), fm.score);
		/* never worse than the leftmost alignment */
		uint16_t left[8];
		size_t k = 0;
		for (size_t j = 0; j < n && k < m; j++) {
			char c = name[j];
			if (c >= 'A' && c <= 'Z')
				c = (char)(c | 0x20);
			if (c == pat[k])
				left[k++] = (uint16_t)j;
		}
		assert_int_equal(k, m);
		assert_true(fm.score >= price(name, left, m));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_example),
		cmocka_unit_test(test_prefix_wordstart_scattered),
		cmocka_unit_test(test_ties),
		cmocka_unit_test(test_smart_case),
		cmocka_unit_test(test_empty_and_no_match),
		cmocka_unit_test(test_best_alignment_not_leftmost),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_long_names),
		cmocka_unit_test(test_random_alignments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
