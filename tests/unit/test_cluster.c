/*
 * test_cluster.c - the Ranks view of a job on many nodes (cluster.h) from
 * samples shaped as Prometheus returns proftop serve's series: the rows by
 * rank, the straggler (least time in collectives, with its phase) among
 * 1,024 ranks, the fallback to a node's own straggler, the hang across
 * nodes (waiting from any node, every other rank missing, with what it has
 * open and whether it died), the query texts with a job name to escape.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proftop/cluster.h"

static struct pt_cluster_sample smp(int64_t rank, const char *host, double v)
{
	struct pt_cluster_sample s;
	memset(&s, 0, sizeof s);
	s.rank = rank;
	s.pid = 1000 + rank;
	s.seq = s.depth = -1;
	snprintf(s.host, sizeof s.host, "%s", host);
	s.value = v;
	return s;
}

struct input {
	struct pt_cluster_sample *s[PT_CQ__COUNT];
	size_t n[PT_CQ__COUNT];
};

static void add(struct input *in, int q, struct pt_cluster_sample s)
{
	in->s[q] = realloc(in->s[q], (in->n[q] + 1) * sizeof s);
	in->s[q][in->n[q]++] = s;
}

static void input_free(struct input *in)
{
	for (int q = 0; q < PT_CQ__COUNT; q++)
		free(in->s[q]);
}

/* n ranks, 8 a node; rank slow: 30 % of its step in data loading, 1 % in collectives */
static void job(struct input *in, int n, int slow)
{
	for (int r = 0; r < n; r++) {
		char host[16];
		snprintf(host, sizeof host, "node%d", r / 8);
		add(in, PT_CQ_STEPS, smp(r, host, 100));
		add(in, PT_CQ_STEP_MEAN, smp(r, host, 0.1));
		struct pt_cluster_sample p = smp(r, host, r == slow ? 0.3 : 0.02);
		snprintf(p.phase, sizeof p.phase, "dataloader");
		add(in, PT_CQ_PHASE, p);
		add(in, PT_CQ_WAIT, smp(r, host, r == slow ? 0.01 : 0.28 + 0.0001 * (r % 7)));
	}
}

static void test_straggler_1024(void **state)
{
	(void)state;
	struct input in = {0};
	job(&in, 1024, 777);
	struct pt_cluster c;
	assert_int_equal(pt_cluster_compute((const struct pt_cluster_sample *const *)in.s, in.n, &c), 0);
	assert_int_equal(c.n, 1024);
	assert_int_equal(c.nhosts, 128);
	assert_true(c.straggler < c.n);
	assert_int_equal(c.r[c.straggler].rank, 777);
	assert_string_equal(c.reason, "rank 777 (node97) spends 1% of its time in collectives, the "
				      "others 28% (median): they wait for it; its Dataloader takes "
				      "30.00 ms a step, 2.00 ms on the others (median)");
	assert_int_equal(c.hang[0], 0);
	for (size_t i = 0; i < c.n; i++)
		assert_int_equal(c.r[i].rank, (int64_t)i);
	pt_cluster_free(&c);
	input_free(&in);
}

/* No collective time yet: a node's own straggler figure names it. */
static void test_node_straggler(void **state)
{
	(void)state;
	struct input in = {0};
	for (int r = 0; r < 4; r++)
		add(&in, PT_CQ_STEPS, smp(r, "a", 10));
	struct pt_cluster_sample s = smp(2, "a", 0.012);
	snprintf(s.phase, sizeof s.phase, "dataloader");
	add(&in, PT_CQ_STRAGGLER, s);
	struct pt_cluster c;
	pt_cluster_compute((const struct pt_cluster_sample *const *)in.s, in.n, &c);
	assert_int_equal(c.r[c.straggler].rank, 2);
	assert_string_equal(c.reason, "rank 2 (a) arrives 12.0 ms late at the collectives of its node");
	pt_cluster_free(&c);
	input_free(&in);
}

static void test_hang(void **state)
{
	(void)state;
	struct input in = {0};
	job(&in, 4, -1);
	/* node a (ranks 0, 1) waits 41 s in all_reduce #1932; node b: rank 2 waits, rank 3 missing */
	struct pt_cluster_sample h = smp(-1, "a", 41);
	snprintf(h.op, sizeof h.op, "all_reduce");
	snprintf(h.group, sizeof h.group, "0");
	h.seq = 1932;
	add(&in, PT_CQ_HANG, h);
	h.value = 40;
	snprintf(h.host, sizeof h.host, "b");
	add(&in, PT_CQ_HANG, h);
	for (int r = 0; r < 3; r++)
		add(&in, PT_CQ_HANG_WAITING, smp(r, r < 2 ? "a" : "b", 1));
	struct pt_cluster_sample m = smp(3, "b", 1);
	snprintf(m.process, sizeof m.process, "running");
	add(&in, PT_CQ_HANG_MISSING, m);
	struct pt_cluster_sample o = smp(3, "b", 44);
	snprintf(o.name, sizeof o.name, "Dataloader");
	o.depth = 0;
	add(&in, PT_CQ_OPEN, o);
	struct pt_cluster c;
	pt_cluster_compute((const struct pt_cluster_sample *const *)in.s, in.n, &c);
	assert_string_equal(c.hang, "ranks 0-2 have waited 41 s in all_reduce #1932 (group 0); rank 3 "
				    "(node0) never entered it, Dataloader open for 44 s");
	assert_int_equal(c.nwaiting, 3);
	assert_int_equal(c.nmissing, 1);
	assert_true(c.r[3].missing);
	pt_cluster_free(&c);
	/* the missing rank's process died */
	snprintf(in.s[PT_CQ_HANG_MISSING][0].process, sizeof m.process, "died");
	pt_cluster_compute((const struct pt_cluster_sample *const *)in.s, in.n, &c);
	assert_non_null(strstr(c.hang, "rank 3 (node0) died before entering it"));
	pt_cluster_free(&c);
	input_free(&in);
}

static void test_query_text(void **state)
{
	(void)state;
	char b[256];
	pt_cluster_query_text(PT_CQ_WAIT, "tr\"ain", b, sizeof b);
	assert_string_equal(b, "irate(proftop_rank_collective_seconds_total{job=\"tr\\\"ain\"}[2m])");
	pt_cluster_query_text(PT_CQ_STEPS, NULL, b, sizeof b);
	assert_string_equal(b, "proftop_steps");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_straggler_1024),
	    cmocka_unit_test(test_node_straggler),
	    cmocka_unit_test(test_hang),
	    cmocka_unit_test(test_query_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
