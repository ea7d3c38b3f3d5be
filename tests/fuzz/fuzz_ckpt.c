/*
 * fuzz_ckpt.c - libFuzzer target: a cached checkpoint inventory (checkpoint.json, ckpt.h)
 * -> fg_ckpt_from_json_rows (the tensor rows too, st_layout.h); what parses is written back
 * with fg_ckpt_to_json and read again, and the second reading must give the same counts and
 * rows as the first.
 *
 * Seeds: tests/fuzz/corpus/ckpt, entries fg_ckpt_to_json wrote for the header-only
 * checkpoints of tests/fixtures/hub (google/gemma-2b-it, acme/llama-buffers) and for a
 * repository without safetensors, and with its tensor rows for acme/tiny (tiny-rows.json).
 * Checks: the sanitizers, fuzz.h's error contract, the round trip.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source/ckpt.h"
#include "source/st_layout.h"
#include "fuzz.h"

FUZZ_INITIALIZE_LOG_ONLY

static struct fg_ckpt first, second;
static struct fg_st_layout rows1, rows2;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fg_err err = {0};
    char *again = NULL;
    size_t len = 0;
    memset(&first, 0, sizeof first);
    int rc = fg_ckpt_from_json_rows((const char *)data, size, "fuzz/checkpoint.json", &first,
                                    &rows1, &err);
    fuzz_check_rc(rc, &err);
    if (rc)
        goto out;
    fuzz_check_text("commit", first.commit, sizeof first.commit);
    rc = fg_ckpt_to_json(&first, &again, &len, &err);
    fuzz_check_rc(rc, &err);
    if (rc)
        goto out;
    memset(&second, 0, sizeof second);
    rc = fg_ckpt_from_json_rows(again, len, "fuzz/again.json", &second, &rows2, &err);
    if (rc)
        fuzz_fail("an entry fg_ckpt_to_json wrote does not read back", err.detail);
    if (first.safetensors != second.safetensors || first.sum.total != second.sum.total ||
        memcmp(first.sum.by_dtype, second.sum.by_dtype, sizeof first.sum.by_dtype) ||
        memcmp(first.sum.by_group, second.sum.by_group, sizeof first.sum.by_group) ||
        strcmp(first.commit, second.commit) || rows1.n != rows2.n ||
        fg_st_layout_elements(&rows1) != fg_st_layout_elements(&rows2))
        fuzz_fail("the round trip changed the counts", again);
out:
    fg_st_layout_free(&rows1);
    fg_st_layout_free(&rows2);
    free(again);
    return 0;
}
