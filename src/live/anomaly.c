/*
 * anomaly.c - the anomaly recorder (anomaly.h): per host track, the steps
 * completed since the last look, a rolling median of the last `window`
 * step times (and Dataloader times), the slow and reader rules, the window
 * of steps around an anomaly, and the files: written through the Chrome
 * exporter with a time window, at most `keep` kept.
 *
 * Finding new steps cheaply: pt_trace_add counts ProfileStep events per
 * track (pt_track.steps), so a look costs one comparison per track unless a
 * step arrived; then the track is read from the end of the last step taken
 * (the probe emits a step when it ends, after its children, and the next
 * step starts where it ended), so every event is read about once more than
 * the aggregator reads it, and only on step tracks. A step's Dataloader time
 * is the union of the Dataloader ranges on its own track, clipped to it.
 */
#include "proftop/anomaly.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proftop/chrome.h"
#include "proftop/error.h"
#include "model/util.h"

#define MAX_WINDOW 4096u
#define MAX_AROUND 64u
/* anomalous steps in a row that share a file before it is closed */
#define MAX_MERGE 32u

struct span {
	uint64_t start_ns, end_ns;
};

/* A file waiting for its after-steps. */
struct pending {
	int on;
	uint64_t t0_ns;		   /* window start */
	uint32_t after_left;	   /* steps still to come */
	uint32_t steps_in;	   /* steps covered since it opened */
	uint64_t due_ns;	   /* written anyway when the clock passes this */
	uint32_t track;		   /* the anomaly's track */
	int64_t first_ordinal;	   /* its first step in the window, when steps have no number; -1 */
	struct pt_anomaly_rec rec; /* the worst step */
};

struct atrack {
	uint32_t id;
	uint64_t steps_seen; /* pt_track.steps at the last look */
	uint64_t wm_ns;	     /* read from here: end of the last step taken */
	int64_t ordinal;     /* steps taken so far */
	uint64_t *dur, *dl;  /* rings of the last `window` steps */
	uint32_t n, pos;
	struct span *recent; /* ring of the last `before` steps */
	uint32_t nrecent, rpos;
	struct pending p;
};

/* A file being written by the writer thread. */
struct job {
	pthread_t th;
	struct pt_trace *snap; /* the window's copy */
	char *meta;	       /* otherData "anomaly" */
	struct pt_anomaly_rec rec;
	char base[4096 + 128], path[4096 + 160];
	int rc;
	char err[512];
	uint64_t cost_ns;
	atomic_int done;
};

struct pt_anomaly {
	struct pt_anomaly_opts o;
	char *dir;
	int dir_ready;
	struct atrack *tr;
	size_t ntr, cap;
	int32_t *slot; /* track id -> index into tr, -1 */
	size_t nslot;
	struct pt_anomaly_rec *files; /* kept, oldest first */
	size_t nfiles, files_cap;
	uint64_t found, written, cost_total_ns, cost_max_ns, write_max_ns, jobs;
	struct job *job; /* the writer in flight, or NULL */
	uint64_t *scratch;
	char err[512];
};

static void job_reap(struct pt_anomaly *d, int wait);

void pt_anomaly_opts_init(struct pt_anomaly_opts *o)
{
	memset(o, 0, sizeof *o);
	o->factor = 3.0;
	o->window = 50;
	o->min_steps = 10;
	o->keep = 20;
	o->before = 2;
	o->after = 1;
	o->reader_frac = 0.5;
	o->wait_ns = 10ull * 1000000000ull;
}

struct pt_anomaly *pt_anomaly_new(const struct pt_anomaly_opts *o)
{
	struct pt_anomaly *d = pt_xcalloc(1, sizeof *d);
	d->o = *o;
	if (!(d->o.factor > 1.0))
		d->o.factor = 1.0;
	if (d->o.window == 0)
		d->o.window = 1;
	if (d->o.window > MAX_WINDOW)
		d->o.window = MAX_WINDOW;
	if (d->o.min_steps > d->o.window)
		d->o.min_steps = d->o.window;
	if (d->o.min_steps == 0)
		d->o.min_steps = 1;
	if (d->o.before > MAX_AROUND)
		d->o.before = MAX_AROUND;
	if (d->o.after > MAX_AROUND)
		d->o.after = MAX_AROUND;
	d->dir = o->dir && *o->dir ? pt_xstrdup(o->dir) : NULL;
	d->o.dir = d->dir;
	d->scratch = pt_xmalloc(d->o.window * sizeof *d->scratch);
	return d;
}

