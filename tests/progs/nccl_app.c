/*
 * nccl_app.c - a training job of several ranks whose all-reduces go through
 * a stand-in for NCCL, for tests/e2e/test_nccl.sh. It loads the profiler
 * plugin the way NCCL does (NCCL_PROFILER_PLUGIN names the library; the
 * newest of ncclProfiler_v6, _v5, _v4 it exports), calls init for its
 * communicator "world", and for every collective calls the plugin as NCCL
 * does: the Coll event on the enqueuing thread, the kernel's two channels
 * on a proxy thread, with a GPU timer that runs OFFSET_NS behind
 * CLOCK_MONOTONIC (so proftop must move it to its own clock).
 *
 *   RANK=r WORLD_SIZE=n nccl_app --sync FILE [--steps N] [--late-rank R]
 *        [--late-ms M] [--hang-rank R --hang-at S --hang-s T] [--max-version V]
 *
 * --max-version V: look for no interface newer than ncclProfiler_vV (an
 * older NCCL).
 *
 * The "GPU": a rank's kernel starts when it enqueues (its arrival) and ends
 * 1 ms after the last rank arrived, which each rank learns from FILE, a
 * shared table of every rank's arrival at every step (CLOCK_MONOTONIC ns).
 * Each step: 1 ms in its Dataloader phase (the late rank: M ms more) and
 * 3 ms of Forward, then an all-reduce of 1 Mi floats, waited for. The late rank can instead
 * sleep T s before step S (a hang). Ends with
 *   RESULT rank=r steps=N plugin=vK skew_ms=X
 * where X is the mean of the last arrival less the first over the steps,
 * from FILE (rank 0 prints it; the others print 0).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <proftop/proftop.h>

#include "../../backends/probe_nccl.h"

#define MAX_RANKS 8
#define MAX_STEPS 1000
#define OFFSET_NS 7000000000ll /* the GPU timer is 7 s behind */

static int64_t *arrive; /* [rank][step], shared between the ranks */
static int rank, world;

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void busy_ms(double ms)
{
	uint64_t end = mono() + (uint64_t)(ms * 1e6);
	while (mono() < end)
		;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
	nanosleep(&ts, NULL);
}

static int64_t *slot(int r, int step)
{
	return &arrive[r * MAX_STEPS + step];
}

/* the plugin, whichever version it gave */
static int ver;
static const struct pt_nccl_profiler_v5 *p5;
static const struct pt_nccl_profiler_v4 *p4;
static void *ctx;

static void *start(int type, void *parent, const union pt_nccl_descr_body *u)
{
	void *h = NULL;
	if (ver >= 5) {
		struct pt_nccl_descr_v5 d = {(uint64_t)type, parent, rank, *u};
		p5->start_event(ctx, &h, &d);
	} else if (ver == 4) {
		struct pt_nccl_descr_v4 d = {(uint8_t)type, parent, rank, *u};
		p4->start_event(ctx, &h, &d);
	}
	return h;
}

static void stop(void *h)
{
	if (ver >= 5)
		p5->stop_event(h);
	else if (ver == 4)
		p4->stop_event(h);
}

static void channel_stopped(void *h, uint64_t gpu_ns)
{
	union pt_nccl_state_args a;
	memset(&a, 0, sizeof a);
	a.kernel_ch.ptimer = gpu_ns;
	if (ver >= 5)
		p5->record_event_state(h, PT_NCCL_STATE_KERNEL_CH_STOP, &a);
	else if (ver == 4)
		p4->record_event_state(h, PT_NCCL_STATE_KERNEL_CH_STOP, &a);
}

/* the proxy thread: one operation at a time */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static void *pending_op;
static int pending_step = -1, done_step = -1, quit;

static void *proxy(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&mu);
		while (pending_step < 0 && !quit)
			pthread_cond_wait(&cv, &mu);
		if (quit && pending_step < 0) {
			pthread_mutex_unlock(&mu);
			return NULL;
		}
		void *op = pending_op;
		int s = pending_step;
		pthread_mutex_unlock(&mu);
		/* the kernel starts at this rank's arrival; the host sees it a bit later */
		int64_t mine = *slot(rank, s);
		void *ch[2];
		for (int c = 0; c < 2; c++) {
			union pt_nccl_descr_body u;
			memset(&u, 0, sizeof u);
			u.kernel_ch.channel = (uint8_t)c;
			u.kernel_ch.ptimer = (uint64_t)(mine - OFFSET_NS);
			ch[c] = op ? start(PT_NCCL_EV_KERNEL_CH, op, &u) : NULL;
		}
		/* ends 1 ms after the last rank arrived */
		int64_t last = 0;
		for (int r = 0; r < world; r++) {
			int64_t t;
			while (!(t = __atomic_load_n(slot(r, s), __ATOMIC_ACQUIRE)))
				sleep_ns(100000);
			if (t > last)
				last = t;
		}
		int64_t end = last + 1000000;
		int64_t now = (int64_t)mono();
		if (end > now)
			sleep_ns((uint64_t)(end - now));
		for (int c = 0; c < 2; c++) {
			if (!ch[c])
				continue;
			channel_stopped(ch[c], (uint64_t)(end - OFFSET_NS));
			stop(ch[c]);
		}
		pthread_mutex_lock(&mu);
		pending_step = -1;
		done_step = s;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
	}
}

