/*
 * test_prom.c - the Prometheus text exposition (src/output/prom.c) read back line
 * by line with a strict parser of format 0.0.4: metric and label names,
 * label escaping (only \\, \" and \n), values, # HELP and # TYPE once per
 * family and before its samples, each family's samples together, no series
 * twice. On top: the figures land where they belong (units, phase, device,
 * quantile labels, an unknown rank without a rank label), hostile operator
 * names (quotes, backslashes, newlines, control characters, invalid and
 * truncated UTF-8, C1 controls, a 5000-byte name, names that escape alike)
 * come out valid and distinct, and the top-N pick matches a full sort.
 */
#include "testutil.h"

#include <math.h>

#include "output/prom.h"
#include "proftop/strtab.h"
#include "model/util.h"

/* ---- a strict reader of the text format ---- */

struct series {
	char *key; /* name + '\1' + sorted labels */
};

struct fam {
	char name[128];
	char type[16];
	int help, typed, closed, samples;
};

struct parsed {
	struct fam fam[256];
	size_t nfam;
	char **keys;
	size_t nkeys;
	int cur; /* family of the previous sample, -1 none */
	char err[512];
};

static int name_ok(const char *s, size_t n, int metric)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
			    (metric && c == ':');
		if (!alpha && !(i && c >= '0' && c <= '9'))
			return 0;
	}
	return 1;
}

static struct fam *fam_get(struct parsed *p, const char *name, size_t n, int create)
{
	for (size_t i = 0; i < p->nfam; i++)
		if (strlen(p->fam[i].name) == n && !memcmp(p->fam[i].name, name, n))
			return &p->fam[i];
	if (!create || p->nfam == 256 || n >= 128)
		return NULL;
	struct fam *f = &p->fam[p->nfam++];
	memset(f, 0, sizeof *f);
	memcpy(f->name, name, n);
	return f;
}

static int perr(struct parsed *p, const char *line, const char *why)
{
	snprintf(p->err, sizeof p->err, "%s: %.200s", why, line);
	return -1;
}

struct label {
	char name[64];
	char *val;
};

static int label_cmp(const void *a, const void *b)
{
	return strcmp(((const struct label *)a)->name, ((const struct label *)b)->name);
}

