/*
 * cli_serve_http.c - the HTTP server of `proftop serve` (serve_http.h) on
 * libmicrohttpd: one internal polling thread, a listen socket proftop binds
 * itself (so a port in use or a foreign address gets a precise message
 * before anything starts), and refcounted immutable snapshots of the
 * /metrics body handed to the library without a copy. Only GET and HEAD
 * are answered.
 *
 * Slow clients (slowloris: a header line every few seconds keeps the
 * library's idle timeout from firing) must not lock scrapes out, so every
 * connection is tracked here: a request not received whole within
 * REQUEST_DEADLINE_S is cut, and a new connection that finds CONN_SOFT
 * connections open (or PER_IP_SOFT from its address) cuts the oldest one
 * still sending its request, so it never waits behind them. Cutting is a
 * shutdown() of the socket; the library then closes it on its own thread.
 *
 * The library is loaded (dlopen) when serve starts, not linked: with the
 * TLS libraries it pulls in, loading it cost every proftop command about
 * 5 ms of start-up, 8 % of a report on a 35 MB trace.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "output/prom.h"
#include "cli/serve_http.h"

#if MHD_VERSION < 0x00097002
typedef int MHD_RESULT;
#else
typedef enum MHD_Result MHD_RESULT;
#endif

/* The calls used, resolved at serve_http_start; the names below call
 * through them. */
static struct {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_create_response_from_buffer_with_free_callback_cls)
	    *create_response_from_buffer_with_free_callback_cls;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
} mhd;
#define MHD_start_daemon (*mhd.start_daemon)
#define MHD_stop_daemon (*mhd.stop_daemon)
#define MHD_get_connection_info (*mhd.get_connection_info)
#define MHD_create_response_from_buffer (*mhd.create_response_from_buffer)
#define MHD_create_response_from_buffer_with_free_callback_cls                                    \
	(*mhd.create_response_from_buffer_with_free_callback_cls)
#define MHD_add_response_header (*mhd.add_response_header)
#define MHD_queue_response (*mhd.queue_response)
#define MHD_destroy_response (*mhd.destroy_response)

static pthread_once_t mhd_once = PTHREAD_ONCE_INIT;
static int mhd_ok;
static char mhd_err[320]; /* why it could not be loaded */

static void mhd_load(void)
{
	static const char *const names[] = {"libmicrohttpd.so.12", "libmicrohttpd.so"};
	void *lib = NULL;
	char why[200] = "";
	for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++) {
		lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (!lib && !why[0]) /* the first name's reason is the telling one */
			snprintf(why, sizeof why, "%s", dlerror());
	}
	if (!lib) {
		snprintf(mhd_err, sizeof mhd_err,
			 "cannot load libmicrohttpd, which serves HTTP (%s); install it "
			 "(Debian: libmicrohttpd12)",
			 why);
		return;
	}
	struct {
		void **slot;
		const char *name;
	} fn[] = {
	    {(void **)&mhd.start_daemon, "MHD_start_daemon"},
	    {(void **)&mhd.stop_daemon, "MHD_stop_daemon"},
	    {(void **)&mhd.get_connection_info, "MHD_get_connection_info"},
	    {(void **)&mhd.create_response_from_buffer, "MHD_create_response_from_buffer"},
	    {(void **)&mhd.create_response_from_buffer_with_free_callback_cls,
	     "MHD_create_response_from_buffer_with_free_callback_cls"},
	    {(void **)&mhd.add_response_header, "MHD_add_response_header"},
	    {(void **)&mhd.queue_response, "MHD_queue_response"},
	    {(void **)&mhd.destroy_response, "MHD_destroy_response"},
	};
	for (size_t i = 0; i < sizeof fn / sizeof fn[0]; i++) {
		*fn[i].slot = dlsym(lib, fn[i].name);
		if (!*fn[i].slot) {
			snprintf(mhd_err, sizeof mhd_err,
				 "the libmicrohttpd found has no %s (version 0.9.73 or later "
				 "is needed)",
				 fn[i].name);
			dlclose(lib);
			return;
		}
	}
	mhd_ok = 1;
}

struct snapshot {
	atomic_uint refs;
	size_t len;
	char *data;
};

/* The library's hard limits, and ours below them (see the file comment). */
#define CONN_MAX	   64u
#define PER_IP_MAX	   16u
#define CONN_SOFT	   48u
#define PER_IP_SOFT	   8u
#define REQUEST_DEADLINE_S 5u

struct conn {
	int used, cut;
	int fd;
	int answering;		/* between the answer and the end of the response */
	uint64_t req_start_ns;	/* when the request being read began */
	unsigned char addr[16]; /* the peer's address (v4 in the first 4 bytes) */
};

