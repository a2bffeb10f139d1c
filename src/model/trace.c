/*
 * trace.c - the session model and its sink: tracks keyed by (pid, tid) as
 * the source names them, labels from metadata (which may come before or
 * after a track's first event), and the warning counters.
 */
#include "proftop/trace.h"
#include "proftop/capture.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/util.h"

/* Open-addressing map from a track key to a 32-bit value (+1, 0 = empty). */
/* Per-track state a summary builds (aggregator track state, a few frames),
 * counted against the cap when the track appears. */
#define PT_TRACK_SUMMARY_BYTES 512

struct kmap_ent {
	struct pt_track_key key;
	uint32_t val1;
	int64_t extra;
};

struct kmap {
	struct kmap_ent *e;
	uint32_t mask, n;
};

struct pt_track_map {
	struct kmap m;
};
struct pt_label_map {
	struct kmap thread, process, sort;
};

static uint64_t key_hash(const struct pt_track_key *k)
{
	uint64_t h = pt_hash_u64((uint64_t)k->pid * 31 + k->pid_str);
	return pt_hash_u64(h ^ ((uint64_t)k->tid * 0x9e3779b97f4a7c15ull) ^ k->tid_str);
}

static int key_eq(const struct pt_track_key *a, const struct pt_track_key *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->pid_str == b->pid_str &&
	       a->tid_str == b->tid_str;
}

static struct kmap_ent *kmap_slot(struct kmap *m, const struct pt_track_key *k, int insert)
{
	if (!m->e) {
		if (!insert)
			return NULL;
		m->mask = 63;
		m->e = pt_xcalloc(64, sizeof *m->e);
	}
	if (insert && (m->n + 1) * 4 > (m->mask + 1) * 3) {
		uint32_t nmask = m->mask * 2 + 1;
		struct kmap_ent *ne = pt_xcalloc((size_t)nmask + 1, sizeof *ne);
		for (uint32_t i = 0; i <= m->mask; i++) {
			if (!m->e[i].val1)
				continue;
			uint32_t j = (uint32_t)key_hash(&m->e[i].key) & nmask;
			while (ne[j].val1)
				j = (j + 1) & nmask;
			ne[j] = m->e[i];
		}
		free(m->e);
		m->e = ne;
		m->mask = nmask;
	}
	uint32_t i = (uint32_t)key_hash(k) & m->mask;
	for (;;) {
		struct kmap_ent *e = &m->e[i];
		if (!e->val1) {
			if (!insert)
				return NULL;
			e->key = *k;
			m->n++;
			return e;
		}
		if (key_eq(&e->key, k))
			return e;
		i = (i + 1) & m->mask;
	}
}

struct pt_trace *pt_trace_new(size_t max_mem_bytes)
{
	struct pt_trace *t = pt_xcalloc(1, sizeof *t);
	t->strings = pt_strtab_new();
	t->store = pt_store_new(max_mem_bytes);
	t->track_map = pt_xcalloc(1, sizeof *t->track_map);
	t->labels = pt_xcalloc(1, sizeof *t->labels);
	t->rank = -1;
	t->world_size = -1;
	return t;
}

void pt_trace_free(struct pt_trace *t)
{
	if (!t)
		return;
	pt_strtab_free(t->strings);
	pt_store_free(t->store);
	free(t->tracks);
	free(t->track_map->m.e);
	free(t->track_map);
	free(t->labels->thread.e);
	free(t->labels->process.e);
	free(t->labels->sort.e);
	free(t->labels);
	free(t->source);
	free(t->procs);
	pt_capture_list_free(t->captures);
	pt_colls_free(&t->colls);
	free(t);
}

