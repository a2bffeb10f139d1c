/*
 * probe.c - libproftop.so's life cycle: the constructor creates this process's
 * session segment (<pt_shm_dir()>/<pid>.session, mode 0600; built as
 * .<pid>.session.tmp and renamed once its header is whole); threads claim
 * rings on their first event and give them back when they exit; a full ring
 * either drops the newest record (reader attached) or overwrites the oldest
 * (flight recorder); the destructor marks the session EXITED (and removes it
 * when it never held an event nor saw a reader). Nothing here ever waits on
 * the reader or on another thread: the hot path and the name table are
 * lock-free, so a stopped or killed proftop, a fork while another thread is
 * inside the probe, or a signal handler that calls the API or exit() cannot
 * block the training process (NVTX domain creation, once per domain, still
 * takes a lock). A forked child gets no session: the atfork handler turns
 * every call into a no-op there, so it never writes into the parent's rings.
 * Any failure leaves the probe disabled after one line on stderr and the
 * program runs on unchanged. The C API is in probe_api.c, names in
 * probe_names.c, NVTX injection in probe_nvtx.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe_cupti.h"
#include "probe_int.h"

PT_HIDDEN struct pt_probe pt_probe_g;
PT_HIDDEN __thread struct pt_tstate *pt_probe_tls;
static __thread uint32_t noring_events; /* retry claiming after a while */
static __thread volatile sig_atomic_t in_claim; /* pt_probe_claim() is running on this thread */
static pthread_key_t g_exit_key;

#define G pt_probe_g

static void probe_off(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void probe_off(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "proftop: probe disabled: %s\n", msg);
	__atomic_store_n(&G.state, PT_PROBE_OFF, __ATOMIC_RELEASE);
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return dflt;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end || v == 0)
		return dflt;
	return v;
}

static uint32_t round_pow2(uint64_t v)
{
	uint64_t p = 1;
	while (p < v && p < PT_SHM_MAX_RING_SLOTS)
		p <<= 1;
	return (uint32_t)p;
}

static void read_cmdline(char *out, size_t len)
{
	out[0] = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, out, len - 1);
	close(fd);
	if (n <= 0)
		return;
	for (ssize_t i = 0; i < n; i++)
		if (out[i] == 0)
			out[i] = ' ';
	while (n > 0 && out[n - 1] == ' ')
		n--;
	out[n] = 0;
}

static uint64_t read_start_ticks(void)
{
	char buf[1024];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *p = strrchr(buf, ')'); /* the command name may hold spaces and parens */
	if (!p)
		return 0;
	/* after ") " comes field 3 (state); starttime is field 22 */
	for (int field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

static int64_t env_rank(const char *name)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return -1;
	char *end;
	long long v = strtoll(s, &end, 10);
	return *end || v < 0 ? -1 : v;
}

/* The segment is built under this name and renamed to G.path once its
 * header is complete, so a reader never opens a half-made session. */
static char tmp_path[sizeof G.path + 16];

/* 1 (and the probe off) when path exists and is not a regular file: a
 * symlink, FIFO or directory there was not left by a probe. */
static int refuse_nonregular(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0 || S_ISREG(st.st_mode))
		return 0;
	const char *what = S_ISLNK(st.st_mode)	 ? "a symlink"
			   : S_ISDIR(st.st_mode) ? "a directory"
						 : "a special file";
	probe_off("%s: exists and is not a regular file (%s); refusing it", path, what);
	return 1;
}

/* Creates the file exclusively; a stale file with our pid (dead process, or
 * this process before an exec) is replaced. Anything else there is
 * refused, -2. */
static int create_file(const char *path)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
		if (refuse_nonregular(path))
			return -2;
		unlink(path);
	}
	return -1;
}

/* Gives the complete segment its name (atomically: a reader sees no file or
 * a whole header), replacing a stale one of this pid. -1 (probe off) when
 * something else holds the name or the rename fails. */
static int segment_publish(void)
{
	if (refuse_nonregular(G.path)) {
		unlink(tmp_path);
		return -1;
	}
	if (rename(tmp_path, G.path) != 0) {
		probe_off("%s: %s", G.path, strerror(errno));
		unlink(tmp_path);
		return -1;
	}
	return 0;
}

