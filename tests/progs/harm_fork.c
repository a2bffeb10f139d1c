/*
 * harm_fork.c - fork() under the probe, for tests/e2e/test_harm.sh.
 *
 *   harm_fork [FORKS]      (default 60)
 *
 * A worker thread interns new names without pause (so the probe's slow
 * paths are busy at the moments of fork) and pushes ranges. The main thread
 * forks FORKS times; each child keeps calling the whole API (ranges with
 * new names, steps, marks, counters, proftop_name) - a probe must turn these
 * into no-ops there, never write into the parent's rings and never wait on
 * a lock the parent's other thread held at the fork - forks a grandchild
 * every few rounds that exec's this program again ("leaf": the probe starts
 * afresh in the new image) or /bin/true, then exits through _exit() on even
 * rounds and exit() on odd ones, with status 7. The parent pushes exactly one
 * "parent_fork" range per fork and checks every child's status. Prints
 *   harm_fork: done forks=N bad=0
 * and exits 1 when a child did not exit with 7.
 * Linked weakly like the examples: it runs with and without libproftop.so.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <proftop/proftop.h>

static atomic_int g_stop;
static const char *g_self;

static void *worker(void *arg)
{
	(void)arg;
	char name[48];
	for (unsigned long i = 0; !atomic_load(&g_stop); i++) {
		snprintf(name, sizeof name, "worker_%lu", i);
		if (proftop_name)
			proftop_name(name);
		PROFTOP_RANGE_PUSH("worker_range");
		PROFTOP_RANGE_POP();
		if (i % 1000 == 0)
			usleep(50); /* leave the main thread some CPU */
	}
	return NULL;
}

static void use_api(const char *tag, int n)
{
	char name[48];
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof name, "%s_%d", tag, i);
		PROFTOP_RANGE_PUSH(name);
		PROFTOP_OP_PUSH("child_op");
		PROFTOP_OP_POP();
		PROFTOP_RANGE_POP();
		if (proftop_name)
			proftop_name(name);
		if (proftop_mark)
			proftop_mark(name);
		if (proftop_counter)
			proftop_counter("child_counter", i);
		PROFTOP_STEP(1);
	}
}

static int grandchild(int round)
{
	pid_t g = fork();
	if (g < 0)
		return -1;
	if (g == 0) {
		if (round % 2 == 0)
			execl(g_self, g_self, "leaf", (char *)NULL);
		else
			execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	int st = 0;
	while (waitpid(g, &st, 0) < 0)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void child(int round)
{
	use_api("child_range", 50);
	if (round % 5 == 0 && grandchild(round / 5) != 0)
		_exit(9);
	use_api("child_after", 10);
	if (round % 2 == 0)
		_exit(7);
	exit(7);
}

int main(int argc, char **argv)
{
	g_self = argv[0];
	if (argc > 1 && strcmp(argv[1], "leaf") == 0) {
		use_api("leaf_range", 20);
		return 0;
	}
	int forks = argc > 1 ? atoi(argv[1]) : 60;
	setvbuf(stdout, NULL, _IOLBF, 0);
	pthread_t th;
	if (pthread_create(&th, NULL, worker, NULL) != 0)
		return 1;
	int bad = 0;
	for (int i = 0; i < forks; i++) {
		PROFTOP_RANGE_PUSH("parent_fork");
		pid_t pid = fork();
		if (pid < 0) {
			perror("harm_fork: fork");
			bad++;
			PROFTOP_RANGE_POP();
			continue;
		}
		if (pid == 0)
			child(i);
		PROFTOP_RANGE_POP();
		int st = 0;
		while (waitpid(pid, &st, 0) < 0)
			;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 7) {
			fprintf(stderr, "harm_fork: child %d: %s %d\n", i,
				WIFEXITED(st) ? "exit" : "signal",
				WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			bad++;
		}
	}
	atomic_store(&g_stop, 1);
	pthread_join(th, NULL);
	printf("harm_fork: done forks=%d bad=%d\n", forks, bad);
	return bad ? 1 : 0;
}
