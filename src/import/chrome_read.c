/*
 * chrome_read.c - the Chrome-trace file source: input (plain or gzip,
 * detected by its magic bytes, concatenated members allowed) and the
 * pipeline. The splitter (chrome_doc.c: the top-level JSON) records where
 * each event object begins and ends; a chunk of whole objects is a batch.
 * Batches are parsed by worker threads (and by the caller's thread while the
 * batch it needs next is not ready) into raw records and handed to the sink
 * on the caller's thread strictly in file order, so the result does not
 * depend on the number of threads. Memory follows the batches in flight (a
 * few chunks) plus the events kept, never the size of the text.
 *
 * Threading: pt_chrome_read* may start threads of its own and joins them all
 * before returning; the trace is written only from the caller's thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "import/chrome_int.h"
#include "import/chrome_rdr.h"
#include "proftop/chrome.h"
#include "proftop/error.h"
#include "proftop/store.h"
#include "model/util.h"

/* Text per batch. Batches reach the sink in file order, so one that a
 * worker is slow to finish holds up those after it: more batches of half
 * the size keep both cores of a small machine busier than 2 MiB ones did
 * (1.67 -> 1.8 cores on a 242 MB trace) */
#define CHUNK_BYTES	((size_t)1 << 20)
#define THREADS_MIN_BYTES ((size_t)2 << 20) /* smaller inputs: one thread */
#define RAW_BYTES	((size_t)256 << 10)
#define FIRST_BYTES	((size_t)256 << 10) /* text of the first batch */
#define MAX_SLOTS	16

/* ---- input: plain or gzip, from a file or memory ---- */

struct src {
	int fd;			 /* -1 for memory */
	const unsigned char *in; /* raw bytes not yet consumed */
	size_t in_len;
	unsigned char *own; /* raw buffer for files */
	int raw_eof;
	int gz, z_init, member_done;
	z_stream z;
	int err; /* deferred error (PT_E*) */
	char msg[160];
	int bounded;   /* read no more than left bytes (the size at open) */
	uint64_t left;
	const volatile int *cancel; /* pt_read_opts' */
};

/* read(2) retried on EINTR; at the end sets raw_eof, on error s->err. */
static ssize_t read_some(struct src *s, void *buf, size_t cap)
{
	if (s->cancel && __atomic_load_n(s->cancel, __ATOMIC_RELAXED)) {
		s->err = PT_EIO;
		snprintf(s->msg, sizeof s->msg, "reading was cancelled");
		return -1;
	}
	if (s->bounded && cap > s->left)
		cap = (size_t)s->left;
	if (s->bounded && !cap) {
		s->raw_eof = 1;
		return 0;
	}
	for (;;) {
		ssize_t n = read(s->fd, buf, cap);
		if (n > 0 && s->bounded)
			s->left -= (uint64_t)n;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			s->err = PT_EIO;
			snprintf(s->msg, sizeof s->msg, "%s", strerror(errno));
			return -1;
		}
		if (n == 0)
			s->raw_eof = 1;
		return n;
	}
}

static int raw_fill(struct src *s)
{
	if (s->raw_eof || s->fd < 0) {
		s->raw_eof = 1;
		return 0;
	}
	ssize_t n = read_some(s, s->own, RAW_BYTES);
	if (n < 0)
		return -1;
	s->in = s->own;
	s->in_len = (size_t)n;
	return n > 0;
}

/* bounded: read at most left bytes of fd (the file's size when opened). */
static int src_open(struct src *s, int fd, const void *mem, size_t len, int bounded,
		    uint64_t left)
{
	memset(s, 0, sizeof *s);
	s->fd = fd;
	s->bounded = bounded;
	s->left = left;
	if (fd >= 0) {
		s->own = pt_xmalloc(RAW_BYTES);
		/* two bytes tell gzip from text */
		while (s->in_len < 2 && !s->raw_eof) {
			size_t have = s->in_len;
			ssize_t n = read_some(s, s->own + have, RAW_BYTES - have);
			if (n < 0)
				return s->err;
			s->in = s->own;
			s->in_len = have + (size_t)n;
		}
	} else {
		s->in = mem;
		s->in_len = len;
		s->raw_eof = 1;
	}
	if (s->in_len >= 2 && s->in[0] == 0x1f && s->in[1] == 0x8b) {
		s->gz = 1;
		if (inflateInit2(&s->z, 16 + MAX_WBITS) != Z_OK)
			abort();
		s->z_init = 1;
		s->z.next_in = (unsigned char *)s->in;
		s->z.avail_in = (uInt)(s->in_len > UINT32_MAX ? UINT32_MAX : s->in_len);
	}
	return 0;
}

