/*
 * cli/cluster.c - `proftop cluster --prometheus URL`: the Ranks view of a
 * whole job, many nodes, from the figures every node's `proftop serve`
 * exports, read back from a Prometheus server's query API (cluster.h):
 * every rank's step time and wait, the straggler and why, the hang and the
 * ranks missing from it. Redraws every --refresh seconds on a terminal,
 * until Ctrl-C; --once (or output to a file or pipe) prints once.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "model/util.h"
#include "proftop/cluster.h"
#include "proftop/promq.h"
#include "proftop/report.h"

void cli_usage_cluster(FILE *f)
{
	fputs("Usage: proftop cluster --prometheus URL [OPTIONS]\n"
	      "\n"
	      "The Ranks view of a whole job across machines, read from a Prometheus server\n"
	      "that scrapes the 'proftop serve' of every node: each rank's step time and the\n"
	      "share of its time in collectives (Coll%), the straggler and why (the rank the\n"
	      "others wait for, its phase that is longer than theirs), and\n"
	      "the hang: the collective ranks wait in and the ranks that never entered it,\n"
	      "with what they have open. On a terminal it redraws every --refresh seconds\n"
	      "until Ctrl-C; otherwise it prints once.\n"
	      "\n"
	      "Options:\n"
	      "      --prometheus URL  the server (http://HOST:PORT[/PREFIX]; required)\n"
	      "      --job NAME        only the series of this scrape job\n"
	      "      --refresh SECS    redraw period on a terminal (default 5)\n"
	      "      --once            print once and exit\n"
	      "      --json            print once as JSON (schema proftop.cluster/1)\n"
	      "      --timeout SECS    longest wait for the server's answers (default 10)\n"
	      "  -h, --help            show this help\n"
	      "\n"
	      "Exit status: 0, 1 when the server cannot be queried, 2 on a usage error.\n"
	      "What each figure means: docs/distributed.md.\n",
	      f);
}

enum { OPT_PROM = 256, OPT_JOB, OPT_REFRESH, OPT_ONCE, OPT_JSON, OPT_TIMEOUT };

static volatile sig_atomic_t stop;
static void on_sig(int sig)
{
	(void)sig;
	stop = 1;
}

/* One view: every query, then the figures. 0, or -1 with err. */
static int fetch(const struct pt_prom_url *u, const char *job, int timeout_ms,
		 struct pt_cluster *c, char *err, size_t errlen)
{
	struct pt_cluster_sample *s[PT_CQ__COUNT] = {0};
	size_t n[PT_CQ__COUNT] = {0};
	int rc = 0;
	for (int q = 0; q < PT_CQ__COUNT && !rc; q++) {
		char expr[512];
		pt_cluster_query_text((enum pt_cluster_query)q, job, expr, sizeof expr);
		rc = pt_prom_query(u, expr, timeout_ms, &s[q], &n[q], err, errlen);
	}
	if (!rc)
		pt_cluster_compute((const struct pt_cluster_sample *const *)s, n, c);
	for (int q = 0; q < PT_CQ__COUNT; q++)
		free(s[q]);
	return rc;
}

int cli_cluster(int argc, char **argv)
{
	static const struct option longs[] = {
	    {"prometheus", required_argument, NULL, OPT_PROM},
	    {"job", required_argument, NULL, OPT_JOB},
	    {"refresh", required_argument, NULL, OPT_REFRESH},
	    {"once", no_argument, NULL, OPT_ONCE},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"timeout", required_argument, NULL, OPT_TIMEOUT},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *url = NULL, *job = NULL;
	uint64_t refresh_ns = 5000000000ull, timeout_ns = 10000000000ull;
	int once = 0, json = 0, c;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:h", longs, NULL)) != -1) {
		switch (c) {
		case 'h':
			cli_usage_cluster(stdout);
			return CLI_OK;
		case OPT_PROM:
			url = optarg;
			break;
		case OPT_JOB:
			job = optarg;
			break;
		case OPT_REFRESH:
			if (cli_parse_secs(optarg, &refresh_ns))
				return cli_usage_error("--refresh: '%s' is not a duration", optarg);
			break;
		case OPT_TIMEOUT:
			if (cli_parse_secs(optarg, &timeout_ns))
				return cli_usage_error("--timeout: '%s' is not a duration", optarg);
			break;
		case OPT_ONCE:
			once = 1;
			break;
		case OPT_JSON:
			json = once = 1;
			break;
		default:
			return cli_getopt_error(c, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("cluster: unexpected argument '%s'", argv[optind]);
	if (!url)
		return cli_usage_error("cluster: missing --prometheus URL");
	struct pt_prom_url u;
	char err[512], esc[600];
	if (pt_prom_url_parse(url, &u, err, sizeof err)) {
		pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
		return cli_usage_error("cluster: %s", esc);
	}
	int tty = isatty(STDOUT_FILENO);
	if (!tty)
		once = 1;
	int timeout_ms = timeout_ns / 1000000ull > 600000 ? 600000 : (int)(timeout_ns / 1000000ull);
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	for (;;) {
		struct pt_cluster cl;
		memset(&cl, 0, sizeof cl);
		if (fetch(&u, job, timeout_ms, &cl, err, sizeof err)) {
			pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
			if (once)
				return cli_fail("cluster: %s", esc);
			fprintf(stdout, "\033[H\033[2Jproftop cluster: %s (retrying)\n", esc);
		} else if (json) {
			pt_cluster_json(stdout, &cl);
		} else {
			size_t rows = 0;
			if (!once) {
				struct winsize ws;
				rows = !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row > 10
					   ? (size_t)ws.ws_row - 7
					   : 17;
				fputs("\033[H\033[2J", stdout);
				pt_escape_term(esc, sizeof esc, url, strlen(url), 0, 0);
				fprintf(stdout, "proftop cluster: %s (every %.0f s, Ctrl-C ends)\n", esc,
					(double)refresh_ns / 1e9);
			}
			pt_cluster_text(stdout, &cl, rows);
			fflush(stdout);
		}
		pt_cluster_free(&cl);
		if (once || stop)
			return CLI_OK;
		struct timespec ts = {(time_t)(refresh_ns / 1000000000ull),
				      (long)(refresh_ns % 1000000000ull)};
		nanosleep(&ts, NULL);
		if (stop)
			return CLI_OK;
	}
}
