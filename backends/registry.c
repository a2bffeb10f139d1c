/*
 * registry.c - the backends linked into proftop, in a fixed order (the live
 * loop opens them in this order). An explicit table, no constructor
 * attributes: static builds work and the order never depends on the link.
 */
#include <string.h>

#include "proftop/backend.h"

const struct pt_backend_ops *const pt_backends[] = {
	&pt_backend_session,
	&pt_backend_procstat,
	&pt_backend_nvml,
	NULL,
};

const struct pt_backend_ops *pt_backend_find(const char *name)
{
	for (size_t i = 0; pt_backends[i]; i++) {
		if (!strcmp(pt_backends[i]->name, name))
			return pt_backends[i];
	}
	return NULL;
}
