/*
 * capture_save.c - saving a deep capture's window of the live trace as a
 * Chrome trace (pt_capture_save, capture.h), through the exporter.
 */
#include "proftop/capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
