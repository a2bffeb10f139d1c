/*
 * proftop.h - the in-process API that training code calls to annotate a
 * job: steps with sample counts, the four step phases, operator and user
 * ranges, instant marks and counters. Stable C ABI (usable from C, C++ and
 * Python's ctypes); every function is implemented by libproftop.so.
 *
 * Cost: a call takes a timestamp, writes one 32-byte record into this
 * thread's shared-memory ring and returns: no lock, no system call, no
 * allocation after the thread's first event. When no session exists (the
 * probe failed to start, or was disabled with PROFTOP_DISABLE=1, or this is
 * a forked child) every call returns at once.
 *
 * Linking: link with -lproftop, or use the PROFTOP_* macros below after
 * defining PROFTOP_WEAK before including this header: the functions are
 * then weak symbols and the macros skip them when libproftop.so is not
 * loaded, so the same binary runs with and without proftop.
 *
 * Threading: every function may be called from any thread. Ranges nest per
 * thread: a pop closes the innermost open range of the calling thread.
 * Names are copied (interned) on first use; the caller keeps ownership.
 */
#ifndef PROFTOP_PROFTOP_H
#define PROFTOP_PROFTOP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(PROFTOP_WEAK)
#define PROFTOP_API __attribute__((weak))
#else
#define PROFTOP_API
#endif

/* The four step phases of Paddle's Model Summary. */
enum proftop_phase {
	PROFTOP_PHASE_DATALOADER = 1,
	PROFTOP_PHASE_FORWARD = 2,
	PROFTOP_PHASE_BACKWARD = 3,
	PROFTOP_PHASE_OPTIMIZATION = 4,
};

/* ABI version of this header; proftop_abi_version() returns the library's. */
#define PROFTOP_ABI_VERSION 1

PROFTOP_API int proftop_abi_version(void);
/* 1 when a session is recording, 0 when every call is a no-op. */
PROFTOP_API int proftop_enabled(void);

/*
 * Ends the current step of the calling thread and starts the next one.
 * samples: items in the step's batch (0 = unknown); with sample counts the
 * Perf Summary reports samples/s. The first step starts at the thread's
 * first proftop event (or proftop_step_begin()).
 */
PROFTOP_API void proftop_step(uint64_t samples);
/* Starts a step now without ending one (e.g. after evaluation between epochs). */
PROFTOP_API void proftop_step_begin(void);

/*
 * Records a step that ran from start_ns to end_ns (both from proftop_now(),
 * on this thread), for callers that know a step's bounds only afterwards
 * (proftop's Python helper closes a step at the end of its last optimizer
 * call, once the next step has begun). Times in the future are clamped to
 * now; the thread's next proftop_step() starts at end_ns.
 */
PROFTOP_API void proftop_step_span(uint64_t start_ns, uint64_t end_ns, uint64_t samples);
/* Tokens in the step this thread recorded last (proftop_step or
 * proftop_step_span), for a language model's tokens/s beside its samples/s;
 * call it right after that step. 0 = unknown. */
PROFTOP_API void proftop_step_tokens(uint64_t tokens);
/* For proftop's Python helper: what its wrappers cost besides the events
 * they record (picoseconds per wrapped call, measured by the helper) and how
 * many calls they have wrapped so far, for the overhead figure proftop
 * shows. Either 0 leaves that figure as it was. */
PROFTOP_API void proftop_helper_stats(uint64_t calls, uint64_t cost_ps);
/* The session clock (CLOCK_MONOTONIC nanoseconds), as the events carry it. */
PROFTOP_API uint64_t proftop_now(void);
/* 1 while a proftop reader is attached to this process's session, else 0. */
PROFTOP_API int proftop_reader_attached(void);

/*
 * On-demand deep capture: the Python helper's side of the session's control
 * word (shm.h, struct pt_shm_ctl). Not needed by annotated programs.
 *
 * proftop_control() is what a reader asked for: 0 when nothing, else
 * PT_SHM_CTL_REQ(seq, flags, steps) (one atomic load: call it once per
 * step); with PT_SHM_CTL_AT_STEP in flags, proftop_control_at_step() is
 * the job's number of the step to start at (read it after the request
 * word; 0 when none). proftop_control_caps() says what the helper can do (PT_SHM_CAP_*).
 * proftop_control_answer() publishes the helper's state for request seq
 * (PT_SHM_CTL_* states, steps finished so far) with an optional one-line
 * msg (copied; NULL keeps the last one). proftop_capture_report() stores a
 * capture's figures (session-clock times, see struct pt_shm_ctl; tid: the
 * system id of the thread whose steps were captured; first_step: the number
 * of the first captured step, counting the steps recorded from 0) before
 * the answer that publishes them.
 * proftop_capture_path() writes the file a capture's trace goes to, beside
 * the session ("<dir>/<pid>.capture-<seq>.json"): 0, or -1 when len is too
 * small or no session exists. proftop_gpu_collector(): 1 while proftop's
 * own CUPTI collector runs in this process, 2 when it will start at cuInit,
 * 0 otherwise (only then may another tool subscribe to CUPTI).
 */
