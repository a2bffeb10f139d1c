/*
 * error.h - error codes shared by every proftop module.
 *
 * Functions that can fail return int: 0 on success or a negative PT_E* code.
 * pt_strerror() turns a code into a short English phrase; modules that have
 * more to say (a file name, a byte offset) keep a message buffer of their own.
 */
#ifndef PROFTOP_ERROR_H
#define PROFTOP_ERROR_H

enum pt_err {
	PT_OK = 0,
	PT_EIO = -1,         /* read or write failed (errno kept by caller) */
	PT_EFORMAT = -2,     /* input is not what it claims to be */
	PT_ETRUNC = -3,      /* input ended in the middle of something */
	PT_ENOMEM = -4,      /* a configured memory cap was hit */
	PT_EINVAL = -5,      /* bad argument */
	PT_ENOTAVAIL = -6,   /* optional library or device not present */
	PT_EEXIST = -7,      /* refusing to overwrite */
	PT_ENOENT = -8,      /* no such file, session or object */
	PT_EPERM = -9,       /* not ours to touch */
};

const char *pt_strerror(int err);

#endif