void pt_trace_set_proc(struct pt_trace *t, int64_t pid, int64_t rank, const char *host)
{
	struct pt_proc *p = (struct pt_proc *)pt_trace_proc(t, pid);
	if (!p) {
		if (t->nprocs == t->procs_cap) {
			t->procs_cap = t->procs_cap ? t->procs_cap * 2 : 8;
			t->procs = pt_xrealloc(t->procs, t->procs_cap * sizeof(*t->procs));
		}
		p = &t->procs[t->nprocs++];
		p->pid = pid;
		p->host = 0;
		p->ended = 0;
	}
	p->rank = rank;
	if (host && *host)
		p->host = pt_trace_intern(t, host, strlen(host));
}

void pt_trace_proc_ended(struct pt_trace *t, int64_t pid, int how)
{
	for (uint32_t i = 0; i < t->nprocs; i++)
		if (t->procs[i].pid == pid && how > t->procs[i].ended)
			t->procs[i].ended = how;
}

const struct pt_proc *pt_trace_proc(const struct pt_trace *t, int64_t pid)
{
	for (uint32_t i = 0; i < t->nprocs; i++) /* a handful of ranks: a scan is enough */
		if (t->procs[i].pid == pid)
			return &t->procs[i];
	return NULL;
}

void pt_trace_proc_name(const struct pt_trace *t, int64_t pid, char *buf, size_t len)
{
	const struct pt_proc *p = pt_trace_proc(t, pid);
	if (p && p->rank >= 0)
		snprintf(buf, len, "rank %lld", (long long)p->rank);
	else
		snprintf(buf, len, "pid %lld", (long long)pid);
}

void pt_trace_set_source(struct pt_trace *t, const char *source)
{
	free(t->source);
	t->source = source ? pt_xstrdup(source) : NULL;
}

/* The store's drops since the last look, into the warnings. */
static void sync_dropped(struct pt_trace *t)
{
	/* Added, not assigned: a re-read export brings earlier drops along. */
	uint64_t dropped = pt_store_dropped(t->store);
	if (dropped != t->store_dropped_seen) {
		t->warnings[PT_WARN_STORE_DROPPED] += dropped - t->store_dropped_seen;
		t->store_dropped_seen = dropped;
	}
}

/* Memory the trace holds besides the events, counted against the cap. */
static void charge(struct pt_trace *t, size_t bytes)
{
	if (!bytes)
		return;
	pt_store_charge(t->store, bytes);
	sync_dropped(t);
}

uint32_t pt_trace_intern(struct pt_trace *t, const char *s, size_t len)
{
	static _Thread_local char *cut; /* PT_NAME_MAX_BYTES: too big for the stack */
	if (len > PT_NAME_MAX_BYTES) {
		if (!cut)
			cut = pt_xmalloc(PT_NAME_MAX_BYTES + 64);
		uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a of the whole name */
		for (size_t i = 0; i < len; i++)
			h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
		size_t keep = PT_NAME_MAX_BYTES - 64;
		while (keep && ((unsigned char)s[keep] & 0xc0) == 0x80)
			keep--; /* not inside a UTF-8 sequence */
		memcpy(cut, s, keep);
		len =
		    keep + (size_t)snprintf(cut + keep, PT_NAME_MAX_BYTES + 64 - keep,
					    "...[%zu bytes #%016llx]", len, (unsigned long long)h);
		s = cut;
		t->warnings[PT_WARN_NAME_CUT]++;
	}
	/* past the names' share of the cap: a new name becomes the one folded
	 * name (a known one keeps its id) */
	if (pt_store_charge_full(t->store, len + 32)) {
		uint32_t known = pt_strtab_find(t->strings, s, len);
		if (known)
			return known;
		t->warnings[PT_WARN_NAME_FOLDED]++;
		if (!t->folded_name)
			t->folded_name = pt_strtab_intern(t->strings, PT_FOLDED_NAMES,
							  sizeof PT_FOLDED_NAMES - 1);
		return t->folded_name;
	}
	size_t before = pt_strtab_mem_bytes(t->strings);
	uint32_t id = pt_strtab_intern(t->strings, s, len);
	size_t after = pt_strtab_mem_bytes(t->strings);
	if (after > before)
		charge(t, after - before);
	return id;
}