void pt_anomaly_free(struct pt_anomaly *d)
{
	if (!d)
		return;
	job_reap(d, 1);
	for (size_t i = 0; i < d->ntr; i++) {
		free(d->tr[i].dur);
		free(d->tr[i].dl);
		free(d->tr[i].recent);
	}
	for (size_t i = 0; i < d->nfiles; i++)
		free(d->files[i].path);
	free(d->files);
	free(d->tr);
	free(d->slot);
	free(d->scratch);
	free(d->dir);
	free(d);
}

uint64_t pt_anomaly_found(const struct pt_anomaly *d)
{
	return d ? d->found : 0;
}

uint64_t pt_anomaly_written(const struct pt_anomaly *d)
{
	return d ? d->written : 0;
}

size_t pt_anomaly_files(const struct pt_anomaly *d, const struct pt_anomaly_rec **v)
{
	*v = d ? d->files : NULL;
	return d ? d->nfiles : 0;
}

const char *pt_anomaly_error(const struct pt_anomaly *d)
{
	return d ? d->err : "";
}

void pt_anomaly_cost(const struct pt_anomaly *d, uint64_t *loop_max_ns, uint64_t *write_max_ns)
{
	*loop_max_ns = d ? d->cost_max_ns : 0;
	*write_max_ns = d ? d->write_max_ns : 0;
}

/* ---- the rolling median ---- */

/* Median of a ring's n values (the lower middle one for even n). */
static uint64_t median(struct pt_anomaly *d, const uint64_t *ring, uint32_t n)
{
	memcpy(d->scratch, ring, n * sizeof *ring);
	return pt_u64_kth(d->scratch, n, (n - 1) / 2);
}

/* ---- writing ---- */

int pt_anomaly_dir_check(const char *dir, char *err, size_t errlen)
{
	char path[4096];
	const char *d0 = dir && *dir ? dir : PT_ANOMALY_DEFAULT_DIR;
	if (snprintf(path, sizeof path, "%s", d0) >= (int)sizeof path) {
		snprintf(err, errlen, "%.400s: path too long", d0);
		return PT_EINVAL;
	}
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		path[--n] = 0; /* "dir/" would follow a link */
	struct stat sb;
	if (lstat(path, &sb) == 0) {
		if (!S_ISDIR(sb.st_mode)) {
			snprintf(err, errlen, "%.400s: %s", d0,
				 S_ISLNK(sb.st_mode) ? "a symbolic link, not a folder (refused: it "
						       "may lead anywhere)"
						     : "not a directory");
			return PT_EINVAL;
		}
		if (sb.st_uid != geteuid()) {
			snprintf(err, errlen, "%.400s: owned by uid %u, not by you (refused)", d0,
				 (unsigned)sb.st_uid);
			return PT_EPERM;
		}
		if (access(path, W_OK | X_OK) != 0) {
			snprintf(err, errlen, "%.400s: %s", d0, strerror(errno));
			return PT_EPERM;
		}
		return 0;
	}
	/* missing: it is made at the first anomaly, under its nearest existing
	 * parent, which must let us */
	for (;;) {
		char *slash = strrchr(path, '/');
		if (!slash) {
			snprintf(path, sizeof path, ".");
			break;
		}
		if (slash == path) {
			path[1] = 0;
			break;
		}
		*slash = 0;
		if (lstat(path, &sb) == 0)
			break;
	}
	if (access(path, W_OK | X_OK) != 0) {
		snprintf(err, errlen, "%.400s: cannot be made in %.400s: %s", d0, path,
			 strerror(errno));
		return PT_EPERM;
	}
	return 0;
}

/*
 * Makes the folder (mkdir -p, 0700) and checks it before every file: a real
 * folder, not a symbolic link (./proftop-anomalies in a shared directory
 * could be another user's link to somewhere root would then write), owned
 * by us.
 */
