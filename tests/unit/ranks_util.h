/*
 * ranks_util.h - what the per-rank tests share (test_ranks*.c): a rank's
 * steps and phases built by hand, tolerance checks, a real trace loaded, a
 * summary as report --json prints it.
 */
#ifndef RANKS_UTIL_H
#define RANKS_UTIL_H

#include "testutil.h"

#include <math.h>

#include "proftop/agg.h"
#include "proftop/chrome.h"
#include "proftop/error.h"
#include "proftop/ranks.h"
#include "proftop/report.h"
#include "import/merge.h"
#include <unistd.h>

/*
 * One rank's work: nsteps steps of step_us each, back to back from t0_us,
 * each with a Dataloader of dl_us at its start, one kernel of k_us and one
 * NCCL kernel of c_us on a device track of the same pid (pid_dev >= 0: the
 * device rows use that pid instead, as Kineto does), and a CPU(Process)
 * counter sample per step. first_step < 0: the steps have no number.
 */
struct work {
	int64_t pid, pid_dev;
	int nsteps;
	double t0_us, step_us, dl_us, k_us, c_us, cpu_pct;
	int first_step;
};

static inline void add_rank(struct pt_trace *t, const struct work *w)
{
	uint32_t host = tu_track(t, w->pid, w->pid + 1, -1);
	uint32_t dev = tu_track(t, w->pid_dev >= 0 ? w->pid_dev : w->pid, 7, 0);
	for (int i = 0; i < w->nsteps; i++) {
		double s = w->t0_us + i * w->step_us;
		char name[32];
		if (w->first_step >= 0)
			snprintf(name, sizeof name, "ProfilerStep#%d", w->first_step + i);
		else /* steps without a number: counted */
			snprintf(name, sizeof name, "train_step");
		tu_ev(t, host, PT_KIND_PROFILE_STEP, name, s, w->step_us, 0);
		tu_ev(t, host, PT_KIND_DATALOADER, "DataLoader", s, w->dl_us, 0);
		tu_ev(t, host, PT_KIND_OPERATOR, "aten::mm", s + w->dl_us, 10, 0);
		tu_ev(t, dev, PT_KIND_KERNEL, "gemm", s + w->dl_us + 20, w->k_us, 0);
		tu_ev(t, dev, PT_KIND_COMMUNICATION, "ncclAllReduce", s + w->dl_us + 20 + w->k_us,
		      w->c_us, 0);
		struct pt_event ev = {0};
		ev.start_ns = US(s + 1);
		double v = w->cpu_pct;
		memcpy(&ev.arg, &v, sizeof v);
		ev.name_id = pt_trace_intern(t, "CPU(Process)", 12);
		ev.track_id = tu_track(t, w->pid, 999, -1);
		ev.kind = PT_KIND_COUNTER;
		pt_trace_add(t, &ev);
	}
}

static inline void near(double got, double want, double tol, const char *what)
{
	if (fabs(got - want) > tol)
		fail_msg("%s: got %.6f, want %.6f", what, got, want);
}

/* Four ranks, rank 2 slowed to 150 ms steps (the others 100 ms); the
 * process table is given in reverse so the sort by rank is checked. */

static inline struct pt_trace *load(const char *rel)
{
	return tu_load_trace(tu_traces(), rel);
}

/* A summary as report --json prints it (every table, step and figure). */
static char *summary_json(const struct pt_trace *t, const struct pt_summary *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(pt_report_json(f, t, s, NULL), 0);
	fclose(f);
	return buf;
}

#endif