/* Parses one sample line; fills labels (value unescaped). */
static int parse_sample(struct parsed *p, const char *line)
{
	const char *s = line;
	size_t n = 0;
	while (s[n] && s[n] != '{' && s[n] != ' ')
		n++;
	if (!name_ok(s, n, 1))
		return perr(p, line, "bad metric name");
	char name[256];
	if (n >= sizeof name)
		return perr(p, line, "name too long");
	memcpy(name, s, n);
	name[n] = 0;
	s += n;
	struct label lab[16];
	size_t nl = 0;
	if (*s == '{') {
		s++;
		while (*s != '}') {
			size_t k = 0;
			while (s[k] && s[k] != '=')
				k++;
			if (!name_ok(s, k, 0) || k >= 64 || nl == 16)
				return perr(p, line, "bad label name");
			memcpy(lab[nl].name, s, k);
			lab[nl].name[k] = 0;
			s += k;
			if (s[0] != '=' || s[1] != '"')
				return perr(p, line, "label without =\"");
			s += 2;
			struct pt_buf v = {0};
			while (*s != '"') {
				if (!*s) {
					pt_buf_free(&v);
					return perr(p, line, "unterminated label value");
				}
				if (*s == '\\') {
					if (s[1] == '\\' || s[1] == '"')
						pt_buf_putc(&v, s[1]);
					else if (s[1] == 'n')
						pt_buf_putc(&v, '\n');
					else {
						pt_buf_free(&v);
						return perr(p, line, "bad escape in label value");
					}
					s += 2;
				} else {
					if ((unsigned char)*s < 0x20 || *s == 0x7f) {
						pt_buf_free(&v);
						return perr(p, line, "raw control char in label");
					}
					pt_buf_putc(&v, *s++);
				}
			}
			pt_buf_putc(&v, 0);
			if (!pt_utf8_valid(v.p, v.len - 1)) {
				pt_buf_free(&v);
				return perr(p, line, "label value not UTF-8");
			}
			for (size_t j = 0; j < nl; j++)
				if (!strcmp(lab[j].name, lab[nl].name)) {
					pt_buf_free(&v);
					return perr(p, line, "label twice");
				}
			lab[nl++].val = v.p;
			s++;
			if (*s == ',')
				s++;
			else if (*s != '}')
				return perr(p, line, "bad label separator");
		}
		s++;
	}
	int rc = 0;
	if (*s != ' ') {
		rc = perr(p, line, "no space before the value");
		goto out;
	}
	s++;
	char *end;
	if (!strcmp(s, "NaN") || !strcmp(s, "+Inf") || !strcmp(s, "-Inf")) {
	} else {
		strtod(s, &end);
		if (end == s || *end) {
			rc = perr(p, line, "bad value");
			goto out;
		}
	}
	/* the family: the name, or for summaries the name less _sum/_count */
	struct fam *f = fam_get(p, name, n, 0);
	if (!f) {
		size_t cut = 0;
		if (n > 4 && !strcmp(name + n - 4, "_sum"))
			cut = 4;
		else if (n > 6 && !strcmp(name + n - 6, "_count"))
			cut = 6;
		f = cut ? fam_get(p, name, n - cut, 0) : NULL;
		if (f && strcmp(f->type, "summary") && strcmp(f->type, "histogram"))
			f = NULL;
	}
	if (!f || !f->typed) {
		rc = perr(p, line, "sample without # TYPE");
		goto out;
	}
	if (f->closed) {
		rc = perr(p, line, "family's samples not together");
		goto out;
	}
	int idx = (int)(f - p->fam);
	if (p->cur >= 0 && p->cur != idx)
		p->fam[p->cur].closed = 1;
	p->cur = idx;
	f->samples++;
	/* the series key */
	qsort(lab, nl, sizeof lab[0], label_cmp);
	struct pt_buf key = {0};
	pt_buf_printf(&key, "%s", name);
	for (size_t j = 0; j < nl; j++) {
		pt_buf_printf(&key, "\1%s=", lab[j].name);
		pt_buf_put(&key, lab[j].val, strlen(lab[j].val));
		pt_buf_putc(&key, '\2');
	}
	pt_buf_putc(&key, 0);
	for (size_t j = 0; j < p->nkeys; j++)
		if (!strcmp(p->keys[j], key.p)) {
			pt_buf_free(&key);
			rc = perr(p, line, "duplicate series");
			goto out;
		}
	p->keys = pt_xrealloc(p->keys, (p->nkeys + 1) * sizeof *p->keys);
	p->keys[p->nkeys++] = key.p;
out:
	for (size_t j = 0; j < nl; j++)
		free(lab[j].val);
	return rc;
}

static int parse_all(struct parsed *p, const char *text, size_t len)
{
	memset(p, 0, sizeof *p);
	p->cur = -1;
	if (!len || text[len - 1] != '\n')
		return perr(p, "", "output does not end with a newline");
	if (memchr(text, 0, len))
		return perr(p, "", "NUL in output");
	if (!pt_utf8_valid(text, len))
		return perr(p, "", "output not UTF-8");
	char *copy = pt_xstrndup(text, len);
	int rc = 0;
	for (char *line = copy, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		*nl = 0;
		if (!strncmp(line, "# HELP ", 7) || !strncmp(line, "# TYPE ", 7)) {
			const char *nm = line + 7;
			size_t n = strcspn(nm, " ");
			if (!name_ok(nm, n, 1) || nm[n] != ' ') {
				rc = perr(p, line, "bad comment");
				break;
			}
			struct fam *f = fam_get(p, nm, n, 1);
			if (line[2] == 'H') {
				if (f->help++ || f->typed) {
					rc = perr(p, line, "HELP twice or after TYPE");
					break;
				}
			} else {
				const char *ty = nm + n + 1;
				if (f->typed++ || f->samples || strlen(ty) >= sizeof f->type ||
				    (strcmp(ty, "gauge") && strcmp(ty, "counter") &&
				     strcmp(ty, "summary") && strcmp(ty, "histogram") &&
				     strcmp(ty, "untyped"))) {
					rc = perr(p, line, "TYPE twice, late or unknown");
					break;
				}
				strcpy(f->type, ty);
			}
			if (p->cur >= 0 && p->fam + p->cur != f)
				p->fam[p->cur].closed = 1;
			continue;
		}
		if (line[0] == '#' || !line[0]) {
			rc = perr(p, line, "stray line");
			break;
		}
		if ((rc = parse_sample(p, line)))
			break;
	}
	free(copy);
	return rc;
}

