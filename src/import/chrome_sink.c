/*
 * chrome_sink.c - the meaning of Chrome trace events: raw records (parsed
 * by json_scan.c, in file order) become pt_trace tracks, labels and events.
 * It pairs B/E per thread, turns C samples into counter events, classifies
 * each distinct (category, name, lane) once, marks device streams, and
 * after the last record has the flow arrows (s/f) bound to the slices they
 * join when the slices carry no correlation id of their own (chrome_flows.c).
 *
 * Threading: runs on the caller's thread only.
 */
#include <stdlib.h>
#include <string.h>

#include "import/chrome_int.h"
#include "import/chrome_sink_int.h"
#include "import/classify.h"
#include "proftop/flops.h"
#include "model/u32map.h"
#include "model/u64map.h"
#include "model/util.h"

struct cr_sink *cr_sink_new(struct pt_trace *t)
{
	struct cr_sink *s = pt_xcalloc(1, sizeof *s);
	s->t = t;
	s->gen = 1;
	s->names = pt_xcalloc(NAME_CACHE, sizeof *s->names);
	return s;
}

void cr_sink_free(struct cr_sink *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->ntrk; i++)
		free(s->trk[i].b);
	free(s->trk);
	pt_u64map_free(&s->proc_lane);
	pt_u64map_free(&s->cls);
	pt_u32map_free(&s->corrs);
	pt_u32map_free(&s->flop_ops);
	free(s->flows);
	free(s->names);
	pt_buf_free(&s->tmp);
	free(s);
}

/* ---- strings ---- */

/* A field past PT_RAW_HOT_BYTES: its value under its have bit, else 0. */
#define RAW_OR0(r, bit, field) (((r)->have & (bit)) ? (r)->field : 0)

static inline const char *sl_ptr(const struct cr_batch *b, struct pt_jslice sl)
{
	return (sl.len & PT_JSL_SIDE) ? b->side.strs.p + sl.off : b->buf + sl.off;
}

/* Interns a name; new names with invalid UTF-8 are counted (kept as is). */
static uint32_t intern_name(struct cr_sink *s, const char *p, size_t n)
{
	uint32_t before = pt_strtab_count(s->t->strings);
	uint32_t id = pt_trace_intern(s->t, p, n);
	if (pt_strtab_count(s->t->strings) != before && !pt_utf8_valid(p, n))
		pt_trace_warn(s->t, PT_WARN_BAD_UTF8, 1);
	return id;
}

/* Event names repeat: most are found here with two loads and a compare
 * (a memcmp only past 16 bytes), without hashing the whole name. */
static uint32_t intern_event_name(struct cr_sink *s, const char *p, uint32_t n)
{
	uint64_t w0 = 0, w1 = 0;
	if (n >= 8) {
		memcpy(&w0, p, 8);
		memcpy(&w1, p + n - 8, 8);
	} else {
		memcpy(&w0, p, n);
	}
	/* the top bits of a product depend on every byte of its factors */
	uint64_t h = ((w1 * 0xc2b2ae3d27d4eb4full) ^ w0 ^ n) * 0x9e3779b97f4a7c15ull;
	/* two ways a set, the one found last first: with one, two names of a
	 * trace's 150 hot ones that shared a slot pushed each other out, and 6 %
	 * of the synthetic trace's names were hashed and looked up in full */
	struct name_ent *e = &s->names[(h >> 55) * 2]; /* NAME_CACHE = 1 << 10 */
#define NAME_HIT(x)                                                                                \
	((x).id && (x).len == n && (x).w0 == w0 && (x).w1 == w1 &&                                 \
	 (n <= 16 || memcmp(p, pt_trace_str(s->t, (x).id), n) == 0))
	if (NAME_HIT(e[0]))
		return e[0].id;
	if (NAME_HIT(e[1])) {
		struct name_ent hit = e[1];
		e[1] = e[0];
		e[0] = hit;
		return hit.id;
	}
#undef NAME_HIT
	uint32_t id = intern_name(s, p, n);
	e[1] = e[0];
	e[0] = (struct name_ent){w0, w1, n, id};
	return id;
}

