/*
 * cli/backends.c - `proftop backends`: every source of data with its state
 * on this machine: the backends linked into proftop (session, procstat,
 * nvml: their own probe answers), and the ones that run inside the profiled
 * process through libproftop.so (NVTX, the C API, CUPTI), for which proftop
 * checks what the probe will look for: every libcupti it could open, its
 * version, and whether the installed NVIDIA driver runs it.
 * Reasons come from libraries and paths: escaped before they are printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "proftop/backend.h"
#include "model/util.h"

void cli_usage_backends(FILE *f)
{
	fputs("Usage: proftop backends\n"
	      "\n"
	      "List proftop's data sources and whether each can run here, with the reason\n"
	      "when one cannot. session, procstat and nvml run in proftop; nvtx, api and\n"
	      "cupti run inside the profiled process (libproftop.so). For cupti: the\n"
	      "NVIDIA driver, every libcupti found with its CUPTI version and whether the\n"
	      "driver runs it, and the one a job opens (marked *; a job that loaded its own,\n"
	      "as PyTorch does, uses that one). Environment:\n"
	      "PROFTOP_CUPTI (libcupti to use, or 0 to turn GPU tracing off),\n"
	      "PROFTOP_NVML_LIB (libnvidia-ml to use).\n",
	      f);
}

static void row(const char *name, const char *where, int ok, const char *why)
{
	char esc[300];
	pt_escape_term(esc, sizeof esc, why, strlen(why), 200, 0);
	printf("%-9s %-8s %-12s %s\n", name, where, ok ? "available" : "unavailable", esc);
}

/* What the probe's search would find (backends/probe_cupti_find.c): the
 * summary on the cupti row, then one indented line per library found. */
static void cupti_rows(void)
{
	const char *env = getenv("PROFTOP_CUPTI");
	if (env && (!strcmp(env, "0") || !strcmp(env, "off") || !strcmp(env, "none"))) {
		char why[128];
		snprintf(why, sizeof why, "turned off by PROFTOP_CUPTI=%s", env);
		row("cupti", "process", 0, why);
		return;
	}
	struct pt_cupti_report r;
	pt_cupti_report(&r);
	int ok = r.usable && r.driver_cuda;
	row("cupti", "process", ok, r.summary);
	for (int i = 0; i < r.nlibs; i++) {
		const struct pt_cupti_report_lib *l = &r.libs[i];
		char path[600], where[600];
		pt_escape_term(path, sizeof path, l->path, strlen(l->path), 300, 0);
		snprintf(where, sizeof where, "%s%s%s", l->where, l->why[0] ? "; " : "", l->why);
		char esc[700];
		pt_escape_term(esc, sizeof esc, where, strlen(where), 300, 0);
		printf("          %c CUPTI %-5s %s\n              (%s)\n", l->chosen ? '*' : ' ',
		       l->version[0] ? l->version : "?", path, esc);
	}
	if (r.nlibs)
		printf("          * the one a job opens, unless it has loaded a libcupti of its own\n"
		       "            (PyTorch has): then that one\n");
}

int cli_backends(int argc, char **argv)
{
	if (argc > 1) {
		if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
			cli_usage_backends(stdout);
			return CLI_OK;
		}
		char esc[128];
		pt_escape_term(esc, sizeof esc, argv[1], strlen(argv[1]), 60, 0);
		return cli_usage_error("backends takes no arguments (got '%s')", esc);
	}
	printf("%-9s %-8s %-12s %s\n", "BACKEND", "RUNS IN", "STATE", "DETAIL");
	for (size_t i = 0; pt_backends[i]; i++) {
		char why[256] = "";
		int rc = pt_backends[i]->probe(why, sizeof why);
		row(pt_backends[i]->name, "proftop", rc == 0, rc == 0 ? "" : why);
	}
	row("nvtx", "process", 1, "NVTX ranges through NVTX_INJECTION64_PATH");
	row("api", "process", 1, "the proftop C API (proftop.h) and the Python helper");
	cupti_rows();
	return CLI_OK;
}
