/*
 * cli/serve.c - `proftop serve --listen ADDR:PORT [-p PID | --all | -- CMD]`:
 * the headless Prometheus exporter. The live loop (live.c) runs on the main
 * thread as for `record`; its wait hook (ui_wait) is the periodic tick:
 * every --refresh seconds it brings the per-rank figures over the recent
 * window up to date (pt_ranks_live_compute: what arrived costs, not the
 * window), renders the text exposition (prom.c) into a
 * fresh buffer and publishes it to the HTTP side (cli_serve_http.c), which
 * only hands out the latest finished buffer. So a scrape costs the same
 * few microseconds whatever the size of the trace, and a slow scraper
 * never holds up draining the session.
 *
 * Several sessions (-p A,B,..., --all) are read by one live loop, one
 * process (rank) each in the trace, so every refresh has a series per rank;
 * --all also picks up sessions that start after serve did.
 */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "live/live.h"
#include "output/prom.h"
#include "proftop/backend.h"
#include "proftop/colls.h"
#include "proftop/error.h"
#include "proftop/ranks.h"
#include "proftop/session.h"
#include "proftop/store.h"
#include "cli/serve_http.h"
#include "model/util.h"

#define SERVE_DEFAULT_WINDOW_NS (60ull * 1000000000ull)

void cli_usage_serve(FILE *f)
{
	fputs("Usage: proftop serve [OPTIONS] -- CMD [ARGS...]\n"
	      "       proftop serve [OPTIONS] -p PID\n"
	      "       proftop serve [OPTIONS] --all\n"
	      "\n"
	      "Export a training job's figures to Prometheus, without a screen: serve them\n"
	      "at http://ADDR:PORT/metrics in Prometheus' text format, labelled by host,\n"
	      "rank, pid (and device, phase, op): step time (median, p99, max, mean), IPS,\n"
	      "samples/s, reader ratio, phase shares, GPU and CPU utilization,\n"
	      "communication share, last step, top operators by time, dropped events;\n"
	      "the collectives' skew, last rank and bus bandwidth, the straggler and the\n"
	      "hang (docs/distributed.md).\n"
	      "With CMD, start it with the probe injected and serve until it exits (its\n"
	      "exit code is passed through); with -p, serve the running session of PID\n"
	      "until it exits or Ctrl-C.\n"
	      "\n"
	      "Options:\n"
	      "  -l, --listen ADDR:PORT  where to listen (default " PT_SERVE_DEFAULT_LISTEN ");\n"
	      "                          only that address: 0.0.0.0:PORT for every\n"
	      "                          interface, [::1]:PORT for IPv6, port 0 for any\n"
	      "  -p, --pid PID[,PID...]  serve the session of PID (or of each PID)\n"
	      "      --all               serve every live session of this user, and\n"
	      "                          those that start later\n"
	      "      --refresh SECS      recompute the figures every SECS (default 1; stretched\n"
	      "                          when a refresh would cost more than 4% of a core)\n"
	      "      --window SECS       figures over the last SECS of events, at least the\n"
	      "                          last SECS/2: the window moves on in steps of SECS/2\n"
	      "                          (default 60; 0 = every event kept)\n"
	      "      --top N             operators per rank, by total time (default 20;\n"
	      "                          0 = none)\n"
	      "      --max-mem SIZE      memory for kept events (default 1G)\n"
	      "      --log FILE          CMD's stdout and stderr (default proftop-run-PID.log in\n"
	      "                          $XDG_STATE_HOME/proftop or ~/.local/state/proftop)\n"
	      "      --torch-ops         also aten operators in a PyTorch job (CUDA builds of\n"
	      "                          torch; see docs/python.md)\n"
	      CLI_HANG_HELP
	      "      --inject            with -p: a Python process with no session (not\n"
	      "                          started under proftop): load proftop and its PyTorch\n"
	      "                          helper into it (gdb, or sys.remote_exec on 3.14+)\n"
	      "  -h, --help              show this help\n"
	      "\n"
	      "/metrics always answers with the figures of the last refresh, at once.\n"
	      "With several sessions every series is there once per rank (rank from RANK,\n"
	      "else LOCAL_RANK). Scrape config and Grafana queries: docs/prometheus.md.\n",
	      f);
}

