/*
 * test_flops.c - operator FLOPs and bytes from input shapes (flops.h): each
 * formula on small shapes whose answer is worked out by hand in the
 * comments, the args as torch writes them (Input Dims, Input type,
 * Concrete Inputs, torch's own "flops"), the device peaks and the roofline
 * share, the tables per operator and per kernel (a kernel's share of its
 * operator), the round trip through proftop's export, and the bundled
 * Kineto trace recorded with record_shapes.
 */
#include "testutil.h"

#include <math.h>
#include <unistd.h>

#include "proftop/chrome.h"
#include "proftop/agg.h"
#include "proftop/flops.h"
#include "proftop/store.h"

static double g_fl, g_by;
static int g_dt;

/* FLOPs of name with these args' JSON texts (NULL: absent); 0 when unknown */
static int calc(const char *name, const char *dims, const char *types, const char *conc,
		double torch_flops)
{
	int op = pt_flops_op(name, strlen(name));
	g_fl = g_by = -1;
	return pt_flops_compute(op, dims, dims ? strlen(dims) : 0, types, types ? strlen(types) : 0,
				conc, conc ? strlen(conc) : 0, torch_flops, &g_fl, &g_by, &g_dt);
}

static void test_matmuls(void **state)
{
	(void)state;
	/* mm [2,3]x[3,4]: 2*2*4*3 = 48; bytes (6 + 12 + 8) * 4 = 104 */
	assert_true(calc("aten::mm", "[[2, 3], [3, 4]]", "[\"float\", \"float\"]", NULL, -1));
	assert_true(g_fl == 48 && g_by == 104 && g_dt == PT_DT_F32);
	/* addmm: the bias [4] adds 16 bytes, no FLOPs */
	assert_true(calc("aten::addmm", "[[4], [2, 3], [3, 4], [], []]", NULL, NULL, -1));
	assert_true(g_fl == 48 && g_by == 120);
	/* bmm [5,2,3]x[5,3,4]: 5 * 48 */
	assert_true(calc("aten::bmm", "[[5, 2, 3], [5, 3, 4]]", NULL, NULL, -1));
	assert_true(g_fl == 240);
	/* matmul broadcasts batch dims: [7,1,2,3] x [5,3,4] is 7*5 products of 2x3x4 */
	assert_true(calc("aten::matmul", "[[7, 1, 2, 3], [5, 3, 4]]", NULL, NULL, -1));
	assert_true(g_fl == 2.0 * 35 * 2 * 4 * 3);
	/* matrix x vector: [6,3] x [3] = 2*6*3 */
	assert_true(calc("aten::matmul", "[[6, 3], [3]]", NULL, NULL, -1));
	assert_true(g_fl == 36);
	/* linear: input [8,16], weight [32,16], bias [32]: 2*8*16*32; bytes
	 * (128 + 512 + 32 + 256) * 4 */
	assert_true(calc("aten::linear", "[[8, 16], [32, 16], [32]]", NULL, NULL, -1));
	assert_true(g_fl == 8192 && g_by == (128 + 512 + 32 + 256) * 4);
	/* 16-bit: 2-byte elements; bfloat16 and half each their own class, and
	 * float8 1-byte elements of the fp8 class */
	assert_true(calc("aten::mm", "[[2, 3], [3, 4]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]",
			 NULL, -1));
	assert_true(g_fl == 48 && g_by == 52 && g_dt == PT_DT_BF16);
	assert_true(calc("aten::mm", "[[2, 3], [3, 4]]", "[\"c10::Half\", \"c10::Half\"]", NULL, -1));
	assert_true(g_fl == 48 && g_by == 52 && g_dt == PT_DT_F16);
	assert_true(calc("aten::mm", "[[2, 3], [3, 4]]",
			 "[\"c10::Float8_e4m3fn\", \"c10::Float8_e4m3fn\"]", NULL, -1));
	assert_true(g_fl == 48 && g_by == 26 && g_dt == PT_DT_FP8);
	/* every class survives the event's packing */
	for (int d = 0; d < PT_DT__COUNT; d++) {
		double f, b;
		int dd;
		pt_flops_unpack(pt_flops_pack(1e9, 3e6, d), &f, &b, &dd);
		assert_int_equal(dd, d);
		assert_true(fabs(f - 1e9) < 1e3 && fabs(b - 3e6) < 10);
	}
	/* shapes that do not multiply, or none: no answer */
	assert_false(calc("aten::mm", "[[2, 3], [4, 4]]", NULL, NULL, -1));
	assert_false(calc("aten::mm", "[[], []]", NULL, NULL, -1));
	assert_false(calc("aten::mm", NULL, NULL, NULL, -1));
	assert_int_equal(pt_flops_op("aten::empty", 11), 0);
}

