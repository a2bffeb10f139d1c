/*
 * xwrite.c - the exporter's output buffer (xwrite.h). The first write error
 * sticks (w->err); the writer thread starts at the first flush (without
 * one, the buffers are written on the caller's thread).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/util.h"
#include "output/xwrite.h"

static int write_all(int fd, const char *p, size_t len)
{
	size_t off = 0;
	while (off < len) {
		ssize_t n = write(fd, p + off, len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (n == 0)
			return EIO;
		off += (size_t)n;
	}
	return 0;
}

static void *xw_writer(void *arg)
{
	struct xw *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->pending && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (!w->pending)
			break;
		char *p = w->pending;
		size_t len = w->pending_len;
		int failed = w->werr;
		pthread_mutex_unlock(&w->mu);
		int e = failed ? 0 : write_all(w->fd, p, len);
		pthread_mutex_lock(&w->mu);
		if (e && !w->werr)
			w->werr = e;
		w->spare = p;
		w->pending = NULL;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

void xw_flush(struct xw *w)
{
	if (!w->len || w->err)
		goto done;
	if (!w->threaded) {
		pthread_mutex_init(&w->mu, NULL);
		pthread_cond_init(&w->cv, NULL);
		w->spare = pt_xmalloc(OUTBUF_BYTES);
		if (pthread_create(&w->th, NULL, xw_writer, w) == 0) {
			w->threaded = 1;
		} else { /* no thread: write here */
			free(w->spare);
			w->spare = NULL;
			pthread_cond_destroy(&w->cv);
			pthread_mutex_destroy(&w->mu);
			w->threaded = -1;
		}
	}
	if (w->threaded < 0) {
		w->err = write_all(w->fd, w->buf, w->len);
		goto done;
	}
	pthread_mutex_lock(&w->mu);
	while (w->pending) /* the writer is still on the previous buffer */
		pthread_cond_wait(&w->cv, &w->mu);
	if (w->werr)
		w->err = w->werr;
	w->pending = w->buf;
	w->pending_len = w->len;
	w->buf = w->spare;
	w->spare = NULL;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
done:
	w->len = 0;
}

/* Writes what is left and stops the writer; afterwards w->err is final. */
void xw_finish(struct xw *w)
{
	xw_flush(w);
	if (w->threaded > 0) {
		pthread_mutex_lock(&w->mu);
		w->stop = 1;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->th, NULL);
		if (w->werr && !w->err)
			w->err = w->werr;
		free(w->spare);
		w->spare = NULL;
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		w->threaded = 0;
	}
}


void xw_put(struct xw *w, const void *p, size_t n)
{
	const char *s = p;
	while (n) {
		size_t chunk = n < OUTBUF_BYTES / 2 ? n : OUTBUF_BYTES / 2;
		memcpy(xw_room(w, chunk), s, chunk);
		w->len += chunk;
		s += chunk;
		n -= chunk;
	}
}

void xw_puts(struct xw *w, const char *s)
{
	xw_put(w, s, strlen(s));
}
