/*
 * live_capture.h - the live loop's side of deep captures (live_capture.c).
 */
#ifndef PT_LIVE_CAPTURE_H
#define PT_LIVE_CAPTURE_H

#include "live/live_opts.h"
#include "live/live_steps.h"
#include "proftop/trace.h"

/*
 * The loop's captures (live.c): asking for one (the screen's key T: one
 * session, or every rank at the same step when two or more are open), the
 * straggler watch (o->capture_on_straggler, once a second), and saving
 * what this proftop asked for once it is merged (o->capture_save: a
 * capture as one file, a group as a folder; a line on o->capture_out for
 * each group asked for and saved). Zeroed before the loop.
 */
struct live_multi;
struct pt_backend;
struct live_captures {
	struct pt_live_steps *steps;
	uint64_t next_watch_ns;
	int straggler_fired;
};
void live_captures_ask(struct live_captures *lc, struct pt_trace *t, struct pt_backend *sess,
		       struct live_multi *multi, uint32_t steps, const char *why);
void live_captures_poll(struct live_captures *lc, struct pt_trace *t,
			const struct pt_live_opts *o, struct live_multi *multi, uint64_t now_ns);
void live_captures_end(struct live_captures *lc, struct pt_trace *t,
		       const struct pt_live_opts *o);

#endif
