/*
 * minitrain - proftop's bundled example trainer: a real, small training
 * loop with no framework. A 3-layer MLP (input -> hidden -> hidden ->
 * classes, ReLU, softmax cross-entropy) learns a synthetic classification
 * task with hand-written forward and backward passes and plain SGD. The data
 * loader can be slow (--reader-ms: each batch costs a sleep plus generating
 * it) and can prefetch with worker threads (--workers N, a bounded in-order
 * queue), which reproduces Paddle's dataloader case study: with --workers 0
 * the training thread waits for every batch and the reader ratio is high;
 * with --workers 4 the batches are ready when asked for and IPS rises.
 *
 * The loop is annotated with proftop's C API (steps, the four phases,
 * per-layer operators with inner "matmul"/"bias_add" operators) through the
 * PROFTOP_WEAK symbols: without libproftop.so the symbols are null and every
 * call is skipped; with it preloaded (proftop run, or LD_PRELOAD) the dynamic
 * linker binds them to the library. Results do not depend on either: every
 * batch is a pure function of (seed, batch index) and the arithmetic runs on
 * one thread in a fixed order, so the same seed gives the same loss, bit for
 * bit, with or without proftop and with any number of workers.
 *
 * This file: the command line and the training loop. The task and the
 * loader are data.c's, the model model.c's (minitrain.h).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "minitrain.h"

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p) {
		fprintf(stderr, "minitrain: out of memory\n");
		exit(1);
	}
	return p;
}

/* Sleeps ms milliseconds, whatever signals arrive meanwhile. */
void sleep_ms(double ms)
{
	if (!(ms > 0))
		return;
	uint64_t end = now_ns() + (uint64_t)(ms * 1e6);
	struct timespec ts = {(time_t)(end / 1000000000ull), (long)(end % 1000000000ull)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* ---- command line ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: minitrain [OPTIONS]\n"
		"Trains a small MLP on synthetic data, annotated for proftop.\n"
		"\n"
		"  --steps N       training steps (default 0: run until SIGINT/SIGTERM)\n"
		"  --batch N       samples per step (default 64)\n"
		"  --input N       input features (default 64)\n"
		"  --hidden N      width of both hidden layers (default 256)\n"
		"  --classes N     classes (default 10)\n"
		"  --reader-ms MS  time to read one batch: sleep MS, then generate it (default 0)\n"
		"  --workers N     loader threads that prefetch batches (default 0: the\n"
		"                  training thread reads each batch itself)\n"
		"  --queue N       batches the workers may prefetch (default 2 x workers)\n"
		"  --lr X          SGD learning rate (default 0.05)\n"
		"  --seed N        random seed for weights and data (default 1)\n"
		"  --log-every N   print the loss every N steps (default 100, 0 = never)\n"
		"  --slow-every N  make every Nth step slow (steps N, 2N, ...; default 0 = none)\n"
		"  --slow-ms MS    extra time a slow step sleeps in its forward pass (default 50)\n"
		"  --help          show this help\n"
		"\n"
		"Ends with one line: steps, final loss, mean step time and IPS (samples/s).\n"
		"Run it under proftop: proftop run -- minitrain --reader-ms 10 --workers 0\n");
}

static int bad_option(const char *msg, const char *arg)
{
	fprintf(stderr, "minitrain: %s%s%s\nTry 'minitrain --help'.\n", msg, arg ? ": " : "",
		arg ? arg : "");
	return 2;
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	if (!s || !*s)
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !(v >= min && v <= max))
		return -1;
	*out = v;
	return 0;
}

