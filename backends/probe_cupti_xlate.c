/*
 * probe_cupti_xlate.c - CUPTI activity records -> session records (see
 * probe_cupti_xlate.h). The hot path is one switch on the record kind,
 * loads at the offsets of the running CUPTI's layout, a clock map, a
 * pointer-keyed name cache and two 32-byte stores; the first sight of a
 * kernel name pays for demangling and interning.
 */
#include "probe_cupti_xlate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/event.h"

/*
 * The rows: record sizes per CUPTI release, checked against the real
 * structs of the CUDA 11.8 and 13 headers by tests/unit/test_probe_cupti.c
 * (Kernel8/9/10, Memcpy5/6, MemcpyPtoP4, Memset4, ExternalCorrelation all
 * keep the offsets below).
 */
#define OFFSETS                                                                                    \
	.k_start = 16, .k_end = 24, .k_device = 40, .k_stream = 48, .k_corr = 92, .k_name = 104,  \
	.m_copy_kind = 4, .m_bytes = 8, .m_start = 16, .m_end = 24, .m_device = 32,                \
	.m_stream = 40, .m_corr = 44, .p_bytes = 8, .p_start = 16, .p_end = 24, .p_device = 32,    \
	.p_stream = 40, .p_corr = 60, .s_bytes = 8, .s_start = 16, .s_end = 24, .s_device = 32,    \
	.s_stream = 40, .s_corr = 44, .e_ext_kind = 4, .e_ext_id = 8, .e_corr = 16

static const struct pt_cupti_layout layouts[] = {
    {18, "11.8", "Kernel8", "Memcpy5", 200, 88, 96, 88, OFFSETS},
    {19, "12.0-12.6", "Kernel9", "Memcpy5", 208, 88, 96, 88, OFFSETS},
    {26, "12.8-12.9", "Kernel9", "Memcpy6", 208, 96, 96, 88, OFFSETS},
    {130000, "13.0", "Kernel10", "Memcpy6", 216, 96, 96, 88, OFFSETS},
    /* 13.1 added the launch priority (Kernel11); its size is not known
     * here, so the spacing of its records is not checked (0) */
    {130100, "13.1", "Kernel11", "Memcpy6", 0, 96, 96, 88, OFFSETS},
};
#define NLAYOUTS (sizeof layouts / sizeof *layouts)
#define NEWEST_KNOWN 130199u /* versions above this are newer than any row */

const struct pt_cupti_layout *pt_cupti_layout_for(uint32_t version, int *newer)
{
	if (newer)
		*newer = version > NEWEST_KNOWN;
	/* 13.x numbers are xxyyzz; up to 12.9 they were small integers */
	if (version < layouts[0].min_version || (version > 1000 && version < 130000))
		return NULL;
	const struct pt_cupti_layout *l = &layouts[0];
	for (size_t i = 0; i < NLAYOUTS; i++)
		if (version >= layouts[i].min_version)
			l = &layouts[i];
	return l;
}

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

void pt_cupti_xlate_init(struct pt_cupti_xlate *x, const struct pt_cupti_layout *lay,
			 struct pt_cupti_clock *clock, pt_cupti_intern_fn intern, void *ctx,
			 pt_cupti_demangle_fn demangle)
{
	memset(x, 0, sizeof *x);
	x->lay = lay ? lay : &layouts[NLAYOUTS - 1];
	x->clock = clock;
	x->intern = intern;
	x->intern_ctx = ctx;
	x->demangle = demangle;
}

/* Records are 8-byte aligned and the offsets natural: plain loads. */
static inline uint32_t u8_at(const void *r, unsigned off)
{
	return ((const uint8_t *)r)[off];
}

static inline uint32_t u32_at(const void *r, unsigned off)
{
	uint32_t v;
	memcpy(&v, (const char *)r + off, sizeof v);
	return v;
}

static inline uint64_t u64_at(const void *r, unsigned off)
{
	uint64_t v;
	memcpy(&v, (const char *)r + off, sizeof v);
	return v;
}

