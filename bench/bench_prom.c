/*
 * bench_prom.c - the Prometheus exporter with 8 ranks x 10,000 operators
 * (the case): a synthetic trace of 8 processes, each 10 steps of
 * 1,000 distinct operators (10,000 names per rank, the same model on every
 * rank), then
 *   1. a refresh's compute, pt_ranks_compute, beside pt_summarize of the
 *      same trace (one aggregator over everything) as the reference;
 *   2. rendering /metrics (top 20 operators per rank, and all 10,000),
 *      beside a plain snprintf loop writing the same number of lines;
 *   3. end to end: GET /metrics over loopback TCP against the real server
 *      (cli_serve_http.c on libmicrohttpd), a new connection per request,
 *      while another thread publishes a fresh body every millisecond;
 *      latency p50/p99/max beside the reference of rendering at request
 *      time (compute + render), and the target: <= 5 ms per answer.
 *
 *   build/bench/bench_prom [REQUESTS]   (default 2000)
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "output/prom.h"
#include "proftop/agg.h"
#include "proftop/ranks.h"
#include "proftop/trace.h"
#include "cli/serve_http.h"
#include "model/util.h"

#define RANKS 8
#define OPS   10000
#define STEPS 10

static double now_s(void)
{
	return (double)pt_now_ns() / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
	qsort(v, n, sizeof *v, cmp_double);
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);
	return v[i];
}

static struct pt_trace *make_trace(void)
{
	struct pt_trace *t = pt_trace_new((size_t)2 << 30);
	pt_trace_set_source(t, "synthetic 8 ranks");
	uint32_t *ids = pt_xmalloc(OPS * sizeof *ids);
	char name[160];
	for (int i = 0; i < OPS; i++) {
		int n = i % 10 == 9 ? snprintf(name, sizeof name,
					       "void at::native::elementwise_kernel<128, 4, "
					       "at::native::gpu_kernel_impl<op_%05d>>(int, F)",
					       i)
				    : snprintf(name, sizeof name, "aten::op_%05d", i);
		ids[i] = pt_trace_intern(t, name, (size_t)n);
	}
	uint32_t step_name[STEPS];
	for (int s = 0; s < STEPS; s++) {
		int n = snprintf(name, sizeof name, "ProfilerStep#%d", s);
		step_name[s] = pt_trace_intern(t, name, (size_t)n);
	}
	uint64_t x = 88172645463325252ull;
	for (int r = 0; r < RANKS; r++) {
		struct pt_track_key k = {1000 + r, 1000 + r, 0, 0};
		uint32_t tr = pt_trace_track(t, &k);
		pt_trace_set_proc(t, 1000 + r, r, "node-a");
		uint64_t ts = 1000000000ull;
		for (int s = 0; s < STEPS; s++) {
			uint64_t durs[OPS / STEPS], total = 0;
			for (int j = 0; j < OPS / STEPS; j++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				durs[j] = 2000 + x % 50000 + (uint64_t)r * 100;
				total += durs[j] + 100;
			}
			struct pt_event ev = {0};
			ev.start_ns = ts;
			ev.dur_ns = total + 100;
			ev.kind = PT_KIND_PROFILE_STEP;
			ev.name_id = step_name[s];
			ev.track_id = tr;
			ev.arg = 64;
			pt_trace_add(t, &ev);
			uint64_t at = ts + 50;
			for (int j = 0; j < OPS / STEPS; j++) {
				struct pt_event op = {0};
				op.start_ns = at;
				op.dur_ns = durs[j];
				op.kind = PT_KIND_OPERATOR;
				op.name_id = ids[s * (OPS / STEPS) + j];
				op.track_id = tr;
				pt_trace_add(t, &op);
				at += durs[j] + 100;
			}
			ts += total + 1000;
		}
	}
	free(ids);
	return t;
}

/* The reference: the same number of lines written by one snprintf each. */
static size_t reference_lines(struct pt_buf *b, size_t lines)
{
	char line[512];
	for (size_t i = 0; i < lines; i++) {
		int n = snprintf(line, sizeof line,
				 "proftop_operator_seconds{host=\"%s\",rank=\"%d\",pid=\"%d\","
				 "op=\"aten::op_%05d\"} %.9g\n",
				 "node-a", (int)(i % RANKS), 1000 + (int)(i % RANKS),
				 (int)(i % OPS), (double)i * 1.000000123e-3);
		pt_buf_put(b, line, (size_t)n);
	}
	return b->len;
}