/* Returns 0, 1 (--help shown) or 2 (bad command line, message printed). */
static int parse_args(int argc, char **argv, struct options *o)
{
	enum {
		O_STEPS = 256,
		O_BATCH,
		O_INPUT,
		O_HIDDEN,
		O_CLASSES,
		O_READER,
		O_WORKERS,
		O_QUEUE,
		O_LR,
		O_SEED,
		O_LOG,
		O_SLOW_EVERY,
		O_SLOW_MS
	};
	static const struct option longopts[] = {
	    {"steps", required_argument, NULL, O_STEPS},
	    {"batch", required_argument, NULL, O_BATCH},
	    {"input", required_argument, NULL, O_INPUT},
	    {"hidden", required_argument, NULL, O_HIDDEN},
	    {"classes", required_argument, NULL, O_CLASSES},
	    {"reader-ms", required_argument, NULL, O_READER},
	    {"workers", required_argument, NULL, O_WORKERS},
	    {"queue", required_argument, NULL, O_QUEUE},
	    {"lr", required_argument, NULL, O_LR},
	    {"seed", required_argument, NULL, O_SEED},
	    {"log-every", required_argument, NULL, O_LOG},
	    {"slow-every", required_argument, NULL, O_SLOW_EVERY},
	    {"slow-ms", required_argument, NULL, O_SLOW_MS},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	*o = (struct options){.batch = 64,
			      .input = 64,
			      .hidden = 256,
			      .classes = 10,
			      .lr = 0.05,
			      .seed = 1,
			      .log_every = 100,
			      .slow_ms = 50};
	uint64_t queue = 0, v;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		const char *a = optarg;
		switch (c) {
		case O_STEPS:
			if (parse_u64(a, 0, UINT64_MAX, &o->steps))
				return bad_option("--steps needs a number >= 0", a);
			break;
		case O_BATCH:
			if (parse_u64(a, 1, 65536, &v))
				return bad_option("--batch needs a number from 1 to 65536", a);
			o->batch = (uint32_t)v;
			break;
		case O_INPUT:
			if (parse_u64(a, 1, 65536, &v))
				return bad_option("--input needs a number from 1 to 65536", a);
			o->input = (uint32_t)v;
			break;
		case O_HIDDEN:
			if (parse_u64(a, 1, 65536, &v))
				return bad_option("--hidden needs a number from 1 to 65536", a);
			o->hidden = (uint32_t)v;
			break;
		case O_CLASSES:
			if (parse_u64(a, 2, 65536, &v))
				return bad_option("--classes needs a number from 2 to 65536", a);
			o->classes = (uint32_t)v;
			break;
		case O_READER:
			if (parse_double(a, 0, 3600e3, &o->reader_ms))
				return bad_option("--reader-ms needs a number of milliseconds >= 0",
						  a);
			break;
		case O_WORKERS:
			if (parse_u64(a, 0, MAX_WORKERS, &v))
				return bad_option("--workers needs a number from 0 to 64", a);
			o->workers = (uint32_t)v;
			break;
		case O_QUEUE:
			if (parse_u64(a, 1, 4096, &queue))
				return bad_option("--queue needs a number from 1 to 4096", a);
			break;
		case O_LR:
			if (parse_double(a, 0, 1e6, &o->lr))
				return bad_option("--lr needs a number >= 0", a);
			break;
		case O_SEED:
			if (parse_u64(a, 0, UINT64_MAX, &o->seed))
				return bad_option("--seed needs a number >= 0", a);
			break;
		case O_LOG:
			if (parse_u64(a, 0, UINT64_MAX, &o->log_every))
				return bad_option("--log-every needs a number >= 0", a);
			break;
		case O_SLOW_EVERY:
			if (parse_u64(a, 0, UINT64_MAX, &o->slow_every))
				return bad_option("--slow-every needs a number >= 0", a);
			break;
		case O_SLOW_MS:
			if (parse_double(a, 0, 3600e3, &o->slow_ms))
				return bad_option("--slow-ms needs a number of milliseconds >= 0", a);
			break;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
			return bad_option("option needs a value", argv[optind - 1]);
		default:
			return bad_option("unknown option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return bad_option("unexpected argument", argv[optind]);
	if ((uint64_t)o->batch * o->input > (1u << 26) ||
	    (uint64_t)o->batch * o->hidden > (1u << 26) ||
	    (uint64_t)o->hidden * o->hidden > (1u << 28))
		return bad_option("model or batch too large", NULL);
	o->queue = queue ? (uint32_t)queue : (o->workers ? 2 * o->workers : 1);
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc == 1 ? 0 : rc;

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);

	int probe = proftop_enabled ? proftop_enabled() : 0;
	fprintf(stderr, "minitrain: proftop %s\n",
		probe		  ? "recording"
		: proftop_enabled ? "loaded, not recording"
				  : "not loaded");
	printf("minitrain: batch=%u input=%u hidden=%u classes=%u reader_ms=%g workers=%u "
	       "steps=%llu seed=%llu\n",
	       o.batch, o.input, o.hidden, o.classes, o.reader_ms, o.workers,
	       (unsigned long long)o.steps, (unsigned long long)o.seed);

	struct task task;
	struct model md;
	struct loader ld;
	task_init(&task, &o);
	model_init(&md, &o);
	loader_init(&ld, &task, &o);

	uint64_t step = 0;
	double loss = NAN;
	if (proftop_step_begin)
		proftop_step_begin();
	uint64_t t0 = now_ns();
	while (!g_stop && (o.steps == 0 || step < o.steps)) {
		phase_push(PROFTOP_PHASE_DATALOADER);
		struct batch *b = loader_next(&ld);
		phase_pop();

		phase_push(PROFTOP_PHASE_FORWARD);
		loss = model_forward(&md, b, o.batch);
		if (o.slow_every && (step + 1) % o.slow_every == 0)
			sleep_ms(o.slow_ms); /* a stall (GC, a checkpoint) for the anomaly recorder */
		phase_pop();

		phase_push(PROFTOP_PHASE_BACKWARD);
		model_backward(&md, b, o.batch);
		phase_pop();
		loader_release(&ld); /* the batch's input was needed until linear1_grad */

		phase_push(PROFTOP_PHASE_OPTIMIZATION);
		model_sgd(&md, (float)o.lr);
		phase_pop();

		PROFTOP_STEP(o.batch);
		step++;
		if (o.log_every && step % o.log_every == 0)
			printf("step %llu loss %.6f\n", (unsigned long long)step, loss);
	}
	double total_s = (double)(now_ns() - t0) * 1e-9;

	loader_destroy(&ld);
	double step_ms = step ? total_s * 1e3 / (double)step : 0;
	double ips = total_s > 0 ? (double)step * o.batch / total_s : 0;
	printf("minitrain: done steps=%llu loss=%.9g step_ms=%.3f ips=%.1f%s\n",
	       (unsigned long long)step, loss, step_ms, ips, g_stop ? " (stopped)" : "");
	model_free(&md);
	free(task.centroids);
	return 0;
}
