/*
 * cli_common.c - the helpers every command shares (declared in cli.h):
 * option parsers, error conventions, loading a trace file and summarizing a
 * step range.
 *
 * Conventions: usage goes to stdout with exit 0 when asked for (--help,
 * help CMD); a bad command line prints one line to stderr plus "Try
 * 'proftop --help'." and exits 2; a command that fails on its input prints
 * one line "proftop: ..." and exits 1.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "proftop/chrome.h"
#include "proftop/diff.h"
#include "proftop/error.h"
#include "proftop/shm.h"
#include "proftop/store.h"
#include "model/util.h"

static int usage_tail(FILE *f)
{
	fputs("Try 'proftop --help'.\n", f);
	return CLI_USAGE;
}

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;
	fputs("proftop: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return usage_tail(stderr);
}

int cli_fail(const char *fmt, ...)
{
	va_list ap;
	fputs("proftop: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return CLI_FAIL;
}

int cli_getopt_error(int c, char **argv)
{
	const char *arg = argv[optind - 1];
	char esc[128];
	pt_escape_term(esc, sizeof esc, arg, strlen(arg), 60, 0);
	if (c == ':')
		return cli_usage_error("option '%s' needs an argument", esc);
	return cli_usage_error("unknown option '%s'", esc);
}

void cli_load_opts_init(struct cli_load_opts *o)
{
	memset(o, 0, sizeof *o);
	o->max_mem_bytes = PT_STORE_DEFAULT_MAX_BYTES;
	o->step_first = INT64_MIN;
	o->step_last = INT64_MAX;
}

/* Whole-string signed decimal. */
static int parse_i64(const char *s, size_t len, int64_t *out)
{
	char buf[32];
	if (len == 0 || len >= sizeof buf)
		return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	char *end;
	errno = 0;
	long long v = strtoll(buf, &end, 10);
	if (errno || *end || end == buf || buf[0] == ' ' || buf[0] == '+')
		return -1;
	*out = v;
	return 0;
}

int cli_parse_steps(const char *s, int64_t *first, int64_t *last)
{
	const char *colon = strchr(s, ':');
	int64_t a = INT64_MIN, b = INT64_MAX;
	if (!colon) {
		if (parse_i64(s, strlen(s), &a))
			return -1;
		b = a;
	} else {
		size_t la = (size_t)(colon - s), lb = strlen(colon + 1);
		if (la == 0 && lb == 0)
			return -1;
		if (la && parse_i64(s, la, &a))
			return -1;
		if (lb && parse_i64(colon + 1, lb, &b))
			return -1;
	}
	if (a > b)
		return -1;
	*first = a;
	*last = b;
	return 0;
}

