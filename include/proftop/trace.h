/*
 * trace.h - a session's data model, and the sink every source writes to.
 *
 * A struct pt_trace holds what is known about one profiled session (a file
 * or, later, a live process): the interned strings, the tracks (host threads
 * and device streams with their labels), the bounded event store, metadata
 * read from the source, and counters of what was skipped or guessed.
 *
 * Sources call the pt_trace_* "sink" functions below; the aggregator and the
 * faces (report, export, TUI) only read. Nothing here knows about files,
 * shared memory, curses or vendor libraries.
 *
 * Threading: one writer at a time; readers only while no writer runs.
 */
#ifndef PROFTOP_TRACE_H
#define PROFTOP_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/coll.h"
#include "proftop/event.h"
#include "proftop/store.h"
#include "proftop/strtab.h"

/* What a source skipped or guessed. Keys are stable (JSON "warnings"). */
enum pt_warn {
	PT_WARN_BAD_EVENT = 0, /* event object with missing/mistyped fields */
	PT_WARN_UNKNOWN_PHASE, /* "ph" proftop does not know */
	PT_WARN_E_WITHOUT_B,   /* "E" with no open "B" on its thread */
	PT_WARN_UNCLOSED_B,    /* "B" never closed by the end of the input */
	PT_WARN_NEGATIVE_DUR,
	PT_WARN_HUGE_DUR,      /* longer than PT_MAX_DUR_NS */
	PT_WARN_BAD_TS,        /* negative or out-of-range timestamp */
	PT_WARN_NONFINITE,     /* NaN or Infinity where a number belongs */
	PT_WARN_BAD_UTF8,      /* name with invalid UTF-8 (kept, shown escaped) */
	PT_WARN_FLOW_UNMATCHED,/* flow start/end with no partner or no slice */
	PT_WARN_CHILD_OVERHANG,/* child ended after its parent, nested anyway */
	PT_WARN_BAD_DEVICE_RECORD, /* device record with start 0 or end < start */
	PT_WARN_STORE_DROPPED, /* events dropped by the memory cap */
	PT_WARN_SOURCE_DROPPED,/* events the source itself lost (full rings) */
	PT_WARN_PROFILER_RANGE,/* CUPTI profiler-mode kernel ranges (counters, no times) */
	PT_WARN_SOURCE_OVERWRITTEN, /* overwritten by the probe while no reader was attached */
	PT_WARN_READER_MISSED, /* freed after other readers read them (before this one
				  attached, or while it was stalled) */
	PT_WARN_NAME_CUT,      /* names longer than PT_NAME_MAX_BYTES, cut (pt_trace_intern) */
	PT_WARN_DUP_KEY,       /* a second "traceEvents" (or other top-level) key; ignored */
	PT_WARN_ID_RANGE,      /* pid/tid beyond int64, kept apart by their text */
	PT_WARN_TRACK_FOLDED,  /* events of threads past the memory cap, on one track */
	PT_WARN_NAME_FOLDED,   /* names past the memory cap, all given one name */
	PT_WARN_NEST_DEEP,     /* events nested too deep for the tables (agg.c) */
	PT_WARN_COLL_DROPPED,  /* collective rows dropped by the memory cap (coll.h) */
	PT_WARN__COUNT
};

/* Names longer than this are cut: the first bytes, then "...[N bytes
 * #HASH]" (the hash of the whole name keeps different names apart). */
#define PT_NAME_MAX_BYTES ((size_t)1 << 20)

/* Durations past this are refused as corrupt (7 days). */
#define PT_MAX_DUR_NS (7ull * 24 * 3600 * 1000000000ull)

/* How a source names a thread: numbers, or strings ("Spans", "stream 7"). */
struct pt_track_key {
	int64_t pid, tid;
	uint32_t pid_str, tid_str; /* interned string id when given as a string, else 0 */
};

