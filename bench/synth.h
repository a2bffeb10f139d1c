/*
 * synth.h - the synthetic PyTorch-like trace of bench_agg and
 * bench_agg_live: steps with a dataloader, nested operators launching
 * kernels on two streams, backward on an autograd thread, an optimizer
 * step; about `target` events. Included by one benchmark each.
 */
#ifndef PT_BENCH_SYNTH_H
#define PT_BENCH_SYNTH_H

#include <stdio.h>
#include <string.h>

#include "proftop/trace.h"

static uint32_t name(struct pt_trace *t, const char *s)
{
	return pt_trace_intern(t, s, strlen(s));
}

static void add(struct pt_trace *t, uint32_t track, uint8_t kind, uint32_t nm, uint64_t start,
		uint64_t dur, uint32_t corr, uint64_t arg)
{
	struct pt_event ev = {0};
	ev.start_ns = start;
	ev.dur_ns = dur;
	ev.name_id = nm;
	ev.track_id = track;
	ev.kind = kind;
	ev.corr = corr;
	ev.arg = arg;
	pt_trace_add(t, &ev);
}

static struct pt_trace *build(uint64_t target)
{
	struct pt_trace *t = pt_trace_new((size_t)4 << 30);
	struct pt_track_key km = {1, 1, 0, 0}, kb = {1, 2, 0, 0}, k7 = {0, 7, 0, 0},
			    k8 = {0, 8, 0, 0};
	uint32_t main_tr = pt_trace_track(t, &km), bw = pt_trace_track(t, &kb);
	uint32_t s7 = pt_trace_track(t, &k7), s8 = pt_trace_track(t, &k8);
	pt_trace_track_device(t, s7, 0, 7);
	pt_trace_track_device(t, s8, 0, 8);
	uint32_t n_step = name(t, "ProfilerStep#0"), n_dl = name(t, "enumerate(DataLoader)");
	uint32_t n_bwd = name(t, "autograd::engine::evaluate_function: X");
	uint32_t n_opt = name(t, "Optimizer.step#SGD.step"), n_launch = name(t, "cudaLaunchKernel");
	uint32_t n_ops[16], n_inner[16], n_k[16];
	char buf[64];
	for (int i = 0; i < 16; i++) {
		snprintf(buf, sizeof buf, "aten::op%d", i);
		n_ops[i] = name(t, buf);
		snprintf(buf, sizeof buf, "aten::inner%d", i);
		n_inner[i] = name(t, buf);
		snprintf(buf, sizeof buf, "kernel_%d", i);
		n_k[i] = name(t, buf);
	}
	uint64_t now = 1000000, events = 0;
	uint32_t corr = 1;
	const int units = 1000; /* per phase per step, 4 events each */
	while (events < target) {
		uint64_t step_start = now;
		uint64_t step_dur = (uint64_t)units * 2 * 10000 + 200000;
		add(t, main_tr, PT_KIND_PROFILE_STEP, n_step, now, step_dur, 0, 32);
		add(t, main_tr, PT_KIND_DATALOADER, n_dl, now, 50000, 0, 0);
		events += 2;
		now += 60000;
		for (int pass = 0; pass < 2; pass++) { /* forward, then backward */
			uint32_t tr = pass ? bw : main_tr;
			if (pass) {
				add(t, tr, PT_KIND_BACKWARD, n_bwd, now, (uint64_t)units * 10000, 0,
				    0);
				events++;
			}
			for (int u = 0; u < units; u++) {
				int k = u & 15;
				add(t, tr, PT_KIND_OPERATOR, n_ops[k], now, 9000, 0, 0);
				add(t, tr, PT_KIND_OPERATOR, n_inner[k], now + 1000, 6000, 0, 0);
				add(t, tr, PT_KIND_CUDA_RUNTIME, n_launch, now + 2000, 2000, corr,
				    0);
				add(t, (u & 1) ? s8 : s7, PT_KIND_KERNEL, n_k[k], now + 3000, 12000,
				    corr, 0);
				corr++;
				now += 10000;
				events += 4;
			}
		}
		add(t, main_tr, PT_KIND_OPTIMIZATION, n_opt, now + 10000, 50000, 0, 0);
		events++;
		now = step_start + step_dur;
	}
	return t;
}

#endif
