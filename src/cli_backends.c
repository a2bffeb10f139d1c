/*
 * cli_backends.c - `proftop backends`: every source of data with its state
 * on this machine: the backends linked into proftop (session, procstat,
 * nvml: their own probe answers), and the ones that run inside the profiled
 * process through libproftop.so (NVTX, the C API, CUPTI), for which proftop
 * checks what the probe will look for: libcupti and the NVIDIA driver.
 * Reasons come from libraries and paths: escaped before they are printed.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "proftop/backend.h"
#include "util.h"

void cli_usage_backends(FILE *f)
{
	fputs("Usage: proftop backends\n"
	      "\n"
	      "List proftop's data sources and whether each can run here, with the reason\n"
	      "when one cannot. session, procstat and nvml run in proftop; nvtx, api and\n"
	      "cupti run inside the profiled process (libproftop.so). Environment:\n"
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

/* What the probe's search would find (see backends/probe_cupti.c). */
static int cupti_check(char *why, size_t len)
{
	const char *env = getenv("PROFTOP_CUPTI");
	if (env && (!strcmp(env, "0") || !strcmp(env, "off") || !strcmp(env, "none"))) {
		snprintf(why, len, "turned off by PROFTOP_CUPTI=%s", env);
		return 0;
	}
	char tried[3][600];
	int n = 0;
	if (env && *env) {
		snprintf(tried[n++], sizeof tried[0], "%s", env);
	} else {
		snprintf(tried[n++], sizeof tried[0], "libcupti.so.13");
		const char *home = getenv("CUDA_HOME");
		snprintf(tried[n++], sizeof tried[0], "%s/extras/CUPTI/lib64/libcupti.so.13",
			 home && *home ? home : "/usr/local/cuda");
		snprintf(tried[n++], sizeof tried[0], "%s/lib64/libcupti.so.13",
			 home && *home ? home : "/usr/local/cuda");
	}
	void *h = NULL;
	int i;
	for (i = 0; i < n && !h; i++)
		h = dlopen(tried[i], RTLD_LAZY | RTLD_LOCAL);
	if (!h) {
		snprintf(why, len, "libcupti not found (set PROFTOP_CUPTI=/path/to/libcupti.so.13)");
		return 0;
	}
	unsigned version = 0;
	int (*get_version)(unsigned *) = (int (*)(unsigned *))dlsym(h, "cuptiGetVersion");
	if (get_version)
		get_version(&version);
	void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!cuda) {
		snprintf(why, len, "%.200s loads (CUPTI API %u), but there is no NVIDIA driver "
			 "(libcuda.so.1)", tried[i - 1], version);
		return 0;
	}
	int drv = 0;
	int (*drv_version)(int *) = (int (*)(int *))dlsym(cuda, "cuDriverGetVersion");
	if (drv_version)
		drv_version(&drv);
	snprintf(why, len, "%.200s (CUPTI API %u), driver CUDA %d.%d; in the profiled process "
		 "(one CUPTI subscriber per process: not beside nsys or torch.profiler)",
		 tried[i - 1], version, drv / 1000, drv % 1000 / 10);
	return 1;
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
	char why[600];
	int ok = cupti_check(why, sizeof why);
	row("cupti", "process", ok, why);
	return CLI_OK;
}
