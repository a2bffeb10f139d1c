/*
 * shm.c - what both sides of the session segment share: its size for given
 * parameters and the per-user directory it lives in, checked so that no
 * other user can plant or read a session (no symlinks, our uid, mode 0700).
 * Linked into proftop and into libproftop.so.
 */
#include "proftop/shm.h"

#include <errno.h>
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
	uint64_t stride = sizeof(struct pt_shm_ring) + (uint64_t)ring_slots * sizeof(struct pt_shm_rec);
	return PT_SHM_HEADER_BYTES + (uint64_t)nrings * stride + ((strings_bytes + 4095u) & ~4095u);
}

static int check_dir(const char *path, int create, char *err, size_t errlen)
{
	struct stat st;
	if (lstat(path, &st) != 0) {
		if (errno != ENOENT || !create) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return errno == ENOENT ? PT_ENOENT : PT_EIO;
		}
		if (mkdir(path, 0700) != 0 && errno != EEXIST) {
			snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
			return PT_EIO;
		}
		if (lstat(path, &st) != 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return PT_EIO;
		}
	}
	if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a directory (refusing a symlink or file)", path);
		return PT_EPERM;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s: owned by uid %u, not by us", path, (unsigned)st.st_uid);
		return PT_EPERM;
	}
	if (st.st_mode & 077) {
		snprintf(err, errlen, "%s: open to other users (mode %03o); refusing it", path,
			 (unsigned)(st.st_mode & 0777));
		return PT_EPERM;
	}
	return 0;
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