static struct pt_track_key process_key(const struct pt_track_key *k)
{
	struct pt_track_key p = {k->pid, 0, k->pid_str, 0};
	return p;
}

static uint32_t track_new(struct pt_trace *t, const struct pt_track_key *key);

uint32_t pt_trace_track(struct pt_trace *t, const struct pt_track_key *key)
{
	struct kmap_ent *e = kmap_slot(&t->track_map->m, key, 0);
	if (e && e->val1)
		return e->val1 - 1;
	/* past the tracks' share of the cap: the events of a new thread go on
	 * one track for all such threads (made once), counted where the report
	 * lists what was lost */
	if (t->folded_track || pt_store_charge_full(t->store, PT_TRACK_SUMMARY_BYTES)) {
		t->warnings[PT_WARN_TRACK_FOLDED]++;
		if (!t->folded_track) {
			/* in the process of the first thread folded (most traces
			 * that get here are one process of very many threads): a
			 * process of its own would read as one more rank */
			struct pt_track_key fk = {key->pid, 0, key->pid_str, 0};
			fk.tid_str = pt_strtab_intern(t->strings, PT_FOLDED_THREADS,
						      sizeof PT_FOLDED_THREADS - 1);
			t->folded_track = 1 + track_new(t, &fk);
		}
		return t->folded_track - 1;
	}
	return track_new(t, key);
}

static uint32_t track_new(struct pt_trace *t, const struct pt_track_key *key)
{
	struct kmap_ent *e = kmap_slot(&t->track_map->m, key, 1);
	size_t grown = 0;
	if (t->ntracks == t->tracks_cap) {
		uint32_t old = t->tracks_cap;
		t->tracks_cap = t->tracks_cap ? t->tracks_cap * 2 : 16;
		t->tracks = pt_xrealloc(t->tracks, (size_t)t->tracks_cap * sizeof *t->tracks);
		grown = (size_t)(t->tracks_cap - old) * sizeof *t->tracks;
	}
	uint32_t id = t->ntracks++;
	e->val1 = id + 1;
	struct pt_track *tr = &t->tracks[id];
	memset(tr, 0, sizeof *tr);
	tr->key = *key;
	tr->device = -1;
	struct kmap_ent *l = kmap_slot(&t->labels->thread, key, 0);
	if (l)
		tr->label = l->val1 - 1;
	struct pt_track_key pk = process_key(key);
	l = kmap_slot(&t->labels->process, &pk, 0);
	if (l)
		tr->process_label = l->val1 - 1;
	l = kmap_slot(&t->labels->sort, key, 0);
	if (l)
		tr->sort_index = l->extra;
	/* the table's growth, the map's entry, and the state a summary keeps
	 * per track (aggregator, one summary of each rank) */
	charge(t, grown + 2 * sizeof(struct kmap_ent) + PT_TRACK_SUMMARY_BYTES);
	return id;
}

static struct pt_track *find_track(struct pt_trace *t, const struct pt_track_key *key)
{
	struct kmap_ent *e = kmap_slot(&t->track_map->m, key, 0);
	return e ? &t->tracks[e->val1 - 1] : NULL;
}

void pt_trace_set_thread_label(struct pt_trace *t, const struct pt_track_key *key, uint32_t label)
{
	struct kmap_ent *e = kmap_slot(&t->labels->thread, key, 1);
	e->val1 = label + 1;
	struct pt_track *tr = find_track(t, key);
	if (tr)
		tr->label = label;
}

void pt_trace_set_process_label(struct pt_trace *t, const struct pt_track_key *key, uint32_t label)
{
	struct pt_track_key pk = process_key(key);
	struct kmap_ent *e = kmap_slot(&t->labels->process, &pk, 1);
	e->val1 = label + 1;
	for (uint32_t i = 0; i < t->ntracks; i++)
		if (t->tracks[i].key.pid == pk.pid && t->tracks[i].key.pid_str == pk.pid_str)
			t->tracks[i].process_label = label;
}