static void test_convolutions(void **state)
{
	(void)state;
	/* conv2d input [1,3,8,8], weight [4,3,3,3], stride 1, padding 1: output
	 * [1,4,8,8]; 2 * 4*64 outputs * 3*9 = 13824; bytes (192 + 108 + 4 +
	 * 256) * 4 */
	const char *d = "[[1, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], []]";
	const char *ty = "[\"float\", \"float\", \"float\", \"ScalarList\", \"ScalarList\", "
			 "\"ScalarList\", \"Int\"]";
	assert_true(calc("aten::conv2d", d, ty, "[\"\", \"\", \"\", \"[1, 1]\", \"[1, 1]\", "
						"\"[1, 1]\", \"1\"]",
			 -1));
	assert_true(g_fl == 13824 && g_by == (192 + 108 + 4 + 256) * 4);
	/* stride 2: output 4x4, a quarter */
	assert_true(calc("aten::conv2d", d, ty, "[\"\", \"\", \"\", \"[2, 2]\", \"[1, 1]\", "
						"\"[1, 1]\", \"1\"]",
			 -1));
	assert_true(g_fl == 3456);
	/* padding 'same' */
	assert_true(calc("aten::conv2d", d, NULL, "[\"\", \"\", \"\", \"[1]\", \"'same'\", \"[1]\", \"1\"]",
			 -1));
	assert_true(g_fl == 13824);
	/* padding 0 (one value for both dims): 6x6 outputs */
	assert_true(calc("aten::conv2d", d, NULL, "[\"\", \"\", \"\", \"[1]\", \"[0]\", \"[1]\", \"1\"]",
			 -1));
	assert_true(g_fl == 2.0 * 4 * 36 * 27);
	/* no strides known: only torch's own figure, whose output size it implies
	 * (13824 / (2*27) = 256 outputs) */
	assert_false(calc("aten::conv2d", d, ty, NULL, -1));
	assert_true(calc("aten::conv2d", d, ty, NULL, 13824));
	assert_true(g_fl == 13824 && g_by == (192 + 108 + 4 + 256) * 4);
	/* aten::convolution: groups at 8, transposed at 6; a depthwise conv
	 * [1,4,8,8] * [4,1,3,3], groups 4: 2 * 4*64 * 1*9 = 4608 */
	assert_true(calc("aten::convolution", "[[1, 4, 8, 8], [4, 1, 3, 3], [], [], [], [], [], [], []]",
			 NULL,
			 "[\"\", \"\", \"\", \"[1, 1]\", \"[1, 1]\", \"[1, 1]\", \"False\", \"[0, 0]\", "
			 "\"4\"]",
			 -1));
	assert_true(g_fl == 4608);
	/* cudnn_convolution's order: input, weight, padding, stride, dilation, groups */
	assert_true(calc("aten::cudnn_convolution", "[[1, 3, 8, 8], [4, 3, 3, 3], [], [], [], []]", NULL,
			 "[\"\", \"\", \"[0, 0]\", \"[1, 1]\", \"[1, 1]\", \"1\"]", -1));
	assert_true(g_fl == 2.0 * 4 * 36 * 27);
	/* transposed: every input element scatters into Cout/g x k outputs:
	 * [1,4,4,4] * [4,2,3,3]: 2 * 64 * 2*9 = 2304, no strides needed */
	assert_true(calc("aten::conv_transpose2d", "[[1, 4, 4, 4], [4, 2, 3, 3], [], [], [], [], [], []]",
			 NULL, NULL, -1));
	assert_true(g_fl == 2304);
}