static int make_dir(struct pt_anomaly *d)
{
	char path[4096];
	if (snprintf(path, sizeof path, "%s", d->dir) >= (int)sizeof path) {
		snprintf(d->err, sizeof d->err, "%.400s: path too long", d->dir);
		return PT_EINVAL;
	}
	/* mkdir -p: each parent, then the folder itself */
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;
		*p = 0;
		if (mkdir(path, 0700) != 0 && errno != EEXIST) {
			snprintf(d->err, sizeof d->err, "%.400s: %s", path, strerror(errno));
			return PT_EIO;
		}
		*p = c;
		if (!c)
			break;
	}
	/* made: the same checks as before the job started */
	int rc = pt_anomaly_dir_check(d->dir, d->err, sizeof d->err);
	if (rc)
		return rc;
	d->dir_ready = 1;
	return 0;
}

static void other_json(struct pt_buf *b, const struct pt_anomaly_rec *r)
{
	pt_buf_printf(b,
		      "\"anomaly\":{\"pid\":%" PRId64 ",\"step\":%" PRId64 ",\"start_ns\":%" PRIu64
		      ",\"dur_ns\":%" PRIu64 ",\"median_ns\":%" PRIu64 ",\"ratio\":%.3f"
		      ",\"dataloader_ns\":%" PRIu64 ",\"steps\":%u,\"reasons\":[",
		      r->pid, r->step, r->start_ns, r->dur_ns, r->median_ns, r->ratio,
		      r->dataloader_ns, r->steps);
	int n = 0;
	if (r->reasons & PT_ANOMALY_SLOW)
		pt_buf_printf(b, "%s\"slow\"", n++ ? "," : "");
	if (r->reasons & PT_ANOMALY_READER)
		pt_buf_printf(b, "%s\"reader\"", n++ ? "," : "");
	pt_buf_printf(b, "]}");
	pt_buf_putc(b, 0);
}

/* Deletes the oldest kept files past `keep` (only files written here). */
static void trim(struct pt_anomaly *d)
{
	if (!d->o.keep)
		return;
	while (d->nfiles > d->o.keep) {
		unlink(d->files[0].path);
		free(d->files[0].path);
		memmove(d->files, d->files + 1, (d->nfiles - 1) * sizeof *d->files);
		d->nfiles--;
	}
}

/*
 * A copy of the trace's window [t0_ns, t1_ns) (t1_ns 0: to the end): the
 * tracks with events in it (keys, labels, devices), their events, the
 * strings they name, the process table. The copy is what the writer thread
 * exports, so the live loop goes on filling the trace meanwhile.
 */
static struct pt_trace *snapshot(struct pt_trace *t, uint64_t t0_ns, uint64_t t1_ns,
				 uint32_t step_track, int64_t ordinal)
{
	struct pt_trace *s = pt_trace_new(PT_STORE_DEFAULT_MAX_BYTES);
	uint32_t nstr = pt_strtab_count(t->strings) + 1;
	uint32_t *smap = pt_xcalloc(nstr, sizeof *smap); /* old id -> new id + 1 */
#define REMAP(id)                                                                                      \
	((id) == 0 || (id) >= nstr ? 0                                                                 \
	 : smap[id]		   ? smap[id] - 1                                                      \
				   : (smap[id] = 1 + pt_trace_intern(s, pt_trace_str(t, id),           \
								     pt_strtab_len(t->strings, id))) - \
			  1)
	for (uint32_t i = 0; i < t->ntracks; i++) {
		struct pt_store_iter it;
		pt_store_iter_init(&it, t->store, i, t0_ns, t1_ns ? t1_ns : UINT64_MAX);
		const struct pt_event *ev = pt_store_iter_next(&it);
		if (ev) {
			const struct pt_track *tr = &t->tracks[i];
			struct pt_track_key k = tr->key;
			k.pid_str = REMAP(k.pid_str);
			k.tid_str = REMAP(k.tid_str);
			uint32_t id = pt_trace_track(s, &k);
			struct pt_track *nt = &s->tracks[id];
			nt->label = REMAP(tr->label);
			nt->process_label = REMAP(tr->process_label);
			nt->sort_index = tr->sort_index;
			nt->device = tr->device;
			nt->stream = tr->stream;
			for (; ev; ev = pt_store_iter_next(&it)) {
				struct pt_event e = *ev;
				e.track_id = id;
				e.name_id = REMAP(e.name_id);
				/* unnumbered steps get their number in the session, so
				 * the file says "step 99" as the recorder did */
				if (e.kind == PT_KIND_PROFILE_STEP && i == step_track &&
				    ordinal >= 0 &&
				    pt_step_number(pt_trace_str(t, ev->name_id)) < 0) {
					char nm[48];
					int n = snprintf(nm, sizeof nm, "ProfileStep#%" PRId64,
							 ordinal++);
					e.name_id = pt_trace_intern(s, nm, (size_t)n);
				}
				pt_trace_add(s, &e);
			}
		}
		pt_store_iter_done(&it);
	}
	for (uint32_t i = 0; i < t->nprocs; i++) {
		const struct pt_proc *p = &t->procs[i];
		pt_trace_set_proc(s, p->pid, p->rank, p->host ? pt_trace_str(t, p->host) : NULL);
	}
#undef REMAP
	free(smap);
	s->rank = t->rank;
	s->world_size = t->world_size;
	s->display_unit = t->display_unit;
	if (t->source)
		pt_trace_set_source(s, t->source);
	return s;
}