static int segment_create(void)
{
	uint32_t nrings = (uint32_t)env_u64("PROFTOP_RINGS", PT_SHM_DEFAULT_RINGS);
	uint32_t slots = round_pow2(env_u64("PROFTOP_RING_SLOTS", PT_SHM_DEFAULT_RING_SLOTS));
	uint64_t sb = env_u64("PROFTOP_STRINGS_BYTES", PT_SHM_DEFAULT_STRINGS_BYTES);
	if (nrings > PT_SHM_MAX_RINGS)
		nrings = PT_SHM_MAX_RINGS;
	if (sb > (1u << 30))
		sb = 1u << 30;
	uint32_t strings_bytes = (uint32_t)((sb + 4095u) & ~4095ull);
	uint64_t bytes = pt_shm_segment_bytes(nrings, slots < 2 ? 2 : slots, strings_bytes);
	if (!bytes) {
		probe_off("bad sizes (PROFTOP_RINGS=%u PROFTOP_RING_SLOTS=%u)", nrings, slots);
		return -1;
	}
	if (slots < 2)
		slots = 2;
	char dir[4000], err[512];
	if (pt_shm_dir(dir, sizeof dir, 1, err, sizeof err) != 0) {
		probe_off("%s", err);
		return -1;
	}
	snprintf(G.path, sizeof G.path, "%s/%d.session", dir, (int)getpid());
	snprintf(tmp_path, sizeof tmp_path, "%s/.%d.session.tmp", dir, (int)getpid());
	int fd = create_file(tmp_path);
	if (fd < 0) {
		if (fd == -1)
			probe_off("%s: %s", tmp_path, strerror(errno));
		return -1;
	}
	/* Reserve the pages now: a full tmpfs must fail here, not SIGBUS later. */
	int rc = posix_fallocate(fd, 0, (off_t)bytes);
	if (rc == EOPNOTSUPP || rc == EINVAL)
		rc = ftruncate(fd, (off_t)bytes) ? errno : 0;
	if (rc) {
		close(fd);
		unlink(tmp_path);
		probe_off("%s: cannot reserve %llu bytes: %s", G.path, (unsigned long long)bytes,
			  strerror(rc));
		return -1;
	}
	void *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (base == MAP_FAILED) {
		unlink(tmp_path);
		probe_off("mmap %s: %s", G.path, strerror(errno));
		return -1;
	}
	G.base = base;
	G.bytes = bytes;
	G.hdr = base;
	G.nrings = nrings;
	G.slots = slots;
	struct pt_shm_header *h = G.hdr;
	h->abi = PT_SHM_ABI;
	h->header_bytes = PT_SHM_HEADER_BYTES;
	h->segment_bytes = bytes;
	h->pid = (int32_t)getpid();
	h->uid = (uint32_t)geteuid();
	h->proc_start_ticks = read_start_ticks();
	struct timespec rt;
	h->clock_origin_ns = pt_clock_mono_ns();
	clock_gettime(CLOCK_REALTIME, &rt);
	h->realtime_origin_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	h->nrings = nrings;
	h->ring_slots = slots;
	h->rings_offset = PT_SHM_HEADER_BYTES;
	h->ring_stride = sizeof(struct pt_shm_ring) + (uint64_t)slots * sizeof(struct pt_shm_rec);
	h->strings_offset = h->rings_offset + (uint64_t)nrings * h->ring_stride;
	h->strings_bytes = strings_bytes;
	h->rank = env_rank("RANK");
	h->local_rank = env_rank("LOCAL_RANK");
	h->world_size = env_rank("WORLD_SIZE");
	h->strings_used = 8; /* offset 0 means "no name" */
	const char *lid = getenv("PROFTOP_LAUNCH_ID");
	h->launch_id = lid && *lid ? strtoull(lid, NULL, 16) : 0;
	h->ppid = (int32_t)getppid();
	read_cmdline(h->cmdline, sizeof h->cmdline);
	G.strings = (char *)base + h->strings_offset;
	G.strings_bytes = strings_bytes;
	/* Intern table: at most one entry per 16 bytes of string area, kept half full. */
	uint32_t cap = 1024;
	while (cap < strings_bytes / 8 && cap < (1u << 27))
		cap <<= 1;
	G.names = calloc(cap, sizeof *G.names);
	G.ts = calloc(nrings, sizeof *G.ts);
	if (!G.names || !G.ts) {
		unlink(tmp_path);
		probe_off("out of memory");
		return -1;
	}
	G.names_mask = cap - 1;
	return 0;
}

