/*
 * probe_cupti_flow.c - CUPTI's activity buffers from request to ring, and
 * the end of tracing.
 *
 * Delivery. CUPTI asks for buffers (pt_cupti_buf_request, on whatever
 * thread needs one) and hands them back full, or when flushed
 * (pt_cupti_buf_done); a completed buffer only goes on a queue. One probe
 * thread, "proftop-cupti", translates queued buffers into its own ring and
 * every 100 ms asks CUPTI for the buffers whose records are all complete
 * (cuptiActivityFlushAll(0); a forced flush would hand back kernels still
 * running with zero timestamps, lost for good). Buffers are sized to fill
 * in about 100 ms at the rate records arrive (16 KiB to 2 MiB), so a busy
 * job's records reach the reader within a few hundred milliseconds instead
 * of one 4 MiB buffer later. While a reader is attached, the thread waits
 * for room in its ring rather than dropping: the ring never overflows. The
 * backlog then stays with CUPTI's buffers, up to 128 MiB; past that CUPTI
 * drops records itself and counts them, and those counts land in the
 * ring's dropped counter, which the reader shows.
 *
 * Checks, once a second: the clocks (probe_cupti_clock.h) are anchored and
 * CUPTI's current clock is compared with the session clock (another
 * profiler may have replaced it); kernel records that start before their
 * launch, or on no known clock, and launches with no records coming back
 * for 10 s while the probe is not interposed (another component may have
 * taken CUPTI's buffers), become notes: "proftop: ..." marks in the
 * session, shown by the screen and the report.
 *
 * The end (pt_cupti_stop). The thread alone calls CUPTI: asked to stop, it
 * disables proftop's kinds, forces the last buffers out, translates what is
 * complete (giving an attached reader 0.5 s to make room), and never calls
 * CUPTI again. The stop runs from an atexit handler registered after
 * libcupti and libcuda were loaded (so before their teardown), from the
 * probe's _exit/_Exit (os._exit skips atexit), and from a SIGTERM handler
 * installed only where SIGTERM had its default action (it then dies by
 * SIGTERM as it would have). The caller waits at most 2 s: a thread
 * interrupted inside CUDA may hold a lock CUPTI needs, and exiting matters
 * more than the last buffer. A vfork or fork child never stops anything.
 */
#include <dlfcn.h>
#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "probe_cupti.h"

#ifdef PT_HAVE_CUDA_HEADERS

#include "probe_cupti_int.h"
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define C pt_cupti_g
#define PERIOD_NS 100000000ull         /* flush and deliver */
#define CHECK_NS 1000000000ull         /* anchors, checks, notes */
#define BUF_MIN (16u << 10)
#define BUF_MAX (2u << 20)
#define BUF_FIRST (256u << 10)
#define BYTES_OUT_MAX (128ull << 20)   /* buffers with CUPTI or queued */
#define WATCHDOG_NS (10ull * 1000000000ull)
#define FINAL_ROOM_NS 500000000ull     /* at the end, the reader's time to make room */
#define STOP_WAIT_MS 2000u
#define MAX_NOTES 16

struct qbuf {
	struct qbuf *next;
	uint8_t *buf;
	size_t size, valid;
	size_t lost; /* records CUPTI dropped for this buffer's context and stream */
	int copy;    /* a copy of another component's buffer */
};

static struct {
	pthread_mutex_t lock; /* the queue and the notes */
	struct qbuf *head, **tail;
	sem_t wake, done;
	int stop;        /* atomic: asked to stop */
	int running;     /* atomic: the thread runs */
	uint64_t bytes_out; /* atomic */
	uint32_t next_size; /* atomic */
	uint64_t completed; /* atomic: buffers CUPTI handed back */
	char notes[MAX_NOTES][240];
	unsigned nnotes;
	uint64_t notes_lost;
	/* the thread's own */
	struct pt_cupti_xlate x;
	struct pt_cupti_clock clock;
	uint64_t bytes_second, last_bytes_ns;
	int cupti_dom;        /* which clock cuptiGetTimestamp follows, -1 = another */
	uint64_t watch_calls, watch_completed, watch_ns, watch_limit_ns;
	int watch_noted;
	uint64_t noted_early, noted_unmapped, noted_late, noted_stride;
} F = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ---- notes ---- */