int cli_parse_count(const char *s, uint64_t max, uint64_t *out)
{
	if (!s || !*s || *s < '0' || *s > '9')
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

int cli_opt_steps(struct cli_load_opts *o, const char *arg)
{
	if (cli_parse_steps(arg, &o->step_first, &o->step_last))
		return cli_usage_error("--steps: '%s' is not a step range (A:B, A:, :B or A)", arg);
	o->has_steps = 1;
	o->steps_text = arg;
	return 0;
}

int cli_opt_max_mem(struct cli_load_opts *o, const char *arg)
{
	size_t v;
	if (pt_parse_size(arg, &v))
		return cli_usage_error("--max-mem: '%s' is not a size (e.g. 512M, 2G)", arg);
	if (v < PT_STORE_MIN_MAX_BYTES)
		return cli_usage_error("--max-mem: %s is below the minimum of 1M", arg);
	o->max_mem_bytes = v;
	return 0;
}

int cli_opt_threads(struct cli_load_opts *o, const char *arg)
{
	uint64_t v;
	if (cli_parse_count(arg, 256, &v))
		return cli_usage_error("--threads: '%s' is not a number from 0 to 256", arg);
	o->threads = (int)v;
	return 0;
}

int cli_load_opt(struct cli_load_opts *o, int c, const char *arg)
{
	int rc;
	switch (c) {
	case CLI_OPT_STEPS:
		rc = cli_opt_steps(o, arg);
		break;
	case CLI_OPT_WITH_COMPILE:
		o->with_compile = 1;
		rc = 0;
		break;
	case CLI_OPT_BATCH: {
		uint64_t v;
		rc = 0;
		if (cli_parse_count(arg, UINT32_MAX, &v) || !v)
			rc = cli_usage_error("--batch: '%s' is not a number of samples (1 or more)", arg);
		else
			o->batch = v;
		break;
	}
	case CLI_OPT_MAXMEM:
		rc = cli_opt_max_mem(o, arg);
		break;
	case CLI_OPT_THREADS:
		rc = cli_opt_threads(o, arg);
		break;
	default:
		return 0;
	}
	return rc ? rc : 1;
}

/* A trace whose every event was skipped: say how many and why, free t,
 * and fail (0 when nothing was skipped: an empty trace is not an error). */
static int all_skipped(struct pt_trace *t, const char *path)
{
	static const enum pt_warn skips[] = {
	    PT_WARN_BAD_EVENT,	PT_WARN_UNKNOWN_PHASE, PT_WARN_E_WITHOUT_B,
	    PT_WARN_UNCLOSED_B, PT_WARN_NEGATIVE_DUR,  PT_WARN_HUGE_DUR,
	    PT_WARN_BAD_TS,	PT_WARN_NONFINITE,     PT_WARN_BAD_DEVICE_RECORD};
	uint64_t n = 0;
	struct pt_buf why = {0};
	for (size_t i = 0; i < sizeof skips / sizeof *skips; i++) {
		uint64_t k = t->warnings[skips[i]];
		if (!k)
			continue;
		n += k;
		pt_buf_printf(&why, "%s%" PRIu64 " %s", why.len ? "; " : "", k,
			      pt_warn_text(skips[i]));
	}
	int rc = 0;
	if (n) {
		char esc[PATH_MAX];
		pt_escape_term(esc, sizeof esc, path, strlen(path), 0, 0);
		pt_buf_putc(&why, 0);
		rc =
		    cli_fail("%s: no event kept: all %" PRIu64 " were skipped (%s)", esc, n, why.p);
		pt_trace_free(t);
	}
	pt_buf_free(&why);
	return rc;
}

int cli_load_trace(const char *path, const struct cli_load_opts *o, struct pt_trace **out)
{
	struct stat sb;
	*out = NULL;
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		return cli_fail("%s: is a directory (give a trace file)", path);
	struct pt_trace *t = pt_trace_new(o->max_mem_bytes);
	pt_trace_set_source(t, path);
	struct pt_read_opts ro = {.threads = o->threads};
	char err[512] = "";
	int rc = pt_chrome_read(t, path, &ro, err, sizeof err);
	if (rc < 0) {
		char esc[600];
		if (!err[0])
			snprintf(err, sizeof err, "%s: %s", path, pt_strerror(rc));
		/* the message may quote the file: keep it on one safe line */
		pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
		pt_trace_free(t);
		return cli_fail("%s", esc);
	}
	if (!t->events_seen && (rc = all_skipped(t, path)))
		return rc;
	*out = t;
	return CLI_OK;
}

static void step_range_text(const struct cli_load_opts *o, char *buf, size_t len)
{
	pt_escape_term(buf, len, o->steps_text, strlen(o->steps_text), 40, 0);
}

int cli_summarize(struct pt_trace *t, const struct cli_load_opts *o, struct pt_summary **out)
{
	return cli_summarize_spare(t, o, NULL, NULL, out);
}

int cli_summarize_spare(struct pt_trace *t, const struct cli_load_opts *o,
			void (*spare)(void *, uint64_t, uint64_t), void *arg,
			struct pt_summary **out)
{
	struct pt_agg_opts ao;
	pt_agg_opts_init(&ao);
	if (o->has_steps) {
		ao.step_first = o->step_first;
		ao.step_last = o->step_last;
	}
	ao.with_compile = o->with_compile;
	ao.batch_samples = o->batch;
	ao.spare = spare;
	ao.spare_arg = arg;
	struct pt_summary *s = pt_summarize(t, &ao);
	*out = NULL;
	if (o->has_steps && s->nsteps == 0) {
		/* say which steps there are: summarize again without the range */
		pt_summary_free(s);
		pt_agg_opts_init(&ao);
		ao.batch_samples = o->batch;
		struct pt_summary *all = pt_summarize(t, &ao);
		char range[64];
		step_range_text(o, range, sizeof range);
		int rc;
		if (!all->nsteps) {
			rc = cli_fail("no steps in %s; the trace has no steps", range);
		} else {
			int64_t lo = all->steps[0].number, hi = lo;
			for (size_t i = 1; i < all->nsteps; i++) {
				if (all->steps[i].number < lo)
					lo = all->steps[i].number;
				if (all->steps[i].number > hi)
					hi = all->steps[i].number;
			}
			rc = cli_fail("no steps in %s; the trace has steps %" PRId64 " to %" PRId64,
				      range, lo, hi);
		}
		pt_summary_free(all);
		return rc;
	}
	*out = s;
	return CLI_OK;
}

int cli_parse_secs(const char *s, uint64_t *ns)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	double unit = 1e9; /* seconds unless a unit follows: 500ms, 10s, 2m, 1h */
	if (end != s && *end) {
		if (!strcmp(end, "ms"))
			unit = 1e6;
		else if (!strcmp(end, "s"))
			unit = 1e9;
		else if (!strcmp(end, "m") || !strcmp(end, "min"))
			unit = 60e9;
		else if (!strcmp(end, "h"))
			unit = 3600e9;
		else
			return -1;
		end += strlen(end);
	}
	if (errno || end == s || *end || !(v > 0) || v * unit > 1e16)
		return -1;
	*ns = (uint64_t)(v * unit);
	return *ns ? 0 : -1;
}

