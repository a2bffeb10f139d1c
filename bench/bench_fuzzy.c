/*
 * bench_fuzzy.c - pt_fuzzy_rank over N realistic operator names (default
 * 100,000; argv[1] overrides): aten:: ops, templated cuDNN/CUTLASS kernels,
 * NCCL kernels, module paths. Types two words one key at a time (patterns
 * of 1..8 characters) and prints ms per keystroke beside a reference: a
 * plain strcasestr filter over the same names for the same pattern, as a
 * ratio. The target is 20 ms per keystroke.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/fuzzy.h"
#include "model/util.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static const char *const aten[] = {"mm", "addmm", "bmm", "conv2d", "convolution", "_convolution",
	"cudnn_convolution", "relu", "relu_", "gelu", "layer_norm", "native_layer_norm", "softmax",
	"_softmax", "add", "add_", "mul", "div", "copy_", "to", "_to_copy", "empty", "zeros", "view",
	"reshape", "transpose", "permute", "contiguous", "max_pool2d_with_indices", "batch_norm",
	"cudnn_batch_norm", "embedding", "dropout", "linear", "matmul", "sum", "mean", "cat",
	"scaled_dot_product_attention", "_flash_attention_forward", "index_select", "where"};
static const char *const kern[] = {"implicit_convolve_sgemm", "bn_fw_tr_1C11_kernel_NCHW",
	"wgrad_alg0_engine", "dgrad_engine", "elementwise_kernel", "vectorized_elementwise_kernel",
	"reduce_kernel", "softmax_warp_forward", "ampere_sgemm_128x64_tn", "sm80_xmma_gemm_f16f16",
	"cutlass_80_tensorop_s1688gemm", "fmha_cutlassF_f16_aligned_64x64", "layer_norm_kernel"};
static const char *const mods[] = {"encoder", "decoder", "layers", "attn", "self_attn", "mlp",
	"fc1", "fc2", "norm1", "norm2", "q_proj", "k_proj", "v_proj", "out_proj", "conv1", "bn1",
	"downsample", "backbone", "head", "embed_tokens"};
static const char *const nccl[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast",
	"SendRecv"};
static const char *const typ[] = {"float", "__half", "c10::BFloat16", "double", "int"};

static char *make_name(void)
{
	char b[512];
	switch (rnd(6)) {
	case 0:
	case 1:
		snprintf(b, sizeof b, "aten::%s", aten[rnd(sizeof aten / sizeof *aten)]);
		if (rnd(3) == 0) /* autograd nodes and variants */
			snprintf(b + strlen(b), sizeof b - strlen(b), "_%u", rnd(100000));
		break;
	case 2:
		snprintf(b, sizeof b, "void %s::%s<%s, %u, %u>(%s const*, %s*, int, cudnnTensorStruct*)",
			 rnd(2) ? "cudnn::detail" : "at::native::(anonymous namespace)",
			 kern[rnd(sizeof kern / sizeof *kern)], typ[rnd(5)], 32u << rnd(5),
			 rnd(1000), typ[rnd(5)], typ[rnd(5)]);
		break;
	case 3:
		snprintf(b, sizeof b, "ncclKernel_%s_%s_%s_%s(ncclDevComm*, unsigned long, ncclWork*)#%u",
			 nccl[rnd(5)], rnd(2) ? "RING_LL" : "TREE_SIMPLE", rnd(2) ? "Sum" : "Max",
			 rnd(2) ? "bf16" : "f32", rnd(10000));
		break;
	default: {
		int depth = 2 + (int)rnd(5);
		size_t o = 0;
		for (int i = 0; i < depth; i++)
			o += (size_t)snprintf(b + o, sizeof b - o, "%s%s.%u", i ? "." : "",
					      mods[rnd(sizeof mods / sizeof *mods)], rnd(48));
		snprintf(b + o, sizeof b - o, " (%s)", rnd(2) ? "Linear" : "Conv2d");
		break;
	}
	}
	return pt_xstrdup(b);
}

/* Median of v[0, n) (sorts v). */
static double median(double *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 100000;
	char **names = pt_xmalloc(n * sizeof *names);
	size_t *lens = pt_xmalloc(n * sizeof *lens);
	uint32_t *out = pt_xmalloc(n * sizeof *out);
	size_t bytes = 0;
	for (size_t i = 0; i < n; i++) {
		names[i] = make_name();
		lens[i] = strlen(names[i]);
		bytes += lens[i];
	}
	printf("%zu names, %.1f bytes on average\n", n, (double)bytes / n);
	const char *words[] = {"convwgrd", "allredsm", "attnqprj"};
	double worst = 0, sum_fz = 0, sum_ref = 0;
	int keys = 0;
	printf("%-10s %8s %10s %10s %7s\n", "pattern", "matches", "fuzzy ms", "strstr ms", "ratio");
	for (size_t w = 0; w < sizeof words / sizeof *words; w++) {
		for (size_t len = 1; len <= 8; len++) {
			enum { reps = 5 };
			size_t k = 0, kref = 0;
			double fz[reps], rf[reps];
			for (int r = 0; r < reps; r++) {
				uint64_t t0 = pt_now_ns();
				k = pt_fuzzy_rank(words[w], len, (const char *const *)names, lens, n, out);
				uint64_t t1 = pt_now_ns();
				char pat[16];
				memcpy(pat, words[w], len);
				pat[len] = 0;
				kref = 0;
				for (size_t i = 0; i < n; i++)
					if (strcasestr(names[i], pat))
						out[kref++] = (uint32_t)i;
				uint64_t t2 = pt_now_ns();
				fz[r] = (double)(t1 - t0) / 1e6;
				rf[r] = (double)(t2 - t1) / 1e6;
			}
			double best = median(fz, reps), best_ref = median(rf, reps);
			printf("%-10.*s %8zu %10.2f %10.2f %6.1fx\n", (int)len, words[w], k, best,
			       best_ref, best / best_ref);
			(void)kref;
			if (best > worst)
				worst = best;
			sum_fz += best;
			sum_ref += best_ref;
			keys++;
		}
	}
	printf("fuzzy rank: %.2f ms per keystroke on average, worst %.2f ms (target 20 ms); "
	       "strcasestr filter %.2f ms; ratio %.1fx\n",
	       sum_fz / keys, worst, sum_ref / keys, sum_fz / sum_ref);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(lens);
	free(out);
	return 0;
}
