/*
 * cli/ls.c - `proftop ls`: this user's live sessions, and the cleanup of
 * stale ones.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "proftop/session.h"
#include "model/util.h"

void cli_usage_ls(FILE *f)
{
	fputs("Usage: proftop ls\n"
	      "\n"
	      "List this user's proftop sessions: PID, state (running or exited), age, rank\n"
	      "(RANK, else LOCAL_RANK, of its environment), events dropped by the probe, and\n"
	      "the command line. Segments of processes that are gone, older than 10 minutes\n"
	      "and read by no one are removed (and counted); every proftop command does the\n"
	      "same quietly, and run, record and serve remove their job's segments once they\n"
	      "have read them.\n"
	      "The directory is $PROFTOP_SESSION_DIR, else /dev/shm/proftop-UID.\n"
	      "\n"
	      "Options:\n"
	      "  -h, --help   show this help\n",
	      f);
}

int cli_ls(int argc, char **argv)
{
	if (argc > 1) {
		if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
			cli_usage_ls(stdout);
			return CLI_OK;
		}
		char esc[128];
		pt_escape_term(esc, sizeof esc, argv[1], strlen(argv[1]), 60, 0);
		return cli_usage_error("ls: unexpected argument '%s'", esc);
	}
	struct pt_session_info *v = NULL;
	size_t n = 0;
	int rc = cli_list_sessions(1, &v, &n);
	if (rc)
		return rc;
	if (!n)
		printf("no proftop sessions\n");
	else
		cli_print_sessions(stdout, v, n);
	free(v);
	return CLI_OK;
}
