/*
 * probe_cupti_find.h - where libcupti and the NVIDIA driver are, and whether
 * they fit together: shared by the probe (which opens the library) and by
 * `proftop backends` (which reports what the probe would find). Needs no
 * CUDA header; only dlopen, dl_iterate_phdr and /proc.
 *
 * Threading: no shared state; callable from any thread.
 */
#ifndef PT_PROBE_CUPTI_FIND_H
#define PT_PROBE_CUPTI_FIND_H

#include <stddef.h>
#include <stdint.h>

#define PT_CUPTI_MAX_CANDS 24

struct pt_cupti_cand {
	char path[1024];   /* a file, or a bare soname for the loader's search */
	const char *where; /* "PROFTOP_CUPTI", "already loaded", "next to torch", ... */
	int loaded;        /* already mapped in this process: the only one to use */
};

/*
 * libcupti candidates in the probe's order: $PROFTOP_CUPTI alone when set;
 * else a libcupti this process has already loaded (PyTorch links one: a
 * second CUPTI in the same process would not work); else next to a loaded
 * libtorch/libcudart and in the pip wheels' nvidia/cuda_cupti/lib, then in
 * those of $VIRTUAL_ENV and $CONDA_PREFIX; then the
 * loader path and $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, newest major
 * first. driver_cuda (cuDriverGetVersion, 0 = unknown) leaves out majors the
 * driver cannot run. Returns the number written.
 */
int pt_cupti_candidates(struct pt_cupti_cand *out, int max, int driver_cuda);
/* Major release in a libcupti file name (libcupti.so.12 -> 12, .so.11.8 -> 11), 0 if none. */
int pt_cupti_soname_major(const char *path);
/* CUDA version the installed driver supports (cuDriverGetVersion: 12040 = 12.4), 0 = none. */
int pt_cupti_driver_cuda(void);
/* The kernel module's release ("550.54.15") into buf; "" when not found. */
void pt_cupti_driver_release(char *buf, size_t len);
/* "12.4" style name of a CUPTI API version (cuptiGetVersion). */
const char *pt_cupti_version_text(uint32_t version, char *buf, size_t len);
/* 1 for the CUPTI API versions the probe reads (11.8 and later). */
int pt_cupti_version_supported(uint32_t version);
/*
 * Can this CUPTI run on this driver? -1 when the driver is older than the
 * CUPTI's major release (CUDA 13's CUPTI needs an R580 driver), 0
 * otherwise; why explains, and warns when the driver is older than the
 * CUPTI's minor release. driver_cuda 0 = unknown: 0 with why empty.
 */
int pt_cupti_driver_verdict(uint32_t cupti_version, int driver_cuda, char *why, size_t len);

#endif