/* Loads and summarizes one side; CLI_OK with *out, else the error printed. */
int cli_load_side(const char *path, const struct cli_load_opts *lo, struct pt_diff_side **out)
{
	struct pt_trace *t = NULL;
	struct pt_summary *s = NULL;
	int rc = cli_load_trace(path, lo, &t);
	if (rc)
		return rc;
	rc = cli_summarize(t, lo, &s);
	if (rc == CLI_OK)
		*out = pt_diff_side_new(t, s, path);
	pt_trace_free(t);
	return rc;
}

int cli_baseline_load(const char *path, const struct cli_load_opts *lo, struct pt_diff_side **out)
{
	struct cli_load_opts all = *lo;
	all.has_steps = 0; /* the whole baseline run */
	*out = NULL;
	return cli_load_side(path, &all, out);
}

int cli_opt_capture_straggler(const char *arg, double *k)
{
	if (!arg) {
		*k = 2.0;
		return 0;
	}
	char *end;
	double v = strtod(arg, &end);
	if (end == arg || *end || !(v >= 1.1) || v > 1000)
		return cli_usage_error("--capture-on-straggler: '%s' is not a factor from 1.1 to 1000",
				       arg);
	*k = v;
	return 0;
}

int cli_opt_capture_steps(const char *arg, uint32_t *steps)
{
	uint64_t n;
	if (cli_parse_count(arg, PT_SHM_CTL_MAX_STEPS, &n) || n == 0)
		return cli_usage_error("--capture-steps takes 1 to %u", PT_SHM_CTL_MAX_STEPS);
	*steps = (uint32_t)n;
	return 0;
}

int cli_opt_hang_after(const char *arg, uint64_t *ns)
{
	if (cli_parse_secs(arg, ns))
		return cli_usage_error("--hang-after: '%s' is not a duration (30, 90s, 5m)", arg);
	return 0;
}
