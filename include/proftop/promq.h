/*
 * promq.h - instant queries to a Prometheus server (backends/prom_query.c),
 * for `proftop cluster`.
 */
#ifndef PROFTOP_PROMQ_H
#define PROFTOP_PROMQ_H

#include <stddef.h>

#include "proftop/cluster.h"

struct pt_prom_url {
	char host[256];
	char port[8];
	char prefix[512]; /* a path before /api/v1 (a server behind a proxy), no trailing / */
};

/* "http://HOST[:PORT][/PREFIX]" (or without http://); 0, or -1 with err. */
int pt_prom_url_parse(const char *url, struct pt_prom_url *u, char *err, size_t errlen);
/*
 * Runs the instant query expr; *out (free it) gets its samples, *n their
 * count. 0, or -1 with err (connection, HTTP, the API's own error). Waits
 * at most timeout_ms for the whole answer.
 */
int pt_prom_query(const struct pt_prom_url *u, const char *expr, int timeout_ms,
		  struct pt_cluster_sample **out, size_t *n, char *err, size_t errlen);

#endif