void pt_cupti_note(int loud, const char *fmt, ...)
{
	char text[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	if (loud)
		fprintf(stderr, "proftop: %s\n", text);
	pthread_mutex_lock(&F.lock);
	if (F.nnotes < MAX_NOTES)
		snprintf(F.notes[F.nnotes++], sizeof F.notes[0], "proftop: %s", text);
	else
		F.notes_lost++;
	pthread_mutex_unlock(&F.lock);
}

static void emit_notes(struct pt_tstate *t)
{
	char local[MAX_NOTES][240];
	pthread_mutex_lock(&F.lock);
	unsigned n = F.nnotes;
	memcpy(local, F.notes, n * sizeof local[0]);
	F.nnotes = 0;
	pthread_mutex_unlock(&F.lock);
	if (PT_TS_SPECIAL(t))
		return;
	for (unsigned i = 0; i < n; i++) {
		uint32_t name = pt_probe_intern(local[i], strlen(local[i]));
		uint64_t now = pt_clock_mono_ns();
		if (name)
			pt_probe_emit(t, now, now, 0, 0, name, PT_KIND_INSTANT, 0, 0);
	}
}

/* ---- buffers ---- */

void CUPTIAPI pt_cupti_buf_request(uint8_t **buf, size_t *size, size_t *max_recs)
{
	*buf = NULL;
	*size = 0;
	*max_recs = 0;
	if (pt_cupti_share_request(buf, size, max_recs))
		return; /* torch.profiler's window: its buffers, handed back to it */
	size_t want = __atomic_load_n(&F.next_size, __ATOMIC_RELAXED);
	if (!want)
		want = BUF_FIRST;
	if (__atomic_add_fetch(&F.bytes_out, want, __ATOMIC_RELAXED) > BYTES_OUT_MAX) {
		__atomic_sub_fetch(&F.bytes_out, want, __ATOMIC_RELAXED);
		return; /* CUPTI drops and counts: reported with the next buffer */
	}
	void *p = NULL;
	if (posix_memalign(&p, 8, want) != 0) {
		__atomic_sub_fetch(&F.bytes_out, want, __ATOMIC_RELAXED);
		return;
	}
	*buf = p;
	*size = want;
}

static void release_buf(uint8_t *buf, size_t size, int copy)
{
	if (!copy)
		__atomic_sub_fetch(&F.bytes_out, size, __ATOMIC_RELAXED);
	free(buf);
}

static void release(struct qbuf *q)
{
	release_buf(q->buf, q->size, q->copy);
	free(q);
}

static void enqueue(uint8_t *buf, size_t size, size_t valid, size_t lost, int copy)
{
	struct qbuf *q = malloc(sizeof *q);
	if (!q || !__atomic_load_n(&F.running, __ATOMIC_ACQUIRE)) {
		/* nothing left to translate it (after the end) */
		free(q);
		release_buf(buf, size, copy);
		return;
	}
	*q = (struct qbuf){NULL, buf, size, valid, lost, copy};
	pthread_mutex_lock(&F.lock);
	*F.tail = q;
	F.tail = &q->next;
	pthread_mutex_unlock(&F.lock);
	sem_post(&F.wake);
}

void CUPTIAPI pt_cupti_buf_done(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
				size_t valid)
{
	__atomic_add_fetch(&F.completed, 1, __ATOMIC_RELAXED);
	CUpti_BuffersCallbackCompleteFunc theirs = NULL;
	if (pt_cupti_share_take_buf(buf, &theirs)) {
		/* the other component's buffer: a copy for us, the buffer back to it now
		 * (it may be flushing, and expects its buffers before returning) */
		if (valid && __atomic_load_n(&F.running, __ATOMIC_ACQUIRE)) {
			uint8_t *copy = malloc(valid);
			if (copy) {
				memcpy(copy, buf, valid);
				enqueue(copy, valid, valid, 0, 1);
			}
		}
		if (theirs)
			theirs(ctx, stream, buf, size, valid);
		return;
	}
	size_t lost = 0;
	if (C.f.ActivityGetNumDroppedRecords &&
	    C.f.ActivityGetNumDroppedRecords(ctx, stream, &lost) != CUPTI_SUCCESS)
		lost = 0;
	pt_cupti_share_forward(ctx, stream, buf, valid); /* during torch.profiler's window */
	enqueue(buf, size, valid, lost, 0);
}

static struct qbuf *take_queue(void)
{
	pthread_mutex_lock(&F.lock);
	struct qbuf *q = F.head;
	F.head = NULL;
	F.tail = &F.head;
	pthread_mutex_unlock(&F.lock);
	return q;
}

/* ---- the delivery thread ---- */

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
	nanosleep(&ts, NULL);
}

