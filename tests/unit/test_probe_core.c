/*
 * test_probe_core.c - the probe (libproftop.so's objects linked in): the
 * session segment's header, records of ranges/steps/marks/counters, both
 * full-ring policies, several readers, threads and rings (exit, reuse, more
 * threads than rings), fork and DataLoader workers attaching. The clock,
 * the switches and NVTX are test_probe_api.c's.
 */
#include "probe_util.h"

static void test_header(void **state)
{
	assert_int_equal(proftop_enabled(), 1);
	assert_int_equal(proftop_abi_version(), PROFTOP_ABI_VERSION);
	struct pt_shm_header *h = G.hdr;
	assert_true(h->magic == PT_SHM_MAGIC);
	assert_int_equal(h->abi, PT_SHM_ABI);
	assert_int_equal(h->pid, getpid());
	assert_int_equal(h->state, PT_SHM_RUNNING);
	assert_int_equal(h->nrings, 4);
	assert_int_equal(h->ring_slots, 64);
	assert_int_equal(h->strings_bytes, 4096);
	assert_true(h->proc_start_ticks > 0);
	FILE *f = fopen("/proc/self/stat", "r");
	char line[1024] = "";
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof line, f));
	fclose(f);
	char *p = strrchr(line, ')') + 2; /* field 3 */
	for (int i = 3; i < 22; i++)
		p = strchr(p, ' ') + 1;
	assert_true(strtoull(p, NULL, 10) == h->proc_start_ticks);
	assert_true(h->clock_origin_ns > 0 && h->clock_origin_ns <= pt_clock_mono_ns());
	assert_non_null(strstr(h->cmdline, "test_probe"));
	char path[1200];
	snprintf(path, sizeof path, "%s/%d.session", g_dir, (int)getpid());
	assert_string_equal(path, G.path);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_true((uint64_t)st.st_size == h->segment_bytes);
	assert_true(pt_shm_segment_bytes(4, 64, 4096) == h->segment_bytes);
	assert_true(h->strings_offset + h->strings_bytes == h->segment_bytes);
}

static void test_ranges(void **state)
{
	struct pt_shm_ring *r = my_ring();
	struct pt_shm_rec rec[8];
	drain(r, rec, 8);
	proftop_range_push("outer");
	proftop_op_push("inner op");
	proftop_op_pop();
	proftop_range_pop();
	proftop_range_pop(); /* unbalanced: ignored */
	assert_int_equal(drain(r, rec, 8), 2);
	assert_int_equal(rec[0].kind, PT_KIND_OPERATOR);
	assert_string_equal(nm(rec[0].name), "inner op");
	assert_int_equal(rec[0].aux, 1);
	assert_int_equal(rec[1].kind, PT_KIND_USER_DEFINED);
	assert_string_equal(nm(rec[1].name), "outer");
	assert_int_equal(rec[1].aux, 0);
	assert_true(rec[0].start_ns >= rec[1].start_ns);
	assert_true(rec[0].start_ns + rec[0].dur_ns <= rec[1].start_ns + rec[1].dur_ns);
	assert_true(rec[1].start_ns >= G.hdr->clock_origin_ns);

	uint32_t id = proftop_name("by id");
	assert_true(id != 0 && id == proftop_name("by id"));
	proftop_range_push_id(id);
	proftop_phase_push(PROFTOP_PHASE_FORWARD);
	proftop_phase_pop();
	proftop_range_pop();
	assert_int_equal(drain(r, rec, 8), 2);
	assert_int_equal(rec[0].kind, PT_KIND_FORWARD);
	assert_string_equal(nm(rec[0].name), "Forward");
	assert_int_equal(rec[1].name, id);

	/* a reused buffer must not keep its old name */
	char buf[16] = "first";
	proftop_range_push(buf);
	proftop_range_pop();
	strcpy(buf, "second");
	proftop_range_push(buf);
	proftop_range_pop();
	strcpy(buf, "firs");
	proftop_range_push(buf);
	proftop_range_pop();
	assert_int_equal(drain(r, rec, 8), 3);
	assert_string_equal(nm(rec[0].name), "first");
	assert_string_equal(nm(rec[1].name), "second");
	assert_string_equal(nm(rec[2].name), "firs");
}

