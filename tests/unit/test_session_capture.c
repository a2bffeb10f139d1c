/*
 * test_session_capture.c - deep captures through a session: the control
 * word, following the helper's answers, merging the captured trace (hostile
 * files, steps after the capture is done, kernels linked), and the cadence
 * at which a launched job's sessions are looked for.
 */
#include "session_fake.h"

/* ---- deep captures: the control word, following, merging ---- */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The helper's answer, as probe_ctl.c writes it: fields, then state. */
static void answer(struct seg *g, uint32_t seq, uint32_t st, uint32_t done, const char *msg)
{
	snprintf(g->h->ctl.msg, sizeof g->h->ctl.msg, "%s", msg ? msg : "");
	__atomic_store_n(&g->h->ctl.state, PT_SHM_CTL_STATE(seq, st, done), __ATOMIC_RELEASE);
}

/* The helper's report of a finished capture, as proftop_capture_report
 * writes it: window from 4 ms to t1_ns, the marker bracketed between 4.000
 * and 4.004 ms of the session clock, thread 100, the job's fourth step first. */
static void report(struct seg *g, uint64_t t1_ns)
{
	g->h->ctl.t0_ns = 4000000;
	g->h->ctl.t1_ns = t1_ns;
	g->h->ctl.sync_lo_ns = 4000000;
	g->h->ctl.sync_hi_ns = 4004000;
	g->h->ctl.tid = 100;
	g->h->ctl.first_step = 3; /* the job's count */
}

static struct pt_capture *follow(struct pt_session *s, struct pt_trace *t,
				 struct pt_capture_follow *f, uint32_t seq, int exited)
{
	struct pt_shm_ctl ctl;
	pt_shm_ctl_read(pt_session_hdr(s), &ctl);
	pt_session_drain(s, t, pt_now_ns());
	pt_session_capture_follow(s, t, &ctl, f, exited, pt_now_ns());
	return pt_capture_get(t, pt_session_pid(s), seq, 0);
}

/*
 * The job's capture file is whatever the job left at the path: a FIFO it
 * holds open (a read would wait forever: every reader froze), a symlink
 * to a file elsewhere, a file of another user. Each is refused at once,
 * with the reason in the capture's line; a real file of ours is read up
 * to the size it had when opened.
 */
/* A segment of nsteps steps of 1 ms on ring 0 (thread 100; *r, *stepn:
 * the ring and the steps' name, for more), opened, with a trace to drain
 * it into: what the capture tests start from. */
static struct pt_session *capture_seg(struct seg *g, uint32_t nrings, uint32_t slots, int nsteps,
				      struct pt_trace **t, struct pt_shm_ring **r, uint32_t *stepn)
{
	seg_make(g, getpid(), nrings, slots, 4096);
	*stepn = seg_str(g, "ProfileStep");
	*r = seg_ring(g, 0, 100, "main");
	for (int i = 1; i <= nsteps; i++)
		seg_push(g, *r, PT_KIND_PROFILE_STEP, *stepn, i * 1000000ull, 1000000, 8);
	struct pt_session *s;
	assert_int_equal(open_seg(g, &s), 0);
	*t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	return s;
}

static volatile pid_t g_holder = -1;

static void alarm_fail(int sig)
{
	(void)sig;
	static const char m[] = "test_session: a read of the job's capture file hung\n";
	(void)!write(2, m, sizeof m - 1);
	if (g_holder > 0)
		kill(g_holder, SIGKILL);
	_exit(1);
}

