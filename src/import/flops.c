/*
 * flops.c - operator FLOPs and bytes from input shapes (flops.h): the
 * small parsers for the args torch writes ("Input Dims", "Input type",
 * "Concrete Inputs"), the formulas and the device peaks (the tables per
 * operator, per kernel and per step are flops_table.c's). The formulas are
 * in flops.h; the comments here say where an input sits in each aten
 * signature.
 */
#include "proftop/flops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/u32map.h"
#include "model/util.h"

#define MAX_IN 24
#define MAX_RANK 8
#define MAX_CV 4

enum {
	OP_NONE = 0,
	OP_MM,
	OP_ADDMM,
	OP_BMM,
	OP_BADDBMM,
	OP_MATMUL,
	OP_LINEAR,
	OP_CONV_NCHW,   /* conv1d/2d/3d: input, weight, bias, stride, padding, dilation, groups */
	OP_CONV_FULL,   /* convolution, _convolution: ..., dilation, transposed, output_padding, groups */
	OP_CONV_CUDNN,  /* cudnn_convolution: input, weight, padding, stride, dilation, groups */
	OP_CONV_MKLDNN, /* mkldnn_ / miopen_convolution: input, weight, bias, padding, stride, dilation, groups */
	OP_CONV_T,      /* conv_transpose1d/2d/3d: input, weight, ... (no output size needed) */
	OP_SDPA,
};

static const struct {
	const char *name;
	int op;
} op_names[] = {
    {"aten::mm", OP_MM},
    {"aten::addmm", OP_ADDMM},
    {"aten::bmm", OP_BMM},
    {"aten::baddbmm", OP_BADDBMM},
    {"aten::matmul", OP_MATMUL},
    {"aten::linear", OP_LINEAR},
    {"aten::conv1d", OP_CONV_NCHW},
    {"aten::conv2d", OP_CONV_NCHW},
    {"aten::conv3d", OP_CONV_NCHW},
    {"aten::convolution", OP_CONV_FULL},
    {"aten::_convolution", OP_CONV_FULL},
    {"aten::convolution_overrideable", OP_CONV_FULL},
    {"aten::cudnn_convolution", OP_CONV_CUDNN},
    {"aten::mkldnn_convolution", OP_CONV_MKLDNN},
    {"aten::miopen_convolution", OP_CONV_MKLDNN},
    {"aten::conv_transpose1d", OP_CONV_T},
    {"aten::conv_transpose2d", OP_CONV_T},
    {"aten::conv_transpose3d", OP_CONV_T},
    {"aten::scaled_dot_product_attention", OP_SDPA},
    {"aten::_scaled_dot_product_flash_attention", OP_SDPA},
    {"aten::_scaled_dot_product_flash_attention_for_cpu", OP_SDPA},
    {"aten::_scaled_dot_product_efficient_attention", OP_SDPA},
    {"aten::_scaled_dot_product_cudnn_attention", OP_SDPA},
    {"aten::_scaled_dot_product_attention_math", OP_SDPA},
};

/* Elementwise ops ("aten::" + name, and the in-place "name_"): how many
 * tensor inputs they read (later tensors, an `out=` argument, are not
 * inputs) and FLOPs per output element. */
static const struct {
	const char *name;
	uint8_t arity, per;
} elem[] = {
    {"add", 2, 1}, {"sub", 2, 1}, {"mul", 2, 1}, {"div", 2, 1}, {"pow", 2, 1},
    {"maximum", 2, 1}, {"minimum", 2, 1}, {"threshold_backward", 2, 1},
    {"gelu_backward", 2, 1}, {"silu_backward", 2, 1}, {"sigmoid_backward", 2, 1},
    {"tanh_backward", 2, 1}, {"where", 3, 1}, {"lerp", 3, 2}, {"addcmul", 3, 2},
    {"addcdiv", 3, 2}, {"relu", 1, 1}, {"gelu", 1, 1}, {"silu", 1, 1}, {"sigmoid", 1, 1},
    {"tanh", 1, 1}, {"neg", 1, 1}, {"exp", 1, 1}, {"log", 1, 1}, {"sqrt", 1, 1},
    {"rsqrt", 1, 1}, {"reciprocal", 1, 1}, {"abs", 1, 1}, {"sin", 1, 1}, {"cos", 1, 1},
    {"erf", 1, 1}, {"square", 1, 1}, {"mish", 1, 1}, {"hardswish", 1, 1},
    {"softplus", 1, 1}, {"leaky_relu", 1, 1}, {"hardtanh", 1, 1}, {"elu", 1, 1},
    {"clamp", 1, 1}, {"clamp_min", 1, 1}, {"clamp_max", 1, 1}, {"threshold", 1, 1},
};
/* op ids of the elementwise ops: OP_ELEM + index into elem[] */
#define OP_ELEM 64

