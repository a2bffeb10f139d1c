/*
 * session_open.c - opening a probe's session segment (shm.h) for the
 * session reader (session.c): the file must be ours, a regular file and
 * well formed; the layout is validated once and copied into struct
 * pt_session, so later changes to the header cannot move the reader outside
 * the mapping. A segment given in memory (tests, fuzzing) goes through the
 * same checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proftop/error.h"
#include "proftop/session.h"
#include "session_int.h"
#include "model/util.h"

/* ---- opening and validating ---- */

/* h: a private copy of the header (the shared one may change between two
 * reads of a field: every check and every later use reads the copy). */
static int validate(const struct pt_shm_header *h, size_t size, char *err, size_t errlen)
{
	if (size < PT_SHM_HEADER_BYTES) {
		snprintf(err, errlen, "truncated: %zu bytes, a header needs %u", size,
			 PT_SHM_HEADER_BYTES);
		return PT_ETRUNC;
	}
	if (h->magic != PT_SHM_MAGIC) {
		snprintf(err, errlen, "not a proftop session (bad magic)");
		return PT_EFORMAT;
	}
	if (h->abi != PT_SHM_ABI) {
		snprintf(err, errlen, "session ABI %u, this proftop reads ABI %u (upgrade one of them)",
			 h->abi, PT_SHM_ABI);
		return PT_EFORMAT;
	}
	if (h->header_bytes != PT_SHM_HEADER_BYTES) {
		snprintf(err, errlen, "bad header size %u", h->header_bytes);
		return PT_EFORMAT;
	}
	if (h->segment_bytes != size) {
		snprintf(err, errlen, "size mismatch: header says %llu bytes, file has %zu",
			 (unsigned long long)h->segment_bytes, size);
		return h->segment_bytes > size ? PT_ETRUNC : PT_EFORMAT;
	}
	uint64_t want = pt_shm_segment_bytes(h->nrings, h->ring_slots, h->strings_bytes);
	if (want == 0 || want != h->segment_bytes) {
		snprintf(err, errlen, "inconsistent layout (%u rings of %u slots, %u string bytes)",
			 h->nrings, h->ring_slots, h->strings_bytes);
		return PT_EFORMAT;
	}
	uint64_t stride = sizeof(struct pt_shm_ring) + (uint64_t)h->ring_slots * sizeof(struct pt_shm_rec);
	if (h->rings_offset != PT_SHM_HEADER_BYTES || h->ring_stride != stride ||
	    h->strings_offset != h->rings_offset + (uint64_t)h->nrings * stride ||
	    h->strings_offset + h->strings_bytes > size) {
		snprintf(err, errlen, "inconsistent offsets in the header");
		return PT_EFORMAT;
	}
	return 0;
}

/* One read of the shared header into private memory: the owner may rewrite
 * it at any moment, so validating fields and then reading them again from
 * the segment would use values nobody checked. */
static void header_copy(const void *base, size_t size, struct pt_shm_header *hc)
{
	memset(hc, 0, sizeof *hc);
	memcpy(hc, base, size < sizeof *hc ? size : sizeof *hc);
}

static int map_session(void *base, size_t size, int mapped, struct pt_session **out, char *err,
		       size_t errlen)
{
	struct pt_shm_header hc;
	header_copy(base, size, &hc);
	int rc = validate(&hc, size, err, errlen);
	if (rc)
		return rc;
	struct pt_session *s = pt_xcalloc(1, sizeof *s);
	s->base = base;
	s->size = size;
	s->mapped = mapped;
	s->fd = -1;
	s->pidfd = -1;
	s->guard = -1;
	s->h = base;
	s->slot = -1;
	s->pid = hc.pid;
	s->start_ticks = hc.proc_start_ticks;
	s->nrings = hc.nrings;
	s->ring_slots = hc.ring_slots;
	s->strings_bytes = hc.strings_bytes;
	s->rings_offset = hc.rings_offset;
	s->ring_stride = hc.ring_stride;
	s->strings_offset = hc.strings_offset;
	s->rings = pt_xcalloc(s->nrings, sizeof *s->rings);
	for (uint32_t i = 0; i < s->nrings; i++)
		s->rings[i].device = -1;
	s->cp = pt_xcalloc(s->nrings, sizeof *s->cp);
	pthread_mutex_init(&s->cp_mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cp_cv, &ca);
	pthread_cond_init(&s->cp_done_cv, &ca);
	pthread_condattr_destroy(&ca);
	char cmd[PT_SHM_CMDLINE_BYTES];
	memcpy(cmd, hc.cmdline, sizeof cmd);
	cmd[sizeof cmd - 1] = 0;
	char esc[256];
	pt_escape_term(esc, sizeof esc, cmd, strlen(cmd), 80, 0);
	snprintf(s->desc, sizeof s->desc, "%d (%s)", (int)s->pid, esc);
	*out = s;
	return 0;
}

