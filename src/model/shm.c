/*
 * shm.c - what both sides of the session segment share: its size for given
 * parameters and the per-user directory it lives in, checked so that no
 * other user can plant or read a session (no symlinks, our uid, mode 0700, in
 * a parent no one else can rename it out of), and the check that a pid
 * without a session in our directory belongs to someone else. Linked into
 * proftop and into libproftop.so.
 */
#include "proftop/shm.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proftop/error.h"

uint64_t pt_shm_segment_bytes(uint32_t nrings, uint32_t ring_slots, uint32_t strings_bytes)
{
	if (nrings == 0 || nrings > PT_SHM_MAX_RINGS || ring_slots < 2 ||
	    ring_slots > PT_SHM_MAX_RING_SLOTS || (ring_slots & (ring_slots - 1)) ||
	    strings_bytes < 64 || strings_bytes > (1u << 30))
		return 0;
	uint64_t stride =
	    sizeof(struct pt_shm_ring) + (uint64_t)ring_slots * sizeof(struct pt_shm_rec);
	return PT_SHM_HEADER_BYTES + (uint64_t)nrings * stride + ((strings_bytes + 4095u) & ~4095u);
}

static int slot_fresh(const struct pt_shm_reader *rd, uint64_t now_ns)
{
	if (!__atomic_load_n(&rd->pid, __ATOMIC_ACQUIRE))
		return 0;
	uint64_t hb = __atomic_load_n(&rd->heartbeat_ns, __ATOMIC_ACQUIRE);
	return hb && (int64_t)(now_ns - hb) < (int64_t)PT_SHM_READER_TIMEOUT_NS;
}

int pt_shm_readers_attached(const struct pt_shm_header *h, uint64_t now_ns)
{
	int n = 0;
	for (uint32_t k = 0; k < PT_SHM_MAX_READERS; k++)
		n += slot_fresh(&h->readers[k], now_ns);
	return n;
}

uint64_t pt_shm_readers_min_cursor(const struct pt_shm_header *h, const struct pt_shm_ring *r,
				   uint64_t now_ns, uint64_t tail, uint64_t head, int *attached)
{
	uint64_t m = head;
	*attached = 0;
	for (uint32_t k = 0; k < PT_SHM_MAX_READERS; k++) {
		if (!slot_fresh(&h->readers[k], now_ns))
			continue;
		uint64_t c = __atomic_load_n(&r->cursor[k], __ATOMIC_ACQUIRE);
		if (c < tail)
			c = tail; /* behind what is left: it missed those already */
		if (c < m)
			m = c;
		*attached = 1;
	}
	return m;
}

uint64_t pt_shm_readers_max_cursor(const struct pt_shm_header *h, const struct pt_shm_ring *r)
{
	uint64_t m = 0;
	for (uint32_t k = 0; k < PT_SHM_MAX_READERS; k++) {
		if (!__atomic_load_n(&h->readers[k].pid, __ATOMIC_ACQUIRE))
			continue;
		uint64_t c = __atomic_load_n(&r->cursor[k], __ATOMIC_ACQUIRE);
		if (c > m)
			m = c;
	}
	return m;
}

/* The directory that holds the session directory: a world-writable one
 * without the sticky bit, or one owned by another user (not root), lets
 * someone else swap our directory for theirs between our check and our use
 * of the path. /dev/shm and /tmp are sticky; a mkdtemp directory is ours. */
static int check_parent(const char *path, char *err, size_t errlen)
{
	char parent[4096];
	size_t n = strlen(path);
	if (n >= sizeof parent)
		return 0; /* pt_shm_dir's buffers are smaller: not reached */
	memcpy(parent, path, n + 1);
	while (n > 1 && parent[n - 1] == '/')
		parent[--n] = 0;
	char *slash = strrchr(parent, '/');
	if (!slash)
		snprintf(parent, sizeof parent, ".");
	else if (slash == parent)
		parent[1] = 0;
	else
		*slash = 0;
	struct stat st;
	if (stat(parent, &st) != 0)
		return 0; /* mkdir or lstat of the directory itself reports it */
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		snprintf(err, errlen,
			 "%s: its parent directory %s belongs to uid %u, who could replace it; "
			 "use a directory of your own",
			 path, parent, (unsigned)st.st_uid);
		return PT_EPERM;
	}
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
		snprintf(
		    err, errlen,
		    "%s: its parent directory %s is writable by everyone (mode %04o, no sticky "
		    "bit); use a private directory",
		    path, parent, (unsigned)(st.st_mode & 07777));
		return PT_EPERM;
	}
	return 0;
}

