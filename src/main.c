/*
 * main.c - proftop's command-line entry: dispatches to the commands
 * (report, export, run, record, ls, attach, help), prints the top-level
 * usage and version, and holds the helpers every command shares (declared in cli.h): option parsers,
 * error conventions, loading a trace file and summarizing a step range.
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

#include "cli.h"
#include "proftop/chrome.h"
#include "proftop/error.h"
#include "proftop/store.h"
#include "util.h"

void cli_usage_main(FILE *f)
{
	fputs("Usage: proftop COMMAND [OPTIONS] [ARGS]\n"
	      "\n"
	      "A terminal profiler for deep-learning training: Paddle-style summary tables\n"
	      "(Model, Overview, Operator, Kernel, Memory, Distributed, Perf) for Chrome\n"
	      "trace files from proftop, PyTorch/Kineto, Paddle, MindSpore and msprof.\n"
	      "\n"
	      "Commands:\n"
	      "  (none) [-p PIDS|--all]   attach to every live session (or those of PIDS)\n"
	      "  run [OPTS] -- CMD...      start CMD under the probe and watch it\n"
	      "  record -o OUT -- CMD...   record CMD (or -p PIDS, --all) to a Chrome trace\n"
	      "  capture -p PID [--steps N] run torch's profiler in a PyTorch job under proftop\n"
	      "                            for its next N steps (default 5): every aten op,\n"
	      "                            nested in the live view, saved as a Chrome trace\n"
	      "  ls                        list this user's sessions\n"
	      "  backends                  list the data sources and whether each works here\n"
	      "  serve --listen A:P -- CMD export live figures to Prometheus (/metrics)\n"
	      "  view FILE|DIR             open a trace in the full-screen UI, or watch a\n"
	      "                            folder a profiler writes traces into\n"
	      "  report FILE [--json]      print the summary tables of a trace\n"
	      "  export IN -o OUT.json     write a trace as Chrome Trace Event Format JSON\n"
	      "  merge A B.. -o OUT.json   join per-rank traces into one, a lane per rank\n"
	      "  diff BEFORE AFTER         compare two runs: what got faster or slower\n"
	      "  help COMMAND              show a command's options\n"
	      "\n"
	      "Options:\n"
	      "  -h, --help                show this help\n"
	      "  -V, --version             print the version\n"
	      "\n"
	      "Traces may be plain or gzip-compressed JSON. Run 'proftop help COMMAND' for\n"
	      "the options of each command; 'man proftop' for more.\n"
	      "\n"
	      "Memory: --max-mem SIZE (default 1G; run, record, view, report, export) bounds\n"
	      "what grows with the data: the kept events (3/4 of SIZE, about 40 bytes each)\n"
	      "and the summaries built from them. Past it the oldest events go first and\n"
	      "every face says how many and how far back the data reaches. proftop's whole\n"
	      "resident memory stays below SIZE + 64 MiB (the fixed part: file reader\n"
	      "buffers, the session's shared segment, program and curses).\n",
	      f);
}

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
	struct pt_agg_opts ao;
	pt_agg_opts_init(&ao);
	if (o->has_steps) {
		ao.step_first = o->step_first;
		ao.step_last = o->step_last;
	}
	struct pt_summary *s = pt_summarize(t, &ao);
	*out = NULL;
	if (o->has_steps && s->nsteps == 0) {
		/* say which steps there are: summarize again without the range */
		pt_summary_free(s);
		pt_agg_opts_init(&ao);
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

static int cmd_help(int argc, char **argv);

/* One table drives both dispatch and `proftop help COMMAND`. */
static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	void (*usage)(FILE *out);
} commands[] = {
	{"report", cli_report, cli_usage_report},
	{"export", cli_export, cli_usage_export},
	{"merge", cli_merge, cli_usage_merge},
	{"diff", cli_diff, cli_usage_diff},
	{"run", cli_run, cli_usage_run},
	{"view", cli_view, cli_usage_view},
	{"record", cli_record, cli_usage_record},
	{"ls", cli_ls, cli_usage_ls},
	{"attach", NULL, cli_usage_attach}, /* `proftop [-p PID]`: help only */
	{"backends", cli_backends, cli_usage_backends},
	{"serve", cli_serve, cli_usage_serve},
	{"capture", cli_capture, cli_usage_capture},
	{"help", cmd_help, cli_usage_main},
};

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static int cmd_help(int argc, char **argv)
{
	if (argc < 2) {
		cli_usage_main(stdout);
		return CLI_OK;
	}
	const struct command *cmd = find_command(argv[1]);
	if (!cmd) {
		char esc[128];
		pt_escape_term(esc, sizeof esc, argv[1], strlen(argv[1]), 60, 0);
		return cli_usage_error("no help for unknown command '%s'", esc);
	}
	cmd->usage(stdout);
	return CLI_OK;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return cli_attach(argc, argv);
	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		cli_usage_main(stdout);
		return CLI_OK;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		printf("proftop %s\n", PROFTOP_VERSION);
		return CLI_OK;
	}
	const struct command *c = find_command(cmd);
	if (c && c->run)
		return c->run(argc - 1, argv + 1);
	/* any other option is attach's (-p PIDS, --all, -d, -o, --baseline,
	 * --anomaly-dir, the screen's): it says itself when one is unknown */
	if (cmd[0] == '-' && cmd[1])
		return cli_attach(argc, argv);
	char esc[128];
	pt_escape_term(esc, sizeof esc, cmd, strlen(cmd), 60, 0);
	if (cmd[0] == '-')
		return cli_usage_error("unknown option '%s'", esc);
	return cli_usage_error("unknown command '%s'", esc);
}