static void test_capture_file_hostile(void **state)
{
	(void)state;
	signal(SIGALRM, alarm_fail);
	for (int kind = 0; kind < 3; kind++) {
		if (kind == 2 && geteuid() != 0)
			continue; /* a file of another user needs chown */
		struct seg g;
		struct pt_trace *t;
		struct pt_shm_ring *r;
		uint32_t stepn;
		struct pt_session *s = capture_seg(&g, 1, 64, 9, &t, &r, &stepn);
		struct pt_capture_follow f = {0};
		char why[300], path[600], real[700];
		uint32_t seq = 0;
		g.h->ctl.caps = PT_SHM_CAP_CAPTURE;
		assert_int_equal(pt_session_capture_request(s, 3, 0, 0, &seq, why, sizeof why), 0);
		assert_non_null(follow(s, t, &f, seq, 0));
		assert_int_equal(pt_session_capture_file(s, seq, path, sizeof path), 0);
		pid_t holder = -1;
		const char *want = NULL;
		snprintf(real, sizeof real, "%s.real", path);
		write_file(real, "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"proftop/sync#1\","
				 "\"pid\":9,\"tid\":7,\"ts\":1000,\"dur\":2}]}");
		if (kind == 0) {
			assert_int_equal(mkfifo(path, 0600), 0);
			holder = fork();
			assert_true(holder >= 0);
			if (holder == 0) { /* the job: holds the FIFO open, writes nothing */
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				int fd = open(path, O_RDWR);
				(void)fd;
				pause();
				_exit(0);
			}
			g_holder = holder;
			want = "not a regular file";
		} else if (kind == 1) {
			assert_int_equal(symlink(real, path), 0);
			want = "is a symlink";
		} else {
			assert_int_equal(rename(real, path), 0);
			assert_int_equal(chown(path, 1, 1), 0);
			want = "owned by uid 1";
		}
		usleep(20000); /* the holder has the FIFO open */
		report(&g, 7000000);
		answer(&g, seq, PT_SHM_CTL_DONE, 3, "done");
		alarm(20);
		struct pt_capture *c = follow(s, t, &f, seq, 0);
		alarm(0);
		assert_non_null(c);
		assert_int_equal(c->state, PT_CAPTURE_FAILED);
		assert_non_null(strstr(c->msg, want));
		if (holder > 0) {
			kill(holder, SIGKILL);
			waitpid(holder, NULL, 0);
			g_holder = -1;
		}
		unlink(path);
		unlink(real);
		pt_trace_free(t);
		pt_session_close(s);
		seg_free(&g);
	}
	signal(SIGALRM, SIG_DFL);
}

