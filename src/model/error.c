/* error.c - texts for the PT_E* codes. */
#include "proftop/error.h"

const char *pt_strerror(int err)
{
	switch (err) {
	case PT_OK: return "success";
	case PT_EIO: return "input/output error";
	case PT_EFORMAT: return "not a valid trace";
	case PT_ETRUNC: return "truncated input";
	case PT_ENOMEM: return "memory limit reached";
	case PT_EINVAL: return "invalid argument";
	case PT_ENOTAVAIL: return "not available";
	case PT_EEXIST: return "already exists";
	case PT_ENOENT: return "not found";
	case PT_EPERM: return "permission denied";
	}
	return "unknown error";
}
