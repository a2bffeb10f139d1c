/*
 * fuzz_session.c - libFuzzer target for the shared-memory session reader
 * (backends/session.c, session_open.c, session_scan.c), white-box: the
 * reader's sources are included. Each input becomes a segment in memory,
 * read the way proftop reads a live one: pt_session_from_mem (validation),
 * drains at successive polls with the producer's live fields changing in
 * between (rings exiting, reused, the owner exiting), the listing's view of
 * it (fill_info), then a summary and the text and JSON reports of what was
 * drained, and for some inputs its export, which must load back with the
 * Chrome reader. Nothing may crash, leak, hang or read out of bounds.
 *
 * Two forms of input:
 *  - raw: bytes that start with PT_SHM_MAGIC are the whole segment (a real
 *    one, saved from the probe, is a good seed: tests/fuzz/seeds_session/);
 *    mutations that keep the size get past the header checks.
 *  - structured: anything else. A valid header+rings skeleton (1-4 rings of
 *    2-16 slots, a 64-512 byte string area) whose ring heads/tails, states,
 *    generations, thread names, record bytes and string area come from the
 *    input, so the fuzzer spends its time past validation.
 * Control bits (the second byte; for raw input the last) choose the later
 * phases, including a producer that rewrites the header's layout fields
 * after the reader validated them.
 *
 *   make fuzz && build-fuzz/fuzz_session -max_total_time=60 CORPUS_DIR
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../backends/session.c"
#include "../../backends/session_copy.c"
#include "../../backends/session_capture.c"
#include "../../backends/session_open.c"
#include "../../backends/session_scan.c"
#include "proftop/agg.h"
#include "proftop/chrome.h"
#include "proftop/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A cursor over the input: bytes past its end read as zero. */
struct in {
	const uint8_t *p;
	size_t n, at;
};

static void take(struct in *in, void *out, size_t len)
{
	size_t have = in->at < in->n ? in->n - in->at : 0;
	if (have > len)
		have = len;
	memcpy(out, in->p + in->at, have);
	memset((char *)out + have, 0, len - have);
	in->at += len;
}

static uint64_t take_u(struct in *in, size_t len)
{
	uint64_t v = 0;
	take(in, &v, len);
	return v;
}

/* A segment built from the input; NULL when the input cannot make one. */
static void *build_structured(struct in *in, size_t *size, uint8_t *ctl)
{
	uint8_t c0 = (uint8_t)take_u(in, 1), c1 = (uint8_t)take_u(in, 1);
	uint32_t nrings = 1u + (c0 & 3u), slots = 2u << ((c0 >> 2) & 3u);
	uint32_t strbytes = 64u << ((c0 >> 4) & 3u);
	int mask_names = c0 & 0x40;
	uint64_t bytes = pt_shm_segment_bytes(nrings, slots, strbytes);
	void *base = NULL;
	if (!bytes || posix_memalign(&base, 4096, (size_t)bytes))
		return NULL;
	memset(base, 0, (size_t)bytes);
	struct pt_shm_header *h = base;
	h->magic = PT_SHM_MAGIC;
	h->abi = PT_SHM_ABI;
	h->header_bytes = PT_SHM_HEADER_BYTES;
	h->segment_bytes = bytes;
	/* our own pid: a live owner (heartbeat); else one that cannot exist */
	h->pid = (c1 & 0x80) ? (int32_t)getpid() : 0x3ffffff0;
	h->nrings = nrings;
	h->ring_slots = slots;
	h->ring_stride = sizeof(struct pt_shm_ring) + (uint64_t)slots * sizeof(struct pt_shm_rec);
	h->rings_offset = PT_SHM_HEADER_BYTES;
	h->strings_offset = h->rings_offset + nrings * h->ring_stride;
	h->strings_bytes = strbytes;
	h->rank = (int64_t)(c1 & 3) - 1;
	h->world_size = 4;
	h->state = PT_SHM_RUNNING;
	h->rings_claimed = c1 & 7u; /* may exceed nrings */
	take(in, h->cmdline, 16);   /* no NUL promised */
	h->dropped_no_ring = take_u(in, 1);
	for (uint32_t i = 0; i < nrings; i++) {
		struct pt_shm_ring *r = pt_shm_ring_at(base, h, i);
		uint8_t rc = (uint8_t)take_u(in, 1);
		r->tail = take_u(in, 2);
		r->head = (rc & 0x80) ? take_u(in, 8) : r->tail + take_u(in, 1);
		r->state = rc & 3u;
		r->generation = (rc >> 2) & 3u;
		r->tid = (int32_t)take_u(in, 1);
		r->dropped = (rc & 0x40) ? take_u(in, 1) : 0;
		take(in, r->thread_name, (rc & 0x20) ? sizeof r->thread_name : 4);
		struct pt_shm_rec *rec = pt_shm_ring_recs(r);
		for (uint32_t k = 0; k < slots; k++) {
			take(in, &rec[k], sizeof rec[k]);
			if (mask_names)
				rec[k].name &= strbytes - 8; /* aligned, inside */
		}
	}
	take(in, (char *)base + h->strings_offset, strbytes);
	*size = (size_t)bytes;
	*ctl = (uint8_t)((c1 & ~1u) | (c0 >> 7));
	return base;
}

