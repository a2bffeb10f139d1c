/*
 * test_agg_stream.c - the summary made while a file is read (agg_stream.c)
 * equals the one pt_summarize makes after the read, on every fixture and
 * shared real trace and on synthetic files built to make the stream give up
 * (an activity long after its launch, a correlation id launched twice, a
 * thread out of order, flow arrows bound at the end); and it is really
 * made (not given up) on files that allow it.
 */
#include "testutil.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include "proftop/agg.h"
#include "proftop/chrome.h"
#include "util.h"

static void same_stat(const struct pt_stat *a, const struct pt_stat *b)
{
	assert_int_equal(a->n, b->n);
	assert_int_equal(a->total_ns, b->total_ns);
	assert_int_equal(a->max_ns, b->max_ns);
	if (a->n)
		assert_int_equal(a->min_ns, b->min_ns);
}

/* Every figure of two summaries, field by field. */
static void assert_same(const struct pt_summary *a, const struct pt_summary *b)
{
	assert_int_equal(a->events, b->events);
	assert_int_equal(a->t0_ns, b->t0_ns);
	assert_int_equal(a->t1_ns, b->t1_ns);
	assert_int_equal(a->has_gpu, b->has_gpu);
	assert_int_equal(a->nsteps, b->nsteps);
	for (size_t i = 0; i < a->nsteps; i++) {
		const struct pt_step *x = &a->steps[i], *y = &b->steps[i];
		assert_int_equal(x->number, y->number);
		assert_int_equal(x->start_ns, y->start_ns);
		assert_int_equal(x->dur_ns, y->dur_ns);
		assert_int_equal(x->samples, y->samples);
		assert_int_equal(x->track, y->track);
		assert_memory_equal(x->cpu_ns, y->cpu_ns, sizeof x->cpu_ns);
		assert_memory_equal(x->gpu_ns, y->gpu_ns, sizeof x->gpu_ns);
	}
	for (int r = 0; r < PT_MS__COUNT; r++) {
		assert_int_equal(a->model[r].calls, b->model[r].calls);
		same_stat(&a->model[r].cpu, &b->model[r].cpu);
		same_stat(&a->model[r].gpu, &b->model[r].gpu);
	}
	assert_int_equal(a->perf.steps, b->perf.steps);
	assert_int_equal(a->perf.has_reader, b->perf.has_reader);
	assert_true(a->perf.reader_ratio_pct == b->perf.reader_ratio_pct);
	same_stat(&a->perf.reader, &b->perf.reader);
	same_stat(&a->perf.batch, &b->perf.batch);
	assert_true(a->perf.ips_avg == b->perf.ips_avg);
	assert_true(a->perf.ips_max == b->perf.ips_max);
	assert_true(a->perf.ips_min == b->perf.ips_min);
	assert_int_equal(a->perf.ips_samples, b->perf.ips_samples);
	assert_memory_equal(a->overview, b->overview, sizeof a->overview);
	assert_int_equal(a->backward_busy_ns, b->backward_busy_ns);
	assert_memory_equal(&a->dist, &b->dist, sizeof a->dist);
	assert_int_equal(a->ndevices, b->ndevices);
	if (a->ndevices)
		assert_memory_equal(a->devices, b->devices, a->ndevices * sizeof *a->devices);
	const struct pt_table *ta[] = {&a->operators, &a->op_detail, &a->kernels, &a->memory,
				       &a->user_defined};
	const struct pt_table *tb[] = {&b->operators, &b->op_detail, &b->kernels, &b->memory,
				       &b->user_defined};
	for (int k = 0; k < 5; k++) {
		assert_int_equal(ta[k]->n, tb[k]->n);
		assert_int_equal(ta[k]->cpu_base_ns, tb[k]->cpu_base_ns);
		assert_int_equal(ta[k]->gpu_base_ns, tb[k]->gpu_base_ns);
		assert_int_equal(ta[k]->threads, tb[k]->threads);
		if (ta[k]->n)
			assert_memory_equal(ta[k]->rows, tb[k]->rows,
					    ta[k]->n * sizeof *ta[k]->rows);
	}
}

/*
 * Reads the same text twice: with parser threads and the stream on, and on
 * one thread (no stream); the two summaries must be equal. Returns whether
 * the stream's summary was used (-1: the reader refused the file).
 */