static void test_attention_and_elementwise(void **state)
{
	(void)state;
	/* q [2,4,8,16], k and v [2,4,10,16]: QK^T 2*8*8*10*16 and PV as much */
	assert_true(calc("aten::scaled_dot_product_attention",
			 "[[2, 4, 8, 16], [2, 4, 10, 16], [2, 4, 10, 16], [], [], []]", NULL, NULL, -1));
	assert_true(g_fl == 2.0 * (2.0 * 8 * 8 * 10 * 16));
	assert_true(g_by == (1024 + 1280 + 1280 + 1024) * 4.0);
	/* add [4,5] + [5]: 20 outputs; bytes (20 + 5 + 20) * 4 */
	assert_true(calc("aten::add", "[[4, 5], [5], []]", "[\"float\", \"float\", \"Scalar\"]", NULL,
			 -1));
	assert_true(g_fl == 20 && g_by == 180);
	/* in place, the same */
	assert_true(calc("aten::add_", "[[4, 5], [5], []]", "[\"float\", \"float\", \"Scalar\"]", NULL,
			 -1));
	assert_true(g_fl == 20);
	/* clamp_min(self, min, out=...): one input read, the out= tensor is the
	 * output: 6 outputs, (6 + 6) * 4 bytes */
	assert_true(calc("aten::clamp_min", "[[2, 3], [], [2, 3]]", "[\"float\", \"Int\", \"float\"]",
			 NULL, -1));
	assert_true(g_fl == 6 && g_by == 48);
	/* a 0-dim tensor operand (a "long int" []): one element, 8 bytes */
	assert_true(calc("aten::div", "[[3, 4], []]", "[\"float\", \"long int\"]", NULL, -1));
	assert_true(g_fl == 12 && g_by == 12 * 4 + 8 + 12 * 4);
	/* addcmul: two FLOPs per element */
	assert_true(calc("aten::addcmul_", "[[10], [10], [10], []]", NULL, NULL, -1));
	assert_true(g_fl == 20);
	/* shapes that do not broadcast */
	assert_false(calc("aten::add", "[[4, 5], [3], []]", "[\"float\", \"float\", \"Scalar\"]", NULL,
			  -1));
	/* torch's figure wins for FLOPs */
	assert_true(calc("aten::mul", "[[4, 5], [4, 5]]", NULL, NULL, 7));
	assert_true(g_fl == 7);
	/* garbage in the args never crashes, and gives no answer */
	assert_false(calc("aten::mm", "[[2, 3], [3", NULL, NULL, -1));
	assert_false(calc("aten::mm", "[[\"x\"], {\"a\": 1}]", "[1, 2", "[\"", -1));
	assert_false(calc("aten::conv2d", "[[1, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], []]", NULL,
			  "[\"\", \"\", \"\", \"[0, 0]\", \"[1, 1]\", \"[1, 1]\", \"1\"]", -1)); /* stride 0 */
}

