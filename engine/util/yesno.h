/*
 * yesno.h - the one reader of a yes/no word, for every front end: policy keys
 * (CheckpointScan=, RequireTag=, ...), the thin plugin's plugstack
 * requiretag=, job flags (--ft-grad-ckpt=VALUE, the CLI's --grad-ckpt=VALUE)
 * and environment switches (HF_HUB_OFFLINE, whose truthy words are
 * huggingface_hub's constants.py ENV_VARS_TRUE_VALUES: 1, ON, YES, TRUE).
 *
 * Inline, with nothing of fitgate included, so that the thin plugin, which
 * links no engine code, reads the same words.
 */
#ifndef FG_UTIL_YESNO_H
#define FG_UTIL_YESNO_H

#include <strings.h>

/* 1 for yes, true, on or 1; 0 for no, false, off or 0 (any case); -1 for anything else, ""
 * and NULL included. */
static inline int fg_yes_no(const char *v)
{
    static const char *const yes[] = {"yes", "true", "on", "1"};
    static const char *const no[] = {"no", "false", "off", "0"};
    for (int i = 0; v && i < 4; i++) {
        if (!strcasecmp(v, yes[i]))
            return 1;
        if (!strcasecmp(v, no[i]))
            return 0;
    }
    return -1;
}

#endif