static void test_capture_protocol(void **state)
{
	(void)state;
	struct seg g;
	seg_make(&g, getpid(), 2, 256, 4096);
	uint32_t stepn = seg_str(&g, "ProfileStep"), conv = seg_str(&g, "features.0 (Conv2d)");
	struct pt_shm_ring *r = seg_ring(&g, 0, 100, "main");
	/* steps of 1 ms from 1 ms on; the one of 4..5 ms holds a module op */
	for (int i = 1; i <= 3; i++)
		seg_push(&g, r, PT_KIND_PROFILE_STEP, stepn, i * 1000000ull, 1000000, 8);
	struct pt_session *s;
	assert_int_equal(open_seg(&g, &s), 0);
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	struct pt_capture_follow f = {0};
	char why[300];
	uint32_t seq = 0;
	/* no helper answers: refused, and why */
	assert_int_equal(pt_session_capture_request(s, 3, 0, 0, &seq, why, sizeof why), PT_ENOTAVAIL);
	assert_non_null(strstr(why, "no PyTorch helper"));
	assert_null(follow(s, t, &f, 1, 0));
	g.h->ctl.caps = PT_SHM_CAP_CAPTURE;
	assert_int_equal(pt_session_capture_request(s, 0, 0, 0, &seq, why, sizeof why), PT_EINVAL);
	assert_int_equal(pt_session_capture_request(s, 3, 0, 0, &seq, why, sizeof why), 0);
	assert_int_equal(seq, 1);
	assert_int_equal(PT_SHM_CTL_REQ_STEPS(g.h->ctl.request), 3);
	assert_int_equal(g.h->ctl.requester, getpid());
	/* asked, not answered: a second request is refused (this reader lives) */
	assert_int_equal(pt_session_capture_request(s, 3, 0, 0, &seq, why, sizeof why), PT_EEXIST);
	assert_non_null(strstr(why, "capture #1 was asked for"));
	struct pt_capture *c = follow(s, t, &f, 1, 0);
	assert_non_null(c);
	assert_int_equal(c->state, PT_CAPTURE_ASKED);
	assert_true(c->mine);
	/* running */
	answer(&g, 1, PT_SHM_CTL_RUNNING, 1, NULL);
	assert_int_equal(follow(s, t, &f, 1, 0)->state, PT_CAPTURE_RUNNING);
	assert_int_equal(pt_session_capture_request(s, 3, 0, 0, &seq, why, sizeof why), PT_EEXIST);
	assert_non_null(strstr(why, "capture #1 is running (1 of 3 steps)"));
	/* the captured steps 3..6 ms, the module op in the 5th, steps after */
	for (int i = 4; i <= 9; i++)
		seg_push(&g, r, PT_KIND_PROFILE_STEP, stepn, i * 1000000ull, 1000000, 8);
	seg_push(&g, r, PT_KIND_OPERATOR, conv, 4005000, 200000, 0);
	/* the job's trace: its own clock (µs from 1000), the marker (twice:
	 * a first try whose bracket was too wide, then the one bracketed), a
	 * conv with shapes and torch's FLOPs, its ProfilerStep (left out) and
	 * an op of another thread */
	char path[600];
	assert_int_equal(pt_session_capture_file(s, 1, path, sizeof path), 0);
	write_file(path,
		   "{\"traceEvents\":["
		   "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"proftop/sync#1\",\"pid\":9,"
		   "\"tid\":7,\"ts\":1000,\"dur\":2},"
		   "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"proftop/sync#1\",\"pid\":9,"
		   "\"tid\":7,\"ts\":400,\"dur\":2},"
		   "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ProfilerStep#0\",\"pid\":9,\"tid\":7,"
		   "\"ts\":990,\"dur\":3000},"
		   "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::conv2d\",\"pid\":9,\"tid\":7,"
		   "\"ts\":1010,\"dur\":50,\"args\":{\"Input Dims\":[[2,3,8,8],[4,3,3,3],[4],[],[],[],[]],"
		   "\"flops\":27648}},"
		   "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":9,\"tid\":\"torch thread 2\","
		   "\"ts\":1020,\"dur\":5}]}");
	/* session clock: the marker lay between 4.0 ms and 4.004 ms; torch's
	 * 1000..1002 us: the offset is 3.001 ms, +-1 us */
	report(&g, 7000000);
	g.h->ctl.start_block_ns = 100000;
	g.h->ctl.stop_block_ns = 200000;
	answer(&g, 1, PT_SHM_CTL_DONE, 3, "legacy profiler, torch 1.13");
	c = follow(s, t, &f, 1, 0);
	assert_int_equal(c->state, PT_CAPTURE_MERGED);
	assert_int_equal(c->events, 2);
	assert_int_equal(c->flop_events, 1);
	assert_int_equal(c->sync_err_ns, 1000);
	assert_int_equal(t->flop_events, 1);
	/* the conv on the captured thread's track, on the session clock, inside
	 * the module op: nested under it in the op detail */
	uint32_t tr = pt_trace_track(t, &(struct pt_track_key){getpid(), 100, 0, 0});
	struct pt_event ev[64];
	size_t n = track_events(t, tr, ev, 64), hits = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(name_of(t, &ev[i]), "aten::conv2d"))
			continue;
		hits++;
		assert_int_equal(ev[i].start_ns, 1010000 + 3001000);
		assert_true(ev[i].flags & PT_EVF_FLOPS);
		assert_true(ev[i].start_ns >= 4005000 && pt_event_end(&ev[i]) <= 4205000);
	}
	assert_int_equal(hits, 1);
	struct pt_summary *sum = pt_summarize(t, NULL);
	int nested = 0;
	for (size_t i = 0; i < sum->op_detail.n; i++) {
		const struct pt_row *row = &sum->op_detail.rows[i];
		if (row->depth == 1 && !strcmp(pt_trace_str(t, row->name_id), "aten::conv2d") &&
		    !strcmp(pt_trace_str(t, sum->op_detail.rows[row->parent].name_id),
			    "features.0 (Conv2d)"))
			nested = 1;
		assert_false(!strcmp(pt_trace_str(t, row->name_id), "ProfilerStep#0"));
	}
	assert_true(nested);
	assert_int_equal(sum->nsteps, 9); /* the job's steps, none added */
	pt_summary_free(sum);
	/* the cost: the steps before, during and after, from the session's own */
	assert_int_equal(c->before_n, 3);
	assert_int_equal(c->during_n, 3);
	assert_int_equal(c->after_n, 3);
	assert_int_equal(c->during_ns, 1000000);
	assert_int_equal(c->first_step, 3);
	assert_int_equal(c->last_step, 5);
	char line[600];
	pt_capture_describe(c, line, sizeof line, 0);
	assert_non_null(strstr(line, "capture #1 (pid"));
	assert_non_null(strstr(line, "steps 3-5, 2 events"));
	assert_non_null(strstr(line, "start blocked 0.10 ms, stop 0.20 ms"));
	/* the status line: the saved file's name first, then the ratio */
	struct pt_capture cb = *c;
	snprintf(cb.saved, sizeof cb.saved, "/some/dir/proftop-capture-7-1.json");
	pt_capture_describe(&cb, line, sizeof line, 1);
	assert_string_equal(line, "capture #1: saved proftop-capture-7-1.json, steps 3-5, step time "
				  "x1.00 (1.00 ms vs 1.00 ms before, 1.00 ms after)");
	/* a reader that attaches just after it ended merges it too: its first
	 * drain brought the steps before it */
	struct pt_session *s3;
	assert_int_equal(open_seg(&g, &s3), 0);
	struct pt_trace *t3 = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	struct pt_capture_follow f3 = {0};
	struct pt_capture *c3 = follow(s3, t3, &f3, 1, 0);
	assert_non_null(c3);
	assert_int_equal(c3->state, PT_CAPTURE_MERGED);
	assert_int_equal(c3->events, 2);
	assert_int_equal(c3->first_step, 3);
	pt_trace_free(t3);
	pt_session_close(s3);
	/* ... but not when no step of its trace ended before the capture began
	 * (the rings had lost them): the capture's steps may be missing */
	g.h->ctl.t0_ns = 1500000;
	assert_int_equal(open_seg(&g, &s3), 0);
	t3 = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	memset(&f3, 0, sizeof f3);
	assert_null(follow(s3, t3, &f3, 1, 0));
	assert_null(t3->captures);
	pt_trace_free(t3);
	pt_session_close(s3);
	g.h->ctl.t0_ns = 4000000;
	/* over: the next request gets #2; a cancel shows as such */
	assert_int_equal(pt_session_capture_request(s, 2, 0, 0, &seq, why, sizeof why), 0);
	assert_int_equal(seq, 2);
	assert_int_equal(pt_session_capture_cancel(s, 2), 0);
	assert_int_equal(pt_session_capture_cancel(s, 2), PT_ENOENT);
	c = follow(s, t, &f, 2, 0);
	assert_int_equal(c->state, PT_CAPTURE_CANCELLED);
	/* the helper's own failure, with its reason */
	assert_int_equal(pt_session_capture_request(s, 2, 0, 0, &seq, why, sizeof why), 0);
	answer(&g, 3, PT_SHM_CTL_FAILED, 0, "torch.profiler could not start: \x1b[31mboom");
	c = follow(s, t, &f, 3, 0);
	assert_int_equal(c->state, PT_CAPTURE_FAILED);
	pt_capture_describe(c, line, sizeof line, 1);
	assert_non_null(strstr(line, "failed: torch.profiler could not start"));
	assert_null(strchr(line, '\x1b')); /* escaped for the terminal */
	/* times that cannot be right: refused, nothing merged */
	assert_int_equal(pt_session_capture_request(s, 2, 0, 0, &seq, why, sizeof why), 0);
	g.h->ctl.sync_lo_ns = 4004000;
	g.h->ctl.sync_hi_ns = 4000000;
	uint64_t before = t->events_seen;
	answer(&g, 4, PT_SHM_CTL_DONE, 2, "x");
	c = follow(s, t, &f, 4, 0);
	assert_int_equal(c->state, PT_CAPTURE_FAILED);
	assert_non_null(strstr(c->msg, "inconsistent"));
	assert_int_equal(t->events_seen, before);
	/* a file without the marker: refused with the reason */
	assert_int_equal(pt_session_capture_request(s, 2, 0, 0, &seq, why, sizeof why), 0);
	g.h->ctl.sync_lo_ns = 4000000;
	g.h->ctl.sync_hi_ns = 4004000;
	assert_int_equal(pt_session_capture_file(s, 5, path, sizeof path), 0);
	write_file(path, "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,"
			 "\"ts\":1,\"dur\":1}]}");
	answer(&g, 5, PT_SHM_CTL_DONE, 2, "x");
	c = follow(s, t, &f, 5, 0);
	assert_int_equal(c->state, PT_CAPTURE_FAILED);
	assert_non_null(strstr(c->msg, "no marker proftop/sync#5"));
	unlink(path);
	/* a request the job never reaches, then the job exits */
	assert_int_equal(pt_session_capture_request(s, 2, 0, 0, &seq, why, sizeof why), 0);
	assert_int_equal(follow(s, t, &f, 6, 0)->state, PT_CAPTURE_ASKED);
	assert_int_equal(follow(s, t, &f, 6, 1)->state, PT_CAPTURE_CANCELLED);
	g.h->state = PT_SHM_EXITED;
	assert_int_equal(pt_session_capture_request(s, 2, 0, 0, &seq, why, sizeof why), PT_ENOENT);
	assert_non_null(strstr(why, "exit"));
	g.h->state = PT_SHM_RUNNING;
	/* a reader that attaches while a capture is asked for (or runs)
	 * follows it: the rings keep its steps */
	g.h->ctl.requester = 1;
	struct pt_session *s2;
	assert_int_equal(open_seg(&g, &s2), 0);
	struct pt_trace *t2 = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	struct pt_capture_follow f2 = {0};
	c = follow(s2, t2, &f2, 6, 0);
	assert_non_null(c);
	assert_int_equal(c->state, PT_CAPTURE_ASKED);
	assert_false(c->mine);
	pt_trace_free(t2);
	pt_session_close(s2);
	/* one that attaches after it is over does not: its steps may be older
	 * than what the reader has */
	answer(&g, 6, PT_SHM_CTL_CANCELLED, 0, "cancelled before it started");
	assert_int_equal(open_seg(&g, &s2), 0);
	t2 = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	memset(&f2, 0, sizeof f2);
	follow(s2, t2, &f2, 6, 0);
	assert_null(t2->captures);
	pt_trace_free(t2);
	pt_session_close(s2);
	assert_int_equal(pt_session_capture_file(s, 1, path, sizeof path), 0);
	unlink(path);
	pt_trace_free(t);
	pt_session_close(s);
	seg_free(&g);
}

