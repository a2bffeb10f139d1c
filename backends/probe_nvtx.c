/*
 * probe_nvtx.c - NVTX injection: libproftop.so exports
 * InitializeInjectionNvtx2, which every NVTX v3 instance (each library that
 * carries its own header-only NVTX copy) calls once when it first runs with
 * NVTX_INJECTION64_PATH pointing here (the probe's constructor sets it).
 * We fill the CORE and CORE2 function tables, so annotated programs report
 * their ranges with no code change:
 *   push/pop ranges        -> USER_DEFINED, or the phase kind when the name
 *                             is a phase (PROFTOP_NVTX_PHASES, see probe_names.c)
 *   domain push/pop        -> USER_DEFINED named "domain: message"
 *   marks                  -> INSTANT
 *   start/end ranges       -> one record on the thread that ends them
 * Callbacks run concurrently on the application's threads; nothing here
 * takes a lock on the event path (domain creation does, once per domain).
 * The NVTX types are declared here (the ABI is frozen); with CUDA's headers
 * present they are checked against nvToolsExt.h at compile time.
 * A later CUDA/CUPTI backend adds `int InitializeInjection(void)` (the
 * CUDA_INJECTION64_PATH entry, PROBE-NOTES 3) next to this entry point.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "probe_int.h"

#define G pt_probe_g

/* --- the NVTX v3 injection ABI (nvtx3/nvtxDetail/nvtxTypes.h) --- */
enum { NV_ETID_CALLBACKS = 1, NV_ETID_VERSIONINFO = 3 };
enum { NV_MODULE_CORE = 1, NV_MODULE_CORE2 = 5 };
enum {
	NV_CORE_MarkEx = 1, NV_CORE_MarkA = 2, NV_CORE_MarkW = 3, NV_CORE_RangeStartEx = 4,
	NV_CORE_RangeStartA = 5, NV_CORE_RangeStartW = 6, NV_CORE_RangeEnd = 7,
	NV_CORE_RangePushEx = 8, NV_CORE_RangePushA = 9, NV_CORE_RangePushW = 10,
	NV_CORE_RangePop = 11, NV_CORE_NameOsThreadA = 14,
};
enum {
	NV_CORE2_DomainMarkEx = 1, NV_CORE2_DomainRangeStartEx = 2, NV_CORE2_DomainRangeEnd = 3,
	NV_CORE2_DomainRangePushEx = 4, NV_CORE2_DomainRangePop = 5,
	NV_CORE2_DomainRegisterStringA = 10, NV_CORE2_DomainRegisterStringW = 11,
	NV_CORE2_DomainCreateA = 12, NV_CORE2_DomainCreateW = 13, NV_CORE2_DomainDestroy = 14,
};
enum { NV_MSG_ASCII = 1, NV_MSG_UNICODE = 2, NV_MSG_REGISTERED = 3 };

typedef void (*nv_fn)(void);
typedef nv_fn **nv_table;
typedef const void *(*nv_get_export_table)(uint32_t id);
struct nv_etbl_callbacks {
	size_t struct_size;
	int (*GetModuleFunctionTable)(int module, nv_table *out_table, unsigned *out_size);
};
struct nv_etbl_version {
	size_t struct_size;
	uint32_t version;
	uint32_t reserved0;
	void (*SetInjectionNvtxVersion)(uint32_t version);
};
struct nv_attr {
	uint16_t version;
	uint16_t size;
	uint32_t category;
	int32_t color_type;
	uint32_t color;
	int32_t payload_type;
	int32_t reserved0;
	uint64_t payload;
	int32_t message_type;
	union {
		const char *ascii;
		const wchar_t *unicode;
		const void *registered;
	} message;
};

#if defined(PT_HAVE_CUDA_HEADERS)
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
_Static_assert((int)NV_CORE_RangePushA == (int)NVTX_CBID_CORE_RangePushA, "cbid");
_Static_assert((int)NV_CORE_NameOsThreadA == (int)NVTX_CBID_CORE_NameOsThreadA, "cbid");
_Static_assert((int)NV_CORE2_DomainDestroy == (int)NVTX_CBID_CORE2_DomainDestroy, "cbid");
_Static_assert((int)NV_MODULE_CORE2 == (int)NVTX_CB_MODULE_CORE2, "module");
_Static_assert((int)NV_ETID_VERSIONINFO == (int)NVTX_ETID_VERSIONINFO, "etid");
_Static_assert(sizeof(struct nv_attr) == sizeof(nvtxEventAttributes_t), "attributes");
_Static_assert(offsetof(struct nv_attr, message) == offsetof(nvtxEventAttributes_t, message),
	       "attributes");