static void on_thread_exit(void *arg)
{
	struct pt_tstate *t = arg;
	pt_probe_tls = PT_TS_DEAD;
	if (PT_TS_SPECIAL(t) || __atomic_load_n(&G.state, __ATOMIC_ACQUIRE) != PT_PROBE_ON)
		return;
	t->depth = 0; /* ranges still open are dropped */
	__atomic_store_n(&t->ring->state, PT_SHM_RING_EXITED, __ATOMIC_RELEASE);
}

static void on_fork_child(void)
{
	/* The child shares the parent's mapping: it never writes to it, unless
	 * it asks to with proftop_worker_attach() (a DataLoader worker). */
	G.fork_on = __atomic_load_n(&G.state, __ATOMIC_ACQUIRE) == PT_PROBE_ON && G.hdr;
	G.child = 0;
	G.forked = 1;
	__atomic_store_n(&G.state, PT_PROBE_OFF, __ATOMIC_RELEASE);
	pt_probe_tls = PT_TS_DEAD;
	pt_probe_nvtx_reset();
}

/* Points NVTX at this library unless something else is already injected.
 * Skipped when the probe is linked into the executable (unit tests).
 * Returns 1 when the probe is a shared object of its own. */
static int set_nvtx_path(void)
{
	Dl_info info;
	if (!dladdr((void *)set_nvtx_path, &info) || !info.dli_fname || !info.dli_fname[0])
		return 0;
	char self[PATH_MAX], exe[PATH_MAX];
	if (!realpath(info.dli_fname, self))
		return 0;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		if (strcmp(exe, self) == 0)
			return 0;
	}
	setenv("NVTX_INJECTION64_PATH", self, 0);
	return 1;
}

/* The phases' names in the session's string area (the steps' and phases'
 * records name them by offset). */
static void intern_phase_names(void)
{
	static const char *const phase[5] = {"ProfileStep", "Dataloader", "Forward", "Backward",
					     "Optimization"};
	for (int i = 0; i < 5; i++)
		G.phase_name[i] = pt_probe_intern(phase[i], strlen(phase[i]));
}

__attribute__((constructor)) static void probe_init(void)
{
	const char *dis = getenv("PROFTOP_DISABLE");
	if (dis && *dis && strcmp(dis, "0") != 0) {
		__atomic_store_n(&G.state, PT_PROBE_OFF, __ATOMIC_RELEASE);
		return;
	}
	pt_clock_init();
	if (pthread_key_create(&g_exit_key, on_thread_exit) != 0) {
		probe_off("no pthread key");
		return;
	}
	if (segment_create() != 0)
		return;
	pthread_atfork(NULL, NULL, on_fork_child);
	pt_probe_phases_init();
	intern_phase_names();
	__atomic_store_n(&G.hdr->state, PT_SHM_RUNNING, __ATOMIC_RELAXED);
	/* The magic goes last: a reader that sees it sees a complete header
	 * (one that mapped the file by its name sees it at once). */
	__atomic_store_n(&G.hdr->magic, PT_SHM_MAGIC, __ATOMIC_RELEASE);
	if (segment_publish() != 0)
		return; /* nothing else changed: NVTX is not pointed at us */
	int is_so = set_nvtx_path();
	__atomic_store_n(&G.state, PT_PROBE_ON, __ATOMIC_RELEASE);
	pt_cupti_probe_init(is_so); /* GPU tracing: now, or at cuInit */
}

/* No locks here: exit() may run from a signal handler (unlink is
 * async-signal-safe). */
__attribute__((destructor)) static void probe_fini(void)
{
	if (__atomic_load_n(&G.state, __ATOMIC_ACQUIRE) != PT_PROBE_ON || G.forked || G.child)
		return;
	struct pt_shm_header *h = G.hdr;
	__atomic_store_n(&h->exit_ns, pt_clock_mono_ns(), __ATOMIC_RELAXED);
	__atomic_store_n(&h->state, PT_SHM_EXITED, __ATOMIC_RELEASE);
	/* A session that never held an event and never saw a reader is worth
	 * nothing once its process is gone but its reserved pages (about 17 MB of
	 * RAM on tmpfs by default). Every program a job runs (sh, git,
	 * nvidia-smi) inherits LD_PRELOAD, so a long job would otherwise pile up
	 * such segments in /dev/shm until some proftop removes stale ones. */
	if (__atomic_load_n(&h->rings_claimed, __ATOMIC_ACQUIRE) == 0 &&
	    __atomic_load_n(&h->dropped_no_ring, __ATOMIC_RELAXED) == 0 &&
	    __atomic_load_n(&h->reader_heartbeat_ns, __ATOMIC_ACQUIRE) == 0)
		unlink(G.path);
}

