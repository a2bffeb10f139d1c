/*
 * prom_query.c - instant queries to a Prometheus server's HTTP API
 * (GET /api/v1/query), for `proftop cluster` (cluster.h): one HTTP/1.0
 * request per query (so the answer is never chunked), its JSON vector
 * read into samples. Plain http only; every wait is bounded by a timeout.
 */
#include "proftop/promq.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "model/util.h"

#define ANSWER_MAX ((size_t)256 << 20)

int pt_prom_url_parse(const char *url, struct pt_prom_url *u, char *err, size_t errlen)
{
	memset(u, 0, sizeof *u);
	const char *p = url;
	if (!strncmp(p, "http://", 7))
		p += 7;
	else if (strstr(p, "://")) {
		snprintf(err, errlen, "%s: only http:// URLs", url);
		return -1;
	}
	const char *slash = strchr(p, '/');
	size_t hl = slash ? (size_t)(slash - p) : strlen(p);
	if (!hl || hl >= sizeof u->host) {
		snprintf(err, errlen, "%s: no host", url);
		return -1;
	}
	char hp[sizeof u->host];
	memcpy(hp, p, hl);
	hp[hl] = 0;
	char *colon = hp[0] == '[' ? strstr(hp, "]:") : strrchr(hp, ':');
	snprintf(u->port, sizeof u->port, "9090");
	if (colon) {
		char *port = colon + (hp[0] == '[' ? 2 : 1);
		if (!*port || strspn(port, "0123456789") != strlen(port) || strlen(port) > 5) {
			snprintf(err, errlen, "%s: bad port", url);
			return -1;
		}
		snprintf(u->port, sizeof u->port, "%s", port);
		*(hp[0] == '[' ? colon + 1 : colon) = 0;
	}
	if (hp[0] == '[') { /* [::1] */
		size_t n = strlen(hp);
		if (n < 3 || hp[n - 1] != ']') {
			snprintf(err, errlen, "%s: bad address", url);
			return -1;
		}
		hp[n - 1] = 0;
		memmove(hp, hp + 1, n - 1);
	}
	snprintf(u->host, sizeof u->host, "%s", hp);
	snprintf(u->prefix, sizeof u->prefix, "%s", slash ? slash : "");
	size_t pl = strlen(u->prefix);
	while (pl && u->prefix[pl - 1] == '/')
		u->prefix[--pl] = 0;
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int connect_to(const struct pt_prom_url *u, int timeout_ms, char *err, size_t errlen)
{
	struct addrinfo hints = {0}, *res = NULL;
	hints.ai_socktype = SOCK_STREAM;
	int rc = getaddrinfo(u->host, u->port, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "%s:%s: %s", u->host, u->port, gai_strerror(rc));
		return -1;
	}
	int fd = -1, saved = 0;
	for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		if (connect(fd, a->ai_addr, a->ai_addrlen) && errno != EINPROGRESS) {
			saved = errno;
			close(fd);
			fd = -1;
			continue;
		}
		struct pollfd pf = {fd, POLLOUT, 0};
		int soerr = 0;
		socklen_t sl = sizeof soerr;
		if (poll(&pf, 1, timeout_ms) != 1 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) || soerr) {
			saved = soerr ? soerr : ETIMEDOUT;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		snprintf(err, errlen, "%s:%s: %s", u->host, u->port, strerror(saved ? saved : ECONNREFUSED));
	return fd;
}

/* a query's text as a URL parameter */
static void url_encode(struct pt_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    *p == '-' || *p == '_' || *p == '.' || *p == '~')
			pt_buf_putc(b, (char)*p);
		else
			pt_buf_printf(b, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
	}
}