static void test_pack_and_peaks(void **state)
{
	(void)state;
	double fl, by;
	int dt;
	pt_flops_unpack(pt_flops_pack(1.5e12, 3.25e9, PT_DT_F16), &fl, &by, &dt);
	assert_true(fabs(fl / 1.5e12 - 1) < 1e-7 && fabs(by / 3.25e9 - 1) < 1e-6 && dt == PT_DT_F16);
	struct pt_peak p;
	assert_int_equal(pt_peak_of_device("NVIDIA H100 80GB HBM3", &p), 0);
	assert_true(p.tflops[PT_DT_F16] == 989.5 && p.gbps == 3350);
	assert_int_equal(pt_peak_of_device("NVIDIA A100-SXM4-80GB", &p), 0);
	assert_true(p.tflops[PT_DT_F16] == 312 && p.gbps == 2039);
	assert_int_equal(pt_peak_of_device("NVIDIA A10", &p), 0); /* not an A100 */
	assert_true(p.tflops[PT_DT_F16] == 125 && p.gbps == 600);
	assert_int_equal(pt_peak_of_device("NVIDIA L40S", &p), 0); /* not an L4 */
	assert_true(p.tflops[PT_DT_F16] == 362);
	assert_int_equal(pt_peak_of_device("Some Accelerator 9000", &p), -1);
	/* per dtype class: TF32 and fp8 tensor cores where the device has them,
	 * bf16 from Ampere on (a V100 has fp16 tensor cores only) */
	assert_int_equal(pt_peak_of_device("NVIDIA H100 80GB HBM3", &p), 0);
	assert_true(p.tflops[PT_DT_TF32] == 494.7 && p.tflops[PT_DT_BF16] == 989.5 &&
		    p.tflops[PT_DT_FP8] == 1978.9 && p.tflops[PT_DT_F32] == 66.9);
	assert_int_equal(pt_peak_of_device("Tesla V100-SXM2-16GB", &p), 0);
	assert_true(p.tflops[PT_DT_F16] == 125 && p.tflops[PT_DT_BF16] == 0 &&
		    p.tflops[PT_DT_TF32] == 0 && p.tflops[PT_DT_FP8] == 0);
	assert_string_equal(pt_dtype_name(PT_DT_TF32), "tf32");
	/* a row of 1 TFLOP in 1 s over 1 GB on an H100: intensity 1000 FLOP/B,
	 * compute bound: fp32 1 / 66.9 TFLOP/s */
	assert_int_equal(pt_peak_of_device("NVIDIA H100 80GB HBM3", &p), 0);
	struct pt_flops_row r = {0};
	r.flops = 1e12;
	r.bytes = 1e9;
	r.cpu_ns = 1000000000ull;
	assert_true(fabs(pt_flops_row_tflops(&r) - 1.0) < 1e-9);
	/* timed on the CPU (no kernels): a rate, but no share of a GPU's roof */
	assert_true(pt_flops_row_peak_pct(&r, &p) == -1);
	r.gpu_ns = 1000000000ull;
	assert_true(fabs(pt_flops_row_peak_pct(&r, &p) - 100.0 / 66.9) < 1e-9);
	/* memory bound: 1 GFLOP over 1 TB in 1 s: intensity 0.001, the roof is
	 * 0.001 * 3350 GB/s = 3.35 GFLOP/s; achieved 1 GFLOP/s */
	r.flops = 1e9;
	r.bytes = 1e12;
	assert_true(fabs(pt_flops_row_peak_pct(&r, &p) - 100.0 / 3.35) < 1e-6);
	/* more traffic than the memory moves (10 TB/s on 3.35): past the
	 * memory roof, flagged, not judged against the compute peak alone */
	r.bytes = 1e13;
	assert_true(pt_flops_row_peak_pct(&r, &p) == -2);
	/* past the compute peak: the peak given is too low */
	pt_peak_override(&p, 0.5, 0);
	r.flops = 1e12;
	r.bytes = 1e9;
	assert_true(pt_flops_row_peak_pct(&r, &p) == -2);
	/* no peak */
	assert_true(pt_flops_row_peak_pct(&r, NULL) == -1);
}

/* An operator launching two kernels, 30 and 10 us, and a 10 us memset, on a
 * GPU trace. */
static const char gpu_trace[] =
    "{\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA H100 80GB HBM3\"}],\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":100,"
    "\"dur\":50,\"args\":{\"Input Dims\":[[64, 128], [128, 256]],\"Input type\":[\"c10::Half\","
    "\"c10::Half\"]}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":110,\"dur\":5,\"args\":{\"correlation\":7}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":120,\"dur\":5,\"args\":{\"correlation\":8}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":130,\"dur\":30,"
    "\"args\":{\"correlation\":7,\"device\":0,\"stream\":7}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"splitk\",\"pid\":0,\"tid\":7,\"ts\":170,\"dur\":10,"
    "\"args\":{\"correlation\":8,\"device\":0,\"stream\":7}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemsetAsync\",\"pid\":1,\"tid\":1,"
    "\"ts\":130,\"dur\":5,\"args\":{\"correlation\":9}},"
    "{\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":\"Memset (Device)\",\"pid\":0,\"tid\":7,"
    "\"ts\":185,\"dur\":10,\"args\":{\"correlation\":9,\"device\":0,\"stream\":7}}"
    "]}";