static void claim_ring(struct pt_tstate *t, struct pt_shm_ring *r, uint32_t i)
{
	memset(t, 0, offsetof(struct pt_tstate, stack));
	memset(t->cache, 0, sizeof t->cache);
	t->ring = r;
	__atomic_store_n(&r->open_depth, 0, __ATOMIC_RELAXED);
	t->recs = pt_shm_ring_recs(r);
	t->mask = G.slots - 1;
	t->index = i;
	t->head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
	/* what is left of the previous owner was read (a freed ring) or counted
	 * (an exited one taken over, claim_any): the new owner starts empty */
	__atomic_store_n(&r->tail, t->head, __ATOMIC_RELEASE);
	t->cached_tail = t->head;
	t->tid = (int32_t)gettid();
	r->tid = t->tid;
	char name[16] = "";
	if (G.child && G.child_label[0] && (pid_t)t->tid == getpid())
		memcpy(name, G.child_label, sizeof name);
	else
		pthread_getname_np(pthread_self(), name, sizeof name);
	memset(r->thread_name, 0, sizeof r->thread_name);
	memcpy(r->thread_name, name, strnlen(name, sizeof name - 1));
	/* generation last: a reader that sees it changed sees the new tid and name */
	__atomic_store_n(&r->generation, r->generation + 1, __ATOMIC_RELEASE);
	uint32_t hw = __atomic_load_n(&G.hdr->rings_claimed, __ATOMIC_RELAXED);
	while (hw < i + 1 && !__atomic_compare_exchange_n(&G.hdr->rings_claimed, &hw, i + 1, 0,
							  __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	t->step_start_ns = pt_clock_now(&t->clk);
}

static struct pt_tstate *claim_any(void);

int pt_probe_reader_attached(uint64_t now_ns)
{
	return pt_shm_readers_attached(G.hdr, now_ns) > 0;
}

struct pt_tstate *pt_probe_claim(void)
{
	struct pt_tstate *cur = pt_probe_tls;
	if (cur == PT_TS_DEAD)
		return cur;
	int st = __atomic_load_n(&G.state, __ATOMIC_ACQUIRE);
	if (st != PT_PROBE_ON) {
		if (st == PT_PROBE_OFF)
			pt_probe_tls = PT_TS_DEAD;
		return PT_TS_DEAD; /* UNINIT: a call before the constructor; try later */
	}
	if (cur == PT_TS_NORING && (++noring_events & 4095u) != 0)
		return cur;
	/* A signal handler calling the API while this thread is half-way through
	 * its first claim would claim a second ring that nobody ever gives back:
	 * its event is counted as dropped instead. */
	if (in_claim)
		return PT_TS_NORING;
	in_claim = 1;
	struct pt_tstate *t = claim_any();
	in_claim = 0;
	if (PT_UNLIKELY(!__atomic_load_n(&G.cost_done, __ATOMIC_RELAXED)))
		pt_probe_cost_measure();
	return t;
}

static struct pt_tstate *claim_any(void)
{
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < G.nrings; i++) {
			struct pt_shm_ring *r = pt_shm_ring_at(G.base, G.hdr, i);
			uint32_t want = pass == 0 ? PT_SHM_RING_FREE : PT_SHM_RING_EXITED;
			uint32_t s = __atomic_load_n(&r->state, __ATOMIC_RELAXED);
			if (s != want || !__atomic_compare_exchange_n(&r->state, &s, PT_SHM_RING_ACTIVE,
								      0, __ATOMIC_ACQUIRE,
								      __ATOMIC_RELAXED))
				continue;
			if (pass == 1) {
				/* No reader will drain the dead thread's records: they go
				 * (claim_ring empties the ring, so they are not shown under
				 * the new thread), counted as overwritten unless some
				 * reader had read them. */
				uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
				uint64_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
				uint64_t read = pt_shm_readers_max_cursor(G.hdr, r);
				uint64_t from = read > tail ? read : tail;
				if (head > from)
					__atomic_store_n(&r->overwritten,
							 r->overwritten + (head - from),
							 __ATOMIC_RELEASE);
			}
			struct pt_tstate *t = &G.ts[i];
			claim_ring(t, r, i);
			pt_probe_tls = t;
			pthread_setspecific(g_exit_key, t);
			return t;
		}
		/* Rings of exited threads are reused only while no reader drains them. */
		if (pt_probe_reader_attached(pt_clock_mono_ns()))
			break;
	}
	pt_probe_tls = PT_TS_NORING;
	noring_events = 1;
	return PT_TS_NORING;
}