static void src_close(struct src *s)
{
	if (s->z_init)
		inflateEnd(&s->z);
	free(s->own);
}

/* Up to cap bytes of text: > 0 bytes, 0 at the end, < 0 error (s->err). */
static long src_read(struct src *s, char *dst, size_t cap)
{
	if (s->err)
		return -1;
	if (!s->gz) {
		if (s->in_len == 0 && s->fd >= 0 && !s->raw_eof) {
			/* plain file: straight into the caller's buffer, no
			 * second copy through the raw one */
			return (long)read_some(s, dst, cap);
		}
		while (s->in_len == 0) {
			int r = raw_fill(s);
			if (r <= 0)
				return r;
		}
		size_t n = s->in_len < cap ? s->in_len : cap;
		memcpy(dst, s->in, n);
		s->in += n;
		s->in_len -= n;
		return (long)n;
	}
	z_stream *z = &s->z;
	z->next_out = (unsigned char *)dst;
	z->avail_out = (uInt)(cap > UINT32_MAX ? UINT32_MAX : cap);
	while (z->avail_out > 0) {
		if (z->avail_in == 0 && s->fd < 0 && s->in_len > 0) {
			/* memory input larger than 4 GiB: feed the rest */
			size_t used = (size_t)(z->next_in - s->in);
			s->in += used;
			s->in_len -= used;
			z->next_in = (unsigned char *)s->in;
			z->avail_in = (uInt)(s->in_len > UINT32_MAX ? UINT32_MAX : s->in_len);
		}
		if (z->avail_in == 0 && !s->raw_eof) {
			if (raw_fill(s) < 0)
				break;
			z->next_in = (unsigned char *)s->in;
			z->avail_in = (uInt)s->in_len;
			continue;
		}
		if (s->member_done) {
			if (z->avail_in == 0)
				break;	 /* end of the last member */
			inflateReset(z); /* concatenated gzip members */
			s->member_done = 0;
		}
		int ret = inflate(z, Z_NO_FLUSH);
		if (ret == Z_STREAM_END) {
			s->member_done = 1;
		} else if (ret == Z_BUF_ERROR) {
			if (z->avail_in == 0 && s->raw_eof) {
				s->err = PT_ETRUNC;
				snprintf(s->msg, sizeof s->msg, "unexpected end of gzip data");
				break;
			}
		} else if (ret != Z_OK) {
			s->err = PT_EFORMAT;
			snprintf(s->msg, sizeof s->msg, "corrupt gzip data (%s)",
				 z->msg ? z->msg : "inflate failed");
			break;
		}
	}
	size_t got = cap - z->avail_out;
	if (got)
		return (long)got;
	return s->err ? -1 : 0;
}

/* ---- the pipeline ---- */

enum { SLOT_FREE, SLOT_READING, SLOT_FILLED, SLOT_PARSING, SLOT_PARSED };

struct rdr;

struct pipe {
	struct cr_batch slots[MAX_SLOTS];
	int nslots;
	int threaded;
	/* One condition per role, each signalled only when what that role
	 * waits for may have happened: a single one broadcast to every thread
	 * woke three for each change, and they queued on mu again (most of
	 * the read's context switches) */
	pthread_mutex_t mu;
	pthread_cond_t free_cv;	 /* the splitter: its next slot is free */
	pthread_cond_t work_cv;	 /* workers: a slot was filled */
	pthread_cond_t main_cv;	 /* the caller: its next slot parsed, or one to parse */
	int idle_workers;	 /* waiting on work_cv */
	uint64_t fill_seq, parse_seq;
	int stop;
	struct cr_sink *sink; /* single-threaded mode feeds it from emit() */
	struct pt_store *store; /* faulted in ahead by the parsing threads */
	int sync_perr;	      /* single-threaded: a parse error was met */
	uint64_t perr_off;
	const char *perr_msg;
};


void cr_rd_fail(struct rdr *rd, int code, size_t at, const char *msg)
{
	if (rd->err)
		return;
	rd->err = code;
	rd->err_off = rd->cur->base_off + at;
	snprintf(rd->msg, sizeof rd->msg, "%s", msg);
}

