/*
 * live.c - the live loop behind `proftop run`, `record` and attach
 * (live.h). Every poll period (100 ms) it drains the session backend and
 * samples /proc into the trace; it sleeps between polls, so it never spins.
 * Each session's rings are also emptied between drains by a copier thread
 * of the session backend (backends/session_copy.c), so a drain late behind
 * the screen, a summary or a busy machine loses nothing; the drain puts
 * what it copied into the trace. Draining is adaptive: a ring holds 32768
 * records, so a thread emitting more than ~330 K events/s fills it within
 * one period. When a drain says the rings were filling (PT_BACKEND_BUSY: a
 * quarter of a ring, or with a copier a quarter of what it may stage, came
 * in one poll), the next drain comes after
 * PT_LIVE_BUSY_POLL_NS (1 ms), or at once if it was that soon already, and
 * quiet drains double the gap back to the period (live_drain_gap()). The /proc
 * and NVML samplers, the screen and the key wait keep their own periods,
 * and an idle or slow session costs what it did (one wake-up per period,
 * after a handful of quick ones when the session opens).
 * With a launched child it keeps going until the child has exited and its
 * session is drained; Ctrl-C is forwarded to the child (which runs in its
 * own process group, so it gets exactly one SIGINT per key press). Without
 * a child, Ctrl-C or the owner's exit ends the loop. The text view redraws
 * the whole summary every refresh period from an incremental summary
 * (pt_agg_live_summary: what arrived since the last refresh, plus the
 * aggregator's kept state). With ui_wait set, the
 * full-screen UI waits for keys in place of the sleep.
 *
 * Many sessions at once (-p A,B,..., --all; live_multi.c keeps the set):
 * each session keeps its own drain gap (a busy rank is drained every
 * millisecond, the idle ones once a period: a drain also looks at /proc
 * for the owner's exit, so draining all at the busiest rate would cost a
 * system call or three per session per millisecond); every full period
 * drains them all. Each process gets its own /proc sampler, NVML is opened
 * once; with --all the session directory is listed every PT_LIVE_SCAN_NS
 * for newcomers.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "live/live.h"
#include "live/live_capture.h"
#include "live/live_hang.h"
#include "live/live_multi.h"
#include "proftop/agg.h"
#include "proftop/capture.h"
#include "proftop/error.h"
#include "proftop/ranks.h"
#include "proftop/report.h"
#include "proftop/session.h"
#include "model/util.h"

static volatile sig_atomic_t sig_count;

static void on_signal(int sig)
{
	(void)sig;
	sig_count++;
}

void pt_live_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int pt_live_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
	nanosleep(&ts, NULL); /* a signal cuts it short: the loop looks at once */
}

void pt_live_print(FILE *out, struct pt_trace *t, const struct pt_live_result *res, int top,
		   int clear, struct pt_agg_live *inc, struct pt_ranks_live *rinc)
{
	if (clear)
		fputs("\033[H\033[2J", out);
	const char *state = !res->session_found ? "waiting for a session"
			    : res->session_exited ? "exited"
						  : "running";
	fprintf(out, "proftop: %s %s, %llu events", res->describe[0] ? res->describe : "session",
		state, (unsigned long long)t->events_seen);
	if (pt_trace_source_lost(t)) {
		char causes[200];
		pt_trace_loss_causes(t, causes, sizeof causes, 0);
		fprintf(out, ", lost by the probe: %s", causes);
	}
	fputc('\n', out);
	struct pt_summary *s = inc ? pt_agg_live_summary(inc, t) : pt_summarize(t, NULL);
	struct pt_report_opts ro;
	struct pt_ranks ranks;
	memset(&ranks, 0, sizeof ranks);
	pt_report_opts_init(&ro);
	ro.top = (size_t)top;
	/* several sessions: the Rank Summary too (kept: what is new costs) */
	int rc = -1;
	if (pt_ranks_possible(t))
		rc = rinc ? pt_ranks_live_compute(rinc, t, &ranks) : pt_ranks_compute(t, NULL, &ranks);
	if (rc == 0 && ranks.n >= 2)
		ro.ranks = &ranks;
	pt_report_text(out, t, s, &ro);
	pt_ranks_free(&ranks);
	pt_summary_free(s);
	fflush(out);
}

