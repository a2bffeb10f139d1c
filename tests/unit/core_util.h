/*
 * core_util.h - the includes the model's tests share (test_core.c,
 * test_core_util.c).
 */
#ifndef CORE_UTIL_H
#define CORE_UTIL_H

#include "testutil.h"
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proftop/store.h"
#include "proftop/strtab.h"
#include "model/util.h"

#endif
