/*
 * strtab.c - string interning: an arena for the bytes, a dense array of
 * entries indexed by id, and an open-addressing hash table of ids.
 *
 * Strings never move once interned (arena blocks are never reallocated), so
 * pt_strtab_get() pointers stay valid for the table's life.
 */
#include "proftop/strtab.h"

#include <stdlib.h>
#include <string.h>

#include "model/util.h"

#define ARENA_BLOCK (256u * 1024u)

struct entry {
	const char *s;
	uint32_t len;
	uint32_t hash32;
};

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	char data[];
};

struct pt_strtab {
	struct entry *ents; /* ents[0] is "" */
	uint32_t n, cap;
	uint32_t *slots;    /* 0 = empty, else id */
	uint32_t mask;
	struct arena_block *arena;
	size_t mem;
};

static char *arena_alloc(struct pt_strtab *st, size_t n)
{
	struct arena_block *b = st->arena;
	if (!b || b->used + n > b->cap) {
		size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
		b = pt_xmalloc(sizeof *b + cap);
		b->next = st->arena;
		b->used = 0;
		b->cap = cap;
		st->arena = b;
		st->mem += sizeof *b + cap;
	}
	char *p = b->data + b->used;
	b->used += n;
	return p;
}

struct pt_strtab *pt_strtab_new(void)
{
	struct pt_strtab *st = pt_xcalloc(1, sizeof *st);
	st->cap = 1024;
	st->ents = pt_xmalloc(st->cap * sizeof *st->ents);
	st->ents[0] = (struct entry){"", 0, 0};
	st->n = 1;
	st->mask = 2047;
	st->slots = pt_xcalloc(st->mask + 1, sizeof *st->slots);
	st->mem = sizeof *st + st->cap * sizeof *st->ents + (st->mask + 1) * sizeof *st->slots;
	return st;
}

void pt_strtab_free(struct pt_strtab *st)
{
	if (!st)
		return;
	struct arena_block *b = st->arena;
	while (b) {
		struct arena_block *next = b->next;
		free(b);
		b = next;
	}
	free(st->ents);
	free(st->slots);
	free(st);
}

static void grow_slots(struct pt_strtab *st)
{
	uint32_t nmask = st->mask * 2 + 1;
	uint32_t *ns = pt_xcalloc((size_t)nmask + 1, sizeof *ns);
	for (uint32_t id = 1; id < st->n; id++) {
		uint32_t i = st->ents[id].hash32 & nmask;
		while (ns[i])
			i = (i + 1) & nmask;
		ns[i] = id;
	}
	st->mem += ((size_t)nmask - st->mask) * sizeof *ns;
	free(st->slots);
	st->slots = ns;
	st->mask = nmask;
}

static uint32_t lookup(const struct pt_strtab *st, const char *s, size_t len, uint32_t h,
		       uint32_t *slot)
{
	uint32_t i = h & st->mask;
	for (;;) {
		uint32_t id = st->slots[i];
		if (!id) {
			*slot = i;
			return 0;
		}
		const struct entry *e = &st->ents[id];
		if (e->hash32 == h && e->len == len && memcmp(e->s, s, len) == 0)
			return id;
		i = (i + 1) & st->mask;
	}
}

uint32_t pt_strtab_intern(struct pt_strtab *st, const char *s, size_t len)
{
	if (len == 0)
		return 0;
	if (len > UINT32_MAX - 1)
		len = UINT32_MAX - 1;
	uint32_t h = (uint32_t)pt_hash_bytes(s, len);
	uint32_t slot;
	uint32_t id = lookup(st, s, len, h, &slot);
	if (id)
		return id;
	if (st->n == st->cap) {
		st->cap *= 2;
		st->ents = pt_xrealloc(st->ents, (size_t)st->cap * sizeof *st->ents);
		st->mem += (size_t)st->cap / 2 * sizeof *st->ents;
	}
	char *copy = arena_alloc(st, len + 1);
	memcpy(copy, s, len);
	copy[len] = 0;
	id = st->n++;
	st->ents[id] = (struct entry){copy, (uint32_t)len, h};
	st->slots[slot] = id;
	if ((uint64_t)st->n * 4 > (uint64_t)(st->mask + 1) * 3)
		grow_slots(st);
	return id;
}

uint32_t pt_strtab_find(const struct pt_strtab *st, const char *s, size_t len)
{
	if (len == 0)
		return 0;
	uint32_t slot;
	return lookup(st, s, len, (uint32_t)pt_hash_bytes(s, len), &slot);
}

const char *pt_strtab_get(const struct pt_strtab *st, uint32_t id)
{
	if (id >= st->n)
		return "";
	return st->ents[id].s;
}

size_t pt_strtab_len(const struct pt_strtab *st, uint32_t id)
{
	if (id >= st->n)
		return 0;
	return st->ents[id].len;
}

uint32_t pt_strtab_count(const struct pt_strtab *st)
{
	return st->n;
}

size_t pt_strtab_mem_bytes(const struct pt_strtab *st)
{
	return st->mem;
}