/* The writer thread: exports the snapshot under a name of its own. */
static void *job_run(void *arg)
{
	struct job *j = arg;
	uint64_t t_start = pt_now_ns();
	struct pt_export_opts eo = {0};
	eo.other_json = j->meta;
	int rc = PT_EEXIST;
	/* never replace a file (an earlier run's, or ours): a suffix instead */
	for (unsigned k = 0; k < 100 && rc == PT_EEXIST; k++) {
		int n = snprintf(j->path, sizeof j->path, "%s", j->base);
		if (k)
			n += snprintf(j->path + n, sizeof j->path - (size_t)n, "-%u", k);
		snprintf(j->path + n, sizeof j->path - (size_t)n, ".json");
		j->err[0] = 0;
		rc = pt_chrome_export(j->snap, j->path, &eo, j->err, sizeof j->err);
	}
	j->rc = rc;
	j->cost_ns = pt_now_ns() - t_start;
	atomic_store(&j->done, 1);
	return NULL;
}

/* Waits for the writer (if any) and files its result. */
static void job_reap(struct pt_anomaly *d, int wait)
{
	struct job *j = d->job;
	if (!j || (!wait && !atomic_load(&j->done)))
		return;
	pthread_join(j->th, NULL);
	d->job = NULL;
	if (j->cost_ns > d->write_max_ns)
		d->write_max_ns = j->cost_ns;
	if (j->rc) {
		if (j->err[0])
			snprintf(d->err, sizeof d->err, "%s", j->err);
		else
			snprintf(d->err, sizeof d->err, "%.400s: %s", j->path, pt_strerror(j->rc));
	} else {
		if (d->nfiles == d->files_cap) {
			d->files_cap = d->files_cap ? d->files_cap * 2 : 8;
			d->files = pt_xrealloc(d->files, d->files_cap * sizeof *d->files);
		}
		j->rec.path = pt_xstrdup(j->path);
		d->files[d->nfiles++] = j->rec;
		d->written++;
		trim(d);
	}
	pt_trace_free(j->snap);
	free(j->meta);
	free(j);
}

/* Writes p's window [p->t0_ns, t1_ns) (t1_ns 0: up to the newest event):
 * copies it here, exports it on a thread (one writer at a time). Returns 1
 * when a file was started. */
static int write_file(struct pt_anomaly *d, struct pt_trace *t, struct pending *p, uint64_t t1_ns)
{
	p->on = 0;
	if (!d->dir || make_dir(d))
		return 0;
	job_reap(d, 1);
	uint64_t t_start = pt_now_ns();
	struct job *j = pt_xcalloc(1, sizeof *j);
	j->rec = p->rec;
	struct pt_buf meta = {0};
	other_json(&meta, &j->rec);
	j->meta = meta.p;
	snprintf(j->base, sizeof j->base, "%s/anomaly-%" PRId64 "-step%" PRId64 "-%.1fx", d->dir,
		 j->rec.pid, j->rec.step, j->rec.ratio);
	j->snap = snapshot(t, p->t0_ns, t1_ns, p->track, p->first_ordinal);
	d->jobs++;
	if (pthread_create(&j->th, NULL, job_run, j) != 0)
		job_run(j); /* no thread to be had: write it here */
	d->job = j;
	uint64_t cost = pt_now_ns() - t_start;
	d->cost_total_ns += cost;
	if (cost > d->cost_max_ns)
		d->cost_max_ns = cost;
	return 1;
}