void pt_probe_count_noring(void)
{
	if (__atomic_load_n(&G.state, __ATOMIC_RELAXED) == PT_PROBE_ON)
		__atomic_fetch_add(&G.hdr->dropped_no_ring, 1, __ATOMIC_RELAXED);
}

void pt_probe_count_dropped(struct pt_tstate *t)
{
	/* single writer: a relaxed load + store keeps the reader's view untorn */
	__atomic_store_n(&t->ring->dropped, t->ring->dropped + 1, __ATOMIC_RELAXED);
}

/*
 * The ring is full as far as tail says. Only this thread moves its ring's
 * tail (shm.h): up to what every attached reader has read, else, with no
 * reader attached, past the oldest records (flight recorder). The counters
 * are stored before tail moves (release), so a reader that sees the new tail
 * sees them too.
 */
int pt_probe_make_room(struct pt_tstate *t, uint64_t now_ns)
{
	struct pt_shm_ring *r = t->ring;
	uint64_t head = t->head;
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	t->cached_tail = tail;
	if (head - tail <= t->mask)
		return 1;
	int attached;
	uint64_t m = pt_shm_readers_min_cursor(G.hdr, r, now_ns, tail, head, &attached);
	if (attached) {
		if (m > tail) { /* every attached reader is past these */
			__atomic_store_n(&r->tail, m, __ATOMIC_RELEASE);
			t->cached_tail = tail = m;
		}
		if (head - tail <= t->mask)
			return 1;
		pt_probe_count_dropped(t); /* a reader is behind: drop the newest */
		return 0;
	}
	/* Flight recorder: free the oldest sixteenth at once, so a full ring
	 * costs one store per many records, not one per record. Records some
	 * reader (gone stale) had read are not lost to everyone: not counted. */
	uint64_t batch = (t->mask + 1) / 16 ? (t->mask + 1) / 16 : 1;
	uint64_t want = head - t->mask - 1 + batch;
	if (want > tail) {
		uint64_t read = pt_shm_readers_max_cursor(G.hdr, r);
		uint64_t from = read > tail ? read : tail;
		if (want > from)
			__atomic_store_n(&r->overwritten, r->overwritten + (want - from),
					 __ATOMIC_RELAXED);
		__atomic_store_n(&r->tail, want, __ATOMIC_RELEASE);
		tail = want;
	}
	t->cached_tail = tail;
	return 1;
}

uint64_t pt_probe_ring_free(struct pt_tstate *t, uint64_t need)
{
	struct pt_shm_ring *r = t->ring;
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	uint64_t used = t->head - tail;
	if (used > t->mask || t->mask + 1 - used < need) {
		/* short of room as far as tail says: the attached readers may be
		 * past it, and only this thread moves it (as pt_probe_make_room
		 * does, no drop). Not only when full: a kernel and its EXT need
		 * two slots, and one free slot would never grow by itself. */
		int attached;
		uint64_t m = pt_shm_readers_min_cursor(G.hdr, r, pt_clock_mono_ns(), tail, t->head,
						       &attached);
		if (attached && m > tail) {
			__atomic_store_n(&r->tail, m, __ATOMIC_RELEASE);
			tail = m;
		}
	}
	t->cached_tail = tail;
	used = t->head - tail;
	return used > t->mask ? 0 : t->mask + 1 - used;
}

