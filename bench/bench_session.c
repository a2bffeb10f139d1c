/*
 * bench_session.c - drain rate of the session reader: a synthetic segment
 * in memory (8 rings of 16384 records, 64 operator names), refilled by a fake
 * producer between drains (not timed), drained into a trace on one core.
 * Prints events/s; the goal is >= 20 million.
 *
 *   build/bench/bench_session [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../backends/session.c"
#include "../backends/session_copy.c"
#include "../backends/session_capture.c"
#include "../backends/session_open.c"
#include "../backends/session_scan.c"

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 40;
	uint32_t nrings = 8, slots = 16384, sbytes = 1u << 16;
	size_t size = (size_t)pt_shm_segment_bytes(nrings, slots, sbytes);
	void *base = aligned_alloc(4096, size);
	memset(base, 0, size);
	struct pt_shm_header *h = base;
	h->magic = PT_SHM_MAGIC;
	h->abi = PT_SHM_ABI;
	h->header_bytes = PT_SHM_HEADER_BYTES;
	h->segment_bytes = size;
	h->pid = (int32_t)getpid();
	h->nrings = nrings;
	h->ring_slots = slots;
	h->ring_stride = sizeof(struct pt_shm_ring) + (uint64_t)slots * sizeof(struct pt_shm_rec);
	h->rings_offset = PT_SHM_HEADER_BYTES;
	h->strings_offset = h->rings_offset + nrings * h->ring_stride;
	h->strings_bytes = sbytes;
	h->rings_claimed = nrings;
	h->state = PT_SHM_RUNNING;
	char *area = (char *)base + h->strings_offset;
	uint32_t names[64], off = 8;
	for (int i = 0; i < 64; i++) {
		char nm[32];
		uint32_t len = (uint32_t)snprintf(nm, sizeof nm, "aten::op_%d", i);
		memcpy(area + off, &len, 4);
		memcpy(area + off + 8, nm, len + 1);
		names[i] = off;
		off = (off + 8 + len + 1 + 7) & ~7u;
	}
	for (uint32_t r = 0; r < nrings; r++) {
		struct pt_shm_ring *ring = pt_shm_ring_at(base, h, r);
		ring->tid = 1000 + (int32_t)r;
		ring->state = PT_SHM_RING_ACTIVE;
		ring->generation = 1;
	}
	struct pt_session *s;
	char err[256];
	if (pt_session_from_mem(base, size, &s, err, sizeof err)) {
		fprintf(stderr, "bench_session: %s\n", err);
		return 1;
	}
	struct pt_trace *t = pt_trace_new((size_t)4 << 30);
	uint64_t ts = 1, total = 0, spent = 0;
	for (int round = 0; round < rounds; round++) {
		for (uint32_t r = 0; r < nrings; r++) {
			struct pt_shm_ring *ring = pt_shm_ring_at(base, h, r);
			struct pt_shm_rec *recs = pt_shm_ring_recs(ring);
			for (uint32_t i = 0; i < slots; i++) {
				struct pt_shm_rec *rec = &recs[(ring->head + i) & (slots - 1)];
				rec->start_ns = ts;
				rec->dur_ns = 500;
				rec->arg = 0;
				rec->name = names[(ts >> 3) & 63];
				rec->kind = PT_KIND_OPERATOR;
				rec->flags = 0;
				rec->aux = 1;
				ts += 1000;
			}
			ring->head += slots;
		}
		uint64_t t0 = pt_now_ns();
		total += pt_session_drain(s, t, t0);
		spent += pt_now_ns() - t0;
	}
	printf("session drain: %llu events in %.3f s: %.1f million events/s on one core\n",
	       (unsigned long long)total, (double)spent / 1e9, (double)total / ((double)spent / 1e3));
	pt_session_close(s);
	pt_trace_free(t);
	free(base);
	return 0;
}
