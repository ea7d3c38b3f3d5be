/*
 * decide_int.h - the decision module's private helpers, shared by its files (decide.c, the
 * decisions and their words; decide_gen.c, a trainer's generation engine; decide_remedy.c,
 * the remedies' words): how a line for people is written.  Nothing outside policies/decide*.c includes it.
 */
#ifndef FG_DECIDE_INT_H
#define FG_DECIDE_INT_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "assess.h"
#include "decide.h"

static inline const char *gb(uint64_t bytes, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.1f GB", (double)bytes / 1e9);
    return buf;
}

static inline void line(struct fg_decision *d, int i, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void line(struct fg_decision *d, int i, const char *fmt, ...)
{
    va_list ap;
    int w = snprintf(d->lines[i], FG_DECIDE_LINE, "fitgate: ");
    va_start(ap, fmt);
    vsnprintf(d->lines[i] + w, FG_DECIDE_LINE - (size_t)w, fmt, ap);
    va_end(ap);
}

static inline void card_label(const struct fg_request *q, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", q->gpu ? q->gpu->label : q->type[0] ? q->type : "GPU");
}

/* "fitgate: " + the formatted text into buf (FG_DECIDE_LINE bytes): a line outside
 * d->lines (the remedies'). */
void fg__decide_say(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "full fine-tune", "LoRA", "QLoRA", "serving" */
const char *fg__decide_mode_words(enum fg_mode m);

/* "PP=4 over layers 0-13|14-27|..., 14.2 GB per GPU" */
void fg__decide_layout_desc(const struct fg_layout *l, char *buf, size_t cap);

/* A trainer's vLLM engine beside its training, in words (decide_gen.c); it may turn a
 * decision that fits into one that does not, as the engine then cannot start. */
void fg__decide_generation(const struct fg_assessment *a, const struct fg_request *q,
                           const struct fg_rules *r, struct fg_decision *d);

#endif