_Static_assert(offsetof(struct nv_attr, message_type) ==
		       offsetof(nvtxEventAttributes_t, messageType),
	       "attributes");
#endif

/* --- domains: handles are pointers to these; index 0 is the default domain --- */
#define MAX_DOMAINS 1024u
struct nv_domain {
	uint16_t index;
	uint16_t prefix_len;
	char prefix[]; /* "name: " */
};
static struct nv_domain *g_domains[MAX_DOMAINS];
static uint32_t g_ndomains = 1;
static struct nv_domain g_overflow_domain; /* index 0 when the table is full */
static pthread_mutex_t g_domains_lock = PTHREAD_MUTEX_INITIALIZER;

const char *pt_probe_domain_prefix(uint16_t dom, size_t *len)
{
	struct nv_domain *d = dom < MAX_DOMAINS ? __atomic_load_n(&g_domains[dom], __ATOMIC_ACQUIRE)
						: NULL;
	*len = d ? d->prefix_len : 0;
	return d ? d->prefix : NULL;
}

static uint16_t dom_index(const void *handle)
{
	return handle ? ((const struct nv_domain *)handle)->index : 0;
}

static void *domain_create(const char *name)
{
	size_t n = strnlen(name ? name : "", 200);
	pthread_mutex_lock(&g_domains_lock);
	struct nv_domain *d = &g_overflow_domain;
	for (uint32_t i = 1; i < g_ndomains; i++)
		if (g_domains[i]->prefix_len == n + 2 && memcmp(g_domains[i]->prefix, name, n) == 0) {
			d = g_domains[i];
			goto out;
		}
	if (g_ndomains < MAX_DOMAINS) {
		d = calloc(1, sizeof *d + n + 3);
		if (!d) {
			d = &g_overflow_domain;
			goto out;
		}
		d->index = (uint16_t)g_ndomains;
		d->prefix_len = (uint16_t)(n + 2);
		memcpy(d->prefix, name, n);
		memcpy(d->prefix + n, ": ", 3);
		__atomic_store_n(&g_domains[g_ndomains], d, __ATOMIC_RELEASE);
		g_ndomains++;
	}
out:
	pthread_mutex_unlock(&g_domains_lock);
	return d;
}

static void wide_to_ascii(const wchar_t *w, char *buf, size_t len)
{
	size_t i = 0;
	for (; w && w[i] && i + 1 < len; i++)
		buf[i] = w[i] > 0 && w[i] < 0x7f ? (char)w[i] : '?';
	buf[i] = 0;
}

/* A name interned whole (no pointer cache): for wide and registered strings. */
static uint32_t intern_full(uint16_t dom, const char *s)
{
	size_t plen = 0, n = strnlen(s, 1024);
	const char *prefix = dom ? pt_probe_domain_prefix(dom, &plen) : NULL;
	char buf[1024 + 256];
	if (plen > 255)
		plen = 255;
	if (prefix)
		memcpy(buf, prefix, plen);
	memcpy(buf + plen, s, n);
	return pt_probe_intern(buf, plen + n);
}

/* The name of an event; 0 with *drop set when it did not fit the area. */
static uint32_t attr_name(struct pt_tstate *t, const struct nv_attr *a, uint16_t dom,
			  uint8_t *kind, int *drop)
{
	*kind = PT_KIND_USER_DEFINED;
	*drop = 0;
	if (!a || a->size < sizeof(struct nv_attr))
		return 0;
	uint32_t off = 0;
	switch (a->message_type) {
	case NV_MSG_ASCII:
		if (!a->message.ascii)
			return 0;
		off = pt_probe_name(t, a->message.ascii, dom, kind);
		break;
	case NV_MSG_UNICODE: {
		char buf[1024];
		wide_to_ascii(a->message.unicode, buf, sizeof buf);
		off = intern_full(dom, buf);
		if (!dom)
			*kind = pt_probe_phase_kind(buf, strlen(buf));
		break;
	}
	case NV_MSG_REGISTERED:
		off = (uint32_t)(uintptr_t)a->message.registered;
		if (off >= G.strings_bytes || (off & 7u))
			return 0;
		if (off && !dom) {
			const struct pt_shm_str *e = (const void *)(G.strings + off);
			*kind = pt_probe_phase_kind(e->bytes, e->len);
		}
		return off;
	default:
		return 0;
	}
	*drop = !off;
	return off;
}

static uint16_t depth16(const struct pt_tstate *t)
{
	return (uint16_t)(t->depth < 0xffff ? t->depth : 0xffff);
}