/* The body of GET path, or NULL (err set). */
static char *http_get(const struct pt_prom_url *u, const char *path_query, int timeout_ms,
		      size_t *len, char *err, size_t errlen)
{
	int fd = connect_to(u, timeout_ms, err, errlen);
	if (fd < 0)
		return NULL;
	struct pt_buf req = {0}, ans = {0};
	pt_buf_printf(&req, "GET %s HTTP/1.0\r\nHost: %s:%s\r\nAccept: application/json\r\n"
			    "User-Agent: proftop\r\n\r\n",
		      path_query, u->host, u->port);
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	size_t off = 0;
	char *body = NULL;
	while (off < req.len) {
		ssize_t w = send(fd, req.p + off, req.len - off, MSG_NOSIGNAL);
		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR) {
			snprintf(err, errlen, "%s:%s: %s", u->host, u->port, strerror(errno));
			goto out;
		}
		struct pollfd pf = {fd, POLLOUT, 0};
		if (now_ms() >= deadline || poll(&pf, 1, (int)(deadline - now_ms())) <= 0) {
			snprintf(err, errlen, "%s:%s: timed out", u->host, u->port);
			goto out;
		}
	}
	for (;;) {
		pt_buf_reserve(&ans, 65536);
		ssize_t r = recv(fd, ans.p + ans.len, ans.cap - ans.len - 1, 0);
		if (r > 0) {
			ans.len += (size_t)r;
			if (ans.len > ANSWER_MAX) {
				snprintf(err, errlen, "%s:%s: answer over 256 MiB", u->host, u->port);
				goto out;
			}
			continue;
		}
		if (r == 0)
			break;
		if (errno != EAGAIN && errno != EINTR) {
			snprintf(err, errlen, "%s:%s: %s", u->host, u->port, strerror(errno));
			goto out;
		}
		struct pollfd pf = {fd, POLLIN, 0};
		if (now_ms() >= deadline || poll(&pf, 1, (int)(deadline - now_ms())) <= 0) {
			snprintf(err, errlen, "%s:%s: timed out", u->host, u->port);
			goto out;
		}
	}
	ans.p[ans.len] = 0;
	int status = 0;
	if (sscanf(ans.p, "HTTP/%*d.%*d %d", &status) != 1) {
		snprintf(err, errlen, "%s:%s: not an HTTP answer", u->host, u->port);
		goto out;
	}
	char *sep = strstr(ans.p, "\r\n\r\n");
	if (!sep) {
		snprintf(err, errlen, "%s:%s: no body", u->host, u->port);
		goto out;
	}
	sep += 4;
	if (status != 200 && status != 400 && status != 422) { /* 4xx carry the API's error */
		snprintf(err, errlen, "%s:%s: HTTP %d", u->host, u->port, status);
		goto out;
	}
	*len = ans.len - (size_t)(sep - ans.p);
	body = pt_xmalloc(*len + 1);
	memcpy(body, sep, *len);
	body[*len] = 0;
out:
	close(fd);
	pt_buf_free(&req);
	pt_buf_free(&ans);
	return body;
}

static void label(const cJSON *m, const char *name, char *dst, size_t len)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, name);
	snprintf(dst, len, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

static int64_t num_label(const cJSON *m, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, name);
	if (!cJSON_IsString(v) || !*v->valuestring ||
	    strspn(v->valuestring, "0123456789") != strlen(v->valuestring) || strlen(v->valuestring) > 18)
		return -1;
	return strtoll(v->valuestring, NULL, 10);
}

int pt_prom_query(const struct pt_prom_url *u, const char *expr, int timeout_ms,
		  struct pt_cluster_sample **out, size_t *n, char *err, size_t errlen)
{
	*out = NULL;
	*n = 0;
	struct pt_buf path = {0};
	pt_buf_printf(&path, "%s/api/v1/query?query=", u->prefix);
	url_encode(&path, expr);
	size_t len = 0;
	char *body = http_get(u, path.p, timeout_ms, &len, err, errlen);
	pt_buf_free(&path);
	if (!body)
		return -1;
	cJSON *j = cJSON_ParseWithLength(body, len);
	free(body);
	if (!j) {
		snprintf(err, errlen, "%s:%s: the answer is not JSON", u->host, u->port);
		return -1;
	}
	int rc = -1;
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "status");
	if (!cJSON_IsString(st) || strcmp(st->valuestring, "success")) {
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
		snprintf(err, errlen, "Prometheus: %s", cJSON_IsString(e) ? e->valuestring : "query failed");
		goto out;
	}
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(j, "data");
	const cJSON *res = cJSON_GetObjectItemCaseSensitive(data, "result"), *it;
	size_t cap = (size_t)cJSON_GetArraySize(res);
	*out = pt_xcalloc(cap ? cap : 1, sizeof **out);
	cJSON_ArrayForEach(it, res)
	{
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(it, "metric");
		const cJSON *val = cJSON_GetObjectItemCaseSensitive(it, "value");
		const cJSON *v1 = cJSON_GetArrayItem(val, 1);
		if (!cJSON_IsObject(m) || !cJSON_IsString(v1) || *n >= cap)
			continue;
		struct pt_cluster_sample *s = &(*out)[(*n)++];
		label(m, "host", s->host, sizeof s->host);
		label(m, "job", s->job, sizeof s->job);
		label(m, "phase", s->phase, sizeof s->phase);
		label(m, "op", s->op, sizeof s->op);
		label(m, "group", s->group, sizeof s->group);
		label(m, "name", s->name, sizeof s->name);
		label(m, "process", s->process, sizeof s->process);
		s->rank = num_label(m, "rank");
		s->pid = num_label(m, "pid");
		s->seq = num_label(m, "seq");
		s->depth = num_label(m, "depth");
		s->value = strtod(v1->valuestring, NULL);
	}
	rc = 0;
out:
	cJSON_Delete(j);
	return rc;
}
