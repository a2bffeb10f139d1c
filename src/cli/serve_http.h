/*
 * serve_http.h - the HTTP side of `proftop serve` (src/cli/cli_serve_http.c,
 * over libmicrohttpd): binds one address, answers GET/HEAD /metrics with
 * the latest published exposition and / with a short index, 404 elsewhere.
 *
 * Threading: libmicrohttpd answers on its own thread; the owner publishes
 * a finished body from any one thread. A body is an immutable, reference-
 * counted snapshot: a request takes a reference under a mutex (a pointer
 * copy and an increment) and hands the bytes to the library without
 * copying them, so an answer costs the same whatever the body's size, and
 * a publish never waits for a slow client. The last holder frees it.
 *
 * Built into the proftop binary only (it links libmicrohttpd), never into
 * libproftop_core.a: the file name starts with cli_ for the Makefile.
 */
#ifndef PT_SERVE_HTTP_H
#define PT_SERVE_HTTP_H

#include <stddef.h>

#include "model/util.h"

/* Default --listen. */
#define PT_SERVE_DEFAULT_LISTEN "127.0.0.1:9464"

struct serve_http;

/*
 * Binds listen ("ADDR:PORT", "[V6ADDR]:PORT", "localhost:PORT"; port 0
 * picks a free one) and starts answering; /metrics is empty until the first
 * publish. bound gets "ADDR:PORT" as bound (the real port when 0 was
 * given). Returns 0, or -1 with a one-line reason in err (port in use, not
 * an address of this machine, malformed).
 */
int serve_http_start(const char *listen, struct serve_http **out, char *bound, size_t bound_len,
		     char *err, size_t err_len);
/* Replaces the body of /metrics with b's bytes; takes b's memory (b is emptied). */
void serve_http_publish(struct serve_http *h, struct pt_buf *b);
/* Requests answered so far (/metrics only). */
unsigned long serve_http_scrapes(struct serve_http *h);
/* Connections cut so far: past the request deadline, or the oldest unanswered
 * one when a new connection found the soft limits reached. */
unsigned long serve_http_cuts(struct serve_http *h);
/* Stops answering (waits for the library's thread), frees everything. */
void serve_http_stop(struct serve_http *h);

#endif
