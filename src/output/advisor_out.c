/*
 * advisor_out.c - how advice is written: the report's Advice section (a
 * titled box like the Perf Summary, each entry wrapped to the box width
 * under a hanging indent) and the JSON "advice" array. Evidence and
 * suggestions are already escaped by the rules (names from the trace pass
 * pt_escape_term there), so the text goes out as it is.
 */
#include <math.h>
#include <string.h>

#include "output/advisor_int.h"
#include "output/report_int.h"

#define BOX_W  100
#define INDENT 15 /* "   Suggestion: " */

static void put_n(FILE *out, char c, int n)
{
	for (int i = 0; i < n; i++)
		putc(c, out);
}

/* Writes text after a label, wrapped at BOX_W under INDENT columns. */
static void put_wrapped(FILE *out, const char *label, const char *text)
{
	char prefix[INDENT + 32];
	snprintf(prefix, sizeof prefix, "   %-*s", INDENT - 3, label);
	pt_put_wrapped(out, prefix, text, BOX_W, INDENT, 0);
}

void pt_advice_text(FILE *out, const struct pt_advice_list *l)
{
	if (!l || !l->n)
		return;
	const char *title = "Advice";
	int len = (int)strlen(title);
	put_n(out, '=', (BOX_W - len) / 2);
	fputs(title, out);
	put_n(out, '=', BOX_W - len - (BOX_W - len) / 2);
	putc('\n', out);
	for (size_t i = 0; i < l->n; i++) {
		const struct pt_advice *a = &l->v[i];
		fprintf(out, "%zu. [%s] %s (%s)\n", i + 1, pt_advice_severity_name(a->severity),
			a->title, pt_advice_key_name(a->key));
		put_wrapped(out, "Evidence:", a->evidence);
		put_wrapped(out, "Suggestion:", a->suggestion);
	}
	fputs("Note: thresholds are proftop's defaults (docs/advisor.md); --no-advice hides "
	      "this.\n\n",
	      out);
}

static void put_s(struct pt_buf *b, const char *s)
{
	pt_buf_put(b, s, strlen(s));
}

static void j_num(struct pt_buf *b, double v)
{
	if (!isfinite(v))
		v = 0.0;
	char tmp[64];
	int n = snprintf(tmp, sizeof tmp, "%.6f", v);
	/* trailing zeros off, like the report's numbers */
	while (n > 1 && tmp[n - 1] == '0')
		n--;
	if (n > 1 && tmp[n - 1] == '.')
		n--;
	pt_buf_put(b, tmp, (size_t)n);
}

static void j_str(struct pt_buf *b, const char *key, const char *s)
{
	pt_buf_printf(b, "\"%s\":", key);
	pt_buf_json_str(b, s ? s : "", s ? strlen(s) : 0);
}

void pt_advice_json_buf(struct pt_buf *b, const struct pt_advice_list *l)
{
	put_s(b, ",\n  \"advice\": [");
	size_t n = l ? l->n : 0;
	for (size_t i = 0; i < n; i++) {
		const struct pt_advice *a = &l->v[i];
		put_s(b, i ? ",\n    {" : "\n    {");
		j_str(b, "key", pt_advice_key_name(a->key));
		pt_buf_putc(b, ',');
		j_str(b, "severity", pt_advice_severity_name(a->severity));
		pt_buf_putc(b, ',');
		j_str(b, "title", a->title);
		pt_buf_putc(b, ',');
		j_str(b, "evidence", a->evidence);
		pt_buf_putc(b, ',');
		j_str(b, "suggestion", a->suggestion);
		put_s(b, ",\"value\":");
		j_num(b, a->value);
		put_s(b, ",\"threshold\":");
		j_num(b, a->threshold);
		pt_buf_putc(b, ',');
		j_str(b, "unit", a->unit);
		pt_buf_putc(b, '}');
	}
	put_s(b, n ? "\n  ]" : "]");
}
