/*
 * live_multi.c - the sessions of a multi-session live loop (live_multi.h):
 * `proftop -p A,B,...` and `--all`, e.g. the 8 ranks torchrun started on a
 * node. Each pid is one entry; an entry is pending until its session
 * opens (retried every full period: a rank that has not loaded the probe
 * yet), open while its owner runs, and exited once drained after its
 * owner's exit (then closed: its events stay in the trace, and the entry in
 * res->sessions says exited). An entry whose process is gone before its
 * session ever opened, or whose segment is refused LIVE_OPEN_TRIES times,
 * is given up (the first refusal's reason goes to res->error).
 *
 * With --all the session directory is listed every PT_LIVE_SCAN_NS: a
 * readdir, no segment opened for names already known, so a scan costs a few
 * system calls however many sessions there are. A launched job's (launch
 * id) is listed every few milliseconds at first, so the reader attaches
 * before the job's rings wrap, then at the drain period (live.h). A name whose process is
 * gone, or whose segment says its owner exited, is remembered and left
 * alone (stale segments are `proftop ls`'s business, not a rank), unless
 * the process started after the loop did (a short rank that came and went
 * between two looks: its segment is read).
 *
 * On open each process is registered with pt_trace_set_proc (the rank from
 * the probe's RANK, else LOCAL_RANK, else -1, and this host's name), which
 * makes it a rank for pt_ranks_compute and the export's process table.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live/live_multi.h"
#include "proftop/capture.h"
#include "proftop/error.h"
#include "proftop/session.h"
#include "proftop/shm.h"
#include "model/util.h"

#define LIVE_OPEN_TRIES 50 /* full periods: 5 s for a segment that stays refused */

struct entry {
	int32_t pid;
	int64_t rank;
	struct pt_backend *sess, *proc;
	int state;      /* ENTRY_* */
	uint64_t gap_ns, due_ns; /* its own drain pacing (live_drain_gap) */
	unsigned tries; /* failed opens */
	uint64_t ino;   /* --all: the segment file's inode when last seen */
	size_t pub;     /* index in m->pub once opened */
};

/* ENTRY_WATCH: a session of the launched job (launch id) that has not
 * recorded anything yet; looked at again at every scan. */
enum { ENTRY_PENDING, ENTRY_OPEN, ENTRY_EXITED, ENTRY_GIVEN_UP, ENTRY_WATCH };

struct live_multi {
	const struct pt_live_opts *o;
	struct pt_trace *t;
	uint64_t poll_ns, busy_ns, next_scan_ns;
	uint64_t start_ns; /* CLOCK_MONOTONIC when the loop started */
	struct entry *v;
	size_t n, cap;
	struct pt_live_session *pub; /* opened entries, in the order found */
	size_t npub;
	size_t live;   /* entries ENTRY_OPEN */
	char host[256];
};

static struct entry *add_entry(struct live_multi *m, int32_t pid)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].pid == pid)
			return NULL;
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 16;
		m->v = pt_xrealloc(m->v, m->cap * sizeof *m->v);
	}
	struct entry *e = &m->v[m->n++];
	memset(e, 0, sizeof *e);
	e->pid = pid;
	e->rank = -1;
	e->state = ENTRY_PENDING;
	return e;
}

/*
 * The time to the next drain, of the one session (live.c) or of each of
 * several. A busy drain (a quarter of a ring came in) cuts it to busy_ns,
 * or to nothing when it already was that short (the producer fills a
 * quarter ring per millisecond: > 4 M events/s); a quiet
 * one doubles it back up to the full period. So the gap settles where a
 * drain finds between a quarter and half a ring, whatever the rate; a
 * rising rate loses at most the period it rose in; an idle session is back
 * to one wake-up per period after a few quiet drains.
 */
uint64_t live_drain_gap(uint64_t gap_ns, int busy, uint64_t busy_ns, uint64_t poll_ns)
{
	if (busy)
		return gap_ns > busy_ns ? busy_ns : 0;
	if (gap_ns < busy_ns)
		return busy_ns;
	return gap_ns < poll_ns / 2 ? gap_ns * 2 : poll_ns;
}