struct serve_http {
	struct MHD_Daemon *d;
	pthread_mutex_t conn_lock; /* guards conns (library thread, publisher) */
	struct conn conns[CONN_MAX];
	atomic_ulong cuts;
	int fd;
	pthread_mutex_t lock; /* guards cur: taken for a pointer copy + increment */
	struct snapshot *cur;
	atomic_ulong scrapes;
	struct MHD_Response *index, *not_found, *not_allowed;
};

static void snap_unref(void *p)
{
	struct snapshot *s = p;
	if (s && atomic_fetch_sub(&s->refs, 1) == 1) {
		free(s->data);
		free(s);
	}
}

static struct snapshot *snap_get(struct serve_http *h)
{
	pthread_mutex_lock(&h->lock);
	struct snapshot *s = h->cur;
	atomic_fetch_add(&s->refs, 1);
	pthread_mutex_unlock(&h->lock);
	return s;
}

static void sweep(struct serve_http *h, const struct sockaddr *who);

void serve_http_publish(struct serve_http *h, struct pt_buf *b)
{
	struct snapshot *s = pt_xmalloc(sizeof *s);
	atomic_init(&s->refs, 1);
	s->len = b->len;
	s->data = b->p ? b->p : pt_xstrdup("");
	b->p = NULL;
	b->len = b->cap = 0;
	pthread_mutex_lock(&h->lock);
	struct snapshot *old = h->cur;
	h->cur = s;
	pthread_mutex_unlock(&h->lock);
	snap_unref(old);
	if (h->d)
		sweep(h, NULL); /* deadlines also pass while nobody connects */
}

unsigned long serve_http_scrapes(struct serve_http *h)
{
	return atomic_load(&h->scrapes);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void addr_key(const struct sockaddr *sa, unsigned char key[16])
{
	memset(key, 0, 16);
	if (sa && sa->sa_family == AF_INET)
		memcpy(key, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	else if (sa && sa->sa_family == AF_INET6)
		memcpy(key, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
}

/* Cuts c (lock held): the library sees the end of the stream and closes it. */
static void conn_cut(struct serve_http *h, struct conn *c)
{
	shutdown(c->fd, SHUT_RDWR);
	c->cut = 1;
	atomic_fetch_add(&h->cuts, 1);
}

/*
 * Cuts requests past their deadline; with who (a connection being
 * accepted), also the oldest unanswered one when the open connections, or
 * those from who's address, have reached their soft limit.
 */
static void sweep(struct serve_http *h, const struct sockaddr *who)
{
	unsigned char key[16];
	addr_key(who, key);
	uint64_t now = now_ns(), deadline = (uint64_t)REQUEST_DEADLINE_S * 1000000000ull;
	pthread_mutex_lock(&h->conn_lock);
	unsigned open = 0, same = 0;
	struct conn *oldest = NULL, *oldest_same = NULL;
	for (unsigned i = 0; i < CONN_MAX; i++) {
		struct conn *c = &h->conns[i];
		if (!c->used || c->cut)
			continue;
		if (!c->answering && now - c->req_start_ns > deadline) {
			conn_cut(h, c);
			continue;
		}
		open++;
		int mine = who && !memcmp(c->addr, key, sizeof key);
		same += mine;
		if (c->answering)
			continue;
		if (!oldest || c->req_start_ns < oldest->req_start_ns)
			oldest = c;
		if (mine && (!oldest_same || c->req_start_ns < oldest_same->req_start_ns))
			oldest_same = c;
	}
	if (who && same >= PER_IP_SOFT && oldest_same) {
		conn_cut(h, oldest_same);
		if (oldest == oldest_same)
			oldest = NULL;
		open--;
	}
	if (who && open >= CONN_SOFT && oldest)
		conn_cut(h, oldest);
	pthread_mutex_unlock(&h->conn_lock);
}

static MHD_RESULT on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
	(void)addrlen;
	sweep(cls, addr);
	return MHD_YES;
}

static void on_connection(void *cls, struct MHD_Connection *mc, void **ctx,
			  enum MHD_ConnectionNotificationCode what)
{
	struct serve_http *h = cls;
	pthread_mutex_lock(&h->conn_lock);
	if (what == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fd =
		    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *ad =
		    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		*ctx = NULL;
		for (unsigned i = 0; fd && i < CONN_MAX; i++) {
			struct conn *c = &h->conns[i];
			if (c->used)
				continue;
			memset(c, 0, sizeof *c);
			c->used = 1;
			c->fd = fd->connect_fd;
			c->req_start_ns = now_ns();
			addr_key(ad ? ad->client_addr : NULL, c->addr);
			*ctx = c;
			break;
		}
	} else if (what == MHD_CONNECTION_NOTIFY_CLOSED && *ctx) {
		/* before the library closes the socket: never cut a reused fd */
		((struct conn *)*ctx)->used = 0;
		*ctx = NULL;
	}
	pthread_mutex_unlock(&h->conn_lock);
}

/* The connection's slot, or NULL. */
static struct conn *conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *i =
	    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return i ? i->socket_context : NULL;
}

/* A response went out (or failed): the next request on it starts now. */
static void on_completed(void *cls, struct MHD_Connection *mc, void **con,
			 enum MHD_RequestTerminationCode toe)
{
	struct serve_http *h = cls;
	(void)con;
	(void)toe;
	pthread_mutex_lock(&h->conn_lock);
	struct conn *c = conn_of(mc);
	if (c) {
		c->answering = 0;
		c->req_start_ns = now_ns();
	}
	pthread_mutex_unlock(&h->conn_lock);
}

unsigned long serve_http_cuts(struct serve_http *h)
{
	return atomic_load(&h->cuts);
}

static const char index_html[] =
    "<!DOCTYPE html>\n<html><head><title>proftop exporter</title></head><body>\n"
    "<h1>proftop exporter</h1>\n"
    "<p>Training-step figures in Prometheus' text format: <a href=\"/metrics\">/metrics</a></p>\n"
    "</body></html>\n";

static MHD_RESULT answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			 const char *version, const char *upload, size_t *upload_len, void **con)
{
	struct serve_http *h = cls;
	(void)version;
	(void)upload;
	(void)con;
	pthread_mutex_lock(&h->conn_lock);
	struct conn *sc = conn_of(c);
	if (sc)
		sc->answering = 1; /* the request is in: no deadline while answering */
	pthread_mutex_unlock(&h->conn_lock);
	if (*upload_len) { /* a body we do not want: drop it */
		*upload_len = 0;
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return MHD_queue_response(c, MHD_HTTP_METHOD_NOT_ALLOWED, h->not_allowed);
	if (!strcmp(url, "/metrics")) {
		struct snapshot *s = snap_get(h);
		struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback_cls(
		    s->len, s->data, snap_unref, s);
		if (!r) {
			snap_unref(s);
			return MHD_NO;
		}
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, PT_PROM_CONTENT_TYPE);
		MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
		MHD_RESULT rc = MHD_queue_response(c, MHD_HTTP_OK, r);
		MHD_destroy_response(r); /* the queued answer keeps its own reference */
		atomic_fetch_add(&h->scrapes, 1);
		return rc;
	}
	if (!strcmp(url, "/"))
		return MHD_queue_response(c, MHD_HTTP_OK, h->index);
	return MHD_queue_response(c, MHD_HTTP_NOT_FOUND, h->not_found);
}

