/*
 * jsonscan.h - internal: the size of a JSON text's tree, counted in one pass without
 * allocating, so that a parser that builds the whole tree (cJSON) is never handed more than a
 * bound allows (safetensors.c: a header's tensors, an index's entries).
 */
#ifndef FG_JSONSCAN_H
#define FG_JSONSCAN_H

#include <stddef.h>
#include <stdint.h>

/*
 * Of text (len bytes, not NUL-terminated), the objects ('{' outside strings) into *objects and
 * the name-value separators (':' outside strings) into *pairs.  Exact for valid JSON; for any
 * other text an upper bound of what a parser would build from it, which is what a bound needs.
 */
void fg__json_count(const char *text, size_t len, uint64_t *objects, uint64_t *pairs);

#endif
