/*
 * agg_stream.h - aggregating a trace file while it is read (agg_stream.c).
 *
 * The Chrome reader's sink hands every event it adds to the trace to a
 * stream; a thread of the stream's own feeds them to an aggregator as
 * batches arrive, so the summary is mostly done when the last byte is read
 * instead of starting then. The aggregator needs each track in start order:
 * the stream checks that the file gave it so, and at the end that the trace
 * is still what the aggregator saw (no event changed or dropped, no track
 * turned into a device stream later). Only then does the summary go to the
 * trace's cache, where pt_summarize() with default options takes it; in
 * every other case pt_summarize() computes it as always, so the figures
 * never depend on which way they were made.
 *
 * Threading: agg_stream_* are called from the thread that writes the trace
 * (the reader's caller); the stream's thread reads only what it is handed.
 */
#ifndef PT_AGG_STREAM_H
#define PT_AGG_STREAM_H

#include "proftop/event.h"
#include "proftop/trace.h"

struct agg_stream;

/* Starts the stream's thread for t. */
struct agg_stream *agg_stream_new(struct pt_trace *t);
/* ev was just added to t (pt_trace_add kept it). */
void agg_stream_add(struct agg_stream *as, const struct pt_event *ev);
/* The end of a batch: what was added since goes to the stream's thread. */
void agg_stream_flush(struct agg_stream *as);
/*
 * The input is complete and t final. events_changed: the reader changed
 * events after adding them (flow arrows bound at the end). Waits for the
 * thread; when t is what the aggregator saw, leaves the summary in t's
 * cache. Frees as.
 */
void agg_stream_finish(struct agg_stream *as, int events_changed);
/* The read failed: stops the thread, keeps nothing. Frees as. */
void agg_stream_abort(struct agg_stream *as);

#endif
