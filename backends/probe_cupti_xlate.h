/*
 * probe_cupti_xlate.h - the pure half of the CUPTI backend: turning CUPTI
 * activity records (kernels, copies, memsets, external correlation) into
 * the session's 32-byte records (shm.h). No dlopen, no CUPTI calls, no
 * probe state: names are interned through a callback, so unit tests and the
 * benchmark feed it synthetic records built from the real CUDA 13 structs.
 * This header itself needs no CUDA header; without them
 * (PT_HAVE_CUDA_HEADERS unset) the translation compiles to one that
 * translates nothing.
 *
 * Output per device activity: an event record (kind KERNEL, COMMUNICATION
 * for NCCL/RCCL kernels, MEMCPY or MEMSET; start/dur on the session clock;
 * arg = bytes for copies and memsets; name = interned, demangled kernel
 * name) followed by PT_SHM_REC_EXT (start_ns = correlation id,
 * dur_ns = device << 32 | stream, arg = external correlation id or 0).
 *
 * Threading: one struct pt_cupti_xlate is used by one thread at a time.
 */
#ifndef PT_PROBE_CUPTI_XLATE_H
#define PT_PROBE_CUPTI_XLATE_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/shm.h"

#define PT_CUPTI_NAME_CACHE 1024u /* kernel-name pointer cache, power of two */
#define PT_CUPTI_EXT_TABLE 4096u  /* correlation id -> external id, direct mapped */
/* The external-correlation kind proftop would push: CUSTOM2. Kineto uses CUSTOM0/1. */
#define PT_CUPTI_EXT_KIND 5u

/* Interns s (len bytes, no NUL needed); returns its string offset, 0 if it did not fit. */
typedef uint32_t (*pt_cupti_intern_fn)(void *ctx, const char *s, size_t len);
/* __cxa_demangle's signature: returns malloc'd text, *status 0 on success. */
typedef char *(*pt_cupti_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

struct pt_cupti_name {
	const char *ptr; /* CUPTI shares one name pointer across a kernel's records */
	uint32_t off;
	uint8_t kind;    /* PT_KIND_KERNEL or PT_KIND_COMMUNICATION */
	char prefix[19]; /* first bytes of the name: a reused pointer is caught */
};

struct pt_cupti_ext {
	uint32_t corr;
	uint32_t pad;
	uint64_t id;
};

struct pt_cupti_xlate {
	uint64_t ts_offset_ns; /* subtracted from CUPTI timestamps (0 with the timestamp callback) */
	pt_cupti_intern_fn intern;
	void *intern_ctx;
	pt_cupti_demangle_fn demangle; /* NULL: names as CUPTI gives them */
	uint32_t copy_name[16];        /* "Memcpy HtoD"... by CUpti_ActivityMemcpyKind */
	uint32_t memset_name;
	struct pt_cupti_name names[PT_CUPTI_NAME_CACHE];
	struct pt_cupti_ext ext[PT_CUPTI_EXT_TABLE];
	/* what went through */
	uint64_t kernels, comms, memcpys, memsets, ext_records;
	uint64_t bad_ts;  /* dropped: start 0, end < start, or before the clock offset */
	uint64_t ignored; /* kinds this translation does not handle */
};

void pt_cupti_xlate_init(struct pt_cupti_xlate *x, pt_cupti_intern_fn intern, void *ctx,
			 pt_cupti_demangle_fn demangle);
/*
 * Translates one activity record (a const CUpti_Activity *) into out.
 * Returns the number of records written: 2 for a device activity, 0 for a
 * record that only updates state (external correlation), was dropped
 * (counted in bad_ts) or is ignored.
 */
int pt_cupti_xlate(struct pt_cupti_xlate *x, const void *rec, struct pt_shm_rec out[2]);
/* 1 when a (mangled or demangled) kernel name is a collective (nccl..., rccl...). */
int pt_cupti_is_comm_name(const char *name);
/* 1 when this build translates records (it had the CUDA headers). */
int pt_cupti_xlate_available(void);

#endif