struct live_multi *live_multi_new(const struct pt_live_opts *o, struct pt_trace *t,
				  uint64_t poll_ns)
{
	struct live_multi *m = pt_xcalloc(1, sizeof *m);
	m->o = o;
	m->t = t;
	m->poll_ns = poll_ns;
	m->start_ns = pt_now_ns();
	m->busy_ns = poll_ns < PT_LIVE_BUSY_POLL_NS ? poll_ns : PT_LIVE_BUSY_POLL_NS;
	for (size_t i = 0; i < o->npids; i++)
		if (o->pids[i] > 0)
			add_entry(m, o->pids[i]);
	if (gethostname(m->host, sizeof m->host - 1) != 0)
		m->host[0] = 0;
	return m;
}

static int pid_gone(int32_t pid)
{
	return kill(pid, 0) != 0 && errno == ESRCH;
}

/* "<digits>.session" -> pid, else -1. */
static int32_t name_pid(const char *name)
{
	int64_t v = 0;
	const char *p = name;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v > INT32_MAX)
			return -1;
	}
	if (p == name || strcmp(p, ".session") != 0 || v <= 0)
		return -1;
	return (int32_t)v;
}

/* launch id mode: a candidate becomes pending once it has recorded
 * something; one of another job, or one that ended with nothing, is left. */
static void watch_entry(struct live_multi *m, struct entry *e)
{
	struct pt_session_peek pk;
	if (pt_session_peek(e->pid, &pk) != 0) {
		if (pid_gone(e->pid))
			e->state = ENTRY_GIVEN_UP;
		return; /* not readable yet (being created): next scan */
	}
	if (pk.launch_id != m->o->launch_id || (pk.exited && !pk.recorded))
		e->state = ENTRY_GIVEN_UP;
	else if (pk.recorded)
		e->state = ENTRY_PENDING;
	else
		e->state = ENTRY_WATCH;
}

/* --all / launch id: new names in the session directory become entries. */
static void scan_dir(struct live_multi *m)
{
	char dir[512], err[256];
	if (pt_shm_dir(dir, sizeof dir, 0, err, sizeof err) != 0)
		return; /* no directory yet: sessions may still come */
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		int32_t pid = name_pid(de->d_name);
		if (pid <= 0 || pid == (int32_t)getpid())
			continue;
		struct entry *e = add_entry(m, pid);
		if (!e) {
			/* a stale segment replaced by a new process that got its pid */
			for (size_t i = 0; i < m->n && !e; i++)
				if (m->v[i].pid == pid)
					e = &m->v[i];
			if (e->state != ENTRY_GIVEN_UP || e->ino == (uint64_t)de->d_ino)
				continue;
			e->state = ENTRY_PENDING;
			e->tries = 0;
		}
		e->ino = (uint64_t)de->d_ino; /* open_entry tells stale from new */
		if (m->o->launch_id)
			e->state = ENTRY_WATCH;
	}
	closedir(d);
	for (size_t i = 0; m->o->launch_id && i < m->n; i++)
		if (m->v[i].state == ENTRY_WATCH)
			watch_entry(m, &m->v[i]);
}

/* RANK, else LOCAL_RANK from the session header; -1 when neither or not a session. */
static int64_t rank_of(struct pt_backend *sess)
{
	struct pt_session *s = pt_backend_session_of(sess);
	const struct pt_shm_header *h = s ? pt_session_header(s) : NULL;
	if (!h)
		return -1;
	return h->rank >= 0 ? h->rank : h->local_rank >= 0 ? h->local_rank : -1;
}