static void batch_reserve(struct cr_batch *b, size_t cap)
{
	if (b->cap >= cap)
		return;
	b->buf = pt_xrealloc(b->buf, cap);
	b->cap = cap;
}

void cr_parse_batch(struct cr_batch *b)
{
	if (b->ev_cap < b->nspans) {
		b->ev_cap = b->nspans;
		free(b->ev);
		b->ev = pt_xmalloc((size_t)b->ev_cap * sizeof *b->ev);
	}
	pt_json_side_reset(&b->side);
	b->nev = 0;
	b->perr = 0;
	for (uint32_t i = 0; i < b->nspans; i++) {
		struct pt_json_err err = {NULL, NULL};
		const char *p = b->buf + b->spans[i].begin, *e = b->buf + b->spans[i].end;
		if (pt_json_parse_event(b->buf, p, e, &b->ev[b->nev], &b->side, &err) < 0) {
			b->perr = 1;
			b->perr_off = b->base_off + (uint64_t)((err.at ? err.at : p) - b->buf);
			b->perr_msg = err.msg ? err.msg : "invalid event object";
			return;
		}
		b->nev++;
	}
}

/* Hands the current batch on and starts the next with the unconsumed tail. */
int cr_emit(struct rdr *rd, int final)
{
	struct pipe *pp = rd->pp;
	struct cr_batch *b = rd->cur, *next;
	b->final = final;
	b->native = rd->native;
	if (!pp->threaded) {
		if (!pp->sync_perr) {
			cr_parse_batch(b);
			cr_sink_batch(pp->sink, b);
			if (b->perr) {
				pp->sync_perr = 1;
				pp->perr_off = b->perr_off;
				pp->perr_msg = b->perr_msg;
				rd->err = 1;
			}
		}
		next = b == &pp->slots[0] ? &pp->slots[1] : &pp->slots[0];
	} else {
		pthread_mutex_lock(&pp->mu);
		b->state = SLOT_FILLED;
		pp->fill_seq++;
		/* an idle worker takes it; else the caller may, when it waits */
		pthread_cond_signal(pp->idle_workers ? &pp->work_cv : &pp->main_cv);
		if (final) {
			pthread_mutex_unlock(&pp->mu);
			return 0;
		}
		next = &pp->slots[pp->fill_seq % (uint64_t)pp->nslots];
		while (next->state != SLOT_FREE && !pp->stop)
			pthread_cond_wait(&pp->free_cv, &pp->mu);
		if (pp->stop) {
			pthread_mutex_unlock(&pp->mu);
			if (!rd->err)
				rd->err = 1;
			return -1;
		}
		next->state = SLOT_READING;
		pthread_mutex_unlock(&pp->mu);
	}
	if (final)
		return 0;
	size_t tail = rd->end - rd->keep;
	/* handed on early (MAX_BATCH_EVENTS), the text not yet split fits as
	 * it is: growing for it would compound from batch to batch */
	size_t want = rd->pos < rd->end ? tail : tail * 2;
	batch_reserve(next, want > CHUNK_BYTES ? want : CHUNK_BYTES);
	memcpy(next->buf, b->buf + rd->keep, tail);
	next->base_off = b->base_off + rd->keep;
	next->nspans = 0;
	rd->pos -= rd->keep;
	rd->obj_start -= rd->obj_start >= rd->keep ? rd->keep : rd->obj_start;
	rd->end = tail;
	rd->keep = 0;
	rd->cur = next;
	return rd->err ? -1 : 0;
}

/*
 * Makes more text available after rd->end, keeping [rd->keep, end). Returns
 * 1 when bytes were added, 0 at the end of input, -1 on error.
 */
