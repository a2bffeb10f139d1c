/*
 * probe_ctl.c - the Python helper's side of the session's control word
 * (shm.h, struct pt_shm_ctl): what a reader asked for (proftop_control),
 * the helper's answers and figures, where a capture's trace goes, and
 * whether proftop's own GPU collector runs in this process (a capture then
 * leaves CUDA activity to it: one CUPTI subscriber per process). Nothing
 * here is on an event's path: the helper calls proftop_control() once per
 * step, the rest once per capture. Every call returns at once with the
 * probe off or in a forked child.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe_cupti.h"
#include "probe_int.h"
#include "proftop/proftop.h"

#define G pt_probe_g

static struct pt_shm_ctl *ctl(void)
{
	if (__atomic_load_n(&G.state, __ATOMIC_ACQUIRE) != PT_PROBE_ON || G.forked || !G.hdr)
		return NULL;
	return &G.hdr->ctl;
}

PT_EXPORT uint64_t proftop_control(void)
{
	struct pt_shm_ctl *c = ctl();
	return c ? __atomic_load_n(&c->request, __ATOMIC_ACQUIRE) : 0;
}

PT_EXPORT uint64_t proftop_control_at_step(void)
{
	struct pt_shm_ctl *c = ctl();
	/* the reader stores it before publishing the request (a release CAS),
	 * which the helper loaded with acquire in proftop_control() */
	return c ? __atomic_load_n(&G.hdr->ctl_at_step, __ATOMIC_RELAXED) : 0;
}

PT_EXPORT void proftop_control_caps(uint32_t caps)
{
	struct pt_shm_ctl *c = ctl();
	if (c)
		__atomic_store_n(&c->caps, caps, __ATOMIC_RELEASE);
}

PT_EXPORT void proftop_control_answer(uint32_t seq, uint32_t state, uint32_t steps_done,
				      const char *msg)
{
	struct pt_shm_ctl *c = ctl();
	if (!c)
		return;
	if (msg) {
		/* readers copy msg after an acquire load of state: whole before state */
		char tmp[PT_SHM_CTL_MSG_BYTES];
		memset(tmp, 0, sizeof tmp);
		size_t n = strnlen(msg, sizeof tmp - 1);
		memcpy(tmp, msg, n);
		memcpy(c->msg, tmp, sizeof tmp);
	}
	__atomic_store_n(&c->state, PT_SHM_CTL_STATE(seq, state, steps_done), __ATOMIC_RELEASE);
}

PT_EXPORT void proftop_capture_report(uint64_t t0_ns, uint64_t t1_ns, uint64_t sync_lo_ns,
				      uint64_t sync_hi_ns, uint64_t start_block_ns,
				      uint64_t stop_block_ns, uint64_t write_ns, int32_t tid,
				      uint32_t first_step)
{
	struct pt_shm_ctl *c = ctl();
	if (!c)
		return;
	/* plain stores: published by the next proftop_control_answer */
	c->t0_ns = t0_ns;
	c->t1_ns = t1_ns;
	c->sync_lo_ns = sync_lo_ns;
	c->sync_hi_ns = sync_hi_ns;
	c->start_block_ns = start_block_ns;
	c->stop_block_ns = stop_block_ns;
	c->write_ns = write_ns;
	c->tid = tid;
	c->first_step = first_step;
}

PT_EXPORT int proftop_capture_path(uint32_t seq, char *buf, uint32_t len)
{
	if (!ctl() || !buf || len == 0)
		return -1;
	/* G.path is "<dir>/<pid>.session": the capture lies beside it */
	const char *slash = strrchr(G.path, '/');
	if (!slash)
		return -1;
	int n = snprintf(buf, len, "%.*s/%d.capture-%u.json", (int)(slash - G.path), G.path,
			 (int)getpid(), seq);
	return n > 0 && (uint32_t)n < len ? 0 : -1;
}

/* Idle CUPTI that the driver will start at cuInit: CUDA_INJECTION64_PATH
 * names this library (another tool's injection keeps its own path) and
 * PROFTOP_CUPTI does not turn it off. */
static int starts_at_cuinit(void)
{
	const char *off = getenv("PROFTOP_CUPTI");
	if (off && (!strcmp(off, "0") || !strcmp(off, "off") || !strcmp(off, "none")))
		return 0;
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	Dl_info info;
	if (!inj || !*inj || !dladdr((void *)starts_at_cuinit, &info) || !info.dli_fname)
		return 0;
	return strcmp(inj, info.dli_fname) == 0;
}

PT_EXPORT int proftop_gpu_collector(void)
{
	if (__atomic_load_n(&G.state, __ATOMIC_ACQUIRE) != PT_PROBE_ON || G.forked)
		return 0;
	int st = pt_cupti_state();
	if (st == PT_CUPTI_ON || st == PT_CUPTI_STARTING)
		return 1;
	/* idle, starting at cuInit: torch must not take CUPTI first */
	return st == PT_CUPTI_IDLE && starts_at_cuinit() ? 2 : 0;
}
