/*
 * decide_words.h - the decision module's own helpers, shared by its two files (decide.c:
 * the decision and its lines; decide_remedy.c: the remedies' lines).  Not for other
 * modules.
 */
#ifndef FG_DECIDE_WORDS_H
#define FG_DECIDE_WORDS_H

#include <stddef.h>
#include <stdint.h>

#include "job.h"
#include "plan.h"
#include "request.h"

/* "fitgate: " + the formatted text into buf (FG_DECIDE_LINE bytes). */
void fg__decide_say(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "12.3 GB" */
const char *fg__decide_gb(uint64_t bytes, char *buf, size_t cap);

/* "full fine-tune", "LoRA", "QLoRA", "serving" */
const char *fg__decide_mode_words(enum fg_mode m);

/* "PP=4 over layers 0-13|14-27|..., 14.2 GB per GPU" */
void fg__decide_layout_desc(const struct fg_layout *l, char *buf, size_t cap);

/* The card for people: its label, else the gres type as typed, else "GPU". */
void fg__decide_card_label(const struct fg_request *q, char *buf, size_t cap);

#endif