static void test_steps_marks_counters(void **state)
{
	struct pt_shm_ring *r = my_ring();
	struct pt_shm_rec rec[8];
	drain(r, rec, 8);
	proftop_step_begin();
	proftop_step(32);
	proftop_step(0);
	proftop_mark("a mark");
	proftop_counter("loss", 2.5);
	assert_int_equal(drain(r, rec, 8), 4);
	assert_int_equal(rec[0].kind, PT_KIND_PROFILE_STEP);
	assert_string_equal(nm(rec[0].name), "ProfileStep");
	assert_int_equal(rec[0].arg, 32);
	assert_int_equal(rec[1].kind, PT_KIND_PROFILE_STEP);
	assert_true(rec[1].start_ns == rec[0].start_ns + rec[0].dur_ns);
	assert_int_equal(rec[2].kind, PT_KIND_INSTANT);
	assert_int_equal(rec[2].dur_ns, 0);
	assert_string_equal(nm(rec[2].name), "a mark");
	assert_int_equal(rec[3].kind, PT_KIND_COUNTER);
	double v;
	memcpy(&v, &rec[3].arg, sizeof v);
	assert_true(v == 2.5);
	assert_string_equal(nm(rec[3].name), "loss");
}

static void fill(int n)
{
	for (int i = 0; i < n; i++)
		proftop_counter("fill", (double)i);
}

static void test_full_ring_reader_attached(void **state)
{
	struct pt_shm_ring *r = my_ring();
	struct pt_shm_rec rec[128];
	drain(r, rec, 128);
	set_reader(1);
	uint64_t dropped = r->dropped;
	fill(74);
	assert_int_equal(r->dropped - dropped, 10);
	assert_int_equal(drain(r, rec, 128), 64);
	double v;
	memcpy(&v, &rec[0].arg, sizeof v);
	assert_true(v == 0.0); /* the newest were dropped */
	memcpy(&v, &rec[63].arg, sizeof v);
	assert_true(v == 63.0);
	set_reader(0);
}

static void test_full_ring_flight_recorder(void **state)
{
	struct pt_shm_ring *r = my_ring();
	struct pt_shm_rec rec[128];
	drain(r, rec, 128);
	set_reader(0);
	uint64_t over = r->overwritten, dropped = r->dropped;
	fill(200);
	assert_int_equal(r->dropped, dropped);
	assert_true(r->overwritten - over >= 200 - 64);
	int n = drain(r, rec, 128);
	assert_true(n > 0 && n <= 64);
	for (int i = 0; i < n; i++) {
		double v;
		memcpy(&v, &rec[i].arg, sizeof v);
		assert_true(v == (double)(200 - n + i)); /* the newest, in order */
	}
}

/*
 * Two readers: the producer frees a ring only up to the lower of their
 * cursors (the newest records are dropped while one is behind); once that
 * one's heartbeat is stale, up to the other's; with none attached it
 * overwrites, counting only records no reader had read.
 */
static void test_two_readers_min_cursor(void **state)
{
	struct pt_shm_ring *r = my_ring();
	struct pt_shm_rec rec[128];
	drain(r, rec, 128);
	set_reader(1);
	struct pt_shm_reader *r1 = &G.hdr->readers[1];
	uint64_t start = r->head;
	__atomic_store_n(&r->cursor[1], start, __ATOMIC_RELEASE);
	__atomic_store_n(&r1->pid, (int32_t)getpid(), __ATOMIC_RELEASE);
	__atomic_store_n(&r1->heartbeat_ns, pt_clock_mono_ns(), __ATOMIC_RELEASE);
	fill(64);
	assert_int_equal(drain(r, rec, 128), 64); /* reader 0 read them, reader 1 not */
	uint64_t dropped = r->dropped;
	fill(10);
	assert_int_equal(r->dropped - dropped, 10); /* held back by reader 1 */
	/* reader 1 catches up: room again */
	__atomic_store_n(&r->cursor[1], r->head, __ATOMIC_RELEASE);
	fill(10);
	assert_int_equal(r->dropped - dropped, 10);
	assert_int_equal(drain(r, rec, 128), 10);
	/* reader 1 stalls (stale heartbeat): reader 0's cursor frees the ring */
	__atomic_store_n(&r1->heartbeat_ns, pt_clock_mono_ns() - 3 * PT_SHM_READER_TIMEOUT_NS,
			 __ATOMIC_RELEASE);
	uint64_t stalled_at = r->cursor[1];
	fill(60);
	assert_int_equal(drain(r, rec, 128), 60);
	fill(30);
	assert_int_equal(r->dropped - dropped, 10); /* nothing more dropped */
	assert_true(r->tail > stalled_at);	    /* freed past what reader 1 read */
	assert_int_equal(drain(r, rec, 128), 30);
	/* no reader attached (reader 1, stale, had read everything so far):
	 * overwrites count only what nobody read */
	set_reader(0);
	__atomic_store_n(&r->cursor[1], r->head, __ATOMIC_RELEASE);
	uint64_t over = r->overwritten;
	fill(64 + 20);
	assert_true(r->overwritten - over >= 20 && r->overwritten - over <= 20 + 64 / 16);
	__atomic_store_n(&r1->pid, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&r1->heartbeat_ns, 0, __ATOMIC_RELEASE);
}

