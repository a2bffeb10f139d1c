/*
 * harm_sig.c - signals against the probe, for tests/e2e/test_harm.sh.
 *
 *   harm_sig exit [THREADS]  threads push ranges (new names now and then)
 *                            until a signal ends the process: SIGTERM's
 *                            handler calls exit(3), SIGUSR1's pushes and pops
 *                            a range first, then calls exit(4). Prints
 *                            "ready" once every thread has pushed; exits 0
 *                            after 20 s if no signal came (the test then fails).
 *   harm_sig reenter [SECS]  the main thread interns new names without pause
 *                            while a 50 us interval timer's handler pushes
 *                            ranges with names never seen before: a probe
 *                            that takes a lock to intern a name deadlocks
 *                            when the handler interrupts the holder. Exits 0.
 *
 * Linked weakly like the examples: it runs with and without libproftop.so.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <proftop/proftop.h>

#define HANDLER_NAMES 8192

static atomic_int g_ready;
static char g_handler_names[HANDLER_NAMES][24];
static volatile sig_atomic_t g_next_name;
static volatile sig_atomic_t g_ticks;

static void on_term(int sig)
{
	(void)sig;
	exit(3);
}

static void on_usr1(int sig)
{
	(void)sig;
	PROFTOP_RANGE_PUSH("in_handler");
	PROFTOP_RANGE_POP();
	exit(4);
}

static void *pusher(void *arg)
{
	unsigned id = (unsigned)(size_t)arg;
	char name[48];
	for (unsigned long i = 0;; i++) {
		/* mostly known names, a new one every 64 ranges (takes the slow path) */
		if (i % 64 == 0)
			snprintf(name, sizeof name, "t%u_n%lu", id, i / 64);
		PROFTOP_RANGE_PUSH(name);
		PROFTOP_OP_PUSH("inner");
		PROFTOP_OP_POP();
		PROFTOP_RANGE_POP();
		if (i % 256 == 0)
			PROFTOP_STEP(1);
		if (i == 100)
			atomic_fetch_add(&g_ready, 1);
	}
	return NULL;
}

static int mode_exit(int nthreads)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	for (int i = 0; i < nthreads; i++) {
		pthread_t th;
		if (pthread_create(&th, NULL, pusher, (void *)(size_t)i) != 0) {
			fprintf(stderr, "harm_sig: cannot start thread %d\n", i);
			return 1;
		}
		pthread_detach(th);
	}
	while (atomic_load(&g_ready) < nthreads)
		usleep(1000);
	printf("ready\n");
	fflush(stdout);
	/* the main thread pushes too: the signal may land on any thread */
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned long i = 0;; i++) {
		PROFTOP_RANGE_PUSH("main_range");
		PROFTOP_RANGE_POP();
		if (i % 4096 == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec > 20)
				break;
		}
	}
	fprintf(stderr, "harm_sig: no signal came\n");
	return 0;
}

static void on_alarm(int sig)
{
	(void)sig;
	int k = g_next_name;
	if (k < HANDLER_NAMES) {
		g_next_name = k + 1;
		PROFTOP_RANGE_PUSH(g_handler_names[k]);
		PROFTOP_RANGE_POP();
	}
	g_ticks = g_ticks + 1;
}

static int mode_reenter(double secs)
{
	for (int i = 0; i < HANDLER_NAMES; i++)
		snprintf(g_handler_names[i], sizeof g_handler_names[i], "sig_name_%d", i);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 50}, {0, 50}};
	setitimer(ITIMER_REAL, &it, NULL);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	char name[48];
	unsigned long n = 0;
	for (;; n++) {
		snprintf(name, sizeof name, "main_name_%lu", n);
		if (proftop_name)
			proftop_name(name);
		PROFTOP_RANGE_PUSH(name);
		PROFTOP_RANGE_POP();
		if (n % 1024 == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9 > secs)
				break;
		}
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("harm_sig: reenter done names=%lu ticks=%d handler_names=%d\n", n, (int)g_ticks,
	       (int)g_next_name);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *mode = argc > 1 ? argv[1] : "exit";
	if (strcmp(mode, "exit") == 0)
		return mode_exit(argc > 2 ? atoi(argv[2]) : 4);
	if (strcmp(mode, "reenter") == 0)
		return mode_reenter(argc > 2 ? atof(argv[2]) : 2.0);
	fprintf(stderr, "usage: harm_sig exit [THREADS] | reenter [SECS]\n");
	return 2;
}