static void load_plugin(int max_version)
{
	const char *path = getenv("NCCL_PROFILER_PLUGIN");
	if (!path || !*path)
		return;
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "nccl_app: %s\n", dlerror());
		return;
	}
	int mask = 0;
	if (max_version >= 6 && (p5 = dlsym(lib, "ncclProfiler_v6")))
		ver = 6;
	else if (max_version >= 5 && (p5 = dlsym(lib, "ncclProfiler_v5")))
		ver = 5;
	else if (max_version >= 4 && (p4 = dlsym(lib, "ncclProfiler_v4")))
		ver = 4;
	if (ver >= 5 && p5->init(&ctx, 0xfeedull, &mask, "world", 1, world, rank, NULL) != 0)
		ver = 0;
	if (ver == 4 && p4->init(&ctx, &mask, "world", 0xfeedull, 1, world, rank, NULL) != 0)
		ver = 0;
	if (ver && !(mask & PT_NCCL_EV_COLL))
		fprintf(stderr, "nccl_app: the plugin asks for no collectives (mask %#x)\n", mask);
}

int main(int argc, char **argv)
{
	const char *sync = NULL;
	int steps = 20, late_rank = -1, hang_rank = -1, hang_at = -1, max_version = 6;
	double late_ms = 0, hang_s = 0;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--sync"))
			sync = argv[i + 1];
		else if (!strcmp(argv[i], "--steps"))
			steps = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--late-rank"))
			late_rank = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--late-ms"))
			late_ms = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--hang-rank"))
			hang_rank = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--hang-at"))
			hang_at = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--hang-s"))
			hang_s = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--max-version"))
			max_version = atoi(argv[i + 1]);
	}
	rank = getenv("RANK") ? atoi(getenv("RANK")) : 0;
	world = getenv("WORLD_SIZE") ? atoi(getenv("WORLD_SIZE")) : 1;
	if (!sync || steps < 1 || steps > MAX_STEPS || world < 1 || world > MAX_RANKS ||
	    rank < 0 || rank >= world) {
		fprintf(stderr, "usage: RANK=r WORLD_SIZE=n nccl_app --sync FILE [--steps N] ...\n");
		return 2;
	}
	size_t bytes = sizeof(int64_t) * MAX_RANKS * MAX_STEPS;
	int fd = open(sync, O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0 ||
	    (arrive = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		perror("nccl_app: sync file");
		return 1;
	}
	close(fd);
	load_plugin(max_version);
	pthread_t th;
	pthread_create(&th, NULL, proxy, NULL);
	if (proftop_step_begin)
		proftop_step_begin();
	for (int s = 0; s < steps; s++) {
		PROFTOP_PHASE_PUSH(PROFTOP_PHASE_DATALOADER);
		if (rank == hang_rank && s == hang_at) {
			printf("HANG rank=%d step=%d t_ns=%llu\n", rank, s, (unsigned long long)mono());
			fflush(stdout);
			sleep_ns((uint64_t)(hang_s * 1e9));
		}
		busy_ms(rank == late_rank ? 1 + late_ms : 1);
		PROFTOP_PHASE_POP();
		PROFTOP_PHASE_PUSH(PROFTOP_PHASE_FORWARD);
		busy_ms(3);
		PROFTOP_PHASE_POP();
		union pt_nccl_descr_body u;
		memset(&u, 0, sizeof u);
		u.coll.seq = (uint64_t)s;
		u.coll.func = "AllReduce";
		u.coll.count = 1 << 20;
		u.coll.datatype = "ncclFloat32";
		u.coll.nchannels = 2;
		void *op = start(PT_NCCL_EV_COLL, NULL, &u);
		__atomic_store_n(slot(rank, s), (int64_t)mono(), __ATOMIC_RELEASE);
		stop(op); /* enqueued */
		pthread_mutex_lock(&mu);
		pending_op = op;
		pending_step = s;
		pthread_cond_broadcast(&cv);
		while (done_step != s) /* the stream synchronized */
			pthread_cond_wait(&cv, &mu);
		pthread_mutex_unlock(&mu);
		PROFTOP_STEP(0);
	}
	pthread_mutex_lock(&mu);
	quit = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(th, NULL);
	double skew = 0;
	if (rank == 0) {
		for (int s = 0; s < steps; s++) {
			int64_t lo = INT64_MAX, hi = 0;
			for (int r = 0; r < world; r++) {
				int64_t t = *slot(r, s);
				lo = t < lo ? t : lo;
				hi = t > hi ? t : hi;
			}
			skew += (double)(hi - lo) / 1e6;
		}
		skew /= steps;
	}
	if (ver && ver >= 5)
		p5->finalize(ctx);
	else if (ver == 4)
		p4->finalize(ctx);
	printf("RESULT rank=%d steps=%d plugin=v%d skew_ms=%.3f\n", rank, steps, ver, skew);
	return 0;
}
