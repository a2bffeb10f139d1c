/*
 * session_capture.c - a reader's side of deep captures (shm.h, struct
 * pt_shm_ctl; capture.h): asking the job's helper for one, following its
 * progress in the trace's capture list, and merging the finished trace,
 * which the helper wrote beside the segment, into the live trace. Every
 * reader of the session merges it (the screen in one pane sees a capture
 * that `proftop capture` asked for in another), but only captures asked for
 * after it attached, or that ended so recently that its first drain brought
 * the steps before it: the steps of older ones are not in its trace.
 *
 * The header is untrusted like the rest of the segment: the file's name is
 * built here from the validated pid and the request's number, never read
 * from the segment; times that make no sense fail the merge with a reason.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proftop/capture.h"
#include "proftop/error.h"
#include "proftop/session.h"
#include "session_int.h"
#include "model/util.h"

#define AFTER_LOOK_NS 500000000ull /* the steps after a capture: looked at twice a second */

int pt_session_capture_request(struct pt_session *s, uint32_t steps, uint32_t flags,
			       uint64_t at_step, uint32_t *seq, char *why, size_t whylen)
{
	if (pt_session_failed(s)) {
		snprintf(why, whylen, "the session's segment is not readable");
		return PT_EIO;
	}
	if (pt_session_owner_exited(s)) {
		snprintf(why, whylen, "process %d has exited (or is exiting)", (int)pt_session_pid(s));
		return PT_ENOENT;
	}
	struct pt_shm_header *h = pt_session_hdr(s);
	if (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != PT_SHM_RUNNING) {
		snprintf(why, whylen, "process %d is exiting", (int)pt_session_pid(s));
		return PT_ENOENT;
	}
	return pt_shm_ctl_request(h, steps, flags, at_step, (int32_t)getpid(), pt_now_ns(), seq, why,
				  whylen);
}

int pt_session_capture_cancel(struct pt_session *s, uint32_t seq)
{
	if (pt_session_failed(s))
		return PT_EIO;
	return pt_shm_ctl_cancel(pt_session_hdr(s), seq);
}

int pt_session_capture_file(const struct pt_session *s, uint32_t seq, char *buf, size_t len)
{
	const char *path = pt_session_file(s);
	const char *slash = path ? strrchr(path, '/') : NULL;
	if (!slash)
		return PT_ENOENT;
	int n = snprintf(buf, len, "%.*s/%d.capture-%u.json", (int)(slash - path), path,
			 (int)pt_session_pid(s), seq);
	return n > 0 && (size_t)n < len ? 0 : PT_EINVAL;
}

static void merge(struct pt_session *s, struct pt_trace *t, struct pt_capture *c,
		  const struct pt_shm_ctl *ctl)
{
	char path[600], err[200];
	c->t0_ns = ctl->t0_ns;
	c->t1_ns = ctl->t1_ns;
	c->start_block_ns = ctl->start_block_ns;
	c->stop_block_ns = ctl->stop_block_ns;
	c->write_ns = ctl->write_ns;
	c->job_first_step = ctl->first_step;
	snprintf(c->msg, sizeof c->msg, "%s", ctl->msg);
	int rc;
	/* untrusted: a bracket or a window that cannot be right is refused */
	if (!ctl->t0_ns || ctl->t1_ns < ctl->t0_ns || ctl->sync_hi_ns < ctl->sync_lo_ns ||
	    ctl->sync_hi_ns - ctl->sync_lo_ns > 10000000000ull || ctl->sync_lo_ns < ctl->t0_ns ||
	    ctl->sync_hi_ns > ctl->t1_ns) {
		snprintf(err, sizeof err, "the job's capture times are inconsistent");
		rc = PT_EFORMAT;
	} else if ((rc = pt_session_capture_file(s, c->seq, path, sizeof path)) == 0) {
		rc = pt_capture_merge(t, c, path, ctl->tid, ctl->sync_lo_ns, ctl->sync_hi_ns, err,
				      sizeof err);
	} else {
		snprintf(err, sizeof err, "no path for the capture's file");
	}
	if (rc) {
		c->state = PT_CAPTURE_FAILED;
		snprintf(c->msg, sizeof c->msg, "reading the capture failed: %s", err);
		return;
	}
	c->state = PT_CAPTURE_MERGED;
	pt_capture_cost(t, c, 1);
}

/* A capture the helper answered for (state's seq): its progress, and the
 * merge once its trace is complete. */
