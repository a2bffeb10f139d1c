/*
 * tracedir_copy.c - copying one trace file's trace into the live trace of
 * a watched folder (tracedir_int.h). Strings are re-interned, correlation
 * ids re-keyed (every file starts its own from 1, and a kernel must never
 * bind to another file's launch), and tracks re-keyed by a fixed rule, so
 * the files one process writes over time land on the same tracks:
 *
 *   - a file of one process (its main pid: the numeric host pid with the
 *     most events): its host threads keep their keys; its GPU rows, which
 *     Kineto names by device index (pid = device, tid = stream), become
 *     (main pid, (device + 1) << 32 | stream); rows of other or string pids
 *     ("Spans", "Traces") become (main pid, tid string "PID/TID"). So
 *     everything a rank wrote is one process and ranks stay apart.
 *   - a file that is itself several processes (a proftop merge, with a
 *     process table of two or more): keys as they are.
 *
 * A file's distributedInfo.rank (or its process table) becomes the
 * process's rank in the live trace.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracedir_int.h"
#include "model/u32map.h"
#include "model/util.h"

void td_copy_init(struct td_copy *c)
{
	memset(c, 0, sizeof *c);
	c->next_corr = 1;
	c->rank_seen = -1;
}

/* The numeric host pid with the most events; *found 0 when there is none. */
static int64_t main_pid(const struct pt_trace *in, int *found)
{
	int64_t best = 0;
	uint64_t best_n = 0;
	*found = 0;
	for (uint32_t i = 0; i < in->ntracks; i++) {
		const struct pt_track *tr = &in->tracks[i];
		if (pt_track_is_device(tr) || tr->key.pid_str || !tr->events)
			continue;
		uint64_t n = 0; /* a few processes, a few dozen threads: a scan */
		for (uint32_t j = 0; j < in->ntracks; j++) {
			const struct pt_track *o = &in->tracks[j];
			if (!pt_track_is_device(o) && !o->key.pid_str && o->key.pid == tr->key.pid)
				n += o->events;
		}
		if (!*found || n > best_n || (n == best_n && tr->key.pid < best)) {
			best = tr->key.pid;
			best_n = n;
			*found = 1;
		}
	}
	return best;
}

static uint32_t remap_str(struct pt_trace *out, const struct pt_trace *in, uint32_t *map,
			  uint32_t nmap, uint32_t id)
{
	if (!id)
		return 0;
	if (id >= nmap)
		return pt_trace_intern(out, pt_trace_str(in, id), pt_strtab_len(in->strings, id));
	if (!map[id])
		map[id] =
		    pt_trace_intern(out, pt_trace_str(in, id), pt_strtab_len(in->strings, id)) + 1;
	return map[id] - 1;
}

/* The live key of in's track tr (see the rule above). */
static struct pt_track_key lane_key(struct pt_trace *out, const struct pt_trace *in,
				    const struct pt_track *tr, int remap, int64_t main,
				    uint32_t *smap, uint32_t nmap)
{
	struct pt_track_key k = tr->key;
	k.pid_str = remap_str(out, in, smap, nmap, tr->key.pid_str);
	k.tid_str = remap_str(out, in, smap, nmap, tr->key.tid_str);
	if (!remap || (!pt_track_is_device(tr) && !tr->key.pid_str && tr->key.pid == main))
		return k;
	k.pid = main;
	k.pid_str = 0;
	if (pt_track_is_device(tr)) {
		k.tid =
		    (int64_t)((uint64_t)(uint32_t)(tr->device + 1) << 32 | (uint32_t)tr->stream);
		k.tid_str = 0;
		return k;
	}
	struct pt_buf b = {0};
	if (tr->key.pid_str)
		pt_buf_printf(&b, "%.60s/", pt_trace_str(in, tr->key.pid_str));
	else
		pt_buf_printf(&b, "%" PRId64 "/", tr->key.pid);
	if (tr->key.tid_str)
		pt_buf_printf(&b, "%.60s", pt_trace_str(in, tr->key.tid_str));
	else
		pt_buf_printf(&b, "%" PRId64, tr->key.tid);
	k.tid = 0;
	k.tid_str = pt_trace_intern(out, b.p, b.len);
	pt_buf_free(&b);
	return k;
}

