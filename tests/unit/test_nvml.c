/*
 * test_nvml.c - the NVML sampler (backends/nvml.c, included) against a
 * fake libnvidia-ml built from tests/gpu/fake_nvml.c into a temporary
 * directory and named by PROFTOP_NVML_LIB: counters per device, the
 * profiled process's memory, the 1 s sampling period, and "unavailable"
 * with a reason when the library is missing or nvmlInit fails. Skips when
 * no C compiler is at hand to build the fake.
 */
#include "testutil.h"

#include <math.h>
#include <unistd.h>

#include "../../backends/nvml.c"
#include "proftop/counters.h"

static char g_lib[600];

static int setup(void **state)
{
	static char dir[] = "/tmp/proftop-test-nvml.XXXXXX";
	if (!g_lib[0]) {
		if (!mkdtemp(dir))
			return -1;
		snprintf(g_lib, sizeof g_lib, "%s/libfake_nvml.so", dir);
		const char *cc = getenv("CC");
		char cmd[1400];
		snprintf(cmd, sizeof cmd, "%s -shared -fPIC -o %s tests/gpu/fake_nvml.c 2>/dev/null",
			 cc && *cc ? cc : "cc", g_lib);
		if (system(cmd) != 0)
			g_lib[0] = 0;
	}
	return 0;
}

static double stat_of(struct pt_trace *t, const char *name, uint64_t *n)
{
	struct pt_counter_stat st;
	*n = pt_counter_stat(t, name, 0, UINT64_MAX, &st);
	return st.avg;
}

static void test_unavailable(void **state)
{
	char why[256];
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
	if (!g_lib[0]) {
		fprintf(stderr, "skipped: no compiler to build the fake libnvidia-ml\n");
		skip();
	}
	char why[256], pid[32];
	setenv("PROFTOP_NVML_LIB", g_lib, 1);
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	setenv("FAKE_NVML_PID", pid, 1);
	assert_int_equal(pt_backend_nvml.probe(why, sizeof why), 0);
	struct pt_backend *b;
	struct pt_backend_args a = {.pid = getpid()};
	assert_int_equal(pt_backend_nvml.open(&b, &a, why, sizeof why), 0);
	struct pt_trace *t = pt_trace_new(0);
	uint64_t t0 = 5000000000ull;
	assert_int_equal(b->ops->poll(b, t, t0), 0);
	assert_int_equal(b->ops->poll(b, t, t0 + 100000000ull), 0); /* within 1 s: nothing */
	assert_int_equal(b->ops->poll(b, t, t0 + 1000000000ull), 0);
	uint64_t n;
	/* two devices x two samples; utilization 37 and 0 */
	assert_true(fabs(stat_of(t, "GPU Util(NVML) %", &n) - 18.5) < 1e-9);
	assert_int_equal(n, 4);
	assert_true(fabs(stat_of(t, "GPU Memory Used bytes", &n) - (double)(4ull << 30)) < 1);
	assert_true(fabs(stat_of(t, "GPU Memory Total bytes", &n) - (double)(16ull << 30)) < 1);
	assert_true(fabs(stat_of(t, "GPU Power W", &n) - 123.456) < 1e-9);
	assert_true(fabs(stat_of(t, "GPU Temperature C", &n) - 61) < 1e-9);
	/* the first GPU's model, for the FLOPs figures' peak */
	assert_string_equal(pt_trace_str(t, t->device_name), "NVIDIA H100 80GB HBM3");
	/* our process: 1 GiB on GPU 0, nothing on GPU 1 */
	struct pt_counter_stat st;
	assert_int_equal(pt_counter_stat(t, "GPU Memory(Process) bytes", 0, UINT64_MAX, &st), 4);
	assert_true(fabs(st.max - (double)(1ull << 30)) < 1);
	assert_true(st.min == 0);
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
	char desc[128];
	b->ops->describe(b, desc, sizeof desc);
	assert_string_equal(desc, "NVML: 2 GPUs, every 1 s");
	b->ops->close(b);
	pt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unavailable),
		cmocka_unit_test(test_samples),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
