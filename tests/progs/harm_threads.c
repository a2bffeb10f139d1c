/*
 * harm_threads.c - more threads than the probe has rings, for
 * tests/e2e/test_harm.sh.
 *
 *   harm_threads [THREADS [WAVES]]   (defaults 200 and 2)
 *
 * Each wave starts THREADS threads that each push 100 ranges (a shared name
 * and one of their own), wait on a barrier so that all of them are alive at
 * once (far more than the default 32 rings: the rest find no ring and the
 * probe counts their events as dropped_no_ring), push 100 more, and exit.
 * The next wave starts after the previous one is joined, so the rings of
 * exited threads are handed over. Half the threads of the last wave are
 * detached and still running when main() returns. Prints
 *   harm_threads: done threads=N waves=W
 * Linked weakly like the examples: it runs with and without libproftop.so.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <proftop/proftop.h>

static pthread_barrier_t g_barrier;

static void ranges(unsigned id, int n)
{
	char own[32];
	snprintf(own, sizeof own, "thread_%u", id);
	for (int i = 0; i < n; i++) {
		PROFTOP_RANGE_PUSH("thread_range");
		PROFTOP_OP_PUSH(own);
		PROFTOP_OP_POP();
		PROFTOP_RANGE_POP();
	}
	PROFTOP_STEP(1);
	if (proftop_mark)
		proftop_mark("thread_mark");
}

static void *worker(void *arg)
{
	unsigned id = (unsigned)(size_t)arg;
	ranges(id, 100);
	pthread_barrier_wait(&g_barrier);
	ranges(id, 100);
	return NULL;
}

static void *straggler(void *arg)
{
	unsigned id = (unsigned)(size_t)arg;
	for (;;) {
		ranges(id, 10);
		usleep(100);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	int waves = argc > 2 ? atoi(argv[2]) : 2;
	if (n < 1 || n > 4096 || waves < 1) {
		fprintf(stderr, "usage: harm_threads [THREADS [WAVES]]\n");
		return 2;
	}
	pthread_t *th = calloc((size_t)n, sizeof *th);
	if (!th)
		return 1;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (int w = 0; w < waves; w++) {
		pthread_barrier_init(&g_barrier, NULL, (unsigned)n);
		for (int i = 0; i < n; i++)
			if (pthread_create(&th[i], &attr, worker, (void *)(size_t)(w * n + i)) != 0) {
				fprintf(stderr, "harm_threads: cannot start thread %d\n", i);
				return 1;
			}
		for (int i = 0; i < n; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&g_barrier);
		ranges(0, 10); /* the main thread too, after each wave */
	}
	/* threads still pushing when the process exits */
	for (int i = 0; i < 8; i++) {
		pthread_t t;
		if (pthread_create(&t, &attr, straggler, (void *)(size_t)(100000 + i)) == 0)
			pthread_detach(t);
	}
	usleep(20000);
	printf("harm_threads: done threads=%d waves=%d\n", n, waves);
	free(th);
	return 0;
}
