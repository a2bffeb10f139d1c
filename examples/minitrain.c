/*
 * minitrain.c - proftop's bundled example trainer: a real, small training
 * loop with no framework. A 3-layer MLP (input -> hidden -> hidden ->
 * classes, ReLU, softmax cross-entropy) learns a synthetic classification
 * task with hand-written forward and backward passes and plain SGD. The data
 * loader can be slow (--reader-ms: each batch costs a sleep plus generating
 * it) and can prefetch with worker threads (--workers N, a bounded in-order
 * queue), which reproduces Paddle's dataloader case study: with --workers 0
 * the training thread waits for every batch and the reader ratio is high;
 * with --workers 4 the batches are ready when asked for and IPS rises.
 *
 * The loop is annotated with proftop's C API (steps, the four phases,
 * per-layer operators with inner "matmul"/"bias_add" operators) through the
 * PROFTOP_WEAK symbols: without libproftop.so the symbols are null and every
 * call is skipped; with it preloaded (proftop run, or LD_PRELOAD) the dynamic
 * linker binds them to the library. Results do not depend on either: every
 * batch is a pure function of (seed, batch index) and the arithmetic runs on
 * one thread in a fixed order, so the same seed gives the same loss, bit for
 * bit, with or without proftop and with any number of workers.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* weak API symbols: the binary must run without libproftop.so */
#ifndef PROFTOP_WEAK
#define PROFTOP_WEAK
#endif
#include <proftop/proftop.h>

#define MAX_WORKERS 64

struct options {
	uint64_t steps; /* 0 = until stopped */
	uint32_t batch;
	uint32_t input;
	uint32_t hidden;
	uint32_t classes;
	double reader_ms;
	uint32_t workers;
	uint32_t queue; /* prefetched batches */
	double lr;
	uint64_t seed;
	uint64_t log_every;
	uint64_t slow_every; /* every Nth step (1-based) is slow, 0 = none */
	double slow_ms;      /* ...by this much extra time in its forward pass */
};

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p) {
		fprintf(stderr, "minitrain: out of memory\n");
		exit(1);
	}
	return p;
}

/* ---- annotation helpers (skip the calls when libproftop.so is absent) ---- */

static void op_push(const char *name)
{
	PROFTOP_OP_PUSH(name);
}
static void op_pop(void)
{
	PROFTOP_OP_POP();
}
static void phase_push(enum proftop_phase p)
{
	PROFTOP_PHASE_PUSH(p);
}
static void phase_pop(void)
{
	PROFTOP_PHASE_POP();
}

/* ---- deterministic random numbers (splitmix64 + Box-Muller) ---- */

struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform in (0, 1] */
static double rng_unit(struct rng *r)
{
	return ((double)(rng_next(r) >> 11) + 1.0) * 0x1.0p-53;
}