/* Waits until need slots are free while a reader is attached (the ring
 * never overflows); at the end only until the deadline. */
static void wait_room(struct pt_tstate *t, uint64_t need, uint64_t *deadline)
{
	for (;;) {
		if (pt_probe_ring_free(t, need) >= need)
			return;
		uint64_t now = pt_clock_mono_ns();
		if (!pt_probe_reader_attached(now))
			return; /* flight recorder: the oldest give way */
		if (__atomic_load_n(&F.stop, __ATOMIC_ACQUIRE) && !*deadline)
			*deadline = now + FINAL_ROOM_NS;
		if (*deadline && now >= *deadline)
			return; /* pt_probe_emit drops and counts */
		sleep_ns(1000000);
	}
}

static void deliver(struct pt_tstate *t, struct qbuf *q, uint64_t *deadline)
{
	while (q) {
		struct qbuf *next = q->next;
		if (PT_TS_SPECIAL(t)) {
			release(q);
			q = next;
			continue;
		}
		for (size_t i = 0; i < q->lost; i++)
			pt_probe_count_dropped(t);
		uint64_t bad0 = F.x.bad_ts + F.x.bad_clock;
		pt_cupti_xlate_buffer(&F.x, pt_clock_mono_ns());
		CUpti_Activity *rec = NULL;
		while (q->valid &&
		       C.f.ActivityGetNextRecord(q->buf, q->valid, &rec) == CUPTI_SUCCESS && rec) {
			struct pt_shm_rec out[2];
			int k = pt_cupti_xlate(&F.x, rec, out);
			if (!k)
				continue;
			wait_room(t, (uint64_t)k, deadline);
			uint64_t now = pt_clock_mono_ns();
			for (int j = 0; j < k; j++)
				pt_probe_emit(t, now, out[j].start_ns, out[j].dur_ns, out[j].arg,
					      out[j].name, out[j].kind, 0, 0);
		}
		for (uint64_t bad = F.x.bad_ts + F.x.bad_clock - bad0; bad; bad--)
			pt_probe_count_dropped(t);
		F.bytes_second += q->valid;
		release(q);
		q = next;
	}
}

/* (raw, mono) with raw read between two mono reads, the narrowest of a few */
static void anchor(int dom)
{
	uint64_t best_w = UINT64_MAX, raw = 0, mono = 0;
	for (int i = 0; i < 5; i++) {
		uint64_t a = pt_clock_mono_ns(), r = 0;
		if (dom == PT_CLK_REALTIME) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			r = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		} else if (dom == PT_CLK_TSC) {
#if defined(__x86_64__)
			r = __rdtsc();
#else
			return;
#endif
		} else if (dom == PT_CLK_CUPTI) {
			if (!C.f.GetTimestamp || C.f.GetTimestamp(&r) != CUPTI_SUCCESS || !r)
				return;
		}
		uint64_t b = pt_clock_mono_ns();
		if (b - a < best_w) {
			best_w = b - a;
			raw = r;
			mono = a + (b - a) / 2;
		}
	}
	if (pt_cupti_clock_anchor(&F.clock, dom, raw, mono) && dom == PT_CLK_CUPTI) {
		/* that clock changed: a second pair 2 ms on gives it a slope now */
		sleep_ns(2000000);
		anchor(PT_CLK_CUPTI);
	}
}