static uint32_t intern_cached(struct cr_sink *s, const struct cr_batch *b, struct pt_jslice sl,
			      void *cache_)
{
	struct {
		const char *p;
		uint32_t len, id;
	} *c = cache_;
	const char *p = sl_ptr(b, sl);
	uint32_t n = PT_JSL_LEN(sl);
	if (c->p && c->len == n && memcmp(c->p, p, n) == 0)
		return c->id;
	uint32_t id = intern_name(s, p, n);
	/* the chunk goes away after this batch; keep a stable copy */
	c->p = pt_trace_str(s->t, id);
	c->len = n;
	c->id = id;
	return id;
}

/* ---- tracks and lanes ---- */

static uint64_t proc_hash(const struct pt_track_key *k)
{
	return pt_hash_u64((uint64_t)k->pid) ^ ((uint64_t)k->pid_str << 1);
}

static struct pt_track_key raw_key(struct cr_sink *s, const struct cr_batch *b,
				   const struct pt_raw_event *r)
{
	struct pt_track_key k = {r->pid, r->tid, 0, 0};
	if (r->have & PT_RAW_PID_STR) {
		k.pid = 0;
		k.pid_str = intern_cached(s, b, r->pid_s, &s->last_pid);
	}
	if (r->have & PT_RAW_TID_STR) {
		k.tid = 0;
		k.tid_str = intern_cached(s, b, r->tid_s, &s->last_tid);
	}
	return k;
}

/* "GPU 3" -> 3 (device index named by a lane's label), else -1. */
static int dev_from_name(const char *n, size_t len)
{
	size_t i = len;
	while (i > 0 && n[i - 1] >= '0' && n[i - 1] <= '9')
		i--;
	if (i == len || len - i > 4)
		return -1;
	return atoi(n + i);
}

static void note_process_lane(struct cr_sink *s, const struct pt_track_key *k, const char *name,
			      size_t n)
{
	int lane = pt_classify_lane(name, n);
	uint32_t old = pt_u64map_get(&s->proc_lane, proc_hash(k));
	/* the first name that says something wins: msprof labels its "HCCL"
	 * process "NPU", and a "CPU" label must not undo "GPU 0" */
	if (old && (int)((old & 0xff) - 1) != PT_LANE_HOST)
		return;
	int dev = lane == PT_LANE_DEVICE ? dev_from_name(name, n) : -1;
	pt_u64map_put(&s->proc_lane, proc_hash(k), (uint32_t)(lane + 1) | (uint32_t)(dev + 1) << 8);
	s->gen++;
}

static struct trk *trk_of(struct cr_sink *s, uint32_t track, const struct pt_track_key *k)
{
	if (track >= s->ntrk) {
		uint32_t n = s->ntrk ? s->ntrk : 16;
		while (n <= track)
			n *= 2;
		s->trk = pt_xrealloc(s->trk, n * sizeof *s->trk);
		memset(s->trk + s->ntrk, 0, (n - s->ntrk) * sizeof *s->trk);
		s->ntrk = n;
	}
	struct trk *tr = &s->trk[track];
	if (tr->lane_gen != s->gen) {
		uint32_t v = pt_u64map_get(&s->proc_lane, proc_hash(k));
		int lane = v ? (int)(v & 0xff) - 1 : PT_LANE_HOST;
		if (!v && k->pid_str) {
			const char *ps = pt_trace_str(s->t, k->pid_str);
			lane = pt_classify_lane(ps, strlen(ps));
		}
		tr->lane = (uint8_t)lane;
		tr->lane_gen = s->gen;
	}
	return tr;
}