int pt_flops_op(const char *name, size_t len)
{
	if (!name || len < 7 || memcmp(name, "aten::", 6) != 0)
		return OP_NONE;
	for (size_t i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
		if (strlen(op_names[i].name) == len && !memcmp(op_names[i].name, name, len))
			return op_names[i].op;
	const char *b = name + 6;
	size_t n = len - 6;
	if (n && b[n - 1] == '_')
		n--; /* in place */
	for (size_t i = 0; i < sizeof elem / sizeof elem[0]; i++)
		if (strlen(elem[i].name) == n && !memcmp(elem[i].name, b, n))
			return OP_ELEM + (int)i;
	return OP_NONE;
}

/* ---- the args' texts ---- */

struct input {
	int kind;               /* 0: nothing, 1: a tensor's dims, 2: a list of tensors */
	int rank;
	int64_t d[MAX_RANK];
	int es;                 /* element size from "Input type", 0 = unknown / not a tensor */
	int dtype;
	int typed;              /* a type string was there */
	int ncv;                /* "Concrete Inputs": numbers (a list, or one) */
	int64_t cv[MAX_CV];
	int cv_str;             /* a word that is not a number ('same', 'valid') */
	char word[8];
};

struct ins {
	int n;
	struct input in[MAX_IN];
};

static const char *ws(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
		p++;
	return p;
}

/* Skips one JSON value (nested arrays and strings); NULL when malformed. */
static const char *skip_val(const char *p, const char *e)
{
	int depth = 0;
	while (p < e) {
		char c = *p;
		if (c == '"') {
			p++;
			while (p < e && *p != '"')
				p += *p == '\\' ? 2 : 1;
			if (p >= e)
				return NULL;
			p++;
		} else if (c == '[' || c == '{') {
			depth++;
			p++;
		} else if (c == ']' || c == '}') {
			if (depth == 0)
				return p;
			depth--;
			p++;
			if (depth == 0)
				return p;
		} else if (c == ',' && depth == 0) {
			return p;
		} else {
			p++;
		}
	}
	return depth ? NULL : p;
}

static const char *read_int(const char *p, const char *e, int64_t *v, int *ok)
{
	int neg = 0;
	if (p < e && *p == '-') {
		neg = 1;
		p++;
	}
	uint64_t x = 0;
	int nd = 0;
	while (p < e && *p >= '0' && *p <= '9') {
		if (x < (uint64_t)1 << 60)
			x = x * 10 + (uint64_t)(*p - '0');
		p++;
		nd++;
	}
	*ok = nd > 0;
	*v = neg ? -(int64_t)x : (int64_t)x;
	return p;
}

/* "Input Dims": [[a, b], [], [[..], ..], ...] */
static void parse_dims(struct ins *a, const char *p, size_t len)
{
	const char *e = p + len;
	p = ws(p, e);
	if (p >= e || *p != '[')
		return;
	p = ws(p + 1, e);
	while (p < e && *p != ']' && a->n < MAX_IN) {
		struct input *in = &a->in[a->n++];
		if (*p == '[') {
			const char *q = ws(p + 1, e);
			if (q < e && *q == '[') {
				in->kind = 2;
			} else {
				in->kind = 1;
				while (q < e && *q != ']') {
					int64_t v;
					int ok;
					q = read_int(q, e, &v, &ok);
					if (!ok || in->rank == MAX_RANK) {
						in->kind = 0;
						break;
					}
					in->d[in->rank++] = v;
					q = ws(q, e);
					if (q < e && *q == ',')
						q = ws(q + 1, e);
				}
			}
		}
		p = skip_val(p, e);
		if (!p)
			return;
		p = ws(p, e);
		if (p < e && *p == ',')
			p = ws(p + 1, e);
		else
			break;
	}
}

static int type_size(const char *s, size_t n, int *dtype)
{
	static const struct {
		const char *name;
		int es, dt;
	} types[] = {
	    {"float", 4, PT_DT_F32},
	    {"double", 8, PT_DT_F64},
	    {"c10::Half", 2, PT_DT_F16},
	    {"c10::BFloat16", 2, PT_DT_BF16},
	    {"Half", 2, PT_DT_F16},
	    {"BFloat16", 2, PT_DT_BF16},
	    {"c10::Float8_e4m3fn", 1, PT_DT_FP8},
	    {"c10::Float8_e5m2", 1, PT_DT_FP8},
	    {"c10::Float8_e4m3fnuz", 1, PT_DT_FP8},
	    {"c10::Float8_e5m2fnuz", 1, PT_DT_FP8},
	    {"int", 4, PT_DT_OTHER},
	    {"long int", 8, PT_DT_OTHER},
	    {"long", 8, PT_DT_OTHER},
	    {"short int", 2, PT_DT_OTHER},
	    {"signed char", 1, PT_DT_OTHER},
	    {"unsigned char", 1, PT_DT_OTHER},
	    {"bool", 1, PT_DT_OTHER},
	    {"c10::complex<float>", 8, PT_DT_OTHER},
	    {"c10::complex<double>", 16, PT_DT_OTHER},
	};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (strlen(types[i].name) == n && !memcmp(types[i].name, s, n)) {
			*dtype = types[i].dt;
			return types[i].es;
		}
	return 0;
}

/* Calls each(in, body, n) for the i-th string of a JSON array of strings
 * (other values are skipped but counted), for at most MAX_IN elements; a->n
 * grows to cover every string seen. */
static void each_string(struct ins *a, const char *p, size_t len,
			void (*each)(struct input *in, const char *s, size_t n))
{
	const char *e = p + len;
	p = ws(p, e);
	if (p >= e || *p != '[')
		return;
	p = ws(p + 1, e);
	for (int i = 0; p < e && *p != ']' && i < MAX_IN; i++) {
		if (*p == '"') {
			const char *q = p + 1;
			while (q < e && *q != '"')
				q += *q == '\\' ? 2 : 1;
			if (q >= e)
				return;
			each(&a->in[i], p + 1, (size_t)(q - p - 1));
			if (i >= a->n)
				a->n = i + 1;
		}
		p = skip_val(p, e);
		if (!p)
			return;
		p = ws(p, e);
		if (p < e && *p == ',')
			p = ws(p + 1, e);
		else
			break;
	}
}

static void set_type(struct input *in, const char *s, size_t n)
{
	in->typed = 1;
	in->es = type_size(s, n, &in->dtype);
}

/* "Input type": ["float", "", "Scalar", ...] */
static void parse_types(struct ins *a, const char *p, size_t len)
{
	each_string(a, p, len, set_type);
}

/* One "Concrete Inputs" string's body: "[2, 2]", "1", "True", "'same'". */
static void parse_cv(struct input *in, const char *s, size_t n)
{
	const char *p = s, *e = s + n;
	p = ws(p, e);
	if (p < e && *p == '[')
		p++;
	while (p < e && in->ncv < MAX_CV) {
		p = ws(p, e);
		if (p >= e || *p == ']')
			break;
		if (*p == '-' || (*p >= '0' && *p <= '9')) {
			int64_t v;
			int ok;
			p = read_int(p, e, &v, &ok);
			if (!ok)
				break;
			in->cv[in->ncv++] = v;
			while (p < e && *p != ',' && *p != ']') /* "0." and the like */
				p++;
		} else if ((size_t)(e - p) >= 4 && !strncasecmp(p, "True", 4)) {
			in->cv[in->ncv++] = 1;
			p += 4;
		} else if ((size_t)(e - p) >= 5 && !strncasecmp(p, "False", 5)) {
			in->cv[in->ncv++] = 0;
			p += 5;
		} else {
			size_t k = 0;
			while (p < e && *p != ',' && *p != ']') {
				if (*p != '\'' && k < sizeof in->word - 1)
					in->word[k++] = *p;
				p++;
			}
			in->word[k] = 0;
			in->cv_str = 1;
		}
		p = ws(p, e);
		if (p < e && *p == ',')
			p++;
	}
}

/* "Concrete Inputs": ["", "[2, 2]", "1", ...] */
static void parse_conc(struct ins *a, const char *p, size_t len)
{
	each_string(a, p, len, parse_cv);
}

/* ---- formulas ---- */

static const struct input *tensor(const struct ins *a, int i)
{
	if (i >= a->n || a->in[i].kind != 1)
		return NULL;
	for (int k = 0; k < a->in[i].rank; k++)
		if (a->in[i].d[k] < 0)
			return NULL;
	return &a->in[i];
}

static double numel(const struct input *in)
{
	double n = 1;
	for (int k = 0; k < in->rank; k++)
		n *= (double)in->d[k];
	return n;
}

static int esize(const struct input *in)
{
	return in && in->es ? in->es : 4;
}

/* concrete int list of input i, spread to nd dims (one value: all), else def */
static int cvlist(const struct ins *a, int i, int nd, int64_t *out, int64_t def, int need)
{
	const struct input *in = i < a->n ? &a->in[i] : NULL;
	if (!in || in->ncv == 0) {
		for (int k = 0; k < nd; k++)
			out[k] = def;
		return !need;
	}
	for (int k = 0; k < nd; k++)
		out[k] = in->cv[in->ncv == 1 ? 0 : k < in->ncv ? k : in->ncv - 1];
	return 1;
}

static int conv(int op, const struct ins *a, double torch_flops, double *fl, double *by)
{
	const struct input *x = tensor(a, 0), *w = tensor(a, 1);
	if (!x || !w || x->rank < 3 || w->rank != x->rank || x->rank - 2 > MAX_CV)
		return 0;
	int nd = x->rank - 2;
	int es = esize(x);
	double kprod = 1;
	for (int k = 0; k < nd; k++)
		kprod *= (double)w->d[2 + k];
	const struct input *bias = op == OP_CONV_CUDNN ? NULL : tensor(a, 2);
	double in_b = numel(x) * es, w_b = numel(w) * esize(w), b_b = bias ? numel(bias) * es : 0;
	int transposed = op == OP_CONV_T;
	if (op == OP_CONV_FULL && a->n > 6 && a->in[6].ncv == 1)
		transposed = a->in[6].cv[0] != 0;
	if (transposed) {
		/* weight [Cin, Cout/g, k...]: each input element scatters into Cout/g x k */
		double f = 2.0 * numel(x) * (double)w->d[1] * kprod;
		*fl = torch_flops >= 0 ? torch_flops : f;
		*by = in_b + w_b + b_b; /* the output's size needs the strides: not counted */
		return 1;
	}
	int ps, ss, ds, gs; /* positions of padding, stride, dilation, groups */
	switch (op) {
	case OP_CONV_NCHW:
		ss = 3, ps = 4, ds = 5, gs = 6;
		break;
	case OP_CONV_FULL:
		ss = 3, ps = 4, ds = 5, gs = 8;
		break;
	case OP_CONV_CUDNN:
		ps = 2, ss = 3, ds = 4, gs = 5;
		break;
	default: /* mkldnn, miopen */
		ps = 3, ss = 4, ds = 5, gs = 6;
		break;
	}
	double cin_g = (double)w->d[1]; /* Cin / groups */
	double per_out = 2.0 * cin_g * kprod; /* FLOPs per output element */
	int64_t st[MAX_CV], pd[MAX_CV], dl[MAX_CV];
	int have_pad = ps < a->n && (a->in[ps].ncv || a->in[ps].cv_str);
	int have = have_pad && cvlist(a, ss, nd, st, 1, 1) && cvlist(a, ds, nd, dl, 1, 0);
	double out_sp = 0;
	if (have) {
		const struct input *pin = &a->in[ps];
		int same = pin->cv_str && !strcmp(pin->word, "same");
		if (pin->cv_str && !same)
			memset(pd, 0, sizeof pd); /* 'valid' */
		else if (!same)
			cvlist(a, ps, nd, pd, 0, 0);
		out_sp = 1;
		for (int k = 0; k < nd; k++) {
			int64_t o;
			if (same) {
				o = x->d[2 + k];
			} else {
				if (st[k] <= 0)
					return 0;
				o = (x->d[2 + k] + 2 * pd[k] - dl[k] * (w->d[2 + k] - 1) - 1) / st[k] + 1;
			}
			if (o <= 0)
				return 0;
			out_sp *= (double)o;
		}
	}
	(void)gs;
	double out_n;
	if (have) {
		out_n = (double)x->d[0] * (double)w->d[0] * out_sp;
		*fl = torch_flops >= 0 ? torch_flops : out_n * per_out;
	} else if (torch_flops > 0) {
		/* torch knew the strides: the output's size follows from its figure */
		*fl = torch_flops;
		out_n = torch_flops / per_out;
	} else {
		return 0;
	}
	*by = in_b + w_b + b_b + out_n * es;
	return 1;
}

static int bcast(const struct input *const *t, int nt, int64_t *out, int *rank)
{
	int r = 0;
	for (int i = 0; i < nt; i++)
		if (t[i]->rank > r)
			r = t[i]->rank;
	for (int k = 0; k < r; k++) {
		int64_t v = 1;
		for (int i = 0; i < nt; i++) {
			int off = k - (r - t[i]->rank);
			if (off < 0)
				continue;
			int64_t d = t[i]->d[off];
			if (d == 1)
				continue;
			if (v != 1 && d != v)
				return 0;
			v = d;
		}
		out[k] = v;
	}
	*rank = r;
	return 1;
}

static int matmul(const struct ins *a, double *fl, double *by)
{
	const struct input *x = tensor(a, 0), *y = tensor(a, 1);
	if (!x || !y || x->rank < 1 || y->rank < 1)
		return 0;
	int es = esize(x);
	double batch = 1, m, k, n;
	if (x->rank == 1 && y->rank == 1) {
		if (x->d[0] != y->d[0])
			return 0;
		m = n = 1;
		k = (double)x->d[0];
	} else if (y->rank == 1) {
		k = (double)x->d[x->rank - 1];
		m = (double)x->d[x->rank - 2];
		n = 1;
		for (int i = 0; i < x->rank - 2; i++)
			batch *= (double)x->d[i];
	} else if (x->rank == 1) {
		k = (double)x->d[0];
		m = 1;
		n = (double)y->d[y->rank - 1];
		for (int i = 0; i < y->rank - 2; i++)
			batch *= (double)y->d[i];
	} else {
		m = (double)x->d[x->rank - 2];
		k = (double)x->d[x->rank - 1];
		n = (double)y->d[y->rank - 1];
		if ((double)y->d[y->rank - 2] != k)
			return 0;
		struct input xb = *x, yb = *y;
		xb.rank -= 2;
		yb.rank -= 2;
		const struct input *bt[2] = {&xb, &yb};
		int64_t bd[MAX_RANK];
		int br;
		if (!bcast(bt, 2, bd, &br))
			return 0;
		for (int i = 0; i < br; i++)
			batch *= (double)bd[i];
	}
	*fl = 2.0 * batch * m * n * k;
	*by = (numel(x) + numel(y) + batch * m * n) * es;
	return 1;
}

static int compute(int op, const struct ins *a, double torch_flops, double *fl, double *by)
{
	const struct input *t0 = tensor(a, 0), *t1 = tensor(a, 1), *t2 = tensor(a, 2);
	switch (op) {
	case OP_MM:
	case OP_BMM:
		if (!t0 || !t1 || t0->rank != (op == OP_MM ? 2 : 3) || t1->rank != t0->rank ||
		    t0->d[t0->rank - 1] != t1->d[t1->rank - 2])
			return 0;
		return matmul(a, fl, by);
	case OP_ADDMM:
	case OP_BADDBMM: {
		int r = op == OP_ADDMM ? 2 : 3;
		if (!t1 || !t2 || t1->rank != r || t2->rank != r || t1->d[r - 1] != t2->d[r - 2])
			return 0;
		struct ins b;
		memset(&b, 0, sizeof b);
		b.n = 2;
		b.in[0] = *t1;
		b.in[1] = *t2;
		if (!matmul(&b, fl, by))
			return 0;
		if (t0)
			*by += numel(t0) * esize(t0);
		break;
	}
	case OP_MATMUL:
		if (!matmul(a, fl, by))
			return 0;
		break;
	case OP_LINEAR: {
		if (!t0 || !t1 || t0->rank < 1 || t1->rank != 2 || t0->d[t0->rank - 1] != t1->d[1])
			return 0;
		double k = (double)t1->d[1], n = (double)t1->d[0];
		double rows = k > 0 ? numel(t0) / k : 0;
		*fl = 2.0 * rows * k * n;
		*by = (numel(t0) + numel(t1) + rows * n + (t2 ? numel(t2) : 0)) * esize(t0);
		break;
	}
	case OP_CONV_NCHW:
	case OP_CONV_FULL:
	case OP_CONV_CUDNN:
	case OP_CONV_MKLDNN:
	case OP_CONV_T:
		return conv(op, a, torch_flops, fl, by);
	case OP_SDPA: {
		if (!t0 || !t1 || !t2 || t0->rank < 2 || t1->rank != t0->rank || t2->rank != t0->rank)
			return 0;
		int r = t0->rank;
		double batch = 1;
		for (int i = 0; i < r - 2; i++)
			batch *= (double)t0->d[i];
		double l = (double)t0->d[r - 2], e = (double)t0->d[r - 1];
		double s = (double)t1->d[r - 2], ev = (double)t2->d[r - 1];
		if (t1->d[r - 1] != t0->d[r - 1] || t2->d[r - 2] != t1->d[r - 2])
			return 0;
		*fl = 2.0 * batch * l * s * e + 2.0 * batch * l * s * ev;
		*by = (numel(t0) + numel(t1) + numel(t2) + batch * l * ev) * esize(t0);
		break;
	}
	default: {
		if (op < OP_ELEM || op >= OP_ELEM + (int)(sizeof elem / sizeof elem[0]))
			return 0;
		int arity = elem[op - OP_ELEM].arity;
		const struct input *ts[MAX_IN];
		struct input scalar_t[MAX_IN];
		int nt = 0;
		double in_bytes = 0;
		for (int i = 0; i < a->n && nt < arity; i++) {
			const struct input *in = &a->in[i];
			if (in->kind == 1 && in->rank == 0 && !(in->typed && in->es))
				continue; /* [] without a tensor type: a scalar argument */
			if (in->kind != 1 || (in->typed && !in->es))
				continue;
			if (in->rank == 0) { /* a 0-dim tensor */
				scalar_t[nt] = *in;
				ts[nt] = &scalar_t[nt];
			} else {
				ts[nt] = in;
			}
			in_bytes += numel(in) * esize(in);
			nt++;
		}
		if (!nt)
			return 0;
		int64_t od[MAX_RANK];
		int orank;
		if (!bcast(ts, nt, od, &orank))
			return 0;
		double out = 1;
		for (int i = 0; i < orank; i++)
			out *= (double)od[i];
		*fl = (double)elem[op - OP_ELEM].per * out;
		*by = in_bytes + out * esize(ts[0]);
		break;
	}
	}
	if (torch_flops >= 0)
		*fl = torch_flops;
	return 1;
}

int pt_flops_compute(int op, const char *dims, size_t dlen, const char *types, size_t tlen,
		     const char *conc, size_t clen, double torch_flops, double *flops,
		     double *bytes, int *dtype)
{
	if (op == OP_NONE)
		return 0;
	struct ins a;
	memset(&a, 0, sizeof a);
	if (dims)
		parse_dims(&a, dims, dlen);
	if (types)
		parse_types(&a, types, tlen);
	if (conc)
		parse_conc(&a, conc, clen);
	double f = 0, b = 0;
	if (!compute(op, &a, torch_flops, &f, &b) || !(f >= 0) || !isfinite(f) || !isfinite(b))
		return 0;
	*flops = f;
	*bytes = b;
	*dtype = PT_DT_F32;
	for (int i = 0; i < a.n; i++)
		if (a.in[i].kind == 1 && a.in[i].typed && a.in[i].es) {
			*dtype = a.in[i].dtype;
			break;
		}
	return 1;
}

/* ---- peaks ---- */

/* Dense peaks from the vendors' data sheets (no sparsity), TFLOP/s:
 * 16-bit tensor (fp16 and bf16 alike), TF32 tensor, fp32 (CUDA cores),
 * fp64, fp8 tensor (0: the device has no such unit), and memory GB/s.
 * First match wins (more specific names first). */
static const struct {
	const char *match;
	double f16, tf32, f32, f64, fp8, gbps;
} peaks[] = {
    {"H200", 989.5, 494.7, 66.9, 66.9, 1978.9, 4800},
    {"H100 NVL", 835, 417.5, 60, 60, 1670, 3900},
    {"H100 PCIe", 756, 378, 51.2, 51.2, 1513, 2000},
    {"H100", 989.5, 494.7, 66.9, 66.9, 1978.9, 3350},
    {"GH200", 989.5, 494.7, 66.9, 66.9, 1978.9, 4000},
    {"A100-SXM4-80GB", 312, 156, 19.5, 9.7, 0, 2039},
    {"A100 80GB PCIe", 312, 156, 19.5, 9.7, 0, 1935},
    {"A100-PCIE-80GB", 312, 156, 19.5, 9.7, 0, 1935},
    {"A100", 312, 156, 19.5, 9.7, 0, 1555},
    {"A800", 312, 156, 19.5, 9.7, 0, 2039},
    {"L40S", 362, 183, 91.6, 1.4, 733, 864},
    {"L40", 181, 90.5, 90.5, 1.4, 362, 864},
    {"L4", 121, 60, 30.3, 0.5, 242, 300},
    {"A10G", 70, 35, 31.2, 1.0, 0, 600},
    {"A10", 125, 62.5, 31.2, 1.0, 0, 600},
    {"V100", 125, 0, 15.7, 7.8, 0, 900},
    {"T4", 65, 0, 8.1, 0.25, 0, 320},
    {"B200", 2250, 1100, 80, 40, 4500, 8000},
    {"RTX 4090", 165, 82.6, 82.6, 1.3, 330, 1008},
};

const char *pt_dtype_name(int d)
{
	static const char *const n[PT_DT__COUNT] = {"fp32", "fp16", "fp64", "int",
						    "bf16", "tf32", "fp8"};
	return d >= 0 && d < PT_DT__COUNT ? n[d] : "?";
}

int pt_peak_of_device(const char *name, struct pt_peak *out)
{
	memset(out, 0, sizeof *out);
	if (!name || !*name)
		return -1;
	for (size_t i = 0; i < sizeof peaks / sizeof peaks[0]; i++) {
		const char *m = strstr(name, peaks[i].match);
		if (!m)
			continue;
		/* "A10" is not "A100", "L4" not "L40S" */
		char next = m[strlen(peaks[i].match)];
		if (next >= '0' && next <= '9')
			continue;
		out->tflops[PT_DT_F16] = peaks[i].f16;
		/* bf16 came with TF32 (Ampere): V100 and T4 have neither */
		out->tflops[PT_DT_BF16] = peaks[i].tf32 > 0 ? peaks[i].f16 : 0;
		out->tflops[PT_DT_TF32] = peaks[i].tf32;
		out->tflops[PT_DT_F32] = peaks[i].f32;
		out->tflops[PT_DT_F64] = peaks[i].f64;
		out->tflops[PT_DT_FP8] = peaks[i].fp8;
		out->gbps = peaks[i].gbps;
		snprintf(out->device, sizeof out->device, "%s", name);
		return 0;
	}
	return -1;
}

void pt_peak_override(struct pt_peak *p, double tflops, double gbps)
{
	if (tflops > 0) {
		p->from_user = 1;
		for (int i = 0; i < PT_DT__COUNT; i++)
			p->tflops[i] = tflops;
		snprintf(p->device, sizeof p->device, "--peak-tflops %g", tflops);
	}
	if (gbps > 0)
		p->gbps = gbps;
}

int pt_peak_of_trace(const struct pt_trace *t, double user_tflops, double user_gbps,
		     struct pt_peak *out)
{
	int rc = pt_peak_of_device(t->device_name ? pt_trace_str(t, t->device_name) : NULL, out);
	pt_peak_override(out, user_tflops, user_gbps);
	return rc == 0 || user_tflops > 0 ? 0 : -1;
}