/* Which known clock CUPTI stamps records with now (-1: another one). */
static int cupti_clock_now(void)
{
	uint64_t raw = 0;
	if (!C.f.GetTimestamp || C.f.GetTimestamp(&raw) != CUPTI_SUCCESS || !raw)
		return F.cupti_dom;
	uint64_t now = pt_clock_mono_ns();
	for (int d = PT_CLK_MONO; d <= PT_CLK_TSC; d++) {
		uint64_t m = pt_cupti_clock_to(&F.clock, d, raw);
		int64_t off = (int64_t)(m - now);
		if (m && off < 2000000 && off > -2000000)
			return d;
	}
	return -1;
}

static void check_clock_owner(void)
{
	int d = cupti_clock_now();
	if (d == F.cupti_dom)
		return;
	if (F.cupti_dom == -2) { /* the first look */
		F.cupti_dom = d;
		if (C.own_clock && d != PT_CLK_MONO)
			pt_cupti_note(0, "CUPTI took proftop's clock but stamps records with %s: GPU "
					 "timestamps are converted",
				      d < 0 ? "an unknown clock" : pt_cupti_dom_name(d));
		return;
	}
	if (d == PT_CLK_MONO)
		pt_cupti_note(0, "CUPTI's clock is CLOCK_MONOTONIC again");
	else if (F.cupti_dom == PT_CLK_MONO)
		pt_cupti_note(0, "another component set CUPTI's clock to %s (torch.profiler uses "
				 "the TSC): GPU timestamps are converted back",
			      d < 0 ? "an unknown clock" : pt_cupti_dom_name(d));
	else
		pt_cupti_note(0, "CUPTI's clock is now %s: GPU timestamps are converted",
			      d < 0 ? "an unknown clock" : pt_cupti_dom_name(d));
	F.cupti_dom = d;
}

static void check_records(void)
{
	const struct pt_cupti_clock *c = &F.clock;
	if (c->early > F.noted_early && !F.noted_early)
		pt_cupti_note(0, "GPU clock check: a kernel started %.1f us before the call that "
				 "launched it%s",
			      (double)c->max_early_ns / 1e3,
			      c->dom == PT_CLK_MONO ? "" : " (timestamps realigned)");
	if (c->late > F.noted_late && !F.noted_late)
		pt_cupti_note(0, "GPU clock check: a kernel started %.1f s after the call that "
				 "launched it",
			      (double)c->max_late_ns / 1e9);
	if (c->unmapped > F.noted_unmapped && !F.noted_unmapped)
		pt_cupti_note(1, "GPU records on an unknown clock were dropped (counted as dropped "
				 "events)");
	if (F.x.odd_stride > F.noted_stride && !F.noted_stride)
		pt_cupti_note(0, "CUPTI %s writes kernel records %llu bytes apart, not %u: a layout "
				 "proftop does not know",
			      C.lay->cuda, (unsigned long long)F.x.last_stride, C.lay->kernel_bytes);
	F.noted_early = c->early;
	F.noted_late = c->late;
	F.noted_unmapped = c->unmapped;
	F.noted_stride = F.x.odd_stride;
}

/* No buffer back for 10 s although kernels were launched, and the probe
 * cannot see another component's CUPTI calls: say what may be going on. */
static void watchdog(uint64_t now)
{
	uint64_t calls = __atomic_load_n(&C.device_calls, __ATOMIC_RELAXED);
	uint64_t done = __atomic_load_n(&F.completed, __ATOMIC_RELAXED);
	if (done != F.watch_completed || calls == F.watch_calls) {
		F.watch_completed = done;
		F.watch_calls = calls;
		F.watch_ns = now;
		return;
	}
	if (now - F.watch_ns < F.watch_limit_ns || F.watch_noted || pt_cupti_share_interposed())
		return;
	F.watch_noted = 1;
	pt_cupti_note(1, "no GPU records for %llu s although %llu kernels were launched: another "
			 "profiler in this process (torch.profiler?) may have taken CUPTI's activity "
			 "buffers, or the kernels still run",
		      (unsigned long long)((now - F.watch_ns) / 1000000000ull),
		      (unsigned long long)(calls - F.watch_calls));
}