int pt_probe_pop_inner(struct pt_tstate *t, uint16_t dom)
{
	uint32_t d = t->depth;
	if (d == 0)
		return -1;
	if (d > PT_PROBE_MAX_DEPTH) {
		t->depth = d - 1; /* a frame that did not fit; counted at push */
		__atomic_store_n(&t->ring->open_depth, d - 1, __ATOMIC_RELAXED);
		return (int)(d - 1);
	}
	/* Another domain's range is innermost: close this domain's innermost. */
	uint32_t i = d;
	while (i > 0 && t->stack[i - 1].dom != dom)
		i--;
	if (i == 0)
		return -1;
	uint64_t now = pt_clock_now(&t->clk);
	struct pt_frame f = t->stack[i - 1];
	memmove(&t->stack[i - 1], &t->stack[i], (d - i) * sizeof f);
	t->depth = d - 1;
	for (uint32_t k = i - 1; k < d - 1 && k < PT_SHM_OPEN_MAX; k++) {
		struct pt_shm_open *o = &t->ring->open[k];
		__atomic_store_n(&o->name, t->stack[k].name, __ATOMIC_RELAXED);
		__atomic_store_n(&o->kind, t->stack[k].kind, __ATOMIC_RELAXED);
		__atomic_store_n(&o->start_ns, t->stack[k].start_ns, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&t->ring->open_depth, d - 1, __ATOMIC_RELAXED);
	if (f.kind != PT_PROBE_KIND_DROP)
		pt_probe_emit(t, now, f.start_ns, now > f.start_ns ? now - f.start_ns : 0, 0, f.name,
			      f.kind, f.flags, (uint16_t)(i - 1));
	return (int)(i - 1);
}

/*
 * A forked child of a recording process (a DataLoader worker) records into
 * the parent's session: its threads claim rings of their own there (the
 * rings are single-producer, the string area and the ring states are
 * claimed with atomics, so the parent's threads and the child never share
 * one). The reader shows the child's main thread as a lane of the parent,
 * labelled `label`. The child must give its rings back with
 * proftop_worker_detach() before it ends (it never runs the parent's exit
 * handlers): a killed worker's ring stays claimed, and once every ring is
 * claimed, further workers' events are counted as dropped (no ring).
 */
/* This process records from now on as a worker into the session in G (its
 * own events go on a ring labelled label there). */
static int become_worker(const char *label)
{
	memset(G.child_label, 0, sizeof G.child_label);
	if (label)
		strncpy(G.child_label, label, sizeof G.child_label - 1);
	G.child = 1;
	G.forked = 0;
	pt_probe_tls = PT_TS_UNCLAIMED;
	__atomic_store_n(&G.state, PT_PROBE_ON, __ATOMIC_RELEASE);
	struct pt_tstate *t = pt_probe_claim(); /* now, with the label */
	return !PT_TS_SPECIAL(t);
}

PT_EXPORT int proftop_worker_attach(const char *label)
{
	if (G.child)
		return __atomic_load_n(&G.state, __ATOMIC_ACQUIRE) == PT_PROBE_ON;
	if (!G.forked || !G.fork_on || !G.hdr ||
	    __atomic_load_n(&G.hdr->state, __ATOMIC_ACQUIRE) != PT_SHM_RUNNING)
		return 0;
	return become_worker(label);
}

/*
 * A DataLoader worker started with spawn or forkserver is a new process (or
 * a fork of the forkserver), not a fork of the training process: it maps
 * the session of pid (the training process: the same user's, the same
 * launch, running), stops using the segment it made at start (unlinked
 * when none of its threads ever claimed a ring there, else left mapped for
 * them), and records into pid's session as proftop_worker_attach() does.
 * Its names are interned into that session's string area (lock-free, as
 * any thread of pid does). Returns 1 when recording.
 */
/* the tables of a segment left behind by proftop_worker_attach_pid while
 * a thread still pointed into them */
static struct pt_tstate *g_retired_ts;
static uint64_t *g_retired_names;

/* The layout of a mapped session, read once and checked: what is used after
 * (the owner could change its header under us). */
struct mapped_layout {
	uint32_t nrings, slots, strings_bytes;
	uint64_t strings_offset;
};

static int map_session_of(int32_t pid, void **base_out, uint64_t *bytes_out,
			  struct mapped_layout *lay, char *path, size_t pathlen)
{
	char dir[4000], err[512];
	if (pt_shm_dir(dir, sizeof dir, 0, err, sizeof err) != 0)
		return -1;
	snprintf(path, pathlen, "%s/%d.session", dir, (int)pid);
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (uint64_t)st.st_size < PT_SHM_HEADER_BYTES) {
		close(fd);
		return -1;
	}
	uint64_t bytes = (uint64_t)st.st_size;
	void *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (base == MAP_FAILED)
		return -1;
	/* the layout read once, checked against the file and the ABI */
	const struct pt_shm_header *h = base;
	uint32_t nrings = h->nrings, slots = h->ring_slots, sb = h->strings_bytes;
	uint64_t stride = h->ring_stride, soff = h->strings_offset;
	const char *lid = getenv("PROFTOP_LAUNCH_ID");
	uint64_t launch = lid && *lid ? strtoull(lid, NULL, 16) : 0;
	if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != PT_SHM_MAGIC || h->abi != PT_SHM_ABI ||
	    h->header_bytes != PT_SHM_HEADER_BYTES || h->pid != pid || h->segment_bytes != bytes ||
	    nrings == 0 || nrings > PT_SHM_MAX_RINGS || slots < 2 || (slots & (slots - 1)) ||
	    pt_shm_segment_bytes(nrings, slots, sb) != bytes ||
	    h->rings_offset != PT_SHM_HEADER_BYTES ||
	    stride != sizeof(struct pt_shm_ring) + (uint64_t)slots * sizeof(struct pt_shm_rec) ||
	    soff != PT_SHM_HEADER_BYTES + (uint64_t)nrings * stride || soff + sb > bytes ||
	    h->launch_id != launch ||
	    __atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != PT_SHM_RUNNING) {
		munmap(base, bytes);
		return -1;
	}
	*base_out = base;
	*bytes_out = bytes;
	*lay = (struct mapped_layout){nrings, slots, sb, soff};
	return 0;
}