static struct MHD_Response *const_response(const char *body, const char *type)
{
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
	if (r)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	return r;
}

/* Splits "ADDR:PORT" / "[V6]:PORT" and resolves ADDR (numeric or a name). */
static int parse_listen(const char *s, struct sockaddr_storage *sa, socklen_t *sa_len, char *err,
			size_t err_len)
{
	char host[256];
	const char *port;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':' || (size_t)(close - s - 1) >= sizeof host) {
			snprintf(err, err_len, "expected [IPV6]:PORT");
			return -1;
		}
		memcpy(host, s + 1, (size_t)(close - s - 1));
		host[close - s - 1] = 0;
		port = close + 2;
	} else {
		const char *colon = strrchr(s, ':');
		if (!colon) {
			snprintf(err, err_len, "expected ADDR:PORT (e.g. %s)",
				 PT_SERVE_DEFAULT_LISTEN);
			return -1;
		}
		if (memchr(s, ':', (size_t)(colon - s))) {
			snprintf(err, err_len, "an IPv6 address goes in brackets: [ADDR]:PORT");
			return -1;
		}
		if ((size_t)(colon - s) >= sizeof host) {
			snprintf(err, err_len, "address too long");
			return -1;
		}
		memcpy(host, s, (size_t)(colon - s));
		host[colon - s] = 0;
		port = colon + 1;
	}
	if (!host[0]) {
		snprintf(err, err_len,
			 "give the address to listen on (0.0.0.0:PORT for every interface)");
		return -1;
	}
	char *end;
	errno = 0;
	unsigned long p = strtoul(port, &end, 10);
	if (!*port || *end || errno || p > 65535 || *port < '0' || *port > '9') {
		snprintf(err, err_len, "'%.20s' is not a port number (0 to 65535)", port);
		return -1;
	}
	struct addrinfo hints, *ai = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	char portbuf[8];
	snprintf(portbuf, sizeof portbuf, "%lu", p);
	int rc = getaddrinfo(host, portbuf, &hints, &ai);
	if (rc || !ai) {
		char esc[128];
		pt_escape_term(esc, sizeof esc, host, strlen(host), 60, 0);
		snprintf(err, err_len, "'%s' is not an address or a known host name (%s)", esc,
			 rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return -1;
	}
	memcpy(sa, ai->ai_addr, ai->ai_addrlen);
	*sa_len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

static void addr_text(const struct sockaddr_storage *sa, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;
	if (sa->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;
		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof a);
		port = ntohs(s6->sin6_port);
		snprintf(buf, len, "[%s]:%u", a, port);
	} else {
		const struct sockaddr_in *s4 = (const void *)sa;
		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof a);
		port = ntohs(s4->sin_port);
		snprintf(buf, len, "%s:%u", a, port);
	}
}