/* The next buffers: about 100 ms of records at the rate of the last second. */
static void size_buffers(uint64_t now)
{
	uint64_t span = now - F.last_bytes_ns;
	if (span < CHECK_NS / 2)
		return;
	uint64_t want = (uint64_t)((double)F.bytes_second * 1e8 / (double)span);
	want = (want + BUF_MIN - 1) / BUF_MIN * BUF_MIN;
	if (want < BUF_MIN)
		want = BUF_MIN;
	if (want > BUF_MAX)
		want = BUF_MAX;
	__atomic_store_n(&F.next_size, (uint32_t)want, __ATOMIC_RELAXED);
	F.bytes_second = 0;
	F.last_bytes_ns = now;
}

static void final_flush(struct pt_tstate *t)
{
	uint64_t deadline = 0, bad0 = F.x.bad_ts;
	for (size_t i = 0; i < PT_CUPTI_OUR_KINDS; i++)
		C.f.ActivityDisable(pt_cupti_our_kinds[i]);
	/* everything CUPTI holds, finished or not: unfinished kernels come back
	 * with zero timestamps and are counted as dropped */
	C.f.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	deliver(t, take_queue(), &deadline);
	if (F.x.bad_ts > bad0)
		pt_cupti_note(0, "%llu GPU activities were still running when tracing ended: not "
				 "recorded (counted as dropped)",
			      (unsigned long long)(F.x.bad_ts - bad0));
	check_records();
	if (F.clock.early)
		pt_cupti_note(0, "GPU clock check: %llu of %llu kernels with a known launch started "
				 "before it (up to %.1f us)",
			      (unsigned long long)F.clock.early, (unsigned long long)F.clock.checked,
			      (double)F.clock.max_early_ns / 1e3);
	emit_notes(t);
}

static void *flow_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "proftop-cupti");
	struct pt_tstate *t = pt_probe_self();
	uint64_t now = pt_clock_mono_ns();
	pt_cupti_clock_init(&F.clock, C.launches, now, C.own_clock ? PT_CLK_MONO : PT_CLK_REALTIME);
	pt_cupti_xlate_init(&F.x, C.lay, &F.clock, pt_cupti_intern, NULL, pt_cupti_demangler());
	for (int round = 0; round < 2; round++) {
		anchor(PT_CLK_REALTIME);
		anchor(PT_CLK_TSC);
		anchor(PT_CLK_CUPTI);
		if (!round)
			sleep_ns(2000000); /* slopes need a baseline */
	}
	F.cupti_dom = -2; /* not looked at yet */
	check_clock_owner();
	if (!C.own_clock && F.cupti_dom != PT_CLK_MONO)
		F.clock.dom = F.cupti_dom >= 0 ? F.cupti_dom : PT_CLK_CUPTI;
	F.last_bytes_ns = F.watch_ns = now;
	uint64_t next_flush = now + PERIOD_NS, next_check = now + CHECK_NS, deadline = 0;
	for (;;) {
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		uint64_t wait = next_flush > pt_clock_mono_ns() ? next_flush - pt_clock_mono_ns() : 0;
		until.tv_nsec += (long)wait;
		while (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		while (sem_clockwait(&F.wake, CLOCK_MONOTONIC, &until) != 0 && errno == EINTR)
			;
		deliver(t, take_queue(), &deadline);
		if (__atomic_load_n(&F.stop, __ATOMIC_ACQUIRE))
			break;
		now = pt_clock_mono_ns();
		if (now >= next_flush) {
			C.f.ActivityFlushAll(0); /* the complete buffers: queued on this thread */
			next_flush = now + PERIOD_NS;
		}
		if (now >= next_check) {
			anchor(PT_CLK_REALTIME);
			anchor(PT_CLK_TSC);
			anchor(PT_CLK_CUPTI);
			check_clock_owner();
			check_records();
			watchdog(now);
			size_buffers(now);
			next_check = now + CHECK_NS;
		}
		emit_notes(t);
	}
	final_flush(t);
	__atomic_store_n(&F.running, 0, __ATOMIC_RELEASE);
	/* anything CUPTI hands back from now on is freed at once (enqueue) */
	deliver(t, take_queue(), &deadline);
	sem_post(&F.done);
	return NULL;
}

/* ---- the end ---- */

