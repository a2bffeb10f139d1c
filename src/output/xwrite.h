/*
 * xwrite.h - the exporter's output buffer (xwrite.c): formatting writes
 * into a large buffer that goes out with write(2); from the first flush a
 * thread writes full buffers while formatting goes on in another.
 */
#ifndef PT_XWRITE_H
#define PT_XWRITE_H

#include <pthread.h>
#include <stddef.h>

#define OUTBUF_BYTES ((size_t)1 << 20)

/*
 * Output buffer on a file descriptor; the first write error sticks. Once the
 * first buffer fills, a writer thread takes full buffers while formatting
 * goes on in a second one, so the kernel's copying (page cache, fsync
 * writeback) overlaps the formatting instead of adding to it.
 */
struct xw {
	int fd;
	int err; /* errno of the first failure, 0 if none */
	size_t len;
	char *buf;
	/* the writer thread, started at the first full buffer */
	int threaded;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *pending; /* a full buffer handed to the writer */
	size_t pending_len;
	char *spare;   /* the buffer the writer gave back */
	int stop;
	int werr;      /* the writer's first errno */
};

/* Hands the buffer to the writer (or writes it) and starts a fresh one. */
void xw_flush(struct xw *w);
/* Writes what is left and stops the writer; afterwards w->err is final. */
void xw_finish(struct xw *w);
/* n bytes from p, split over buffers as needed. */
void xw_put(struct xw *w, const void *p, size_t n);
void xw_puts(struct xw *w, const char *s);

/* Room for n more bytes (n <= OUTBUF_BYTES); returns where to write. */
static inline char *xw_room(struct xw *w, size_t n)
{
	if (w->len + n > OUTBUF_BYTES)
		xw_flush(w);
	return w->buf + w->len;
}

#endif