int pt_session_from_mem(void *base, size_t size, struct pt_session **out, char *err,
			size_t errlen)
{
	*out = NULL;
	return map_session(base, size, 0, out, err, errlen);
}

int pt_session_open(const char *path, struct pt_session **out, char *err, size_t errlen)
{
	int rc = 0, fd, guard = -1;
	void *hdr = MAP_FAILED, *base = MAP_FAILED;
	struct stat st;
	*out = NULL;
	fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 && errno == EACCES)
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ELOOP)
			snprintf(err, errlen, "%s: is a symlink; refusing it", path);
		else if (errno == EISDIR)
			snprintf(err, errlen, "%s: not a regular file; refusing it", path);
		else
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return errno == ENOENT ? PT_ENOENT
		       : errno == ELOOP || errno == EACCES || errno == EISDIR ? PT_EPERM
									: PT_EIO;
	}
	if (fstat(fd, &st) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		rc = PT_EIO;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file; refusing it", path);
		rc = PT_EPERM;
		goto out;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s: owned by uid %u, not by us; refusing it", path,
			 (unsigned)st.st_uid);
		rc = PT_EPERM;
		goto out;
	}
	if (st.st_mode & 077) {
		snprintf(err, errlen, "%s: open to other users (mode %04o, want 0600); refusing it",
			 path, (unsigned)(st.st_mode & 07777));
		rc = PT_EPERM;
		goto out;
	}
	if ((st.st_mode & 0600) != 0600) {
		snprintf(err, errlen, "%s: mode %04o, want 0600", path, (unsigned)(st.st_mode & 07777));
		rc = PT_EPERM;
		goto out;
	}
	if ((uint64_t)st.st_size < PT_SHM_HEADER_BYTES) {
		snprintf(err, errlen, "%s: truncated (%lld bytes)", path, (long long)st.st_size);
		rc = PT_ETRUNC;
		goto out;
	}
	/* check the header before mapping what it claims */
	hdr = mmap(NULL, PT_SHM_HEADER_BYTES, PROT_READ, MAP_SHARED, fd, 0);
	if (hdr == MAP_FAILED) {
		snprintf(err, errlen, "%s: mmap: %s", path, strerror(errno));
		rc = PT_EIO;
		goto out;
	}
	/* validate() reads header fields only: the header page is enough */
	char why[200];
	struct pt_shm_header hc;
	header_copy(hdr, PT_SHM_HEADER_BYTES, &hc);
	rc = validate(&hc, (size_t)st.st_size, why, sizeof why);
	if (rc) {
		snprintf(err, errlen, "%s: %s", path, why);
		goto out;
	}
	base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		snprintf(err, errlen, "%s: mmap: %s", path, strerror(errno));
		rc = PT_EIO;
		goto out;
	}
	/* guarded before the first read: the file may shrink at any moment */
	guard = pt_shm_guard_add(base, (size_t)st.st_size);
	rc = map_session(base, (size_t)st.st_size, 1, out, why, sizeof why);
	if (rc) {
		snprintf(err, errlen, "%s: %s", path, why);
		goto out;
	}
	(*out)->path = pt_xstrdup(path);
	(*out)->fd = fd;
	(*out)->guard = guard;
	base = MAP_FAILED; /* owned by the session now */
	fd = guard = -1;
out:
	if (hdr != MAP_FAILED)
		munmap(hdr, PT_SHM_HEADER_BYTES);
	pt_shm_guard_remove(guard);
	if (base != MAP_FAILED)
		munmap(base, (size_t)st.st_size);
	if (fd >= 0)
		close(fd);
	return rc;
}