static void parsed_free(struct parsed *p)
{
	for (size_t i = 0; i < p->nkeys; i++)
		free(p->keys[i]);
	free(p->keys);
}

/* The value of the first line starting with prefix (name{labels} exactly), NAN if none. */
static double value_of(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, prefix, n) && l[n] == ' ')
			return strtod(l + n + 1, NULL);
	return NAN;
}

static size_t count_lines(const char *text, const char *prefix)
{
	size_t c = 0, n = strlen(prefix);
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, prefix, n))
			c++;
	return c;
}

/* ---- a hand-filled pt_ranks ---- */

struct fixture {
	struct pt_strtab *st;
	struct pt_ranks r;
};

static void add_op(struct pt_summary *s, struct pt_strtab *st, const char *name, size_t len,
		   uint64_t total_ns, uint64_t calls)
{
	s->operators.rows =
	    pt_xrealloc(s->operators.rows, (s->operators.n + 1) * sizeof *s->operators.rows);
	struct pt_row *row = &s->operators.rows[s->operators.n++];
	memset(row, 0, sizeof *row);
	row->name_id = pt_strtab_intern(st, name, len);
	row->kind = PT_KIND_OPERATOR;
	row->cpu.n = calls;
	row->cpu.total_ns = total_ns;
	row->gpu.total_ns = total_ns / 2;
}

static const char *const hostile[] = {
    "a\"b",	      "c\\d",	 "e\nf",	"\x1b[31mred\x1b[0m",
    "bad\xff\xfeutf", "cut\xc3", "c1\xc2\x85x", "tab\there\r",
    "x\xff",	      "x\xfe",	 "\"\\\n",	"",
    "日本語 ok",
};

static void fixture_init(struct fixture *f, size_t nranks)
{
	f->st = pt_strtab_new();
	memset(&f->r, 0, sizeof f->r);
	f->r.r = pt_xcalloc(nranks, sizeof *f->r.r);
	f->r.n = nranks;
	for (size_t i = 0; i < nranks; i++) {
		struct pt_rank_stat *st = &f->r.r[i];
		st->pid = 1000 + (int64_t)i;
		st->rank = i == 1 ? -1 : (int64_t)i;
		snprintf(st->host, sizeof st->host, "%s", i == 2 ? "" : "node\"1");
		st->steps = 10 * (i + 1);
		st->last_step = (int64_t)(99 + i);
		st->step_avg_ms = 80.0 + (double)i;
		st->step_p50_ms = 75.0;
		st->step_p99_ms = 120.0;
		st->step_max_ms = 150.0;
		st->ips = 12.5;
		st->samples_per_s = 800;
		st->reader_ratio = 0.25;
		st->phase_share[PT_RANK_DATALOADER] = 0.25;
		st->phase_share[PT_RANK_FORWARD] = 0.3;
		st->phase_share[PT_RANK_BACKWARD] = 0.35;
		st->phase_share[PT_RANK_OPTIMIZATION] = 0.05;
		st->phase_share[PT_RANK_OTHER] = 0.05;
		st->gpu_util_pct = i == 1 ? -1 : 64;
		st->cpu_util_pct = i == 1 ? -1 : 150;
		st->comm_share = 0.1;
		st->comm_overlap = 0.5;
		st->events = 12345;
		struct pt_summary *s = pt_xcalloc(1, sizeof *s);
		st->summary = s;
		if (i == 0) {
			s->ndevices = 2;
			s->devices = pt_xcalloc(2, sizeof *s->devices);
			s->devices[0].device = 0;
			s->devices[0].util_pct = 50;
			s->devices[1].device = 3;
			s->devices[1].util_pct = 75;
		}
		for (size_t k = 0; k < sizeof hostile / sizeof hostile[0]; k++)
			add_op(s, f->st, hostile[k], strlen(hostile[k]), 1000000000ull + k, k + 1);
		add_op(s, f->st, "aten::mm", 8, 1500000000ull, 7);
		add_op(s, f->st, "tiny", 4, 1, 1);
		char big[5000];
		memset(big, 'z', sizeof big);
		add_op(s, f->st, big, sizeof big, 3000000000ull, 1);
	}
	f->r.slowest = nranks - 1;
	f->r.median_step_ms = 81;
	f->r.spread = 1.05;
}