int pt_cupti_stop(unsigned timeout_ms)
{
	if (!C.pid || getpid() != C.pid || pt_probe_g.forked)
		return 0; /* a child (vfork shares our memory): not its tracing to stop */
	if (pt_cupti_state_cas(PT_CUPTI_ON, PT_CUPTI_STOPPING)) {
		__atomic_store_n(&F.stop, 1, __ATOMIC_RELEASE);
		sem_post(&F.wake);
	} else if (pt_cupti_state() != PT_CUPTI_STOPPING) {
		return 0;
	}
	if (!__atomic_load_n(&F.running, __ATOMIC_ACQUIRE) && pt_cupti_state() == PT_CUPTI_STOPPED)
		return 0;
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	int rc;
	while ((rc = sem_clockwait(&F.done, CLOCK_MONOTONIC, &until)) != 0 && errno == EINTR)
		;
	if (rc != 0)
		return -1; /* stuck: CUPTI is never called again anyway (STOPPING) */
	sem_post(&F.done); /* for any other waiter */
	pt_cupti_state_cas(PT_CUPTI_STOPPING, PT_CUPTI_STOPPED);
	return 0;
}

static void at_exit(void)
{
	pt_cupti_stop(STOP_WAIT_MS);
}

static struct sigaction g_old_term;

static void on_sigterm(int sig)
{
	int saved = errno;
	pt_cupti_stop(STOP_WAIT_MS);
	/* then what SIGTERM would have done: die by it */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigaction(sig, &sa, NULL);
	raise(sig);
	errno = saved;
}

int pt_cupti_flow_start(void)
{
	if (__atomic_load_n(&F.running, __ATOMIC_ACQUIRE))
		return -1; /* an earlier thread never finished its stop */
	F.tail = &F.head;
	F.head = NULL;
	F.stop = 0;
	F.nnotes = 0;
	F.next_size = BUF_FIRST;
	F.bytes_out = 0;
	F.completed = 0;
	F.watch_noted = 0;
	F.noted_early = F.noted_late = F.noted_unmapped = F.noted_stride = 0;
	const char *w = getenv("PROFTOP_CUPTI_WATCHDOG_MS"); /* tests shorten it */
	F.watch_limit_ns = w && atoi(w) > 0 ? (uint64_t)atoi(w) * 1000000ull : WATCHDOG_NS;
	memset(&F.x, 0, sizeof F.x);
	if (sem_init(&F.wake, 0, 0) != 0 || sem_init(&F.done, 0, 0) != 0)
		return -1;
	__atomic_store_n(&F.running, 1, __ATOMIC_RELEASE);
	pthread_t th;
	pthread_attr_t at;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the app's signals stay with the app */
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	int rc = pthread_create(&th, &at, flow_main, NULL);
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		__atomic_store_n(&F.running, 0, __ATOMIC_RELEASE);
		return -1;
	}
	static int hooked;
	if (!hooked) {
		hooked = 1;
		atexit(at_exit);
		const char *s = getenv("PROFTOP_SIGTERM");
		if (!(s && !strcmp(s, "0")) && sigaction(SIGTERM, NULL, &g_old_term) == 0 &&
		    !(g_old_term.sa_flags & SA_SIGINFO) && g_old_term.sa_handler == SIG_DFL) {
			struct sigaction sa;
			memset(&sa, 0, sizeof sa);
			sa.sa_handler = on_sigterm;
			sa.sa_flags = SA_NODEFER | SA_RESTART;
			sigemptyset(&sa.sa_mask);
			sigaction(SIGTERM, &sa, NULL);
		}
	}
	return 0;
}

#endif /* PT_HAVE_CUDA_HEADERS */

/* os._exit and friends skip atexit: the last complete kernels go out first.
 * Exported so that a preloaded probe takes these calls; anywhere tracing is
 * not running (every other program of the job, a vfork child) they only exit. */
PT_EXPORT void _exit(int status);
PT_EXPORT void _Exit(int status);

void _exit(int status)
{
#ifdef PT_HAVE_CUDA_HEADERS
	if (pt_cupti_state() == PT_CUPTI_ON)
		pt_cupti_stop(STOP_WAIT_MS);
#endif
	for (;;)
		syscall(SYS_exit_group, status);
}

void _Exit(int status)
{
	_exit(status);
}