int cr_refill(struct rdr *rd)
{
	if (rd->err)
		return -1;
	struct cr_batch *b = rd->cur;
	if (b->nspans) {
		if (cr_emit(rd, 0) < 0)
			return -1;
		b = rd->cur;
	} else if (rd->keep > 0) {
		memmove(b->buf, b->buf + rd->keep, rd->end - rd->keep);
		b->base_off += rd->keep;
		rd->pos -= rd->keep;
		rd->obj_start -= rd->obj_start >= rd->keep ? rd->keep : rd->obj_start;
		rd->end -= rd->keep;
		rd->keep = 0;
	}
	if (rd->eof)
		return 0;
	if (rd->end == b->cap) {
		if (b->cap >= MAX_VALUE_BYTES) {
			cr_rd_fail(rd, PT_ENOMEM, rd->keep, "one JSON value is larger than 256 MiB");
			return -1;
		}
		batch_reserve(b, b->cap * 2);
	}
	/* With workers, the first batches are smaller (FIRST_BYTES, then
	 * doubling): they wait for nothing but the first batch */
	size_t lim = b->cap;
	if (rd->pp->threaded && rd->fills < 4) {
		if ((FIRST_BYTES << rd->fills) < lim && (FIRST_BYTES << rd->fills) > rd->end)
			lim = FIRST_BYTES << rd->fills;
		rd->fills++;
	}
	size_t before = rd->end;
	while (rd->end < lim) {
		long n = src_read(rd->src, b->buf + rd->end, lim - rd->end);
		if (n < 0) {
			cr_rd_fail(rd, rd->src->err, rd->end, rd->src->msg);
			return -1;
		}
		if (n == 0) {
			rd->eof = 1;
			break;
		}
		rd->end += (size_t)n;
	}
	return rd->end > before;
}


static void *reader_main(void *arg)
{
	cr_run_top(arg);
	return NULL;
}

static void *worker_main(void *arg)
{
	struct pipe *pp = arg;
	pthread_mutex_lock(&pp->mu);
	for (;;) {
		struct cr_batch *b = &pp->slots[pp->parse_seq % (uint64_t)pp->nslots];
		while (!pp->stop && b->state != SLOT_FILLED) {
			pp->idle_workers++;
			pthread_cond_wait(&pp->work_cv, &pp->mu);
			pp->idle_workers--;
			b = &pp->slots[pp->parse_seq % (uint64_t)pp->nslots];
		}
		if (pp->stop)
			break;
		b->state = SLOT_PARSING;
		pp->parse_seq++;
		pthread_mutex_unlock(&pp->mu);
		cr_parse_batch(b);
		/* the store's next pages, faulted in here rather than on the
		 * thread that appends (the busiest) or the splitter (which
		 * every batch waits for: where first touches are slow, as in
		 * a VM whose host took the memory back, it held up the read) */
		pt_store_prefault(pp->store, (size_t)b->nev * 2);
		pthread_mutex_lock(&pp->mu);
		b->state = SLOT_PARSED;
		pthread_cond_signal(&pp->main_cv);
	}
	pthread_mutex_unlock(&pp->mu);
	return NULL;
}

static int auto_threads(const struct pt_read_opts *o, size_t size_hint, int gz)
{
	int n = o ? o->threads : 0;
	if (n <= 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		n = c < 1 ? 1 : c > 4 ? 4 : (int)c;
		/* small inputs are not worth the threads */
		if (size_hint && size_hint < (gz ? THREADS_MIN_BYTES / 16 : THREADS_MIN_BYTES))
			n = 1;
	}
	return n > 16 ? 16 : n;
}

/* The collectives of our export, as rows of t (their events came as events). */
static void add_colls(struct pt_trace *t, const struct rdr *rd)
{
	if (rd->bad_colls)
		pt_trace_warn(t, PT_WARN_BAD_EVENT, rd->bad_colls);
	for (size_t i = 0; i < rd->ncolls; i++) {
		const struct rd_coll *c = &rd->colls[i];
		struct pt_track_key key = {c->pid, c->tid, 0, 0};
		if (c->pid_s[0])
			key.pid_str = pt_trace_intern(t, c->pid_s, strlen(c->pid_s));
		if (c->tid_s[0])
			key.tid_str = pt_trace_intern(t, c->tid_s, strlen(c->tid_s));
		struct pt_coll row = {
			.start_ns = c->start_ns,
			.end_ns = c->end_ns,
			.seq = c->seq,
			.bytes = c->bytes,
			.op = pt_trace_intern(t, c->op, strlen(c->op)),
			.group = pt_trace_intern(t, c->group, strlen(c->group)),
			.track = pt_trace_track(t, &key),
			.group_size = c->group_size,
			.flags = c->flags,
			.epoch = c->epoch,
		};
		pt_trace_coll_row(t, &row);
	}
}