static uint32_t track_of(struct cr_sink *s, const struct pt_track_key *k)
{
	uint64_t h = (uint64_t)k->pid * 31 + (uint64_t)k->tid + k->pid_str * 7u + k->tid_str;
	unsigned i = (unsigned)(h ^ h >> 7) & (TRACK_CACHE - 1);
	if (s->tcache[i].track && memcmp(k, &s->tcache[i].key, sizeof *k) == 0)
		return s->tcache[i].track - 1;
	uint32_t track = pt_trace_track(s->t, k);
	s->tcache[i].key = *k;
	s->tcache[i].track = track + 1;
	return track;
}

/* ---- events ---- */

static enum pt_kind classify(struct cr_sink *s, uint32_t cat_id, uint32_t name_id, int lane,
			     uint8_t *flags)
{
	uint64_t key = ((uint64_t)cat_id << 32 | name_id) * 8 + (uint64_t)lane;
	key ^= (uint64_t)lane << 61;
	uint32_t v = pt_u64map_get(&s->cls, key);
	if (v) {
		*flags = (uint8_t)(v >> 8);
		if (v >> 16)
			s->profiler_ranges++;
		return (enum pt_kind)((v & 0xff) - 1);
	}
	const char *cat = pt_trace_str(s->t, cat_id), *name = pt_trace_str(s->t, name_id);
	enum pt_kind kind = pt_classify(cat, pt_strtab_len(s->t->strings, cat_id), name,
					pt_strtab_len(s->t->strings, name_id), lane, flags);
	/* CUPTI's profiler mode writes one range per kernel with counters and
	 * made-up times (each range as long as the whole replay): no device
	 * activity can be read from them, but the report says they are there. */
	uint32_t range = strcmp(cat, "cuda_profiler_range") == 0;
	s->profiler_ranges += range;
	if (s->native) {
		/* Our own export names the kind in "cat": trust it over the name
		 * and lane rules (a Kineto gpu_user_annotation "ProfilerStep#3"
		 * exported as Other stays Other). Flags still come from the name. */
		for (int k = 0; k < PT_KIND__COUNT; k++)
			if (!strcmp(cat, pt_kind_name((enum pt_kind)k))) {
				kind = (enum pt_kind)k;
				break;
			}
	}
	pt_u64map_put(&s->cls, key, (uint32_t)(kind + 1) | (uint32_t)*flags << 8 | range << 16);
	return kind;
}

/* Device index of an event on a device lane. */
static int32_t device_of(const struct trk *tr, const struct cr_sink *s,
			 const struct pt_track_key *k, int64_t dev_arg, int has_dev)
{
	if (has_dev && dev_arg >= 0 && dev_arg < 1 << 20)
		return (int32_t)dev_arg;
	uint32_t v = pt_u64map_get((struct pt_u64map *)&s->proc_lane, proc_hash(k));
	if (v >> 8)
		return (int32_t)(v >> 8) - 1;
	if (!k->pid_str && k->pid >= 0 && k->pid < 1000)
		return (int32_t)k->pid;
	/* the legacy autograd export puts the device index in tid */
	if (k->pid_str && !k->tid_str && k->tid >= 0 && k->tid < 64)
		return (int32_t)k->tid;
	(void)tr;
	return 0;
}

static void corr_note(struct cr_sink *s, uint32_t corr)
{
	uint32_t bit = 1u << (corr & 31), w = pt_u32map_get(&s->corrs, corr >> 5);
	if (!(w & bit))
		pt_u32map_put(&s->corrs, corr >> 5, w | bit);
}