/* ---- the steps ---- */

static struct atrack *track_state(struct pt_anomaly *d, uint32_t id)
{
	if (id >= d->nslot) {
		size_t n = d->nslot ? d->nslot : 16;
		while (n <= id)
			n *= 2;
		d->slot = pt_xrealloc(d->slot, n * sizeof *d->slot);
		for (size_t i = d->nslot; i < n; i++)
			d->slot[i] = -1;
		d->nslot = n;
	}
	if (d->slot[id] >= 0)
		return &d->tr[d->slot[id]];
	if (d->ntr == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 4;
		d->tr = pt_xrealloc(d->tr, d->cap * sizeof *d->tr);
	}
	struct atrack *a = &d->tr[d->ntr];
	memset(a, 0, sizeof *a);
	a->id = id;
	a->dur = pt_xmalloc(d->o.window * sizeof *a->dur);
	a->dl = pt_xmalloc(d->o.window * sizeof *a->dl);
	a->recent = pt_xmalloc((d->o.before ? d->o.before : 1) * sizeof *a->recent);
	d->slot[id] = (int32_t)d->ntr++;
	return a;
}

struct step_seen {
	uint64_t start_ns, end_ns;
	uint64_t dl_ns, dl_end_ns, dl_max_ns;
	uint32_t name_id;
};

/* The start of the oldest of the last `before` steps (or of this one). */
static uint64_t window_start(const struct pt_anomaly *d, const struct atrack *a, uint64_t start_ns)
{
	if (!a->nrecent || !d->o.before)
		return start_ns;
	uint32_t cap = d->o.before;
	uint32_t oldest =
	    a->nrecent < cap ? 0 : a->rpos; /* rpos: next slot = the oldest when full */
	return a->recent[oldest].start_ns;
}

/* One completed step of track a; returns the files written. */
static int take_step(struct pt_anomaly *d, struct pt_trace *t, struct atrack *a,
		     const struct step_seen *s)
{
	uint64_t dur = s->end_ns - s->start_ns;
	int64_t num = pt_step_number(pt_trace_str(t, s->name_id));
	if (num < 0)
		num = a->ordinal;
	a->ordinal++;
	int reasons = 0;
	uint64_t med = 0;
	if (a->n >= d->o.min_steps) {
		med = median(d, a->dur, a->n);
		uint64_t med_dl = median(d, a->dl, a->n);
		if ((double)dur > d->o.factor * (double)med &&
		    dur - med >= PT_ANOMALY_MIN_EXCESS_NS)
			reasons |= PT_ANOMALY_SLOW;
		if (d->o.reader_frac > 0 && (double)s->dl_ns > d->o.factor * (double)med_dl &&
		    (double)(s->dl_ns - med_dl) > d->o.reader_frac * (double)med &&
		    s->dl_ns - med_dl >= PT_ANOMALY_MIN_EXCESS_NS)
			reasons |= PT_ANOMALY_READER;
	}
	if (d->o.reader_max_ns && s->dl_max_ns > d->o.reader_max_ns)
		reasons |= PT_ANOMALY_READER;
	/* the step joins the history, anomaly or not: the median shrugs it off */
	a->dur[a->pos] = dur;
	a->dl[a->pos] = s->dl_ns;
	a->pos = (a->pos + 1) % d->o.window;
	if (a->n < d->o.window)
		a->n++;

	int wrote = 0;
	struct pending *p = &a->p;
	if (reasons) {
		d->found++;
		struct pt_anomaly_rec r = {0};
		r.pid = t->tracks[a->id].key.pid;
		r.step = num;
		r.start_ns = s->start_ns;
		r.dur_ns = dur;
		r.median_ns = med;
		r.dataloader_ns = s->dl_ns;
		r.ratio = med ? (double)dur / (double)med : 0;
		r.reasons = reasons;
		if (!p->on) {
			p->on = 1;
			p->t0_ns = window_start(d, a, s->start_ns);
			p->track = a->id;
			/* a->ordinal already counts this step */
			p->first_ordinal = pt_step_number(pt_trace_str(t, s->name_id)) >= 0
					       ? -1
					       : a->ordinal - 1 - (int64_t)a->nrecent;
			p->steps_in = 0;
			p->rec = r;
			p->rec.steps = 0;
		} else if (r.ratio > p->rec.ratio) { /* a burst: named after its worst step */
			uint32_t n = p->rec.steps;
			int rs = p->rec.reasons;
			p->rec = r;
			p->rec.steps = n;
			p->rec.reasons |= rs;
		} else {
			p->rec.reasons |= reasons;
		}
		p->rec.steps++;
		p->after_left = d->o.after;
	} else if (p->on && p->after_left) {
		p->after_left--;
	}
	if (p->on) {
		p->steps_in++;
		p->due_ns = s->end_ns + d->o.wait_ns;
		if (!p->after_left || p->steps_in >= MAX_MERGE)
			wrote += write_file(d, t, p, s->end_ns);
	}
	if (d->o.before) {
		a->recent[a->rpos] = (struct span){s->start_ns, s->end_ns};
		a->rpos = (a->rpos + 1) % d->o.before;
		if (a->nrecent < d->o.before)
			a->nrecent++;
	}
	return wrote;
}