/* The job's DONE read before the records of its captured steps are
 * drained (a loaded machine): the merge finds none of them, and the
 * capture's step figures come once they do, not never. */
static void test_capture_steps_after_done(void **state)
{
	(void)state;
	struct seg g;
	struct pt_trace *t;
	struct pt_shm_ring *r;
	uint32_t stepn;
	struct pt_session *s = capture_seg(&g, 2, 256, 3, &t, &r, &stepn);
	struct pt_capture_follow f = {0};
	char why[300], path[600];
	uint32_t seq = 0;
	g.h->ctl.caps = PT_SHM_CAP_CAPTURE;
	assert_int_equal(pt_session_capture_request(s, 3, 0, 0, &seq, why, sizeof why), 0);
	follow(s, t, &f, seq, 0);
	answer(&g, seq, PT_SHM_CTL_RUNNING, 1, NULL);
	follow(s, t, &f, seq, 0);
	assert_int_equal(pt_session_capture_file(s, seq, path, sizeof path), 0);
	write_file(path, "{\"traceEvents\":["
			 "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"proftop/sync#1\","
			 "\"pid\":9,\"tid\":7,\"ts\":1000,\"dur\":2},"
			 "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":9,"
			 "\"tid\":7,\"ts\":1010,\"dur\":5}]}");
	report(&g, 7000000);
	answer(&g, seq, PT_SHM_CTL_DONE, 3, NULL);
	struct pt_capture *c = follow(s, t, &f, seq, 0);
	assert_int_equal(c->state, PT_CAPTURE_MERGED);
	assert_int_equal(c->during_n, 0); /* its steps are still in the ring */
	assert_int_equal(c->before_n, 3);
	uint32_t gen = t->captures->gen;
	/* now they come, and the steps after it */
	for (int i = 4; i <= 12; i++)
		seg_push(&g, r, PT_KIND_PROFILE_STEP, stepn, i * 1000000ull, 1000000, 8);
	struct pt_shm_ctl ctl;
	pt_shm_ctl_read(pt_session_hdr(s), &ctl);
	pt_session_drain(s, t, pt_now_ns());
	pt_session_capture_follow(s, t, &ctl, &f, 0, pt_now_ns() + 1000000000ull);
	c = pt_capture_get(t, pt_session_pid(s), seq, 0);
	assert_true(c->during_n >= 3);
	assert_int_equal(c->first_step, 3);
	assert_true(t->captures->gen != gen); /* the screen redraws its line */
	char line[400];
	pt_capture_describe(c, line, sizeof line, 1);
	assert_non_null(strstr(line, "step time x"));
	unlink(path);
	pt_trace_free(t);
	pt_session_close(s);
	seg_free(&g);
}

