/*
 * agg_perf.c - the summary-wide figures settled from the steps once they
 * are final (agg_settle_steps): the torch.compile counts and which steps
 * the summaries leave out, the Model Summary's per-phase statistics and
 * the Perf Summary (IPS, reader ratio, step-time spread). They read the
 * summary's steps only, never the aggregator.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/agg_internal.h"
#include "model/util.h"

/* Compiling steps (torch.compile) are counted; they are left out of the
 * Model and Perf Summaries unless asked for (with_compile) or every step
 * compiled (then nothing would be left). */
void agg_settle_compile(struct pt_summary *s, int with_compile)
{
	struct pt_perf *p = &s->perf;
	for (size_t i = 0; i < s->nsteps; i++) {
		const struct pt_step *st = &s->steps[i];
		p->compiles += st->compiles;
		p->recompiles += st->recompiles;
		p->graph_breaks += st->graph_breaks;
		p->compile_ns += st->compile_ns;
		if (st->compile_ns) {
			p->compile_steps++;
			p->compile_step_ns += st->dur_ns;
		}
	}
	p->compile_left_out = !with_compile && p->compile_steps && p->compile_steps < s->nsteps;
}

static int step_left_out(const struct pt_summary *s, const struct pt_step *st)
{
	return s->perf.compile_left_out && st->compile_ns;
}

void agg_settle_model(struct pt_summary *s)
{
	for (int r = 0; r < PT_MS__COUNT; r++) {
		s->model[r].cpu.min_ns = UINT64_MAX;
		s->model[r].gpu.min_ns = UINT64_MAX;
	}
	for (size_t i = 0; i < s->nsteps; i++) {
		const struct pt_step *st = &s->steps[i];
		if (step_left_out(s, st))
			continue;
		for (int r = 0; r < PT_MS__COUNT; r++) {
			/* ProfileStep and Others count every step; a phase
			 * counts (and is averaged over) the steps where it took
			 * CPU or GPU time. */
			if (r != PT_MS_STEP && r != PT_MS_OTHERS && !st->cpu_ns[r] &&
			    !st->gpu_ns[r])
				continue;
			s->model[r].calls++;
			pt_stat_add(&s->model[r].cpu, st->cpu_ns[r]);
			pt_stat_add(&s->model[r].gpu, st->gpu_ns[r]);
		}
	}
}

void agg_settle_perf(struct pt_summary *s)
{
	struct pt_perf *p = &s->perf;
	p->reader.min_ns = p->batch.min_ns = UINT64_MAX;
	p->steps = s->nsteps - (p->compile_left_out ? p->compile_steps : 0);
	if (!p->steps)
		return;
	/* no step loaded data (no Dataloader event): the reader figures are
	 * not applicable, not zero */
	p->has_reader = s->model[PT_MS_DATALOADER].calls > 0;
	/* ips in samples/s only when every step knows its sample count. */
	p->ips_samples = 1;
	for (size_t i = 0; i < s->nsteps; i++)
		if (!s->steps[i].samples && !step_left_out(s, &s->steps[i]))
			p->ips_samples = 0;
	uint64_t work = 0, tok = 0, tok_ns = 0;
	int first = 1;
	for (size_t i = 0; i < s->nsteps; i++) {
		const struct pt_step *st = &s->steps[i];
		if (step_left_out(s, st))
			continue;
		/* reader_cost = the step's Dataloader time, batch_cost = its
		 * duration. */
		pt_stat_add(&p->reader, st->cpu_ns[PT_MS_DATALOADER]);
		pt_stat_add(&p->batch, st->dur_ns);
		uint64_t w = p->ips_samples ? st->samples : 1;
		work += w;
		if (st->tokens && st->dur_ns) { /* tokens/s: over the steps that count them */
			tok += st->tokens;
			tok_ns += st->dur_ns;
		}
		/* a step's own rate needs a step of real length: in a job that
		 * loads data, one that fetched no batch (the tail of an iteration
		 * split off, a GAN's G step counted apart) is in the average only */
		if (!st->dur_ns || (p->has_reader && !st->cpu_ns[PT_MS_DATALOADER]))
			continue;
		double ips = (double)w * 1e9 / (double)st->dur_ns;
		if (first || ips > p->ips_max)
			p->ips_max = ips;
		if (first || ips < p->ips_min)
			p->ips_min = ips;
		first = 0;
		if (st->tokens) {
			double r = (double)st->tokens * 1e9 / (double)st->dur_ns;
			if (!p->has_tokens || r > p->tokens_max)
				p->tokens_max = r;
			if (!p->has_tokens || r < p->tokens_min)
				p->tokens_min = r;
			p->has_tokens = 1;
		}
	}
	if (p->batch.total_ns) {
		p->reader_ratio_pct =
		    100.0 * (double)p->reader.total_ns / (double)p->batch.total_ns;
		p->ips_avg = (double)work * 1e9 / (double)p->batch.total_ns;
	}
	if (tok_ns) {
		p->has_tokens = 1;
		p->tokens_avg = (double)tok * 1e9 / (double)tok_ns;
	}
}