/* --- push / pop --- */
static int push_msg(const char *msg, uint16_t dom)
{
	struct pt_tstate *t = pt_probe_self();
	if (PT_UNLIKELY(PT_TS_SPECIAL(t)))
		return 0;
	uint8_t kind = PT_KIND_USER_DEFINED;
	uint32_t off = msg ? pt_probe_name(t, msg, dom, &kind) : 0;
	return pt_probe_push(t, off, msg && !off ? PT_PROBE_KIND_DROP : kind, dom);
}

static int push_attr(const struct nv_attr *a, uint16_t dom)
{
	struct pt_tstate *t = pt_probe_self();
	if (PT_UNLIKELY(PT_TS_SPECIAL(t)))
		return 0;
	uint8_t kind;
	int drop;
	uint32_t off = attr_name(t, a, dom, &kind, &drop);
	return pt_probe_push(t, off, drop ? PT_PROBE_KIND_DROP : kind, dom);
}

static int pop_dom(uint16_t dom)
{
	struct pt_tstate *t = pt_probe_self();
	if (PT_UNLIKELY(PT_TS_SPECIAL(t))) {
		if (t == PT_TS_NORING)
			pt_probe_count_noring();
		return 0;
	}
	return pt_probe_pop(t, dom);
}

static int nv_RangePushA(const char *msg)
{
	return push_msg(msg, 0);
}

static int nv_RangePushW(const wchar_t *msg)
{
	char buf[1024];
	wide_to_ascii(msg, buf, sizeof buf);
	struct pt_tstate *t = pt_probe_self();
	if (PT_UNLIKELY(PT_TS_SPECIAL(t)))
		return 0;
	uint32_t off = intern_full(0, buf);
	return pt_probe_push(t, off, off ? pt_probe_phase_kind(buf, strlen(buf)) : PT_PROBE_KIND_DROP,
			     0);
}

static int nv_RangePushEx(const struct nv_attr *a)
{
	return push_attr(a, 0);
}

static int nv_RangePop(void)
{
	return pop_dom(0);
}

static int nv_DomainRangePushEx(const void *domain, const struct nv_attr *a)
{
	return push_attr(a, dom_index(domain));
}

static int nv_DomainRangePop(const void *domain)
{
	return pop_dom(dom_index(domain));
}

/* --- marks --- */
static void mark_named(struct pt_tstate *t, uint32_t off)
{
	uint64_t now = pt_clock_now(&t->clk);
	pt_probe_emit(t, now, now, 0, 0, off, PT_KIND_INSTANT, 0, depth16(t));
}

static void mark_attr(const void *domain, const struct nv_attr *a)
{
	struct pt_tstate *t = pt_probe_self();
	if (PT_UNLIKELY(PT_TS_SPECIAL(t))) {
		if (t == PT_TS_NORING)
			pt_probe_count_noring();
		return;
	}
	uint8_t kind;
	int drop;
	uint32_t off = attr_name(t, a, dom_index(domain), &kind, &drop);
	if (!drop)
		mark_named(t, off);
}

static void nv_MarkEx(const struct nv_attr *a)
{
	mark_attr(NULL, a);
}

static void nv_DomainMarkEx(const void *domain, const struct nv_attr *a)
{
	mark_attr(domain, a);
}

static void nv_MarkA(const char *msg)
{
	struct pt_tstate *t = pt_probe_self();
	if (PT_UNLIKELY(PT_TS_SPECIAL(t))) {
		if (t == PT_TS_NORING)
			pt_probe_count_noring();
		return;
	}
	uint8_t kind;
	uint32_t off = msg ? pt_probe_name(t, msg, 0, &kind) : 0;
	if (!msg || off)
		mark_named(t, off);
}

static void nv_MarkW(const wchar_t *msg)
{
	char buf[1024];
	wide_to_ascii(msg, buf, sizeof buf);
	nv_MarkA(buf);
}

/* --- start/end ranges: may end on another thread. A fixed table of ranges
 * in flight, indexed by id; a slot is claimed by swapping its id to BUSY
 * before writing, so an End that reads the fields and then CASes the id
 * away knows they were not rewritten meanwhile. --- */
#define STARTS 4096u
#define BUSY UINT64_MAX
static struct {
	uint64_t id;
	uint64_t start_ns;
	uint32_t name;
	uint32_t kind;
} g_starts[STARTS];
static uint64_t g_next_id;

