/*
 * tracedir_state.c - when a file in a watched trace folder is complete
 * (tracedir_int.h). No process can tell cheaply whether another still has a
 * file open for writing, so completeness is inferred: the writer closed the
 * file or renamed it into the folder (the atomic-write pattern), or the
 * file's size and mtime stood still for settle_ns. Neither is proof (a
 * writer may close and reopen per chunk, or pause longer than settle_ns),
 * so a file is only taken when it also parses whole; a failed parse is
 * retried after a growing pause (250 ms doubling to 4 s) and becomes an
 * error the user sees only once the file has not changed for
 * broken_after_ns. Pure functions of the inputs: unit-tested on their own.
 */
#include <string.h>

#include "proftop/error.h"
#include "tracedir_int.h"

#define RETRY_FIRST_NS 250000000ull
#define RETRY_MAX_NS   4000000000ull

int td_ident_eq(const struct td_ident *a, const struct td_ident *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size_bytes == b->size_bytes &&
	       a->mtime_ns == b->mtime_ns;
}

static void new_version(struct td_file *f, const struct td_ident *id, uint64_t changed_ns)
{
	f->id = *id;
	f->has_id = 1;
	f->changed_ns = changed_ns;
	f->closed = 0;
	f->fails = 0;
	f->retry_ns = 0;
}

int td_observe(struct td_file *f, const struct td_ident *id, int closed, uint64_t now_ns)
{
	int replaced = 0;
	if (!f->has_id || !td_ident_eq(&f->id, id)) {
		if (f->state == TD_TAKEN) {
			if (f->id.ino != id->ino || f->id.dev != id->dev) {
				/* a new file under the old name (tmp + rename over it) */
				replaced = 1;
				f->state = TD_PENDING;
				f->changed_after = 0;
			} else if (id->size_bytes != f->id.size_bytes) {
				/* the same file written again: its events are in
				 * already, reading it twice would count them twice */
				f->changed_after = 1;
			}
			/* (same size, new mtime: touched; nothing to say) */
		} else if (f->state == TD_BROKEN) {
			f->state = TD_PENDING; /* being fixed or rewritten: try again */
			f->err[0] = 0;
		}
		if (f->state == TD_TAKEN) {
			f->id = *id;
			f->has_id = 1;
			return 0;
		}
		new_version(f, id, now_ns);
	}
	if (closed)
		f->closed = 1;
	return replaced;
}

void td_observe_old(struct td_file *f, const struct td_ident *id, uint64_t age_ns, uint64_t now_ns)
{
	if (f->has_id && td_ident_eq(&f->id, id))
		return;
	if (f->state == TD_TAKEN || f->state == TD_BROKEN) {
		td_observe(f, id, 0, now_ns);
		return;
	}
	new_version(f, id, age_ns < now_ns ? now_ns - age_ns : 0);
}

int td_ready(const struct td_file *f, uint64_t now_ns, const struct td_rules *r)
{
	if (f->state != TD_PENDING || !f->has_id || now_ns < f->retry_ns)
		return 0;
	return f->closed || now_ns - f->changed_ns >= r->settle_ns;
}

enum td_outcome td_after_read(struct td_file *f, int rc, const struct td_ident *before,
			      const struct td_ident *after, int has_after, uint64_t now_ns,
			      const struct td_rules *r)
{
	if (!has_after || !td_ident_eq(before, after)) {
		/* written (or removed) under the reader: whatever it saw is moot */
		f->state = TD_PENDING;
		if (has_after)
			new_version(f, after, now_ns);
		return TD_OUT_CHANGED;
	}
	if (rc == 0) {
		f->state = TD_TAKEN;
		f->err[0] = 0;
		return TD_OUT_TAKEN;
	}
	f->fails++;
	f->closed = 0; /* the close that made it look complete was not the last */
	if (now_ns - f->changed_ns >= r->broken_after_ns) {
		f->state = TD_BROKEN;
		return TD_OUT_BROKEN;
	}
	f->state = TD_PENDING;
	uint64_t pause = RETRY_FIRST_NS;
	for (uint32_t i = 1; i < f->fails && pause < RETRY_MAX_NS; i++)
		pause *= 2;
	if (pause > RETRY_MAX_NS)
		pause = RETRY_MAX_NS;
	f->retry_ns = now_ns + pause;
	return TD_OUT_RETRY;
}
