/*
 * cli/view.c - `proftop view FILE`: the full-screen UI over a trace file
 * (tui/); `proftop view DIR`: the same screen, live, over a folder that a
 * framework's profiler keeps writing traces into (the tracedir backend as
 * the live loop's extra source). Off a terminal, view FILE prints the text
 * report instead; view DIR needs the screen and says what to run instead.
 */
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "live/live.h"
#include "proftop/diff.h"
#include "proftop/report.h"
#include "proftop/shm.h"
#include "proftop/tracedir.h"
#include "model/util.h"

void cli_usage_view(FILE *f)
{
	fputs("Usage: proftop view [OPTIONS] FILE\n"
	      "       proftop view [OPTIONS] DIR\n"
	      "\n"
	      "Open a trace (Chrome JSON, plain or .gz: proftop, PyTorch/Kineto, Paddle,\n"
	      "MindSpore, msprof) in the full-screen UI: Summary, Operators, Kernels, Timeline,\n"
	      "Memory, Distributed and UserDefined views; press ? for the keys. Off a terminal\n"
	      "the summary tables are printed instead (as proftop report does).\n"
	      "\n"
	      "With a folder, watch it: every trace file a profiler writes there (*.json,\n"
	      "*.json.gz: PyTorch's tensorboard_trace_handler, Paddle's export_chrome_tracing)\n"
	      "is added to the live view once it is complete - closed or renamed in by its\n"
	      "writer, or unchanged for a second, and parsed whole; files still being written\n"
	      "are waited for. Files already there are read first, oldest first. Each file's\n"
	      "rank (distributedInfo) names its process in the Ranks view. Hidden files,\n"
	      "subfolders and proftop's own snapshots (proftop-*.json) are skipped; a file\n"
	      "rewritten in place after it was read is not read again. --max-mem bounds the\n"
	      "whole: a quarter of it for the file being read, the rest for what was read\n"
	      "(the oldest events go first). q quits.\n"
	      "\n"
	      "Options:\n"
	      "  -d, --delay SECS    refresh period (default 1)\n" CLI_BASELINE_HELP
	      "                      (off a terminal: print 'proftop diff FILE2 FILE')\n"
	      CLI_SCREEN_HELP
	      "      --max-mem SIZE  memory cap of the event store (default 1G)\n"
	      "  -h, --help          show this help\n",
	      f);
}

/* The screen over a watched folder: the session line tells what the folder gave. */
struct dir_screen {
	struct cli_screen scr;
	struct pt_backend *b;
	int open_failed;
	char describe[300], state[400];
};

/* "N files, watching[, 1 waiting][, ...]": in the state, which is never cut
 * short like the describe part (a third of the width) is on a long path. */
static void dir_state(struct dir_screen *ds, const struct pt_tracedir_status *ts)
{
	struct pt_buf b = {0};
	pt_buf_printf(&b, "%u file%s, ", ts->files, ts->files == 1 ? "" : "s");
	if (ts->reading)
		pt_buf_printf(&b, "reading %s...", ts->reading_name);
	else
		pt_buf_printf(&b, "watching");
	if (ts->waiting)
		pt_buf_printf(&b, ", %u waiting", ts->waiting);
	if (ts->changed)
		pt_buf_printf(&b, ", %u rewritten (not re-read)", ts->changed);
	if (ts->broken)
		pt_buf_printf(&b, ", %u broken (%s)", ts->broken, ts->broken_name);
	if (ts->gone)
		pt_buf_printf(&b, ", folder gone");
	snprintf(ds->state, sizeof ds->state, "%.*s", (int)b.len, b.p);
	pt_buf_free(&b);
}

static int dir_wait(void *ctx, struct pt_trace *t, const struct pt_live_result *res,
		    uint64_t wait_ns)
{
	struct dir_screen *ds = ctx;
	struct cli_screen *s = &ds->scr;
	(void)res;
	if (!s->u && !s->failed) {
		s->u = tui_open(t, &s->o);
		s->failed = ds->open_failed = !s->u;
	}
	if (!s->u)
		return 1; /* no screen: nothing to watch with */
	struct pt_tracedir_status ts;
	pt_tracedir_status(ds->b, &ts);
	snprintf(ds->describe, sizeof ds->describe, "%s:", ts.dir);
	dir_state(ds, &ts);
	struct tui_status st = {ds->describe, ds->state, s->started_ns, 1, NULL};
	if (tui_wait(s->u, &st, wait_ns)) {
		cli_screen_close(s);
		s->failed = 1;
		return 1;
	}
	return 0;
}