static void fixture_free(struct fixture *f)
{
	for (size_t i = 0; i < f->r.n; i++)
		pt_summary_free(f->r.r[i].summary);
	free(f->r.r);
	pt_strtab_free(f->st);
}

static char *render(const struct pt_ranks *r, struct pt_prom_opts *o, size_t *len)
{
	struct pt_buf b = {0};
	pt_prom_render(&b, r, o);
	*len = b.len;
	pt_buf_putc(&b, 0);
	return b.p;
}

/* ---- tests ---- */

static void test_empty(void **state)
{
	(void)state;
	struct pt_prom_opts o;
	pt_prom_opts_init(&o);
	o.host = "h";
	o.version = "1.2\"3";
	o.events_total = 42;
	o.dropped_source = 7;
	size_t len;
	char *text = render(NULL, &o, &len);
	struct parsed p;
	int rc = parse_all(&p, text, len);
	if (rc)
		fail_msg("%s", p.err);
	assert_true(fam_get(&p, "proftop_events_total", 20, 0) != NULL);
	assert_int_equal((int)value_of(text, "proftop_events_total{host=\"h\"}"), 42);
	assert_int_equal(
	    (int)value_of(text, "proftop_dropped_events_total{host=\"h\",reason=\"source\"}"), 7);
	assert_non_null(strstr(text, "version=\"1.2\\\"3\""));
	assert_non_null(strstr(text, "# TYPE proftop_events_total counter\n"));
	/* families with no ranks still parse: HELP/TYPE, no samples */
	assert_non_null(strstr(text, "# TYPE proftop_ips gauge\n"));
	assert_int_equal(count_lines(text, "proftop_ips{"), 0);
	parsed_free(&p);
	free(text);
}