static void emit(struct cr_sink *s, const struct pt_track_key *k, uint32_t track, struct trk *tr,
		 struct pt_event *ev, enum pt_kind kind, int64_t device, int64_t stream,
		 uint32_t have)
{
	if (pt_kind_is_device(kind)) {
		if (!tr->dev_marked &&
		    !(tr->host_seen && tr->lane == PT_LANE_HOST && !(have & PT_RAW_DEV_HINT))) {
			int32_t dev = device_of(tr, s, k, device, (have & PT_RAW_DEVICE) != 0);
			int64_t st = (have & PT_RAW_STREAM) ? stream : k->tid_str ? 0 : k->tid;
			pt_trace_track_device(s->t, track, dev, st);
			tr->dev_marked = 1;
		}
	} else if (kind <= PT_KIND_CUDA_RUNTIME) {
		tr->host_seen = 1;
	}
	if (ev->corr)
		corr_note(s, ev->corr);
	pt_trace_add(s->t, ev);
}

static uint64_t kind_arg(enum pt_kind kind, uint64_t bytes, uint64_t samples)
{
	if (kind == PT_KIND_MEMCPY || kind == PT_KIND_MEMSET)
		return bytes;
	if (kind == PT_KIND_PROFILE_STEP)
		return samples;
	return 0;
}

/*
 * An operator's FLOPs and bytes from its input shapes (flops.h), into
 * ev->arg with PT_EVF_FLOPS. The formula is looked up once per name; our
 * own export carries the figures as they were computed.
 */
static void op_flops(struct cr_sink *s, const struct cr_batch *b, const struct pt_raw_event *r,
		     struct pt_event *ev)
{
	if (s->native) {
		if ((r->have & PT_RAW_FLOPS) && r->flops >= 0)
			goto packed;
		return;
	}
	uint32_t op = pt_u32map_get(&s->flop_ops, ev->name_id);
	if (!op) {
		op = (uint32_t)pt_flops_op(pt_trace_str(s->t, ev->name_id),
					   pt_strtab_len(s->t->strings, ev->name_id)) + 1;
		pt_u32map_put(&s->flop_ops, ev->name_id, op);
	}
	if (op == 1)
		return;
	double fl, by;
	int dt;
#define RAWS(bit, sl)                                                                              \
	((r->have & (bit)) ? sl_ptr(b, r->sl) : NULL), ((r->have & (bit)) ? PT_JSL_LEN(r->sl) : 0)
	if (!pt_flops_compute((int)op - 1, RAWS(PT_RAW_DIMS, arg_dims), RAWS(PT_RAW_TYPES, arg_types),
			      RAWS(PT_RAW_CONC, arg_conc),
			      (r->have & PT_RAW_FLOPS) && r->flops > 0 ? (double)r->flops : -1.0, &fl,
			      &by, &dt))
		return;
#undef RAWS
	ev->arg = pt_flops_pack(fl, by, dt);
	ev->flags |= PT_EVF_FLOPS;
	return;
packed:
	ev->arg = pt_flops_pack((double)r->flops, (double)RAW_OR0(r, PT_RAW_BYTES, bytes),
				(r->have & PT_RAW_DTYPE) ? (int)(r->dtype & PT_DT_MASK) : PT_DT_F32);
	ev->flags |= PT_EVF_FLOPS;
}

static void do_slice(struct cr_sink *s, const struct pt_track_key *k, uint32_t track,
		     struct trk *tr, int64_t ts, int64_t dur, uint32_t name_id, uint32_t cat_id,
		     uint32_t corr, uint64_t bytes, uint64_t samples, int64_t device,
		     int64_t stream, uint32_t have, const struct cr_batch *b,
		     const struct pt_raw_event *r)
{
	if (dur < 0) {
		pt_trace_warn(s->t, PT_WARN_NEGATIVE_DUR, 1);
		return;
	}
	if ((uint64_t)dur > PT_MAX_DUR_NS) {
		pt_trace_warn(s->t, PT_WARN_HUGE_DUR, 1);
		return;
	}
	if ((uint64_t)ts + (uint64_t)dur > (uint64_t)INT64_MAX) {
		pt_trace_warn(s->t, PT_WARN_BAD_TS, 1);
		return;
	}
	uint8_t flags;
	int lane = tr->lane;
	/* MindSpore GPU timelines name no lanes; kernels carry grid/block args */
	if (lane == PT_LANE_HOST && (have & PT_RAW_DEV_HINT))
		lane = PT_LANE_DEVICE;
	enum pt_kind kind = classify(s, cat_id, name_id, lane, &flags);
	struct pt_event ev = {0};
	ev.start_ns = (uint64_t)ts;
	ev.dur_ns = (uint64_t)dur;
	ev.name_id = name_id;
	ev.track_id = track;
	ev.corr = corr;
	ev.kind = (uint8_t)kind;
	ev.flags = flags;
	ev.arg = kind_arg(kind, bytes, samples);
	if (r && kind == PT_KIND_OPERATOR && (have & (PT_RAW_DIMS | PT_RAW_FLOPS)))
		op_flops(s, b, r, &ev);
	emit(s, k, track, tr, &ev, kind, device, stream, have);
}