static void open_entry(struct live_multi *m, struct entry *e, struct pt_live_result *res,
		       int from_scan)
{
	const struct pt_live_opts *o = m->o;
	struct pt_backend_args a = {0};
	char err[512];
	a.pid = e->pid;
	a.interval_ns = m->poll_ns; /* CPU samples at the drain rate, as one session */
	/* each process's correlation ids apart from the others' (the first 15
	 * sessions surely; after that a repeat only costs the live summary its
	 * increments, agg_live.c): a launch then finds its own kernels */
	a.corr_tag = (uint32_t)(m->npub % PT_SESSION_CORR_TAGS) + 1;
	a.copier = 1; /* its rings keep emptying while the loop is busy elsewhere */
	if (o->session_ops->open(&e->sess, &a, err, sizeof err) != 0) {
		e->sess = NULL;
		int gone = pid_gone(e->pid);
		if (gone || ++e->tries >= LIVE_OPEN_TRIES) {
			e->state = ENTRY_GIVEN_UP;
			if (!gone && !res->error[0]) {
				char esc[200];
				pt_escape_term(esc, sizeof esc, err, strlen(err), 0, 0);
				snprintf(res->error, sizeof res->error, "pid %d: %s", (int)e->pid, esc);
			}
		}
		return;
	}
	struct pt_session *s = pt_backend_session_of(e->sess);
	if (from_scan && !o->launch_id && s && pt_session_owner_exited(s) &&
	    pt_session_header(s)->clock_origin_ns < m->start_ns) {
		/* a finished process's segment, not a rank of this run (one
		 * that started and ended between two looks is: read it) */
		e->sess->ops->close(e->sess);
		e->sess = NULL;
		e->state = ENTRY_GIVEN_UP;
		return;
	}
	e->state = ENTRY_OPEN;
	e->gap_ns = m->busy_ns; /* a handful of quick drains first, as one session has */
	e->due_ns = 0;
	e->rank = rank_of(e->sess);
	pt_trace_set_proc(m->t, e->pid, e->rank, m->host[0] ? m->host : NULL);
	/* the launched child's CPU is sampled by the loop from its start */
	if (o->procstat_ops && !(o->child && e->pid == o->child) &&
	    o->procstat_ops->open(&e->proc, &a, err, sizeof err) != 0)
		e->proc = NULL;
	/* the public list grows only here; entries keep their index */
	m->pub = pt_xrealloc(m->pub, (m->npub + 1) * sizeof *m->pub);
	e->pub = m->npub;
	m->pub[m->npub++] = (struct pt_live_session){e->pid, e->rank, 0};
	m->live++;
}

static int i64_cmp(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	return a < b ? -1 : a > b;
}

