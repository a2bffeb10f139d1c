/*
 * chrome_util.h - what the Chrome-trace reader's tests share
 * (test_chrome_*.c): loading a trace from memory, a track's events, counts
 * by kind, and comparing two whole stores.
 */
#ifndef CHROME_UTIL_H
#define CHROME_UTIL_H

#include "testutil.h"

#include <dirent.h>
#include <sys/stat.h>
#include <zlib.h>

#include "proftop/chrome.h"
#include "proftop/error.h"
#include "model/util.h"

/* dir/name, or dir/sub/name, into a caller's buffer. */
static inline const char *jpath(char *out, const char *a, const char *b, const char *c)
{
	snprintf(out, 1024, c ? "%s/%s/%s" : "%s/%s", a, b, c);
	return out;
}

static inline struct pt_trace *load_mem(const char *json, int threads, int expect_rc)
{
	struct pt_trace *t = pt_trace_new(0);
	struct pt_read_opts o = {.threads = threads};
	char err[512] = "";
	int rc = pt_chrome_read_mem(t, json, strlen(json), "inline", &o, err, sizeof err);
	if (rc != expect_rc)
		fprintf(stderr, "rc %d: %s\n", rc, err);
	assert_int_equal(rc, expect_rc);
	return t;
}

/* The events of one track in store order. */
static inline size_t track_events(struct pt_trace *t, uint32_t track, struct pt_event *out, size_t max)
{
	struct pt_store_iter it;
	pt_store_iter_init(&it, t->store, track, 0, UINT64_MAX);
	size_t n = 0;
	struct pt_event *e;
	while ((e = pt_store_iter_next(&it)))
		if (n < max)
			out[n++] = *e;
	pt_store_iter_done(&it);
	return n;
}

static inline uint32_t find_track(struct pt_trace *t, int64_t pid, int64_t tid)
{
	for (uint32_t i = 0; i < t->ntracks; i++)
		if (t->tracks[i].key.pid == pid && t->tracks[i].key.tid == tid &&
		    !t->tracks[i].key.pid_str && !t->tracks[i].key.tid_str)
			return i;
	fail_msg("no track %lld/%lld", (long long)pid, (long long)tid);
	return 0;
}

static inline const char *ename(struct pt_trace *t, const struct pt_event *e)
{
	return pt_trace_str(t, e->name_id);
}

/* Count of kept events of a kind (and with a name prefix when given). */
struct kcount {
	int kind;
	const char *prefix;
	struct pt_trace *t;
	uint64_t n;
};
static inline int kcount_fn(void *ctx, struct pt_event *e)
{
	struct kcount *k = ctx;
	if ((k->kind < 0 || e->kind == k->kind) &&
	    (!k->prefix || strncmp(ename(k->t, e), k->prefix, strlen(k->prefix)) == 0))
		k->n++;
	return 0;
}
static inline uint64_t count_kind(struct pt_trace *t, int kind, const char *prefix)
{
	struct kcount k = {kind, prefix, t, 0};
	pt_store_foreach(t->store, kcount_fn, &k);
	return k.n;
}


static inline void same_traces(struct pt_trace *a, struct pt_trace *b)
{
	assert_int_equal(a->events_seen, b->events_seen);
	assert_int_equal(a->ntracks, b->ntracks);
	assert_int_equal(pt_strtab_count(a->strings), pt_strtab_count(b->strings));
	assert_memory_equal(a->warnings, b->warnings, sizeof a->warnings);
	for (uint32_t tr = 0; tr < a->ntracks; tr++) {
		assert_memory_equal(&a->tracks[tr], &b->tracks[tr], sizeof a->tracks[tr]);
		struct pt_store_iter ia, ib;
		pt_store_iter_init(&ia, a->store, tr, 0, UINT64_MAX);
		pt_store_iter_init(&ib, b->store, tr, 0, UINT64_MAX);
		struct pt_event *ea, *eb;
		do {
			ea = pt_store_iter_next(&ia);
			eb = pt_store_iter_next(&ib);
			assert_true((ea == NULL) == (eb == NULL));
			if (ea) {
				assert_memory_equal(ea, eb, sizeof *ea);
				assert_string_equal(ename(a, ea), ename(b, eb));
			}
		} while (ea);
		pt_store_iter_done(&ia);
		pt_store_iter_done(&ib);
	}
}

#endif
