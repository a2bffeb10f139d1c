/*
 * report_box.c - the plain-text table primitives of Paddle's summary layout
 * (centred titles, dashed separators, cells two spaces apart with no
 * trailing blanks), shared by the report (report.c) and the diff
 * (diff_out.c) so both print the same boxes.
 */
#include <stdio.h>
#include <string.h>

#include "output/report_int.h"

void pt_box_n(FILE *out, char c, int n)
{
	for (int i = 0; i < n; i++)
		putc(c, out);
}

/* A title centred in `fill` over total columns, as Paddle's add_title. */
void pt_box_title(FILE *out, const char *title, int total, char fill)
{
	int len = (int)strlen(title);
	int left = total > len ? (total - len) / 2 : 0;
	int right = total > len ? total - len - left : 0;
	pt_box_n(out, fill, left);
	fputs(title, out);
	pt_box_n(out, fill, right);
	putc('\n', out);
}

int pt_box_width(const int *w, int n)
{
	int sum = 2 * (n - 1);
	for (int i = 0; i < n; i++)
		sum += w[i];
	return sum;
}

void pt_box_sep(FILE *out, const int *w, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			fputs("  ", out);
		pt_box_n(out, '-', w[i]);
	}
	putc('\n', out);
}

/*
 * One row: cells left aligned in their widths, two spaces apart, no
 * trailing blanks. cols0 is the display width of cells[0] (escaped names
 * may hold multi-byte characters), or -1 to use its length.
 */
void pt_box_row(FILE *out, const int *w, int n, const char *const *cells, int cols0)
{
	int pending = 0; /* blanks owed before the next non-empty cell */
	for (int i = 0; i < n; i++) {
		const char *c = cells[i] ? cells[i] : "";
		int cols = i == 0 && cols0 >= 0 ? cols0 : (int)strlen(c);
		if (*c) {
			pt_box_n(out, ' ', pending);
			fputs(c, out);
			pending = 0;
		} else {
			cols = 0;
		}
		pending += (w[i] > cols ? w[i] - cols : 0) + 2;
	}
	putc('\n', out);
}

void pt_put_wrapped(FILE *out, const char *prefix, const char *text, int cols, int indent, int cut)
{
	int col = fprintf(out, "%s", prefix), first = 1;
	const char *p = text;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		const char *e = p;
		while (*e && *e != ' ')
			e++;
		int w = (int)(e - p); /* escaped text: a byte is a column but in a rare name */
		if (col > indent && col + (first ? 0 : 1) + w > cols) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		} else if (!first) {
			putc(' ', out);
			col++;
		}
		first = 0;
		if (cut && w > cols - indent)
			w = cols - indent > 0 ? cols - indent : 1;
		fwrite(p, 1, (size_t)w, out);
		col += w;
		p = e;
	}
	putc('\n', out);
}