static int view_dir(const char *dir, const struct tui_opts *to, const struct cli_load_opts *lo,
		    int delay_given)
{
	char esc[300];
	pt_escape_term(esc, sizeof esc, dir, strlen(dir), 80, 0);
	if (!isatty(0) || !isatty(1))
		return cli_fail("view %s: watching a folder needs a terminal; for the numbers of "
				"its traces run 'proftop report FILE' on each, or 'proftop merge "
				"FILES... -o all.json' and report that",
				esc);
	/* --max-mem bounds the whole: the file being read gets a quarter of it,
	 * the live trace the rest (each keeps its newest events when full) */
	size_t file_mem = lo->max_mem_bytes / 4, live_mem = lo->max_mem_bytes - file_mem;
	if (file_mem < PT_STORE_MIN_MAX_BYTES)
		file_mem = PT_STORE_MIN_MAX_BYTES;
	if (live_mem < PT_STORE_MIN_MAX_BYTES)
		live_mem = PT_STORE_MIN_MAX_BYTES;
	struct pt_tracedir_opts o = {0};
	o.max_mem_bytes = file_mem;
	o.threads = lo->threads;
	char err[512];
	struct dir_screen ds;
	memset(&ds, 0, sizeof ds);
	int rc = pt_tracedir_open(&ds.b, dir, &o, err, sizeof err);
	if (rc)
		return cli_fail("%s", err);
	struct pt_trace *t = pt_trace_new(live_mem);
	pt_trace_set_source(t, dir);
	ds.scr.o = *to;
	if (!delay_given) {
		ds.scr.o.refresh_ns = TUI_AUTO_REFRESH_NS;
		ds.scr.o.refresh_auto = 1;
	}
	ds.scr.started_ns = pt_now_ns();
	struct pt_live_opts lopts = {0};
	struct pt_live_result res;
	lopts.extra = ds.b;
	lopts.ui_wait = dir_wait;
	lopts.ui_ctx = &ds;
	lopts.out = stdout;
	pt_live_signals();
	pt_live_run(t, &lopts, &res);
	cli_screen_close(&ds.scr);
	rc = ds.open_failed ? CLI_FAIL : CLI_OK;
	struct pt_tracedir_status ts;
	pt_tracedir_status(ds.b, &ts);
	const char *why;
	for (size_t i = 0; (why = pt_tracedir_broken(ds.b, i)); i++)
		fprintf(stderr, "proftop: skipped %s\n", why);
	ds.b->ops->close(ds.b);
	printf("proftop: read %u trace file%s from %s (%llu events)\n", ts.files,
	       ts.files == 1 ? "" : "s", ts.dir, (unsigned long long)t->events_seen);
	pt_trace_free(t);
	return rc;
}

int cli_view(int argc, char **argv)
{
	static const struct option longs[] = {
		{"delay", required_argument, NULL, 'd'},
		{"max-mem", required_argument, NULL, 'M'},
		{"baseline", required_argument, NULL, CLI_OPT_BASELINE},
		{"help", no_argument, NULL, 'h'},
		CLI_SCREEN_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	struct tui_opts to;
	struct cli_load_opts lo;
	tui_opts_init(&to);
	cli_load_opts_init(&lo);
	int c, rc, delay_given = 0;
	const char *baseline = NULL;
	struct pt_diff_side *base = NULL;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hd:n:", longs, NULL)) != -1) {
		if ((rc = cli_screen_opt(&to, c, optarg)) != 0) {
			if (rc != 1)
				return rc;
			continue;
		}
		switch (c) {
		case 'h':
			cli_usage_view(stdout);
			return CLI_OK;
		case 'd':
			delay_given = 1;
			if (cli_parse_secs(optarg, &to.refresh_ns))
				return cli_usage_error("-d: '%s' is not a number of seconds", optarg);
			break;
		case 'M':
			if ((rc = cli_opt_max_mem(&lo, optarg)))
				return rc;
			break;
		case CLI_OPT_BASELINE:
			baseline = optarg;
			break;
		default:
			return cli_getopt_error(c, argv);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("view: expected one FILE or DIR (proftop view [OPTIONS] FILE)");
	struct stat st;
	if (baseline && (rc = cli_baseline_load(baseline, &lo, &base)))
		return rc;
	to.baseline = base;
	if (stat(argv[optind], &st) == 0 && S_ISDIR(st.st_mode)) {
		rc = view_dir(argv[optind], &to, &lo, delay_given);
		pt_diff_side_free(base);
		return rc;
	}
	struct pt_trace *t;
	if ((rc = cli_load_trace(argv[optind], &lo, &t))) {
		pt_diff_side_free(base);
		return rc;
	}
	rc = CLI_OK;
	if (base && (!isatty(0) || !isatty(1))) {
		/* no screen: the same comparison as text */
		struct pt_diff_side *now = pt_diff_side_new(t, pt_summarize(t, NULL), argv[optind]);
		pt_diff_text(stdout, base, now, NULL);
		pt_diff_side_free(now);
	} else if (!isatty(0) || !isatty(1)) {
		struct pt_summary *s = pt_summarize(t, NULL);
		struct pt_report_opts ro;
		pt_report_opts_init(&ro);
		pt_report_text(stdout, t, s, &ro);
		pt_summary_free(s);
	} else {
		char esc[300];
		pt_escape_term(esc, sizeof esc, argv[optind], strlen(argv[optind]), 80, 0);
		if (tui_view_file(t, &to, esc) < 0)
			rc = CLI_FAIL;
	}
	pt_trace_free(t);
	pt_diff_side_free(base);
	return rc;
}