/* ---- the sources: a child, one session or several ---- */

struct serve_sources {
	int32_t *pid;
	size_t n;
	int all;
};

/* --all: at least one live session now (more may come). CLI_OK or CLI_FAIL. */
static int find_all(void)
{
	int32_t *v = NULL;
	size_t n = 0;
	int rc = cli_live_pids(&v, &n);
	free(v);
	if (rc)
		return rc;
	return n ? CLI_OK : cli_fail("no live proftop sessions (see 'proftop ls')");
}

/* ---- the periodic tick: compute, render, publish ---- */

/* serve spends at most 1/SERVE_BUDGET_DIV of a core on refreshes (4%) */
#define SERVE_BUDGET_DIV 25

struct serve_ctx {
	struct serve_http *http;
	uint64_t refresh_ns, window_ns, next_ns;
	size_t top;
	char host[256];
	double last_render_s;
	uint64_t last_cpu_ns; /* CPU the last refresh took, its worker threads' too */
	unsigned long refreshes;
	struct pt_ranks_live *live; /* the figures since the start, kept (ranks.h) */
	uint64_t hang_after_ns;     /* --hang-after */
};

static double unix_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Computes the figures of t and publishes their exposition. */
static void serve_refresh(struct serve_ctx *c, struct pt_trace *t, const struct pt_live_result *res)
{
	uint64_t t0 = pt_now_ns(), cpu0 = pt_cpu_ns();
	struct pt_ranks r;
	memset(&r, 0, sizeof r);
	/* the figures are kept between refreshes, the next window's too:
	 * a refresh costs what arrived, not the window (ranks.h) */
	if (!c->live) {
		c->live = pt_ranks_live_new();
		pt_ranks_live_set_window(c->live, c->window_ns);
	}
	int have = t->events_seen && pt_ranks_live_compute(c->live, t, &r) == 0;
	uint64_t from = pt_ranks_live_start(c->live);
	struct pt_prom_opts po;
	pt_prom_opts_init(&po);
	po.strings = t->strings;
	po.top = c->top;
	po.host = c->host;
	po.version = PROFTOP_VERSION;
	po.events_total = t->events_seen;
	po.events_kept = pt_store_count(t->store);
	po.dropped_source = pt_trace_source_lost(t);
	po.dropped_store = pt_store_dropped(t->store);
	po.store_bytes = pt_store_mem_bytes(t->store);
	po.sessions_up = !res ? 0
			 : res->nsessions ? (int)(res->nsessions - res->nexited)
					  : res->session_found && !res->session_exited;
	po.window_s = from && t->last_ns > from ? (double)(t->last_ns - from) / 1e9 : 0;
	po.render_s = c->refreshes ? c->last_render_s : -1;
	po.updated_unix_s = unix_now_s();
	/* the collectives over the same window, the hang at this moment */
	struct pt_coll_stats cs;
	struct pt_straggler sg;
	memset(&cs, 0, sizeof cs);
	if (t->colls.n) {
		pt_coll_stats_compute(t, from, t0, c->hang_after_ns, &cs);
		pt_straggler_find(have ? &r : NULL, &cs, &sg);
		po.colls = &cs;
		po.straggler = &sg;
	}
	struct pt_buf b = {0};
	pt_prom_render(&b, have ? &r : NULL, &po);
	pt_coll_stats_free(&cs);
	if (have)
		pt_ranks_free(&r);
	serve_http_publish(c->http, &b);
	c->last_render_s = (double)(pt_now_ns() - t0) / 1e9;
	uint64_t cpu1 = pt_cpu_ns();
	c->last_cpu_ns = cpu1 > cpu0 ? cpu1 - cpu0 : 0;
	c->refreshes++;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
	nanosleep(&ts, NULL); /* a signal cuts it short: the loop looks at once */
}