static inline const char *ptr_at(const void *r, unsigned off)
{
	const char *v;
	memcpy(&v, (const char *)r + off, sizeof v);
	return v;
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
	if (__builtin_expect(start == 0 || end < start, 0)) {
		x->bad_ts++;
		return 0;
	}
	if (x->clock && !pt_cupti_clock_map(x->clock, corr, start, end, x->now_ns, &start, &end)) {
		x->bad_clock++;
		return 0;
	}
	out[0].start_ns = start;
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
	const struct pt_cupti_layout *l = x->lay;
	switch (u32_at(rec, 0)) {
	case PT_CUPTI_KIND_CONCURRENT_KERNEL:
	case PT_CUPTI_KIND_KERNEL: {
		if (x->prev_kernel) {
			uint64_t stride = (uint64_t)((const char *)rec - (const char *)x->prev_kernel);
			if (__builtin_expect(stride != l->kernel_bytes, 0) && l->kernel_bytes) {
				x->odd_stride++;
				x->last_stride = stride;
			}
		}
		x->prev_kernel = rec;
		const char *kname = ptr_at(rec, l->k_name);
		struct pt_cupti_name *e;
		if (kname) {
			e = kernel_name(x, kname);
		} else {
			static struct pt_cupti_name unnamed = {NULL, 0, PT_KIND_KERNEL, ""};
			e = &unnamed;
		}
		int n = device_pair(x, out, u64_at(rec, l->k_start), u64_at(rec, l->k_end), 0, e->off,
				    e->kind, u32_at(rec, l->k_corr), u32_at(rec, l->k_device),
				    u32_at(rec, l->k_stream));
		if (n) {
			if (e->kind == PT_KIND_COMMUNICATION)
				x->comms++;
			else
				x->kernels++;
		}
		return n;
	}
	case PT_CUPTI_KIND_MEMCPY: {
		x->prev_kernel = NULL;
		int n = device_pair(x, out, u64_at(rec, l->m_start), u64_at(rec, l->m_end),
				    u64_at(rec, l->m_bytes), copy_name(x, u8_at(rec, l->m_copy_kind)),
				    PT_KIND_MEMCPY, u32_at(rec, l->m_corr), u32_at(rec, l->m_device),
				    u32_at(rec, l->m_stream));
		x->memcpys += n != 0;
		return n;
	}
	case PT_CUPTI_KIND_MEMCPY2: {
		x->prev_kernel = NULL;
		int n = device_pair(x, out, u64_at(rec, l->p_start), u64_at(rec, l->p_end),
				    u64_at(rec, l->p_bytes), copy_name(x, 10 /* PTOP */),
				    PT_KIND_MEMCPY, u32_at(rec, l->p_corr), u32_at(rec, l->p_device),
				    u32_at(rec, l->p_stream));
		x->memcpys += n != 0;
		return n;
	}
	case PT_CUPTI_KIND_MEMSET: {
		x->prev_kernel = NULL;
		if (!x->memset_name)
			x->memset_name = intern_str(x, "Memset");
		int n = device_pair(x, out, u64_at(rec, l->s_start), u64_at(rec, l->s_end),
				    u64_at(rec, l->s_bytes), x->memset_name, PT_KIND_MEMSET,
				    u32_at(rec, l->s_corr), u32_at(rec, l->s_device),
				    u32_at(rec, l->s_stream));
		x->memsets += n != 0;
		return n;
	}
	case PT_CUPTI_KIND_EXTERNAL_CORRELATION: {
		/* Comes before the API record it names; the device records follow later. */
		x->prev_kernel = NULL;
		uint32_t corr = u32_at(rec, l->e_corr);
		struct pt_cupti_ext *e = &x->ext[corr & (PT_CUPTI_EXT_TABLE - 1)];
		e->corr = corr;
		e->id = u64_at(rec, l->e_ext_id);
		x->ext_records++;
		return 0;
	}
	default:
		x->prev_kernel = NULL;
		x->ignored++;
		return 0;
	}
}
