/*
 * util.h - small helpers every module in src/ uses: allocation that aborts
 * on exhaustion, hashing, growable byte buffers, and escaping of untrusted
 * names for terminals and JSON.
 */
#ifndef PT_UTIL_H
#define PT_UTIL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

void *pt_xmalloc(size_t n);
/* Grows malloc's heap in large steps backed by transparent huge pages (the
 * proftop process, not a library user's): faults on fresh memory were a
 * tenth of an import's CPU time in a VM. Blocks of 4 MiB and more from the
 * wrappers below are advised alike in any process. */
void pt_mem_tune(void);
/* Asks for huge pages on the 2 MiB pages inside [p, p + n) when n is 4 MiB
 * or more (a mapping of one's own) and they pay; returns p. */
void *pt_mem_huge(void *p, size_t n);
/* 1 when huge pages are worth asking for: not where the kernel reports free
 * memory to a hypervisor (util.c says why). Decided once per process. */
int pt_mem_huge_pays(void);
/* 1 when a virtio balloon's sysfs features text has free page reporting. */
int pt_balloon_reports(const char *features);
/* 1 when a device under driver_dir (the virtio_balloon driver's sysfs
 * directory) reports free pages to its host. */
int pt_host_reclaims_free(const char *driver_dir);
void *pt_xcalloc(size_t n, size_t size);
void *pt_xrealloc(void *p, size_t n);
char *pt_xstrdup(const char *s);
char *pt_xstrndup(const char *s, size_t n);

uint64_t pt_hash_bytes(const void *p, size_t len);
static inline uint64_t pt_hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/*
 * pthread_create for a thread that works beside the caller: it starts on
 * another CPU than the caller's (where the thread may use two or more),
 * then may run anywhere, as any thread. Started plainly, such a thread was
 * often put on the caller's CPU and the two shared it for up to 30 ms while
 * the other CPU idled (a 2-vCPU VM, just after the reader's threads ended).
 * 0, or pthread_create's error.
 */
int pt_thread_start_apart(pthread_t *th, void *(*fn)(void *), void *arg);

uint64_t pt_now_ns(void); /* CLOCK_MONOTONIC */
/* CPU time of the whole process, every thread (CLOCK_PROCESS_CPUTIME_ID) */
uint64_t pt_cpu_ns(void);

/* Growable byte buffer. */
struct pt_buf {
	char *p;
	size_t len, cap;
};
void pt_buf_reserve(struct pt_buf *b, size_t extra);
void pt_buf_put(struct pt_buf *b, const void *p, size_t n);
void pt_buf_putc(struct pt_buf *b, char c);
void pt_buf_printf(struct pt_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pt_buf_free(struct pt_buf *b);

/* Escaping flags. */
#define PT_ESC_ASCII 0x1u /* escape every non-ASCII byte too */

/*
 * Writes s (len bytes, untrusted) into dst (cap bytes, always NUL-terminated)
 * so a terminal shows it literally: C0/C1 controls, DEL, invalid UTF-8 and
 * bidirectional overrides become \xNN or \u{NNNN}. Stops at max_cols display
 * columns (0 = no limit), ending with "..." when cut. Returns the number of
 * columns written.
 */
size_t pt_escape_term(char *dst, size_t cap, const char *s, size_t len, size_t max_cols,
		      unsigned flags);
/* qsort comparison of uint64_t values, ascending. */
int pt_u64_cmp(const void *pa, const void *pb);
/* The k-th smallest (from 0) of v[0, n), n > 0; v is reordered. A
 * quickselect (Hoare's partition, so runs of equal values stay linear):
 * a median in O(n) where a sort would cost O(n log n). */
uint64_t pt_u64_kth(uint64_t *v, size_t n, size_t k);
/* Nearest-rank percentile p (0..100) of sorted v (n > 0). */
uint64_t pt_pct_nearest(const uint64_t *v, size_t n, double p);
/* Its index in sorted order: pt_u64_kth(v, n, pt_pct_index(n, p)) is the
 * same percentile of unsorted v. */
size_t pt_pct_index(size_t n, double p);
/* The trailing integer of a step's name ("ProfilerStep#552" -> 552,
 * "Iteration 3" -> 3); -1 when there is none. */
int64_t pt_step_number(const char *s);
/* Display columns of a code point: 2 (East Asian wide, emoji), 1, 0
 * (combining marks, variation selectors), -1 (a control). */
int pt_cp_width(uint32_t cp);
/* Columns s would take once escaped (no limit). */
size_t pt_escape_term_cols(const char *s, size_t len, unsigned flags);
/* Writes s as a JSON string literal (with quotes); invalid UTF-8 becomes U+FFFD. */
void pt_json_str(FILE *f, const char *s, size_t len);
void pt_buf_json_str(struct pt_buf *b, const char *s, size_t len);
/* 1 if s is valid UTF-8. */
int pt_utf8_valid(const char *s, size_t len);

/* Parses "1G", "512M", "64k", "1000000" (bytes). Returns 0 or PT_EINVAL. */
int pt_parse_size(const char *s, size_t *out);

#endif
