/*
 * strtab.h - string interning.
 *
 * Every name (event names, track labels, process names) is stored once and
 * referred to by a dense uint32_t id; id 0 is the empty string. Strings are
 * kept as given (bytes, not necessarily UTF-8 or printable): anything that
 * shows them must escape them (see pt_escape in util).
 *
 * Threading: not thread-safe; one owner (the trace) interns.
 */
#ifndef PROFTOP_STRTAB_H
#define PROFTOP_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct pt_strtab;

struct pt_strtab *pt_strtab_new(void);
void pt_strtab_free(struct pt_strtab *st);

/* Interns len bytes at s (need not be NUL-terminated); returns the id. */
uint32_t pt_strtab_intern(struct pt_strtab *st, const char *s, size_t len);
/* Looks up without inserting; returns 0 when absent (or s is empty). */
uint32_t pt_strtab_find(const struct pt_strtab *st, const char *s, size_t len);
/* NUL-terminated string for id ("" for 0 or out of range). Stable pointer. */
const char *pt_strtab_get(const struct pt_strtab *st, uint32_t id);
size_t pt_strtab_len(const struct pt_strtab *st, uint32_t id);
uint32_t pt_strtab_count(const struct pt_strtab *st);
size_t pt_strtab_mem_bytes(const struct pt_strtab *st);

#endif