static uint64_t range_start(uint32_t off, uint8_t kind)
{
	struct pt_tstate *t = pt_probe_self();
	if (t == PT_TS_DEAD)
		return 0;
	uint64_t now = PT_TS_SPECIAL(t) ? pt_clock_mono_ns() : pt_clock_now(&t->clk);
	uint64_t id = __atomic_add_fetch(&g_next_id, 1, __ATOMIC_RELAXED);
	if (id == BUSY)
		id = __atomic_add_fetch(&g_next_id, 1, __ATOMIC_RELAXED);
	unsigned i = (unsigned)(id & (STARTS - 1));
	__atomic_exchange_n(&g_starts[i].id, BUSY, __ATOMIC_ACQUIRE);
	__atomic_store_n(&g_starts[i].start_ns, now, __ATOMIC_RELAXED);
	__atomic_store_n(&g_starts[i].name, off, __ATOMIC_RELAXED);
	__atomic_store_n(&g_starts[i].kind, kind, __ATOMIC_RELAXED);
	__atomic_store_n(&g_starts[i].id, id, __ATOMIC_RELEASE);
	return id;
}

static uint64_t start_attr(const void *domain, const struct nv_attr *a)
{
	struct pt_tstate *t = pt_probe_self();
	if (PT_UNLIKELY(PT_TS_SPECIAL(t)))
		return t == PT_TS_NORING ? range_start(0, PT_PROBE_KIND_DROP) : 0;
	uint8_t kind;
	int drop;
	uint32_t off = attr_name(t, a, dom_index(domain), &kind, &drop);
	return range_start(off, drop ? PT_PROBE_KIND_DROP : kind);
}

static uint64_t nv_RangeStartEx(const struct nv_attr *a)
{
	return start_attr(NULL, a);
}

static uint64_t nv_DomainRangeStartEx(const void *domain, const struct nv_attr *a)
{
	return start_attr(domain, a);
}

static uint64_t nv_RangeStartA(const char *msg)
{
	struct pt_tstate *t = pt_probe_self();
	if (PT_UNLIKELY(PT_TS_SPECIAL(t)))
		return t == PT_TS_NORING ? range_start(0, PT_PROBE_KIND_DROP) : 0;
	uint8_t kind = PT_KIND_USER_DEFINED;
	uint32_t off = msg ? pt_probe_name(t, msg, 0, &kind) : 0;
	return range_start(off, msg && !off ? PT_PROBE_KIND_DROP : kind);
}

static uint64_t nv_RangeStartW(const wchar_t *msg)
{
	char buf[1024];
	wide_to_ascii(msg, buf, sizeof buf);
	uint32_t off = intern_full(0, buf);
	return range_start(off, off ? pt_probe_phase_kind(buf, strlen(buf)) : PT_PROBE_KIND_DROP);
}

