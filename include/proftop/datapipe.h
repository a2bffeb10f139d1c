/*
 * datapipe.h - the data pipeline: is the loader's queue empty when the
 * training asks for a batch, and which stage of making a batch is slow
 * (MindInsight's MindData analysis). Read-only over a trace's store.
 *
 * What a trace has to carry (the C API or the Python helper writes it):
 *   - the queue: a counter named "Dataloader queue", sampled when the
 *     training asks for a batch: the batches ready then (0 = the training
 *     waits); optionally "Dataloader queue capacity" (the most the loader
 *     prefetches);
 *   - the stages: user ranges whose name starts with "data: " ("data:
 *     MyDataset.__getitem__", "data: collate_fn", "data: RandomCrop"). The
 *     thread (or worker process) that runs a stage is its lane; lanes that
 *     are not a training thread (one with steps) are the workers, except a
 *     lane that only pins memory ("data: pin_memory").
 *
 * Figures, over the summary's window (events starting in [t0_ns, t1_ns]):
 *   queue_empty_pct  samples with no batch ready / samples, %
 *   queue_mean       mean batches ready
 *   per stage        calls, total (a call nested in a call of the same name
 *                    counts once), self (minus nested stages), per sample
 *                    (total / samples: the calls of the dataset's
 *                    __getitem__ when there is one, else the steps' samples,
 *                    else per call), busy_pct = total / the lanes' busy time
 *                    (each lane's outermost stages, merged), never over 100
 *   per lane         busy (outermost stages) / wall (first to last stage on
 *                    the lane, cut to the window), never over 100 %; lanes
 *                    of one process with the same label (a worker restarted
 *                    every epoch) are one lane, their times added
 *
 * Threading: like any trace reader, only while no writer runs.
 */
#ifndef PROFTOP_DATAPIPE_H
#define PROFTOP_DATAPIPE_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/agg.h"
#include "proftop/trace.h"

#define PT_DP_PREFIX "data: "
#define PT_DP_QUEUE "Dataloader queue"
#define PT_DP_QUEUE_CAP "Dataloader queue capacity"
#define PT_DP_MAX_STAGES 64 /* distinct stage names kept; the rest count in stages_dropped */

struct pt_dp_stage {
	uint32_t name_id;   /* the full name ("data: collate_fn"); skip PT_DP_PREFIX to show */
	uint64_t calls;
	uint64_t total_ns;  /* outermost calls of this name */
	uint64_t self_ns;   /* minus stages nested in it */
	uint64_t max_ns;
	double per_sample_ms;
	double busy_pct;    /* total / all lanes' busy time, 0..100 */
	int pin;            /* "data: pin_memory" */
};

struct pt_dp_lane {
	uint32_t track;
	int training;       /* a training thread (stages run where the steps run) */
	int pin_only;       /* only pin-memory stages */
	uint64_t busy_ns, wall_ns;
	uint64_t calls;     /* outermost stage calls */
	uint32_t processes; /* threads merged into this lane: workers restarted each
	                       epoch share their label ("data worker 0") */
	double busy_pct;    /* busy / wall, 0..100 */
};

struct pt_datapipe {
	/* the queue */
	uint64_t queue_samples, queue_empty;
	double queue_empty_pct, queue_mean;
	double queue_capacity;     /* max of the capacity counter, 0 = unknown */
	/* per step of the summary (s->nsteps entries): batches ready at the
	 * step's first sample, -1 = no sample in the step */
	int32_t *step_ready;
	size_t nsteps;
	/* the stages */
	struct pt_dp_stage *stages; /* by total, largest first */
	size_t nstages;
	uint64_t stages_dropped;    /* events of names past PT_DP_MAX_STAGES */
	struct pt_dp_lane *lanes;   /* in track order */
	size_t nlanes;
	size_t workers;             /* lanes that are neither training nor pin-only */
	uint64_t busy_ns;           /* summed over every lane */
	double workers_busy_pct;    /* the workers' busy / wall, summed over them, 0..100 */
	uint64_t samples;           /* denominator of per_sample_ms */
	int samples_from;           /* 0 = per call, 1 = __getitem__ calls, 2 = step samples */
	int on_training;            /* some stage ran on a training thread */
	ptrdiff_t slowest;          /* index of the stage with the most self time, -1 none */
};

static inline int pt_datapipe_empty(const struct pt_datapipe *dp)
{
	return dp->queue_samples == 0 && dp->nstages == 0;
}

/* Fills dp over what s summarized (s may be NULL: the whole trace, no steps). */
void pt_datapipe_compute(const struct pt_trace *t, const struct pt_summary *s,
			 struct pt_datapipe *dp);
void pt_datapipe_free(struct pt_datapipe *dp);

#endif