static void follow_state(struct pt_session *s, struct pt_trace *t, struct pt_capture *c,
			 const struct pt_shm_ctl *ctl, struct pt_capture_follow *f, int exited,
			 uint64_t now_ns)
{
	uint8_t before = c->state;
	uint32_t done_before = c->done;
	if (before == PT_CAPTURE_MERGED || before == PT_CAPTURE_FAILED ||
	    before == PT_CAPTURE_CANCELLED)
		return; /* final here */
	if (PT_SHM_CTL_REQ_SEQ(ctl->request) == c->seq) {
		c->mine = ctl->requester == (int32_t)getpid();
		c->asked_ns = ctl->asked_ns;
	}
	c->done = PT_SHM_CTL_STATE_DONE(ctl->state);
	switch (PT_SHM_CTL_STATE_ST(ctl->state)) {
	case PT_SHM_CTL_RUNNING:
		c->state = PT_CAPTURE_RUNNING;
		break;
	case PT_SHM_CTL_WRITING:
		c->state = PT_CAPTURE_WRITING;
		break;
	case PT_SHM_CTL_DONE:
		merge(s, t, c, ctl);
		if (c->state == PT_CAPTURE_MERGED) {
			f->after_seq = c->seq;
			f->next_after_ns = now_ns + AFTER_LOOK_NS;
		}
		break;
	case PT_SHM_CTL_FAILED:
		c->state = PT_CAPTURE_FAILED;
		snprintf(c->msg, sizeof c->msg, "%s", ctl->msg);
		break;
	case PT_SHM_CTL_CANCELLED:
		c->state = PT_CAPTURE_CANCELLED;
		snprintf(c->msg, sizeof c->msg, "%s", ctl->msg);
		break;
	default:
		break;
	}
	if (exited && (c->state == PT_CAPTURE_RUNNING || c->state == PT_CAPTURE_WRITING ||
		       c->state == PT_CAPTURE_ASKED)) {
		c->state = PT_CAPTURE_CANCELLED;
		snprintf(c->msg, sizeof c->msg, "the job exited during the capture");
	}
	if (c->state != before || c->done != done_before)
		pt_capture_touch(t);
}

void pt_session_capture_follow(struct pt_session *s, struct pt_trace *t,
			       const struct pt_shm_ctl *ctl, struct pt_capture_follow *f,
			       int exited, uint64_t now_ns)
{
	uint32_t rseq = PT_SHM_CTL_REQ_SEQ(ctl->request), sseq = PT_SHM_CTL_STATE_SEQ(ctl->state);
	if (!f->init) {
		/* Attaching: a capture that is over is not followed (its steps
		 * may be older than what this reader gets); one asked for, running
		 * or being written is (the rings keep the recent past: its steps
		 * are in the trace, as for a reader that was there). */
		uint32_t st = PT_SHM_CTL_STATE_ST(ctl->state);
		f->init = 1;
		f->base = rseq > sseq ? rseq : sseq;
		if (rseq > sseq)
			f->base = rseq - 1;
		else if (sseq && st != PT_SHM_CTL_DONE && st != PT_SHM_CTL_FAILED &&
			 st != PT_SHM_CTL_CANCELLED)
			f->base = sseq - 1;
		else if (sseq && st == PT_SHM_CTL_DONE && ctl->t0_ns &&
			 pt_capture_steps_from(t, pt_session_pid(s), ctl->t0_ns))
			f->base = sseq - 1; /* ended just before: its steps came with the first drain */
	}
	int64_t pid = pt_session_pid(s);
	if (f->after_seq && now_ns >= f->next_after_ns) {
		struct pt_capture *c = pt_capture_get(t, pid, f->after_seq, 0);
		/* whole again while none of the capture's own steps was in when it
		 * merged: the job's DONE can be read before the records of its
		 * last steps are drained (a loaded machine), and the screen's
		 * line would say "5 steps" with no step time for good */
		if (c && c->state == PT_CAPTURE_MERGED)
			pt_capture_cost(t, c, !c->during_n);
		if (!c || c->after_n >= pt_capture_cost_want(c))
			f->after_seq = 0;
		f->next_after_ns = now_ns + AFTER_LOOK_NS;
	}
	/* the capture the helper answers for (it may lag the newest request
	 * while a capture that raced in waits for it) */
	if (sseq > f->base) {
		struct pt_capture *c = pt_capture_get(t, pid, sseq, 1);
		if (!c->steps && rseq == sseq)
			c->steps = PT_SHM_CTL_REQ_STEPS(ctl->request);
		follow_state(s, t, c, ctl, f, exited, now_ns);
	}
	if (rseq > f->base && rseq != sseq) { /* asked for, not answered yet */
		struct pt_capture *c = pt_capture_get(t, pid, rseq, 1);
		uint8_t before = c->state;
		if (before != PT_CAPTURE_ASKED)
			return;
		c->steps = PT_SHM_CTL_REQ_STEPS(ctl->request);
		c->mine = ctl->requester == (int32_t)getpid();
		c->asked_ns = ctl->asked_ns;
		if (PT_SHM_CTL_REQ_FLAGS(ctl->request) & PT_SHM_CTL_CANCEL) {
			c->state = PT_CAPTURE_CANCELLED;
			snprintf(c->msg, sizeof c->msg, "withdrawn before the job started it");
		} else if (exited) {
			c->state = PT_CAPTURE_CANCELLED;
			snprintf(c->msg, sizeof c->msg, "the job exited before it started");
		}
		if (c->state != before)
			pt_capture_touch(t);
	}
}

