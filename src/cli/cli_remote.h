/*
 * cli_remote.h - running a line of Python inside another process
 * (cli_remote.c), for the shared CLI layer's --inject (cli_inject.c).
 */
#ifndef PT_CLI_REMOTE_H
#define PT_CLI_REMOTE_H

#include <stddef.h>
#include <stdint.h>

#include "model/util.h"

/* How long gdb may hold the job before it is told to detach. */
#define INJECT_GDB_TIMEOUT_NS (30ull * 1000000000ull)

/* Sleeps ms milliseconds (an interrupted sleep ends early). */
void cli_sleep_ms(long ms);
/* Python source literal of s: '...' with \\, \' and non-printable bytes escaped. */
void cli_py_literal(struct pt_buf *b, const char *s);
/*
 * gdb -p PID: map a page, write line into it, queue PyRun_SimpleString(page)
 * as a pending call, detach. Output kept in out (for the error line).
 */
int cli_run_gdb(const char *gdb, int32_t pid, const char *line, struct pt_buf *out,
		uint64_t *paused_ns);
/*
 * gdb's calls into a process (mmap, Py_AddPendingCall) end with gdb writing
 * the thread's registers back. Where it cannot write the extended CPU state
 * (gdb 13.1 on Linux 6.18: "Couldn't write extended state status: Bad
 * address"), the process resumes with its vector registers lost and its
 * interrupted system call failing (Python's time.sleep raised OSError
 * errno 514). Tried first on a child of proftop's own, asleep as the job
 * may be: 0 when that child slept on untouched, else -1 with why.
 */
int cli_gdb_calls_safe(const char *gdb, char *why, size_t whylen);
/*
 * Signals someone sent the job while gdb held it. gdb catches each one
 * ("Program received signal SIGTERM, Terminated.") and, unwinding the call
 * it was making in the job (unwindonsignal), drops it: a scheduler's
 * SIGTERM or a kill -STOP would be lost. Each is sent again, in order, once
 * gdb has detached. Faults (SEGV, BUS, ILL, FPE, TRAP) are not: they come
 * from the call gdb made, not from anyone's kill. Their names go into
 * names ("SIGTERM SIGSTOP"); returns how many were sent again.
 */
int cli_redeliver_signals(int32_t pid, const char *out, char *names, size_t len);
/* sys.remote_exec(pid, script) from the target's own interpreter (3.14+). */
int cli_run_remote_exec(const char *exe, int32_t pid, const char *script, struct pt_buf *out,
			uint64_t *took_ns);
/* The last non-empty line of gdb's output that says what went wrong. */
void cli_gdb_reason(const char *out, char *why, size_t len);

#endif
