/*
 * chrome_rdr.h - what the Chrome reader's pipeline (chrome_read.c) and its
 * top-level JSON walk (chrome_doc.c) share: the reader's state, a window
 * [keep, end) of text in the current batch with a cursor pos, and the calls
 * that move it. Private to those two files.
 */
#ifndef PT_CHROME_RDR_H
#define PT_CHROME_RDR_H

#include <stddef.h>
#include <stdint.h>

#include "import/chrome_int.h"
#include "proftop/trace.h"

#define MAX_VALUE_BYTES ((size_t)256 << 20) /* one object or key may not pass this */
#define CAPTURE_BYTES	((size_t)1 << 20)   /* top-level values we parse whole */
#define MAX_BATCH_EVENTS 16384u /* objects per batch: bounds its raw records */

struct src;
struct pipe;
struct rdr {
	struct src *src;
	struct pipe *pp;
	struct cr_batch *cur;
	size_t pos, end, keep, obj_start;
	unsigned fills; /* refills so far: the first batches are smaller */
	int eof;
	int have_events;
	int display_unit_set, display_ns;
	int64_t rank, world;
	int native;                        /* otherData.generator is proftop */
	uint64_t imp_warn[PT_WARN__COUNT]; /* otherData.warnings of our export */
	double ns_per_event;               /* otherData.probe_ns_per_event, 0 = none */
	double helper_ns;                  /* otherData.helper_ns_per_call, 0 = none */
	uint64_t helper_calls;             /* otherData.helper_calls */
	char device[64];                   /* otherData.device_name, or Kineto's first
					      deviceProperties name (FLOPs' peak) */
	struct rd_proc {
		int64_t pid, rank;
		char host[64];
	} *procs;                          /* otherData.ranks of our export (a merge) */
	size_t nprocs;
	struct rd_coll {
		int64_t pid, tid;
		char pid_s[32], tid_s[32]; /* the pid / tid given as a string, else "" */
		uint64_t start_ns, end_ns, seq, bytes;
		uint32_t group_size, flags, epoch;
		char op[32], group[64];
	} *colls;                          /* proftopCollectives of our export */
	size_t ncolls;
	uint64_t bad_colls;
	uint64_t bad_elems;
	uint64_t dup_keys; /* top-level keys met again (only the first is read) */
	unsigned seen_keys;
	int err; /* PT_E*, or 1 when stopped by the consumer */
	uint64_t err_off;
	char msg[200];
};

/* Stops rd with code (PT_E*) and msg at offset at of the current batch
 * (the first failure wins). */
void cr_rd_fail(struct rdr *rd, int code, size_t at, const char *msg);
/* Hands the current batch on and starts the next with the unconsumed tail
 * [keep, end); final: nothing follows. 0, or -1 when rd stopped. */
int cr_emit(struct rdr *rd, int final);
/* Makes more text available after rd->end, keeping [rd->keep, end): 1 when
 * bytes were added, 0 at the end of input, -1 on error. */
int cr_refill(struct rdr *rd);
/* The whole input; afterwards the final batch is emitted (also on error). */
void cr_run_top(struct rdr *rd);

#endif
