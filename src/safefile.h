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
 * Opens a temporary for OUT (removing stale temporaries of dead writers
 * first). Fails with PT_EEXIST when OUT exists and !force, PT_EIO with
 * "OUT: reason" in err otherwise.
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
