/*
 * bench_export.c - speed of the Chrome trace exporter (pt_chrome_export)
 * on a synthetic trace of a few million events (host ops and runtime calls
 * on 4 threads, kernels with correlation ids on 2 streams, so flows are
 * written too), beside a reference run in the same process that writes the
 * same number of X events with plain fprintf("%f") formatting. Prints
 * events/s for both and the ratio; the target is >= 2 million events/s.
 *
 *   build/bench/bench_export [EVENTS] [DIR]   (default 3000000, $TMPDIR or /tmp)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "proftop/chrome.h"
#include "proftop/trace.h"
#include "model/util.h"

static double cpu_s(int sys)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	struct timeval tv = sys ? ru.ru_stime : ru.ru_utime;
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static double now_s(void)
{
	return (double)pt_now_ns() / 1e9;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 3000000;
	const char *dir = argc > 2 ? argv[2] : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	char out[512], ref[512];
	snprintf(out, sizeof out, "%s/pt_bench_export_%d.json", dir, (int)getpid());
	snprintf(ref, sizeof ref, "%s/pt_bench_export_ref_%d.json", dir, (int)getpid());

	struct pt_trace *t = pt_trace_new((size_t)8 << 30);
	pt_trace_set_source(t, "synthetic");
	uint32_t host[4], dev[2];
	for (int i = 0; i < 4; i++) {
		struct pt_track_key k = {1000, 1000 + i, 0, 0};
		host[i] = pt_trace_track(t, &k);
	}
	for (int i = 0; i < 2; i++) {
		struct pt_track_key k = {0, 7 + i, 0, 0};
		dev[i] = pt_trace_track(t, &k);
		pt_trace_track_device(t, dev[i], 0, 7 + i);
	}
	const char *names[] = {"aten::conv2d", "aten::relu", "aten::addmm", "cudaLaunchKernel",
			       "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3>"
			       "(Params)",
			       "sgemm_128x64_nn"};
	uint32_t ids[6];
	for (int i = 0; i < 6; i++)
		ids[i] = pt_trace_intern(t, names[i], strlen(names[i]));
	uint64_t ts = 1623143089861000000ull;
	uint32_t corr = 1;
	for (uint64_t i = 0; i < n; i++) {
		struct pt_event ev = {0};
		ev.start_ns = ts + i * 1537;
		ev.dur_ns = 1000 + i % 777;
		switch (i % 4) {
		case 0:
		case 1:
			ev.kind = PT_KIND_OPERATOR;
			ev.name_id = ids[i % 3];
			ev.track_id = host[i % 4];
			break;
		case 2:
			ev.kind = PT_KIND_CUDA_RUNTIME;
			ev.name_id = ids[3];
			ev.track_id = host[(i / 4) % 4];
			ev.corr = corr;
			break;
		default:
			ev.kind = PT_KIND_KERNEL;
			ev.name_id = ids[4 + (i / 4) % 2];
			ev.track_id = dev[(i / 4) % 2];
			ev.corr = corr++;
			break;
		}
		pt_trace_add(t, &ev);
	}
	pt_store_sort(t->store);

	char err[512];
	struct pt_export_opts o = {.force = 1};
	double t0 = now_s(), u0 = cpu_s(0), s0 = cpu_s(1);
	int rc = pt_chrome_export(t, out, &o, err, sizeof err);
	double t_exp = now_s() - t0, u_exp = cpu_s(0) - u0, s_exp = cpu_s(1) - s0;
	if (rc) {
		fprintf(stderr, "export failed: %s\n", err);
		return 1;
	}
	FILE *f = fopen(out, "rb");
	fseek(f, 0, SEEK_END);
	long bytes = ftell(f);
	fclose(f);
	unlink(out);

	/* reference: the obvious fprintf of the same number of X events, then fsync */
	t0 = now_s();
	f = fopen(ref, "w");
	fputs("{\"traceEvents\":[\n", f);
	for (uint64_t i = 0; i < n; i++) {
		double start_us = (double)(ts + i * 1537) / 1000.0;
		double dur_us = (double)(1000 + i % 777) / 1000.0;
		fprintf(f,
			"%s{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,"
			"\"ts\":%f,\"dur\":%f,\"args\":{\"correlation\":%u}}",
			i ? ",\n" : "", "Operator", names[i % 6], 1000, 1000 + (int)(i % 4),
			start_us, dur_us, (unsigned)(i / 4));
	}
	fputs("\n]}\n", f);
	fflush(f);
	fsync(fileno(f));
	fclose(f);
	double t_ref = now_s() - t0;
	unlink(ref);

	double eps = (double)n / t_exp, ref_eps = (double)n / t_ref;
	printf("export: %" PRIu64 " events in %.3f s = %.2f M events/s (%.1f MB, %.0f MB/s)\n",
	       (uint64_t)n, t_exp, eps / 1e6, (double)bytes / 1e6, (double)bytes / 1e6 / t_exp);
	printf("  cpu: user %.3f s (formatting: %.2f M events/s), system %.3f s (copies, fsync)\n",
	       u_exp, (double)n / (u_exp > 0 ? u_exp : 1e-9) / 1e6, s_exp);
	printf("reference fprintf(\"%%f\"): %.3f s = %.2f M events/s\n", t_ref, ref_eps / 1e6);
	printf("ratio export/reference: %.2fx  (target >= 2.00 M events/s: %s)\n", eps / ref_eps,
	       eps >= 2e6 ? "met" : "NOT met");
	pt_trace_free(t);
	return 0;
}
