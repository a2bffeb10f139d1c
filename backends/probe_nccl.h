/*
 * probe_nccl.h - the part of NCCL's profiler plugin interface that
 * probe_nccl.c implements, declared here from NCCL's documentation of it
 * (NCCL's docs ask plugins to carry their own copy of the interface; the
 * CUDA toolkit ships nccl.h without it). NCCL dlopens the library that
 * NCCL_PROFILER_PLUGIN names and looks for the symbol ncclProfiler_vN of
 * the newest interface it knows: v4 (NCCL 2.27), v5 (2.28), v6 (2.29 and
 * later). Layouts must match NCCL's exactly: only fields are named here,
 * never reordered; the unions' members this file does not read are kept
 * as padding of the right size and alignment.
 *
 * What differs between the three: v4's descriptor type is a uint8_t and its
 * init takes (commName, commHash, nNodes, nranks, rank, logger); v5 and v6
 * have a uint64_t type and init (commId, mask, commName, nNodes, nranks,
 * rank, logger); v5 and v6 add API-level events (not asked for here) and a
 * parentGroup at the end of coll and p2p; v6 adds copy-engine events (not
 * asked for). The offsets of everything read here are the same in all
 * three (type, parentObj, rank, then the union at 24 on LP64).
 */
#ifndef PT_PROBE_NCCL_H
#define PT_PROBE_NCCL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ncclResult_t: 0 is ncclSuccess; init may fail to switch the plugin off */
typedef int pt_nccl_result;
#define PT_NCCL_SUCCESS 0
#define PT_NCCL_INTERNAL_ERROR 3

/* The event types (eActivationMask bits, and a descriptor's type). */
enum {
	PT_NCCL_EV_GROUP = 1 << 0,
	PT_NCCL_EV_COLL = 1 << 1,
	PT_NCCL_EV_P2P = 1 << 2,
	PT_NCCL_EV_PROXY_OP = 1 << 3,
	PT_NCCL_EV_PROXY_STEP = 1 << 4,
	PT_NCCL_EV_PROXY_CTRL = 1 << 5,
	PT_NCCL_EV_KERNEL_CH = 1 << 6,
	PT_NCCL_EV_NET_PLUGIN = 1 << 7,
};

/* The state recordEventState reports when a kernel channel stopped (its
 * argument then carries the GPU's timer at the stop). */
#define PT_NCCL_STATE_KERNEL_CH_STOP 22

typedef void (*pt_nccl_logger)(int level, unsigned long flags, const char *file, int line,
			       const char *fmt, ...);

/* The descriptor's union, as far as this file reads it (v4, v5, v6). */
union pt_nccl_descr_body {
	struct {
		uint64_t seq;        /* the collective's number in its communicator */
		const char *func;    /* "AllReduce", "AllGather", ... */
		const void *send_buff;
		void *recv_buff;
		size_t count;        /* elements (AllGather: sent; ReduceScatter: received) */
		int root;
		const char *datatype;/* "ncclFloat32", ... */
		uint8_t nchannels;   /* the channels its kernel runs on */
		uint8_t nwarps;
		const char *algo;
		const char *proto;
		void *parent_group;  /* v5 and v6 only */
	} coll;
	struct {
		const char *func;    /* "Send", "Recv" */
		void *buff;
		const char *datatype;
		size_t count;
		int peer;
		uint8_t nchannels;
		void *parent_group;  /* v5 and v6 only */
	} p2p;
	struct {
		uint8_t channel;
		uint64_t ptimer;     /* the GPU's global timer at the channel's start, 0: none */
	} kernel_ch;
	/* NCCL passes descriptors by pointer and this file only reads them: the
	 * members not read (API, proxy, network and copy-engine events) need no
	 * room here, but keep the union no smaller than any of them */
	uint64_t pad[16];
};

struct pt_nccl_descr_v4 {
	uint8_t type;
	void *parent;                /* the handle startEvent gave the parent event */
	int rank;
	union pt_nccl_descr_body u;
};

struct pt_nccl_descr_v5 { /* v6 too */
	uint64_t type;
	void *parent;
	int rank;
	union pt_nccl_descr_body u;
};

/* recordEventState's argument (v4, v5, v6): a kernel channel's stop timer */
union pt_nccl_state_args {
	struct {
		size_t trans_size;
	} proxy_step;
	struct {
		int appended_proxy_ops;
	} proxy_ctrl;
	struct {
		void *data;
	} net_plugin;
	struct {
		uint64_t ptimer;
	} kernel_ch;
};

struct pt_nccl_profiler_v4 {
	const char *name;
	pt_nccl_result (*init)(void **ctx, int *mask, const char *comm_name, uint64_t comm_hash,
			       int nnodes, int nranks, int rank, pt_nccl_logger log);
	pt_nccl_result (*start_event)(void *ctx, void **handle, struct pt_nccl_descr_v4 *d);
	pt_nccl_result (*stop_event)(void *handle);
	pt_nccl_result (*record_event_state)(void *handle, int state,
					     union pt_nccl_state_args *args);
	pt_nccl_result (*finalize)(void *ctx);
};

struct pt_nccl_profiler_v5 { /* v6 too */
	const char *name;
	pt_nccl_result (*init)(void **ctx, uint64_t comm_id, int *mask, const char *comm_name,
			       int nnodes, int nranks, int rank, pt_nccl_logger log);
	pt_nccl_result (*start_event)(void *ctx, void **handle, struct pt_nccl_descr_v5 *d);
	pt_nccl_result (*stop_event)(void *handle);
	pt_nccl_result (*record_event_state)(void *handle, int state,
					     union pt_nccl_state_args *args);
	pt_nccl_result (*finalize)(void *ctx);
};

/* Operations in flight, those refused (the pool was full) and those let go
 * (enqueued a minute before the pool filled, their kernel never reported). */
void pt_nccl_stats(uint32_t *in_use, uint64_t *refused, uint64_t *abandoned);

#endif