static size_t count_lines(const struct pt_buf *b)
{
	size_t n = 0;
	for (size_t i = 0; i < b->len; i++)
		n += b->p[i] == '\n' && !(i + 1 < b->len && b->p[i + 1] == '#');
	return n;
}

/* One GET /metrics on a new connection; returns the body bytes or -1. */
static long get_metrics(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		close(fd);
		return -1;
	}
	static const char req[] =
	    "GET /metrics HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n";
	if (write(fd, req, sizeof req - 1) != (ssize_t)(sizeof req - 1)) {
		close(fd);
		return -1;
	}
	static char buf[1 << 16];
	long total = 0, header_end = -1;
	char head[16] = "";
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		if (total == 0)
			memcpy(head, buf, n < 15 ? (size_t)n : 15);
		if (header_end < 0) {
			char *e = memmem(buf, (size_t)n, "\r\n\r\n", 4);
			if (e)
				header_end = total + (e - buf) + 4;
		}
		total += n;
	}
	close(fd);
	if (strncmp(head, "HTTP/1.1 200", 12) || header_end < 0)
		return -1;
	return total - header_end;
}

struct publisher {
	struct serve_http *h;
	const struct pt_buf *body;
	atomic_int stop;
	unsigned long count;
};

static void *publish_loop(void *arg)
{
	struct publisher *p = arg;
	while (!atomic_load(&p->stop)) {
		struct pt_buf b = {0};
		pt_buf_put(&b, p->body->p, p->body->len);
		serve_http_publish(p->h, &b);
		p->count++;
		usleep(1000);
	}
	return NULL;
}

