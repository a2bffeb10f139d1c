/*
 * test_nvml.c - the NVML sampler (backends/nvml.c, included) against a
 * fake libnvidia-ml built from tests/gpu/fake_nvml.c into a temporary
 * directory and named by PROFTOP_NVML_LIB: counters per device, the
 * profiled process's memory, the 1 s sampling period, NVML's own
 * utilization samples at their time, devices numbered as the process sees
 * them (its CUDA_VISIBLE_DEVICES, from a fake /proc: indices, UUIDs, MIG
 * instances, an entry naming no device), unknowns left unknown with a note
 * (MIG utilization, another pid namespace, "not available"), a process list
 * longer than the first buffer, and "unavailable" with a reason when the
 * library is missing or nvmlInit fails. Skips when no C compiler is at hand
 * to build the fake.
 */
#include "testutil.h"

#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../backends/nvml.c"
#include "proftop/counters.h"

static char g_lib[600];
static char g_root[600]; /* a fake /proc: <root>/<pid>/environ */

static char g_dir[] = "/tmp/proftop-test-nvml.XXXXXX";
static int g_made; /* g_dir was made: main removes it */

static int setup(void **state)
{
	char *dir = g_dir;
	if (!g_lib[0]) {
		if (!mkdtemp(dir))
			return -1;
		g_made = 1;
		snprintf(g_lib, sizeof g_lib, "%s/libfake_nvml.so", dir);
		snprintf(g_root, sizeof g_root, "%s/proc", dir);
		const char *cc = getenv("CC");
		char cmd[1400];
		snprintf(cmd, sizeof cmd, "%s -shared -fPIC -o %s tests/gpu/fake_nvml.c 2>/dev/null",
			 cc && *cc ? cc : "cc", g_lib);
		if (system(cmd) != 0)
			g_lib[0] = 0;
		char p[700];
		snprintf(p, sizeof p, "%s/%d", g_root, (int)getpid());
		mkdir(g_root, 0700);
		mkdir(p, 0700);
	}
	char pid[32];
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	setenv("FAKE_NVML_PID", pid, 1);
	return 0;
}

/* The process's environment, as /proc/PID/environ shows it (NULL: none). */
static void set_environ(const char *const *vars)
{
	char p[700];
	snprintf(p, sizeof p, "%s/%d/environ", g_root, (int)getpid());
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs("HOME=/root", f);
	fputc(0, f);
	for (size_t i = 0; vars && vars[i]; i++) {
		fputs(vars[i], f);
		fputc(0, f);
	}
	fclose(f);
}

static void clear_fake_env(void)
{
	unsetenv("FAKE_NVML_MIG");
	unsetenv("FAKE_NVML_MIXED");
	unsetenv("FAKE_NVML_SAMPLES");
	unsetenv("FAKE_NVML_PROCS");
	unsetenv("FAKE_NVML_FAIL");
}

