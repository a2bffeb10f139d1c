/*
 * probe_cupti_xlate.c - CUPTI activity records -> session records (see
 * probe_cupti_xlate.h). The hot path is one switch on the record kind, a
 * timestamp check, a pointer-keyed name cache and two 32-byte stores; the
 * first sight of a kernel name pays for demangling and interning. Record
 * layouts are those of the CUDA headers this file is built with (CUDA 13:
 * Kernel10, Memcpy6, MemcpyPtoP4, Memset4, ExternalCorrelation);
 * probe_cupti.c refuses a libcupti of another major version, whose records
 * would have other layouts.
 */
#include "probe_cupti_xlate.h"

#include <stdlib.h>
#include <string.h>

#include "proftop/event.h"

#ifdef PT_HAVE_CUDA_HEADERS
#include <cupti_activity.h>
#endif

static int lower_prefix(const char *s, const char *p)
{
	for (; *p; s++, p++) {
		char c = *s;
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != *p)
			return 0;
	}
	return 1;
}

int pt_cupti_is_comm_name(const char *s)
{
	if (!s)
		return 0;
	if (s[0] == '_' && s[1] == 'Z') { /* mangled: _Z<len><name> or _ZN<len><ns>... */
		s += 2;
		if (*s == 'N')
			s++;
		while (*s >= '0' && *s <= '9')
			s++;
	} else if (!strncmp(s, "void ", 5)) { /* demangled template: return type first */
		s += 5;
	}
	return lower_prefix(s, "nccl") || lower_prefix(s, "rccl");
}

void pt_cupti_xlate_init(struct pt_cupti_xlate *x, pt_cupti_intern_fn intern, void *ctx,
			 pt_cupti_demangle_fn demangle)
{
	memset(x, 0, sizeof *x);
	x->intern = intern;
	x->intern_ctx = ctx;
	x->demangle = demangle;
}

#ifdef PT_HAVE_CUDA_HEADERS

int pt_cupti_xlate_available(void)
{
	return 1;
}

static uint32_t intern_str(struct pt_cupti_xlate *x, const char *s)
{
	return x->intern(x->intern_ctx, s, strlen(s));
}

/* First sight of a kernel name pointer (or a pointer reused for another name). */
static struct pt_cupti_name *name_miss(struct pt_cupti_xlate *x, struct pt_cupti_name *e,
				       const char *name)
{
	const char *shown = name;
	char *dem = NULL;
	if (x->demangle && name[0] == '_' && name[1] == 'Z') {
		int st = -1;
		dem = x->demangle(name, NULL, NULL, &st);
		if (st == 0 && dem)
			shown = dem;
	}
	e->ptr = name;
	e->off = intern_str(x, shown);
	e->kind = pt_cupti_is_comm_name(shown) || pt_cupti_is_comm_name(name)
		      ? PT_KIND_COMMUNICATION
		      : PT_KIND_KERNEL;
	strncpy(e->prefix, name, sizeof e->prefix);
	free(dem);
	return e;
}

static inline struct pt_cupti_name *kernel_name(struct pt_cupti_xlate *x, const char *name)
{
	uintptr_t p = (uintptr_t)name;
	struct pt_cupti_name *e = &x->names[((p >> 3) ^ (p >> 13)) & (PT_CUPTI_NAME_CACHE - 1)];
	if (__builtin_expect(e->ptr == name && e->off &&
				     strncmp(name, e->prefix, sizeof e->prefix) == 0,
			     1))
		return e;
	return name_miss(x, e, name);
}

static uint32_t copy_name(struct pt_cupti_xlate *x, unsigned kind)
{
	static const char *const names[16] = {
	    "Memcpy", "Memcpy HtoD", "Memcpy DtoH", "Memcpy HtoA", "Memcpy AtoH", "Memcpy AtoA",
	    "Memcpy AtoD", "Memcpy DtoA", "Memcpy DtoD", "Memcpy HtoH", "Memcpy PtoP"};
	kind &= 15u;
	if (!x->copy_name[kind])
		x->copy_name[kind] = intern_str(x, names[kind] ? names[kind] : "Memcpy");
	return x->copy_name[kind];
}