void pt_live_print_brief(FILE *out, struct pt_trace *t, const struct pt_live_result *res,
			 int cols)
{
	const char *state = !res->session_found ? "waiting for a session"
			    : res->session_exited ? "exited"
						  : "running";
	char head[700];
	snprintf(head, sizeof head, "proftop: %s %s", res->describe[0] ? res->describe : "session",
		 state);
	if (cols > 0 && (int)strlen(head) > cols)
		head[cols] = 0; /* describe is escaped: bytes are columns but for a rare name */
	fprintf(out, "%s\n", head);
	struct pt_summary *s = pt_summarize(t, NULL);
	struct pt_report_opts ro;
	pt_report_opts_init(&ro);
	pt_report_brief(out, t, s, &ro, cols);
	pt_summary_free(s);
	fputs("Full tables: --full, or -o FILE and 'proftop report FILE'.\n", out);
	fflush(out);
}

void pt_live_line(FILE *out, struct pt_trace *t, struct pt_live_line_state *ls,
		  uint64_t elapsed_ns)
{
	struct pt_agg_opts ao;
	pt_agg_opts_init(&ao);
	ao.t0_ns = ls->since_ns; /* only what is new: steps are contiguous, the next starts there */
	struct pt_summary *s = pt_summarize(t, &ao);
	uint64_t dropped = t->warnings[PT_WARN_SOURCE_DROPPED] + t->warnings[PT_WARN_STORE_DROPPED];
	uint64_t n = 0, samples = 0, all_samples = 1, sum[PT_MS__COUNT] = {0}, last_end = 0;
	uint64_t tokens = 0, tok_ns = 0;
	for (size_t i = 0; i < s->nsteps; i++) {
		const struct pt_step *st = &s->steps[i];
		uint64_t end = st->start_ns + st->dur_ns;
		n++;
		samples += st->samples;
		if (st->tokens) {
			tokens += st->tokens;
			tok_ns += st->dur_ns;
		}
		all_samples &= st->samples > 0;
		for (int r = 0; r < PT_MS__COUNT; r++)
			sum[r] += st->cpu_ns[r];
		if (end > last_end)
			last_end = end;
	}
	fprintf(out, "proftop: t=%.1fs", (double)elapsed_ns / 1e9);
	if (!n) {
		fprintf(out, " steps=0 dropped=%llu\n", (unsigned long long)dropped);
		pt_summary_free(s);
		fflush(out);
		return;
	}
	ls->since_ns = last_end;
	ls->steps += n;
	double step_s = (double)sum[PT_MS_STEP] / 1e9;
	double ips = step_s > 0 ? (double)(all_samples ? samples : n) / step_s : 0;
	fprintf(out, " step=%lld steps=%llu ips=%.1f%s reader_cost_ms=%.3f batch_cost_ms=%.3f",
		(long long)ls->steps - 1, (unsigned long long)n, ips, all_samples ? "" : " ips_unit=steps/s",
		(double)sum[PT_MS_DATALOADER] / 1e6 / (double)n, (double)sum[PT_MS_STEP] / 1e6 / (double)n);
	if (tok_ns)
		fprintf(out, " tokens_per_s=%.0f", (double)tokens * 1e9 / (double)tok_ns);
	static const struct {
		const char *key;
		int row;
	} share[] = {{"reader_ratio", PT_MS_DATALOADER}, {"dataloader", PT_MS_DATALOADER},
		     {"forward", PT_MS_FORWARD},         {"backward", PT_MS_BACKWARD},
		     {"optimization", PT_MS_OPTIMIZATION}, {"others", PT_MS_OTHERS}};
	for (size_t i = 0; i < sizeof share / sizeof share[0]; i++)
		fprintf(out, " %s=%.1f%%", share[i].key,
			sum[PT_MS_STEP] ? 100.0 * (double)sum[share[i].row] / (double)sum[PT_MS_STEP] : 0.0);
	fprintf(out, " dropped=%llu\n", (unsigned long long)dropped);
	pt_summary_free(s);
	fflush(out);
}

