/*
 * probe_cupti_xlate.h - the pure half of the CUPTI backend: turning CUPTI
 * activity records (kernels, copies, memsets, external correlation) into
 * the session's 32-byte records (shm.h). No dlopen, no CUPTI calls, no
 * probe state, and no CUDA header: names are interned through a callback,
 * timestamps go through a clock map (probe_cupti_clock.h), and records are
 * read through the layout of the CUPTI version that wrote them
 * (pt_cupti_layout_for), never through the structs of the headers this file
 * was built with. A probe built against CUDA 11.8 therefore reads the
 * records of a CUPTI 13 and the other way round. Unit tests and the
 * benchmark feed it synthetic records built from the real structs of each
 * header set.
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

#include "probe_cupti_clock.h"
#include "proftop/shm.h"

#define PT_CUPTI_NAME_CACHE 1024u /* kernel-name pointer cache, power of two */
#define PT_CUPTI_EXT_TABLE 4096u  /* correlation id -> external id, direct mapped */
/* The external-correlation kind proftop would push: CUSTOM2. Kineto uses CUSTOM0/1. */
#define PT_CUPTI_EXT_KIND 5u

/* CUpti_ActivityKind values this translation reads (stable across versions). */
enum {
	PT_CUPTI_KIND_MEMCPY = 1,
	PT_CUPTI_KIND_MEMSET = 2,
	PT_CUPTI_KIND_KERNEL = 3,
	PT_CUPTI_KIND_CONCURRENT_KERNEL = 10,
	PT_CUPTI_KIND_MEMCPY2 = 22,
	PT_CUPTI_KIND_EXTERNAL_CORRELATION = 39,
};

/*
 * Where the fields proftop reads sit in the records one CUPTI version writes
 * (CUPTI writes its newest struct of each kind whatever the client was
 * compiled with): 11.8 writes Kernel8 and Memcpy5, 12.0-12.6 Kernel9 and
 * Memcpy5, 12.8-12.9 Kernel9 and Memcpy6, 13.0 Kernel10 and Memcpy6, 13.1
 * Kernel11. New struct versions so far only append fields, so the offsets
 * are shared and the sizes differ; the sizes let the translation notice a
 * layout it does not know (consecutive records further apart than expected).
 */
struct pt_cupti_layout {
	uint32_t min_version;     /* first CUPTI API version (cuptiGetVersion) of this row */
	const char *cuda;         /* toolkit release(s), for messages */
	const char *kernel_struct, *memcpy_struct;
	uint16_t kernel_bytes, memcpy_bytes, ptop_bytes, memset_bytes;
	/* kernels (CONCURRENT_KERNEL and KERNEL) */
	uint16_t k_start, k_end, k_device, k_stream, k_corr, k_name;
	/* copies (MEMCPY) */
	uint16_t m_copy_kind, m_bytes, m_start, m_end, m_device, m_stream, m_corr;
	/* peer copies (MEMCPY2) */
	uint16_t p_bytes, p_start, p_end, p_device, p_stream, p_corr;
	/* memsets */
	uint16_t s_bytes, s_start, s_end, s_device, s_stream, s_corr;
	/* external correlation */
	uint16_t e_ext_kind, e_ext_id, e_corr;
};

/* The layout of the records of CUPTI API version v (cuptiGetVersion), or NULL
 * for a CUPTI older than 11.8 (API 18). A version newer than every known
 * row gets the newest row (*newer set: offsets assumed, sizes checked). */
const struct pt_cupti_layout *pt_cupti_layout_for(uint32_t version, int *newer);

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
	const struct pt_cupti_layout *lay;
	struct pt_cupti_clock *clock; /* raw CUPTI timestamps -> session clock */
	uint64_t now_ns;              /* session clock when the buffer is translated */
	pt_cupti_intern_fn intern;
	void *intern_ctx;
	pt_cupti_demangle_fn demangle; /* NULL: names as CUPTI gives them */
	uint32_t copy_name[16];        /* "Memcpy HtoD"... by CUpti_ActivityMemcpyKind */
	uint32_t memset_name;
	const void *prev_kernel;       /* the kernel record before, in this buffer */
	struct pt_cupti_name names[PT_CUPTI_NAME_CACHE];
	struct pt_cupti_ext ext[PT_CUPTI_EXT_TABLE];
	/* what went through */
	uint64_t kernels, comms, memcpys, memsets, ext_records;
	uint64_t bad_ts;      /* dropped: start 0 or end < start (incomplete at a forced flush) */
	uint64_t bad_clock;   /* dropped: on no clock the probe can map */
	uint64_t ignored;     /* kinds this translation does not handle */
	uint64_t odd_stride;  /* kernel records further apart than the layout's size */
	uint64_t last_stride; /* the last such distance seen */
};

/* lay: from pt_cupti_layout_for; clock: NULL = timestamps are already on the session clock. */
void pt_cupti_xlate_init(struct pt_cupti_xlate *x, const struct pt_cupti_layout *lay,
			 struct pt_cupti_clock *clock, pt_cupti_intern_fn intern, void *ctx,
			 pt_cupti_demangle_fn demangle);
/* Call before each buffer: the record-spacing check restarts. */
static inline void pt_cupti_xlate_buffer(struct pt_cupti_xlate *x, uint64_t now_ns)
{
	x->prev_kernel = NULL;
	x->now_ns = now_ns;
}
/*
 * Translates one activity record (a const CUpti_Activity *, 8-byte
 * aligned) into out. Returns the number of records written: 2 for a device
 * activity, 0 for a record that only updates state (external correlation),
 * was dropped (counted in bad_ts or bad_clock) or is ignored.
 */
int pt_cupti_xlate(struct pt_cupti_xlate *x, const void *rec, struct pt_shm_rec out[2]);
/* 1 when a (mangled or demangled) kernel name is a collective (nccl..., rccl...). */
int pt_cupti_is_comm_name(const char *name);

#endif