static void do_counter(struct cr_sink *s, const struct cr_batch *b, const struct pt_raw_event *r,
		       uint32_t track, uint32_t name_id)
{
	const char *name = pt_trace_str(s->t, name_id);
	size_t nlen = pt_strtab_len(s->t->strings, name_id);
	for (uint32_t i = 0; i < r->nctr; i++) {
		const struct pt_jcounter *c = &b->side.ctr[r->ctr_first + i];
		const char *key = sl_ptr(b, c->key);
		size_t klen = PT_JSL_LEN(c->key);
		uint32_t id;
		if (r->nctr == 1 && klen == 5 && memcmp(key, "value", 5) == 0) {
			id = name_id;
		} else {
			s->tmp.len = 0;
			pt_buf_put(&s->tmp, name, nlen);
			pt_buf_putc(&s->tmp, ' ');
			pt_buf_put(&s->tmp, key, klen);
			id = intern_name(s, s->tmp.p, s->tmp.len);
		}
		struct pt_event ev = {0};
		ev.start_ns = (uint64_t)r->ts_ns;
		ev.name_id = id;
		ev.track_id = track;
		ev.kind = PT_KIND_COUNTER;
		memcpy(&ev.arg, &c->value, sizeof ev.arg);
		pt_trace_add(s->t, &ev);
	}
}

static void do_meta(struct cr_sink *s, const struct cr_batch *b, const struct pt_raw_event *r)
{
	if (!(r->have & PT_RAW_NAME))
		return;
	const char *name = sl_ptr(b, r->name);
	size_t n = PT_JSL_LEN(r->name);
	struct pt_track_key k = raw_key(s, b, r);
	int has_an = (r->have & PT_RAW_ARGNAME) != 0;
	const char *an = has_an ? sl_ptr(b, r->arg_name) : NULL;
	size_t anl = has_an ? PT_JSL_LEN(r->arg_name) : 0;
#define IS(lit) (n == sizeof(lit) - 1 && memcmp(name, lit, n) == 0)
	if (IS("process_name") && has_an) {
		pt_trace_set_process_label(s->t, &k, intern_name(s, an, anl));
		note_process_lane(s, &k, an, anl);
	} else if (IS("thread_name") && has_an) {
		pt_trace_set_thread_label(s->t, &k, intern_name(s, an, anl));
	} else if (IS("thread_sort_index") && (r->have & PT_RAW_SORT)) {
		pt_trace_set_thread_sort(s->t, &k, r->sort_index);
	} else if (IS("process_labels") && (r->have & PT_RAW_LABELS)) {
		note_process_lane(s, &k, sl_ptr(b, r->arg_labels), PT_JSL_LEN(r->arg_labels));
	}
#undef IS
}

