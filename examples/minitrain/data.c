/*
 * data.c - minitrain's input: the synthetic task (one Gaussian blob per
 * class; batch i is a pure function of (seed, i), so any thread can make
 * any batch) and the loader: synchronous, or N worker threads filling an
 * in-order ring of prefetched batches.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "minitrain.h"

void task_init(struct task *t, const struct options *opt)
{
	struct rng r = {opt->seed ^ 0x5eed5eed5eedull};
	t->opt = opt;
	t->centroids = xcalloc((size_t)opt->classes * opt->input, sizeof(float));
	for (size_t i = 0; i < (size_t)opt->classes * opt->input; i++)
		t->centroids[i] = 0.2f * rng_gauss(&r);
}

/* Sleeps to simulate slow input (decoding, disk), then generates batch
 * `index` from (seed, index) alone, so any thread can produce any batch. */
void task_read(const struct task *t, uint64_t index, struct batch *b)
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

struct worker_arg {
	struct loader *l;
	uint32_t id;
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

void loader_init(struct loader *l, const struct task *t, const struct options *o)
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
struct batch *loader_next(struct loader *l)
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

void loader_release(struct loader *l)
{
	if (l->workers == 0)
		return;
	pthread_mutex_lock(&l->mu);
	l->slots[l->next_take % l->nslots].ready = 0;
	l->next_take++;
	pthread_cond_broadcast(&l->cv_free);
	pthread_mutex_unlock(&l->mu);
}

void loader_destroy(struct loader *l)
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
