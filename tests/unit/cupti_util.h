/*
 * cupti_util.h - what the CUPTI backend's tests share (test_probe_cupti*.c,
 * each also built as _old against CUPTI 11.8's headers and as _12 against
 * the wheel's CUPTI 12): the environment a constructor sets before the
 * probe's (a private session directory, 16 rings), the fake libcupti built
 * once per run, a synthetic kernel record, the API callback driven by hand,
 * and draining what the probe wrote into a trace.
 */
#ifndef CUPTI_UTIL_H
#define CUPTI_UTIL_H

#include "testutil.h"

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include "../../backends/probe_cupti.h"
#include "../../backends/probe_cupti_clock.h"
#include "../../backends/probe_cupti_xlate.h"
#include "../../backends/probe_int.h"
#include "../../backends/session.c"
#include "../../backends/session_copy.c"
#include "../../backends/session_capture.c"
#include "../../backends/session_open.c"
#include "../../backends/session_scan.c"
#include "proftop/agg.h"
#include "proftop/proftop.h"

#if defined(PT_HAVE_CUDA_HEADERS)
#include <cupti.h>
#define HAVE_STRUCTS 1
#else
#define HAVE_STRUCTS 0
#endif
#ifndef PT_TEST_CUPTI_INC
#define PT_TEST_CUPTI_INC "-I/usr/local/cuda/include"
#endif

#define G pt_probe_g
static char g_dir[] = "/tmp/proftop-test-cupti.XXXXXX";
static char g_fake[700]; /* the fake libcupti, "" when it could not be built */

__attribute__((constructor(101))) static void test_env(void)
{
	if (!mkdtemp(g_dir))
		abort();
	setenv("PROFTOP_SESSION_DIR", g_dir, 1);
	setenv("PROFTOP_RINGS", "16", 1);
	setenv("PROFTOP_RING_SLOTS", "4096", 1);
	setenv("PROFTOP_STRINGS_BYTES", "65536", 1);
	setenv("PROFTOP_CUPTI_WATCHDOG_MS", "300", 1);
	setenv("PROFTOP_SIGTERM", "0", 1);
	unsetenv("PROFTOP_DISABLE");
	unsetenv("PROFTOP_CUPTI");
	unsetenv("PROFTOP_CUPTI_SHARE");
}

static inline int build_fake(void **state)
{
	(void)state;
	if (!HAVE_STRUCTS)
		return 0;
	snprintf(g_fake, sizeof g_fake, "%s/libcupti.so.12", g_dir);
	const char *cc = getenv("CC");
	char cmd[2000];
	snprintf(cmd, sizeof cmd,
		 "%s -shared -fPIC -Wl,-Bsymbolic -Wl,-soname,libcupti.so.12 %s -o %s "
		 "tests/gpu/fake_cupti.c -lpthread 2>&1",
		 cc && *cc ? cc : "cc", PT_TEST_CUPTI_INC, g_fake);
	if (system(cmd) != 0) {
		fprintf(stderr, "could not build the fake libcupti: %s\n", cmd);
		g_fake[0] = 0;
	}
	return 0;
}


#if HAVE_STRUCTS
static inline CUpti_ActivityKernel8 kernel(const char *name, uint64_t start, uint64_t end, uint32_t dev,
				    uint32_t stream, uint32_t corr)
{
	CUpti_ActivityKernel8 k; /* the fields read sit where every later version has them */
	memset(&k, 0, sizeof k);
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.name = name;
	k.start = start;
	k.end = end;
	k.deviceId = dev;
	k.streamId = stream;
	k.correlationId = corr;
	return k;
}

static struct pt_session *g_sess;
static struct pt_trace *g_trace; /* the last one drain(NULL) made */

/* Drains into t, or into a new trace (owned here: never freed by the caller).
 * The reader keeps ids per trace and knows a trace by its address, so the
 * last one is freed only once the next exists. */
static inline struct pt_trace *drain(struct pt_trace *t)
{
	char err[256];
	if (!g_sess)
		assert_int_equal(pt_session_open(G.path, &g_sess, err, sizeof err), 0);
	if (!t) {
		t = pt_trace_new(0);
		pt_trace_free(g_trace);
		g_trace = t;
	}
	pt_session_drain(g_sess, t, pt_clock_mono_ns());
	/* a record waiting for a possible EXT is held until the next drain */
	pt_session_drain(g_sess, t, pt_clock_mono_ns());
	return t;
}

static inline uint64_t source_dropped(void)
{
	drain(NULL);
	return pt_session_stats(g_sess)->source_dropped;
}

struct seen {
	uint32_t nkernels, nmemcpy, nruntime;
	uint32_t kernel_corr[20000];
	uint64_t kernel_start[20000];
	uint32_t rt_corr[20000];
	uint64_t rt_start[20000];
	char rt_name[64][32];
	uint32_t nnotes;
	char notes[16][240];
};