static inline uint64_t ext_of(const struct pt_cupti_xlate *x, uint32_t corr)
{
	const struct pt_cupti_ext *e = &x->ext[corr & (PT_CUPTI_EXT_TABLE - 1)];
	return e->corr == corr ? e->id : 0;
}

/* Writes the event + EXT pair; 0 when the timestamps are unusable. */
static inline int device_pair(struct pt_cupti_xlate *x, struct pt_shm_rec out[2], uint64_t start,
			      uint64_t end, uint64_t arg, uint32_t name, uint8_t kind,
			      uint32_t corr, uint32_t device, uint32_t stream)
{
	if (__builtin_expect(start == 0 || end < start || start <= x->ts_offset_ns, 0)) {
		x->bad_ts++;
		return 0;
	}
	out[0].start_ns = start - x->ts_offset_ns;
	out[0].dur_ns = end - start;
	out[0].arg = arg;
	out[0].name = name;
	out[0].kind = kind;
	out[0].flags = 0;
	out[0].aux = 0;
	out[1].start_ns = corr;
	out[1].dur_ns = (uint64_t)device << 32 | stream;
	out[1].arg = ext_of(x, corr);
	out[1].name = 0;
	out[1].kind = PT_SHM_REC_EXT;
	out[1].flags = 0;
	out[1].aux = 0;
	return 2;
}

int pt_cupti_xlate(struct pt_cupti_xlate *x, const void *rec, struct pt_shm_rec out[2])
{
	const CUpti_Activity *a = rec;
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL: {
		const CUpti_ActivityKernel10 *k = rec;
		struct pt_cupti_name *e;
		if (k->name) {
			e = kernel_name(x, k->name);
		} else {
			static struct pt_cupti_name unnamed = {NULL, 0, PT_KIND_KERNEL, ""};
			e = &unnamed;
		}
		int n = device_pair(x, out, k->start, k->end, 0, e->off, e->kind, k->correlationId,
				    k->deviceId, k->streamId);
		if (n) {
			if (e->kind == PT_KIND_COMMUNICATION)
				x->comms++;
			else
				x->kernels++;
		}
		return n;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = rec;
		int n = device_pair(x, out, m->start, m->end, m->bytes, copy_name(x, m->copyKind),
				    PT_KIND_MEMCPY, m->correlationId, m->deviceId, m->streamId);
		x->memcpys += n != 0;
		return n;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY2: {
		const CUpti_ActivityMemcpyPtoP4 *m = rec;
		int n = device_pair(x, out, m->start, m->end, m->bytes,
				    copy_name(x, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP), PT_KIND_MEMCPY,
				    m->correlationId, m->deviceId, m->streamId);
		x->memcpys += n != 0;
		return n;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = rec;
		if (!x->memset_name)
			x->memset_name = intern_str(x, "Memset");
		int n = device_pair(x, out, m->start, m->end, m->bytes, x->memset_name,
				    PT_KIND_MEMSET, m->correlationId, m->deviceId, m->streamId);
		x->memsets += n != 0;
		return n;
	}
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
		/* Comes before the API record it names; the device records follow later. */
		const CUpti_ActivityExternalCorrelation *c = rec;
		struct pt_cupti_ext *e = &x->ext[c->correlationId & (PT_CUPTI_EXT_TABLE - 1)];
		e->corr = c->correlationId;
		e->id = c->externalId;
		x->ext_records++;
		return 0;
	}
	default:
		x->ignored++;
		return 0;
	}
}

#else /* built without the CUDA headers: nothing to translate */

int pt_cupti_xlate_available(void)
{
	return 0;
}

int pt_cupti_xlate(struct pt_cupti_xlate *x, const void *rec, struct pt_shm_rec out[2])
{
	(void)rec;
	(void)out;
	x->ignored++;
	return 0;
}

#endif