/* The live loop's wait hook: refresh when due, then sleep as the loop asked. */
static int serve_wait(void *ctx, struct pt_trace *t, const struct pt_live_result *res,
		      uint64_t wait_ns)
{
	struct serve_ctx *c = ctx;
	uint64_t now = pt_now_ns();
	if (now >= c->next_ns) {
		serve_refresh(c, t, res);
		now = pt_now_ns();
		/*
		 * A refresh costs what arrived, but more ranks or a burst of
		 * events cost more: keep serve's share of a core under
		 * 1/SERVE_BUDGET_DIV by stretching the period (the
		 * proftop_refresh_seconds gauge shows the time taken); a refresh
		 * that overran does not pile up. The share is of CPU time: on a
		 * machine the job keeps busy, a refresh waits for a core longer
		 * than it runs, and its wall time would stretch the period for
		 * nothing.
		 */
		uint64_t period = c->refresh_ns;
		uint64_t cost = c->last_cpu_ns;
		if (cost * SERVE_BUDGET_DIV > period)
			period = cost * SERVE_BUDGET_DIV;
		c->next_ns = c->next_ns + period > now ? c->next_ns + period : now + period;
	}
	if (wait_ns) {
		uint64_t until = now + wait_ns; /* not past the next refresh */
		if (until > c->next_ns)
			wait_ns = c->next_ns > now ? c->next_ns - now : 0;
		if (wait_ns)
			sleep_ns(wait_ns);
	}
	return 0;
}

/* ---- the command ---- */

enum { OPT_ALL = 256, OPT_REFRESH, OPT_WINDOW, OPT_TOP, OPT_MAXMEM, OPT_LOG, OPT_TORCH_OPS };

