/*
 * probe_nccl.c - NCCL's profiler plugin, in the probe (probe_nccl.h): a GPU
 * job's collectives with device timing and no Python. NCCL loads it when
 * NCCL_PROFILER_PLUGIN names libproftop.so (`proftop run|record|serve`
 * set it for the job unless it is set already) and finds ncclProfiler_v4,
 * _v5 or _v6, whichever is the newest it knows.
 *
 * Per communicator (init) the group is "nccl:" and its name (else its hash
 * or id in hex), with its size. For each collective NCCL starts a Coll
 * event when the host enqueues it: a collective row is entered then (so a
 * rank stuck before it is missing from the hang, colls.h), on the enqueuing
 * thread. Its kernel's channels then start and stop (KernelCh events, on
 * NCCL's proxy thread), each with the GPU's global timer at its start and
 * stop; when the last channel has stopped and the Coll event too, the row
 * is completed with the first channel's start as the arrival and the last
 * stop as the end (PT_COLL_DEVICE | PT_COLL_ASYNC), both moved to the
 * session clock by the smallest host-less-GPU difference seen so far (each
 * timer is read by the host after the GPU wrote it, so the smallest
 * difference is the offset plus the shortest delay). Send and Recv are the
 * same with PT_COLL_P2P and a count of their own per communicator for seq.
 * bytes: what this rank puts in (ReduceScatter: count x ranks).
 *
 * Operations live in a fixed pool (no allocation on NCCL's paths); a
 * channel's handle is its operation's address with the low bit set, so
 * channels never need room. A full pool first takes back operations
 * enqueued over a minute ago whose channels never came (counted), then
 * refuses the new one, which NCCL then does not report (counted,
 * pt_nccl_stats). One mutex guards the pool and the counts, since the
 * enqueuing thread and the proxy thread both touch an operation. With the
 * probe off (no session, a forked child) init asks NCCL for no events.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_int.h"
#include "probe_nccl.h"
#include "proftop/coll.h"
#include "proftop/proftop.h"

#if defined(PT_HAVE_CUDA_HEADERS) && __has_include(<nccl.h>)
/* only to check the result codes against NCCL's own (nccl.h has
 * declarations without prototypes) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop
_Static_assert((int)ncclSuccess == PT_NCCL_SUCCESS, "ncclSuccess");
_Static_assert((int)ncclInternalError == PT_NCCL_INTERNAL_ERROR, "ncclInternalError");
#endif

#define G pt_probe_g
#define POOL 16384u

#define STALE_NS 60000000000ull /* an operation whose channels never came */

enum { EV_FREE = 0, EV_OP };

struct comm {
	uint32_t group;       /* interned "nccl:NAME" */
	uint32_t nranks;
	uint64_t p2p_seq;     /* Send/Recv have no number from NCCL */
};

struct ev {
	uint8_t kind;         /* EV_* */
	uint8_t p2p;
	uint8_t nchannels;    /* channels its kernel runs on (0: none reported) */
	uint8_t started, stopped;
	uint8_t enqueued_done;/* the Coll/P2p event stopped (enqueued) */
	struct comm *comm;
	uint64_t enq_ns;      /* when it was enqueued (session clock) */
	uint32_t op;          /* interned op name */
	uint64_t seq, bytes;
	uint64_t gpu0, gpu1;  /* GPU timer: first channel start, last channel stop (0: none) */
	uint64_t host0, host1;/* the host's reading of each, session clock */
	struct ev *next_free;
};

static struct ev pool[POOL];
static struct ev *free_list;
static uint32_t used, carved;
static uint64_t refused, abandoned;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
/* host - GPU, smallest seen (INT64_MAX: none yet) */
static int64_t gpu_off = INT64_MAX;

void pt_nccl_stats(uint32_t *in_use, uint64_t *refused_out, uint64_t *abandoned_out)
{
	pthread_mutex_lock(&mu);
	*in_use = used;
	*refused_out = refused;
	*abandoned_out = abandoned;
	pthread_mutex_unlock(&mu);
}

/* A channel's handle: its operation, tagged (NCCL never looks inside a handle). */
static void *channel_handle(struct ev *op)
{
	return (void *)((uintptr_t)op | 1u);
}

static struct ev *channel_op(void *handle)
{
	return (uintptr_t)handle & 1u ? (struct ev *)((uintptr_t)handle & ~(uintptr_t)1u) : NULL;
}

static void ev_free(struct ev *e)
{
	e->kind = EV_FREE;
	e->next_free = free_list;
	free_list = e;
	used--;
}

/* Under mu: the pool is full; operations enqueued long ago whose channels
 * never came (or never all stopped) are let go. */
static void reclaim(uint64_t now)
{
	for (uint32_t i = 0; i < carved; i++) {
		struct ev *e = &pool[i];
		if (e->kind == EV_OP && e->enqueued_done && now - e->enq_ns > STALE_NS) {
			ev_free(e);
			abandoned++;
		}
	}
}