static int check_text(const char *text, size_t len, const char *name)
{
	struct pt_trace *ts = pt_trace_new(0), *tp = pt_trace_new(0);
	struct pt_read_opts os = {.threads = 2}, op = {.threads = 1};
	char err[256];
	ts->aggregate_on_read = 1;
	tp->aggregate_on_read = 1; /* one thread: no stream */
	int rs = pt_chrome_read_mem(ts, text, len, name, &os, err, sizeof err);
	int rp = pt_chrome_read_mem(tp, text, len, name, &op, err, sizeof err);
	assert_int_equal(rs, rp);
	int used = -1;
	if (rs == 0) {
		used = ts->summary_cache != NULL;
		assert_null(tp->summary_cache);
		struct pt_summary *a = pt_summarize(ts, NULL), *b = pt_summarize(tp, NULL);
		assert_null(ts->summary_cache); /* taken */
		assert_same(a, b);
		pt_summary_free(a);
		pt_summary_free(b);
	}
	pt_trace_free(ts);
	pt_trace_free(tp);
	return used;
}

static int check_file(const char *path)
{
	/* the reader inflates gzip from memory too */
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	struct pt_buf b = {0};
	char chunk[1 << 16];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		pt_buf_put(&b, chunk, n);
	fclose(f);
	int used = check_text(b.p ? b.p : "", b.len, path);
	if (getenv("PT_TEST_VERBOSE"))
		fprintf(stderr, "stream %s: %s\n", used == 1 ? "used" : "not used", path);
	pt_buf_free(&b);
	return used;
}

/* Every file of dir (not recursing); returns how many used the stream. */
static int check_dir(const char *dir, int *files)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int used = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (e->d_name[0] == '.' || !((l > 5 && !strcmp(e->d_name + l - 5, ".json")) ||
					     (l > 8 && !strcmp(e->d_name + l - 8, ".json.gz"))))
			continue;
		int u = check_file(tu_path(dir, e->d_name));
		used += u == 1;
		*files += u >= 0;
	}
	closedir(d);
	return used;
}

static void test_fixtures_equal(void **state)
{
	(void)state;
	int files = 0, used = 0;
	const char *sub[] = {"dialects", "pytorch"};
	for (int i = 0; i < 2; i++) {
		char d[1024];
		snprintf(d, sizeof d, "%s", tu_path(tu_fixtures(), sub[i]));
		used += check_dir(d, &files);
	}
	assert_true(files >= 5);
	assert_true(used >= 1); /* proftop's own export is written in order */
}

static void test_real_traces_equal(void **state)
{
	(void)state;
	int files = 0;
	const char *sub[] = {"hta", "kineto_tb_plugin", "mindinsight"};
	for (int i = 0; i < 3; i++) {
		char d[1024];
		snprintf(d, sizeof d, "%s", tu_path(tu_traces(), sub[i]));
		check_dir(d, &files);
	}
	if (!files)
		skip();
}

/*
 * proftop's own export of each real trace, read back: many threads, streams
 * and devices, written in start order, so the stream's summary is made and
 * must equal the one made after the read.
 */
static void test_reexported_real_traces(void **state)
{
	(void)state;
	const char *sub[] = {"hta", "kineto_tb_plugin"};
	char tmpl[] = "/tmp/proftop-test-stream.XXXXXX";
	assert_non_null(mkdtemp(tmpl));
	char out[1100];
	snprintf(out, sizeof out, "%s/re.json", tmpl);
	int files = 0, used = 0;
	for (int i = 0; i < 2; i++) {
		char d[1024];
		snprintf(d, sizeof d, "%s", tu_path(tu_traces(), sub[i]));
		DIR *dir = opendir(d);
		if (!dir)
			continue;
		struct dirent *e;
		while ((e = readdir(dir))) {
			size_t l = strlen(e->d_name);
			if (l < 9 || strcmp(e->d_name + l - 8, ".json.gz"))
				continue;
			char path[1400];
			snprintf(path, sizeof path, "%s/%s", d, e->d_name);
			struct pt_trace *t = pt_trace_new(0);
			struct pt_read_opts ro = {.threads = 2};
			char err[256];
			if (pt_chrome_read(t, path, &ro, err, sizeof err) == 0) {
				struct pt_export_opts eo = {.force = 1};
				assert_int_equal(pt_chrome_export(t, out, &eo, err, sizeof err), 0);
				int u = check_file(out);
				files += u >= 0;
				used += u == 1;
				unlink(out);
			}
			pt_trace_free(t);
		}
		closedir(dir);
	}
	rmdir(tmpl);
	if (!files)
		skip();
	/* an export writes track after track: the stream gives up on those
	 * whose host tracks come before their devices (a kernel fed after
	 * its launch); the others are many threads and streams in order */
	assert_true(used >= 1);
}