static void do_flow(struct cr_sink *s, const struct cr_batch *b, const struct pt_raw_event *r,
		    uint32_t track, uint32_t cat_id)
{
	/* forward-to-backward links join two CPU ops; they are not launches */
	const char *cat = pt_trace_str(s->t, cat_id);
	if (strcmp(cat, "fwdbwd") == 0)
		return;
	if (!(r->have & PT_RAW_ID)) {
		pt_trace_warn(s->t, PT_WARN_FLOW_UNMATCHED, 1);
		return;
	}
	if (s->nflows == s->flows_cap) {
		s->flows_cap = s->flows_cap ? s->flows_cap * 2 : 256;
		s->flows = pt_xrealloc(s->flows, s->flows_cap * sizeof *s->flows);
	}
	struct flow *f = &s->flows[s->nflows++];
	f->id = r->id;
	f->id_is_str = 0;
	if (r->have & PT_RAW_ID_STR) {
		f->id = pt_trace_intern(s->t, sl_ptr(b, r->id_s), PT_JSL_LEN(r->id_s));
		f->id_is_str = 1;
	}
	f->ts_ns = (uint64_t)r->ts_ns;
	f->track = track;
	f->ph = r->ph;
	/* "s" and "t" bind to the enclosing slice; "f" too with bp "e",
	 * otherwise to the next slice that starts at or after it */
	f->enclosing = r->ph != 'f' || r->bp == 'e';
}

static void push_b(struct trk *tr, const struct open_b *ob)
{
	if (tr->nb == tr->bcap) {
		tr->bcap = tr->bcap ? tr->bcap * 2 : 8;
		tr->b = pt_xrealloc(tr->b, tr->bcap * sizeof *tr->b);
	}
	tr->b[tr->nb++] = *ob;
}

static void one_event(struct cr_sink *s, const struct cr_batch *b, const struct pt_raw_event *r)
{
	struct pt_trace *t = s->t;
	if (r->warn) {
		pt_trace_warn(t, (enum pt_warn)(r->warn - 1), 1);
		return;
	}
	if (r->have & PT_RAW_ID_RANGE)
		pt_trace_warn(t, PT_WARN_ID_RANGE, 1);
	switch (r->ph) {
	case 'M':
		do_meta(s, b, r);
		return;
	case 'X':
	case 'B':
	case 'E':
	case 'i':
	case 'I':
	case 'C':
	case 's':
	case 't':
	case 'f':
		break;
	case PT_RAW_PH_NONE:
		pt_trace_warn(t, PT_WARN_BAD_EVENT, 1);
		return;
	default:
		pt_trace_warn(t, PT_WARN_UNKNOWN_PHASE, 1);
		return;
	}
	if (!(r->have & PT_RAW_TS)) {
		pt_trace_warn(t, PT_WARN_BAD_EVENT, 1);
		return;
	}
	if (r->ts_ns < 0) {
		pt_trace_warn(t, PT_WARN_BAD_TS, 1);
		return;
	}
	struct pt_track_key k = raw_key(s, b, r);
	uint32_t track = track_of(s, &k);
	struct trk *tr = trk_of(s, track, &k);
	uint32_t name_id = 0, cat_id = 0;
	if (r->have & PT_RAW_NAME)
		name_id = intern_event_name(s, sl_ptr(b, r->name), PT_JSL_LEN(r->name));
	if (r->have & PT_RAW_CAT)
		cat_id = intern_event_name(s, sl_ptr(b, r->cat), PT_JSL_LEN(r->cat));
	switch (r->ph) {
	case 'X':
		do_slice(s, &k, track, tr, r->ts_ns, (r->have & PT_RAW_DUR) ? r->dur_ns : 0,
			 name_id, cat_id, r->corr, RAW_OR0(r, PT_RAW_BYTES, bytes),
			 RAW_OR0(r, PT_RAW_SAMPLES, samples), RAW_OR0(r, PT_RAW_DEVICE, device),
			 RAW_OR0(r, PT_RAW_STREAM, stream), r->have, b, r);
		break;
	case 'B': {
		struct open_b ob = {r->ts_ns,
				    name_id,
				    cat_id,
				    r->corr,
				    RAW_OR0(r, PT_RAW_BYTES, bytes),
				    RAW_OR0(r, PT_RAW_SAMPLES, samples),
				    RAW_OR0(r, PT_RAW_DEVICE, device),
				    RAW_OR0(r, PT_RAW_STREAM, stream),
				    r->have};
		push_b(tr, &ob);
		break;
	}
	case 'E': {
		if (tr->nb == 0) {
			pt_trace_warn(t, PT_WARN_E_WITHOUT_B, 1);
			break;
		}
		struct open_b ob = tr->b[--tr->nb];
		if (!ob.name_id)
			ob.name_id = name_id;
		if (!ob.cat_id)
			ob.cat_id = cat_id;
		do_slice(s, &k, track, tr, ob.ts_ns, r->ts_ns - ob.ts_ns, ob.name_id, ob.cat_id,
			 ob.corr ? ob.corr : r->corr, ob.bytes, ob.samples, ob.device, ob.stream,
			 ob.have & ~(PT_RAW_DIMS | PT_RAW_FLOPS), NULL, NULL);
		break;
	}
	case 'i':
	case 'I': {
		struct pt_event ev = {0};
		ev.start_ns = (uint64_t)r->ts_ns;
		ev.name_id = name_id;
		ev.track_id = track;
		ev.kind = PT_KIND_INSTANT;
		if (r->scope == 'g' || r->scope == 'p')
			ev.flags = PT_EVF_GLOBAL;
		if (name_id && pt_classify_internal(pt_trace_str(t, name_id),
						    pt_strtab_len(t->strings, name_id)))
			ev.flags |= PT_EVF_INTERNAL;
		pt_trace_add(t, &ev);
		break;
	}
	case 'C':
		do_counter(s, b, r, track, name_id);
		break;
	default: /* s t f */
		do_flow(s, b, r, track, cat_id);
		break;
	}
}