/* With proftop's CUPTI collector in the job, torch captures CPU activity
 * only: the probe's own runtime call and kernel link to the captured aten
 * operator that encloses the launch, as in a Kineto trace. */
static void test_capture_links_kernels(void **state)
{
	(void)state;
	struct seg g;
	seg_make(&g, getpid(), 2, 256, 4096);
	uint32_t stepn = seg_str(&g, "ProfileStep"), k = seg_str(&g, "volta_sgemm_128x64_nn");
	uint32_t launch = seg_str(&g, "cudaLaunchKernel");
	struct pt_shm_ring *r = seg_ring(&g, 0, 100, "main");
	struct pt_shm_ring *rc = seg_ring(&g, 1, 101, "cupti");
	for (int i = 1; i <= 6; i++)
		seg_push(&g, r, PT_KIND_PROFILE_STEP, stepn, i * 1000000ull, 1000000, 8);
	seg_push(&g, r, PT_KIND_CUDA_RUNTIME, launch, 4100000, 20000, 0);
	seg_push(&g, r, PT_SHM_REC_EXT, 0, 77, 0, 0);
	seg_push(&g, rc, PT_SHM_REC_DEVICE, 0, 0, 0, 0);
	seg_push(&g, rc, PT_KIND_KERNEL, k, 4300000, 300000, 0);
	seg_push(&g, rc, PT_SHM_REC_EXT, 0, 77, 7, 0);
	struct pt_session *s;
	assert_int_equal(open_seg(&g, &s), 0);
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES * 4);
	struct pt_capture_follow f = {0};
	g.h->ctl.caps = PT_SHM_CAP_CAPTURE;
	char why[300], path[600];
	uint32_t seq;
	assert_int_equal(pt_session_capture_request(s, 2, 0, 0, &seq, why, sizeof why), 0);
	follow(s, t, &f, 1, 0);
	/* torch's trace, CPU only: the marker at 1000 us of its clock, an
	 * aten::mm from 1050 to 1250 us around the launch (4.1 ms session) */
	assert_int_equal(pt_session_capture_file(s, 1, path, sizeof path), 0);
	write_file(path,
		   "{\"traceEvents\":["
		   "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"proftop/sync#1\",\"pid\":9,"
		   "\"tid\":7,\"ts\":1000,\"dur\":2},"
		   "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":9,\"tid\":7,"
		   "\"ts\":1050,\"dur\":200,\"args\":{\"Input Dims\":[[64,128],[128,32]]}}]}");
	report(&g, 6000000); /* offset 3.001 ms: the mm is 4.051..4.251 ms */
	__atomic_store_n(&g.h->ctl.state, PT_SHM_CTL_STATE(1, PT_SHM_CTL_DONE, 2), __ATOMIC_RELEASE);
	struct pt_capture *c = follow(s, t, &f, 1, 0);
	assert_int_equal(c->state, PT_CAPTURE_MERGED);
	struct pt_summary *sum = pt_summarize(t, NULL);
	int linked = 0;
	for (size_t i = 0; i < sum->op_detail.n; i++) {
		const struct pt_row *row = &sum->op_detail.rows[i];
		if (row->is_device &&
		    !strcmp(pt_trace_str(t, row->name_id), "volta_sgemm_128x64_nn") &&
		    !strcmp(pt_trace_str(t, sum->op_detail.rows[row->parent].name_id), "aten::mm"))
			linked = 1;
	}
	assert_true(linked);
	int timed = 0;
	for (size_t i = 0; i < sum->operators.n; i++)
		if (!strcmp(pt_trace_str(t, sum->operators.rows[i].name_id), "aten::mm"))
			timed = sum->operators.rows[i].gpu.total_ns == 300000;
	assert_true(timed); /* the kernel's time is the operator's GPU time */
	pt_summary_free(sum);
	unlink(path);
	pt_trace_free(t);
	pt_session_close(s);
	seg_free(&g);
}


