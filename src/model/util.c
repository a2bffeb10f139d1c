/*
 * util.c - allocation that aborts on exhaustion, hashing, byte buffers and
 * escaping of untrusted names (terminal and JSON).
 */
#include "model/util.h"

#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <time.h>

#include "proftop/error.h"

static void oom(size_t n)
{
	fprintf(stderr, "proftop: out of memory (allocating %zu bytes)\n", n);
	abort();
}

/*
 * Large blocks (the store's logs, the aggregator's tables, a reader's
 * batches) are asked to be backed by transparent huge pages: one page fault
 * per 2 MiB instead of 512. In a VM a 4 KiB fault costs several
 * microseconds, and an import's first touches of fresh memory were a tenth
 * of its CPU time, most of it in the serial summary after the read. malloc
 * maps such blocks on their own (M_MMAP_THRESHOLD), so the advice covers
 * only them; a kernel without THP ignores it.
 *
 * Except where the kernel hands free memory back to its hypervisor (a VM
 * whose virtio balloon has free page reporting): it reports free blocks of
 * 2 MiB and more, so a huge page nearly always comes from memory the host
 * has taken back and each first touch waits for the host to supply it
 * again, while small pages come from the fragments freed lately, which it
 * never reported. There an import
 * of a 242 MB trace took 0.39-0.41 s with huge pages and 0.27-0.30 s
 * without (after 5 s idle; docs/benchmarks.md), so proftop asks for none.
 */
#define HUGE_MIN ((size_t)4 << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)

int pt_balloon_reports(const char *features)
{
	/* one '0' or '1' per feature bit, bit 0 first (virtio's sysfs file) */
	enum { VIRTIO_BALLOON_F_REPORTING = 5 };
	return strlen(features) > VIRTIO_BALLOON_F_REPORTING &&
	       features[VIRTIO_BALLOON_F_REPORTING] == '1';
}

int pt_host_reclaims_free(const char *driver_dir)
{
	DIR *d = opendir(driver_dir);
	if (!d)
		return 0;
	int yes = 0;
	struct dirent *de;
	while (!yes && (de = readdir(d))) {
		if (strncmp(de->d_name, "virtio", 6) != 0)
			continue;
		char path[512], buf[160];
		snprintf(path, sizeof path, "%s/%s/features", driver_dir, de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof buf, f))
			yes = pt_balloon_reports(buf);
		fclose(f);
	}
	closedir(d);
	return yes;
}

static int huge_pays = -1; /* -1 until huge_decide() ran */
static pthread_once_t huge_once = PTHREAD_ONCE_INIT;

static void huge_decide(void)
{
	huge_pays = !pt_host_reclaims_free("/sys/bus/virtio/drivers/virtio_balloon");
}

int pt_mem_huge_pays(void)
{
	pthread_once(&huge_once, huge_decide);
	return huge_pays;
}

void *pt_mem_huge(void *p, size_t n)
{
	if (n >= HUGE_MIN && pt_mem_huge_pays()) {
		uintptr_t a = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
		uintptr_t e = ((uintptr_t)p + n) & ~(HUGE_PAGE - 1);
		if (e > a)
			madvise((void *)a, e - a, MADV_HUGEPAGE);
	}
	return p;
}

/*
 * The heap (malloc's main arena) too, once pt_mem_tune asked: it then grows
 * in steps of HEAP_STEP, and each step is advised when a wrapper below sees
 * the break move (sbrk(0) reads glibc's cached break: no system call).
 * glibc's own glibc.malloc.hugetlb=1 does the same, but only from the
 * environment at start. A race between threads advises a range twice.
 */
#define HEAP_STEP ((size_t)64 << 20)
static int heap_huge;
static uintptr_t heap_advised; /* the break as last advised, 2 MiB aligned down */

void pt_mem_tune(void)
{
	mallopt(M_TOP_PAD, (int)HEAP_STEP);
	/* one arena: the reader's threads allocate once per batch, and their
	 * own arenas (mapped apart, never advised) faulted 4 KiB at a time */
	mallopt(M_ARENA_MAX, 1);
	heap_advised = (uintptr_t)sbrk(0) & ~(HUGE_PAGE - 1);
	heap_huge = pt_mem_huge_pays();
}

static void heap_advise(void)
{
	uintptr_t done = __atomic_load_n(&heap_advised, __ATOMIC_RELAXED);
	uintptr_t brk = (uintptr_t)sbrk(0) & ~(HUGE_PAGE - 1);
	if (brk == done)
		return;
	if (brk > done)
		madvise((void *)done, brk - done, MADV_HUGEPAGE);
	/* trimmed: what grows again is advised from there */
	__atomic_store_n(&heap_advised, brk, __ATOMIC_RELAXED);
}

void *pt_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	if (heap_huge)
		heap_advise();
	return pt_mem_huge(p, n);
}

void *pt_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	if (heap_huge)
		heap_advise();
	return pt_mem_huge(p, n * size);
}

void *pt_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	if (heap_huge)
		heap_advise();
	return pt_mem_huge(q, n);
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

struct apart {
	void *(*fn)(void *);
	void *arg;
	int reset;     /* started apart: the caller's CPUs given back once running */
	cpu_set_t all; /* the caller's CPUs */
};

static void *apart_main(void *v)
{
	struct apart a = *(struct apart *)v;
	free(v);
	if (a.reset)
		pthread_setaffinity_np(pthread_self(), sizeof a.all, &a.all);
	return a.fn(a.arg);
}