static int bind_listen(const char *listen_s, char *bound, size_t bound_len, char *err,
		       size_t err_len)
{
	struct sockaddr_storage sa;
	socklen_t sa_len;
	char want[96];
	if (parse_listen(listen_s, &sa, &sa_len, err, err_len))
		return -1;
	addr_text(&sa, want, sizeof want);
	int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, err_len, "socket: %s", strerror(errno));
		return -1;
	}
	int one = 1;
	/* a restart may bind while the old connections linger in TIME_WAIT;
	 * a second live listener is still refused (no SO_REUSEPORT) */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (sa.ss_family == AF_INET6) /* the given address only, not IPv4 too */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&sa, sa_len) < 0) {
		int e = errno;
		if (e == EADDRINUSE)
			snprintf(err, err_len,
				 "%s: address already in use (another exporter? pick another port "
				 "with --listen)",
				 want);
		else if (e == EADDRNOTAVAIL)
			snprintf(err, err_len, "%s: not an address of this machine", want);
		else if (e == EACCES)
			snprintf(err, err_len,
				 "%s: permission denied (ports below 1024 need "
				 "privileges)",
				 want);
		else
			snprintf(err, err_len, "%s: %s", want, strerror(e));
		close(fd);
		return -1;
	}
	if (listen(fd, 64) < 0) {
		snprintf(err, err_len, "%s: listen: %s", want, strerror(errno));
		close(fd);
		return -1;
	}
	struct sockaddr_storage got;
	socklen_t got_len = sizeof got;
	if (getsockname(fd, (struct sockaddr *)&got, &got_len) == 0)
		addr_text(&got, bound, bound_len);
	else
		snprintf(bound, bound_len, "%s", want);
	return fd;
}

int serve_http_start(const char *listen_s, struct serve_http **out, char *bound, size_t bound_len,
		     char *err, size_t err_len)
{
	*out = NULL;
	pthread_once(&mhd_once, mhd_load);
	if (!mhd_ok) {
		snprintf(err, err_len, "%s", mhd_err);
		return -1;
	}
	int fd = bind_listen(listen_s, bound, bound_len, err, err_len);
	if (fd < 0)
		return -1;
	struct serve_http *h = pt_xcalloc(1, sizeof *h);
	h->fd = fd;
	pthread_mutex_init(&h->lock, NULL);
	pthread_mutex_init(&h->conn_lock, NULL);
	struct pt_buf empty = {0};
	serve_http_publish(h, &empty);
	h->index = const_response(index_html, "text/html; charset=utf-8");
	h->not_found = const_response("404 not found: the figures are at /metrics\n",
				      "text/plain; charset=utf-8");
	h->not_allowed = const_response("405 only GET and HEAD\n", "text/plain; charset=utf-8");
	if (h->not_allowed)
		MHD_add_response_header(h->not_allowed, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");

	/* the library's thread must not take the Ctrl-C meant for the main loop */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	h->d = MHD_start_daemon(
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO, 0, on_accept, h, answer, h,
	    MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT, (unsigned int)CONN_MAX,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)PER_IP_MAX,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	    (size_t)32768, MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* the library owns the listen socket now (it closes it when stopped, or
	 * when it fails to start): never close it here too */
	h->fd = -1;
	if (!h->d || !h->index || !h->not_found || !h->not_allowed) {
		snprintf(err, err_len, "%s: the HTTP server (libmicrohttpd) did not start", bound);
		serve_http_stop(h);
		return -1;
	}
	*out = h;
	return 0;
}

void serve_http_stop(struct serve_http *h)
{
	if (!h)
		return;
	if (h->d)
		MHD_stop_daemon(h->d);
	if (h->fd >= 0)
		close(h->fd);
	if (h->index)
		MHD_destroy_response(h->index);
	if (h->not_found)
		MHD_destroy_response(h->not_found);
	if (h->not_allowed)
		MHD_destroy_response(h->not_allowed);
	snap_unref(h->cur);
	pthread_mutex_destroy(&h->lock);
	pthread_mutex_destroy(&h->conn_lock);
	free(h);
}