static void test_ranks(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f, 3);
	struct pt_prom_opts o;
	pt_prom_opts_init(&o);
	o.strings = f.st;
	o.host = "fallback";
	o.render_s = 0.002;
	o.updated_unix_s = 1700000000.5;
	size_t len;
	char *text = render(&f.r, &o, &len);
	struct parsed p;
	int rc = parse_all(&p, text, len);
	if (rc)
		fail_msg("%s\n----\n%.2000s", p.err, text);

	static const char *const families[] = {
	    "proftop_step_seconds",
	    "proftop_step_mean_seconds",
	    "proftop_ips",
	    "proftop_samples_per_second",
	    "proftop_reader_ratio",
	    "proftop_phase_ratio",
	    "proftop_gpu_utilization_ratio",
	    "proftop_process_cpu_ratio",
	    "proftop_communication_ratio",
	    "proftop_last_step",
	    "proftop_operator_seconds",
	    "proftop_operator_gpu_seconds",
	    "proftop_operator_calls",
	    "proftop_dropped_events_total",
	    "proftop_events_total",
	    "proftop_step_spread",
	};
	for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
		struct fam *fm = fam_get(&p, families[i], strlen(families[i]), 0);
		if (!fm || !fm->help || !fm->typed)
			fail_msg("family %s missing or without HELP/TYPE", families[i]);
	}
	assert_string_equal(fam_get(&p, "proftop_step_seconds", 20, 0)->type, "summary");
	assert_true(count_lines(text, "proftop_") > 100);

	/* labels: host (escaped), rank left out when unknown, fallback host */
	const char *r0 = "host=\"node\\\"1\",rank=\"0\",pid=\"1000\"";
	const char *r1 = "host=\"node\\\"1\",pid=\"1001\"";
	const char *r2 = "host=\"fallback\",rank=\"2\",pid=\"1002\"";
	char k[512];
	snprintf(k, sizeof k, "proftop_ips{%s}", r0);
	assert_true(value_of(text, k) == 12.5);
	snprintf(k, sizeof k, "proftop_ips{%s}", r1);
	assert_true(value_of(text, k) == 12.5);
	snprintf(k, sizeof k, "proftop_ips{%s}", r2);
	assert_true(value_of(text, k) == 12.5);
	/* units: ms -> s, percent -> ratio */
	snprintf(k, sizeof k, "proftop_step_seconds{%s,quantile=\"0.5\"}", r0);
	assert_true(fabs(value_of(text, k) - 0.075) < 1e-12);
	snprintf(k, sizeof k, "proftop_step_seconds{%s,quantile=\"0.99\"}", r0);
	assert_true(fabs(value_of(text, k) - 0.12) < 1e-12);
	snprintf(k, sizeof k, "proftop_step_seconds_count{%s}", r2);
	assert_true(value_of(text, k) == 30);
	snprintf(k, sizeof k, "proftop_step_seconds_sum{%s}", r2);
	assert_true(fabs(value_of(text, k) - 0.082 * 30) < 1e-9);
	snprintf(k, sizeof k, "proftop_phase_ratio{%s,phase=\"backward\"}", r0);
	assert_true(fabs(value_of(text, k) - 0.35) < 1e-12);
	assert_int_equal(count_lines(text, "proftop_phase_ratio{"), 15);
	snprintf(k, sizeof k, "proftop_gpu_utilization_ratio{%s,device=\"3\"}", r0);
	assert_true(value_of(text, k) == 0.75);
	snprintf(k, sizeof k, "proftop_gpu_utilization_ratio{%s,device=\"all\"}", r2);
	assert_true(value_of(text, k) == 0.64);
	assert_int_equal(count_lines(text, "proftop_gpu_utilization_ratio{"), 3); /* r1: none */
	assert_int_equal(count_lines(text, "proftop_process_cpu_ratio{"), 2);
	snprintf(k, sizeof k, "proftop_process_cpu_ratio{%s}", r0);
	assert_true(value_of(text, k) == 1.5);
	snprintf(k, sizeof k, "proftop_last_step{%s}", r2);
	assert_true(value_of(text, k) == 101);
	assert_true(value_of(text, "proftop_step_spread{host=\"fallback\"}") == 1.05);

	/* operators: top 20 of 16 rows = all, largest first, exact seconds */
	assert_int_equal(count_lines(text, "proftop_operator_seconds{"), 3 * 16);
	snprintf(k, sizeof k, "proftop_operator_seconds{%s,op=\"aten::mm\"}", r0);
	assert_non_null(strstr(text, k));
	assert_non_null(strstr(text, "op=\"aten::mm\"} 1.5\n"));
	assert_non_null(strstr(text, "op=\"tiny\"} 0.000000001\n"));
	assert_non_null(strstr(text, "op=\"a\\\"b\"} 1\n"));
	assert_non_null(strstr(text, "op=\"c\\\\d\"} 1.000000001\n"));
	assert_non_null(strstr(text, "op=\"e\\nf\"}"));
	assert_non_null(strstr(text, "op=\"\\\\x1B[31mred\\\\x1B[0m\"}"));
	assert_non_null(strstr(text, "op=\"bad\xef\xbf\xbd\xef\xbf\xbdutf\"}"));
	assert_non_null(strstr(text, "op=\"cut\xef\xbf\xbd\"}"));
	assert_non_null(strstr(text, "op=\"c1\\\\u0085x\"}"));
	assert_non_null(strstr(text, "op=\"tab\\\\x09here\\\\x0D\"}"));
	assert_non_null(strstr(text, "op=\"\\\"\\\\\\n\"}"));
	assert_non_null(strstr(text, "op=\"\"}"));
	assert_non_null(strstr(text, "op=\"日本語 ok\"}"));
	/* "x\xff" and "x\xfe" both show as x + U+FFFD: the second is made distinct */
	assert_non_null(strstr(text, "op=\"x\xef\xbf\xbd\"}"));
	assert_non_null(strstr(text, "op=\"x\xef\xbf\xbd [2]\"}"));
	/* the 5000-byte name is cut to the limit and marked */
	const char *zz = strstr(text, "op=\"zzzz");
	assert_non_null(zz);
	const char *q = strchr(zz + 4, '"');
	assert_int_equal((int)(q - (zz + 4)), PT_PROM_MAX_LABEL_BYTES);
	assert_memory_equal(q - 3, "...", 3);
	/* the first operator line of rank 0 is the biggest (the 3 s name) */
	const char *first = strstr(text, "proftop_operator_seconds{");
	assert_true(first == zz - (strlen("proftop_operator_seconds{") + strlen(r0) + 1));

	parsed_free(&p);
	free(text);

	/* --top 3: three per rank, the three largest */
	o.top = 3;
	text = render(&f.r, &o, &len);
	rc = parse_all(&p, text, len);
	if (rc)
		fail_msg("%s", p.err);
	assert_int_equal(count_lines(text, "proftop_operator_seconds{"), 9);
	assert_int_equal(count_lines(text, "proftop_operator_calls{"), 9);
	assert_non_null(strstr(text, "op=\"aten::mm\""));
	assert_null(strstr(text, "op=\"tiny\""));
	parsed_free(&p);
	free(text);

	/* --top 0: no operator families */
	o.top = 0;
	text = render(&f.r, &o, &len);
	assert_null(strstr(text, "proftop_operator_seconds"));
	free(text);
	fixture_free(&f);
}