struct pt_track {
	struct pt_track_key key;
	uint32_t label;         /* thread_name metadata (string id), 0 if none */
	uint32_t process_label; /* process_name metadata, 0 if none */
	int32_t device;         /* device index for device tracks, -1 for host */
	int64_t stream;         /* stream id on device tracks */
	int64_t sort_index;     /* thread_sort_index metadata, else 0 */
	uint64_t events;        /* events ever added (kept or not) */
	uint64_t steps;         /* of which ProfileStep events (the anomaly recorder
	                           looks only at tracks whose count moved) */
	uint64_t counters;      /* of which counter samples (the screen's meters
	                           read only the host tracks that have some) */
	uint64_t last_end_ns;   /* the latest end of its events (counter samples aside) */
	/* What the thread had open when its source last looked (a live
	 * session's ring; outermost first, at most PT_TRACK_OPEN): the hang's
	 * "what it was doing" (colls.h). */
	uint32_t nopen;
	uint32_t open_name[4];
	uint64_t open_start[4];
};
#define PT_TRACK_OPEN 4

/*
 * A process of the trace. When a trace holds several processes of one job
 * (a merged trace, or many live sessions), each is a rank: RANK from the
 * process's environment, a merged trace's otherData, or -1 when unknown.
 */
struct pt_proc {
	int64_t pid;            /* as the tracks name it (key.pid) */
	int64_t rank;           /* -1 when unknown */
	uint32_t host;          /* interned host name, 0 when unknown */
	int ended;              /* 0 running (or unknown), 1 exited, 2 died (live sessions) */
};

/* Past the memory cap's share for tracks and names (pt_store_charge_full),
 * a new thread's events go on one track named PT_FOLDED_THREADS (in the
 * process of the first thread folded), and a new name becomes
 * PT_FOLDED_NAMES; each counted in warnings[]. */
#define PT_FOLDED_THREADS "(threads over the memory cap)"
/* Open calls one thread may nest in the summaries' tables; deeper events
 * are left out of them, counted in warnings[PT_WARN_NEST_DEEP] (agg.c).
 * The text form is for the warning's wording. */
#define PT_NEST_MAX_DEPTH 4096
#define PT_NEST_MAX_DEPTH_TEXT "4096"
#define PT_FOLDED_NAMES "(names over the memory cap)"

struct pt_trace {
	struct pt_strtab *strings;
	struct pt_store *store;
	struct pt_track *tracks;
	uint32_t ntracks, tracks_cap;
	struct pt_track_map *track_map; /* private */
	struct pt_label_map *labels;    /* private: labels seen before their track */

	char *source;           /* file path or session description */
	uint32_t display_unit;  /* 0 = default (ms), 1 = "ns" */
	int64_t rank;           /* distributed rank, -1 when unknown */
	int64_t world_size;     /* -1 when unknown */
	uint64_t events_seen;   /* events added through the sink */
	uint64_t first_ns, last_ns; /* over every event seen, kept or not */
	uint64_t warnings[PT_WARN__COUNT];
	/* Of warnings[SOURCE_OVERWRITTEN] and [READER_MISSED]: those already
	 * gone when this reader first looked at their ring (the job ran before
	 * proftop attached), not lost while it read. Live sessions only. */
	uint64_t before_attach[2];
	uint64_t store_dropped_seen; /* private: store drops already counted */
	/* private: the one track and the one name that new threads and names
	 * get once the cap's share for them is used (+1; 0: not yet made) */
	uint32_t folded_track, folded_name;
	struct pt_proc *procs;  /* processes given a rank or host (pt_trace_set_proc) */
	uint32_t nprocs, procs_cap;
	/* Measured cost of one event the probe records (ns; its calibration,
	 * from the session header or a trace's otherData), 0 when unknown. */
	double probe_ns_per_event;
	/* The Python helper's own cost beside the probe's: ns one wrapped call
	 * adds besides its events (its measurement at start; 0 unknown), and the
	 * calls it wrapped (summed over the trace's sessions). */
	double helper_ns_per_call;
	uint64_t helper_calls;
	/* What the sources said about themselves, shown as "Note:" lines: the
	 * texts of instant marks named "proftop: ..." (the Python helper says
	 * how it counts steps, or why it saw none), first PT_TRACE_MAX_NOTES
	 * distinct ones, as string ids; notes_dropped counts the rest. */
	uint32_t notes[16];
	uint32_t nnotes;
	uint64_t notes_dropped;
	/* Deep captures of live sessions (capture.h), NULL until the first. */
	struct pt_capture_list *captures;
	/* Operator events with FLOPs (PT_EVF_FLOPS) added so far, and the first
	 * device's name (NVML, a Kineto trace's deviceProperties, our export's
	 * otherData), 0 when unknown: the FLOPs tables and their peak (flops.h). */
	uint64_t flop_events;
	uint32_t device_name;
	/* The collectives every rank entered and completed (coll.h). */
	struct pt_colls colls;
};
#define PT_TRACE_MAX_NOTES 16
/* Marks whose name starts with this become notes (pt_trace_add). */
#define PT_NOTE_PREFIX "proftop: "

