/*
 * minitrain.h - what the example trainer's files share (main.c: the
 * command line and the training loop; data.c: the synthetic task and the
 * loader; model.c: the MLP): the options, batches, the loader and the
 * model, and the annotation helpers, which skip the calls when
 * libproftop.so is absent.
 */
#ifndef MINITRAIN_H
#define MINITRAIN_H

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

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

/* main.c */
uint64_t now_ns(void);
void *xcalloc(size_t n, size_t size);
/* Sleeps ms milliseconds, whatever signals arrive meanwhile. */
void sleep_ms(double ms);

/* ---- annotation helpers (skip the calls when libproftop.so is absent) ---- */

static inline void op_push(const char *name)
{
	PROFTOP_OP_PUSH(name);
}
static inline void op_pop(void)
{
	PROFTOP_OP_POP();
}
static inline void phase_push(enum proftop_phase p)
{
	PROFTOP_PHASE_PUSH(p);
}
static inline void phase_pop(void)
{
	PROFTOP_PHASE_POP();
}

/* ---- deterministic random numbers (splitmix64 + Box-Muller) ---- */

struct rng {
	uint64_t s;
};

static inline uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform in (0, 1] */
static inline double rng_unit(struct rng *r)
{
	return ((double)(rng_next(r) >> 11) + 1.0) * 0x1.0p-53;
}

static inline float rng_gauss(struct rng *r)
{
	double u1 = rng_unit(r), u2 = rng_unit(r);
	return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

/* ---- data.c: the synthetic task (one Gaussian blob per class) and the
 * loader (synchronous, or N workers filling an in-order ring) ---- */

struct batch {
	uint64_t index;
	float *x;    /* batch x input */
	uint32_t *y; /* batch */
};

struct task {
	const struct options *opt;
	float *centroids; /* classes x input */
};

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

void task_init(struct task *t, const struct options *opt);
/* Sleeps to simulate slow input (decoding, disk), then generates batch
 * `index` from (seed, index) alone, so any thread can produce any batch. */
void task_read(const struct task *t, uint64_t index, struct batch *b);
void loader_init(struct loader *l, const struct task *t, const struct options *o);
/* Returns the next batch in order; the caller releases it with loader_release(). */
struct batch *loader_next(struct loader *l);
void loader_release(struct loader *l);
void loader_destroy(struct loader *l);

/* ---- model.c ---- */

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

void model_init(struct model *md, const struct options *o);
void model_free(struct model *md);
/* Forward through the loss; leaves the probabilities in md->p, returns the mean loss. */
double model_forward(struct model *md, const struct batch *b, uint32_t m);
void model_backward(struct model *md, const struct batch *b, uint32_t m);
void model_sgd(struct model *md, float lr);

#endif
