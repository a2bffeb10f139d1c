/*
 * main.c - proftop's command-line entry: dispatches to the commands
 * (src/cli/, one file each, declared in src/cli/commands.h) and prints the
 * top-level usage and version. The helpers the commands share are the CLI
 * layer (cli.h: src/cli_*.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "model/util.h"

static void cli_usage_main(FILE *f)
{
	fputs("Usage: proftop COMMAND [OPTIONS] [ARGS]\n"
	      "\n"
	      "A terminal profiler for deep-learning training: Paddle-style summary tables\n"
	      "(Model, Overview, Operator, Kernel, Memory, Distributed, Perf) for Chrome\n"
	      "trace files from proftop, PyTorch/Kineto, Paddle, MindSpore and msprof.\n"
	      "\n"
	      "Commands:\n"
	      "  (none) [-p PIDS|--all]   attach to every live session (or those of PIDS)\n"
	      "  run [OPTS] -- CMD...      start CMD under the probe and watch it\n"
	      "  record -o OUT -- CMD...   record CMD (or -p PIDS, --all) to a Chrome trace\n"
	      "  capture -p PID [--steps N] run torch's profiler in a PyTorch job under proftop\n"
	      "                            for its next N steps (default 5): every aten op,\n"
	      "                            nested in the live view, saved as a Chrome trace\n"
	      "  ls                        list this user's sessions\n"
	      "  backends                  list the data sources and whether each works here\n"
	      "  serve --listen A:P -- CMD export live figures to Prometheus (/metrics)\n"
	      "  cluster --prometheus URL  the ranks of a job on many nodes, from Prometheus\n"
	      "  view FILE|DIR             open a trace in the full-screen UI, or watch a\n"
	      "                            folder a profiler writes traces into\n"
	      "  report FILE [--json]      print the summary tables of a trace\n"
	      "  export IN -o OUT.json     write a trace as Chrome Trace Event Format JSON\n"
	      "  merge A B.. -o OUT.json   join per-rank traces into one, a lane per rank\n"
	      "  diff BEFORE AFTER         compare two runs: what got faster or slower\n"
	      "  help COMMAND              show a command's options\n"
	      "\n"
	      "Options:\n"
	      "  -h, --help                show this help\n"
	      "  -V, --version             print the version\n"
	      "\n"
	      "Traces may be plain or gzip-compressed JSON. Run 'proftop help COMMAND' for\n"
	      "the options of each command; 'man proftop' for more.\n"
	      "\n"
	      "Memory: --max-mem SIZE (default 1G; run, record, view, report, export) bounds\n"
	      "what grows with the data: the kept events (3/4 of SIZE, about 40 bytes each)\n"
	      "and the summaries built from them. Past it the oldest events go first and\n"
	      "every face says how many and how far back the data reaches. proftop's whole\n"
	      "resident memory stays below SIZE + 64 MiB (the fixed part: file reader\n"
	      "buffers, the session's shared segment, program and curses).\n",
	      f);
}

static int cmd_help(int argc, char **argv);

/* One table drives both dispatch and `proftop help COMMAND`. */
static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	void (*usage)(FILE *out);
} commands[] = {
	{"report", cli_report, cli_usage_report},
	{"export", cli_export, cli_usage_export},
	{"merge", cli_merge, cli_usage_merge},
	{"diff", cli_diff, cli_usage_diff},
	{"run", cli_run, cli_usage_run},
	{"view", cli_view, cli_usage_view},
	{"record", cli_record, cli_usage_record},
	{"ls", cli_ls, cli_usage_ls},
	{"attach", NULL, cli_usage_attach}, /* `proftop [-p PID]`: help only */
	{"backends", cli_backends, cli_usage_backends},
	{"serve", cli_serve, cli_usage_serve},
	{"cluster", cli_cluster, cli_usage_cluster},
	{"capture", cli_capture, cli_usage_capture},
	{"help", cmd_help, cli_usage_main},
};

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static int cmd_help(int argc, char **argv)
{
	if (argc < 2) {
		cli_usage_main(stdout);
		return CLI_OK;
	}
	const struct command *cmd = find_command(argv[1]);
	if (!cmd) {
		char esc[128];
		pt_escape_term(esc, sizeof esc, argv[1], strlen(argv[1]), 60, 0);
		return cli_usage_error("no help for unknown command '%s'", esc);
	}
	cmd->usage(stdout);
	return CLI_OK;
}

/* What the command wrote to stdout reached it, else its exit code says so
 * (a full disk, /dev/full, a closed pipe: never a silent exit 0). */
static int out_closed(int rc)
{
	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		int e = errno ? errno : EIO;
		if (e != EPIPE && rc == CLI_OK) /* a failed command has said why */
			fprintf(stderr, "proftop: writing the output: %s\n", strerror(e));
		return rc == CLI_OK ? CLI_FAIL : rc;
	}
	return rc;
}

static int run_main(int argc, char **argv)
{
	pt_mem_tune();
	const char *cmd = argc >= 2 ? argv[1] : "";
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		cli_usage_main(stdout);
		return CLI_OK;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		printf("proftop %s\n", PROFTOP_VERSION);
		return CLI_OK;
	}
	/* exited sessions are removed by any start, not only by ls (which does
	 * it itself and says how many): they would fill /dev/shm otherwise */
	if (strcmp(cmd, "ls") && strcmp(cmd, "help"))
		cli_reap_sessions(0);
	if (argc < 2)
		return cli_attach(argc, argv);
	const struct command *c = find_command(cmd);
	if (c && c->run)
		return c->run(argc - 1, argv + 1);
	/* any other option is attach's (-p PIDS, --all, -d, -o, --baseline,
	 * --anomaly-dir, the screen's): it says itself when one is unknown */
	if (cmd[0] == '-' && cmd[1])
		return cli_attach(argc, argv);
	char esc[128];
	pt_escape_term(esc, sizeof esc, cmd, strlen(cmd), 60, 0);
	if (cmd[0] == '-')
		return cli_usage_error("unknown option '%s'", esc);
	return cli_usage_error("unknown command '%s'", esc);
}

int main(int argc, char **argv)
{
	return out_closed(run_main(argc, argv));
}
