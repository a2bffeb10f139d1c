/*
 * advisor_int.h - the advisor's JSON writer, for the report faces that
 * build their output in a pt_buf (report_json.c).
 */
#ifndef PT_ADVISOR_INT_H
#define PT_ADVISOR_INT_H

#include "proftop/advisor.h"
#include "model/util.h"

/* ",\n  \"advice\": [ {...}, ... ]" - a key of the report's top object. */
void pt_advice_json_buf(struct pt_buf *b, const struct pt_advice_list *l);

#endif
