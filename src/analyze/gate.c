/*
 * gate.c - the CI gate's condition language (include/proftop/gate.h): a
 * recursive-descent parser into a small node array, and an evaluator that
 * says which comparisons made the condition hold. Grammar:
 *
 *   or   := and ( "||" and )*
 *   and  := not ( "&&" not )*
 *   not  := "!" not | "(" or ")" | cmp
 *   cmp  := figure op number        figure := [a-z_][a-z0-9_]*
 *   op   := < <= > >= == !=         number := [+-]?digits[.digits][e[+-]digits][%]
 *
 * Every figure is looked up on every evaluation (no short circuit), so a
 * misspelt name fails the build the same way whichever way the other side
 * of an || goes. The reason for a holding condition follows De Morgan: a
 * comparison under ! is shown with its operator negated.
 */
#include "proftop/gate.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/error.h"
#include "model/util.h"

#define GATE_MAX_DEPTH 64     /* nesting of ( and !: bounds the recursion */
#define GATE_MAX_NAME 63

enum gate_op { OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE };
enum gate_node_kind { N_CMP, N_AND, N_OR, N_NOT };

struct gate_node {
	enum gate_node_kind kind;
	int lhs, rhs;              /* child nodes (N_NOT uses lhs) */
	enum gate_op op;
	double number;             /* as written, % already divided out */
	int pct;                   /* the number was written with % */
	char name[GATE_MAX_NAME + 1];
	char literal[32];          /* the number as written, for the reason */
};

struct pt_gate {
	struct gate_node *nodes;
	int n, cap;
	int root;
};

struct gate_parser {
	const char *src;
	size_t pos;
	int depth;
	struct pt_gate *g;
	char *err;
	size_t errlen;
	int failed;
};

static const char *const op_text[] = {"<", "<=", ">", ">=", "==", "!="};
static const enum gate_op op_negated[] = {OP_GE, OP_GT, OP_LE, OP_LT, OP_NE, OP_EQ};

static void parse_fail(struct gate_parser *p, size_t col0, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void parse_fail(struct gate_parser *p, size_t col0, const char *fmt, ...)
{
	if (p->failed)
		return;
	p->failed = 1;
	if (!p->err || !p->errlen)
		return;
	int k = snprintf(p->err, p->errlen, "at column %zu: ", col0 + 1);
	if (k < 0 || (size_t)k >= p->errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err + k, p->errlen - (size_t)k, fmt, ap);
	va_end(ap);
}

static void skip_ws(struct gate_parser *p)
{
	while (p->src[p->pos] == ' ' || p->src[p->pos] == '\t' || p->src[p->pos] == '\n' ||
	       p->src[p->pos] == '\r')
		p->pos++;
}

/* What stands at the cursor, for error messages: a quoted char or "the end". */
static const char *describe_here(const struct gate_parser *p, char *buf, size_t len)
{
	unsigned char c = (unsigned char)p->src[p->pos];
	if (!c)
		snprintf(buf, len, "the end of the condition");
	else if (c >= 0x20 && c < 0x7f)
		snprintf(buf, len, "'%c'", c);
	else
		snprintf(buf, len, "byte 0x%02x", c);
	return buf;
}

static int new_node(struct pt_gate *g, enum gate_node_kind kind)
{
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 8;
		g->nodes = pt_xrealloc(g->nodes, (size_t)g->cap * sizeof *g->nodes);
	}
	struct gate_node *nd = &g->nodes[g->n];
	memset(nd, 0, sizeof *nd);
	nd->kind = kind;
	nd->lhs = nd->rhs = -1;
	return g->n++;
}

static int parse_or(struct gate_parser *p);

static int is_name_start(int c)
{
	return (c >= 'a' && c <= 'z') || c == '_';
}