/*
 * The room a producer waits for (pt_probe_ring_free, the CUPTI thread's
 * wait before a kernel and its EXT record): with one slot left as far as
 * the tail says and the attached reader past every record, the reader's
 * cursor frees the whole ring. (It used to be looked at only once the ring
 * was full: a two-record item then waited for room it had, until the
 * reader went away or the probe stopped.)
 */
static void test_ring_free_near_full(void **state)
{
	struct pt_shm_ring *r = my_ring();
	struct pt_shm_rec rec[128];
	drain(r, rec, 128);
	set_reader(1);
	struct pt_tstate *t = pt_probe_tls;
	/* asked for the whole ring: everything read is freed */
	assert_int_equal(pt_probe_ring_free(t, G.slots), G.slots);
	fill((int)G.slots - 1); /* unread: one slot left */
	assert_int_equal(r->head - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE), G.slots - 1);
	assert_int_equal(pt_probe_ring_free(t, 2), 1); /* the reader has not read them */
	drain(r, rec, 128);
	assert_int_equal(pt_probe_ring_free(t, 1), 1); /* enough as it is: not looked at */
	assert_int_equal(pt_probe_ring_free(t, 2), G.slots); /* it has read them */
	assert_int_equal(r->tail, r->head);
	set_reader(0);
}

static void *one_range(void *arg)
{
	proftop_range_push((const char *)arg);
	proftop_range_pop();
	*(int *)((char *)arg + 16) = (int)gettid();
	return NULL;
}

static void test_threads_and_exit(void **state)
{
	struct pt_shm_ring *mine = my_ring();
	set_reader(1); /* so exited rings wait for us to free them */
	char a[32] = "thread a", b[32] = "thread b";
	pthread_t ta, tb;
	pthread_create(&ta, NULL, one_range, a);
	pthread_join(ta, NULL);
	pthread_create(&tb, NULL, one_range, b);
	pthread_join(tb, NULL);
	int found = 0;
	for (uint32_t i = 0; i < G.nrings; i++) {
		struct pt_shm_ring *r = pt_shm_ring_at(G.base, G.hdr, i);
		if (r == mine || r->generation == 0)
			continue;
		struct pt_shm_rec rec[64];
		int n = drain(r, rec, 64);
		if (r->tid == *(int *)(a + 16) || r->tid == *(int *)(b + 16)) {
			assert_int_equal(r->state, PT_SHM_RING_EXITED);
			assert_int_equal(n, 1);
			assert_string_equal(nm(rec[0].name), r->tid == *(int *)(a + 16) ? a : b);
			found++;
		}
		r->state = PT_SHM_RING_FREE; /* drained: the reader frees it */
	}
	assert_int_equal(found, 2);
	/* a freed ring is reused with a new generation */
	uint32_t gens = 0;
	for (uint32_t i = 0; i < G.nrings; i++)
		gens += pt_shm_ring_at(G.base, G.hdr, i)->generation;
	pthread_create(&ta, NULL, one_range, a);
	pthread_join(ta, NULL);
	uint32_t gens2 = 0;
	for (uint32_t i = 0; i < G.nrings; i++) {
		struct pt_shm_ring *r = pt_shm_ring_at(G.base, G.hdr, i);
		gens2 += r->generation;
		if (r->state == PT_SHM_RING_EXITED) {
			struct pt_shm_rec rec[64];
			drain(r, rec, 64);
			r->state = PT_SHM_RING_FREE;
		}
	}
	assert_int_equal(gens2, gens + 1);
	assert_int_equal(G.hdr->rings_claimed <= G.nrings, 1);
	set_reader(0);
}