static void try_open(struct pt_backend **sess, struct pt_backend **proc, const struct pt_live_opts *o,
		     struct pt_live_result *res, int32_t pid)
{
	struct pt_backend_args a = {0};
	char err[512];
	a.pid = pid;
	/* CPU samples at the drain rate: short runs get samples too */
	a.interval_ns = o->poll_ns ? o->poll_ns : PT_LIVE_POLL_NS;
	a.copier = 1; /* the rings keep emptying while the loop draws or waits */
	if (!*sess && o->session_ops && pid > 0 &&
	    o->session_ops->open(sess, &a, err, sizeof err) == 0) {
		res->session_found = 1;
		if ((*sess)->ops->describe)
			(*sess)->ops->describe(*sess, res->describe, sizeof res->describe);
	}
	if (!*proc && o->procstat_ops && pid > 0 && (*sess || o->child))
		o->procstat_ops->open(proc, &a, err, sizeof err);
}

/*
 * The NVML sampler (device-wide GPU utilization, memory, power), opened once
 * when the session's process is known; without libnvidia-ml or a driver it
 * simply contributes nothing.
 */
static struct pt_backend *open_nvml(const struct pt_backend_ops *ops, int32_t pid)
{
	struct pt_backend *b = NULL;
	struct pt_backend_args a = {0};
	char err[256];
	a.pid = pid;
	if (ops && ops->open(&b, &a, err, sizeof err) != 0)
		b = NULL;
	return b;
}

/*
 * Faults the store's next arenas in on a thread of its own: a fresh 2 MiB
 * arena can take milliseconds to fault in (in a VM whose host took the
 * memory back, tens), and the loop that drains the rings must not wait for
 * it: a ring holds 33 ms of records at a million events/s.
 */
#define PREFAULT_PERIOD_NS 5000000ull
/* once the store has taken no arena for a second: a quiet session wakes the
 * thread 10 times a second */
#define PREFAULT_IDLE_NS 100000000ull
#define PREFAULT_QUIET_NS 1000000000ull

struct prefaulter {
	struct pt_store *st;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop, running;
	pthread_t th;
};

static void *prefault_main(void *arg)
{
	struct prefaulter *p = arg;
	uint64_t seen = 0, changed_ns = 0;
	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		pthread_mutex_unlock(&p->mu);
		uint64_t taken = pt_store_prefault_growing(p->st), now = pt_now_ns();
		if (taken != seen)
			changed_ns = now;
		seen = taken;
		uint64_t period = changed_ns && now - changed_ns < PREFAULT_QUIET_NS
				      ? PREFAULT_PERIOD_NS
				      : PREFAULT_IDLE_NS;
		pthread_mutex_lock(&p->mu);
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t ns = (uint64_t)ts.tv_nsec + period;
		ts.tv_sec += (time_t)(ns / 1000000000ull);
		ts.tv_nsec = (long)(ns % 1000000000ull);
		if (!p->stop)
			pthread_cond_timedwait(&p->cv, &p->mu, &ts);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static void prefaulter_start(struct prefaulter *p, struct pt_store *st)
{
	memset(p, 0, sizeof *p);
	p->st = st;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&p->mu, NULL);
	p->running = pthread_create(&p->th, NULL, prefault_main, p) == 0; /* else the loop faults */
}

static void prefaulter_stop(struct prefaulter *p)
{
	if (p->running) {
		pthread_mutex_lock(&p->mu);
		p->stop = 1;
		pthread_cond_signal(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->th, NULL);
	}
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
}