/* Sessions in rank order (unknown ranks last), then by pid. */
static int session_cmp(const void *pa, const void *pb)
{
	const struct pt_live_session *a = pa, *b = pb;
	if ((a->rank < 0) != (b->rank < 0))
		return a->rank < 0 ? 1 : -1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/*
 * res->describe: one session as its backend says it; several as
 * "4 sessions: rank 0..3 (pids 11,12,13,14)", "3 sessions (1 exited):
 * ranks 0,2,5 (pids ...)" or "2 sessions (pids 11,12)" without ranks.
 */
static void describe(struct live_multi *m, struct pt_live_result *res)
{
	if (m->npub == 1) {
		struct entry *e = NULL;
		for (size_t i = 0; i < m->n && !e; i++)
			if (m->v[i].sess && m->v[i].pub == 0)
				e = &m->v[i];
		if (e && e->sess->ops->describe) {
			e->sess->ops->describe(e->sess, res->describe, sizeof res->describe);
			return;
		}
		if (!e && res->describe[0])
			return; /* said when it exited, as a single session says it */
	}
	struct pt_buf b = {0};
	size_t nexit = 0, nrank = 0;
	int64_t *r = pt_xmalloc((m->npub ? m->npub : 1) * sizeof *r);
	for (size_t i = 0; i < m->npub; i++) {
		nexit += m->pub[i].exited != 0;
		if (m->pub[i].rank >= 0)
			r[nrank++] = m->pub[i].rank;
	}
	pt_buf_printf(&b, "%zu session%s", m->npub, m->npub == 1 ? "" : "s");
	if (nexit)
		pt_buf_printf(&b, " (%zu exited)", nexit);
	if (nrank) {
		qsort(r, nrank, sizeof *r, i64_cmp);
		int contiguous = nrank > 1;
		for (size_t i = 1; i < nrank; i++)
			contiguous &= r[i] == r[i - 1] + 1;
		if (contiguous) {
			pt_buf_printf(&b, ": rank %lld..%lld", (long long)r[0], (long long)r[nrank - 1]);
		} else {
			pt_buf_printf(&b, ": rank%s ", nrank > 1 ? "s" : "");
			for (size_t i = 0; i < nrank && i < 16; i++)
				pt_buf_printf(&b, "%s%lld", i ? "," : "", (long long)r[i]);
			if (nrank > 16)
				pt_buf_printf(&b, ",...");
		}
		if (nrank < m->npub)
			pt_buf_printf(&b, " and %zu without a rank", m->npub - nrank);
	}
	struct pt_live_session *sorted = pt_xmalloc(m->npub * sizeof *sorted);
	memcpy(sorted, m->pub, m->npub * sizeof *sorted);
	qsort(sorted, m->npub, sizeof *sorted, session_cmp);
	pt_buf_printf(&b, " (pid%s ", m->npub == 1 ? "" : "s");
	for (size_t i = 0; i < m->npub && i < 16; i++)
		pt_buf_printf(&b, "%s%d", i ? "," : "", (int)sorted[i].pid);
	free(sorted);
	pt_buf_printf(&b, "%s)", m->npub > 16 ? ",..." : "");
	pt_buf_putc(&b, 0);
	snprintf(res->describe, sizeof res->describe, "%s", b.p);
	pt_buf_free(&b);
	free(r);
}

static void publish(struct live_multi *m, struct pt_live_result *res)
{
	res->sessions = m->pub;
	res->nsessions = m->npub;
	res->nexited = m->npub - m->live;
	res->session_found = m->npub > 0;
	res->session_exited = m->npub > 0 && m->live == 0;
	describe(m, res);
}

/* How long until the next look at the session directory: --all every
 * PT_LIVE_SCAN_NS; a launched job's at once at first, then at the drain
 * period (live.h). */
static uint64_t scan_period(const struct live_multi *m, uint64_t now_ns)
{
	if (!m->o->launch_id)
		return PT_LIVE_SCAN_NS;
	if (now_ns - m->start_ns < PT_LIVE_LAUNCH_FAST_NS)
		return PT_LIVE_LAUNCH_SCAN_FAST_NS;
	return m->poll_ns;
}

uint64_t live_multi_open_due(const struct live_multi *m)
{
	if (!m->o->all_sessions && !m->o->launch_id)
		return UINT64_MAX;
	return m->next_scan_ns;
}

void live_multi_open(struct live_multi *m, uint64_t now_ns, struct pt_live_result *res)
{
	size_t before = m->npub;
	if ((m->o->all_sessions || m->o->launch_id) && now_ns >= m->next_scan_ns) {
		scan_dir(m);
		m->next_scan_ns = now_ns + scan_period(m, now_ns);
	}
	for (size_t i = 0; i < m->n; i++) {
		struct entry *e = &m->v[i];
		if (e->state == ENTRY_PENDING)
			open_entry(m, e, res, i >= m->o->npids);
	}
	if (m->npub != before)
		publish(m, res);
}

uint64_t live_multi_drain(struct live_multi *m, uint64_t now_ns, int all_due, uint64_t busy_ns,
			  struct pt_live_result *res)
{
	uint64_t next = UINT64_MAX;
	for (size_t i = 0; i < m->n; i++) {
		struct entry *e = &m->v[i];
		if (e->state != ENTRY_OPEN)
			continue;
		if (!all_due && now_ns < e->due_ns) {
			next = e->due_ns < next ? e->due_ns : next;
			continue;
		}
		int rc = e->sess->ops->poll(e->sess, m->t, now_ns);
		e->gap_ns = live_drain_gap(e->gap_ns, rc == PT_BACKEND_BUSY, busy_ns, m->poll_ns);
		e->due_ns = now_ns + e->gap_ns;
		if (rc < 0 && rc != PT_ENOENT && !res->error[0]) {
			const char *why = e->sess->ops->last_error ? e->sess->ops->last_error(e->sess)
								    : NULL;
			char esc[200];
			why = why && *why ? why : pt_strerror(rc);
			pt_escape_term(esc, sizeof esc, why, strlen(why), 0, 0);
			snprintf(res->error, sizeof res->error, "pid %d: %s", (int)e->pid, esc);
		}
		if (rc == PT_ENOENT) {
			/* drained after its owner's exit: detach, keep its events */
			e->state = ENTRY_EXITED;
			m->pub[e->pub].exited = 1;
			m->live--;
			publish(m, res); /* while its backend can still describe it */
			e->sess->ops->close(e->sess);
			e->sess = NULL;
			continue;
		}
		next = e->due_ns < next ? e->due_ns : next;
	}
	/* each session's first poll sets the trace's rank from its header;
	 * with several processes the trace has no single rank */
	if (m->npub > 1)
		m->t->rank = -1;
	return next;
}

void live_multi_sample(struct live_multi *m, uint64_t now_ns)
{
	for (size_t i = 0; i < m->n; i++) {
		struct entry *e = &m->v[i];
		if (e->proc && e->proc->ops->poll(e->proc, m->t, now_ns) == PT_ENOENT) {
			e->proc->ops->close(e->proc);
			e->proc = NULL;
		}
	}
}

size_t live_multi_live(const struct live_multi *m)
{
	return m->live;
}

int32_t live_multi_first_pid(const struct live_multi *m)
{
	return m->npub ? m->pub[0].pid : 0;
}

static int any_pending(const struct live_multi *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].state == ENTRY_PENDING)
			return 1;
	return 0;
}