void cr_sink_batch(struct cr_sink *s, const struct cr_batch *b)
{
	if (b->native)
		s->native = 1;
	for (uint32_t i = 0; i < b->nev; i++)
		one_event(s, b, &b->ev[i]);
}

/*
 * msprof's HCCL lane is not a device of its own: its collectives run on the
 * NPU whose tasks the "Ascend Hardware" lane shows. When the file's device
 * lanes name exactly one device, the HCCL lane's streams join it.
 */
static void comm_lanes_to_device(struct cr_sink *s)
{
	struct pt_trace *t = s->t;
	int32_t dev = -1;
	int ncomm = 0;
	for (uint32_t i = 0; i < s->ntrk && i < t->ntracks; i++) {
		if (!s->trk[i].dev_marked)
			continue;
		const struct trk *tr = trk_of(s, i, &t->tracks[i].key); /* lane up to date */
		if (tr->lane == PT_LANE_COMM) {
			ncomm++;
		} else if (tr->lane == PT_LANE_DEVICE) {
			if (dev >= 0 && dev != t->tracks[i].device)
				return; /* several devices: no way to tell which */
			dev = t->tracks[i].device;
		}
	}
	if (dev < 0 || !ncomm)
		return;
	for (uint32_t i = 0; i < s->ntrk && i < t->ntracks; i++)
		if (s->trk[i].dev_marked && s->trk[i].lane == PT_LANE_COMM)
			pt_trace_track_device(t, i, dev, t->tracks[i].stream);
}

void cr_sink_finish(struct cr_sink *s)
{
	uint64_t open = 0;
	for (uint32_t i = 0; i < s->ntrk; i++) {
		open += s->trk[i].nb;
		s->trk[i].nb = 0;
	}
	if (open)
		pt_trace_warn(s->t, PT_WARN_UNCLOSED_B, open);
	if (s->profiler_ranges)
		pt_trace_warn(s->t, PT_WARN_PROFILER_RANGE, s->profiler_ranges);
	comm_lanes_to_device(s);
	cr_flows_bind(s);
}