/*
 * A PyTorch-style trace written in start order: steps with a dataloader,
 * operators with an inner op and a runtime launch, each kernel written
 * after its launch (`lag` launches later: the stream is written in order,
 * behind the host thread), on one thread and one stream. Knobs make the
 * stream give up.
 */
struct synth {
	int steps;
	int lag;      /* each kernel is written `lag` launches after its own */
	int dup_corr; /* launch #dup_corr reuses the previous correlation id */
	int disorder; /* write one parent after its child */
	int flows;    /* add an s/f arrow pair between two ops */
};

static void puts_b(struct pt_buf *b, const char *s)
{
	pt_buf_put(b, s, strlen(s));
}

static void synth_text(const struct synth *o, struct pt_buf *b)
{
	puts_b(b, "{\"traceEvents\":[\n");
	puts_b(b, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"tid\":0,"
		  "\"args\":{\"name\":\"GPU 0\"}}");
	double ts = 1000.0;
	int corr = 1, launch = 0;
	/* kernels not yet written, oldest first, one line each */
	struct pt_buf held = {0};
	size_t *ends = calloc((size_t)o->steps * 40 + 1, sizeof *ends);
	size_t nheld = 0, first = 0, from = 0;
	char line[512];
	for (int s = 0; s < o->steps; s++) {
		snprintf(
		    line, sizeof line,
		    ",\n{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\","
		    "\"pid\":1,\"tid\":1,\"ts\":%.3f,\"dur\":1000.0,\"args\":{}}",
		    s, ts);
		puts_b(b, line);
		snprintf(line, sizeof line,
			 ",\n{\"ph\":\"X\",\"cat\":\"user_annotation\","
			 "\"name\":\"enumerate(DataLoader)#_Iter.__next__\",\"pid\":1,\"tid\":1,"
			 "\"ts\":%.3f,\"dur\":50.0}",
			 ts + 1);
		puts_b(b, line);
		double t = ts + 60;
		for (int i = 0; i < 40; i++) {
			int c = o->dup_corr && launch == o->dup_corr ? corr - 1 : corr;
			const char *op = "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::op%d\","
					 "\"pid\":1,\"tid\":1,\"ts\":%.3f,\"dur\":20.0}";
			const char *inner =
			    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::in%d\","
			    "\"pid\":1,\"tid\":1,\"ts\":%.3f,\"dur\":8.0}";
			int swap = o->disorder && s == o->steps / 2 && i == 3;
			snprintf(line, sizeof line, ",\n");
			puts_b(b, line);
			char a1[256], a2[256];
			snprintf(a1, sizeof a1, op, i % 7, t);
			snprintf(a2, sizeof a2, inner, i % 5, t + 1);
			puts_b(b, swap ? a2 : a1);
			puts_b(b, ",\n");
			puts_b(b, swap ? a1 : a2);
			snprintf(line, sizeof line,
				 ",\n{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":"
				 "\"cudaLaunchKernel\","
				 "\"pid\":1,\"tid\":1,\"ts\":%.3f,\"dur\":3.0,\"args\":{"
				 "\"correlation\":%d}}",
				 t + 10, c);
			puts_b(b, line);
			snprintf(
			    line, sizeof line,
			    ",\n{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"kern%d\",\"pid\":0,"
			    "\"tid\":7,\"ts\":%.3f,\"dur\":6.0,\"args\":{\"device\":0,\"stream\":7,"
			    "\"correlation\":%d}}",
			    i % 9, t + 14, c);
			puts_b(&held, line);
			ends[nheld++] = held.len;
			if (nheld - first > (size_t)o->lag) { /* the oldest is due */
				pt_buf_put(b, held.p + from, ends[first] - from);
				from = ends[first++];
			}
			if (o->flows && s == 1 && i < 2) {
				snprintf(line, sizeof line,
					 ",\n{\"ph\":\"%s\",\"cat\":\"fwd\",\"name\":\"arrow\","
					 "\"id\":\"a\","
					 "\"pid\":1,\"tid\":1,\"ts\":%.3f%s}",
					 i == 0 ? "s" : "f", t + 2, i == 0 ? "" : ",\"bp\":\"e\"");
				puts_b(b, line);
			}
			t += 22;
			corr++;
			launch++;
		}
		ts += 1000.0;
	}
	if (held.len > from)
		pt_buf_put(b, held.p + from, held.len - from);
	pt_buf_free(&held);
	free(ends);
	puts_b(b, "\n]}\n");
}

