/*
 * test_probe_nccl.c - NCCL's profiler plugin in the probe (probe_nccl.c),
 * driven through the symbols NCCL looks up (ncclProfiler_v4, _v5, _v6) the
 * way NCCL calls them: init per communicator; a collective's Coll event
 * started and stopped on the enqueuing thread; its kernel's channels
 * started, their stop state recorded with the GPU timer, and stopped, on
 * another thread (NCCL's proxy); finalize. Checked in the rings: the entry
 * at the enqueue, the completion once the last channel and the enqueue
 * are both over, its times moved from the GPU timer to the session clock,
 * op and group names, bytes, flags, Send/Recv, a full pool.
 */
#include "probe_util.h"

#include "../../backends/probe_nccl.h"
#include "proftop/coll.h"

extern const struct pt_nccl_profiler_v4 ncclProfiler_v4;
extern const struct pt_nccl_profiler_v5 ncclProfiler_v5, ncclProfiler_v6;

#define OFF_NS 5000000000ll /* the GPU timer runs 5 s behind the session clock */

struct got {
	int done;
	uint64_t time_ns, start_ns, seq, bytes, group_size;
	uint32_t flags;
	const char *op, *group;
};

/* The collective records of ring r (enter / done with their group records). */
static int colls(struct pt_shm_ring *r, struct got *out, int max)
{
	struct pt_shm_rec recs[128];
	int n = drain(r, recs, 128), k = 0;
	for (int i = 0; i + 1 < n && k < max; i++) {
		if (recs[i].kind != PT_SHM_REC_COLL)
			continue;
		assert_int_equal(recs[i + 1].kind, PT_SHM_REC_COLL_GROUP);
		struct got *g = &out[k++];
		g->done = recs[i].flags & PT_SHM_COLL_DONE;
		g->time_ns = recs[i].start_ns;
		g->seq = recs[i].dur_ns;
		g->bytes = recs[i].arg;
		g->flags = recs[i].aux;
		g->op = nm(recs[i].name);
		g->group = nm(recs[i + 1].name);
		g->start_ns = recs[i + 1].start_ns;
		g->group_size = recs[i + 1].dur_ns;
		i++;
	}
	return k;
}

/* NCCL's proxy thread: the channels of one collective. */
struct proxy {
	const struct pt_nccl_profiler_v5 *p;
	void *ctx, *parent;
	int nch;
	uint64_t g0, g1; /* the GPU timer values it reports */
	struct pt_shm_ring *ring;
};

static void *proxy_run(void *arg)
{
	struct proxy *x = arg;
	x->ring = my_ring();
	void *h[8];
	for (int c = 0; c < x->nch; c++) {
		struct pt_nccl_descr_v5 d;
		memset(&d, 0, sizeof d);
		d.type = PT_NCCL_EV_KERNEL_CH;
		d.parent = x->parent;
		d.u.kernel_ch.channel = (uint8_t)c;
		/* read on the GPU 20 us before the host sees it; later channels later */
		x->g0 = x->g0 ? x->g0 : (uint64_t)((int64_t)proftop_now() - OFF_NS - 20000);
		d.u.kernel_ch.ptimer = x->g0 + (uint64_t)c * 1000;
		assert_int_equal(x->p->start_event(x->ctx, &h[c], &d), PT_NCCL_SUCCESS);
		assert_non_null(h[c]);
	}
	for (int c = 0; c < x->nch; c++) {
		union pt_nccl_state_args a;
		memset(&a, 0, sizeof a);
		/* the stop seen 3 us after the GPU wrote it: the smallest delay */
		a.kernel_ch.ptimer = (uint64_t)((int64_t)proftop_now() - OFF_NS - 3000);
		if (a.kernel_ch.ptimer > x->g1)
			x->g1 = a.kernel_ch.ptimer;
		assert_int_equal(x->p->record_event_state(h[c], PT_NCCL_STATE_KERNEL_CH_STOP, &a),
				 PT_NCCL_SUCCESS);
		assert_int_equal(x->p->stop_event(h[c]), PT_NCCL_SUCCESS);
	}
	return NULL;
}

static void run_proxy(struct proxy *x)
{
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, proxy_run, x), 0);
	pthread_join(th, NULL);
}