static void check_gpu_tables(struct pt_trace *t)
{
	struct pt_flops_table tab;
	pt_flops_summarize(t, 0, UINT64_MAX, &tab);
	assert_int_equal(tab.nops, 1);
	const double fl = 2.0 * 64 * 256 * 128; /* 4194304 */
	assert_true(fabs(tab.ops[0].flops - fl) < 1);
	assert_int_equal(tab.ops[0].gpu_ns, 50000); /* both kernels and the memset */
	assert_int_equal(tab.ops[0].dtype, PT_DT_F16);
	assert_int_equal(tab.nkernels, 2); /* the memset computes nothing: no row, no FLOPs */
	/* each kernel takes its time's share: 3/4 and 1/4 */
	assert_string_equal(pt_trace_str(t, tab.kernels[0].name_id), "gemm");
	assert_true(fabs(tab.kernels[0].flops - fl * 0.75) < 1);
	assert_true(fabs(tab.kernels[1].flops - fl * 0.25) < 1);
	assert_int_equal(tab.kernels[0].gpu_ns, 30000);
	struct pt_peak p;
	assert_int_equal(pt_peak_of_trace(t, 0, 0, &p), 0); /* the trace's deviceProperties */
	assert_true(p.tflops[PT_DT_F16] == 989.5);
	pt_flops_table_free(&tab);
}

/* An fp32 matmul that cuBLAS ran as TF32 on an A100: the operator and the
 * kernel are TF32 rows, judged against the TF32 peak (156), not fp32 (19.5);
 * a plain fp32 kernel of the same operator stays fp32. */
static const char tf32_trace[] =
    "{\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA A100-SXM4-80GB\"}],\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":100,"
    "\"dur\":50,\"args\":{\"Input Dims\":[[1024, 1024], [1024, 1024]],\"Input type\":[\"float\","
    "\"float\"]}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":110,\"dur\":5,\"args\":{\"correlation\":7}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":120,\"dur\":5,\"args\":{\"correlation\":8}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16\","
    "\"pid\":0,\"tid\":7,\"ts\":130,\"dur\":30,\"args\":{\"correlation\":7,\"device\":0,\"stream\":7}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"splitKreduce_kernel\",\"pid\":0,\"tid\":7,"
    "\"ts\":170,\"dur\":10,\"args\":{\"correlation\":8,\"device\":0,\"stream\":7}}"
    "]}";

static void test_tf32(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	char err[256];
	assert_int_equal(pt_chrome_read_mem(t, tf32_trace, strlen(tf32_trace), "tf32", NULL, err,
					    sizeof err),
			 0);
	struct pt_flops_table tab;
	pt_flops_summarize(t, 0, UINT64_MAX, &tab);
	assert_int_equal(tab.nops, 1);
	assert_int_equal(tab.ops[0].dtype, PT_DT_TF32); /* 30 of its 40 us in the TF32 kernel */
	assert_int_equal(tab.nkernels, 2);
	for (size_t i = 0; i < 2; i++) {
		const char *n = pt_trace_str(t, tab.kernels[i].name_id);
		assert_int_equal(tab.kernels[i].dtype, strstr(n, "tf32") ? PT_DT_TF32 : PT_DT_F32);
	}
	struct pt_peak p;
	assert_int_equal(pt_peak_of_trace(t, 0, 0, &p), 0);
	/* 2*1024^3 FLOPs in 40 us = 53.7 TFLOP/s: past fp32's 19.5, 34 % of TF32's 156 */
	double pct = pt_flops_row_peak_pct(&tab.ops[0], &p);
	assert_true(fabs(pct - 100.0 * (2.0 * 1024 * 1024 * 1024 / 40e-6 / 1e12) / 156.0) < 1e-6);
	pt_flops_table_free(&tab);
	pt_trace_free(t);
}