static pthread_barrier_t g_bar;
static void *many(void *arg)
{
	proftop_range_push("many");
	pthread_barrier_wait(&g_bar); /* every thread has tried to claim a ring */
	proftop_range_pop();
	for (int i = 1; i < 100; i++) {
		proftop_range_push("many");
		proftop_range_pop();
	}
	pthread_barrier_wait(&g_bar);
	return NULL;
}

static void test_more_threads_than_rings(void **state)
{
	struct pt_shm_ring *mine = my_ring();
	set_reader(1);
	for (uint32_t i = 0; i < G.nrings; i++) { /* start from free rings */
		struct pt_shm_ring *r = pt_shm_ring_at(G.base, G.hdr, i);
		struct pt_shm_rec rec[64];
		drain(r, rec, 64);
		if (r != mine)
			r->state = PT_SHM_RING_FREE;
	}
	uint64_t before = G.hdr->dropped_no_ring, mine_head = mine->head;
	enum { N = 6 };
	pthread_t t[N];
	pthread_barrier_init(&g_bar, NULL, N);
	for (int i = 0; i < N; i++)
		pthread_create(&t[i], NULL, many, NULL);
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&g_bar);
	uint64_t recorded = 0;
	for (uint32_t i = 0; i < G.nrings; i++) {
		struct pt_shm_ring *r = pt_shm_ring_at(G.base, G.hdr, i);
		if (r == mine)
			continue;
		struct pt_shm_rec rec[64];
		int n = drain(r, rec, 64);
		assert_int_equal(n, 64); /* 100 written, reader "attached": 36 dropped */
		assert_int_equal(r->dropped % 100, 36);
		for (int k = 0; k < n; k++) {
			assert_int_equal(rec[k].kind, PT_KIND_USER_DEFINED);
			assert_string_equal(nm(rec[k].name), "many");
		}
		recorded += 100;
		r->state = PT_SHM_RING_FREE;
	}
	assert_int_equal(mine->head, mine_head); /* nobody wrote into ours */
	assert_int_equal(recorded, 300);
	assert_int_equal(G.hdr->dropped_no_ring - before, 300);
	set_reader(0);
}