static void test_collective(void **state)
{
	(void)state;
	set_reader(1);
	struct pt_shm_ring *main_ring = my_ring();
	struct got g[8];
	colls(main_ring, g, 8); /* what came before */
	for (int v = 5; v <= 6; v++) {
		const struct pt_nccl_profiler_v5 *p = v == 5 ? &ncclProfiler_v5 : &ncclProfiler_v6;
		assert_string_equal(p->name, "proftop");
		void *ctx = NULL;
		int mask = 0;
		assert_int_equal(p->init(&ctx, 0xabcull, &mask, "tp-group", 1, 4, 2, NULL),
				 PT_NCCL_SUCCESS);
		assert_int_equal(mask, PT_NCCL_EV_COLL | PT_NCCL_EV_P2P | PT_NCCL_EV_KERNEL_CH);
		/* AllReduce of 1024 floats on 2 channels, seq 7 */
		struct pt_nccl_descr_v5 d;
		memset(&d, 0, sizeof d);
		d.type = PT_NCCL_EV_COLL;
		d.rank = 2;
		d.u.coll.seq = 7;
		d.u.coll.func = "AllReduce";
		d.u.coll.count = 1024;
		d.u.coll.datatype = "ncclFloat32";
		d.u.coll.nchannels = 2;
		void *op;
		uint64_t t0 = proftop_now();
		assert_int_equal(p->start_event(ctx, &op, &d), PT_NCCL_SUCCESS);
		assert_non_null(op);
		/* enqueued: the entry is in, nothing completes before the kernel ends */
		assert_int_equal(p->stop_event(op), PT_NCCL_SUCCESS);
		assert_int_equal(colls(main_ring, g, 8), 1);
		assert_false(g[0].done);
		assert_string_equal(g[0].op, "all_reduce");
		assert_string_equal(g[0].group, "nccl:tp-group");
		assert_int_equal(g[0].seq, 7);
		assert_int_equal(g[0].bytes, 4096);
		assert_int_equal(g[0].group_size, 4);
		assert_int_equal(g[0].flags, PT_COLL_ASYNC | PT_COLL_DEVICE);
		assert_true(g[0].time_ns >= t0);
		struct proxy x = {p, ctx, op, 2, 0, 0, NULL};
		run_proxy(&x);
		/* completed on the proxy thread, on the session clock */
		assert_int_equal(colls(x.ring, g, 8), 1);
		assert_true(g[0].done);
		assert_int_equal(g[0].seq, 7);
		assert_int_equal(g[0].flags, PT_COLL_ASYNC | PT_COLL_DEVICE);
		/* offset: the smallest host - GPU difference, 3 us past the true one
		 * and never less (the host reads after the GPU wrote) */
		int64_t s = (int64_t)g[0].start_ns - ((int64_t)x.g0 + OFF_NS);
		int64_t e = (int64_t)g[0].time_ns - ((int64_t)x.g1 + OFF_NS);
		print_message("# v%d: start %+lld ns, end %+lld ns from the true times\n", v,
			      (long long)s, (long long)e);
		assert_true(s >= 3000 && s < 50000000);
		assert_int_equal(s, e); /* one offset for both */
		assert_true(g[0].time_ns > g[0].start_ns);
		uint32_t in_use;
		uint64_t refused, abandoned;
		pt_nccl_stats(&in_use, &refused, &abandoned);
		assert_int_equal(in_use, 0);
		assert_int_equal(p->finalize(ctx), PT_NCCL_SUCCESS);
	}
	set_reader(0);
}

