/*
 * chrome_int.h - what the two halves of the Chrome-trace reader share: the
 * batch (a chunk of text holding whole event objects, and the raw records
 * parsed from it) and the sink that turns raw records into pt_trace events
 * in file order. chrome_read.c owns input and threads, chrome_doc.c the
 * top-level JSON and the splitting into objects; chrome_sink.c owns the
 * meaning of events.
 */
#ifndef PT_CHROME_INT_H
#define PT_CHROME_INT_H

#include <stddef.h>
#include <stdint.h>

#include "import/json_scan.h"
#include "proftop/trace.h"


struct cr_batch {
	char *buf;
	size_t cap;
	uint64_t base_off; /* offset of buf[0] in the uncompressed text */
	/* filled by the splitter */
	struct pt_json_span *spans; /* each object's place in buf */
	uint32_t nspans, spans_cap;
	int final; /* nothing follows this batch */
	int native; /* the file is proftop's own export: "cat" names the kind */
	/* filled by a parser */
	struct pt_raw_event *ev;
	uint32_t nev, ev_cap;
	struct pt_json_side side;
	int perr; /* a syntax error in object nev (the first bad one) */
	uint64_t perr_off;
	const char *perr_msg;
	/* pipeline bookkeeping (chrome_read.c) */
	int state;
};

/* Parses every span of b into b->ev (stops at the first syntax error). */
void cr_parse_batch(struct cr_batch *b);

struct cr_sink;
struct cr_sink *cr_sink_new(struct pt_trace *t);
/* Feeds b's records to the trace, in order. */
void cr_sink_batch(struct cr_sink *s, const struct cr_batch *b);
/* End of input: unclosed B events, flow binding. */
void cr_sink_finish(struct cr_sink *s);
void cr_sink_free(struct cr_sink *s);

#endif