static void test_fork_child_disabled(void **state)
{
	struct pt_shm_ring *r = my_ring();
	struct pt_shm_rec rec[64];
	drain(r, rec, 64);
	uint64_t head = r->head;
	pid_t pid = fork();
	if (pid == 0) {
		int bad = proftop_enabled() != 0;
		for (int i = 0; i < 10; i++) {
			proftop_range_push("child");
			proftop_range_pop();
			proftop_mark("child");
		}
		bad |= proftop_name("child") != 0;
		_exit(bad);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(r->head, head);
	assert_int_equal(G.hdr->state, PT_SHM_RUNNING); /* the child's exit did not mark us */
	char path[1200];
	snprintf(path, sizeof path, "%s/%d.session", g_dir, (int)pid);
	assert_int_not_equal(access(path, F_OK), 0); /* and made no session */
	proftop_mark("parent");
	assert_int_equal(r->head, head + 1);
}

/* A forked child that attaches (a DataLoader worker) records into the
 * parent's session on a ring of its own, labelled, and gives it back; its
 * exit() leaves the parent's session running. The parent cannot attach. */
static void test_fork_worker_attach(void **state)
{
	struct pt_shm_ring *r = my_ring();
	assert_int_equal(proftop_worker_attach("nope"), 0);
	uint64_t head = r->head;
	pid_t pid = fork();
	if (pid == 0) {
		int bad = proftop_enabled() != 0;
		bad |= proftop_worker_attach("data worker 3 and more") != 1 ? 2 : 0;
		bad |= proftop_enabled() != 1 ? 4 : 0;
		proftop_range_push("data: w");
		proftop_range_pop();
		proftop_worker_detach();
		bad |= proftop_enabled() != 0 ? 8 : 0;
		proftop_mark("after detach");
		exit(bad); /* runs the probe's destructor, which must leave the parent alone */
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(G.hdr->state, PT_SHM_RUNNING);
	assert_int_equal(r->head, head); /* nothing on the parent's ring */
	struct pt_shm_ring *w = NULL;
	for (uint32_t i = 0; i < G.nrings; i++) {
		struct pt_shm_ring *x = pt_shm_ring_at(G.base, G.hdr, i);
		if (x->tid == (int32_t)pid)
			w = x;
	}
	assert_non_null(w);
	assert_int_equal(w->state, PT_SHM_RING_EXITED);
	assert_string_equal(w->thread_name, "data worker 3 a"); /* 15 bytes kept */
	struct pt_shm_rec rec[64];
	int n = drain(w, rec, 64);
	assert_int_equal(n, 1);
	assert_string_equal(nm(rec[0].name), "data: w");
	assert_int_equal(rec[0].kind, PT_KIND_USER_DEFINED);
	__atomic_store_n(&w->state, PT_SHM_RING_FREE, __ATOMIC_RELEASE); /* as a reader would */
	char path[1200];
	snprintf(path, sizeof path, "%s/%d.session", g_dir, (int)pid);
	assert_int_not_equal(access(path, F_OK), 0);
}

/* A worker that is not a fork of the recording process (spawn, forkserver)
 * attaches by the pid: here a fork stands in for it. It maps the parent's
 * session, records on a ring of its own there with its names interned into
 * the parent's string area, and gives the ring back. Refused: its own pid, a
 * pid with no session, another launch's session. */
static void test_worker_attach_pid(void **state)
{
	(void)state;
	assert_int_equal(proftop_worker_attach_pid(getpid(), "self"), 0);
	assert_int_equal(proftop_worker_attach_pid(0x7ffffff0, "none"), 0);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		int bad = 0;
		setenv("PROFTOP_LAUNCH_ID", "1234abcd", 1); /* not the parent's launch */
		bad |= proftop_worker_attach_pid(parent, "x") != 0 ? 1 : 0;
		unsetenv("PROFTOP_LAUNCH_ID");
		bad |= proftop_worker_attach_pid(parent, "data worker 7") != 1 ? 2 : 0;
		bad |= proftop_enabled() != 1 ? 4 : 0;
		proftop_range_push("data: spawned stage");
		proftop_range_pop();
		proftop_worker_detach();
		exit(bad);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(G.hdr->state, PT_SHM_RUNNING);
	struct pt_shm_ring *w = NULL;
	for (uint32_t i = 0; i < G.nrings; i++) {
		struct pt_shm_ring *x = pt_shm_ring_at(G.base, G.hdr, i);
		if (x->tid == (int32_t)pid)
			w = x;
	}
	assert_non_null(w);
	assert_string_equal(w->thread_name, "data worker 7");
	struct pt_shm_rec rec[64];
	int n = drain(w, rec, 64);
	assert_int_equal(n, 1);
	assert_string_equal(nm(rec[0].name), "data: spawned stage");
	__atomic_store_n(&w->state, PT_SHM_RING_FREE, __ATOMIC_RELEASE);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--enabled") == 0)
		return proftop_enabled();
	if (strchr(argv[0], '/'))
		g_self = argv[0];
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_header),
	    cmocka_unit_test(test_ranges),
	    cmocka_unit_test(test_steps_marks_counters),
	    cmocka_unit_test(test_full_ring_reader_attached),
	    cmocka_unit_test(test_two_readers_min_cursor),
	    cmocka_unit_test(test_ring_free_near_full),
	    cmocka_unit_test(test_full_ring_flight_recorder),
	    cmocka_unit_test(test_threads_and_exit),
	    cmocka_unit_test(test_more_threads_than_rings),
	    cmocka_unit_test(test_fork_child_disabled),
	    cmocka_unit_test(test_fork_worker_attach),
	    cmocka_unit_test(test_worker_attach_pid),
	};
	return probe_done(cmocka_run_group_tests(tests, NULL, NULL));
}