static int read_src(struct pt_trace *t, struct src *s, const char *name, int threads, char *err,
		    size_t errlen)
{
	struct pipe pp;
	memset(&pp, 0, sizeof pp);
	struct rdr rd;
	memset(&rd, 0, sizeof rd);
	rd.src = s;
	rd.pp = &pp;
	rd.rank = -1;
	rd.world = -1;
	struct cr_sink *sink = cr_sink_new(t);
	pp.sink = sink;
	pp.store = t->store;
	pp.threaded = threads > 1;
	/* two per thread and two more: each slot holds its text and about
	 * 200 bytes per event parsed from it, and ten (eight) slots for two
	 * threads raised the peak RSS of a 4-rank trace (1 M events) from 86
	 * to 102 (94) MB, past its budget, for 3-5 % of the import's time */
	pp.nslots = pp.threaded ? (2 * (threads + 1) > MAX_SLOTS ? MAX_SLOTS : 2 * (threads + 1)) : 2;
	/* the other slots' buffers are taken when the splitter first fills
	 * them (cr_emit): taken here, their first touches were a serial
	 * start before any thread could work (30-40 ms in a VM's profile) */
	batch_reserve(&pp.slots[0], pp.threaded ? FIRST_BYTES : CHUNK_BYTES);
	rd.cur = &pp.slots[0];
	rd.cur->state = SLOT_READING;
	int ret = 0;
	uint64_t perr_off = 0;
	const char *perr_msg = NULL;
	if (!pp.threaded) {
		cr_run_top(&rd);
		if (pp.sync_perr) {
			perr_off = pp.perr_off;
			perr_msg = pp.perr_msg;
		}
	} else {
		pthread_t rth, wth[16];
		int nw = threads;
		pthread_mutex_init(&pp.mu, NULL);
		pthread_cond_init(&pp.free_cv, NULL);
		pthread_cond_init(&pp.work_cv, NULL);
		pthread_cond_init(&pp.main_cv, NULL);
		pthread_create(&rth, NULL, reader_main, &rd);
		for (int i = 0; i < nw; i++)
			pthread_create(&wth[i], NULL, worker_main, &pp);
		uint64_t cons = 0;
		for (;;) {
			struct cr_batch *b = &pp.slots[cons % (uint64_t)pp.nslots];
			pthread_mutex_lock(&pp.mu);
			while (b->state != SLOT_PARSED) {
				/* rather than wait for it, parse the next batch no
				 * worker has taken yet: this thread would otherwise
				 * idle for half the read */
				struct cr_batch *nb = &pp.slots[pp.parse_seq % (uint64_t)pp.nslots];
				if (nb->state == SLOT_FILLED) {
					nb->state = SLOT_PARSING;
					pp.parse_seq++;
					pthread_mutex_unlock(&pp.mu);
					cr_parse_batch(nb);
					pthread_mutex_lock(&pp.mu);
					nb->state = SLOT_PARSED;
					continue;
				}
				pthread_cond_wait(&pp.main_cv, &pp.mu);
			}
			pthread_mutex_unlock(&pp.mu);
			cr_sink_batch(sink, b);
			int final = b->final;
			if (b->perr) {
				perr_off = b->perr_off;
				perr_msg = b->perr_msg;
			}
			pthread_mutex_lock(&pp.mu);
			b->state = SLOT_FREE;
			cons++;
			if (final || perr_msg) {
				pp.stop = 1;
				pthread_cond_broadcast(&pp.work_cv);
			}
			pthread_cond_signal(&pp.free_cv);
			pthread_mutex_unlock(&pp.mu);
			if (final || perr_msg)
				break;
		}
		pthread_join(rth, NULL);
		for (int i = 0; i < nw; i++)
			pthread_join(wth[i], NULL);
		pthread_mutex_destroy(&pp.mu);
		pthread_cond_destroy(&pp.free_cv);
		pthread_cond_destroy(&pp.work_cv);
		pthread_cond_destroy(&pp.main_cv);
	}
	if (perr_msg) {
		ret = PT_EFORMAT;
		snprintf(err, errlen, "%s: byte %" PRIu64 ": %s", name, perr_off, perr_msg);
	} else if (rd.err) {
		ret = rd.err;
		snprintf(err, errlen, "%s: byte %" PRIu64 ": %s", name, rd.err_off, rd.msg);
	} else {
		cr_sink_finish(sink);
		if (rd.bad_elems)
			pt_trace_warn(t, PT_WARN_BAD_EVENT, rd.bad_elems);
		if (rd.dup_keys)
			pt_trace_warn(t, PT_WARN_DUP_KEY, rd.dup_keys);
		if (rd.display_unit_set)
			t->display_unit = rd.display_ns ? 1 : 0;
		if (rd.rank >= 0)
			t->rank = rd.rank;
		if (rd.world >= 0)
			t->world_size = rd.world;
		for (int k = 0; k < PT_WARN__COUNT; k++)
			pt_trace_warn(t, (enum pt_warn)k, rd.imp_warn[k]);
		if (rd.ns_per_event > 0)
			t->probe_ns_per_event = rd.ns_per_event;
		if (rd.helper_ns > 0)
			t->helper_ns_per_call = rd.helper_ns;
		t->helper_calls += rd.helper_calls;
		if (rd.device[0] && !t->device_name)
			t->device_name = pt_trace_intern(t, rd.device, strlen(rd.device));
		for (size_t i = 0; i < rd.nprocs; i++)
			pt_trace_set_proc(t, rd.procs[i].pid, rd.procs[i].rank, rd.procs[i].host);
		add_colls(t, &rd);
	}
	free(rd.procs);
	free(rd.colls);
	cr_sink_free(sink);
	for (int i = 0; i < pp.nslots; i++) {
		free(pp.slots[i].buf);
		free(pp.slots[i].spans);
		free(pp.slots[i].ev);
		pt_json_side_free(&pp.slots[i].side);
	}
	return ret;
}