void pt_trace_set_thread_sort(struct pt_trace *t, const struct pt_track_key *key, int64_t idx)
{
	struct kmap_ent *e = kmap_slot(&t->labels->sort, key, 1);
	e->val1 = 1;
	e->extra = idx;
	struct pt_track *tr = find_track(t, key);
	if (tr)
		tr->sort_index = idx;
}

void pt_trace_track_device(struct pt_trace *t, uint32_t track, int32_t device, int64_t stream)
{
	if (track >= t->ntracks)
		return;
	t->tracks[track].device = device < 0 ? 0 : device;
	t->tracks[track].stream = stream;
}

static void note_id(struct pt_trace *t, uint32_t id)
{
	for (uint32_t i = 0; i < t->nnotes; i++)
		if (t->notes[i] == id)
			return;
	if (t->nnotes < PT_TRACE_MAX_NOTES)
		t->notes[t->nnotes++] = id;
	else
		t->notes_dropped++;
}

static int is_note_name(const char *s)
{
	return s && strncmp(s, PT_NOTE_PREFIX, sizeof PT_NOTE_PREFIX - 1) == 0 &&
	       s[sizeof PT_NOTE_PREFIX - 1] != 0;
}

void pt_trace_note(struct pt_trace *t, const char *text)
{
	char buf[512];
	int n = snprintf(buf, sizeof buf, "%s%s", PT_NOTE_PREFIX, text);
	if (n <= (int)sizeof PT_NOTE_PREFIX - 1)
		return;
	note_id(t, pt_trace_intern(t, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1));
}

const char *pt_trace_note_text(const struct pt_trace *t, uint32_t i)
{
	const char *s = i < t->nnotes ? pt_trace_str(t, t->notes[i]) : NULL;
	return is_note_name(s) ? s + sizeof PT_NOTE_PREFIX - 1 : "";
}

void pt_trace_add(struct pt_trace *t, const struct pt_event *ev)
{
	if (ev->track_id >= t->ntracks)
		return;
	if (ev->kind == PT_KIND_INSTANT && ev->name_id && is_note_name(pt_trace_str(t, ev->name_id)))
		note_id(t, ev->name_id);
	if (t->events_seen == 0 || ev->start_ns < t->first_ns)
		t->first_ns = ev->start_ns;
	uint64_t end = pt_event_end(ev);
	if (end > t->last_ns)
		t->last_ns = end;
	if (end > t->tracks[ev->track_id].last_end_ns && ev->kind != PT_KIND_COUNTER)
		t->tracks[ev->track_id].last_end_ns = end; /* the job's own, not our samples */
	t->events_seen++;
	t->tracks[ev->track_id].events++;
	if (ev->kind == PT_KIND_PROFILE_STEP)
		t->tracks[ev->track_id].steps++;
	else if (ev->kind == PT_KIND_COUNTER)
		t->tracks[ev->track_id].counters++;
	if (ev->flags & PT_EVF_FLOPS)
		t->flop_events++;
	pt_store_append(t->store, ev);
	sync_dropped(t);
}

void pt_trace_warn(struct pt_trace *t, enum pt_warn w, uint64_t count)
{
	if ((unsigned)w < PT_WARN__COUNT)
		t->warnings[w] += count;
}

static void key_part(const struct pt_trace *t, int64_t num, uint32_t str, char *buf, size_t len)
{
	if (str) {
		const char *s = pt_trace_str(t, str);
		pt_escape_term(buf, len, s, strlen(s), 40, 0);
	} else {
		snprintf(buf, len, "%" PRId64, num);
	}
}

