/*
 * probe_util.h - what the probe's tests share (test_probe_core.c,
 * test_probe_api.c): the environment (a private session directory, 4 rings
 * of 64 slots, a 4 KiB string area) set by a constructor that runs before
 * the probe's, and readers of the calling thread's ring.
 */
#ifndef PROBE_UTIL_H
#define PROBE_UTIL_H

#include "testutil.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../backends/probe_int.h"
#include "proftop/agg.h"
#include "proftop/proftop.h"

#define G pt_probe_g
static char g_dir[] = "/tmp/proftop-test-probe.XXXXXX";
static const char *g_self = "/proc/self/exe"; /* argv[0]: /proc/self/exe is valgrind under valgrind */

__attribute__((constructor(101))) static void test_env(void)
{
	if (getenv("PT_TEST_CHILD"))
		return;
	if (!mkdtemp(g_dir))
		abort();
	setenv("PROFTOP_SESSION_DIR", g_dir, 1);
	setenv("PROFTOP_RINGS", "4", 1);
	setenv("PROFTOP_RING_SLOTS", "64", 1);
	setenv("PROFTOP_STRINGS_BYTES", "4096", 1);
	unsetenv("PROFTOP_DISABLE");
	unsetenv("PROFTOP_NVTX_PHASES");
}

static inline struct pt_shm_ring *my_ring(void)
{
	proftop_step_begin(); /* claims a ring */
	assert_false(PT_TS_SPECIAL(pt_probe_tls));
	return pt_probe_tls->ring;
}

/* Acts as the reader in slot 0: copies the ring's records from its cursor
 * (or the tail, when it fell behind) and publishes how far it has read. */
static inline int drain(struct pt_shm_ring *r, struct pt_shm_rec *out, int max)
{
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	uint64_t c = __atomic_load_n(&r->cursor[0], __ATOMIC_ACQUIRE);
	if (c < tail)
		c = tail;
	if (head - c > G.slots)
		c = head - G.slots;
	int n = 0;
	for (uint64_t i = c; i < head; i++, n++)
		if (n < max)
			out[n] = pt_shm_ring_recs(r)[i & (G.slots - 1)];
	__atomic_store_n(&r->cursor[0], head, __ATOMIC_RELEASE);
	return n;
}

static inline const char *nm(uint32_t off)
{
	assert_true(off > 0 && off < G.strings_bytes && off % 8 == 0);
	const struct pt_shm_str *e = (const void *)(G.strings + off);
	assert_int_equal(e->bytes[e->len], 0);
	return e->bytes;
}

/* Slot 0 attached (a fresh heartbeat) or free. */
static inline void set_reader(int attached)
{
	struct pt_shm_reader *rd = &G.hdr->readers[0];
	__atomic_store_n(&rd->pid, attached ? (int32_t)getpid() : 0, __ATOMIC_RELEASE);
	__atomic_store_n(&rd->heartbeat_ns, attached ? pt_clock_mono_ns() : 0, __ATOMIC_RELEASE);
	__atomic_store_n(&G.hdr->reader_heartbeat_ns, attached ? pt_clock_mono_ns() : 0,
			 __ATOMIC_RELEASE);
}

/* A test's exit: rc, or a failure too when the private session directory
 * cannot be removed (no test leaves one behind). */
static inline int probe_done(int rc)
{
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
	if (system(cmd) != 0)
		rc |= 1;
	return rc;
}

#endif