PT_EXPORT int proftop_worker_attach_pid(int32_t pid, const char *label)
{
	if (G.child)
		return __atomic_load_n(&G.state, __ATOMIC_ACQUIRE) == PT_PROBE_ON;
	if (pid <= 0 || pid == (int32_t)getpid())
		return 0;
	void *base;
	uint64_t bytes;
	char path[sizeof G.path];
	struct mapped_layout lay;
	if (map_session_of(pid, &base, &bytes, &lay, path, sizeof path) != 0)
		return 0;
	struct pt_shm_header *h = base;
	uint32_t cap = 1024;
	while (cap < lay.strings_bytes / 8 && cap < (1u << 27))
		cap <<= 1;
	uint64_t *names = calloc(cap, sizeof *names);
	struct pt_tstate *ts = calloc(lay.nrings, sizeof *ts);
	if (!names || !ts) {
		free(names);
		free(ts);
		munmap(base, bytes);
		return 0;
	}
	/* this process records nothing more of its own */
	__atomic_store_n(&G.state, PT_PROBE_OFF, __ATOMIC_RELEASE);
	if (G.hdr && !G.forked) {
		/* its own segment: gone for readers; unmapped unless a thread of
		 * ours still points into it (then kept, and its tables with it) */
		__atomic_store_n(&G.hdr->state, PT_SHM_EXITED, __ATOMIC_RELEASE);
		unlink(G.path);
		if (__atomic_load_n(&G.hdr->rings_claimed, __ATOMIC_ACQUIRE) == 0) {
			munmap(G.base, G.bytes);
			free(G.ts);
			free(G.names);
		} else {
			g_retired_ts = G.ts;
			g_retired_names = G.names;
		}
	} else if (G.forked) {
		/* a fork's copies of the parent's tables (the forkserver's, or
		 * the training process's): no other thread here uses them */
		free(G.ts);
		free(G.names);
	}
	G.base = base;
	G.bytes = bytes;
	G.hdr = h;
	G.nrings = lay.nrings;
	G.slots = lay.slots;
	G.strings = (char *)base + lay.strings_offset;
	G.strings_bytes = lay.strings_bytes;
	G.names = names;
	G.names_mask = cap - 1;
	G.ts = ts;
	snprintf(G.path, sizeof G.path, "%s", path);
	intern_phase_names();
	pt_probe_nvtx_reset();
	return become_worker(label);
}

/* Gives the calling thread's ring back (marks it exited for the reader to
 * drain and free) and stops recording in this child. */
PT_EXPORT void proftop_worker_detach(void)
{
	if (!G.child || __atomic_load_n(&G.state, __ATOMIC_ACQUIRE) != PT_PROBE_ON)
		return;
	struct pt_tstate *t = pt_probe_tls;
	pt_probe_tls = PT_TS_DEAD;
	__atomic_store_n(&G.state, PT_PROBE_OFF, __ATOMIC_RELEASE);
	if (!PT_TS_SPECIAL(t)) {
		t->depth = 0;
		__atomic_store_n(&t->ring->state, PT_SHM_RING_EXITED, __ATOMIC_RELEASE);
	}
}