void pt_trace_track_label(const struct pt_trace *t, uint32_t track, char *buf, size_t len)
{
	if (track >= t->ntracks) {
		snprintf(buf, len, "track %u", track);
		return;
	}
	const struct pt_track *tr = &t->tracks[track];
	char p[160], th[160];
	key_part(t, tr->key.pid, tr->key.pid_str, p, sizeof p);
	key_part(t, tr->key.tid, tr->key.tid_str, th, sizeof th);
	if (tr->label) {
		const char *s = pt_trace_str(t, tr->label);
		char esc[128];
		pt_escape_term(esc, sizeof esc, s, strlen(s), 48, 0);
		if (pt_track_is_device(tr))
			snprintf(buf, len, "GPU %d %s", tr->device, esc);
		else
			snprintf(buf, len, "%s (pid %s)", esc, p);
		return;
	}
	if (pt_track_is_device(tr))
		snprintf(buf, len, "GPU %d stream %" PRId64, tr->device, tr->stream);
	else
		snprintf(buf, len, "pid %s tid %s", p, th);
}

static const char *const warn_keys[PT_WARN__COUNT] = {
	[PT_WARN_BAD_EVENT] = "bad_event",
	[PT_WARN_UNKNOWN_PHASE] = "unknown_phase",
	[PT_WARN_E_WITHOUT_B] = "end_without_begin",
	[PT_WARN_UNCLOSED_B] = "unclosed_begin",
	[PT_WARN_NEGATIVE_DUR] = "negative_duration",
	[PT_WARN_HUGE_DUR] = "huge_duration",
	[PT_WARN_BAD_TS] = "bad_timestamp",
	[PT_WARN_NONFINITE] = "non_finite_number",
	[PT_WARN_BAD_UTF8] = "invalid_utf8_name",
	[PT_WARN_FLOW_UNMATCHED] = "flow_unmatched",
	[PT_WARN_CHILD_OVERHANG] = "child_overhang",
	[PT_WARN_BAD_DEVICE_RECORD] = "bad_device_record",
	[PT_WARN_STORE_DROPPED] = "dropped_by_memory_cap",
	[PT_WARN_SOURCE_DROPPED] = "dropped_by_source",
	[PT_WARN_PROFILER_RANGE] = "cupti_profiler_range",
	[PT_WARN_SOURCE_OVERWRITTEN] = "overwritten_while_detached",
	[PT_WARN_READER_MISSED] = "missed_by_reader",
	[PT_WARN_NAME_CUT] = "names_cut",
	[PT_WARN_DUP_KEY] = "duplicate_key",
	[PT_WARN_ID_RANGE] = "id_out_of_range",
	[PT_WARN_TRACK_FOLDED] = "threads_over_memory_cap",
	[PT_WARN_NAME_FOLDED] = "names_over_memory_cap",
	[PT_WARN_NEST_DEEP] = "nested_too_deep",
	[PT_WARN_COLL_DROPPED] = "collectives_dropped",
};

_Static_assert(PT_NEST_MAX_DEPTH == 4096, "PT_NEST_MAX_DEPTH_TEXT must say the same number");