/* Reads track a from the end of its last step taken; takes every step found. */
static int scan_track(struct pt_anomaly *d, struct pt_trace *t, struct atrack *a)
{
	struct pt_store_iter it;
	struct step_seen cur;
	int on = 0, wrote = 0;
	pt_store_iter_init(&it, t->store, a->id, a->wm_ns, UINT64_MAX);
	const struct pt_event *ev;
	while ((ev = pt_store_iter_next(&it))) {
		if (ev->kind == PT_KIND_PROFILE_STEP) {
			/* in start order, every child of the previous step came before */
			if (on)
				wrote += take_step(d, t, a, &cur);
			memset(&cur, 0, sizeof cur);
			cur.start_ns = ev->start_ns;
			cur.end_ns = pt_event_end(ev);
			cur.dl_end_ns = cur.start_ns;
			cur.name_id = ev->name_id;
			on = 1;
			a->wm_ns = cur.end_ns > a->wm_ns ? cur.end_ns : a->wm_ns;
		} else if (ev->kind == PT_KIND_DATALOADER && on && ev->start_ns < cur.end_ns) {
			uint64_t s = ev->start_ns > cur.dl_end_ns ? ev->start_ns : cur.dl_end_ns;
			uint64_t e = pt_event_end(ev) < cur.end_ns ? pt_event_end(ev) : cur.end_ns;
			if (e > s) {
				cur.dl_ns += e - s;
				cur.dl_end_ns = e;
			}
			if (ev->dur_ns > cur.dl_max_ns)
				cur.dl_max_ns = ev->dur_ns;
		}
	}
	pt_store_iter_done(&it);
	if (on)
		wrote += take_step(d, t, a, &cur);
	return wrote;
}

int pt_anomaly_check(struct pt_anomaly *d, struct pt_trace *t, uint64_t now_ns)
{
	int wrote = 0;
	job_reap(d, 0);
	for (uint32_t i = 0; i < t->ntracks; i++) {
		const struct pt_track *tr = &t->tracks[i];
		if (!tr->steps || pt_track_is_device(tr))
			continue;
		struct atrack *a = track_state(d, i);
		if (a->steps_seen == tr->steps)
			continue;
		a->steps_seen = tr->steps;
		wrote += scan_track(d, t, a);
	}
	/* the after-steps never came (a hang, a long pause): write what there is */
	for (size_t i = 0; i < d->ntr; i++) {
		struct pending *p = &d->tr[i].p;
		if (p->on && now_ns >= p->due_ns)
			wrote += write_file(d, t, p, 0);
	}
	return wrote;
}

int pt_anomaly_finish(struct pt_anomaly *d, struct pt_trace *t)
{
	int wrote = pt_anomaly_check(d, t, 0);
	for (size_t i = 0; i < d->ntr; i++)
		if (d->tr[i].p.on)
			wrote += write_file(d, t, &d->tr[i].p, 0);
	job_reap(d, 1);
	return wrote;
}

void pt_anomaly_flush(struct pt_anomaly *d)
{
	job_reap(d, 1);
}
