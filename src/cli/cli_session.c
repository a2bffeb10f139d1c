/*
 * cli_session.c - choosing sessions, shared by attach, ls, record and
 * serve: the pid list of -p, whether a pid's session can be opened, the
 * pids of this user's live sessions (--all), and listing them.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "proftop/error.h"
#include "proftop/session.h"
#include "model/util.h"

int cli_parse_pids(const char *arg, int32_t **pids, size_t *n)
{
	const char *p = arg;
	char esc[64];
	pt_escape_term(esc, sizeof esc, arg, strlen(arg), 40, 0);
	for (;;) {
		size_t len = strcspn(p, ",");
		char one[16];
		uint64_t v;
		if (len == 0 || len >= sizeof one)
			return cli_usage_error("-p: '%s' is not a list of process ids", esc);
		memcpy(one, p, len);
		one[len] = 0;
		if (cli_parse_count(one, INT32_MAX, &v) || v == 0)
			return cli_usage_error("-p: '%s' is not a list of process ids", esc);
		if (*n == CLI_MAX_PIDS)
			return cli_usage_error("-p: more than %d process ids", CLI_MAX_PIDS);
		size_t i = 0;
		while (i < *n && (*pids)[i] != (int32_t)v)
			i++;
		if (i == *n) { /* a pid given twice is one session */
			*pids = pt_xrealloc(*pids, (*n + 1) * sizeof **pids);
			(*pids)[(*n)++] = (int32_t)v;
		}
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

uint64_t cli_process_start_ns(int32_t pid)
{
	uint64_t start_ticks = pt_proc_start_ticks(NULL, pid); /* since boot */
	long hz = sysconf(_SC_CLK_TCK);
	struct timespec boot;
	if (!start_ticks || hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &boot) != 0)
		return 0;
	uint64_t boot_ns = (uint64_t)boot.tv_sec * 1000000000ull + (uint64_t)boot.tv_nsec;
	uint64_t started = start_ticks / (uint64_t)hz * 1000000000ull +
			   start_ticks % (uint64_t)hz * 1000000000ull / (uint64_t)hz;
	uint64_t now = pt_now_ns();
	if (started > boot_ns || boot_ns - started >= now)
		return 0;
	return now - (boot_ns - started);
}

int cli_check_session(int32_t pid)
{
	char path[600], err[600], esc[700];
	struct pt_session *s;
	int rc = pt_session_path(pid, path, sizeof path, err, sizeof err);
	if (rc == 0)
		rc = pt_session_open(path, &s, err, sizeof err);
	if (rc) {
		if (rc == PT_ENOENT)
			return cli_fail("no proftop session for pid %d (see 'proftop ls')", (int)pid);
		pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
		return cli_fail("%s", esc);
	}
	pt_session_close(s);
	return CLI_OK;
}

int cli_live_pids(int32_t **pids, size_t *n)
{
	struct pt_session_info *v;
	size_t nv;
	char err[256], esc[300];
	*pids = NULL;
	*n = 0;
	if (pt_session_list(&v, &nv, 0, NULL, err, sizeof err)) {
		pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
		return cli_fail("%s", esc);
	}
	for (size_t i = 0; i < nv; i++) {
		if (!v[i].valid || v[i].exited || *n == CLI_MAX_PIDS)
			continue;
		*pids = pt_xrealloc(*pids, (*n + 1) * sizeof **pids);
		(*pids)[(*n)++] = v[i].pid;
	}
	free(v);
	return CLI_OK;
}

static void fmt_age(char *buf, size_t len, uint64_t ns)
{
	uint64_t s = ns / 1000000000ull;
	if (s < 120)
		snprintf(buf, len, "%" PRIu64 "s", s);
	else if (s < 7200)
		snprintf(buf, len, "%" PRIu64 "m", s / 60);
	else if (s < 172800)
		snprintf(buf, len, "%" PRIu64 "h", s / 3600);
	else
		snprintf(buf, len, "%" PRIu64 "d", s / 86400);
}

void cli_print_sessions(FILE *f, const struct pt_session_info *v, size_t n)
{
	fprintf(f, "%-8s %-8s %6s %5s %9s  %s\n", "PID", "STATE", "AGE", "RANK", "DROPPED",
		"COMMAND");
	for (size_t i = 0; i < n; i++) {
		const struct pt_session_info *in = &v[i];
		char esc[512], age[24], rank[24];
		if (!in->valid) {
			pt_escape_term(esc, sizeof esc, in->why, strlen(in->why), 100, 0);
			fprintf(f, "%-8d %-8s %6s %5s %9s  (refused: %s)\n", (int)in->pid, "invalid",
				"-", "-", "-", esc);
			continue;
		}
		fmt_age(age, sizeof age, in->age_ns);
		if (in->rank >= 0)
			snprintf(rank, sizeof rank, "%" PRId64, in->rank);
		else
			snprintf(rank, sizeof rank, "-");
		pt_escape_term(esc, sizeof esc, in->cmdline, strlen(in->cmdline), 100, 0);
		fprintf(f, "%-8d %-8s %6s %5s %9" PRIu64 "  %s\n", (int)in->pid,
			in->exited ? "exited" : "running", age, rank, in->dropped, esc);
	}
}

void cli_reap_sessions(uint64_t launch_id)
{
	pt_session_reap(launch_id);
}

int cli_list_sessions(int clean, struct pt_session_info **v, size_t *n)
{
	char err[512], esc[600];
	size_t cleaned = 0;
	int rc = pt_session_list(v, n, clean, &cleaned, err, sizeof err);
	if (rc) {
		pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
		return cli_fail("%s", esc);
	}
	if (cleaned)
		fprintf(stderr, "proftop: removed %zu stale session%s of exited processes\n", cleaned,
			cleaned == 1 ? "" : "s");
	return CLI_OK;
}