/*
 * A launched job's sessions are looked for every few milliseconds at first
 * (its rings wrap in milliseconds at high rates, and the probe overwrites
 * its oldest records until a reader attaches), then at the drain period;
 * --all's every PT_LIVE_SCAN_NS; pids given, never. A session of the job
 * that has recorded is opened at the first look that sees it.
 */
static void test_launch_scan_cadence(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(0);
	struct pt_live_result res;
	memset(&res, 0, sizeof res);
	struct pt_live_opts o = {0};
	o.session_ops = &pt_backend_session;
	o.launch_id = 0x5eed5eedull;

	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		alarm(60); /* gone on its own should the test fail before killing it */
		pause();
		_exit(0);
	}
	struct seg g; /* the child's segment (seg_make keeps only its own pid alive) */
	seg_make(&g, (int32_t)getpid(), 1, 64, 4096);
	char path[sizeof g.path];
	snprintf(path, sizeof path, "%s/%d.session", g_dir, (int)child);
	assert_int_equal(rename(g.path, path), 0);
	memcpy(g.path, path, sizeof path);
	g.h->pid = child;
	g.h->launch_id = o.launch_id;
	seg_ring(&g, 0, child, "main"); /* it has recorded: a ring claimed */

	struct live_multi *m = live_multi_new(&o, t, PT_LIVE_POLL_NS);
	uint64_t now = pt_now_ns();
	assert_true(live_multi_open_due(m) <= now);
	live_multi_open(m, now, &res);
	assert_int_equal(live_multi_live(m), 1);
	assert_int_equal(live_multi_first_pid(m), child);
	assert_int_equal(live_multi_open_due(m) - now, PT_LIVE_LAUNCH_SCAN_FAST_NS);
	uint64_t later = now + PT_LIVE_LAUNCH_FAST_NS + 1;
	live_multi_open(m, later, &res);
	assert_int_equal(live_multi_open_due(m) - later, PT_LIVE_POLL_NS);
	live_multi_free(m, &res);

	o.launch_id = 0;
	o.all_sessions = 1;
	m = live_multi_new(&o, t, PT_LIVE_POLL_NS);
	now = pt_now_ns();
	live_multi_open(m, now, &res);
	assert_int_equal(live_multi_open_due(m) - now, PT_LIVE_SCAN_NS);
	live_multi_free(m, &res);

	o.all_sessions = 0;
	int32_t pids[1] = {child};
	o.pids = pids;
	o.npids = 1;
	m = live_multi_new(&o, t, PT_LIVE_POLL_NS);
	assert_true(live_multi_open_due(m) == UINT64_MAX);
	live_multi_free(m, &res);

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	seg_free(&g);
	pt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_capture_protocol),
	    cmocka_unit_test(test_capture_file_hostile),
	    cmocka_unit_test(test_capture_steps_after_done),
	    cmocka_unit_test(test_capture_links_kernels),
	    cmocka_unit_test(test_launch_scan_cadence),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
