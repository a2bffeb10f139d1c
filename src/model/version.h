/*
 * version.h - the version string every face prints ("proftop 0.1.0") and the
 * exporter writes into otherData.generator. A build may override it with
 * -DPROFTOP_VERSION='"x.y.z"'.
 */
#ifndef PT_VERSION_H
#define PT_VERSION_H

#ifndef PROFTOP_VERSION
#define PROFTOP_VERSION "0.1.0"
#endif

#endif