struct copy_ctx {
	struct pt_trace *out;
	const struct pt_trace *in;
	uint32_t *tmap, *smap, nmap;
	struct pt_u32map corr;
	struct td_copy *c;
	uint64_t n;
};

static int copy_event(void *arg, struct pt_event *ev)
{
	struct copy_ctx *x = arg;
	if (ev->track_id >= x->in->ntracks)
		return 0;
	struct pt_event e = *ev;
	e.track_id = x->tmap[ev->track_id];
	e.name_id = remap_str(x->out, x->in, x->smap, x->nmap, ev->name_id);
	if (e.corr) {
		uint32_t id = pt_u32map_get(&x->corr, ev->corr);
		if (!id) {
			id = x->c->next_corr++;
			if (!x->c->next_corr)
				x->c->next_corr = 1;
			pt_u32map_put(&x->corr, ev->corr, id);
		}
		e.corr = id;
	}
	pt_trace_add(x->out, &e);
	x->n++;
	return 0;
}

static void copy_ranks(struct td_copy *c, struct pt_trace *out, const struct pt_trace *in,
		       int remap, int64_t main)
{
	if (!remap) {
		for (uint32_t i = 0; i < in->nprocs; i++) {
			const struct pt_proc *p = &in->procs[i];
			pt_trace_set_proc(out, p->pid, p->rank,
					  p->host ? pt_trace_str(in, p->host) : NULL);
		}
		return;
	}
	const struct pt_proc *p = in->nprocs == 1 ? &in->procs[0] : NULL;
	int64_t rank = p && p->rank >= 0 ? p->rank : in->rank;
	const char *host = p && p->host ? pt_trace_str(in, p->host) : NULL;
	if (rank >= 0 || host)
		pt_trace_set_proc(out, main, rank, host);
	if (rank >= 0) {
		/* one rank throughout: the trace is that rank's (as a file would be) */
		c->rank_seen = c->rank_seen == -1 || c->rank_seen == rank ? rank : -2;
		out->rank = c->rank_seen >= 0 ? c->rank_seen : -1;
	}
}

uint64_t td_copy_trace(struct td_copy *c, struct pt_trace *out, struct pt_trace *in)
{
	int found;
	int64_t main = main_pid(in, &found);
	int remap = found && in->nprocs < 2;
	struct copy_ctx x = {0};
	x.out = out;
	x.in = in;
	x.c = c;
	x.nmap = pt_strtab_count(in->strings) + 1;
	x.smap = pt_xcalloc(x.nmap, sizeof *x.smap);
	x.tmap = pt_xcalloc(in->ntracks ? in->ntracks : 1, sizeof *x.tmap);
	for (uint32_t i = 0; i < in->ntracks; i++) {
		const struct pt_track *tr = &in->tracks[i];
		struct pt_track_key k = lane_key(out, in, tr, remap, main, x.smap, x.nmap);
		uint32_t id = pt_trace_track(out, &k);
		x.tmap[i] = id;
		if (tr->label)
			pt_trace_set_thread_label(out, &k,
						  remap_str(out, in, x.smap, x.nmap, tr->label));
		if (tr->sort_index)
			pt_trace_set_thread_sort(out, &k, tr->sort_index);
		if (pt_track_is_device(tr))
			pt_trace_track_device(out, id, tr->device, tr->stream);
		/* the process's name: a remapped row's own process ("Spans") is not it */
		int own =
		    !remap || (!pt_track_is_device(tr) && !tr->key.pid_str && tr->key.pid == main);
		if (tr->process_label && own) {
			uint32_t pl = remap_str(out, in, x.smap, x.nmap, tr->process_label);
			if (out->tracks[id].process_label != pl)
				pt_trace_set_process_label(out, &k, pl);
		}
	}
	pt_store_foreach(in->store, copy_event, &x);
	pt_u32map_free(&x.corr);
	for (int w = 0; w < PT_WARN__COUNT; w++)
		pt_trace_warn(out, (enum pt_warn)w, in->warnings[w]);
	if (in->display_unit)
		out->display_unit = in->display_unit;
	if (in->world_size >= 0)
		out->world_size = in->world_size;
	copy_ranks(c, out, in, remap, main);
	free(x.smap);
	free(x.tmap);
	return x.n;
}
