/*
 * safefile.h - all-or-nothing output files (internal): write to a temporary,
 * fsync, then put it in place in one step, so a reader (or the user, after a
 * crash, SIGKILL or full disk) sees either the old file or the complete new
 * one, never a partial file.
 *
 * The temporary is an unnamed O_TMPFILE in OUT's directory where the file
 * system has them: a writer killed mid-way leaves nothing behind. It is
 * linked straight to OUT (no --force: link fails if OUT exists) or, to
 * replace OUT, linked to "OUT.tmp.XXXXXX" and renamed over OUT. Where
 * O_TMPFILE is missing the temporary is a named "OUT.tmp.XXXXXX" from the
 * start. Either way the writer holds flock(LOCK_EX) on it from before it
 * has a name, so pt_safe_open removes the "OUT.tmp.*" left by writers that
 * died (unlocked) and never touches one a live writer holds. Files are
 * created 0600: exports hold training data.
 */
#ifndef PT_SAFEFILE_H
#define PT_SAFEFILE_H

#include <stddef.h>

struct pt_safe_file {
	int fd;	    /* write here; -1 when closed */
	char *path; /* OUT */
	char *tmp;  /* the named temporary, NULL while unnamed */
	int anon;   /* fd is an unnamed O_TMPFILE */
};

/*
 * The file descriptor that OUT names, to be written in place rather than
 * created: 1 for "-" and /dev/stdout, 2 for /dev/stderr, N for /dev/fd/N and
 * /proc/self/fd/N; -1 for a file to create. (Replacing /dev/stdout with a
 * file would replace the system's link.)
 */
int pt_out_fd(const char *path);
/*
 * Whether OUT may be written: 0, or PT_EINVAL when it exists and is not a
 * regular file (a device, a FIFO, a socket: never replaced, --force or
 * not), PT_EIO for a directory, PT_EEXIST when it exists and !force; the
 * reason in err. Callers check before long work (record, before CMD
 * starts); pt_safe_open checks again.
 */
int pt_safe_check(const char *path, int force, char *err, size_t errlen);
/*
 * Opens a temporary for OUT (removing stale temporaries of dead writers
 * first). Fails as pt_safe_check does, with PT_EIO
 * and "OUT: reason" in err otherwise (PT_EIO/EINVAL for a pt_out_fd name).
 */
int pt_safe_open(struct pt_safe_file *f, const char *path, int force, char *err, size_t errlen);
/*
 * fsyncs and puts the file in place (then fsyncs the directory); wr_errno is
 * the first write error the caller met (0 if none): with one, the temporary
 * goes and OUT is untouched. Always closes and frees f.
 */
int pt_safe_commit(struct pt_safe_file *f, int force, int wr_errno, char *err, size_t errlen);
/* Drops the temporary (OUT untouched); safe on a closed f. */
void pt_safe_abort(struct pt_safe_file *f);
/* Removes OUT.tmp.* of writers that died; returns how many were removed. */
int pt_safe_clean_stale(const char *path);
/* "PATH: No space left on device (ENOSPC)" into err. Returns PT_EIO. */
int pt_safe_fail(char *err, size_t errlen, const char *path, int e);

#endif