static int check_dir(const char *path, int create, char *err, size_t errlen)
{
	struct stat st;
	if (lstat(path, &st) != 0) {
		int e = errno;
		if (e != ENOENT || !create) {
			snprintf(err, errlen, "session directory %s: %s", path, strerror(e));
			return e == ENOENT ? PT_ENOENT : PT_EIO;
		}
		int rc = check_parent(path, err, errlen); /* before creating anything in it */
		if (rc)
			return rc;
		if (mkdir(path, 0700) != 0 && errno != EEXIST) {
			snprintf(err, errlen, "session directory %s: cannot create: %s", path,
				 strerror(errno));
			return PT_EIO;
		}
		if (lstat(path, &st) != 0) {
			snprintf(err, errlen, "session directory %s: %s", path, strerror(errno));
			return PT_EIO;
		}
	}
	if (S_ISLNK(st.st_mode)) {
		snprintf(err, errlen, "session directory %s is a symlink; refusing it", path);
		return PT_EPERM;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "session directory %s is not a directory; refusing it", path);
		return PT_EPERM;
	}
	if (st.st_uid != geteuid()) {
		snprintf(
		    err, errlen,
		    "session directory %s is owned by uid %u, not by you (uid %u); refusing it",
		    path, (unsigned)st.st_uid, (unsigned)geteuid());
		return PT_EPERM;
	}
	if (st.st_mode & 077) {
		snprintf(err, errlen,
			 "session directory %s is open to other users (mode %04o, want 0700); "
			 "refusing it",
			 path, (unsigned)(st.st_mode & 07777));
		return PT_EPERM;
	}
	return check_parent(path, err, errlen);
}

int pt_shm_dir(char *buf, size_t len, int create, char *err, size_t errlen)
{
	char dummy[8];
	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof dummy;
	}
	const char *env = getenv("PROFTOP_SESSION_DIR");
	int n;
	if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else
		n = snprintf(buf, len, "/dev/shm/proftop-%u", (unsigned)geteuid());
	if (n < 0 || (size_t)n >= len) {
		snprintf(err, errlen, "session directory path too long");
		return PT_EINVAL;
	}
	return check_dir(buf, create, err, errlen);
}

int pt_shm_foreign_pid(int32_t pid, char *err, size_t errlen)
{
	char path[64];
	struct stat st;
	if (pid <= 0)
		return 0;
	snprintf(path, sizeof path, "/proc/%d", (int)pid);
	if (stat(path, &st) != 0 || st.st_uid == geteuid())
		return 0;
	snprintf(err, errlen,
		 "pid %d belongs to uid %u, not to you (uid %u): proftop attaches only to your "
		 "own processes; run proftop as that user",
		 (int)pid, (unsigned)st.st_uid, (unsigned)geteuid());
	return PT_EPERM;
}

/* ---- the control word, readers' side ---- */

void pt_shm_ctl_read(const struct pt_shm_header *h, struct pt_shm_ctl *out)
{
	const struct pt_shm_ctl *c = &h->ctl;
	for (int tries = 0; tries < 8; tries++) {
		uint64_t st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
		memcpy(out, c, sizeof *out);
		out->state = st;
		out->request = __atomic_load_n(&c->request, __ATOMIC_ACQUIRE);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&c->state, __ATOMIC_RELAXED) == st)
			break;
	}
	out->msg[sizeof out->msg - 1] = 0;
}

const char *pt_shm_ctl_state_name(uint32_t state)
{
	switch (state) {
	case PT_SHM_CTL_NONE:
		return "asked, not yet seen by the job";
	case PT_SHM_CTL_ACCEPTED:
		return "waiting for a step boundary";
	case PT_SHM_CTL_RUNNING:
		return "running";
	case PT_SHM_CTL_WRITING:
		return "writing the trace";
	case PT_SHM_CTL_DONE:
		return "done";
	case PT_SHM_CTL_FAILED:
		return "failed";
	case PT_SHM_CTL_CANCELLED:
		return "cancelled";
	}
	return "unknown";
}