static int is_name_char(int c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

/* Reads an operator; -1 (and an error) when there is none. */
static int parse_op(struct gate_parser *p, const char *after)
{
	const char *s = p->src + p->pos;
	size_t col = p->pos;
	if (s[0] == '<' && s[1] == '=') { p->pos += 2; return OP_LE; }
	if (s[0] == '>' && s[1] == '=') { p->pos += 2; return OP_GE; }
	if (s[0] == '=' && s[1] == '=') { p->pos += 2; return OP_EQ; }
	if (s[0] == '!' && s[1] == '=') { p->pos += 2; return OP_NE; }
	if (s[0] == '<') { p->pos += 1; return OP_LT; }
	if (s[0] == '>') { p->pos += 1; return OP_GT; }
	if (s[0] == '=') {
		parse_fail(p, col, "'=' is not a comparison; use '=='");
		return -1;
	}
	char here[40];
	parse_fail(p, col, "expected a comparison (< <= > >= == !=) after '%s', found %s", after,
		   describe_here(p, here, sizeof here));
	return -1;
}

/* Reads a number into nd; 0 or -1 (with an error). */
static int parse_number(struct gate_parser *p, struct gate_node *nd, const char *after)
{
	const char *s = p->src;
	size_t start = p->pos, i = p->pos;
	if (s[i] == '+' || s[i] == '-')
		i++;
	size_t digits = 0;
	while (isdigit((unsigned char)s[i])) {
		i++;
		digits++;
	}
	if (s[i] == '.') {
		i++;
		while (isdigit((unsigned char)s[i])) {
			i++;
			digits++;
		}
	}
	if (!digits) {
		char here[40];
		parse_fail(p, start, "expected a number after '%s', found %s", after,
			   describe_here(p, here, sizeof here));
		return -1;
	}
	if (s[i] == 'e' || s[i] == 'E') {
		size_t j = i + 1;
		if (s[j] == '+' || s[j] == '-')
			j++;
		if (!isdigit((unsigned char)s[j])) {
			parse_fail(p, i, "expected digits of the exponent");
			return -1;
		}
		while (isdigit((unsigned char)s[j]))
			j++;
		i = j;
	}
	size_t len = i - start;
	char buf[64];
	if (len >= sizeof buf || len >= sizeof nd->literal - 1) {
		parse_fail(p, start, "number too long");
		return -1;
	}
	memcpy(buf, s + start, len);
	buf[len] = '\0';
	double v = strtod(buf, NULL);
	if (!isfinite(v)) {
		parse_fail(p, start, "number out of range");
		return -1;
	}
	memcpy(nd->literal, buf, len + 1);
	if (s[i] == '%') {
		i++;
		v /= 100.0;
		nd->pct = 1;
		strcat(nd->literal, "%");
	}
	if (is_name_char((unsigned char)s[i]) || s[i] == '.') {
		parse_fail(p, i, "unexpected '%c' after the number %s", s[i], nd->literal);
		return -1;
	}
	nd->number = v;
	p->pos = i;
	return 0;
}

static int parse_cmp(struct gate_parser *p)
{
	const char *s = p->src;
	size_t start = p->pos;
	char here[40];
	if (!is_name_start((unsigned char)s[start])) {
		if (isdigit((unsigned char)s[start]) || s[start] == '-' || s[start] == '+' ||
		    s[start] == '.')
			parse_fail(p, start, "expected a figure name (the figure goes on the left: "
					     "ips<120)");
		else if (s[start] >= 'A' && s[start] <= 'Z')
			parse_fail(p, start, "figure names are lower case");
		else
			parse_fail(p, start, "expected a figure name, '(' or '!', found %s",
				   describe_here(p, here, sizeof here));
		return -1;
	}
	size_t i = start;
	while (is_name_char((unsigned char)s[i]))
		i++;
	if (i - start > GATE_MAX_NAME) {
		parse_fail(p, start, "figure name too long");
		return -1;
	}
	if (s[i] >= 'A' && s[i] <= 'Z') {
		parse_fail(p, i, "figure names are lower case");
		return -1;
	}
	int id = new_node(p->g, N_CMP);
	struct gate_node *nd = &p->g->nodes[id];
	memcpy(nd->name, s + start, i - start);
	nd->name[i - start] = '\0';
	p->pos = i;
	skip_ws(p);
	int op = parse_op(p, p->g->nodes[id].name);
	if (op < 0)
		return -1;
	p->g->nodes[id].op = (enum gate_op)op;
	skip_ws(p);
	if (parse_number(p, &p->g->nodes[id], op_text[op]) < 0)
		return -1;
	return id;
}

static int parse_not(struct gate_parser *p)
{
	skip_ws(p);
	size_t col = p->pos;
	char c = p->src[p->pos];
	if (c == '!' && p->src[p->pos + 1] != '=') {
		if (++p->depth > GATE_MAX_DEPTH) {
			parse_fail(p, col, "nested too deeply");
			return -1;
		}
		p->pos++;
		int child = parse_not(p);
		p->depth--;
		if (child < 0)
			return -1;
		int id = new_node(p->g, N_NOT);
		p->g->nodes[id].lhs = child;
		return id;
	}
	if (c == '(') {
		if (++p->depth > GATE_MAX_DEPTH) {
			parse_fail(p, col, "nested too deeply");
			return -1;
		}
		p->pos++;
		int inner = parse_or(p);
		p->depth--;
		if (inner < 0)
			return -1;
		skip_ws(p);
		if (p->src[p->pos] != ')') {
			char here[40];
			parse_fail(p, p->pos, "expected ')' to close the '(' at column %zu, found %s",
				   col + 1, describe_here(p, here, sizeof here));
			return -1;
		}
		p->pos++;
		return inner;
	}
	if (!c) {
		parse_fail(p, col, "expected a comparison, found the end of the condition");
		return -1;
	}
	return parse_cmp(p);
}

/* Reads "&&" or "||" (op = '&' or '|'); 1 when found, 0 when not, -1 on a lone one. */
static int take_logic(struct gate_parser *p, char op)
{
	skip_ws(p);
	if (p->src[p->pos] != op)
		return 0;
	if (p->src[p->pos + 1] != op) {
		parse_fail(p, p->pos, "expected '%c%c', found a single '%c'", op, op, op);
		return -1;
	}
	p->pos += 2;
	return 1;
}

static int parse_and(struct gate_parser *p)
{
	int lhs = parse_not(p);
	while (lhs >= 0) {
		int r = take_logic(p, '&');
		if (r <= 0)
			return r < 0 ? -1 : lhs;
		int rhs = parse_not(p);
		if (rhs < 0)
			return -1;
		int id = new_node(p->g, N_AND);
		p->g->nodes[id].lhs = lhs;
		p->g->nodes[id].rhs = rhs;
		lhs = id;
	}
	return lhs;
}

static int parse_or(struct gate_parser *p)
{
	int lhs = parse_and(p);
	while (lhs >= 0) {
		int r = take_logic(p, '|');
		if (r <= 0)
			return r < 0 ? -1 : lhs;
		int rhs = parse_and(p);
		if (rhs < 0)
			return -1;
		int id = new_node(p->g, N_OR);
		p->g->nodes[id].lhs = lhs;
		p->g->nodes[id].rhs = rhs;
		lhs = id;
	}
	return lhs;
}

int pt_gate_parse(const char *expr, struct pt_gate **out, char *err, size_t errlen)
{
	int rc = PT_EINVAL;
	struct pt_gate *g = pt_xcalloc(1, sizeof *g);
	struct gate_parser p = {.src = expr ? expr : "", .g = g, .err = err, .errlen = errlen};
	if (err && errlen)
		err[0] = '\0';
	*out = NULL;
	skip_ws(&p);
	if (!p.src[p.pos]) {
		parse_fail(&p, p.pos, "empty condition");
		goto out;
	}
	g->root = parse_or(&p);
	if (g->root < 0)
		goto out;
	skip_ws(&p);
	if (p.src[p.pos]) {
		char here[40];
		if (p.src[p.pos] == ')')
			parse_fail(&p, p.pos, "')' without a matching '('");
		else
			parse_fail(&p, p.pos, "expected '&&', '||' or the end, found %s",
				   describe_here(&p, here, sizeof here));
		goto out;
	}
	*out = g;
	g = NULL;
	rc = 0;
out:
	pt_gate_free(g);
	return rc;
}

void pt_gate_free(struct pt_gate *g)
{
	if (!g)
		return;
	free(g->nodes);
	free(g);
}

/* ---- evaluation ---- */

struct gate_eval {
	const struct pt_gate *g;
	double *values;            /* per node, N_CMP only */
	struct pt_buf why;
};

static int cmp_holds(enum gate_op op, double v, double x)
{
	switch (op) {
	case OP_LT: return v < x;
	case OP_LE: return v <= x;
	case OP_GT: return v > x;
	case OP_GE: return v >= x;
	case OP_EQ: return v == x;
	case OP_NE: return v != x;
	}
	return 0;
}

static int node_holds(const struct gate_eval *e, int id)
{
	const struct gate_node *nd = &e->g->nodes[id];
	switch (nd->kind) {
	case N_CMP: return cmp_holds(nd->op, e->values[id], nd->number);
	case N_AND: return node_holds(e, nd->lhs) && node_holds(e, nd->rhs);
	case N_OR: return node_holds(e, nd->lhs) || node_holds(e, nd->rhs);
	case N_NOT: return !node_holds(e, nd->lhs);
	}
	return 0;
}

/* A figure for the reason: as a percentage when the limit was written as one. */
static void put_value(struct pt_buf *b, double v, int pct)
{
	if (pct)
		v *= 100.0;
	if (fabs(v) >= 100.0)
		pt_buf_printf(b, "%.1f", v);
	else
		pt_buf_printf(b, "%.4g", v);
	if (pct)
		pt_buf_putc(b, '%');
}

/*
 * Explains why node id has truth `want` (which it has), appending the
 * comparisons that decide it to b. Under a negation the sense flips, so &&
 * and || swap roles (De Morgan) and a comparison shows its negated operator.
 * Returns how the parts are joined: 0 a single comparison, '&' or '|'; a
 * child joined differently from its parent gets parentheses.
 */
static int explain(const struct gate_eval *e, int id, int want, struct pt_buf *b)
{
	const struct gate_node *nd = &e->g->nodes[id];
	if (nd->kind == N_CMP) {
		enum gate_op op = want ? nd->op : op_negated[nd->op];
		pt_buf_printf(b, "%s ", nd->name);
		put_value(b, e->values[id], nd->pct);
		pt_buf_printf(b, " %s %s", op_text[op], nd->literal);
		return 0;
	}
	if (nd->kind == N_NOT)
		return explain(e, nd->lhs, !want, b);
	/* Both sides are needed for && true and || false; otherwise each side
	 * with the wanted truth suffices on its own. */
	int all = (nd->kind == N_AND) == (want != 0);
	int join = all ? '&' : '|';
	int side[2] = {nd->lhs, nd->rhs}, shown = 0, last = 0;
	for (int k = 0; k < 2; k++) {
		if (!all && node_holds(e, side[k]) != want)
			continue;
		struct pt_buf part = {0};
		int kind = last = explain(e, side[k], want, &part);
		if (shown++)
			pt_buf_printf(b, " %c%c ", join, join);
		if (kind && kind != join)
			pt_buf_putc(b, '(');
		pt_buf_put(b, part.p, part.len);
		if (kind && kind != join)
			pt_buf_putc(b, ')');
		pt_buf_free(&part);
	}
	return shown > 1 ? join : last;
}

int pt_gate_eval(const struct pt_gate *g, pt_metric_fn fn, void *ctx, char *reason, size_t len)
{
	int rc = 0;
	struct gate_eval e = {.g = g};
	if (reason && len)
		reason[0] = '\0';
	if (!g || !fn)
		return PT_EINVAL;
	e.values = pt_xcalloc((size_t)g->n, sizeof *e.values);
	for (int i = 0; i < g->n; i++) {
		const struct gate_node *nd = &g->nodes[i];
		if (nd->kind != N_CMP)
			continue;
		double v = NAN;
		int r = fn(ctx, nd->name, &v);
		if (r == 0 && !isfinite(v))
			r = PT_ENOTAVAIL;
		if (r < 0) {
			if (reason && len)
				snprintf(reason, len, "%s: %s", nd->name,
					 r == PT_ENOENT ? "unknown figure"
							: "not available for this trace");
			rc = r;
			goto out;
		}
		e.values[i] = v;
	}
	rc = node_holds(&e, g->root);
	if (rc && reason && len) {
		explain(&e, g->root, 1, &e.why);
		pt_buf_putc(&e.why, '\0');
		snprintf(reason, len, "%s", e.why.p);
	}
out:
	pt_buf_free(&e.why);
	free(e.values);
	return rc;
}
