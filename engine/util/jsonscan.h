/*
 * jsonscan.h - internal: passes over a JSON text before a parser (cJSON) builds its tree: the
 * size of the tree, counted without allocating, so that the parser is never handed more than a
 * bound allows (safetensors.c: a header's tensors, an index's entries); and Python's spelling
 * of an infinite float made a number the parser takes (source/config.c, the config tools).
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

/*
 * transformers writes config.json with Python's json.dumps, which spells an infinite float as
 * the bare word Infinity (Mamba2Config's time_step_limit (0.0, inf) is [0.0, Infinity] in the
 * file save_pretrained writes) and reads it back; cJSON does not.  A copy of text (len bytes)
 * with each Infinity outside a string written as 1e999 and three spaces, a number strtod takes
 * to infinity, so byte offsets stay those of text; NULL when text has none, or out of memory
 * (a parse then fails on the word, as it would have).  The caller frees the copy.
 */
char *fg__json_python_infinity(const char *text, size_t len);

#endif