#define NEED_LIB()                                                                                 \
	do {                                                                                       \
		if (!g_lib[0]) {                                                                   \
			fprintf(stderr, "skipped: no compiler to build the fake libnvidia-ml\n");  \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

/* Opens the backend for this process with the fake /proc; NULL on failure. */
static struct pt_backend *open_nv(void)
{
	char why[256];
	setenv("PROFTOP_NVML_LIB", g_lib, 1);
	struct pt_backend *b;
	struct pt_backend_args a = {.pid = getpid(), .proc_root = g_root};
	assert_int_equal(pt_backend_nvml.open(&b, &a, why, sizeof why), 0);
	return b;
}

/* Values of counter name on device dev's NVML track, in order. */
static int values(struct pt_trace *t, int dev, const char *name, double *out, int max)
{
	int n = 0;
	for (uint32_t tr = 0; tr < t->ntracks; tr++) {
		if (t->tracks[tr].device != dev)
			continue;
		struct pt_store_iter it;
		pt_store_iter_init(&it, t->store, tr, 0, UINT64_MAX);
		struct pt_event *ev;
		while ((ev = pt_store_iter_next(&it)))
			if (ev->kind == PT_KIND_COUNTER && !strcmp(pt_trace_str(t, ev->name_id), name) &&
			    n < max)
				memcpy(&out[n++], &ev->arg, sizeof(double));
		pt_store_iter_done(&it);
	}
	return n;
}

static int has_note(struct pt_trace *t, const char *part)
{
	for (uint32_t i = 0; i < t->nnotes; i++)
		if (strstr(pt_trace_note_text(t, i), part))
			return 1;
	return 0;
}

static void test_unavailable(void **state)
{
	char why[256];
	clear_fake_env();
	setenv("PROFTOP_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
	assert_int_equal(pt_backend_nvml.probe(why, sizeof why), PT_ENOTAVAIL);
	assert_non_null(strstr(why, "does not load"));
	struct pt_backend *b;
	struct pt_backend_args a = {0};
	assert_int_equal(pt_backend_nvml.open(&b, &a, why, sizeof why), PT_ENOTAVAIL);
	assert_null(b);
	if (!g_lib[0])
		return;
	setenv("PROFTOP_NVML_LIB", g_lib, 1);
	setenv("FAKE_NVML_FAIL", "1", 1);
	assert_int_equal(pt_backend_nvml.probe(why, sizeof why), PT_ENOTAVAIL);
	assert_non_null(strstr(why, "Driver Not Loaded"));
	unsetenv("FAKE_NVML_FAIL");
}

static void test_samples(void **state)
{
	NEED_LIB();
	clear_fake_env();
	set_environ(NULL); /* no CUDA_VISIBLE_DEVICES: every GPU, in PCI order */
	char why[256];
	setenv("PROFTOP_NVML_LIB", g_lib, 1);
	assert_int_equal(pt_backend_nvml.probe(why, sizeof why), 0);
	struct pt_backend *b = open_nv();
	struct pt_trace *t = pt_trace_new(0);
	uint64_t t0 = 5000000000ull;
	assert_int_equal(b->ops->poll(b, t, t0), 0);
	assert_int_equal(b->ops->poll(b, t, t0 + 100000000ull), 0); /* within 1 s: nothing */
	assert_int_equal(b->ops->poll(b, t, t0 + 1000000000ull), 0);
	double v[16];
	/* two samples of everything else; utilization read at its own period: once or twice */
	assert_int_equal(values(t, 0, "GPU Memory Used bytes", v, 16), 2);
	assert_true(fabs(v[0] - (double)(4ull << 30)) < 1);
	assert_int_equal(values(t, 1, "GPU Memory Used bytes", v, 16), 2);
	assert_true(fabs(v[0] - (double)(5ull << 30)) < 1);
	assert_int_equal(values(t, 0, "GPU Memory Total bytes", v, 16), 2);
	assert_true(fabs(v[0] - (double)(16ull << 30)) < 1);
	assert_int_equal(values(t, 1, "GPU Power W", v, 16), 2);
	assert_true(fabs(v[0] - 123.456) < 1e-9);
	assert_int_equal(values(t, 1, "GPU Temperature C", v, 16), 2);
	assert_true(fabs(v[0] - 61) < 1e-9);
	int nu = values(t, 0, "GPU Util(NVML) %", v, 16);
	assert_true(nu >= 1 && nu <= 2);
	assert_true(fabs(v[0] - 37) < 1e-9);
	/* the first GPU's model, for the FLOPs figures' peak */
	assert_string_equal(pt_trace_str(t, t->device_name), "NVIDIA H100 80GB HBM3");
	/* our process: 1 GiB on GPU 0, nothing on GPU 1 */
	assert_int_equal(values(t, 0, "GPU Memory(Process) bytes", v, 16), 2);
	assert_true(fabs(v[0] - (double)(1ull << 30)) < 1);
	assert_int_equal(values(t, 1, "GPU Memory(Process) bytes", v, 16), 2);
	assert_true(v[0] == 0);
	/* one device track per GPU ("GPU n NVML"), so meters and lanes find it */
	int tracks = 0;
	for (uint32_t i = 0; i < t->ntracks; i++) {
		char label[64];
		pt_trace_track_label(t, i, label, sizeof label);
		if (strstr(label, "NVML")) {
			assert_true(pt_track_is_device(&t->tracks[i]));
			char want[32];
			snprintf(want, sizeof want, "GPU %d NVML", t->tracks[i].device);
			assert_string_equal(label, want);
			tracks++;
		}
	}
	assert_int_equal(tracks, 2);
	assert_int_equal(t->nnotes, 0);
	char desc[128];
	b->ops->describe(b, desc, sizeof desc);
	assert_string_equal(desc, "NVML: 2 GPUs, every 1 s");
	b->ops->close(b);
	pt_trace_free(t);
}

/* NVML's own samples, each at its time: no reading at a fixed second */
static void test_util_samples(void **state)
{
	NEED_LIB();
	clear_fake_env();
	set_environ(NULL);
	setenv("FAKE_NVML_SAMPLES", "1", 1);
	struct pt_backend *b = open_nv();
	struct pt_trace *t = pt_trace_new(0);
	uint64_t t0 = 50000000000ull;
	b->ops->poll(b, t, t0);
	usleep(600000); /* the fake's next samples are 500 and 250 ms before its next call */
	b->ops->poll(b, t, t0 + 1000000000ull);
	double v[16];
	assert_int_equal(values(t, 0, "GPU Util(NVML) %", v, 16), 4);
	assert_true(v[0] == 10 && v[1] == 30 && v[2] == 10 && v[3] == 30);
	/* placed at their own times: 500 and 250 ms (or a little more) before each read */
	int seen = 0;
	uint64_t prev_age = 0;
	for (uint32_t tr = 0; tr < t->ntracks; tr++) {
		if (t->tracks[tr].device != 0)
			continue;
		struct pt_store_iter it;
		pt_store_iter_init(&it, t->store, tr, 0, UINT64_MAX);
		struct pt_event *ev;
		while ((ev = pt_store_iter_next(&it)))
			if (!strcmp(pt_trace_str(t, ev->name_id), "GPU Util(NVML) %")) {
				uint64_t read = seen < 2 ? t0 : t0 + 1000000000ull;
				uint64_t age = read - ev->start_ns;
				assert_true(age >= (seen % 2 ? 249000000u : 499000000u));
				if (seen % 2)
					assert_true(age + 249000000u <= prev_age + 1000000u);
				prev_age = age;
				seen++;
			}
		pt_store_iter_done(&it);
	}
	assert_int_equal(seen, 4);
	b->ops->close(b);
	pt_trace_free(t);
}

/* CUDA_VISIBLE_DEVICES: the process's device n is whatever it names n-th */
static void test_visible_devices(void **state)
{
	NEED_LIB();
	clear_fake_env();
	setenv("FAKE_NVML_GPUS", "3", 1);
	static const char *const swapped[] = {"CUDA_VISIBLE_DEVICES=2,0", NULL};
	set_environ(swapped);
	struct pt_backend *b = open_nv();
	struct pt_trace *t = pt_trace_new(0);
	b->ops->poll(b, t, 1000000000ull);
	double v[4];
	assert_int_equal(values(t, 0, "GPU Memory Used bytes", v, 4), 1);
	assert_true(fabs(v[0] - (double)(6ull << 30)) < 1); /* physical GPU 2 */
	assert_int_equal(values(t, 1, "GPU Memory Used bytes", v, 4), 1);
	assert_true(fabs(v[0] - (double)(4ull << 30)) < 1); /* physical GPU 0 */
	assert_int_equal(values(t, 2, "GPU Memory Used bytes", v, 4), 0);
	/* the process's memory is on physical GPU 0: its device 1 */
	assert_int_equal(values(t, 1, "GPU Memory(Process) bytes", v, 4), 1);
	assert_true(fabs(v[0] - (double)(1ull << 30)) < 1);
	assert_true(has_note(t, "CUDA_VISIBLE_DEVICES=2,0: 2 devices"));
	b->ops->close(b);
	pt_trace_free(t);

	/* UUIDs (a prefix is enough), and the list ends at an entry naming no device */
	static const char *const uuids[] = {"CUDA_VISIBLE_DEVICES=GPU-00000001, GPU-0000000,7,0",
					    NULL};
	set_environ(uuids);
	b = open_nv();
	t = pt_trace_new(0);
	b->ops->poll(b, t, 1000000000ull);
	assert_int_equal(values(t, 0, "GPU Memory Used bytes", v, 4), 1);
	assert_true(fabs(v[0] - (double)(5ull << 30)) < 1); /* GPU-00000001... */
	assert_int_equal(values(t, 1, "GPU Memory Used bytes", v, 4), 1);
	assert_true(fabs(v[0] - (double)(4ull << 30)) < 1); /* GPU-0000000: the first match */
	assert_int_equal(values(t, 2, "GPU Memory Used bytes", v, 4), 0); /* 7: the end */
	char desc[128];
	b->ops->describe(b, desc, sizeof desc);
	assert_string_equal(desc, "NVML: 2 GPUs, every 1 s");
	b->ops->close(b);
	pt_trace_free(t);

	/* nothing visible */
	static const char *const none[] = {"CUDA_VISIBLE_DEVICES=", NULL};
	set_environ(none);
	b = open_nv();
	b->ops->describe(b, desc, sizeof desc);
	assert_string_equal(desc, "NVML: 0 GPUs, every 1 s");
	b->ops->close(b);

	/* indices over GPUs of different models: CUDA's order may not be PCI's */
	setenv("FAKE_NVML_MIXED", "1", 1);
	static const char *const idx[] = {"CUDA_VISIBLE_DEVICES=1", NULL};
	set_environ(idx);
	b = open_nv();
	t = pt_trace_new(0);
	b->ops->poll(b, t, 1000000000ull);
	assert_true(has_note(t, "GPU models differ"));
	b->ops->close(b);
	pt_trace_free(t);
	unsetenv("FAKE_NVML_GPUS");
	clear_fake_env();
}

/* A MIG instance: its memory, its GPU's power, no utilization (said so) */
static void test_mig(void **state)
{
	NEED_LIB();
	clear_fake_env();
	setenv("FAKE_NVML_MIG", "1", 1);
	static const char *const mig[] = {
	    "CUDA_VISIBLE_DEVICES=MIG-11111111-2222-3333-4444-555555555555", NULL};
	set_environ(mig);
	struct pt_backend *b = open_nv();
	struct pt_trace *t = pt_trace_new(0);
	b->ops->poll(b, t, 1000000000ull);
	double v[4];
	assert_int_equal(values(t, 0, "GPU Memory Used bytes", v, 4), 1);
	assert_true(fabs(v[0] - (double)(2ull << 30)) < 1);
	assert_int_equal(values(t, 0, "GPU Memory Total bytes", v, 4), 1);
	assert_true(fabs(v[0] - (double)(10ull << 30)) < 1);
	assert_int_equal(values(t, 0, "GPU Power W", v, 4), 1);
	assert_int_equal(values(t, 0, "GPU Util(NVML) %", v, 4), 0);
	assert_int_equal(values(t, 0, "GPU Memory Util(NVML) %", v, 4), 0);
	assert_true(has_note(t, "GPU 0 is a MIG instance"));
	char desc[128];
	b->ops->describe(b, desc, sizeof desc);
	assert_non_null(strstr(desc, "MIG instances: no utilization"));
	b->ops->close(b);
	pt_trace_free(t);
	clear_fake_env();
}

/* The process's memory: unknown when NVML cannot tell, found past a full first buffer */
static void test_process_memory(void **state)
{
	NEED_LIB();
	static const char *const modes[] = {"foreign", "na"};
	double v[4];
	for (size_t i = 0; i < 2; i++) {
		clear_fake_env();
		set_environ(NULL);
		setenv("FAKE_NVML_PROCS", modes[i], 1);
		struct pt_backend *b = open_nv();
		struct pt_trace *t = pt_trace_new(0);
		b->ops->poll(b, t, 1000000000ull);
		b->ops->poll(b, t, 2000000000ull);
		assert_int_equal(values(t, 0, "GPU Memory(Process) bytes", v, 4), 0); /* not 0 B */
		assert_int_equal(values(t, 1, "GPU Memory(Process) bytes", v, 4), 2); /* nobody there */
		assert_true(has_note(t, "GPU memory is unknown"));
		b->ops->close(b);
		pt_trace_free(t);
	}
	clear_fake_env();
	setenv("FAKE_NVML_PROCS", "many", 1);
	struct pt_backend *b = open_nv();
	struct pt_trace *t = pt_trace_new(0);
	b->ops->poll(b, t, 1000000000ull);
	assert_int_equal(values(t, 0, "GPU Memory(Process) bytes", v, 4), 1);
	assert_true(fabs(v[0] - (double)(3ull << 30)) < 1);
	assert_false(has_note(t, "GPU memory is unknown"));
	b->ops->close(b);
	pt_trace_free(t);
	clear_fake_env();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unavailable),
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_util_samples),
		cmocka_unit_test(test_visible_devices),
		cmocka_unit_test(test_mig),
		cmocka_unit_test(test_process_memory),
	};
	int rc = cmocka_run_group_tests(tests, setup, NULL);
	/* the fake library and the fake /proc go with their directory */
	char cmd[200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
	if (g_made && system(cmd) != 0)
		rc |= 1;
	return rc;
}
