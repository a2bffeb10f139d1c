/*
 * cli/commands.h - the commands, one file each in src/cli/: each prints
 * its usage (help COMMAND, COMMAND --help) and runs with argv[0] the
 * command's name. main.c dispatches to them; a command never calls
 * another (tools/cli_deps.sh checks it), only the shared CLI layer
 * (cli.h) and the core.
 */
#ifndef PT_CLI_COMMANDS_H
#define PT_CLI_COMMANDS_H

#include <stdio.h>

/* `proftop` with no command, or `proftop -p PID`: argv[0] is "proftop". */
void cli_usage_attach(FILE *f);
int cli_attach(int argc, char **argv);
void cli_usage_run(FILE *f);
int cli_run(int argc, char **argv);
void cli_usage_record(FILE *f);
int cli_record(int argc, char **argv);
void cli_usage_ls(FILE *f);
int cli_ls(int argc, char **argv);
/* each data source and whether it can run here */
void cli_usage_backends(FILE *f);
int cli_backends(int argc, char **argv);
/* the Prometheus exporter */
void cli_usage_serve(FILE *f);
int cli_serve(int argc, char **argv);
void cli_usage_view(FILE *f);
int cli_view(int argc, char **argv);
void cli_usage_report(FILE *f);
int cli_report(int argc, char **argv);
void cli_usage_export(FILE *f);
int cli_export(int argc, char **argv);
/* `proftop merge A B ... -o OUT` */
void cli_usage_merge(FILE *f);
int cli_merge(int argc, char **argv);
/* `proftop capture -p PID`: torch.profiler for the next N steps */
void cli_usage_capture(FILE *f);
int cli_capture(int argc, char **argv);
/* `proftop cluster --prometheus URL`: the Ranks view of a job on many nodes */
void cli_usage_cluster(FILE *f);
int cli_cluster(int argc, char **argv);
/* `proftop diff BEFORE AFTER` */
void cli_usage_diff(FILE *f);
int cli_diff(int argc, char **argv);

#endif