static void nv_RangeEnd(uint64_t id)
{
	if (id == 0 || id == BUSY)
		return;
	struct pt_tstate *t = pt_probe_self();
	if (PT_UNLIKELY(PT_TS_SPECIAL(t))) {
		if (t == PT_TS_NORING)
			pt_probe_count_noring();
		return;
	}
	uint64_t now = pt_clock_now(&t->clk);
	unsigned i = (unsigned)(id & (STARTS - 1));
	uint64_t cur = __atomic_load_n(&g_starts[i].id, __ATOMIC_ACQUIRE);
	if (cur != id)
		goto lost;
	uint64_t start = __atomic_load_n(&g_starts[i].start_ns, __ATOMIC_RELAXED);
	uint32_t off = __atomic_load_n(&g_starts[i].name, __ATOMIC_RELAXED);
	uint32_t kind = __atomic_load_n(&g_starts[i].kind, __ATOMIC_RELAXED);
	if (!__atomic_compare_exchange_n(&g_starts[i].id, &cur, 0, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		goto lost;
	if (kind != PT_PROBE_KIND_DROP)
		pt_probe_emit(t, now, start, now > start ? now - start : 0, 0, off, (uint8_t)kind, 0,
			      depth16(t));
	return;
lost:
	/* more than STARTS ranges were started after this one, or it ended twice */
	pt_probe_count_dropped(t);
}

static void nv_DomainRangeEnd(const void *domain, uint64_t id)
{
	nv_RangeEnd(id);
}

/* --- names --- */
static void nv_NameOsThreadA(uint32_t tid, const char *name)
{
	struct pt_tstate *t = pt_probe_self();
	if (PT_UNLIKELY(PT_TS_SPECIAL(t)) || !name || (int32_t)tid != t->tid)
		return; /* only the calling thread's own name reaches its ring */
	uint32_t off = pt_probe_intern(name, strnlen(name, 1024));
	if (!off)
		return;
	uint64_t now = pt_clock_now(&t->clk);
	pt_probe_emit(t, now, now, 0, 0, off, PT_SHM_REC_THREAD_NAME, 0, 0);
}

static const void *nv_DomainRegisterStringA(const void *domain, const char *s)
{
	if (!s || __atomic_load_n(&G.state, __ATOMIC_ACQUIRE) != PT_PROBE_ON || G.forked)
		return NULL;
	return (const void *)(uintptr_t)intern_full(dom_index(domain), s);
}

static const void *nv_DomainRegisterStringW(const void *domain, const wchar_t *s)
{
	char buf[1024];
	wide_to_ascii(s, buf, sizeof buf);
	return nv_DomainRegisterStringA(domain, buf);
}

static void *nv_DomainCreateA(const char *name)
{
	return domain_create(name);
}

static void *nv_DomainCreateW(const wchar_t *name)
{
	char buf[256];
	wide_to_ascii(name, buf, sizeof buf);
	return domain_create(buf);
}

static void nv_DomainDestroy(const void *domain)
{
	/* kept: other threads may still be inside a call with this handle */
}

void pt_probe_nvtx_reset(void)
{
	pthread_mutex_init(&g_domains_lock, NULL);
}

struct slot {
	unsigned cbid;
	nv_fn fn;
};

static void fill(const struct nv_etbl_callbacks *cb, int module, const struct slot *s, size_t n)
{
	nv_table table = NULL;
	unsigned size = 0;
	if (!cb->GetModuleFunctionTable(module, &table, &size) || !table)
		return;
	for (size_t i = 0; i < n; i++)
		if (s[i].cbid < size && table[s[i].cbid])
			*table[s[i].cbid] = s[i].fn;
}

#define FN(f) ((nv_fn)(void (*)(void))(f))

PT_EXPORT int InitializeInjectionNvtx2(nv_get_export_table get)
{
	if (!get || __atomic_load_n(&G.state, __ATOMIC_ACQUIRE) != PT_PROBE_ON || G.forked)
		return 0; /* NVTX then turns every call of that instance into a no-op */
	const struct nv_etbl_callbacks *cb = get(NV_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable)
		return 0;
	const struct nv_etbl_version *vi = get(NV_ETID_VERSIONINFO);
	if (vi && vi->struct_size >= sizeof *vi && vi->SetInjectionNvtxVersion)
		vi->SetInjectionNvtxVersion(3);
	static const struct slot core[] = {
		{NV_CORE_MarkEx, FN(nv_MarkEx)},
		{NV_CORE_MarkA, FN(nv_MarkA)},
		{NV_CORE_MarkW, FN(nv_MarkW)},
		{NV_CORE_RangeStartEx, FN(nv_RangeStartEx)},
		{NV_CORE_RangeStartA, FN(nv_RangeStartA)},
		{NV_CORE_RangeStartW, FN(nv_RangeStartW)},
		{NV_CORE_RangeEnd, FN(nv_RangeEnd)},
		{NV_CORE_RangePushEx, FN(nv_RangePushEx)},
		{NV_CORE_RangePushA, FN(nv_RangePushA)},
		{NV_CORE_RangePushW, FN(nv_RangePushW)},
		{NV_CORE_RangePop, FN(nv_RangePop)},
		{NV_CORE_NameOsThreadA, FN(nv_NameOsThreadA)},
	};
	static const struct slot core2[] = {
		{NV_CORE2_DomainMarkEx, FN(nv_DomainMarkEx)},
		{NV_CORE2_DomainRangeStartEx, FN(nv_DomainRangeStartEx)},
		{NV_CORE2_DomainRangeEnd, FN(nv_DomainRangeEnd)},
		{NV_CORE2_DomainRangePushEx, FN(nv_DomainRangePushEx)},
		{NV_CORE2_DomainRangePop, FN(nv_DomainRangePop)},
		{NV_CORE2_DomainRegisterStringA, FN(nv_DomainRegisterStringA)},
		{NV_CORE2_DomainRegisterStringW, FN(nv_DomainRegisterStringW)},
		{NV_CORE2_DomainCreateA, FN(nv_DomainCreateA)},
		{NV_CORE2_DomainCreateW, FN(nv_DomainCreateW)},
		{NV_CORE2_DomainDestroy, FN(nv_DomainDestroy)},
	};
	fill(cb, NV_MODULE_CORE, core, sizeof core / sizeof core[0]);
	fill(cb, NV_MODULE_CORE2, core2, sizeof core2 / sizeof core2[0]);
	return 1;
}
