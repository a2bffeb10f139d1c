/*
 * chrome_sink_int.h - the Chrome sink's state (chrome_sink.c), shared with
 * the binding of flow arrows at the end of a file (chrome_flows.c).
 */
#ifndef PT_CHROME_SINK_INT_H
#define PT_CHROME_SINK_INT_H

#include <stdint.h>

#include "import/chrome_int.h"
#include "model/u32map.h"
#include "model/u64map.h"
#include "model/util.h"

/* Flow-made correlation ids start here, clear of CUPTI's. */
#define FLOW_CORR_BASE 0x80000000u

struct open_b {
	int64_t ts_ns;
	uint32_t name_id, cat_id, corr;
	uint64_t bytes, samples;
	int64_t device, stream;
	uint32_t have;
};

struct trk {
	uint32_t lane_gen; /* lane is valid while this equals the sink's gen */
	uint8_t lane;
	uint8_t host_seen, dev_marked;
	struct open_b *b;
	uint32_t nb, bcap;
};

struct flow {
	int64_t id; /* numeric id, or string id (interned) */
	uint64_t ts_ns;
	uint32_t track;
	uint8_t ph, enclosing, id_is_str;
};

/* A recently seen event name: its length and its first and last 8 bytes
 * (which are the whole name up to 16 bytes). */
struct name_ent {
	uint64_t w0, w1;
	uint32_t len, id;
};
#define NAME_CACHE 1024u

#define TRACK_CACHE 8u /* a power of two */

struct cr_sink {
	struct pt_trace *t;
	struct trk *trk;
	uint32_t ntrk;
	uint32_t gen;
	struct pt_u64map proc_lane; /* (pid, pid_str) hash -> lane + 1 | device << 8 */
	struct pt_u64map cls;	/* (cat, name, lane) -> kind | flags << 8, +1 */
	/* correlation ids seen on slices, as a bitmap: bit (id & 31) of the
	 * word at id >> 5 (ids are dense and clustered: a few bytes each) */
	struct pt_u32map corrs;
	struct flow *flows;
	size_t nflows, flows_cap;
	/* last string lookups: consecutive events mostly repeat them */
	struct {
		const char *p;
		uint32_t len, id;
	} last_pid, last_tid;
	struct name_ent *names; /* NAME_CACHE entries, two-way sets */
	/* tracks found lately, by a hash of their key: a PyTorch trace
	 * alternates a host thread and a stream, so one entry missed every
	 * other event (a hash lookup each) */
	struct {
		struct pt_track_key key;
		uint32_t track; /* + 1; 0 = empty */
	} tcache[TRACK_CACHE];
	struct pt_buf tmp;
	int native;		  /* proftop's own export: "cat" is the kind, exactly */
	struct pt_u32map flop_ops; /* name id -> FLOPs formula + 1 (flops.h) */
	uint64_t profiler_ranges; /* cuda_profiler_range slices (see do_slice) */
};

/* A correlation id some slice carried (the bitmap in corrs). */
static inline int corr_seen(const struct cr_sink *s, uint32_t corr)
{
	return (pt_u32map_get(&s->corrs, corr >> 5) >> (corr & 31)) & 1;
}

/* After the last record: flow arrows (s/f) become correlation ids of the
 * slices they join, where those carry none of their own. */
void cr_flows_bind(struct cr_sink *s);

#endif