int cli_serve(int argc, char **argv)
{
	static const struct option longs[] = {
	    {"listen", required_argument, NULL, 'l'},
	    {"pid", required_argument, NULL, 'p'},
	    {"all", no_argument, NULL, OPT_ALL},
	    {"refresh", required_argument, NULL, OPT_REFRESH},
	    {"window", required_argument, NULL, OPT_WINDOW},
	    {"top", required_argument, NULL, OPT_TOP},
	    {"max-mem", required_argument, NULL, OPT_MAXMEM},
	    {"log", required_argument, NULL, OPT_LOG},
	    {"torch-ops", no_argument, NULL, OPT_TORCH_OPS},
	    CLI_HANG_LONGOPT,
	    CLI_INJECT_LONGOPT,
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *listen_s = PT_SERVE_DEFAULT_LISTEN, *log = NULL;
	struct serve_sources src = {0};
	struct serve_ctx ctx;
	struct cli_load_opts lopt;
	uint64_t v;
	int c, rc = CLI_OK, inject = 0;
	memset(&ctx, 0, sizeof ctx);
	ctx.refresh_ns = 1000000000ull;
	ctx.window_ns = SERVE_DEFAULT_WINDOW_NS;
	ctx.top = PT_PROM_DEFAULT_TOP;
	cli_load_opts_init(&lopt);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:hl:p:", longs, NULL)) != -1) {
		switch (c) {
		case 'h':
			cli_usage_serve(stdout);
			goto out;
		case 'l':
			listen_s = optarg;
			break;
		case 'p':
			if ((rc = cli_parse_pids(optarg, &src.pid, &src.n)))
				goto out;
			break;
		case OPT_ALL:
			src.all = 1;
			break;
		case OPT_REFRESH:
			if (cli_parse_secs(optarg, &ctx.refresh_ns) ||
			    ctx.refresh_ns < 10000000ull) {
				rc = cli_usage_error(
				    "--refresh: '%s' is not a number of seconds >= 0.01", optarg);
				goto out;
			}
			break;
		case OPT_WINDOW:
			if (!strcmp(optarg, "0")) {
				ctx.window_ns = 0;
			} else if (cli_parse_secs(optarg, &ctx.window_ns)) {
				rc = cli_usage_error("--window: '%s' is not a number of seconds",
						     optarg);
				goto out;
			}
			break;
		case OPT_TOP:
			if (cli_parse_count(optarg, 1000000, &v)) {
				rc = cli_usage_error(
				    "--top: '%s' is not a number from 0 to 1000000", optarg);
				goto out;
			}
			ctx.top = (size_t)v;
			break;
		case OPT_MAXMEM:
			if ((rc = cli_opt_max_mem(&lopt, optarg)))
				goto out;
			break;
		case OPT_LOG:
			log = optarg;
			break;
		case OPT_TORCH_OPS:
			setenv("PROFTOP_TORCH_OPS", "1", 1); /* the child inherits it */
			break;
		case CLI_OPT_HANG_AFTER:
			if ((rc = cli_opt_hang_after(optarg, &ctx.hang_after_ns)))
				goto out;
			break;
		case CLI_OPT_INJECT:
			inject = 1;
			break;
		default:
			rc = cli_getopt_error(c, argv);
			goto out;
		}
	}
	int have_cmd = optind < argc;
	if (have_cmd + (src.n > 0) + src.all > 1) {
		rc = cli_usage_error("serve: give one of -p PID, --all or a CMD");
		goto out;
	}
	if (!have_cmd && !src.n && !src.all) {
		rc = cli_usage_error(
		    "serve: missing CMD (proftop serve -- CMD...), -p PID or --all");
		goto out;
	}
	if (src.all && (rc = find_all()))
		goto out;
	if (inject && !src.n) {
		rc = cli_usage_error("serve: --inject needs -p PID");
		goto out;
	}
	for (size_t i = 0; i < src.n; i++)
		if ((rc = cli_prepare_session(src.pid[i], inject)))
			goto out;

	/* bind before starting anything: a taken port fails at once */
	char bound[128], err[512], esc[600];
	if (serve_http_start(listen_s, &ctx.http, bound, sizeof bound, err, sizeof err)) {
		pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
		rc = cli_fail("serve: %s", esc);
		goto out;
	}
	if (gethostname(ctx.host, sizeof ctx.host - 1))
		ctx.host[0] = 0;

	struct pt_live_opts lo = {0};
	struct pt_live_result res;
	lo.session_ops = pt_backend_find("session");
	lo.procstat_ops = pt_backend_find("procstat");
	lo.nvml_ops = pt_backend_find("nvml");
	lo.out = stdout;
	lo.ui_wait = serve_wait;
	lo.ui_ctx = &ctx;
	pt_live_signals();
	if (have_cmd) {
		pid_t child;
		char log_used[PATH_MAX];
		if ((rc = cli_launch(argv + optind, log, &child, log_used, sizeof log_used,
				      &lo.launch_id))) {
			serve_http_stop(ctx.http);
			goto out;
		}
		pt_escape_term(esc, sizeof esc, log_used, strlen(log_used), 0, 0);
		fprintf(stderr, "proftop: started pid %d; its output goes to %s\n", (int)child,
			esc);
		lo.child = child;
	} else if (src.n == 1) {
		lo.session_pid = src.pid[0];
	} else {
		lo.pids = src.pid;
		lo.npids = src.n;
		lo.all_sessions = src.all;
	}
	fprintf(stderr, "proftop: serving http://%s/metrics\n", bound);
	fflush(stderr);

	struct pt_trace *t = pt_trace_new(lopt.max_mem_bytes);
	pt_trace_set_source(t, "live session");
	serve_refresh(&ctx, t, NULL); /* /metrics answers from the start */
	ctx.next_ns = pt_now_ns() + ctx.refresh_ns;
	pt_live_run(t, &lo, &res);
	if (lo.launch_id)
		cli_reap_sessions(lo.launch_id); /* read whole: nothing left to keep */
	serve_http_stop(ctx.http);
	pt_ranks_live_free(ctx.live);
	fprintf(stderr, "proftop: stopped serving after %lu refreshes\n", ctx.refreshes);
	if (res.nsessions)
		fprintf(stderr, "proftop: served %s\n", res.describe);
	else if (!res.session_found && (lo.npids || lo.all_sessions))
		fprintf(stderr, "proftop: no session was found\n");
	else if (!res.session_found)
		fprintf(stderr, "proftop: no session was found for pid %d (no probe loaded?)\n",
			(int)lo.session_pid);
	else if (res.session_exited && !lo.child)
		fprintf(stderr, "proftop: process %d exited\n", (int)lo.session_pid);
	pt_trace_free(t);
	rc = lo.child ? pt_live_exit_code(res.child_status) : CLI_OK;
out:
	free(src.pid);
	return rc;
}
