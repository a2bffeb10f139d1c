/*
 * examples/flood.c - a load generator for the live path: threads that push
 * ranges through the C API at a fixed rate (events per second, one range is
 * one event) for a fixed time, with a step every --step-every ranges. It has
 * no training in it; it exists to show what proftop does when a process emits
 * more than it can take (drops counted, memory capped, screen responsive) and
 * to measure the probe's cost per event.
 *
 *   flood --rate 10000000 --seconds 60 --threads 2
 *
 * A thread that falls more than 2 ms behind its pace (the machine gave it
 * no CPU) goes on from where it is instead of catching up in a burst: a job
 * that was not running produced nothing meanwhile.
 *
 * Like minitrain it links the API weakly, so it runs with or without
 * libproftop.so; its last line is
 *   flood: done events=N seconds=S rate=R
 */
#include <proftop/proftop.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* how far behind its pace a thread may fall and still catch up */
#define CATCH_UP_NS 2000000ull

static double g_rate = 1e6;	/* events per second, all threads together */
static double g_seconds = 5;
static int g_threads = 1;
static uint64_t g_step_every = 10000;
static int g_names = 16;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t_ns)
{
	struct timespec ts = {(time_t)(t_ns / 1000000000ull), (long)(t_ns % 1000000000ull)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

struct worker {
	pthread_t th;
	uint64_t events;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint32_t ids[64];
	char name[32];
	int have_ids = proftop_name && proftop_range_push_id && proftop_range_pop;
	for (int i = 0; i < g_names; i++) {
		snprintf(name, sizeof(name), "flood_op_%d", i);
		ids[i] = have_ids ? proftop_name(name) : 0;
	}
	double per_thread = g_rate / g_threads;
	/* pace in batches of about a millisecond's worth (1..1000 events) */
	uint64_t batch = per_thread >= 1e6 ? 1000 : per_thread >= 1e3 ? (uint64_t)(per_thread / 1e3) : 1;
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(g_seconds * 1e9);
	uint64_t n = 0;
	for (;;) {
		for (uint64_t i = 0; i < batch; i++) {
			if (have_ids) {
				proftop_range_push_id(ids[(n + i) % (uint64_t)g_names]);
				proftop_range_pop();
			}
			if (g_step_every && (n + i + 1) % g_step_every == 0)
				PROFTOP_STEP(0);
		}
		n += batch;
		uint64_t due = t0 + (uint64_t)((double)n / per_thread * 1e9), now = now_ns();
		/* time lost to the CPU (a busy machine) is not made up in a burst:
		 * a job that was not running produced nothing meanwhile */
		if (now > due + CATCH_UP_NS) {
			t0 += now - due;
			due = now;
		}
		if (due >= end)
			break;
		if (due > now)
			sleep_until(due);
		if (now_ns() >= end)
			break;
	}
	w->events = n;
	return NULL;
}

static void usage(FILE *f)
{
	fputs("usage: flood [--rate EV_PER_S] [--seconds S] [--threads N] [--step-every N] [--names N]\n"
	      "Pushes ranges through the proftop C API at a fixed rate (one range = one event);\n"
	      "time a thread loses to a busy CPU (over 2 ms) is not made up in a burst.\n"
	      "  --rate N        events per second, all threads together (default 1000000)\n"
	      "  --seconds S     how long (default 5)\n"
	      "  --threads N     pushing threads (default 1, at most 256)\n"
	      "  --step-every N  a step after every N ranges per thread (default 10000; 0 = none)\n"
	      "  --names N       distinct range names (default 16, at most 64)\n",
	      f);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i += 2) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		}
		if (!v) {
			usage(stderr);
			return 2;
		}
		char *end;
		double d = strtod(v, &end);
		if (*end || d < 0) {
			fprintf(stderr, "flood: %s: not a number: %s\n", a, v);
			return 2;
		}
		if (!strcmp(a, "--rate"))
			g_rate = d;
		else if (!strcmp(a, "--seconds"))
			g_seconds = d;
		else if (!strcmp(a, "--threads"))
			g_threads = (int)d;
		else if (!strcmp(a, "--step-every"))
			g_step_every = (uint64_t)d;
		else if (!strcmp(a, "--names"))
			g_names = (int)d;
		else {
			usage(stderr);
			return 2;
		}
	}
	if (g_rate <= 0 || g_threads < 1 || g_threads > 256 || g_names < 1 || g_names > 64) {
		fprintf(stderr, "flood: --rate must be > 0, --threads 1..256, --names 1..64\n");
		return 2;
	}
	struct worker *w = calloc((size_t)g_threads, sizeof(*w));
	if (!w)
		return 1;
	uint64_t t0 = now_ns();
	for (int i = 0; i < g_threads; i++)
		if (pthread_create(&w[i].th, NULL, worker_main, &w[i]) != 0) {
			fprintf(stderr, "flood: cannot start thread %d\n", i);
			return 1;
		}
	uint64_t total = 0;
	for (int i = 0; i < g_threads; i++) {
		pthread_join(w[i].th, NULL);
		total += w[i].events;
	}
	double secs = (double)(now_ns() - t0) / 1e9;
	printf("flood: done events=%llu seconds=%.3f rate=%.0f\n", (unsigned long long)total, secs,
	       secs > 0 ? (double)total / secs : 0.0);
	free(w);
	return 0;
}