/* Under mu. */
static struct ev *ev_new(uint64_t now)
{
	if (!free_list && carved == POOL)
		reclaim(now);
	struct ev *e = free_list;
	if (e)
		free_list = e->next_free;
	else if (carved < POOL)
		e = &pool[carved++];
	if (!e) {
		refused++;
		return NULL;
	}
	memset(e, 0, sizeof *e);
	e->kind = EV_OP;
	e->enq_ns = now;
	used++;
	return e;
}

static int probe_on(void)
{
	return __atomic_load_n(&G.state, __ATOMIC_ACQUIRE) == PT_PROBE_ON && !G.forked;
}

/* "AllReduce" -> "all_reduce", "Send" -> "send" (NCCL's names, in the
 * helper's words, so both read alike). */
static uint32_t op_name(const char *func)
{
	char buf[40];
	size_t n = 0;
	for (const char *p = func ? func : "unknown"; *p && n + 2 < sizeof buf; p++) {
		char c = *p;
		if (c >= 'A' && c <= 'Z') {
			if (n)
				buf[n++] = '_';
			c = (char)(c - 'A' + 'a');
		}
		buf[n++] = c;
	}
	buf[n] = 0;
	return proftop_name(buf);
}

/* Bytes of an element from NCCL's type name: its first number, in bits
 * ("ncclFloat32" 4, "ncclBfloat16" 2, "ncclFloat8e4m3" 1); 0 unknown. */
static uint64_t type_bytes(const char *t)
{
	if (!t)
		return 0;
	while (*t && (*t < '0' || *t > '9'))
		t++;
	unsigned bits = 0;
	while (*t >= '0' && *t <= '9' && bits < 1024)
		bits = bits * 10 + (unsigned)(*t++ - '0');
	return bits / 8;
}

static void *comm_new(const char *name, uint64_t id, int nranks)
{
	struct comm *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	char g[96];
	if (name && *name)
		snprintf(g, sizeof g, "nccl:%.80s", name);
	else
		snprintf(g, sizeof g, "nccl:%016llx", (unsigned long long)id);
	c->group = proftop_name(g);
	c->nranks = nranks > 0 ? (uint32_t)nranks : 0;
	return c;
}

static int mask_on(int *mask)
{
	*mask = probe_on() ? (PT_NCCL_EV_COLL | PT_NCCL_EV_P2P | PT_NCCL_EV_KERNEL_CH) : 0;
	return PT_NCCL_SUCCESS;
}

static pt_nccl_result init_v4(void **ctx, int *mask, const char *comm_name, uint64_t comm_hash,
			      int nnodes, int nranks, int rank, pt_nccl_logger log)
{
	(void)nnodes, (void)rank, (void)log;
	*ctx = comm_new(comm_name, comm_hash, nranks);
	if (!*ctx)
		return PT_NCCL_INTERNAL_ERROR;
	return mask_on(mask);
}

static pt_nccl_result init_v5(void **ctx, uint64_t comm_id, int *mask, const char *comm_name,
			      int nnodes, int nranks, int rank, pt_nccl_logger log)
{
	(void)nnodes, (void)rank, (void)log;
	*ctx = comm_new(comm_name, comm_id, nranks);
	if (!*ctx)
		return PT_NCCL_INTERNAL_ERROR;
	return mask_on(mask);
}

static pt_nccl_result finalize(void *ctx)
{
	free(ctx);
	return PT_NCCL_SUCCESS;
}

