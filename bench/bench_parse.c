/*
 * bench_parse.c - raw throughput of the Chrome-trace reader: loads FILE
 * (plain or gzip) REPEAT times with the given thread count and prints the
 * event count, warnings and MB/s of uncompressed JSON text (median run),
 * and the cores the reader kept busy (process CPU time over wall time).
 *
 *   build/bench/bench_parse FILE [THREADS [REPEAT]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "proftop/chrome.h"
#include "proftop/error.h"
#include "model/util.h"

/* Uncompressed size of the file's text (gzip or not). */
static size_t text_bytes(const char *path)
{
	gzFile g = gzopen(path, "rb");
	if (!g)
		return 0;
	static char buf[1 << 16];
	size_t total = 0;
	int n;
	while ((n = gzread(g, buf, sizeof buf)) > 0)
		total += (size_t)n;
	gzclose(g);
	return total;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE [THREADS [REPEAT]]\n", argv[0]);
		return 2;
	}
	struct pt_read_opts o;
	memset(&o, 0, sizeof o);
	o.threads = argc > 2 ? atoi(argv[2]) : 0;
	int repeat = argc > 3 ? atoi(argv[3]) : 3;
	size_t bytes = text_bytes(argv[1]);
	if (repeat < 1 || repeat > 99)
		repeat = 3;
	double walls[99], cores[99];
	uint64_t events = 0, warns = 0;
	for (int i = 0; i < repeat; i++) {
		struct pt_trace *t = pt_trace_new(0);
		char err[512];
		struct timespec c0, c1;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
		uint64_t t0 = pt_now_ns();
		int rc = pt_chrome_read(t, argv[1], &o, err, sizeof err);
		double s = (double)(pt_now_ns() - t0) / 1e9;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
		if (rc < 0) {
			fprintf(stderr, "%s\n", err);
			pt_trace_free(t);
			return 1;
		}
		walls[i] = s;
		cores[i] = ((double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9) / s;
		events = t->events_seen;
		warns = pt_trace_warn_total(t);
		pt_trace_free(t);
	}
	qsort(walls, (size_t)repeat, sizeof walls[0], dcmp);
	qsort(cores, (size_t)repeat, sizeof cores[0], dcmp);
	double med = walls[repeat / 2];
	printf("%s: threads=%d text=%.1f MB events=%llu warnings=%llu median=%.3f s  %.0f MB/s  "
	       "cores %.2f (median of %d)\n",
	       argv[1], o.threads, (double)bytes / 1e6, (unsigned long long)events,
	       (unsigned long long)warns, med, (double)bytes / 1e6 / med, cores[repeat / 2], repeat);
	return 0;
}
