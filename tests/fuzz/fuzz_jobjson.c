/*
 * fuzz_jobjson.c - libFuzzer target: a framework config written as JSON (DeepSpeed's
 * ds_config, accelerate's, or any framework's keys as a JSON object) -> fg_jobfile_parse's
 * JSON reader (engine/job/jobfile.c json_tree: the keys' lines found in the text) -> the
 * format its keys tell -> every format's rows applied to a spec -> fg_jobspec_finish.
 *
 * fuzz_jobfile.c with FUZZ_JOBFILE_JSON: the same checks, on texts that are JSON objects
 * only, seeded with JSON (the .json files of tests/fixtures/configs and tests/fuzz/corpus/jobjson:
 * the YAML fixtures as JSON) and a dictionary of quoted keys, so the JSON reader gets the
 * whole run rather than the share of a mixed corpus.
 */
#define FUZZ_JOBFILE_JSON 1
#include "fuzz_jobfile.c"