int pt_chrome_read_mem(struct pt_trace *t, const void *buf, size_t len, const char *name,
		       const struct pt_read_opts *o, char *err, size_t errlen)
{
	struct src s;
	char dummy[8];
	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof dummy;
	}
	err[0] = 0;
	if (!name)
		name = "(memory)";
	src_open(&s, -1, buf, len, 0, 0);
	int ret = read_src(t, &s, name, auto_threads(o, len ? len : 1, s.gz), err, errlen);
	src_close(&s);
	return ret;
}

int pt_chrome_read(struct pt_trace *t, const char *path, const struct pt_read_opts *o, char *err,
		   size_t errlen)
{
	char dummy[8];
	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof dummy;
	}
	err[0] = 0;
	/* O_NONBLOCK: a FIFO nobody writes must not hang the open; back to
	 * blocking reads at once (a FIFO without a writer then reads as empty) */
	int job = o && o->job_file, regular = job || (o && o->regular_only);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (job ? O_NOFOLLOW : 0));
	if (fd < 0) {
		int e = errno;
		if (job && e == ELOOP)
			snprintf(err, errlen, "%s: is a symlink; refusing it", path);
		else
			snprintf(err, errlen, "%s: %s", path, strerror(e));
		return e == ENOENT ? PT_ENOENT : e == EACCES || (job && e == ELOOP) ? PT_EPERM : PT_EIO;
	}
	struct stat st;
	int have_st = fstat(fd, &st) == 0;
	if (have_st && S_ISDIR(st.st_mode)) {
		close(fd);
		snprintf(err, errlen, "%s: is a directory", path);
		return PT_EIO;
	}
	if (regular && (!have_st || !S_ISREG(st.st_mode))) {
		close(fd); /* a FIFO or a device another process made: never waited on */
		snprintf(err, errlen, "%s: not a regular file; refusing it", path);
		return PT_EPERM;
	}
	if (job && st.st_uid != geteuid()) {
		close(fd);
		snprintf(err, errlen, "%s: owned by uid %u, not by you; refusing it", path,
			 (unsigned)st.st_uid);
		return PT_EPERM;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	if (!t->source)
		pt_trace_set_source(t, path);
	struct src s;
	/* bounded before the first read (src_open reads the gzip magic) */
	int ret = src_open(&s, fd, NULL, 0, regular, regular ? (uint64_t)st.st_size : 0);
	s.cancel = o ? o->cancel : NULL;
	if (ret == 0) {
		size_t hint = have_st && S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size : 0;
		ret = read_src(t, &s, path, auto_threads(o, hint, s.gz), err, errlen);
	} else {
		snprintf(err, errlen, "%s: %s", path, s.msg);
	}
	src_close(&s);
	close(fd);
	return ret;
}