PROFTOP_API uint64_t proftop_control(void);
PROFTOP_API uint64_t proftop_control_at_step(void);
PROFTOP_API void proftop_control_caps(uint32_t caps);
PROFTOP_API void proftop_control_answer(uint32_t seq, uint32_t state, uint32_t steps_done,
					const char *msg);
PROFTOP_API void proftop_capture_report(uint64_t t0_ns, uint64_t t1_ns, uint64_t sync_lo_ns,
					uint64_t sync_hi_ns, uint64_t start_block_ns,
					uint64_t stop_block_ns, uint64_t write_ns, int32_t tid,
					uint32_t first_step);
PROFTOP_API int proftop_capture_path(uint32_t seq, char *buf, uint32_t len);
PROFTOP_API int proftop_gpu_collector(void);

/* Phase scopes; they nest with the ranges below. */
PROFTOP_API void proftop_phase_push(enum proftop_phase phase);
PROFTOP_API void proftop_phase_pop(void);

/* An operator (shows in the Operator Summary; nested operators are inner ops). */
PROFTOP_API void proftop_op_push(const char *name);
PROFTOP_API void proftop_op_pop(void);

/* A user-defined range (UserDefined Summary). */
PROFTOP_API void proftop_range_push(const char *name);
PROFTOP_API void proftop_range_pop(void);

/* Interned names for hot loops: look a name up once, then push by id. */
PROFTOP_API uint32_t proftop_name(const char *name);
PROFTOP_API void proftop_op_push_id(uint32_t name_id);
PROFTOP_API void proftop_range_push_id(uint32_t name_id);

/*
 * Collectives (torch.distributed calls, for proftop's Python helper): a
 * call on process group group_id (a proftop_name() of the group's name)
 * with the group's sequence number seq was entered now, and completed now
 * (async work: when it was waited on or completed, on any thread;
 * start_ns: its entry, from proftop_now()). op_id: proftop_name("all_reduce"),
 * bytes: the input's size on this rank, group_size: 0 when unknown, flags:
 * coll.h's PT_COLL_* (1 async, 2 point-to-point, 4 a DDP bucket). proftop
 * matches the calls of every rank by (group, seq).
 */
PROFTOP_API void proftop_coll_enter(uint32_t op_id, uint32_t group_id, uint64_t seq,
				    uint64_t bytes, uint32_t group_size, uint32_t flags);
PROFTOP_API void proftop_coll_done(uint32_t op_id, uint32_t group_id, uint64_t seq,
				   uint64_t start_ns, uint64_t bytes, uint32_t group_size,
				   uint32_t flags);

/* An instant mark, and a counter sample (shown as a time series). */
PROFTOP_API void proftop_mark(const char *name);
PROFTOP_API void proftop_counter(const char *name, double value);

/*
 * Worker processes. A process forked from a recording one (a DataLoader
 * worker) records nothing until it calls proftop_worker_attach(label): its
 * events then go into the parent's session, as a lane of the parent named
 * label (at most 15 bytes kept). Returns 1 when recording. It must call
 * proftop_worker_detach() before it ends, which gives its ring back and
 * stops recording; without it (a killed worker) the ring stays claimed.
 */
PROFTOP_API int proftop_worker_attach(const char *label);
/*
 * The same for a worker that is not a fork of the recording process (a
 * DataLoader worker started with spawn or forkserver): its events go into
 * the session of pid (the training process, of the same user and launch),
 * as a lane named label. Returns 1 when recording; detach as above.
 */
PROFTOP_API int proftop_worker_attach_pid(int32_t pid, const char *label);
PROFTOP_API void proftop_worker_detach(void);

#if defined(PROFTOP_WEAK)
#define PROFTOP_STEP(samples) (proftop_step ? proftop_step(samples) : (void)0)
#define PROFTOP_PHASE_PUSH(phase) (proftop_phase_push ? proftop_phase_push(phase) : (void)0)
#define PROFTOP_PHASE_POP() (proftop_phase_pop ? proftop_phase_pop() : (void)0)
#define PROFTOP_OP_PUSH(name) (proftop_op_push ? proftop_op_push(name) : (void)0)
#define PROFTOP_OP_POP() (proftop_op_pop ? proftop_op_pop() : (void)0)
#define PROFTOP_RANGE_PUSH(name) (proftop_range_push ? proftop_range_push(name) : (void)0)
#define PROFTOP_RANGE_POP() (proftop_range_pop ? proftop_range_pop() : (void)0)
#else
#define PROFTOP_STEP(samples) proftop_step(samples)
#define PROFTOP_PHASE_PUSH(phase) proftop_phase_push(phase)
#define PROFTOP_PHASE_POP() proftop_phase_pop()
#define PROFTOP_OP_PUSH(name) proftop_op_push(name)
#define PROFTOP_OP_POP() proftop_op_pop()
#define PROFTOP_RANGE_PUSH(name) proftop_range_push(name)
#define PROFTOP_RANGE_POP() proftop_range_pop()
#endif

#ifdef __cplusplus
}
#endif

#endif
