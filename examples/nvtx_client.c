/*
 * nvtx_client.c - a program annotated "with NVTX" that needs no CUDA: it
 * speaks the client side of NVTX v3's injection protocol itself, the way
 * the header-only nvToolsExt.h does inside every annotated library (getenv
 * NVTX_INJECTION64_PATH, dlopen it, call its InitializeInjectionNvtx2 with
 * a GetExportTable function, then call through the CORE and CORE2 function
 * tables the tool filled). It does not link libproftop: run it as
 *   LD_PRELOAD=build/libproftop.so build/examples/nvtx_client [iterations]
 * and the probe's constructor points NVTX_INJECTION64_PATH at itself.
 * Each iteration: dataloader, forward { matmul }, backward ranges, a range
 * in domain "mydomain", a mark, and a start/end range ended by a worker
 * thread; a second thread pushes "worker" ranges meanwhile.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*nv_fn)(void);
enum { CBID_CORE_MarkA = 2, CBID_CORE_RangeStartA = 5, CBID_CORE_RangeEnd = 7,
       CBID_CORE_RangePushA = 9, CBID_CORE_RangePop = 11, CBID_CORE_SIZE = 16 };
enum { CBID_CORE2_DomainRangePushEx = 4, CBID_CORE2_DomainRangePop = 5,
       CBID_CORE2_DomainCreateA = 12, CBID_CORE2_SIZE = 16 };
enum { MODULE_CORE = 1, MODULE_CORE2 = 5, ETID_CALLBACKS = 1, ETID_VERSIONINFO = 3 };

/* This "library's" NVTX instance: one slot per callback id, NULL = no-op. */
static nv_fn core_slots[CBID_CORE_SIZE];
static nv_fn core2_slots[CBID_CORE2_SIZE];
static nv_fn *core_table[CBID_CORE_SIZE + 1];
static nv_fn *core2_table[CBID_CORE2_SIZE + 1];

static int get_module_table(int module, nv_fn ***out, unsigned *size)
{
	if (module == MODULE_CORE) {
		*out = core_table;
		*size = CBID_CORE_SIZE;
		return 1;
	}
	if (module == MODULE_CORE2) {
		*out = core2_table;
		*size = CBID_CORE2_SIZE;
		return 1;
	}
	return 0;
}

static void set_version(uint32_t v)
{
	(void)v;
}

static struct {
	size_t struct_size;
	int (*get)(int, nv_fn ***, unsigned *);
} etbl_callbacks = {sizeof etbl_callbacks, get_module_table};
static struct {
	size_t struct_size;
	uint32_t version, reserved0;
	void (*set)(uint32_t);
} etbl_version = {sizeof etbl_version, 3, 0, set_version};

static const void *get_export_table(uint32_t id)
{
	return id == ETID_CALLBACKS ? (const void *)&etbl_callbacks
	       : id == ETID_VERSIONINFO ? (const void *)&etbl_version
					: NULL;
}

/* nvtxEventAttributes_t v2 (48 bytes). */
struct attr {
	uint16_t version, size;
	uint32_t category;
	int32_t color_type;
	uint32_t color;
	int32_t payload_type, reserved0;
	uint64_t payload;
	int32_t message_type;
	const char *ascii;
};

/* The client API, as nvToolsExt.h's inline functions do it. */
static int push(const char *m)
{
	nv_fn f = core_slots[CBID_CORE_RangePushA];
	return f ? ((int (*)(const char *))f)(m) : -1;
}
static int pop(void)
{
	nv_fn f = core_slots[CBID_CORE_RangePop];
	return f ? ((int (*)(void))f)() : -1;
}
static void mark(const char *m)
{
	nv_fn f = core_slots[CBID_CORE_MarkA];
	if (f)
		((void (*)(const char *))f)(m);
}
static uint64_t start(const char *m)
{
	nv_fn f = core_slots[CBID_CORE_RangeStartA];
	return f ? ((uint64_t(*)(const char *))f)(m) : 0;
}
static void end(uint64_t id)
{
	nv_fn f = core_slots[CBID_CORE_RangeEnd];
	if (f)
		((void (*)(uint64_t))f)(id);
}
static void *domain_create(const char *name)
{
	nv_fn f = core2_slots[CBID_CORE2_DomainCreateA];
	return f ? ((void *(*)(const char *))f)(name) : NULL;
}
static int domain_push(void *d, const char *m)
{
	struct attr a = {3, sizeof a, 0, 0, 0, 0, 0, 0, 1 /* ASCII */, m};
	nv_fn f = core2_slots[CBID_CORE2_DomainRangePushEx];
	return f ? ((int (*)(void *, const struct attr *))f)(d, &a) : -1;
}
static int domain_pop(void *d)
{
	nv_fn f = core2_slots[CBID_CORE2_DomainRangePop];
	return f ? ((int (*)(void *))f)(d) : -1;
}

static int inject(void)
{
	for (int i = 0; i < CBID_CORE_SIZE; i++)
		core_table[i] = &core_slots[i];
	for (int i = 0; i < CBID_CORE2_SIZE; i++)
		core2_table[i] = &core2_slots[i];
	const char *path = getenv("NVTX_INJECTION64_PATH");
	if (!path || !*path)
		return 0;
	void *lib = dlopen(path, RTLD_LAZY);
	if (!lib) {
		fprintf(stderr, "nvtx_client: %s\n", dlerror());
		return 0;
	}
	int (*init)(const void *(*)(uint32_t));
	*(void **)&init = dlsym(lib, "InitializeInjectionNvtx2");
	if (!init || !init(get_export_table)) {
		memset(core_slots, 0, sizeof core_slots);
		memset(core2_slots, 0, sizeof core2_slots);
		return 0;
	}
	return 1;
}

/* Exactly 1000 ranges, however the threads are scheduled (tests count them). */
static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++) {
		push("worker");
		pop();
	}
	return NULL;
}

static void *ender(void *arg)
{
	end(*(uint64_t *)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 3;
	int on = inject();
	printf("nvtx_client: injection %s\n", on ? "attached" : "not attached");
	pthread_t w;
	pthread_create(&w, NULL, worker, NULL);
	void *dom = domain_create("mydomain");
	for (int i = 0; i < iters; i++) {
		uint64_t id = start("async");
		push("dataloader");
		pop();
		push("forward");
		push("matmul");
		pop();
		pop();
		push("backward");
		domain_push(dom, "allreduce");
		domain_pop(dom);
		pop();
		mark("iteration end");
		pthread_t e;
		pthread_create(&e, NULL, ender, &id);
		pthread_join(e, NULL);
	}
	pthread_join(w, NULL);
	printf("nvtx_client: %d iterations\n", iters);
	return 0;
}