static void test_v4_and_p2p(void **state)
{
	(void)state;
	set_reader(1);
	struct pt_shm_ring *ring = my_ring();
	struct got g[8];
	colls(ring, g, 8);
	void *ctx = NULL;
	int mask = 0;
	/* v4: no name, the hash names the group */
	assert_int_equal(ncclProfiler_v4.init(&ctx, &mask, "", 0x1234ull, 1, 4, 0, NULL),
			 PT_NCCL_SUCCESS);
	assert_true(mask & PT_NCCL_EV_COLL);
	struct pt_nccl_descr_v4 d;
	memset(&d, 0, sizeof d);
	d.type = PT_NCCL_EV_COLL;
	d.u.coll.seq = 3;
	d.u.coll.func = "ReduceScatter";
	d.u.coll.count = 256; /* received by each of the 4 ranks */
	d.u.coll.datatype = "ncclBfloat16";
	d.u.coll.nchannels = 1;
	void *op, *ch;
	assert_int_equal(ncclProfiler_v4.start_event(ctx, &op, &d), PT_NCCL_SUCCESS);
	/* its channel runs and stops before the enqueue is over; no GPU timer */
	struct pt_nccl_descr_v4 c;
	memset(&c, 0, sizeof c);
	c.type = PT_NCCL_EV_KERNEL_CH;
	c.parent = op;
	assert_int_equal(ncclProfiler_v4.start_event(ctx, &ch, &c), PT_NCCL_SUCCESS);
	assert_int_equal(ncclProfiler_v4.stop_event(ch), PT_NCCL_SUCCESS);
	assert_int_equal(colls(ring, g, 8), 1); /* the entry only */
	assert_int_equal(ncclProfiler_v4.stop_event(op), PT_NCCL_SUCCESS);
	assert_int_equal(colls(ring, g, 8), 1);
	assert_true(g[0].done);
	assert_string_equal(g[0].op, "reduce_scatter");
	assert_string_equal(g[0].group, "nccl:0000000000001234");
	assert_int_equal(g[0].bytes, 256 * 2 * 4);
	/* the host's readings when the GPU gave none */
	assert_true(g[0].start_ns > 0 && g[0].time_ns >= g[0].start_ns);
	/* Send: numbered per communicator; bytes of float8 */
	memset(&d, 0, sizeof d);
	d.type = PT_NCCL_EV_P2P;
	d.u.p2p.func = "Send";
	d.u.p2p.count = 100;
	d.u.p2p.datatype = "ncclFloat8e4m3";
	d.u.p2p.peer = 1;
	for (int i = 0; i < 2; i++) {
		assert_int_equal(ncclProfiler_v4.start_event(ctx, &op, &d), PT_NCCL_SUCCESS);
		assert_int_equal(ncclProfiler_v4.stop_event(op), PT_NCCL_SUCCESS);
	}
	assert_int_equal(colls(ring, g, 8), 4);
	assert_string_equal(g[0].op, "send");
	assert_int_equal(g[0].bytes, 100);
	assert_int_equal(g[0].flags, PT_COLL_ASYNC | PT_COLL_DEVICE | PT_COLL_P2P);
	assert_int_equal(g[0].seq, 1);
	assert_int_equal(g[2].seq, 2);
	/* events the plugin does not ask for get no handle */
	memset(&d, 0, sizeof d);
	d.type = PT_NCCL_EV_PROXY_OP;
	assert_int_equal(ncclProfiler_v4.start_event(ctx, &op, &d), PT_NCCL_SUCCESS);
	assert_null(op);
	assert_int_equal(ncclProfiler_v4.stop_event(NULL), PT_NCCL_SUCCESS);
	assert_int_equal(ncclProfiler_v4.record_event_state(NULL, PT_NCCL_STATE_KERNEL_CH_STOP, NULL),
			 PT_NCCL_SUCCESS);
	assert_int_equal(ncclProfiler_v4.finalize(ctx), PT_NCCL_SUCCESS);
	set_reader(0);
}

/* More collectives in flight than the pool holds: the rest get no handle
 * (NCCL then reports nothing of them), counted; their channels need no
 * room; the pool comes back. */
static void test_full_pool(void **state)
{
	(void)state;
	void *ctx = NULL;
	int mask;
	assert_int_equal(ncclProfiler_v5.init(&ctx, 1, &mask, "big", 1, 2, 0, NULL), 0);
	enum { N = 16384 + 10 };
	void **h = calloc(N, sizeof *h);
	struct pt_nccl_descr_v5 d;
	memset(&d, 0, sizeof d);
	d.type = PT_NCCL_EV_COLL;
	d.u.coll.func = "AllGather";
	d.u.coll.datatype = "ncclInt8";
	d.u.coll.count = 1;
	d.u.coll.nchannels = 1;
	uint32_t in_use;
	uint64_t refused0, refused, abandoned;
	pt_nccl_stats(&in_use, &refused0, &abandoned);
	int got = 0;
	for (int i = 0; i < N; i++) {
		d.u.coll.seq = (uint64_t)i;
		ncclProfiler_v5.start_event(ctx, &h[i], &d);
		got += h[i] != NULL;
	}
	pt_nccl_stats(&in_use, &refused, &abandoned);
	assert_int_equal(got, 16384);
	assert_int_equal(refused - refused0, 10);
	for (int i = 0; i < N; i++) {
		if (!h[i])
			continue;
		struct pt_nccl_descr_v5 c;
		memset(&c, 0, sizeof c);
		c.type = PT_NCCL_EV_KERNEL_CH;
		c.parent = h[i];
		void *ch;
		ncclProfiler_v5.stop_event(h[i]);
		ncclProfiler_v5.start_event(ctx, &ch, &c); /* a channel still finds room */
		assert_non_null(ch);
		ncclProfiler_v5.stop_event(ch);
	}
	pt_nccl_stats(&in_use, &refused, &abandoned);
	assert_int_equal(in_use, 0);
	assert_int_equal(abandoned, 0);
	free(h);
	ncclProfiler_v5.finalize(ctx);
}

int main(int argc, char **argv)
{
	(void)argc;
	if (strchr(argv[0], '/'))
		g_self = argv[0]; /* as the other probe tests: the path of this binary */
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_collective),
	    cmocka_unit_test(test_v4_and_p2p),
	    cmocka_unit_test(test_full_pool),
	};
	return probe_done(cmocka_run_group_tests(tests, NULL, NULL));
}