static void *build_raw(const uint8_t *data, size_t size)
{
	void *base = NULL;
	if (posix_memalign(&base, 4096, (size + 7) & ~(size_t)7))
		return NULL;
	memcpy(base, data, size);
	return base;
}

/*
 * What was drained exports to a file the Chrome reader loads back (the
 * export a user saves from a live session must always reopen).
 */
static void roundtrip(struct pt_trace *t, const struct pt_summary *sum)
{
	char path[64], err[512];
	snprintf(path, sizeof path, "%s/proftop-fuzz-session-%d.json",
		 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid());
	struct pt_export_opts eo = {.force = 1, .summary = sum};
	if (pt_chrome_export(t, path, &eo, err, sizeof err) != 0) {
		fprintf(stderr, "export failed: %s\n", err);
		abort();
	}
	struct pt_trace *back = pt_trace_new(8u << 20);
	struct pt_read_opts ro = {.threads = 1};
	int rc = pt_chrome_read(back, path, &ro, err, sizeof err);
	unlink(path);
	if (rc != 0 && pt_store_count(t->store) > 0) {
		fprintf(stderr, "the export does not load back: %s\n", err);
		abort();
	}
	pt_trace_free(back);
}

static void report(struct pt_trace *t, int export)
{
	struct pt_agg_opts ao;
	pt_agg_opts_init(&ao);
	struct pt_summary *sum = pt_summarize(t, &ao);
	FILE *null = fopen("/dev/null", "w");
	if (null) {
		struct pt_report_opts o;
		pt_report_opts_init(&o);
		o.op_detail = 1;
		pt_report_text(null, t, sum, &o);
		pt_report_json(null, t, sum, &o);
		fclose(null);
	}
	if (export)
		roundtrip(t, sum);
	pt_summary_free(sum);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t magic = 0;
	size_t segsize = size;
	uint8_t ctl = 0x38; /* raw segments get the later phases */
	void *base;
	struct in in = {data, size, 0};
	if (size >= sizeof magic)
		memcpy(&magic, data, sizeof magic);
	if (magic == PT_SHM_MAGIC) {
		base = build_raw(data, size);
		ctl |= data[size - 1] & 0x45;
		in.at = size > 24 ? size - 24 : 0; /* the header rewrite below */
	} else
		base = build_structured(&in, &segsize, &ctl);
	if (!base)
		return 0;
	struct pt_session *s;
	char err[256];
	if (pt_session_from_mem(base, segsize, &s, err, sizeof err) != 0) {
		free(base);
		return 0;
	}
	struct pt_trace *t = pt_trace_new(8u << 20);
	struct pt_shm_header *h = base;
	/* a hostile producer rewrites the layout after the reader validated it */
	if (ctl & 0x40) {
		h->nrings = (uint32_t)take_u(&in, 4);
		h->ring_slots = (uint32_t)take_u(&in, 4);
		h->rings_offset = take_u(&in, 4);
		h->ring_stride = take_u(&in, 4);
		h->strings_offset = take_u(&in, 4);
		h->strings_bytes = (uint32_t)take_u(&in, 4);
	}
	pt_session_drain(s, t, 1000);
	/* the producer moves on: one more record in each ring, ring 0 reused */
	if (ctl & 0x08) {
		for (uint32_t i = 0; i < s->nrings; i++)
			ring_at(s, i)->head++;
		ring_at(s, 0)->generation++;
		pt_session_drain(s, t, 2000);
	}
	/* every thread exits: drained rings are freed */
	if (ctl & 0x10) {
		for (uint32_t i = 0; i < s->nrings; i++)
			ring_at(s, i)->state = PT_SHM_RING_EXITED;
		pt_session_drain(s, t, 3000);
	}
	/* the owner exits: the final drain flushes what waits for an EXT;
	 * sometimes into a fresh trace (the reader's caches must follow) */
	struct pt_trace *t2 = (ctl & 0x04) ? pt_trace_new(8u << 20) : NULL;
	if (ctl & 0x20) {
		h->state = PT_SHM_EXITED;
		pt_session_drain(s, t2 ? t2 : t, 4000);
	}
	/* what `proftop ls` shows of it */
	struct pt_session_info info;
	memset(&info, 0, sizeof info);
	struct stat st;
	memset(&st, 0, sizeof st);
	int remove;
	fill_info(&info, s, &st, 1, 0, &remove);
	char desc[256];
	pt_session_describe(s, desc, sizeof desc);
	pt_session_close(s);
	report(t, ctl & 0x01);
	pt_trace_free(t);
	if (t2) {
		report(t2, 0);
		pt_trace_free(t2);
	}
	free(base);
	return 0;
}
