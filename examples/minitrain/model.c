/*
 * model.c - minitrain's model: a 3-layer MLP (input -> hidden -> hidden ->
 * classes, ReLU, softmax cross-entropy) with hand-written forward and
 * backward passes and plain SGD, each layer an annotated operator with
 * inner "matmul"/"bias_add" operators. The arithmetic runs on one thread in
 * a fixed order, so a seed gives the same loss bit for bit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "minitrain.h"

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

void model_init(struct model *md, const struct options *o)
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

void model_free(struct model *md)
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
double model_forward(struct model *md, const struct batch *b, uint32_t m)
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

void model_backward(struct model *md, const struct batch *b, uint32_t m)
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

void model_sgd(struct model *md, float lr)
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