static void test_duplicate_ranks(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f, 3);
	/* rank 2 names the same series as rank 0 */
	f.r.r[2].pid = f.r.r[0].pid;
	f.r.r[2].rank = f.r.r[0].rank;
	memcpy(f.r.r[2].host, f.r.r[0].host, sizeof f.r.r[0].host);
	struct pt_prom_opts o;
	pt_prom_opts_init(&o);
	o.strings = f.st;
	size_t len;
	char *text = render(&f.r, &o, &len);
	struct parsed p;
	int rc = parse_all(&p, text, len);
	if (rc)
		fail_msg("%s", p.err);
	assert_int_equal(count_lines(text, "proftop_ips{"), 2);
	parsed_free(&p);
	free(text);
	fixture_free(&f);
}

static void test_empty_rank(void **state)
{
	(void)state;
	/* a rank with no steps, no summary: NaN quantiles, zero counts, no ops */
	struct pt_rank_stat st;
	memset(&st, 0, sizeof st);
	st.pid = 5;
	st.rank = 0;
	st.last_step = -1;
	st.gpu_util_pct = -1;
	st.cpu_util_pct = -1;
	struct pt_ranks r = {&st, 1, 0, 0, 0, 0};
	struct pt_strtab *strs = pt_strtab_new();
	struct pt_prom_opts o;
	pt_prom_opts_init(&o);
	o.strings = strs;
	size_t len;
	char *text = render(&r, &o, &len);
	struct parsed p;
	int rc = parse_all(&p, text, len);
	if (rc)
		fail_msg("%s", p.err);
	assert_non_null(strstr(text, "quantile=\"0.5\"} NaN\n"));
	assert_non_null(
	    strstr(text, "proftop_step_seconds_count{host=\"\",rank=\"0\",pid=\"5\"} 0\n"));
	assert_int_equal(count_lines(text, "proftop_last_step{"), 0);
	assert_int_equal(count_lines(text, "proftop_operator_seconds{"), 0);
	assert_null(strstr(text, "proftop_step_spread{"));
	parsed_free(&p);
	free(text);
	pt_strtab_free(strs);
}