static inline void collect(struct pt_trace *t, struct seen *s)
{
	memset(s, 0, sizeof *s);
	for (uint32_t tr = 0; tr < t->ntracks; tr++) {
		struct pt_store_iter it;
		pt_store_iter_init(&it, t->store, tr, 0, UINT64_MAX);
		struct pt_event *ev;
		while ((ev = pt_store_iter_next(&it))) {
			if (ev->kind == PT_KIND_KERNEL || ev->kind == PT_KIND_COMMUNICATION) {
				if (s->nkernels < 20000) {
					s->kernel_corr[s->nkernels] = ev->corr;
					s->kernel_start[s->nkernels] = ev->start_ns;
				}
				s->nkernels++;
			} else if (ev->kind == PT_KIND_MEMCPY) {
				s->nmemcpy++;
			} else if (ev->kind == PT_KIND_CUDA_RUNTIME && s->nruntime < 20000) {
				if (s->nruntime < 64)
					snprintf(s->rt_name[s->nruntime], 32, "%s",
						 pt_trace_str(t, ev->name_id));
				s->rt_corr[s->nruntime] = ev->corr;
				s->rt_start[s->nruntime++] = ev->start_ns;
			}
		}
		pt_store_iter_done(&it);
	}
	for (uint32_t i = 0; i < t->nnotes && i < 16; i++)
		snprintf(s->notes[s->nnotes++], sizeof s->notes[0], "%s", pt_trace_note_text(t, i));
}

static inline int has_note(const struct seen *s, const char *part)
{
	for (uint32_t i = 0; i < s->nnotes; i++)
		if (strstr(s->notes[i], part))
			return 1;
	return 0;
}

static inline uint32_t count_runtime(const struct seen *s, const char *name)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->nruntime && i < 64; i++)
		n += !strcmp(s->rt_name[i], name);
	return n;
}

/* Every kernel after the call that launched it (and within a second of it). */
static inline void assert_kernels_after_launch(const struct seen *s)
{
	uint32_t matched = 0;
	for (uint32_t k = 0; k < s->nkernels && k < 20000; k++)
		for (uint32_t r = 0; r < s->nruntime; r++)
			if (s->rt_corr[r] == s->kernel_corr[k]) {
				assert_true(s->kernel_start[k] + 100000 >= s->rt_start[r]);
				assert_true(s->kernel_start[k] < s->rt_start[r] + 1000000000ull);
				matched++;
				break;
			}
	if (matched != s->nkernels) {
		for (uint32_t k = 0; k < s->nkernels && k < 64; k++)
			fprintf(stderr, "kernel corr %u start %llu\n", s->kernel_corr[k],
				(unsigned long long)s->kernel_start[k]);
		for (uint32_t r = 0; r < s->nruntime && r < 64; r++)
			fprintf(stderr, "call %s corr %u start %llu\n", s->rt_name[r], s->rt_corr[r],
				(unsigned long long)s->rt_start[r]);
	}
	assert_int_equal(matched, s->nkernels);
}

static inline uint64_t call(int domain, const char *fn, uint32_t corr, unsigned cbid, int nested_driver)
{
	uint64_t slot = 0, slot2 = 0;
	CUpti_CallbackData d;
	memset(&d, 0, sizeof d);
	d.functionName = fn;
	d.correlationData = &slot;
	d.correlationId = corr;
	d.callbackSite = CUPTI_API_ENTER;
	pt_cupti_api_callback(NULL, domain, cbid, &d);
	uint64_t t0 = slot;
	CUpti_CallbackData dd = d;
	dd.functionName = "cuLaunchKernel";
	dd.correlationData = &slot2;
	if (nested_driver) /* what cudaLaunchKernel does inside: not an event of its own */
		pt_cupti_api_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API,
				      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &dd);
	usleep(200);
	if (nested_driver) {
		dd.callbackSite = CUPTI_API_EXIT;
		pt_cupti_api_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API,
				      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &dd);
	}
	d.callbackSite = CUPTI_API_EXIT;
	pt_cupti_api_callback(NULL, domain, cbid, &d);
	/* another domain is ignored */
	pt_cupti_api_callback(NULL, CUPTI_CB_DOMAIN_RESOURCE, cbid, &d);
	return t0;
}

static inline uint64_t launch(const char *fn, uint32_t corr, unsigned cbid)
{
	return call(CUPTI_CB_DOMAIN_RUNTIME_API, fn, corr, cbid, 1);
}

static inline const struct pt_row *row_named(const struct pt_trace *t, const struct pt_table *tb,
				      const char *name)
{
	for (size_t i = 0; i < tb->n; i++)
		if (!strcmp(pt_trace_str(t, tb->rows[i].name_id), name))
			return &tb->rows[i];
	return NULL;
}
#else
/* Without CUDA's headers there are no record structs to build: said as a skip. */
static inline void test_no_cuda_headers(void **state)
{
	(void)state;
	print_message("no CUDA headers in this build: nothing of this file runs\n");
	skip();
}
#endif /* HAVE_STRUCTS */

/* What every file's main does last: the session and trace drain() kept go,
 * and the private directory with what the tests left in it. */
static inline int cupti_tests_done(int rc)
{
#if HAVE_STRUCTS
	pt_trace_free(g_trace);
	if (g_sess)
		pt_session_close(g_sess);
#endif
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
	if (system(cmd) != 0)
		rc |= 1;
	return rc;
}

#endif
