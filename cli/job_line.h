/* job_line.h - the job lines of fitgate plan and check (job_line.c). */
#ifndef FG_CLI_JOB_LINE_H
#define FG_CLI_JOB_LINE_H

#include "job/job.h"
#include "jobopts.h"

/* The job as it runs (job: the assessed one), the options' notes and their origins, on
 * stdout. */
void fg_cli_print_job(const struct fg_cli_opts *o, const struct fg_job *job);

#endif