/* MFU: a step [0, 1000) us holding aten::linear (which holds aten::addmm,
 * both with the same FLOPs: counted once) on an H100, in bf16; another
 * process's call in the same span is its own step's, not this one's. */
static const char mfu_trace[] =
    "{\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA H100 80GB HBM3\"}],\"traceEvents\":["
    "{\"ph\":\"X\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1000},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":100,"
    "\"dur\":50,\"args\":{\"Input Dims\":[[4096, 4096], [4096, 4096], []],\"Input type\":["
    "\"c10::BFloat16\",\"c10::BFloat16\",\"\"]}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,\"tid\":1,\"ts\":105,"
    "\"dur\":40,\"args\":{\"Input Dims\":[[4096], [4096, 4096], [4096, 4096]],\"Input type\":["
    "\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\"]}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":110,\"dur\":5,\"args\":{\"correlation\":7}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sm90_gemm_bf16\",\"pid\":0,\"tid\":7,\"ts\":120,"
    "\"dur\":400,\"args\":{\"correlation\":7,\"device\":0,\"stream\":7}},"
    "{\"ph\":\"X\",\"name\":\"ProfilerStep#1\",\"pid\":2,\"tid\":1,\"ts\":0,\"dur\":1000},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":2,\"tid\":1,\"ts\":100,"
    "\"dur\":50,\"args\":{\"Input Dims\":[[8, 8], [8, 8]]}}"
    "]}";

static void test_mfu(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	char err[256];
	assert_int_equal(pt_chrome_read_mem(t, mfu_trace, strlen(mfu_trace), "mfu", NULL, err,
					    sizeof err),
			 0);
	struct pt_summary *s = pt_summarize(t, NULL);
	assert_int_equal(s->nsteps, 2);
	struct pt_peak p;
	assert_int_equal(pt_peak_of_trace(t, 0, 0, &p), 0);
	struct pt_mfu m;
	assert_int_equal(pt_mfu_compute(t, s->steps, s->nsteps, &p, &m), 0);
	const double fl = 2.0 * 4096 * 4096 * 4096; /* once, not twice */
	assert_int_equal(m.steps, 2);
	assert_int_equal(m.dtype, PT_DT_BF16);
	double total = fl + 2.0 * 8 * 8 * 8; /* the other rank's small mm in its own step */
	assert_true(fabs(m.flops_per_step - total / 2) < 1);
	assert_true(fabs(m.tflops_avg - total / 2e-3 / 1e12) < 1e-9);
	assert_true(fabs(m.mfu_pct - 100.0 * m.tflops_avg / 989.5) < 1e-9);
	assert_true(m.peak_tflops == 989.5 && m.gpu_trace);
	assert_int_equal(m.nper_step, 2);
	/* each step its own process's calls: 137.4 TFLOP/s in one, ~0 in the other */
	double hi = m.per_step[0] > m.per_step[1] ? m.per_step[0] : m.per_step[1];
	assert_true(fabs(hi - fl / 1e-3 / 1e12) < 1e-6);
	pt_mfu_free(&m);
	/* a peak too low: no MFU past it, flagged */
	pt_peak_override(&p, 10, 0);
	assert_int_equal(pt_mfu_compute(t, s->steps, s->nsteps, &p, &m), 0);
	assert_true(m.mfu_pct == -2);
	pt_mfu_free(&m);
	pt_summary_free(s);
	pt_trace_free(t);
	/* the CPU: no device, so no peak is assumed, unless the user gives one */
	static const char cpu_trace[] =
	    "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,"
	    "\"ts\":0,\"dur\":1000},{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\","
	    "\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":50,\"args\":{\"Input Dims\":[[64, 64], [64, 64]]}}]}";
	t = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	assert_int_equal(pt_chrome_read_mem(t, cpu_trace, strlen(cpu_trace), "cpu", NULL, err,
					    sizeof err),
			 0);
	s = pt_summarize(t, NULL);
	assert_int_equal(pt_peak_of_device("NVIDIA H100 80GB HBM3", &p), 0);
	assert_int_equal(pt_mfu_compute(t, s->steps, s->nsteps, &p, &m), 0);
	assert_true(m.mfu_pct == -1 && m.peak_tflops == 0 && !m.gpu_trace);
	assert_true(m.tflops_avg > 0);
	pt_mfu_free(&m);
	pt_peak_override(&p, 1, 0);
	assert_int_equal(pt_mfu_compute(t, s->steps, s->nsteps, &p, &m), 0);
	assert_true(m.mfu_pct > 0 && m.mfu_pct < 100);
	pt_mfu_free(&m);
	pt_summary_free(s);
	pt_trace_free(t);
}