static float rng_gauss(struct rng *r)
{
	double u1 = rng_unit(r), u2 = rng_unit(r);
	return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

/* ---- the synthetic task: one Gaussian blob per class ---- */

struct batch {
	uint64_t index;
	float *x;    /* batch x input */
	uint32_t *y; /* batch */
};

struct task {
	const struct options *opt;
	float *centroids; /* classes x input */
};

static void task_init(struct task *t, const struct options *opt)
{
	struct rng r = {opt->seed ^ 0x5eed5eed5eedull};
	t->opt = opt;
	t->centroids = xcalloc((size_t)opt->classes * opt->input, sizeof(float));
	for (size_t i = 0; i < (size_t)opt->classes * opt->input; i++)
		t->centroids[i] = 0.2f * rng_gauss(&r);
}

/* Sleeps ms milliseconds, whatever signals arrive meanwhile. */
static void sleep_ms(double ms)
{
	if (!(ms > 0))
		return;
	uint64_t end = now_ns() + (uint64_t)(ms * 1e6);
	struct timespec ts = {(time_t)(end / 1000000000ull), (long)(end % 1000000000ull)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Sleeps to simulate slow input (decoding, disk), then generates batch
 * `index` from (seed, index) alone, so any thread can produce any batch. */
static void task_read(const struct task *t, uint64_t index, struct batch *b)
{
	const struct options *o = t->opt;
	sleep_ms(o->reader_ms);
	struct rng r = {o->seed * 0x100000001b3ull + index * 0x9e3779b97f4a7c15ull + 1};
	b->index = index;
	for (uint32_t i = 0; i < o->batch; i++) {
		uint32_t c = (uint32_t)(rng_next(&r) % o->classes);
		b->y[i] = c;
		const float *mu = t->centroids + (size_t)c * o->input;
		float *x = b->x + (size_t)i * o->input;
		for (uint32_t j = 0; j < o->input; j++)
			x[j] = mu[j] + rng_gauss(&r);
	}
}

/* ---- the loader: synchronous, or N workers filling an in-order ring ---- */

struct slot {
	struct batch b;
	int ready;
};

struct loader {
	const struct task *task;
	uint32_t workers, nslots;
	struct slot *slots;
	pthread_t tid[MAX_WORKERS];
	pthread_mutex_t mu;
	pthread_cond_t cv_ready; /* a slot became ready */
	pthread_cond_t cv_free;	 /* the consumer released a slot */
	uint64_t next_claim;	 /* next batch index a worker produces */
	uint64_t next_take;	 /* next batch index the trainer consumes */
	int quit;
	struct batch sync; /* workers == 0 */
	uint64_t sync_next;
};

static void batch_alloc(struct batch *b, const struct options *o)
{
	b->x = xcalloc((size_t)o->batch * o->input, sizeof(float));
	b->y = xcalloc(o->batch, sizeof(uint32_t));
}

static void batch_free(struct batch *b)
{
	free(b->x);
	free(b->y);
}

struct worker_arg {
	struct loader *l;
	uint32_t id;
};

static void *worker_main(void *p)
{
	struct worker_arg *wa = p;
	struct loader *l = wa->l;
	char name[16];
	snprintf(name, sizeof name, "loader-%u", wa->id);
	pthread_setname_np(pthread_self(), name);
	for (;;) {
		pthread_mutex_lock(&l->mu);
		/* claim the next index, but only once its slot is free */
		while (!l->quit && l->next_claim >= l->next_take + l->nslots)
			pthread_cond_wait(&l->cv_free, &l->mu);
		if (l->quit) {
			pthread_mutex_unlock(&l->mu);
			break;
		}
		uint64_t idx = l->next_claim++;
		struct slot *s = &l->slots[idx % l->nslots];
		pthread_mutex_unlock(&l->mu);

		PROFTOP_RANGE_PUSH("data: read_batch");
		task_read(l->task, idx, &s->b);
		PROFTOP_RANGE_POP();

		pthread_mutex_lock(&l->mu);
		s->ready = 1;
		pthread_cond_broadcast(&l->cv_ready);
		pthread_mutex_unlock(&l->mu);
	}
	free(wa);
	return NULL;
}

static void loader_init(struct loader *l, const struct task *t, const struct options *o)
{
	memset(l, 0, sizeof *l);
	l->task = t;
	l->workers = o->workers;
	if (l->workers == 0) {
		batch_alloc(&l->sync, o);
		return;
	}
	l->nslots = o->queue;
	l->slots = xcalloc(l->nslots, sizeof *l->slots);
	for (uint32_t i = 0; i < l->nslots; i++)
		batch_alloc(&l->slots[i].b, o);
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cv_ready, NULL);
	pthread_cond_init(&l->cv_free, NULL);
	/* workers never take SIGINT/SIGTERM: the training thread handles them */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (uint32_t i = 0; i < l->workers; i++) {
		struct worker_arg *wa = xcalloc(1, sizeof *wa);
		wa->l = l;
		wa->id = i;
		int rc = pthread_create(&l->tid[i], NULL, worker_main, wa);
		if (rc != 0) {
			fprintf(stderr, "minitrain: cannot start worker thread: %s\n",
				strerror(rc));
			exit(1);
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Returns the next batch in order; the caller releases it with loader_release(). */
static struct batch *loader_next(struct loader *l)
{
	if (l->workers == 0) {
		PROFTOP_RANGE_PUSH("data: read_batch");
		task_read(l->task, l->sync_next++, &l->sync);
		PROFTOP_RANGE_POP();
		return &l->sync;
	}
	pthread_mutex_lock(&l->mu);
	struct slot *s = &l->slots[l->next_take % l->nslots];
	/* the prefetch queue as the training finds it: batches ready (0: it waits) */
	if (proftop_counter) {
		uint32_t ready = 0;
		for (uint32_t i = 0; i < l->nslots; i++)
			ready += l->slots[i].ready != 0;
		if (l->next_take == 0)
			proftop_counter("Dataloader queue capacity", (double)l->nslots);
		proftop_counter("Dataloader queue", (double)ready);
	}
	while (!s->ready)
		pthread_cond_wait(&l->cv_ready, &l->mu);
	pthread_mutex_unlock(&l->mu);
	return &s->b;
}

static void loader_release(struct loader *l)
{
	if (l->workers == 0)
		return;
	pthread_mutex_lock(&l->mu);
	l->slots[l->next_take % l->nslots].ready = 0;
	l->next_take++;
	pthread_cond_broadcast(&l->cv_free);
	pthread_mutex_unlock(&l->mu);
}

static void loader_destroy(struct loader *l)
{
	if (l->workers == 0) {
		batch_free(&l->sync);
		return;
	}
	pthread_mutex_lock(&l->mu);
	l->quit = 1;
	pthread_cond_broadcast(&l->cv_free);
	pthread_mutex_unlock(&l->mu);
	for (uint32_t i = 0; i < l->workers; i++)
		pthread_join(l->tid[i], NULL);
	for (uint32_t i = 0; i < l->nslots; i++)
		batch_free(&l->slots[i].b);
	free(l->slots);
	pthread_mutex_destroy(&l->mu);
	pthread_cond_destroy(&l->cv_ready);
	pthread_cond_destroy(&l->cv_free);
}

/* ---- the model ---- */

struct linear {
	const char *name, *grad_name;
	uint32_t in, out;
	float *w, *b;	/* in x out, out */
	float *dw, *db; /* gradients */
	float *y;	/* batch x out: output (pre-activation) */
	float *dx;	/* batch x in: gradient w.r.t. the input */
};

struct model {
	struct linear l[3];
	float *h[2];  /* batch x hidden: ReLU outputs */
	float *dh[2]; /* gradients w.r.t. the ReLU outputs / inputs */
	float *p;     /* batch x classes: softmax probabilities, then dlogits */
};

static void linear_init(struct linear *l, const char *name, const char *grad_name, uint32_t in,
			uint32_t out, uint32_t batch, struct rng *r)
{
	l->name = name;
	l->grad_name = grad_name;
	l->in = in;
	l->out = out;
	l->w = xcalloc((size_t)in * out, sizeof(float));
	l->b = xcalloc(out, sizeof(float));
	l->dw = xcalloc((size_t)in * out, sizeof(float));
	l->db = xcalloc(out, sizeof(float));
	l->y = xcalloc((size_t)batch * out, sizeof(float));
	l->dx = xcalloc((size_t)batch * in, sizeof(float));
	float scale = sqrtf(2.0f / (float)in); /* He initialization for ReLU */
	for (size_t i = 0; i < (size_t)in * out; i++)
		l->w[i] = scale * rng_gauss(r);
}

static void linear_free(struct linear *l)
{
	free(l->w);
	free(l->b);
	free(l->dw);
	free(l->db);
	free(l->y);
	free(l->dx);
}

/* Four-float SIMD vectors (GCC/clang vector extensions): -O2's vectorizer
 * leaves loops of unknown trip count alone, and the matmuls are the step. */
typedef float v4sf __attribute__((vector_size(16)));

static v4sf v4_load(const float *p)
{
	v4sf v;
	memcpy(&v, p, sizeof v);
	return v;
}

/* y += a * x over n floats */
static void axpy(float *restrict y, float a, const float *restrict x, uint32_t n)
{
	uint32_t j = 0;
	for (; j + 4 <= n; j += 4) {
		v4sf v = v4_load(y + j) + a * v4_load(x + j);
		memcpy(y + j, &v, sizeof v);
	}
	for (; j < n; j++)
		y[j] += a * x[j];
}

/* sum of x[j] * y[j] over n floats (four partial sums, a fixed order) */
static float dot(const float *x, const float *y, uint32_t n)
{
	v4sf acc = {0, 0, 0, 0};
	uint32_t j = 0;
	for (; j + 4 <= n; j += 4)
		acc += v4_load(x + j) * v4_load(y + j);
	float s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
	for (; j < n; j++)
		s += x[j] * y[j];
	return s;
}

/* y[m x n] = x[m x k] * w[k x n] + b; i-k-j order keeps the inner loop contiguous. */
static void linear_forward(struct linear *l, const float *x, uint32_t m)
{
	op_push(l->name);
	op_push("matmul");
	memset(l->y, 0, (size_t)m * l->out * sizeof(float));
	for (uint32_t i = 0; i < m; i++) {
		float *y = l->y + (size_t)i * l->out;
		for (uint32_t k = 0; k < l->in; k++)
			axpy(y, x[(size_t)i * l->in + k], l->w + (size_t)k * l->out, l->out);
	}
	op_pop();
	op_push("bias_add");
	for (uint32_t i = 0; i < m; i++)
		for (uint32_t j = 0; j < l->out; j++)
			l->y[(size_t)i * l->out + j] += l->b[j];
	op_pop();
	op_pop();
}

/* Given dy [m x out]: dw = x^T dy, db = sum(dy), and dx = dy w^T when need_dx. */
static void linear_backward(struct linear *l, const float *x, const float *dy, uint32_t m,
			    int need_dx)
{
	op_push(l->grad_name);
	op_push("matmul"); /* dW */
	memset(l->dw, 0, (size_t)l->in * l->out * sizeof(float));
	for (uint32_t i = 0; i < m; i++) {
		const float *g = dy + (size_t)i * l->out;
		for (uint32_t k = 0; k < l->in; k++)
			axpy(l->dw + (size_t)k * l->out, x[(size_t)i * l->in + k], g, l->out);
	}
	op_pop();
	op_push("bias_grad");
	memset(l->db, 0, l->out * sizeof(float));
	for (uint32_t i = 0; i < m; i++)
		for (uint32_t j = 0; j < l->out; j++)
			l->db[j] += dy[(size_t)i * l->out + j];
	op_pop();
	if (need_dx) {
		op_push("matmul"); /* dX */
		for (uint32_t i = 0; i < m; i++) {
			const float *g = dy + (size_t)i * l->out;
			for (uint32_t k = 0; k < l->in; k++)
				l->dx[(size_t)i * l->in + k] =
				    dot(g, l->w + (size_t)k * l->out, l->out);
		}
		op_pop();
	}
	op_pop();
}

static void relu_forward(const char *name, const float *y, float *h, size_t n)
{
	op_push(name);
	for (size_t i = 0; i < n; i++)
		h[i] = y[i] > 0 ? y[i] : 0;
	op_pop();
}

/* dpre = dh where the pre-activation was positive */
static void relu_backward(const char *name, const float *y, const float *dh, float *dpre, size_t n)
{
	op_push(name);
	for (size_t i = 0; i < n; i++)
		dpre[i] = y[i] > 0 ? dh[i] : 0;
	op_pop();
}

static void model_init(struct model *md, const struct options *o)
{
	struct rng r = {o->seed};
	linear_init(&md->l[0], "linear1", "linear1_grad", o->input, o->hidden, o->batch, &r);
	linear_init(&md->l[1], "linear2", "linear2_grad", o->hidden, o->hidden, o->batch, &r);
	linear_init(&md->l[2], "linear3", "linear3_grad", o->hidden, o->classes, o->batch, &r);
	for (int i = 0; i < 2; i++) {
		md->h[i] = xcalloc((size_t)o->batch * o->hidden, sizeof(float));
		md->dh[i] = xcalloc((size_t)o->batch * o->hidden, sizeof(float));
	}
	md->p = xcalloc((size_t)o->batch * o->classes, sizeof(float));
}

static void model_free(struct model *md)
{
	for (int i = 0; i < 3; i++)
		linear_free(&md->l[i]);
	for (int i = 0; i < 2; i++) {
		free(md->h[i]);
		free(md->dh[i]);
	}
	free(md->p);
}

/* Forward through the loss; leaves the probabilities in md->p, returns the mean loss. */
static double model_forward(struct model *md, const struct batch *b, uint32_t m)
{
	size_t nh = (size_t)m * md->l[0].out;
	linear_forward(&md->l[0], b->x, m);
	relu_forward("relu1", md->l[0].y, md->h[0], nh);
	linear_forward(&md->l[1], md->h[0], m);
	relu_forward("relu2", md->l[1].y, md->h[1], nh);
	linear_forward(&md->l[2], md->h[1], m);

	op_push("softmax_xent");
	uint32_t c = md->l[2].out;
	double loss = 0;
	for (uint32_t i = 0; i < m; i++) {
		const float *z = md->l[2].y + (size_t)i * c;
		float *p = md->p + (size_t)i * c;
		float mx = z[0];
		for (uint32_t j = 1; j < c; j++)
			mx = z[j] > mx ? z[j] : mx;
		double sum = 0;
		for (uint32_t j = 0; j < c; j++) {
			p[j] = expf(z[j] - mx);
			sum += p[j];
		}
		for (uint32_t j = 0; j < c; j++)
			p[j] = (float)(p[j] / sum);
		loss -= log(p[b->y[i]] > 1e-30f ? p[b->y[i]] : 1e-30f);
	}
	op_pop();
	return loss / m;
}

static void model_backward(struct model *md, const struct batch *b, uint32_t m)
{
	uint32_t c = md->l[2].out;
	size_t nh = (size_t)m * md->l[0].out;
	op_push("softmax_xent_grad"); /* dlogits = (p - onehot) / m, in place */
	for (uint32_t i = 0; i < m; i++) {
		float *p = md->p + (size_t)i * c;
		p[b->y[i]] -= 1.0f;
		for (uint32_t j = 0; j < c; j++)
			p[j] /= (float)m;
	}
	op_pop();
	linear_backward(&md->l[2], md->h[1], md->p, m, 1);
	relu_backward("relu2_grad", md->l[1].y, md->l[2].dx, md->dh[1], nh);
	linear_backward(&md->l[1], md->h[0], md->dh[1], m, 1);
	relu_backward("relu1_grad", md->l[0].y, md->l[1].dx, md->dh[0], nh);
	linear_backward(&md->l[0], b->x, md->dh[0], m, 0);
}

static void model_sgd(struct model *md, float lr)
{
	for (int i = 0; i < 3; i++) {
		struct linear *l = &md->l[i];
		op_push("sgd");
		for (size_t k = 0; k < (size_t)l->in * l->out; k++)
			l->w[k] -= lr * l->dw[k];
		for (uint32_t k = 0; k < l->out; k++)
			l->b[k] -= lr * l->db[k];
		op_pop();
	}
}

/* ---- command line ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: minitrain [OPTIONS]\n"
		"Trains a small MLP on synthetic data, annotated for proftop.\n"
		"\n"
		"  --steps N       training steps (default 0: run until SIGINT/SIGTERM)\n"
		"  --batch N       samples per step (default 64)\n"
		"  --input N       input features (default 64)\n"
		"  --hidden N      width of both hidden layers (default 256)\n"
		"  --classes N     classes (default 10)\n"
		"  --reader-ms MS  time to read one batch: sleep MS, then generate it (default 0)\n"
		"  --workers N     loader threads that prefetch batches (default 0: the\n"
		"                  training thread reads each batch itself)\n"
		"  --queue N       batches the workers may prefetch (default 2 x workers)\n"
		"  --lr X          SGD learning rate (default 0.05)\n"
		"  --seed N        random seed for weights and data (default 1)\n"
		"  --log-every N   print the loss every N steps (default 100, 0 = never)\n"
		"  --slow-every N  make every Nth step slow (steps N, 2N, ...; default 0 = none)\n"
		"  --slow-ms MS    extra time a slow step sleeps in its forward pass (default 50)\n"
		"  --help          show this help\n"
		"\n"
		"Ends with one line: steps, final loss, mean step time and IPS (samples/s).\n"
		"Run it under proftop: proftop run -- minitrain --reader-ms 10 --workers 0\n");
}

static int bad_option(const char *msg, const char *arg)
{
	fprintf(stderr, "minitrain: %s%s%s\nTry 'minitrain --help'.\n", msg, arg ? ": " : "",
		arg ? arg : "");
	return 2;
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	if (!s || !*s)
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !(v >= min && v <= max))
		return -1;
	*out = v;
	return 0;
}

/* Returns 0, 1 (--help shown) or 2 (bad command line, message printed). */
static int parse_args(int argc, char **argv, struct options *o)
{
	enum {
		O_STEPS = 256,
		O_BATCH,
		O_INPUT,
		O_HIDDEN,
		O_CLASSES,
		O_READER,
		O_WORKERS,
		O_QUEUE,
		O_LR,
		O_SEED,
		O_LOG,
		O_SLOW_EVERY,
		O_SLOW_MS
	};
	static const struct option longopts[] = {
	    {"steps", required_argument, NULL, O_STEPS},
	    {"batch", required_argument, NULL, O_BATCH},
	    {"input", required_argument, NULL, O_INPUT},
	    {"hidden", required_argument, NULL, O_HIDDEN},
	    {"classes", required_argument, NULL, O_CLASSES},
	    {"reader-ms", required_argument, NULL, O_READER},
	    {"workers", required_argument, NULL, O_WORKERS},
	    {"queue", required_argument, NULL, O_QUEUE},
	    {"lr", required_argument, NULL, O_LR},
	    {"seed", required_argument, NULL, O_SEED},
	    {"log-every", required_argument, NULL, O_LOG},
	    {"slow-every", required_argument, NULL, O_SLOW_EVERY},
	    {"slow-ms", required_argument, NULL, O_SLOW_MS},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	*o = (struct options){.batch = 64,
			      .input = 64,
			      .hidden = 256,
			      .classes = 10,
			      .lr = 0.05,
			      .seed = 1,
			      .log_every = 100,
			      .slow_ms = 50};
	uint64_t queue = 0, v;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		const char *a = optarg;
		switch (c) {
		case O_STEPS:
			if (parse_u64(a, 0, UINT64_MAX, &o->steps))
				return bad_option("--steps needs a number >= 0", a);
			break;
		case O_BATCH:
			if (parse_u64(a, 1, 65536, &v))
				return bad_option("--batch needs a number from 1 to 65536", a);
			o->batch = (uint32_t)v;
			break;
		case O_INPUT:
			if (parse_u64(a, 1, 65536, &v))
				return bad_option("--input needs a number from 1 to 65536", a);
			o->input = (uint32_t)v;
			break;
		case O_HIDDEN:
			if (parse_u64(a, 1, 65536, &v))
				return bad_option("--hidden needs a number from 1 to 65536", a);
			o->hidden = (uint32_t)v;
			break;
		case O_CLASSES:
			if (parse_u64(a, 2, 65536, &v))
				return bad_option("--classes needs a number from 2 to 65536", a);
			o->classes = (uint32_t)v;
			break;
		case O_READER:
			if (parse_double(a, 0, 3600e3, &o->reader_ms))
				return bad_option("--reader-ms needs a number of milliseconds >= 0",
						  a);
			break;
		case O_WORKERS:
			if (parse_u64(a, 0, MAX_WORKERS, &v))
				return bad_option("--workers needs a number from 0 to 64", a);
			o->workers = (uint32_t)v;
			break;
		case O_QUEUE:
			if (parse_u64(a, 1, 4096, &queue))
				return bad_option("--queue needs a number from 1 to 4096", a);
			break;
		case O_LR:
			if (parse_double(a, 0, 1e6, &o->lr))
				return bad_option("--lr needs a number >= 0", a);
			break;
		case O_SEED:
			if (parse_u64(a, 0, UINT64_MAX, &o->seed))
				return bad_option("--seed needs a number >= 0", a);
			break;
		case O_LOG:
			if (parse_u64(a, 0, UINT64_MAX, &o->log_every))
				return bad_option("--log-every needs a number >= 0", a);
			break;
		case O_SLOW_EVERY:
			if (parse_u64(a, 0, UINT64_MAX, &o->slow_every))
				return bad_option("--slow-every needs a number >= 0", a);
			break;
		case O_SLOW_MS:
			if (parse_double(a, 0, 3600e3, &o->slow_ms))
				return bad_option("--slow-ms needs a number of milliseconds >= 0", a);
			break;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
			return bad_option("option needs a value", argv[optind - 1]);
		default:
			return bad_option("unknown option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return bad_option("unexpected argument", argv[optind]);
	if ((uint64_t)o->batch * o->input > (1u << 26) ||
	    (uint64_t)o->batch * o->hidden > (1u << 26) ||
	    (uint64_t)o->hidden * o->hidden > (1u << 28))
		return bad_option("model or batch too large", NULL);
	o->queue = queue ? (uint32_t)queue : (o->workers ? 2 * o->workers : 1);
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc == 1 ? 0 : rc;

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);

	int probe = proftop_enabled ? proftop_enabled() : 0;
	fprintf(stderr, "minitrain: proftop %s\n",
		probe		  ? "recording"
		: proftop_enabled ? "loaded, not recording"
				  : "not loaded");
	printf("minitrain: batch=%u input=%u hidden=%u classes=%u reader_ms=%g workers=%u "
	       "steps=%llu seed=%llu\n",
	       o.batch, o.input, o.hidden, o.classes, o.reader_ms, o.workers,
	       (unsigned long long)o.steps, (unsigned long long)o.seed);

	struct task task;
	struct model md;
	struct loader ld;
	task_init(&task, &o);
	model_init(&md, &o);
	loader_init(&ld, &task, &o);

	uint64_t step = 0;
	double loss = NAN;
	if (proftop_step_begin)
		proftop_step_begin();
	uint64_t t0 = now_ns();
	while (!g_stop && (o.steps == 0 || step < o.steps)) {
		phase_push(PROFTOP_PHASE_DATALOADER);
		struct batch *b = loader_next(&ld);
		phase_pop();

		phase_push(PROFTOP_PHASE_FORWARD);
		loss = model_forward(&md, b, o.batch);
		if (o.slow_every && (step + 1) % o.slow_every == 0)
			sleep_ms(o.slow_ms); /* a stall (GC, a checkpoint) for the anomaly recorder */
		phase_pop();

		phase_push(PROFTOP_PHASE_BACKWARD);
		model_backward(&md, b, o.batch);
		phase_pop();
		loader_release(&ld); /* the batch's input was needed until linear1_grad */

		phase_push(PROFTOP_PHASE_OPTIMIZATION);
		model_sgd(&md, (float)o.lr);
		phase_pop();

		PROFTOP_STEP(o.batch);
		step++;
		if (o.log_every && step % o.log_every == 0)
			printf("step %llu loss %.6f\n", (unsigned long long)step, loss);
	}
	double total_s = (double)(now_ns() - t0) * 1e-9;

	loader_destroy(&ld);
	double step_ms = step ? total_s * 1e3 / (double)step : 0;
	double ips = total_s > 0 ? (double)step * o.batch / total_s : 0;
	printf("minitrain: done steps=%llu loss=%.9g step_ms=%.3f ips=%.1f%s\n",
	       (unsigned long long)step, loss, step_ms, ips, g_stop ? " (stopped)" : "");
	model_free(&md);
	free(task.centroids);
	return 0;
}