static void label(const char *in, size_t len, size_t max, const char *want)
{
	struct pt_buf b = {0};
	pt_prom_label_value(&b, in, len, max);
	pt_buf_putc(&b, 0);
	assert_string_equal(b.p, want);
	pt_buf_free(&b);
}

static void test_label_value(void **state)
{
	(void)state;
	label("plain", 5, 0, "plain");
	label("a\"b\\c\nd", 7, 0, "a\\\"b\\\\c\\nd");
	label("\x01\x7f", 2, 0, "\\\\x01\\\\x7F");
	label("\xed\xa0\x80", 3, 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"); /* surrogate */
	label("\xc0\xaf", 2, 0, "\xef\xbf\xbd\xef\xbf\xbd");		     /* overlong */
	label("\xf4\x90\x80\x80", 4, 0,
	      "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"); /* > U+10FFFF */
	label("\xf0\x9f\x98\x80", 4, 0, "\xf0\x9f\x98\x80");	   /* emoji kept */
	label("a\0b", 3, 0, "a\\\\x00b");
	label("abcdefghij", 10, 10, "abcdefghij"); /* fits exactly: not cut */
	label("abcdefghijk", 11, 10, "abcdefg...");
	label("\"\"\"\"\"\"\"\"", 8, 10, "\\\"\\\"\\\"...");
	/* a cut never splits a multi-byte character */
	label("\xe6\x97\xa5\xe6\x97\xa5\xe6\x97\xa5", 9, 8, "\xe6\x97\xa5...");
}

/* The top-N pick matches a full sort on a large random table. */
static void test_top_pick(void **state)
{
	(void)state;
	struct fixture f;
	f.st = pt_strtab_new();
	struct pt_rank_stat st;
	memset(&st, 0, sizeof st);
	st.pid = 1;
	st.rank = 0;
	st.summary = pt_xcalloc(1, sizeof *st.summary);
	uint64_t x = 12345;
	char name[32];
	for (int i = 0; i < 5000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		snprintf(name, sizeof name, "op%d", i);
		add_op(st.summary, f.st, name, strlen(name), (x >> 40) % 1000, 1);
	}
	struct pt_ranks r = {&st, 1, 0, 0, 0, 0};
	struct pt_prom_opts o;
	pt_prom_opts_init(&o);
	o.strings = f.st;
	o.top = 50;
	size_t len;
	char *text = render(&r, &o, &len);
	struct parsed p;
	int rc = parse_all(&p, text, len);
	if (rc)
		fail_msg("%s", p.err);
	/* expected: totals sorted descending, ties by row */
	uint64_t *tot = pt_xmalloc(5000 * sizeof *tot);
	for (int i = 0; i < 5000; i++)
		tot[i] = st.summary->operators.rows[i].cpu.total_ns;
	const char *l = strstr(text, "proftop_operator_seconds{");
	uint64_t prev = UINT64_MAX;
	int prev_row = -1;
	for (int k = 0; k < 50; k++) {
		const char *op = strstr(l, "op=\"op") + 6;
		int row = atoi(op);
		uint64_t v = tot[row];
		assert_true(v < prev || (v == prev && row > prev_row));
		/* nothing left out beats it */
		prev = v;
		prev_row = row;
		l = strchr(l, '\n') + 1;
	}
	assert_true(strncmp(l, "proftop_operator_seconds{", 25) != 0);
	size_t better = 0;
	for (int i = 0; i < 5000; i++)
		if (tot[i] > prev || (tot[i] == prev && i < prev_row))
			better++;
	assert_int_equal(better, 49);
	free(tot);
	parsed_free(&p);
	free(text);
	pt_summary_free(st.summary);
	pt_strtab_free(f.st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_empty),	    cmocka_unit_test(test_ranks),
	    cmocka_unit_test(test_duplicate_ranks), cmocka_unit_test(test_empty_rank),
	    cmocka_unit_test(test_label_value),	    cmocka_unit_test(test_top_pick),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
