/*
 * tests/progs/gentrace.c - a fast streaming generator of Chrome traces for
 * the resource-bound tests: N tiny complete ("X") events, or as many as fill
 * a size target, written as plain JSON to a file or stdout (pipe it through
 * `gzip -1` for a compressed one). Nothing is held in memory but one output
 * buffer, so it writes gigabytes at disk speed.
 *
 *   gentrace [-n EVENTS] [-s SIZE] [-t THREADS] [-k NAMES] [-o FILE]
 *
 *   -n EVENTS   events to write (default: 1000000, or what fills -s)
 *   -s SIZE     size target in bytes (suffix K, M, G: powers of 1024). With
 *               -s alone, events are written until the file reaches SIZE;
 *               with -n too, each event is padded with an "args" string so
 *               that N events make about SIZE bytes.
 *   -t THREADS  tids the events spread over, round robin (default 4)
 *   -k NAMES    distinct event names, "k0".."k<NAMES-1>" (default 64)
 *   -o FILE     output (default stdout)
 *
 * Event i lies on tid i % THREADS at ts = i us, dur 1 us, so a thread's
 * events never overlap and the trace spans EVENTS microseconds. The last
 * line on stderr is "gentrace: events=N bytes=B".
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUT_BYTES (1u << 20)

static char g_buf[OUT_BYTES + 4096];
static size_t g_len;
static uint64_t g_written;
static FILE *g_out;

static void flush_out(void)
{
	if (g_len && fwrite(g_buf, 1, g_len, g_out) != g_len) {
		fprintf(stderr, "gentrace: write failed: %s\n", strerror(errno));
		exit(1);
	}
	g_written += g_len;
	g_len = 0;
}

static void put(const char *s, size_t n)
{
	memcpy(g_buf + g_len, s, n);
	g_len += n;
}

#define PUTS(lit) put(lit, sizeof lit - 1)

static void put_u64(uint64_t v)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		g_buf[g_len++] = tmp[--n];
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	uint64_t mul = 1;
	switch (*end) {
	case 'k': case 'K': mul = 1ull << 10; end++; break;
	case 'm': case 'M': mul = 1ull << 20; end++; break;
	case 'g': case 'G': mul = 1ull << 30; end++; break;
	default: break;
	}
	if (*end)
		return -1;
	*out = (uint64_t)v * mul;
	return 0;
}

static void usage(void)
{
	fputs("usage: gentrace [-n EVENTS] [-s SIZE] [-t THREADS] [-k NAMES] [-o FILE]\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t n = 0, size = 0, threads = 4, names = 64;
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (i + 1 >= argc || a[0] != '-' || a[1] == 0 || a[2] != 0)
			usage();
		const char *v = argv[++i];
		uint64_t x = 0;
		if (a[1] != 'o' && parse_size(v, &x))
			usage();
		switch (a[1]) {
		case 'n': n = x; break;
		case 's': size = x; break;
		case 't': threads = x ? x : 1; break;
		case 'k': names = x ? x : 1; break;
		case 'o': path = v; break;
		default: usage();
		}
	}
	int fill = size && !n; /* write until the size is reached */
	if (!n && !size)
		n = 1000000;
	g_out = path ? fopen(path, "wb") : stdout;
	if (!g_out) {
		fprintf(stderr, "gentrace: %s: %s\n", path, strerror(errno));
		return 1;
	}
	static const char head[] = "{\"traceEvents\":[\n";
	static const char tail[] = "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,"
				   "\"args\":{\"name\":\"gentrace\"}}]}\n";
	put(head, sizeof head - 1);
	/* padding per event when both -n and -s are given: the bytes beyond the
	 * plain event (about 50 bytes) go into "args":{"p":"xxx..."} */
	size_t pad = 0;
	if (size && n) {
		uint64_t per = size / n;
		pad = per > 66 ? (size_t)(per - 66) : 0;
		if (pad > 3000)
			pad = 3000;
	}
	char padbuf[3100];
	memset(padbuf, 'x', sizeof padbuf);
	uint64_t stop = fill ? size - (sizeof tail - 1) : UINT64_MAX;
	uint64_t i = 0;
	for (; fill || i < n; i++) {
		if (g_written + g_len >= stop)
			break;
		PUTS("{\"ph\":\"X\",\"name\":\"k");
		put_u64(i % names);
		PUTS("\",\"ts\":");
		put_u64(i);
		PUTS(",\"dur\":1,\"tid\":");
		put_u64(i % threads + 1);
		if (pad) {
			PUTS(",\"args\":{\"p\":\"");
			put(padbuf, pad);
			PUTS("\"}");
		}
		PUTS("},\n");
		if (g_len >= OUT_BYTES)
			flush_out();
	}
	put(tail, sizeof tail - 1);
	flush_out();
	if (path && fclose(g_out) != 0) {
		fprintf(stderr, "gentrace: %s: %s\n", path, strerror(errno));
		return 1;
	}
	fflush(stdout);
	fprintf(stderr, "gentrace: events=%llu bytes=%llu\n", (unsigned long long)i,
		(unsigned long long)g_written);
	return 0;
}
