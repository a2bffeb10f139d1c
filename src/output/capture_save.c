/*
 * capture_save.c - saving a deep capture's window of the live trace as a
 * Chrome trace (pt_capture_save, capture.h), and a group's captures (the
 * same steps on every rank) together in a folder, a file per rank and one
 * of every rank (pt_capture_group_save), through the exporter.
 */
#include "proftop/capture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proftop/chrome.h"
#include "proftop/error.h"

int pt_capture_save(struct pt_trace *t, struct pt_capture *c, const char *path, const char *dir,
		    char *err, size_t errlen)
{
	struct pt_export_opts eo;
	memset(&eo, 0, sizeof eo);
	eo.t0_ns = c->win0_ns ? c->win0_ns : c->t0_ns;
	eo.t1_ns = c->win1_ns ? c->win1_ns : c->t1_ns; /* the next step starts there */
	char name[sizeof c->saved - 1];
	int rc = PT_EEXIST;
	if (path) {
		eo.force = 1;
		snprintf(name, sizeof name, "%s", path);
		rc = pt_chrome_export(t, name, &eo, err, errlen);
	} else {
		for (int i = 1; i <= 100 && rc == PT_EEXIST; i++) {
			char sfx[16] = "";
			if (i > 1)
				snprintf(sfx, sizeof sfx, "-%d", i);
			snprintf(name, sizeof name, "%s%sproftop-capture-%lld-%u%s.json", dir ? dir : "",
				 dir ? "/" : "", (long long)c->pid, c->seq, sfx);
			rc = pt_chrome_export(t, name, &eo, err, errlen);
		}
	}
	if (rc == 0)
		snprintf(c->saved, sizeof c->saved, "%s", name);
	else
		c->save_failed = 1;
	pt_capture_touch(t);
	return rc;
}

/* A new folder dir/proftop-capture-steps-A-B (-2, -3... when taken), 0700. */
static int group_dir(const struct pt_capture_group *g, int64_t first, int64_t last,
		     const char *dir, char *out, size_t len, char *err, size_t errlen)
{
	for (int i = 1; i <= 100; i++) {
		char sfx[16] = "";
		if (i > 1)
			snprintf(sfx, sizeof sfx, "-%d", i);
		int n;
		if (first >= 0)
			n = snprintf(out, len, "%s%sproftop-capture-steps-%lld-%lld%s", dir ? dir : "",
				     dir ? "/" : "", (long long)first, (long long)last, sfx);
		else
			n = snprintf(out, len, "%s%sproftop-capture-group-%u%s", dir ? dir : "",
				     dir ? "/" : "", g->id, sfx);
		if (n < 0 || (size_t)n >= len) {
			snprintf(err, errlen, "the folder's name is too long");
			return PT_EINVAL;
		}
		if (mkdir(out, 0700) == 0)
			return 0;
		if (errno != EEXIST) {
			snprintf(err, errlen, "%s: %s", out, strerror(errno));
			return PT_EIO;
		}
	}
	snprintf(err, errlen, "%s: a hundred such folders exist already", out);
	return PT_EEXIST;
}

int pt_capture_group_save(struct pt_trace *t, struct pt_capture_group *g, const char *dir,
			  char *err, size_t errlen)
{
	struct pt_capture_list *l = t->captures;
	uint64_t w0 = UINT64_MAX, w1 = 0;
	int64_t first = -1, last = -1;
	uint32_t merged = 0;
	for (uint32_t i = 0; l && i < l->n; i++) {
		const struct pt_capture *c = &l->v[i];
		if (c->group != g->id || c->state != PT_CAPTURE_MERGED)
			continue;
		merged++;
		uint64_t a = c->win0_ns ? c->win0_ns : c->t0_ns, b = c->win1_ns ? c->win1_ns : c->t1_ns;
		w0 = a < w0 ? a : w0;
		w1 = b > w1 ? b : w1;
		if (c->first_step >= 0 && (first < 0 || c->first_step < first))
			first = c->first_step;
		if (c->last_step > last)
			last = c->last_step;
	}
	int rc = 0;
	char path[600];
	if (!merged) {
		snprintf(err, errlen, "no rank's capture was merged");
		rc = PT_ENOENT;
		goto out;
	}
	if ((rc = group_dir(g, first, last, dir, g->saved, sizeof g->saved, err, errlen))) {
		g->saved[0] = 0;
		goto out;
	}
	for (uint32_t i = 0; i < l->n && !rc; i++) {
		struct pt_capture *c = &l->v[i];
		if (c->group != g->id || c->state != PT_CAPTURE_MERGED)
			continue;
		const struct pt_proc *p = pt_trace_proc(t, c->pid);
		if (p && p->rank >= 0)
			snprintf(path, sizeof path, "%s/rank-%lld.json", g->saved, (long long)p->rank);
		else
			snprintf(path, sizeof path, "%s/pid-%lld.json", g->saved, (long long)c->pid);
		struct pt_export_opts eo;
		memset(&eo, 0, sizeof eo);
		eo.t0_ns = c->win0_ns ? c->win0_ns : c->t0_ns;
		eo.t1_ns = c->win1_ns ? c->win1_ns : c->t1_ns;
		eo.only_pid = c->pid;
		if ((rc = pt_chrome_export(t, path, &eo, err, errlen)) == 0)
			snprintf(c->saved, sizeof c->saved, "%.*s", (int)sizeof c->saved - 1, path);
	}
	if (!rc) {
		struct pt_export_opts eo;
		memset(&eo, 0, sizeof eo);
		eo.t0_ns = w0;
		eo.t1_ns = w1;
		snprintf(path, sizeof path, "%s/all-ranks.json", g->saved);
		rc = pt_chrome_export(t, path, &eo, err, errlen);
	}
	if (rc) { /* a folder with some ranks only is not left behind */
		for (uint32_t i = 0; i < l->n; i++) {
			struct pt_capture *c = &l->v[i];
			if (c->group == g->id && c->saved[0]) {
				unlink(c->saved);
				c->saved[0] = 0;
			}
		}
		rmdir(g->saved);
		g->saved[0] = 0;
	}
out:
	if (rc) {
		g->save_failed = 1;
		snprintf(g->save_err, sizeof g->save_err, "%s", err);
	}
	pt_capture_touch(t);
	return rc;
}
