/*
 * fuzz_chrome.c - libFuzzer target for the Chrome-trace reader and what
 * consumes its output: any bytes go through pt_chrome_read_mem (one or two
 * parser threads, chosen by the first byte), and whatever loads is
 * summarized, reported as text and JSON, and exported. Nothing may crash,
 * leak, hang or read out of bounds.
 *
 *   make fuzz && build-fuzz/fuzz_chrome -max_total_time=60 CORPUS_DIR
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "proftop/agg.h"
#include "proftop/chrome.h"
#include "proftop/report.h"
#include "proftop/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pt_trace *t = pt_trace_new(8u << 20);
	struct pt_read_opts ro = {.threads = size && (data[0] & 1) ? 2 : 1};
	char err[512];
	if (pt_chrome_read_mem(t, data, size, "fuzz", &ro, err, sizeof err) == 0) {
		struct pt_agg_opts ao;
		pt_agg_opts_init(&ao);
		struct pt_summary *s = pt_summarize(t, &ao);
		FILE *null = fopen("/dev/null", "w");
		if (null) {
			struct pt_report_opts o;
			pt_report_opts_init(&o);
			o.op_detail = 1;
			pt_report_text(null, t, s, &o);
			pt_report_json(null, t, s, &o);
			fclose(null);
		}
		char path[64];
		/* tmpfs: the exporter's fsync is cheap there */
		snprintf(path, sizeof path, "%s/proftop-fuzz-%d.json",
			 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid());
		struct pt_export_opts eo = {.force = 1};
		pt_chrome_export(t, path, &eo, err, sizeof err);
		unlink(path);
		pt_summary_free(s);
	}
	pt_trace_free(t);
	return 0;
}