static void test_tables(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	char err[256];
	assert_int_equal(pt_chrome_read_mem(t, gpu_trace, strlen(gpu_trace), "gpu", NULL, err,
					    sizeof err),
			 0);
	assert_int_equal(t->flop_events, 1);
	check_gpu_tables(t);
	/* proftop's export carries the figures and the device; reading it back
	 * gives the same tables */
	char path[] = "/tmp/pt-flops-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct pt_export_opts eo = {0};
	eo.force = 1;
	assert_int_equal(pt_chrome_export(t, path, &eo, err, sizeof err), 0);
	struct pt_trace *t2 = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	assert_int_equal(pt_chrome_read(t2, path, NULL, err, sizeof err), 0);
	unlink(path);
	assert_int_equal(t2->flop_events, 1);
	check_gpu_tables(t2);
	pt_trace_free(t2);
	pt_trace_free(t);
	/* a trace without shapes: nothing, at no cost */
	t = pt_trace_new(PT_STORE_MIN_MAX_BYTES);
	struct pt_flops_table tab;
	pt_flops_summarize(t, 0, UINT64_MAX, &tab);
	assert_int_equal(tab.nops, 0);
	pt_trace_free(t);
}

/* The bundled Kineto trace (ResNet-50, record_shapes): its classifier's
 * addmm has Input Dims [[1000], [32, 2048], [2048, 1000]], 6 calls:
 * 6 * 2*32*2048*1000 FLOPs; its convolutions carry no strides (torch 1.8):
 * no FLOPs for them rather than a guess. */
static void test_kineto_fixture(void **state)
{
	(void)state;
	struct pt_trace *t = pt_trace_new((size_t)256 << 20);
	char err[256];
	assert_int_equal(pt_chrome_read(t, tu_path(tu_fixtures(), "pytorch/resnet50_workers0.pt.trace.json.gz"),
					NULL, err, sizeof err),
			 0);
	struct pt_flops_table tab;
	pt_flops_summarize(t, 0, UINT64_MAX, &tab);
	int seen = 0;
	for (size_t i = 0; i < tab.nops; i++) {
		const char *n = pt_trace_str(t, tab.ops[i].name_id);
		if (!strcmp(n, "aten::addmm")) {
			assert_int_equal(tab.ops[i].calls, 6);
			assert_true(fabs(tab.ops[i].flops - 6.0 * 2 * 32 * 2048 * 1000) < 1e3);
			assert_true(tab.ops[i].gpu_ns > 0); /* timed by its kernels */
			seen = 1;
		}
		assert_null(strstr(n, "conv"));
	}
	assert_true(seen);
	struct pt_peak p;
	assert_int_equal(pt_peak_of_trace(t, 0, 0, &p), 0); /* a V100, from deviceProperties */
	assert_true(p.gbps == 900);
	pt_flops_table_free(&tab);
	pt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_matmuls),
	    cmocka_unit_test(test_convolutions),
	    cmocka_unit_test(test_attention_and_elementwise),
	    cmocka_unit_test(test_pack_and_peaks),
	    cmocka_unit_test(test_tf32),
	    cmocka_unit_test(test_mfu),
	    cmocka_unit_test(test_tables),
	    cmocka_unit_test(test_kineto_fixture),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
