/*
 * cli_anomaly.c - the anomaly recorder's options on run, record and attach
 * (--anomalies, --anomaly-dir DIR, --anomaly-factor F, --anomaly-keep N),
 * hooking the recorder into the live loop (after_poll), and the closing
 * line that says what was saved. The recorder itself is src/live/anomaly.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "live/live.h"
#include "model/util.h"

void cli_anomaly_init(struct cli_anomaly *a)
{
	memset(a, 0, sizeof *a);
	pt_anomaly_opts_init(&a->o);
}

int cli_anomaly_opt(struct cli_anomaly *a, int c, const char *arg)
{
	char *end;
	uint64_t n;
	switch (c) {
	case CLI_OPT_ANOMALIES:
		a->on = 1;
		return 1;
	case CLI_OPT_ANOMALY_DIR:
		if (!arg || !*arg)
			return cli_usage_error("--anomaly-dir: give a folder");
		a->on = 1;
		a->o.dir = arg;
		return 1;
	case CLI_OPT_ANOMALY_FACTOR:
		errno = 0;
		a->o.factor = strtod(arg, &end);
		if (errno || end == arg || *end || !(a->o.factor > 1.0) || a->o.factor > 1e6)
			return cli_usage_error("--anomaly-factor: '%s' is not a number above 1",
					       arg);
		return 1;
	case CLI_OPT_ANOMALY_KEEP:
		if (cli_parse_count(arg, 1000000, &n))
			return cli_usage_error("--anomaly-keep: '%s' is not a count (0: keep all)",
					       arg);
		a->o.keep = (uint32_t)n;
		return 1;
	}
	return 0;
}

int cli_anomaly_check(const struct cli_anomaly *a)
{
	if (!a->on)
		return CLI_OK;
	char err[900], esc[1000];
	if (pt_anomaly_dir_check(a->o.dir, err, sizeof err) == 0)
		return CLI_OK;
	pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
	return cli_fail("--anomaly-dir: %s; give a folder of your own with --anomaly-dir", esc);
}

static void after_poll(void *ctx, struct pt_trace *t, uint64_t now_ns)
{
	struct cli_anomaly *a = ctx;
	pt_anomaly_check(a->d, t, now_ns);
}

void cli_anomaly_start(struct cli_anomaly *a, struct pt_live_opts *lo, struct tui_opts *to)
{
	if (!a->on)
		return;
	if (!a->o.dir)
		a->o.dir = PT_ANOMALY_DEFAULT_DIR;
	a->d = pt_anomaly_new(&a->o);
	lo->after_poll = after_poll;
	lo->after_ctx = a;
	if (to)
		to->anomalies = a->d;
}

int cli_anomaly_end(struct cli_anomaly *a, struct pt_trace *t)
{
	if (!a->d)
		return 0;
	pt_anomaly_finish(a->d, t);
	char dir[600], err[700];
	pt_escape_term(dir, sizeof dir, a->o.dir, strlen(a->o.dir), 0, 0);
	uint64_t found = pt_anomaly_found(a->d), written = pt_anomaly_written(a->d);
	uint64_t loop_ns, write_ns;
	pt_anomaly_cost(a->d, &loop_ns, &write_ns);
	const struct pt_anomaly_rec *v;
	size_t kept = pt_anomaly_files(a->d, &v);
	if (!found)
		fprintf(stderr, "proftop: no anomalies (slow steps or reader stalls)\n");
	else
		fprintf(
		    stderr,
		    "proftop: %llu anomal%s, %llu file%s saved, %zu kept in %s (at most %.1f ms "
		    "of the live loop, %.1f ms writing on a thread)\n",
		    (unsigned long long)found, found == 1 ? "y" : "ies",
		    (unsigned long long)written, written == 1 ? "" : "s", kept, dir,
		    (double)loop_ns / 1e6, (double)write_ns / 1e6);
	const char *e = pt_anomaly_error(a->d);
	int failed = e[0] != 0;
	if (failed) {
		pt_escape_term(err, sizeof err, e, strlen(e), 0, 0);
		fprintf(stderr, "proftop: warning: an anomaly could not be saved: %s\n", err);
	}
	pt_anomaly_free(a->d);
	a->d = NULL;
	return failed;
}