static int run_gets(struct serve_http *h, int port, const struct pt_buf *body, int reqs,
		    double ref_s, const char *what)
{
	struct publisher pub = {h, body, 0, 0};
	struct pt_buf first = {0};
	pt_buf_put(&first, body->p, body->len);
	serve_http_publish(h, &first);
	pthread_t th;
	pthread_create(&th, NULL, publish_loop, &pub);
	double *lat = pt_xmalloc((size_t)reqs * sizeof *lat);
	int bad = 0;
	double t_all = now_s();
	for (int i = 0; i < reqs; i++) {
		double t0 = now_s();
		long got = get_metrics(port);
		lat[i] = now_s() - t0;
		bad += got != (long)body->len;
	}
	t_all = now_s() - t_all;
	atomic_store(&pub.stop, 1);
	pthread_join(th, NULL);
	double p50 = pct(lat, (size_t)reqs, 0.5), p99 = pct(lat, (size_t)reqs, 0.99),
	       mx = lat[reqs - 1];
	printf("GET /metrics (%s, %.2f MB): %d requests, new connection each, %lu publishes "
	       "meanwhile\n",
	       what, (double)body->len / 1e6, reqs, pub.count);
	printf("  latency p50 %.3f ms, p99 %.3f ms, max %.3f ms; %.0f requests/s%s\n", p50 * 1e3,
	       p99 * 1e3, mx * 1e3, reqs / t_all, bad ? "  (SOME ANSWERS WRONG)" : "");
	printf("  reference, rendering at request time (compute + render): %.3f ms; ratio %.4fx\n",
	       ref_s * 1e3, p50 / ref_s);
	printf("  target <= 5 ms per answer: %s\n", p99 <= 0.005 ? "met (p99)" : "NOT met (p99)");
	free(lat);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	int reqs = argc > 1 ? atoi(argv[1]) : 2000;
	if (reqs < 10)
		reqs = 10;
	double t0 = now_s();
	struct pt_trace *t = make_trace();
	printf("trace: %d ranks x %d operators (%d steps each), %" PRIu64
	       " events, built in %.2f s\n",
	       RANKS, OPS, STEPS, (uint64_t)t->events_seen, now_s() - t0);

	/* 1. a refresh's compute */
	struct pt_ranks r;
	double t_ranks[3], t_sum[3];
	for (int i = 0; i < 3; i++) {
		t0 = now_s();
		struct pt_summary *s = pt_summarize(t, NULL);
		t_sum[i] = now_s() - t0;
		pt_summary_free(s);
		t0 = now_s();
		if (pt_ranks_compute(t, NULL, &r)) {
			fprintf(stderr, "pt_ranks_compute failed\n");
			return 1;
		}
		t_ranks[i] = now_s() - t0;
		if (i < 2)
			pt_ranks_free(&r);
	}
	double compute_s = pct(t_ranks, 3, 0.5), sum_s = pct(t_sum, 3, 0.5);
	printf("compute (pt_ranks_compute, %zu ranks, %zu operator rows on rank 0): %.1f ms; "
	       "reference pt_summarize: %.1f ms; ratio %.2fx\n",
	       r.n, r.n ? r.r[0].summary->operators.n : 0, compute_s * 1e3, sum_s * 1e3,
	       compute_s / sum_s);

	/* 2. rendering */
	struct pt_prom_opts po;
	pt_prom_opts_init(&po);
	po.strings = t->strings;
	po.host = "node-a";
	po.version = "bench";
	struct pt_buf top20 = {0}, all = {0};
	size_t tops[2] = {PT_PROM_DEFAULT_TOP, OPS};
	struct pt_buf *outs[2] = {&top20, &all};
	double render_s[2];
	for (int k = 0; k < 2; k++) {
		int rounds = k ? 5 : 50;
		double *v = pt_xmalloc((size_t)rounds * sizeof *v);
		po.top = tops[k];
		for (int i = 0; i < rounds; i++) {
			struct pt_buf b = {0};
			pt_buf_reserve(&b, outs[k]->cap ? outs[k]->cap : 1);
			t0 = now_s();
			pt_prom_render(&b, &r, &po);
			v[i] = now_s() - t0;
			if (i == rounds - 1) {
				pt_buf_free(outs[k]);
				*outs[k] = b;
			} else {
				pt_buf_free(&b);
			}
		}
		render_s[k] = pct(v, (size_t)rounds, 0.5);
		free(v);
		size_t lines = count_lines(outs[k]);
		double *w = pt_xmalloc((size_t)rounds * sizeof *w);
		for (int i = 0; i < rounds; i++) {
			struct pt_buf b = {0};
			pt_buf_reserve(&b, outs[k]->len);
			t0 = now_s();
			reference_lines(&b, lines);
			w[i] = now_s() - t0;
			pt_buf_free(&b);
		}
		double ref_s = pct(w, (size_t)rounds, 0.5);
		free(w);
		printf("render --top %zu: %zu sample lines, %.2f MB in %.3f ms; reference snprintf "
		       "loop, same lines: %.3f ms; ratio %.2fx\n",
		       tops[k], lines, (double)outs[k]->len / 1e6, render_s[k] * 1e3, ref_s * 1e3,
		       render_s[k] / ref_s);
	}

	/* 3. end to end over HTTP */
	struct serve_http *h;
	char bound[128], err[256];
	if (serve_http_start("127.0.0.1:0", &h, bound, sizeof bound, err, sizeof err)) {
		fprintf(stderr, "serve_http_start: %s\n", err);
		return 1;
	}
	int port = atoi(strrchr(bound, ':') + 1);
	int bad = run_gets(h, port, &top20, reqs, compute_s + render_s[0], "--top 20");
	bad |= run_gets(h, port, &all, reqs / 20 > 10 ? reqs / 20 : 10, compute_s + render_s[1],
			"--top 10000");
	serve_http_stop(h);
	pt_buf_free(&top20);
	pt_buf_free(&all);
	pt_ranks_free(&r);
	pt_trace_free(t);
	return bad;
}