int live_multi_done(struct live_multi *m, uint64_t now_ns, struct pt_live_result *res)
{
	if (m->o->launch_id)
		return 0; /* the launched job ends with its child (live_multi_final) */
	if (m->live || any_pending(m))
		return 0;
	if (m->o->all_sessions) {
		if (!m->npub)
			return 0; /* --all waits for the first session */
		/* a last look: a rank starting as the others end keeps the loop going */
		m->next_scan_ns = 0;
		live_multi_open(m, now_ns, res);
		return !m->live && !any_pending(m);
	}
	return 1;
}

void live_multi_final(struct live_multi *m, uint64_t now_ns, struct pt_live_result *res)
{
	m->next_scan_ns = 0;
	live_multi_open(m, now_ns, res);
	live_multi_drain(m, now_ns, 1, m->busy_ns, res);
}

void live_multi_free(struct live_multi *m, struct pt_live_result *res)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		if (m->v[i].sess)
			m->v[i].sess->ops->close(m->v[i].sess); /* detaches */
		if (m->v[i].proc)
			m->v[i].proc->ops->close(m->v[i].proc);
	}
	res->sessions = NULL;
	free(m->pub);
	free(m->v);
	free(m);
}

size_t live_multi_open_pids(const struct live_multi *m, int32_t *out, size_t max)
{
	size_t k = 0;
	for (size_t i = 0; i < m->n && k < max; i++)
		if (m->v[i].state == ENTRY_OPEN && pt_backend_session_of(m->v[i].sess))
			out[k++] = m->v[i].pid;
	return k;
}

size_t live_multi_capture(struct live_multi *m, uint32_t steps, int64_t at_step,
			  struct pt_capture_group *g, int32_t *first_pid, char *why, size_t whylen)
{
	size_t ok = 0;
	why[0] = 0;
	*first_pid = 0;
	for (size_t i = 0; i < m->n; i++) {
		struct entry *e = &m->v[i];
		struct pt_session *s = e->state == ENTRY_OPEN ? pt_backend_session_of(e->sess) : NULL;
		if (!s)
			continue;
		char w[300];
		uint32_t seq;
		if (pt_session_capture_request(s, steps, 0, at_step > 0 ? (uint64_t)at_step : 0, &seq,
					       w, sizeof w) == 0) {
			ok++;
			if (g)
				pt_capture_group_add(m->t, g, e->pid, seq, NULL);
		} else {
			if (g)
				pt_capture_group_add(m->t, g, e->pid, 0, w);
			if (!why[0]) {
				snprintf(why, whylen, "%s", w);
				*first_pid = e->pid;
			}
		}
		if (!*first_pid)
			*first_pid = e->pid;
	}
	if (!ok && !why[0])
		snprintf(why, whylen, "the job's session is not open yet; press T once steps show");
	return ok;
}