int pt_thread_start_apart(pthread_t *th, void *(*fn)(void *), void *arg)
{
	struct apart *a = pt_xmalloc(sizeof *a);
	a->fn = fn;
	a->arg = arg;
	a->reset = 0;
	int cpu = sched_getcpu();
	pthread_attr_t at;
	if (cpu >= 0 && cpu < CPU_SETSIZE &&
	    pthread_getaffinity_np(pthread_self(), sizeof a->all, &a->all) == 0 &&
	    CPU_ISSET(cpu, &a->all) && CPU_COUNT(&a->all) >= 2 && pthread_attr_init(&at) == 0) {
		cpu_set_t others = a->all;
		CPU_CLR(cpu, &others);
		a->reset = pthread_attr_setaffinity_np(&at, sizeof others, &others) == 0;
		if (!a->reset)
			pthread_attr_destroy(&at);
	}
	/* else one CPU, or it cannot be told: started plainly. Once started,
	 * the thread owns a and may have freed it already */
	int apart = a->reset;
	int rc = pthread_create(th, apart ? &at : NULL, apart_main, a);
	if (apart)
		pthread_attr_destroy(&at);
	if (rc != 0)
		free(a);
	return rc;
}

uint64_t pt_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t pt_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
		return pt_now_ns();
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
 * East Asian wide and fullwidth characters and emoji take two columns;
 * combining marks and variation selectors none (Unicode's EastAsianWidth W/F
 * ranges and the emoji blocks, as wcwidth() sees them, but without the
 * locale, so the screen and its tests agree everywhere).
 */
int pt_cp_width(uint32_t cp)
{
	if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
		return -1;
	if ((cp >= 0x300 && cp < 0x370) || (cp >= 0x483 && cp <= 0x489) ||
	    (cp >= 0x591 && cp <= 0x5bd) || (cp >= 0x610 && cp <= 0x61a) ||
	    (cp >= 0x64b && cp <= 0x65f) || (cp >= 0x200b && cp <= 0x200f) ||
	    (cp >= 0x20d0 && cp <= 0x20ff) || (cp >= 0xfe00 && cp <= 0xfe0f) ||
	    (cp >= 0xfe20 && cp <= 0xfe2f) || (cp >= 0x1f3fb && cp <= 0x1f3ff) ||
	    (cp >= 0xe0100 && cp <= 0xe01ef) || cp == 0xfeff)
		return 0;
	if ((cp >= 0x1100 && cp <= 0x115f) || cp == 0x231a || cp == 0x231b || cp == 0x2329 ||
	    cp == 0x232a || (cp >= 0x23e9 && cp <= 0x23ec) || cp == 0x23f0 || cp == 0x23f3 ||
	    cp == 0x25fd || cp == 0x25fe || cp == 0x2614 || cp == 0x2615 ||
	    (cp >= 0x2648 && cp <= 0x2653) || cp == 0x267f || cp == 0x2693 || cp == 0x26a1 ||
	    cp == 0x26aa || cp == 0x26ab || cp == 0x26bd || cp == 0x26be || cp == 0x26c4 ||
	    cp == 0x26c5 || cp == 0x26ce || cp == 0x26d4 || cp == 0x26ea || cp == 0x26f2 ||
	    cp == 0x26f3 || cp == 0x26f5 || cp == 0x26fa || cp == 0x26fd || cp == 0x2705 ||
	    cp == 0x270a || cp == 0x270b || cp == 0x2728 || cp == 0x274c || cp == 0x274e ||
	    (cp >= 0x2753 && cp <= 0x2755) || cp == 0x2757 || (cp >= 0x2795 && cp <= 0x2797) ||
	    cp == 0x27b0 || cp == 0x27bf || cp == 0x2b1b || cp == 0x2b1c || cp == 0x2b50 ||
	    cp == 0x2b55 || (cp >= 0x2e80 && cp <= 0x303e) || (cp >= 0x3041 && cp <= 0x33ff) ||
	    (cp >= 0x3400 && cp <= 0x4dbf) || (cp >= 0x4e00 && cp <= 0x9fff) ||
	    (cp >= 0xa000 && cp <= 0xa4cf) || (cp >= 0xa960 && cp <= 0xa97f) ||
	    (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) ||
	    (cp >= 0xfe10 && cp <= 0xfe19) || (cp >= 0xfe30 && cp <= 0xfe6f) ||
	    (cp >= 0xff00 && cp <= 0xff60) || (cp >= 0xffe0 && cp <= 0xffe6) || cp == 0x1f004 ||
	    cp == 0x1f0cf || cp == 0x1f18e || (cp >= 0x1f191 && cp <= 0x1f19a) ||
	    (cp >= 0x1f200 && cp <= 0x1f251) || (cp >= 0x1f300 && cp <= 0x1f64f) ||
	    (cp >= 0x1f680 && cp <= 0x1f6ff) || (cp >= 0x1f7e0 && cp <= 0x1f7eb) ||
	    (cp >= 0x1f90c && cp <= 0x1f9ff) || (cp >= 0x1fa70 && cp <= 0x1faff) ||
	    (cp >= 0x20000 && cp <= 0x2fffd) || (cp >= 0x30000 && cp <= 0x3fffd))
		return 2;
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
	*cols = pt_cp_width(cp) == 2 ? 2 : 1; /* zero-width marks are drawn as '?' */
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
				/* the text \xHH, as the terminal shows the byte: two
				 * names that differ only in invalid bytes stay two
				 * (one U+FFFD for every byte merged them) */
				pt_buf_printf(b, "\\\\x%02x", c);
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

uint64_t pt_u64_kth(uint64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		uint64_t pivot = v[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				uint64_t x = v[i];
				v[i] = v[j];
				v[j] = x;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return v[k];
	}
	return v[k];
}

size_t pt_pct_index(size_t n, double p)
{
	size_t k = (size_t)ceil(p / 100.0 * (double)n);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return k - 1;
}

uint64_t pt_pct_nearest(const uint64_t *v, size_t n, double p)
{
	return v[pt_pct_index(n, p)];
}