static int check_synth(const struct synth *o)
{
	struct pt_buf b = {0};
	synth_text(o, &b);
	int used = check_text(b.p, b.len, "synthetic");
	pt_buf_free(&b);
	return used;
}

static void test_synthetic_uses_stream(void **state)
{
	(void)state;
	/* 1200 steps x 162 events: several batches of 16,384 objects */
	struct synth o = {1200, 0, 0, 0, 0};
	assert_int_equal(check_synth(&o), 1);
	/* kernels 300 launches behind theirs: the one-batch lag holds them */
	o.lag = 300;
	assert_int_equal(check_synth(&o), 1);
}

static void test_synthetic_gives_up_and_equals(void **state)
{
	(void)state;
	/* kernels 20,000 launches (past a batch) behind theirs */
	struct synth o = {1200, 20000, 0, 0, 0};
	assert_int_equal(check_synth(&o), 0);
	/* a correlation id launched twice */
	o = (struct synth){1200, 0, 777, 0, 0};
	assert_int_equal(check_synth(&o), 0);
	/* a parent written after its child (Kineto's end order) */
	o = (struct synth){1200, 0, 0, 1, 0};
	assert_int_equal(check_synth(&o), 0);
	/* a flow arrow bound after the read changes its slices */
	o = (struct synth){1200, 0, 0, 0, 1};
	assert_int_equal(check_synth(&o), 0);
}

/* A summary asked with other options, or after more events, is not the
 * cached one. */
static void test_cache_only_for_default(void **state)
{
	(void)state;
	struct synth o = {300, 0, 0, 0, 0};
	struct pt_buf b = {0};
	synth_text(&o, &b);
	struct pt_read_opts os = {.threads = 2};
	struct pt_trace *t = pt_trace_new(0);
	t->aggregate_on_read = 1;
	assert_int_equal(pt_chrome_read_mem(t, b.p, b.len, "s", &os, NULL, 0), 0);
	assert_non_null(t->summary_cache);
	struct pt_agg_opts ao;
	pt_agg_opts_init(&ao);
	ao.step_first = 5;
	ao.step_last = 9;
	struct pt_summary *s = pt_summarize(t, &ao);
	assert_int_equal(s->nsteps, 5);
	pt_summary_free(s);
	assert_null(t->summary_cache); /* not for these options: dropped */
	pt_trace_free(t);

	t = pt_trace_new(0);
	t->aggregate_on_read = 1;
	assert_int_equal(pt_chrome_read_mem(t, b.p, b.len, "s", &os, NULL, 0), 0);
	struct pt_event ev = {0};
	ev.track_id = 0;
	ev.start_ns = 1;
	ev.dur_ns = 1;
	ev.kind = PT_KIND_USER_DEFINED;
	pt_trace_add(t, &ev);
	s = pt_summarize(t, NULL);
	assert_int_equal(s->events, t->events_seen); /* counts the new one */
	pt_summary_free(s);
	pt_trace_free(t);
	pt_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fixtures_equal),
	    cmocka_unit_test(test_real_traces_equal),
	    cmocka_unit_test(test_reexported_real_traces),
	    cmocka_unit_test(test_synthetic_uses_stream),
	    cmocka_unit_test(test_synthetic_gives_up_and_equals),
	    cmocka_unit_test(test_cache_only_for_default),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
