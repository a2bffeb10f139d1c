/*
 * probe_names.c - names in the session's string area. A name is interned
 * by content once: the entry {len, hash, bytes, NUL} is bump-allocated in
 * the segment (header.strings_used) and its offset is the name id that
 * records carry. A process-memory open-addressing table (hash, offset) is
 * read and written without locks (a compare-and-swap per new name), so
 * interning is async-signal-safe and never waits on another thread. Each
 * thread also keeps a small pointer -> offset cache (probe_int.h) that
 * verifies content, so a caller reusing a buffer for a different name never
 * gets a stale id. Also here: the mapping of NVTX
 * range names onto the step phases (PROFTOP_NVTX_PHASES).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "probe_int.h"

#define G pt_probe_g
#define MAX_NAME_BYTES 1024u /* longer names are truncated */

static uint32_t name_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h ? h : 1;
}

static int entry_is(uint32_t off, const char *s, size_t len)
{
	const struct pt_shm_str *e = (const struct pt_shm_str *)(G.strings + off);
	return e->len == len && memcmp(e->bytes, s, len) == 0;
}

/* Reserves need bytes of the string area; 0 when it is full. */
static uint32_t reserve(uint64_t need)
{
	struct pt_shm_header *hdr = G.hdr;
	uint64_t used = __atomic_load_n(&hdr->strings_used, __ATOMIC_RELAXED);
	do {
		if (used + need > G.strings_bytes)
			return 0;
	} while (!__atomic_compare_exchange_n(&hdr->strings_used, &used, used + need, 1,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return (uint32_t)used;
}

/*
 * Lock-free, so that a signal handler naming a range while its own thread
 * is half-way through interning another name cannot deadlock, and a thread
 * stopped anywhere here holds nothing the others wait on. A miss reserves
 * the entry's bytes (CAS on strings_used), writes the entry, then publishes
 * (hash, offset) in the first empty slot with a release CAS. Two threads
 * interning the same new name at once both write an entry; the loser finds
 * the winner's slot, takes its offset and leaves its own bytes unreferenced
 * (readers only follow offsets found in records, never walk the area). The
 * table never fills: it has a slot per 8 bytes of area and an entry takes
 * at least 16, so probing always ends.
 */
uint32_t pt_probe_intern(const char *s, size_t len)
{
	if (!G.strings)
		return 0;
	if (len > MAX_NAME_BYTES)
		len = MAX_NAME_BYTES;
	uint32_t h = name_hash(s, len), mine = 0;
	uint64_t need = (sizeof(struct pt_shm_str) + len + 1 + 7) & ~7ull;
	for (uint32_t i = h & G.names_mask;; i = (i + 1) & G.names_mask) {
		uint64_t v = __atomic_load_n(&G.names[i], __ATOMIC_ACQUIRE);
		if (v == 0) {
			if (!mine) {
				mine = reserve(need);
				if (!mine)
					goto full;
				struct pt_shm_str *e = (struct pt_shm_str *)(G.strings + mine);
				e->len = (uint32_t)len;
				e->hash = h;
				memcpy(e->bytes, s, len);
				e->bytes[len] = 0;
			}
			/* The entry is complete before its offset is published anywhere. */
			if (__atomic_compare_exchange_n(&G.names[i], &v, ((uint64_t)h << 32) | mine, 0,
							__ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
				return mine;
			/* another thread (or a handler on this one) took the slot: v is its entry */
		}
		if ((uint32_t)(v >> 32) == h && entry_is((uint32_t)v, s, len))
			return (uint32_t)v;
	}
full:
	__atomic_fetch_add(&G.hdr->dropped_no_string, 1, __ATOMIC_RELAXED);
	return 0;
}

/*
 * torch.autograd.profiler.emit_nvtx names each operator's range
 * "aten::addmm, seq = 12" (with ", op_id = N", ", sizes = [...]",
 * ", stashed seq = N" variants): a different string per call, which would
 * fill the string area with one entry per call and split one operator into
 * thousands of rows. The name is what comes before the first such field;
 * the range is an operator. Returns the name's length (len when s is not of
 * that form) and sets *is_op.
 */
size_t pt_probe_torch_nvtx_len(const char *s, size_t len, int *is_op)
{
	static const char *const fields[] = {", seq = ", ", op_id = ", ", sizes = ",
					     ", stashed seq = ", ", input_op_ids = "};
	*is_op = 0;
	const char *comma = memchr(s, ',', len);
	if (!comma)
		return len;
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		size_t fl = strlen(fields[i]);
		if ((size_t)(s + len - comma) >= fl && memcmp(comma, fields[i], fl) == 0) {
			*is_op = comma > s;
			return *is_op ? (size_t)(comma - s) : len;
		}
	}
	return len;
}

uint32_t pt_probe_name_miss(struct pt_tstate *t, const char *s, uint16_t dom, uint8_t *kind)
{
	size_t plen = 0;
	const char *prefix = dom ? pt_probe_domain_prefix(dom, &plen) : NULL;
	size_t len = strnlen(s, MAX_NAME_BYTES);
	uint32_t off;
	uint8_t k = PT_KIND_USER_DEFINED;
	int torch_op = 0;
	if (!prefix || !plen) {
		size_t cut = pt_probe_torch_nvtx_len(s, len, &torch_op);
		if (torch_op) {
			/* not cached: the cache verifies the caller's whole string */
			*kind = PT_KIND_OPERATOR;
			return pt_probe_intern(s, cut);
		}
	}
	if (prefix && plen) {
		char buf[MAX_NAME_BYTES + 256];
		if (plen > 255)
			plen = 255;
		memcpy(buf, prefix, plen);
		memcpy(buf + plen, s, len);
		off = pt_probe_intern(buf, plen + len);
	} else {
		off = pt_probe_intern(s, len);
		k = pt_probe_phase_kind(s, len);
	}
	*kind = k;
	/* Cache only names stored whole, so the content check in the cache holds. */
	if (off && len < MAX_NAME_BYTES) {
		uintptr_t p = (uintptr_t)s;
		struct pt_name_ent *e = &t->cache[((p >> 3) ^ (p >> 11)) & (PT_PROBE_NAME_CACHE - 1)];
		e->ptr = s;
		e->off = off;
		e->dom = dom;
		e->kind = k;
		e->skip = (uint8_t)plen;
	}
	return off;
}

/* NVTX range names that mean a step phase; PROFTOP_NVTX_PHASES replaces the
 * defaults with "name:phase,..." (phase: dataloader, forward, backward,
 * optimization or optimizer, step). Matching ignores case. */
#define MAX_PHASES 32
static struct {
	char name[48];
	uint8_t kind;
} g_phases[MAX_PHASES];
static int g_nphases;

static int phase_word(const char *w, size_t n)
{
	static const struct {
		const char *w;
		uint8_t kind;
	} words[] = {
		{"dataloader", PT_KIND_DATALOADER}, {"forward", PT_KIND_FORWARD},
		{"backward", PT_KIND_BACKWARD},     {"optimization", PT_KIND_OPTIMIZATION},
		{"optimizer", PT_KIND_OPTIMIZATION}, {"step", PT_KIND_PROFILE_STEP},
	};
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strlen(words[i].w) == n && strncasecmp(words[i].w, w, n) == 0)
			return words[i].kind;
	return -1;
}

static void add_phase(const char *name, size_t n, uint8_t kind)
{
	if (g_nphases >= MAX_PHASES || n == 0 || n >= sizeof g_phases[0].name)
		return;
	memcpy(g_phases[g_nphases].name, name, n);
	g_phases[g_nphases].name[n] = 0;
	g_phases[g_nphases++].kind = kind;
}

void pt_probe_phases_init(void)
{
	const char *env = getenv("PROFTOP_NVTX_PHASES");
	g_nphases = 0;
	if (!env) {
		add_phase("dataloader", 10, PT_KIND_DATALOADER);
		add_phase("forward", 7, PT_KIND_FORWARD);
		add_phase("backward", 8, PT_KIND_BACKWARD);
		add_phase("optimizer", 9, PT_KIND_OPTIMIZATION);
		add_phase("optimization", 12, PT_KIND_OPTIMIZATION);
		return;
	}
	for (const char *p = env; *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *colon = memchr(p, ':', n);
		if (colon) {
			int k = phase_word(colon + 1, n - (size_t)(colon + 1 - p));
			if (k >= 0)
				add_phase(p, (size_t)(colon - p), (uint8_t)k);
		}
		p += n;
		if (*p == ',')
			p++;
	}
}

uint8_t pt_probe_phase_kind(const char *s, size_t len)
{
	for (int i = 0; i < g_nphases; i++)
		if (strlen(g_phases[i].name) == len && strncasecmp(g_phases[i].name, s, len) == 0)
			return g_phases[i].kind;
	return PT_KIND_USER_DEFINED;
}