int pt_live_run(struct pt_trace *t, const struct pt_live_opts *o, struct pt_live_result *res)
{
	struct pt_backend *sess = NULL, *proc = NULL, *nvml = NULL;
	struct live_multi *multi = NULL;
	int nvml_tried = 0;
	uint64_t poll_ns = o->poll_ns ? o->poll_ns : PT_LIVE_POLL_NS;
	uint64_t busy_ns = poll_ns < PT_LIVE_BUSY_POLL_NS ? poll_ns : PT_LIVE_BUSY_POLL_NS;
	uint64_t gap_ns = busy_ns; /* until the next drain, see live_drain_gap() */
	uint64_t t0 = pt_now_ns(), next_draw = t0 + o->refresh_ns;
	uint64_t next_line = t0 + o->every_ns;
	struct pt_live_line_state line = {0, 0};
	struct pt_agg_live *print_sum = NULL; /* the text view's summary */
	struct pt_ranks_live *print_ranks = NULL; /* ...and per-rank figures */
	uint64_t next_slow = t0; /* next full period: samplers, sessions to find */
	uint64_t next_hang = t0; /* next look for a hang (once a second) */
	sig_atomic_t sigs_seen = sig_count;
	int ended = 0;
	struct live_captures caps;
	memset(&caps, 0, sizeof caps);
	memset(res, 0, sizeof *res);
	struct prefaulter pf;
	prefaulter_start(&pf, t->store);
	if ((o->npids || o->all_sessions || o->launch_id) && o->session_ops)
		multi = live_multi_new(o, t, poll_ns);
	if (multi && o->child && o->procstat_ops) {
		/* the launched command's CPU from its start, whatever records */
		struct pt_backend_args a = {0};
		char err[256];
		a.pid = o->child;
		a.interval_ns = poll_ns;
		if (o->procstat_ops->open(&proc, &a, err, sizeof err) != 0)
			proc = NULL;
	}
	for (;;) {
		uint64_t now = pt_now_ns();
		/* early wake-ups (a busy session, a signal) are for the session only */
		int slow = now >= next_slow;
		if (slow)
			next_slow = now + poll_ns;
		if (multi && (slow || now >= live_multi_open_due(multi)))
			live_multi_open(multi, now, res);
		if (!multi && slow && !sess && !res->child_done) {
			try_open(&sess, &proc, o, res, o->session_pid);
			if (!sess && o->find_pid) {
				int32_t other = o->find_pid(o->find_ctx);
				if (other > 0 && other != o->session_pid) {
					if (proc && o->child) { /* sample the process that has the probe */
						proc->ops->close(proc);
						proc = NULL;
					}
					try_open(&sess, &proc, o, res, other);
				}
			}
		}
		if (o->child && !res->child_done) {
			int st;
			pid_t w = waitpid(o->child, &st, WNOHANG);
			if (w == o->child) {
				res->child_done = 1;
				res->child_status = st;
				/* its segment stays: open it now if it never was */
				if (!sess && !multi)
					try_open(&sess, &proc, o, res, o->session_pid);
				if (multi)
					live_multi_final(multi, now, res);
			}
		}
		if ((sess || res->session_found) && !nvml_tried) {
			nvml_tried = 1; /* once, whatever the number of sessions */
			nvml = open_nvml(o->nvml_ops, multi ? live_multi_first_pid(multi)
							    : o->session_pid);
		}
		if (slow && nvml && nvml->ops->poll(nvml, t, now) == PT_ENOENT) {
			nvml->ops->close(nvml);
			nvml = NULL;
		}
		if (slow && o->extra)
			o->extra->ops->poll(o->extra, t, now);
		if (slow && multi)
			live_multi_sample(multi, now);
		if (slow && proc && proc->ops->poll(proc, t, now) == PT_ENOENT) {
			proc->ops->close(proc);
			proc = NULL;
		}
		uint64_t multi_due = UINT64_MAX;
		if (multi && live_multi_live(multi))
			multi_due = live_multi_drain(multi, now, slow, busy_ns, res);
		if (multi && live_multi_done(multi, now, res))
			ended = 1;
		if (sess) {
			int rc = sess->ops->poll(sess, t, now);
			gap_ns = live_drain_gap(gap_ns, rc == PT_BACKEND_BUSY, busy_ns, poll_ns);
			if (rc < 0 && rc != PT_ENOENT && !res->error[0]) {
				/* say it once; the screen and record show res->describe */
				const char *why = sess->ops->last_error ? sess->ops->last_error(sess) : NULL;
				snprintf(res->error, sizeof res->error, "%s", why && *why ? why : pt_strerror(rc));
				if (sess->ops->describe)
					sess->ops->describe(sess, res->describe, sizeof res->describe);
			}
			if (rc == PT_ENOENT) {
				res->session_exited = 1;
				if (sess->ops->describe)
					sess->ops->describe(sess, res->describe, sizeof res->describe);
				if (!o->child || res->child_done)
					ended = 1;
			}
		}
		if (slow && o->after_poll)
			o->after_poll(o->after_ctx, t, now);
		if (now >= next_hang && t->colls.n) {
			pt_live_hang_check(t, o, res, now);
			next_hang = now + 1000000000ull;
		}
		live_captures_poll(&caps, t, o, multi, now);
		if (o->child ? res->child_done : ended)
			break;
		if (sig_count != sigs_seen) {
			sigs_seen = sig_count;
			res->interrupted = 1;
			if (!o->child)
				break;
			kill(o->child, SIGINT);
		}
		if (o->duration_ns && now - t0 >= o->duration_ns) {
			res->timed_out = 1;
			break;
		}
		if (o->every_ns && now >= next_line) {
			pt_live_line(o->out, t, &line, now - t0);
			next_line += o->every_ns;
			if (next_line <= now)
				next_line = now + o->every_ns;
		}
		if (o->screen && now >= next_draw) {
			if (!print_sum) {
				print_sum = pt_agg_live_new();
				print_ranks = pt_ranks_live_new();
			}
			pt_live_print(o->out, t, res, 20, 1, print_sum, print_ranks);
			next_draw = now + o->refresh_ns;
		}
		uint64_t after = pt_now_ns(), wait = 0;
		uint64_t due = sess && now + gap_ns < next_slow ? now + gap_ns : next_slow;
		if (multi_due < due)
			due = multi_due;
		if (multi && live_multi_open_due(multi) < due)
			due = live_multi_open_due(multi);
		if (due > after)
			wait = due - after;
		if (o->ui_wait && !res->ui_quit) {
			int q = o->ui_wait(o->ui_ctx, t, res, wait);
			if (q) {
				res->ui_quit = 1;
				if (!o->child)
					break;
				if (q == 2) { /* leave the job running */
					res->detached = 1;
					break;
				}
				kill(o->child, SIGINT);
			}
			if (o->ctl && o->ctl->capture_steps) {
				live_captures_ask(&caps, t, sess, multi, o->ctl->capture_steps, "key T");
				o->ctl->capture_steps = 0;
			}
		} else if (wait) {
			sleep_ns(wait);
		}
	}
	prefaulter_stop(&pf);
	if (res->hang[0]) /* whether it ended with the job */
		pt_live_hang_check(t, o, res, pt_now_ns());
	if (o->every_ns) /* the steps since the last line */
		pt_live_line(o->out, t, &line, pt_now_ns() - t0);
	if (sess)
		sess->ops->close(sess); /* detaches: the probe goes back to flight recording */
	if (proc)
		proc->ops->close(proc);
	live_captures_end(&caps, t, o);
	live_multi_free(multi, res);
	pt_agg_live_free(print_sum);
	pt_ranks_live_free(print_ranks);
	if (nvml)
		nvml->ops->close(nvml);
	return 0;
}
