/*
 * report_charts.h - what the HTML report's two files share (internal to cli/):
 * report_html.c computes the numbers (struct report) and writes the summary,
 * the card table, the layouts and the structure; report_charts.c draws the
 * breakdown bars and the memory-against-micro-batch chart from them.
 * The report owns everything in it; the charts only read it.
 */
#ifndef FG_CLI_REPORT_CHARTS_H
#define FG_CLI_REPORT_CHARTS_H

#include <stdint.h>
#include <stdio.h>

#include "plan/fit.h"
#include "hw/gpu.h"
#include "memory/memory.h"
#include "plan/plan.h"

struct fg_cli_opts;
struct fg_report_gate;

#define REPORT_MAX_CARDS 8

struct card {
    const struct fg_gpu *gpu;
    uint64_t usable;
    const struct fg_estimate *est;  /* full, lora, serve: the report's, one set for every card */
    struct fg_fit fit[3];
    uint32_t split_gpus[3]; /* smallest layout when one card is not enough; 0 = none */
};

struct report {
    const struct fg_model *m;
    const struct fg_cli_opts *o;
    const struct fg_report_gate *gate; /* or NULL */
    struct fg_plan_opts po;
    struct fg_estimate est;          /* the user's job */
    const struct fg_gpu *card;       /* --gpu, or H200 */
    uint64_t card_usable;
    struct fg_fit card_fit;
    struct fg_plan plan;             /* layouts on card */
    struct card cards[REPORT_MAX_CARDS];
    size_t ncards;
    /* the lines of the batch chart: the table's modes, plus the user's mode when it is
     * none of them (qlora) */
    struct fg_estimate mode_est[4];
    const char *mode_name[4];
    size_t nmodes;
};

/* <section id="breakdown">: the estimate's stacked bars, their legend and its lines. */
void fg__report_write_breakdown(FILE *f, const struct report *r);

/* <section id="batch">: memory needed against micro-batch, one line per mode, each card. */
void fg__report_write_batch_chart(FILE *f, const struct report *r);

#endif