static int ctl_final(uint32_t st)
{
	return st == PT_SHM_CTL_DONE || st == PT_SHM_CTL_FAILED || st == PT_SHM_CTL_CANCELLED;
}

int pt_shm_ctl_request(struct pt_shm_header *h, uint32_t steps, uint32_t flags,
		       uint64_t at_step, int32_t me, uint64_t now_ns, uint32_t *seq, char *why,
		       size_t whylen)
{
	struct pt_shm_ctl *c = &h->ctl;
	if (steps < 1 || steps > PT_SHM_CTL_MAX_STEPS) {
		snprintf(why, whylen, "a capture takes 1 to %u steps", PT_SHM_CTL_MAX_STEPS);
		return PT_EINVAL;
	}
	if (!(__atomic_load_n(&c->caps, __ATOMIC_ACQUIRE) & PT_SHM_CAP_CAPTURE)) {
		snprintf(why, whylen,
			 "no PyTorch helper answers in this process (no torch imported yet, "
			 "PROFTOP_TORCH=0, or not a Python job started under proftop)");
		return PT_ENOTAVAIL;
	}
	uint64_t req = __atomic_load_n(&c->request, __ATOMIC_ACQUIRE);
	uint64_t st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
	uint32_t rseq = PT_SHM_CTL_REQ_SEQ(req), sseq = PT_SHM_CTL_STATE_SEQ(st);
	uint32_t sst = PT_SHM_CTL_STATE_ST(st);
	if (rseq && !(PT_SHM_CTL_REQ_FLAGS(req) & PT_SHM_CTL_CANCEL)) {
		if (sseq == rseq && !ctl_final(sst)) {
			snprintf(why, whylen, "capture #%u is %s (%u of %u steps); wait for it", rseq,
				 pt_shm_ctl_state_name(sst), PT_SHM_CTL_STATE_DONE(st),
				 PT_SHM_CTL_REQ_STEPS(req));
			return PT_EEXIST;
		}
		if (sseq != rseq) {
			/* never answered: still wanted while its reader lives */
			int32_t who = __atomic_load_n(&c->requester, __ATOMIC_RELAXED);
			int alive = who > 0 && (who == me || kill(who, 0) == 0 || errno != ESRCH);
			if (alive) {
				snprintf(why, whylen,
					 "capture #%u was asked for and the job has not reached a "
					 "step boundary since",
					 rseq);
				return PT_EEXIST;
			}
		}
	}
	uint32_t next = (rseq > sseq ? rseq : sseq) + 1;
	if (next == 0)
		next = 1;
	__atomic_store_n(&c->asked_ns, now_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&c->requester, me, __ATOMIC_RELAXED);
	__atomic_store_n(&h->ctl_at_step, at_step, __ATOMIC_RELAXED);
	if (at_step)
		flags |= PT_SHM_CTL_AT_STEP;
	uint64_t want = PT_SHM_CTL_REQ(next, flags & (PT_SHM_CTL_STACKS | PT_SHM_CTL_AT_STEP), steps);
	if (!__atomic_compare_exchange_n(&c->request, &req, want, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		snprintf(why, whylen, "another reader asked for capture #%u just now",
			 PT_SHM_CTL_REQ_SEQ(req));
		return PT_EEXIST;
	}
	*seq = next;
	return 0;
}

int pt_shm_ctl_cancel(struct pt_shm_header *h, uint32_t seq)
{
	struct pt_shm_ctl *c = &h->ctl;
	uint64_t req = __atomic_load_n(&c->request, __ATOMIC_ACQUIRE);
	if (PT_SHM_CTL_REQ_SEQ(req) != seq || (PT_SHM_CTL_REQ_FLAGS(req) & PT_SHM_CTL_CANCEL))
		return PT_ENOENT;
	uint64_t st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
	if (PT_SHM_CTL_STATE_SEQ(st) == seq && ctl_final(PT_SHM_CTL_STATE_ST(st)))
		return PT_ENOENT;
	uint64_t want = req | ((uint64_t)PT_SHM_CTL_CANCEL << 16);
	return __atomic_compare_exchange_n(&c->request, &req, want, 0, __ATOMIC_ACQ_REL,
					   __ATOMIC_RELAXED)
		   ? 0
		   : PT_ENOENT;
}
