/*
 * test_probe_cupti_path.c - the CUPTI backend's API callback (runtime calls,
 * driver launches made directly, driver calls inside a runtime call not
 * recorded twice) and the whole path: synthetic records -> rings -> session
 * reader -> pt_summarize (device lanes, op/phase attribution, summaries).
 * Built three times, as test_probe_cupti.c is; without CUDA headers it has
 * nothing to run.
 */
#include "cupti_util.h"

#if HAVE_STRUCTS
static void test_driver_calls(void **state)
{
	struct pt_trace *t = drain(NULL); /* what earlier tests left */
	proftop_op_push("op::rt");
	launch("cudaLaunchKernel", 901, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	proftop_op_pop();
	proftop_op_push("op::triton");
	call(CUPTI_CB_DOMAIN_DRIVER_API, "cuLaunchKernel", 902, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
	     0);
	call(CUPTI_CB_DOMAIN_DRIVER_API, "cuLaunchKernelEx", 903,
	     CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 0);
	call(CUPTI_CB_DOMAIN_DRIVER_API, "cuStreamSynchronize", 904,
	     CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, 0);
	proftop_op_pop();
	t = drain(NULL);
	struct seen *s = malloc(sizeof *s);
	collect(t, s);
	assert_int_equal(s->nruntime, 4);
	assert_int_equal(count_runtime(s, "cudaLaunchKernel"), 1);
	assert_int_equal(count_runtime(s, "cuLaunchKernel"), 1); /* not the one inside cudaLaunchKernel */
	assert_int_equal(count_runtime(s, "cuLaunchKernelEx"), 1);
	for (uint32_t i = 0; i < s->nruntime; i++)
		assert_true(s->rt_corr[i] >= 901 && s->rt_corr[i] <= 904);
	free(s);
}

/* ---- the whole path: callback + buffers -> rings -> reader -> summary ---- */

struct dev_job {
	uint64_t base;
};

static void *cupti_thread(void *arg)
{
	struct dev_job *j = arg;
	uint64_t b = j->base;
	/* device 0: a gemm on stream 7 [b+1000, b+5000), an NCCL all-reduce on
	 * stream 13 [b+3000, b+9000) (overlap 2000); device 1: a gemm on stream 7
	 * [b+2000, b+4000); a copy on device 0 */
	static CUpti_ActivityKernel8 k0, k1, c0, bad;
	static uint8_t m0[128];
	k0 = kernel("_Z4gemmv", b + 1000, b + 5000, 0, 7, 11);
	c0 = kernel("ncclDevKernel_AllReduce_Sum_f32", b + 3000, b + 9000, 0, 13, 12);
	k1 = kernel("_Z4gemmv", b + 2000, b + 4000, 1, 7, 11);
	/* a DtoH copy, in the layout all copy structs share */
	const struct pt_cupti_layout *l = pt_cupti_layout_for(CUPTI_API_VERSION, NULL);
	memset(m0, 0, sizeof m0);
	uint32_t kind = CUPTI_ACTIVITY_KIND_MEMCPY, dev = 0, stream = 7, corr = 13;
	uint64_t bytes = 256, start = b + 9500, end = b + 9600;
	memcpy(m0, &kind, 4);
	m0[l->m_copy_kind] = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
	memcpy(m0 + l->m_bytes, &bytes, 8);
	memcpy(m0 + l->m_start, &start, 8);
	memcpy(m0 + l->m_end, &end, 8);
	memcpy(m0 + l->m_device, &dev, 4);
	memcpy(m0 + l->m_stream, &stream, 4);
	memcpy(m0 + l->m_corr, &corr, 4);
	bad = kernel("_Z4gemmv", 0, 10, 0, 7, 11);
	const void *recs[] = {&k0, &c0, &k1, m0, &bad};
	pt_cupti_take_records(CUPTI_API_VERSION, recs, 5);
	return NULL;
}

static void test_end_to_end(void **state)
{
	drain(NULL); /* what earlier tests left */
	uint64_t dropped0 = source_dropped();
	proftop_step_begin();
	proftop_phase_push(PROFTOP_PHASE_FORWARD);
	proftop_op_push("aten::mm");
	uint64_t base = launch("cudaLaunchKernel", 11, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	proftop_op_pop();
	proftop_phase_pop();
	proftop_phase_push(PROFTOP_PHASE_BACKWARD);
	proftop_op_push("nccl:all_reduce");
	launch("cudaLaunchKernel", 12, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	launch("cudaMemcpyAsync", 13, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020);
	launch("cudaDeviceSynchronize", 14, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020);
	proftop_op_pop();
	proftop_phase_pop();
	usleep(100); /* the step outlasts the device work (base + 9.6 us) */
	struct dev_job j = {base};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, cupti_thread, &j), 0);
	pthread_join(th, NULL);
	proftop_step(8);

	struct pt_trace *t = drain(NULL);
	assert_int_equal(pt_session_stats(g_sess)->bad_records, 0);
	assert_true(pt_session_stats(g_sess)->source_dropped >= dropped0 + 1); /* the start-0 kernel */

	/* one lane per (device, stream): GPU 0/7, GPU 0/13, GPU 1/7 */
	int lanes = 0, seen[2][14] = {{0}};
	for (uint32_t i = 0; i < t->ntracks; i++) {
		const struct pt_track *tr = &t->tracks[i];
		if (!pt_track_is_device(tr))
			continue;
		lanes++;
		assert_true(tr->device >= 0 && tr->device < 2 && tr->stream < 14);
		seen[tr->device][tr->stream]++;
	}
	assert_int_equal(lanes, 3);
	assert_int_equal(seen[0][7], 1);
	assert_int_equal(seen[0][13], 1);
	assert_int_equal(seen[1][7], 1);

	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	struct pt_summary *sum = pt_summarize(t, &o);
	assert_true(sum->has_gpu);
	assert_int_equal(sum->nsteps, 1);
	/* attribution: aten::mm launched corr 11 (two gemms, 4000 + 2000 ns) */
	const struct pt_row *mm = row_named(t, &sum->operators, "aten::mm");
	assert_non_null(mm);
	assert_int_equal(mm->gpu.total_ns, 6000);
	const struct pt_row *ar = row_named(t, &sum->operators, "nccl:all_reduce");
	assert_non_null(ar);
	assert_int_equal(ar->gpu.total_ns, 6000 + 100);
	assert_int_equal(sum->model[PT_MS_FORWARD].gpu.total_ns, 6000);
	assert_int_equal(sum->model[PT_MS_BACKWARD].gpu.total_ns, 6100);
	/* runtime calls on the launching thread, sync flagged */
	const struct pt_row *k = row_named(t, &sum->kernels, "ncclDevKernel_AllReduce_Sum_f32");
	assert_non_null(k);
	assert_int_equal(k->kind, PT_KIND_COMMUNICATION);
	assert_int_equal(sum->overview[PT_KIND_CUDA_RUNTIME].calls, 4);
	assert_int_equal(sum->overview[PT_KIND_KERNEL].calls, 2);
	assert_int_equal(sum->overview[PT_KIND_COMMUNICATION].calls, 1);
	assert_int_equal(sum->overview[PT_KIND_MEMCPY].calls, 1);
	/* devices: busy = union over streams */
	assert_int_equal(sum->ndevices, 2);
	for (size_t i = 0; i < sum->ndevices; i++) {
		const struct pt_device_row *d = &sum->devices[i];
		if (d->device == 0) {
			assert_int_equal(d->busy_ns, 8000); /* [1000, 9000) */
			assert_int_equal(d->kernels, 2);
			assert_int_equal(d->memcpys, 1);
			assert_int_equal(d->memcpy_bytes, 256);
		} else {
			assert_int_equal(d->device, 1);
			assert_int_equal(d->busy_ns, 2000);
		}
		assert_true(d->util_pct > 0 && d->util_pct <= 100);
		assert_true(d->span_ns > 0);
	}
	/* distributed: comm 6000, computation 4000 + 2000 merged = [1000,5000) ∪ dev1 */
	assert_int_equal(sum->dist.comm_ns, 6000);
	assert_int_equal(sum->dist.comp_ns, 4000);
	assert_int_equal(sum->dist.overlap_ns, 2000);
	assert_int_equal(sum->dist.comm_from_host, 0);
	pt_summary_free(sum);
}
#endif /* HAVE_STRUCTS */

int main(void)
{
	const struct CMUnitTest tests[] = {
#if HAVE_STRUCTS
		cmocka_unit_test(test_driver_calls),
		cmocka_unit_test(test_end_to_end),
#else
		cmocka_unit_test(test_no_cuda_headers),
#endif
	};
	return cupti_tests_done(cmocka_run_group_tests(tests, NULL, NULL));
}