/* The GPU timer g, read by the host at h: the offset estimate narrows. */
static void saw_timer(uint64_t g, uint64_t h)
{
	if (!g || !h)
		return;
	int64_t d = (int64_t)(h - g);
	int64_t cur = __atomic_load_n(&gpu_off, __ATOMIC_RELAXED);
	while (d < cur && !__atomic_compare_exchange_n(&gpu_off, &cur, d, 1, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
}

/* Under mu: e (an operation) is over once enqueued and all its channels
 * stopped (the caller then completes it, outside mu). */
static int op_over(struct ev *e)
{
	return e->enqueued_done &&
	       (e->nchannels ? e->stopped >= e->nchannels && e->stopped >= e->started
			     : e->stopped >= e->started);
}

static void complete(const struct ev *e)
{
	uint64_t start = 0, end = 0;
	int64_t off = __atomic_load_n(&gpu_off, __ATOMIC_RELAXED);
	if (e->gpu0 && e->gpu1 >= e->gpu0 && off != INT64_MAX) {
		start = (uint64_t)((int64_t)e->gpu0 + off);
		end = (uint64_t)((int64_t)e->gpu1 + off);
	} else if (e->host0) { /* no GPU timer: when the host saw the channels */
		start = e->host0;
		end = e->host1 > e->host0 ? e->host1 : e->host0;
	}
	uint32_t flags = PT_COLL_ASYNC | PT_COLL_DEVICE | (e->p2p ? PT_COLL_P2P : 0);
	pt_probe_coll_done_at(e->op, e->comm->group, e->seq, start, end, e->bytes, e->comm->nranks,
			      flags);
}

static pt_nccl_result start_op(struct comm *c, void **handle, uint64_t type,
			       const union pt_nccl_descr_body *u)
{
	int p2p = type == PT_NCCL_EV_P2P;
	uint32_t op = op_name(p2p ? u->p2p.func : u->coll.func);
	uint64_t now = proftop_now();
	pthread_mutex_lock(&mu);
	struct ev *e = ev_new(now);
	if (e) {
		e->comm = c;
		e->p2p = (uint8_t)p2p;
		e->op = op;
		if (p2p) {
			e->seq = ++c->p2p_seq;
			e->bytes = u->p2p.count * type_bytes(u->p2p.datatype);
			e->nchannels = u->p2p.nchannels;
		} else {
			e->seq = u->coll.seq;
			e->bytes = u->coll.count * type_bytes(u->coll.datatype);
			if (!strcmp(u->coll.func ? u->coll.func : "", "ReduceScatter") && c->nranks)
				e->bytes *= c->nranks; /* count is what each rank receives */
			e->nchannels = u->coll.nchannels;
		}
	}
	pthread_mutex_unlock(&mu);
	*handle = e;
	if (e)
		proftop_coll_enter(op, c->group, e->seq, e->bytes, c->nranks,
				   PT_COLL_ASYNC | PT_COLL_DEVICE | (p2p ? PT_COLL_P2P : 0));
	return PT_NCCL_SUCCESS;
}

static pt_nccl_result start_channel(void **handle, void *parent,
				    const union pt_nccl_descr_body *u)
{
	struct ev *p = parent;
	uint64_t now = proftop_now();
	saw_timer(u->kernel_ch.ptimer, now);
	*handle = NULL;
	if (!p || channel_op(parent))
		return PT_NCCL_SUCCESS;
	pthread_mutex_lock(&mu);
	if (p->kind == EV_OP) {
		p->started++;
		if (u->kernel_ch.ptimer && (!p->gpu0 || u->kernel_ch.ptimer < p->gpu0))
			p->gpu0 = u->kernel_ch.ptimer;
		if (!p->host0 || now < p->host0)
			p->host0 = now;
		*handle = channel_handle(p);
	}
	pthread_mutex_unlock(&mu);
	return PT_NCCL_SUCCESS;
}

static pt_nccl_result start_any(void *ctx, void **handle, uint64_t type, void *parent,
				const union pt_nccl_descr_body *u)
{
	*handle = NULL;
	if (!ctx || !probe_on())
		return PT_NCCL_SUCCESS;
	if (type == PT_NCCL_EV_COLL || type == PT_NCCL_EV_P2P)
		return start_op(ctx, handle, type, u);
	if (type == PT_NCCL_EV_KERNEL_CH)
		return start_channel(handle, parent, u);
	return PT_NCCL_SUCCESS;
}

static pt_nccl_result start_v4(void *ctx, void **handle, struct pt_nccl_descr_v4 *d)
{
	return start_any(ctx, handle, d->type, d->parent, &d->u);
}

static pt_nccl_result start_v5(void *ctx, void **handle, struct pt_nccl_descr_v5 *d)
{
	return start_any(ctx, handle, d->type, d->parent, &d->u);
}

static pt_nccl_result stop_event(void *handle)
{
	struct ev *ch = channel_op(handle), *e = ch ? ch : handle, *done = NULL;
	if (!e)
		return PT_NCCL_SUCCESS;
	uint64_t now = proftop_now();
	struct ev copy;
	pthread_mutex_lock(&mu);
	if (e->kind == EV_OP) {
		if (ch) {
			e->stopped++;
			if (now > e->host1)
				e->host1 = now;
		} else {
			e->enqueued_done = 1;
		}
		done = op_over(e) ? e : NULL;
	}
	if (done) {
		copy = *done;
		ev_free(done);
	}
	pthread_mutex_unlock(&mu);
	if (done)
		complete(&copy);
	return PT_NCCL_SUCCESS;
}

static pt_nccl_result record_state(void *handle, int state, union pt_nccl_state_args *args)
{
	struct ev *e = channel_op(handle);
	if (!e || state != PT_NCCL_STATE_KERNEL_CH_STOP || !args)
		return PT_NCCL_SUCCESS;
	uint64_t g = args->kernel_ch.ptimer, now = proftop_now();
	saw_timer(g, now);
	pthread_mutex_lock(&mu);
	if (e->kind == EV_OP && g > e->gpu1)
		e->gpu1 = g;
	pthread_mutex_unlock(&mu);
	return PT_NCCL_SUCCESS;
}

PT_EXPORT const struct pt_nccl_profiler_v4 ncclProfiler_v4 = {
	"proftop", init_v4, start_v4, stop_event, record_state, finalize,
};
PT_EXPORT const struct pt_nccl_profiler_v5 ncclProfiler_v5 = {
	"proftop", init_v5, start_v5, stop_event, record_state, finalize,
};
/* v6's entry points take what v5's do, as far as this plugin reads */
PT_EXPORT const struct pt_nccl_profiler_v5 ncclProfiler_v6 = {
	"proftop", init_v5, start_v5, stop_event, record_state, finalize,
};
