/*
 * test_probe_harm.c - the probe never blocks or harms its process (docs/reliability.md,
 * promise 1), white-box with libproftop.so's objects linked in: names are
 * interned without locks (threads racing on the same new names all get one
 * id per name; a signal handler interning while its own thread is half-way
 * through interning cannot deadlock) and a session that never held an event
 * is removed when its process exits, while one with events stays readable.
 * tests/e2e/test_harm.sh covers the same ground from outside.
 */
#include "testutil.h"

#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../backends/probe_int.h"
#include "proftop/proftop.h"

#define G pt_probe_g
static char g_dir[] = "/tmp/proftop-test-harm.XXXXXX";
static const char *g_self = "/proc/self/exe";

__attribute__((constructor(101))) static void test_env(void)
{
	if (getenv("PT_TEST_CHILD"))
		return;
	if (!mkdtemp(g_dir))
		abort();
	setenv("PROFTOP_SESSION_DIR", g_dir, 1);
	setenv("PROFTOP_RINGS", "4", 1);
	setenv("PROFTOP_RING_SLOTS", "64", 1);
	setenv("PROFTOP_STRINGS_BYTES", "4194304", 1);
	unsetenv("PROFTOP_DISABLE");
}

static const char *content(uint32_t off)
{
	const struct pt_shm_str *e = (const void *)(G.strings + off);
	return e->bytes;
}

#define RACE_THREADS 4
#define RACE_NAMES 2000
static uint32_t g_ids[RACE_THREADS][RACE_NAMES];
static pthread_barrier_t g_start;

static void *racer(void *arg)
{
	int k = (int)(size_t)arg;
	char name[32];
	pthread_barrier_wait(&g_start);
	for (int j = 0; j < RACE_NAMES; j++) {
		/* every thread walks the same names from a different starting point,
		 * and the first two from the same one, to collide on first sight */
		int i = (j + (k / 2) * (RACE_NAMES / 2)) % RACE_NAMES;
		snprintf(name, sizeof name, "race_%d", i);
		g_ids[k][i] = proftop_name(name);
	}
	return NULL;
}

static void test_intern_race(void **state)
{
	pthread_t th[RACE_THREADS];
	pthread_barrier_init(&g_start, NULL, RACE_THREADS);
	for (int k = 0; k < RACE_THREADS; k++)
		assert_int_equal(pthread_create(&th[k], NULL, racer, (void *)(size_t)k), 0);
	for (int k = 0; k < RACE_THREADS; k++)
		pthread_join(th[k], NULL);
	pthread_barrier_destroy(&g_start);
	char name[32];
	for (int i = 0; i < RACE_NAMES; i++) {
		snprintf(name, sizeof name, "race_%d", i);
		assert_int_not_equal(g_ids[0][i], 0);
		for (int k = 1; k < RACE_THREADS; k++)
			assert_int_equal(g_ids[k][i], g_ids[0][i]);
		assert_string_equal(content(g_ids[0][i]), name);
		assert_int_equal(proftop_name(name), g_ids[0][i]); /* and later lookups agree */
	}
}

#define SIG_NAMES 4096
static char g_sig_names[SIG_NAMES][24];
static uint32_t g_sig_ids[SIG_NAMES];
static volatile sig_atomic_t g_sig_next;
static volatile uint64_t g_progress;

static void on_alarm(int sig)
{
	int k = g_sig_next;
	if (k < SIG_NAMES) {
		g_sig_next = k + 1;
		g_sig_ids[k] = proftop_name(g_sig_names[k]);
	}
}

/* A thread that ends the test (instead of hanging `make check`) if the main
 * thread stops making progress: a deadlock in the handler. */
static void *watchdog(void *arg)
{
	sigset_t m; /* the timer's signals go to the main thread */
	sigemptyset(&m);
	sigaddset(&m, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &m, NULL);
	uint64_t last = 0;
	for (int quiet = 0; quiet < 20;) {
		struct timespec ts = {0, 500000000};
		nanosleep(&ts, NULL);
		if (__atomic_load_n((int *)arg, __ATOMIC_ACQUIRE))
			return NULL;
		uint64_t p = g_progress;
		quiet = p == last ? quiet + 1 : 0;
		last = p;
	}
	fprintf(stderr, "test_probe_harm: no progress for 10 s: deadlock in the signal handler\n");
	_exit(3);
}

static void test_intern_from_signal_handler(void **state)
{
	for (int i = 0; i < SIG_NAMES; i++)
		snprintf(g_sig_names[i], sizeof g_sig_names[i], "sig_%d", i);
	int done = 0;
	pthread_t wd;
	assert_int_equal(pthread_create(&wd, NULL, watchdog, &done), 0);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 50}, {0, 50}};
	setitimer(ITIMER_REAL, &it, NULL);
	char name[32];
	uint64_t end = pt_clock_mono_ns() + 300000000ull;
	/* keep inserting (the slow path) while the area has room for the handler's names */
	uint64_t room = G.strings_bytes - (uint64_t)SIG_NAMES * 32;
	for (unsigned long n = 0; pt_clock_mono_ns() < end && g_sig_next < SIG_NAMES &&
				  __atomic_load_n(&G.hdr->strings_used, __ATOMIC_RELAXED) < room;
	     n++) {
		snprintf(name, sizeof name, "main_%lu", n);
		proftop_name(name);
		g_progress = n;
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_IGN); /* one may still be pending (valgrind delivers late) */
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	pthread_join(wd, NULL);
	print_message("# %d names interned from the handler\n", (int)g_sig_next);
	assert_true(g_sig_next > 0);
	for (int i = 0; i < g_sig_next; i++) {
		if (g_sig_ids[i] == 0)
			continue; /* string area full: counted, not a failure */
		assert_string_equal(content(g_sig_ids[i]), g_sig_names[i]);
		assert_int_equal(proftop_name(g_sig_names[i]), g_sig_ids[i]);
	}
}

/* Runs this binary as a child with MODE; returns the session path of the child. */
static void run_child(const char *mode, char *path, size_t len)
{
	pid_t pid = fork();
	if (pid == 0) {
		setenv("PT_TEST_CHILD", "1", 1);
		execl(g_self, "test_probe_harm", mode, (char *)NULL);
		_exit(99);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	snprintf(path, len, "%s/%d.session", g_dir, (int)pid);
}

static void test_empty_session_removed(void **state)
{
	char path[1200];
	run_child("--quiet", path, sizeof path);
	assert_int_not_equal(access(path, F_OK), 0);
	run_child("--one-range", path, sizeof path);
	assert_int_equal(access(path, F_OK), 0); /* an exited session with events stays */
	unlink(path);
	run_child("--reader", path, sizeof path);
	assert_int_equal(access(path, F_OK), 0); /* and so does one a reader attached to */
	unlink(path);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--quiet") == 0)
		return proftop_enabled() ? 0 : 1;
	if (argc > 1 && strcmp(argv[1], "--one-range") == 0) {
		proftop_range_push("one");
		proftop_range_pop();
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "--reader") == 0) {
		__atomic_store_n(&G.hdr->reader_heartbeat_ns, pt_clock_mono_ns(), __ATOMIC_RELEASE);
		return 0;
	}
	if (strchr(argv[0], '/'))
		g_self = argv[0];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intern_race),
		cmocka_unit_test(test_intern_from_signal_handler),
		cmocka_unit_test(test_empty_session_removed),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
	if (system(cmd) != 0)
		rc |= 1;
	return rc;
}