static const char *const warn_texts[PT_WARN__COUNT] = {
	[PT_WARN_BAD_EVENT] = "events with missing or mistyped fields skipped",
	[PT_WARN_UNKNOWN_PHASE] = "events with an unknown phase skipped",
	[PT_WARN_E_WITHOUT_B] = "end (E) events without a begin skipped",
	[PT_WARN_UNCLOSED_B] = "begin (B) events never closed skipped",
	[PT_WARN_NEGATIVE_DUR] = "events with a negative duration skipped",
	[PT_WARN_HUGE_DUR] = "events longer than 7 days skipped",
	[PT_WARN_BAD_TS] = "events with an out-of-range timestamp skipped",
	[PT_WARN_NONFINITE] = "events with NaN or Infinity skipped",
	[PT_WARN_BAD_UTF8] = "names with invalid UTF-8 (kept, shown escaped)",
	[PT_WARN_FLOW_UNMATCHED] = "flow arrows without a partner or slice ignored",
	[PT_WARN_CHILD_OVERHANG] = "children ending after their parent (rounding), nested anyway",
	[PT_WARN_BAD_DEVICE_RECORD] = "device records with start 0 or end before start skipped",
	[PT_WARN_STORE_DROPPED] = "oldest events dropped by the memory cap (--max-mem)",
	[PT_WARN_SOURCE_DROPPED] = "events dropped by the probe (rings full while a reader read)",
	[PT_WARN_PROFILER_RANGE] = "kernel ranges of CUPTI's profiler mode (counters, not kernel "
				   "times): not counted as device activity",
	[PT_WARN_SOURCE_OVERWRITTEN] = "events the probe overwrote while no reader was attached",
	[PT_WARN_READER_MISSED] = "events this reader missed (other readers had read them, "
				  "before it attached or while it was stalled)",
	[PT_WARN_NAME_CUT] = "names longer than 1 MiB cut (first bytes, length and hash kept)",
	[PT_WARN_DUP_KEY] = "top-level keys given twice (a second \"traceEvents\" is not read)",
	[PT_WARN_ID_RANGE] = "pids/tids beyond 64 bits, kept apart by their digits",
	[PT_WARN_TRACK_FOLDED] = "events of threads past what the memory cap holds, put on one "
				 "track \"" PT_FOLDED_THREADS "\" (raise --max-mem)",
	[PT_WARN_NAME_FOLDED] = "names past what the memory cap holds, all shown as \"" PT_FOLDED_NAMES
				"\" (raise --max-mem)",
	[PT_WARN_NEST_DEEP] = "events nested more than " PT_NEST_MAX_DEPTH_TEXT
			      " deep, left out of the tables",
	[PT_WARN_COLL_DROPPED] = "oldest collective calls dropped by the memory cap (--max-mem)",
};

const char *pt_warn_key(enum pt_warn w)
{
	return (unsigned)w < PT_WARN__COUNT ? warn_keys[w] : "unknown";
}

const char *pt_warn_text(enum pt_warn w)
{
	return (unsigned)w < PT_WARN__COUNT ? warn_texts[w] : "unknown";
}

uint64_t pt_trace_source_lost(const struct pt_trace *t)
{
	return t->warnings[PT_WARN_SOURCE_DROPPED] + t->warnings[PT_WARN_SOURCE_OVERWRITTEN] +
	       t->warnings[PT_WARN_READER_MISSED];
}

uint64_t pt_trace_lost_before_attach(const struct pt_trace *t)
{
	return t->before_attach[0] + t->before_attach[1];
}

static void loss_causes(const struct pt_trace *t, char *buf, size_t len, int brief, int attached)
{
	static const struct {
		int w;
		const char *text, *brief;
	} causes[3] = {
	    {PT_WARN_SOURCE_DROPPED, "dropped (rings full)", "full"},
	    {PT_WARN_SOURCE_OVERWRITTEN, "overwritten while detached", "overwr."},
	    {PT_WARN_READER_MISSED, "missed (read by another reader)", "missed"},
	};
	size_t n = 0;
	if (len)
		buf[0] = 0;
	for (int i = 0; i < 3 && n < len; i++) {
		uint64_t v = t->warnings[causes[i].w];
		if (attached && i > 0) /* overwritten, missed: less what went before */
			v -= v < t->before_attach[i - 1] ? v : t->before_attach[i - 1];
		if (!v)
			continue;
		int k = snprintf(buf + n, len - n, "%s%llu %s", n ? ", " : "", (unsigned long long)v,
				 brief ? causes[i].brief : causes[i].text);
		if (k < 0)
			break;
		n += (size_t)k;
	}
}

void pt_trace_loss_causes(const struct pt_trace *t, char *buf, size_t len, int brief)
{
	loss_causes(t, buf, len, brief, 0);
}

void pt_trace_loss_causes_attached(const struct pt_trace *t, char *buf, size_t len, int brief)
{
	loss_causes(t, buf, len, brief, 1);
}

uint64_t pt_trace_warn_total(const struct pt_trace *t)
{
	uint64_t n = 0;
	for (int i = 0; i < PT_WARN__COUNT; i++)
		n += t->warnings[i];
	return n;
}