struct pt_trace *pt_trace_new(size_t max_mem_bytes);
void pt_trace_free(struct pt_trace *t);
void pt_trace_set_source(struct pt_trace *t, const char *source);

/* ---- the sink: what sources call ---- */
/* Names are cut past PT_NAME_MAX_BYTES (counted in PT_WARN_NAME_CUT), and
 * what names and tracks hold is counted against the store's cap. */
uint32_t pt_trace_intern(struct pt_trace *t, const char *s, size_t len);
/* Finds or creates the track for key; returns its id. */
uint32_t pt_trace_track(struct pt_trace *t, const struct pt_track_key *key);
/* Metadata: may arrive before or after the track's first event. */
void pt_trace_set_thread_label(struct pt_trace *t, const struct pt_track_key *key, uint32_t label);
void pt_trace_set_process_label(struct pt_trace *t, const struct pt_track_key *key, uint32_t label);
void pt_trace_set_thread_sort(struct pt_trace *t, const struct pt_track_key *key, int64_t idx);
/* Marks a track as a device stream. */
void pt_trace_track_device(struct pt_trace *t, uint32_t track, int32_t device, int64_t stream);
/* Records a process's rank (-1: unknown) and host (NULL: unknown); last call wins. */
void pt_trace_set_proc(struct pt_trace *t, int64_t pid, int64_t rank, const char *host);
/* Marks the process of pid as ended (1 exited, 2 died without its exit handlers). */
void pt_trace_proc_ended(struct pt_trace *t, int64_t pid, int how);
/* The process entry of pid, or NULL when none was set. */
const struct pt_proc *pt_trace_proc(const struct pt_trace *t, int64_t pid);
/* "rank R" when the process of pid has a rank, else "pid P", into buf. */
void pt_trace_proc_name(const struct pt_trace *t, int64_t pid, char *buf, size_t len);
/* Adds one event (ev->track_id must come from pt_trace_track). */
void pt_trace_add(struct pt_trace *t, const struct pt_event *ev);
void pt_trace_warn(struct pt_trace *t, enum pt_warn w, uint64_t count);
/* Adds a note (text without PT_NOTE_PREFIX), once per distinct text. */
void pt_trace_note(struct pt_trace *t, const char *text);
/* Note i's text, without the prefix. */
const char *pt_trace_note_text(const struct pt_trace *t, uint32_t i);

/* ---- readers ---- */
static inline const char *pt_trace_str(const struct pt_trace *t, uint32_t id)
{
	return pt_strtab_get(t->strings, id);
}
static inline int pt_track_is_device(const struct pt_track *tr)
{
	return tr->device >= 0;
}
/* Writes a human label for a track ("python main thread", "GPU 0 stream 7"). */
void pt_trace_track_label(const struct pt_trace *t, uint32_t track, char *buf, size_t len);
const char *pt_warn_key(enum pt_warn w);  /* "bad_event", ... */
const char *pt_warn_text(enum pt_warn w); /* "events with missing or mistyped fields" */
uint64_t pt_trace_warn_total(const struct pt_trace *t);
/* Events the source lost before proftop read them, every cause: dropped
 * (rings or string area full while a reader was attached), overwritten
 * while no reader was attached, missed by this reader (other readers had
 * read them before it attached or while it was stalled). */
uint64_t pt_trace_source_lost(const struct pt_trace *t);
/* The causes with a count, e.g. "5 dropped (rings full), 12 overwritten while
 * detached, 3 missed (read by another reader)"; brief: "5 full, 12 overwr.,
 * 3 missed".
 * Empty when nothing was lost. */
void pt_trace_loss_causes(const struct pt_trace *t, char *buf, size_t len, int brief);
/* Of pt_trace_source_lost: the events already gone when proftop attached
 * (before_attach), and the causes of the rest, as pt_trace_loss_causes. */
uint64_t pt_trace_lost_before_attach(const struct pt_trace *t);
void pt_trace_loss_causes_attached(const struct pt_trace *t, char *buf, size_t len, int brief);

#endif
