/*
 * policy.h - the site's admission policy: fitgate.conf and the plugstack
 * arguments, read through one table of keys (name, type, bounds, default,
 * where it may be set).
 *
 * fitgate.conf is Slurm-style: `Key=Value` pairs separated by blanks, `#`
 * starts a comment, keys match case-insensitively, a value may be quoted
 * ("..." keeps blanks).  A line that starts with `PartitionName=NAME`
 * overrides rules for jobs of that partition:
 *
 *     Action=reject
 *     Headroom=1.15
 *     PartitionName=gpu Action=resize MaxGPUs=8 ShrinkOverRequest=yes
 *
 * The plugstack line takes the same keys in lower or any case, plus
 * `conf=FILE` (the policy file), `topology=FILE.xml` (an hwloc topology
 * used instead of the node's: tests, nodes whose GPUs hwloc cannot see) and
 * `engine=FILE` (the plugin's fitgate_engine.so when not beside the plugin):
 *
 *     required /usr/lib/slurm/spank_fitgate.so conf=/etc/slurm/fitgate.conf
 *
 * Precedence: built-in defaults < fitgate.conf < plugstack arguments (the
 * admin's line is the most specific); a partition line overrides only the
 * keys it names.  Without any file: Action=reject, OnError=allow.
 *
 * Errors follow error.h.  An unknown key, a key in a place it may not be
 * set, or a bad value is FG_E_PARSE / FG_E_RANGE with a detail naming
 * FILE:LINE, the key and the accepted values.  Parsing does not stop at the
 * first bad line: the remaining lines are still applied (so that OnError
 * takes effect even in a broken file) and the first error is returned.
 * Callers report it once and let OnError decide whether jobs still pass.
 *
 * Ownership: struct fg_policy is plain data, no allocation; strings inside
 * are copies.  Nothing here reads the environment or prints.
 */
#ifndef FG_POLICY_H
#define FG_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <strings.h>

#include "memory/calib.h"
#include "util/error.h"
#include "util/yesno.h"
#include "memory/memory.h"

enum fg_action { FG_ACTION_OFF, FG_ACTION_WARN, FG_ACTION_REJECT, FG_ACTION_RESIZE };
enum fg_borderline { FG_BORDER_ALLOW, FG_BORDER_WARN, FG_BORDER_REJECT };
enum fg_on_error { FG_ONERR_ALLOW, FG_ONERR_REJECT };
/* What to do with a job whose model count is unsure (enum fg_certainty FG_CERT_UNSURE). */
enum fg_on_unknown { FG_ONUNK_ALLOW, FG_ONUNK_WARN, FG_ONUNK_REJECT };

/* The rules a PartitionName= line may override. */
struct fg_rules {
    enum fg_action action;
    double headroom;           /* estimate x headroom must fit the card */
    double conservative;       /* above this the verdict is borderline */
    enum fg_borderline borderline;
    unsigned modes;            /* bit (1u << enum fg_mode) per allowed mode */
    uint32_t min_gpus, max_gpus;          /* per job: resize stays within */
    uint32_t min_gpus_node, max_gpus_node; /* per node: also the planner's TP limit */
    bool shrink;               /* ShrinkOverRequest: lower a request larger than needed */
    bool allow_override;       /* AllowOverride: --ft-override=REASON lets a rejected job through */
    bool require_tag;          /* RequireTag: a GPU job must carry --ft-model */
    char default_gpu[32];      /* DefaultGPU: the card of a request that names no type ("" none) */
    enum fg_on_unknown on_unknown; /* OnUnknown: a model the generic reader is unsure of */
    /* Calibration= (site-wide): set by fg_policy_rules_for, borrowed from the policy (valid
     * while it lives); NULL when off, the default */
    const struct fg_calib *calib;
};

#define FG_POLICY_MAX_PARTS 64
#define FG_POLICY_PATH_MAX 1024
/* Room for the key table (policy.c KEY_ROWS, 28 rows): its count is checked against this at
 * compile time, and a part's `set` holds one bit a key. */
#define FG_POLICY_KEYS 64

struct fg_policy_part {
    char name[64];
    struct fg_rules rules;     /* only the keys in `set` are meaningful */
    uint64_t set;              /* bit i: key i of the table was given on this line */
    unsigned line;
};

struct fg_policy {
    struct fg_rules rules;                 /* site-wide */
    struct fg_policy_part parts[FG_POLICY_MAX_PARTS];
    size_t n_parts;
    /* model sources: site-wide only */
    char model_dirs[2048];                 /* colon list of absolute directories */
    char cache_dir[FG_POLICY_PATH_MAX];    /* "" none; %u = user name, %U = uid */
    char hub_endpoint[512];                /* "" = offline (HubEndpoint=none) */
    uint32_t hub_timeout_ms;
    bool checkpoint_scan;                  /* read a hub model's safetensors headers by HTTP
                                              range requests (gate.h fg_model_load_id) */
    char gpu_table[FG_POLICY_PATH_MAX];    /* site GPU rows (gpus.conf format); "" none */
    enum fg_on_error on_error;
    char log_file[FG_POLICY_PATH_MAX];     /* audit trail: "" off, "syslog", or a path with
                                              %u / %U (audit.h fg_audit_write) */
    struct fg_calib calib;                 /* Calibration=: read when the key is parsed
                                              (calib.h); n == 0 when off */
    uint32_t gpu_sampler_ms;               /* GpuSampler=: NVML sampling interval on the
                                              node for tagged jobs (nvml.h); 0 off */
    /* plugstack only */
    char conf[FG_POLICY_PATH_MAX];         /* the policy file; "" none */
    char topology[FG_POLICY_PATH_MAX];     /* hwloc XML used instead of the node's */
    char engine[FG_POLICY_PATH_MAX];       /* the plugin's engine part, when not beside it */
    char nvml[FG_POLICY_PATH_MAX];         /* NVML library for GpuSampler= ("" the driver's
                                              libnvidia-ml.so.1; tests: a fake one) */
    /* bookkeeping for messages */
    unsigned key_line[FG_POLICY_KEYS];     /* line that last set key i site-wide (0 = default) */
};

/* One row of the key table, for the lists generated from it (tools/gen_lists.c: the KEYS
 * table of fitgate.conf(5)).  Borrowed, static. */
struct fg_policy_key_info {
    const char *name;          /* "Headroom" */
    const char *def;           /* the default as written in a file; "" none */
    bool bounded, real;        /* a number within min..max; written with a fraction */
    double min, max;
    bool in_file, in_part, in_arg; /* a site line, a PartitionName= line, a plugstack argument */
};

/* Row i of the key table; false past the end. */
bool fg_policy_key_at(size_t i, struct fg_policy_key_info *out);

/* Built-in defaults (the table's default column). */
void fg_policy_init(struct fg_policy *p);


/*
 * Apply plugstack arguments (argv-style, "key=value").  origin names them
 * in messages ("plugstack.conf").  Unknown keys and bad values:
 * FG_E_PARSE / FG_E_RANGE naming the argument; every good argument is
 * still applied.
 */
int fg_policy_args(struct fg_policy *p, int argc, char *const *argv, const char *origin,
                   struct fg_err *err);

/* Parse policy text (origin names it: the file path). */
int fg_policy_parse(struct fg_policy *p, const char *text, size_t len, const char *origin,
                    struct fg_err *err);

/*
 * Read and parse a policy file (at most 1 MiB), atomically: read whole, and read again
 * while it changes under the read or was changed in the last 100 ms (a file rewritten in
 * place, perhaps half-written); one that never settles fails FG_E_IO.  FG_E_NOTFOUND /
 * FG_E_IO name the file.  A file another user owns, or its group or all may write, is
 * refused FG_E_DENIED (fileio.h fg__site_file_check), as a key given twice is FG_E_PARSE.
 */
int fg_policy_load(struct fg_policy *p, const char *path, struct fg_err *err);

struct fg_gpu_table;

/*
 * The site GPU table the policy names (GpuTable=), read as a site file (gpu.h
 * fg_gpu_table_load_site): *out the caller frees with fg_gpu_table_free; NULL and 0 when the
 * policy names none.  Any failure (missing, not a regular file, malformed, insecure) names the
 * key and its line: the callers fail closed on it, as on a policy that does not load.
 */
int fg_policy_gpu_table(const struct fg_policy *p, struct fg_gpu_table **out, struct fg_err *err);
/* The file's text as fg_policy_load reads it (policy_file.c); *text the caller frees. */
int fg__policy_read(const char *path, char **text, size_t *text_len, struct fg_err *err);

/*
 * The usual sequence for a front end: defaults, then the file named by
 * conf= in the arguments (if any), then the arguments again on top.  On
 * error *p still holds everything that parsed, and the first error is
 * returned.
 */
int fg_policy_setup(struct fg_policy *p, int argc, char *const *argv, const char *origin,
                    struct fg_err *err);

/* Rules for a partition (NULL or "" = site-wide); the first name of a comma list is used. */
void fg_policy_rules_for(const struct fg_policy *p, const char *partition, struct fg_rules *out);

/* Whether a partition has its own line. */
bool fg_policy_has_partition(const struct fg_policy *p, const char *partition);

const char *fg_action_name(enum fg_action a);
const char *fg_borderline_name(enum fg_borderline b);
const char *fg_on_error_name(enum fg_on_error e);
const char *fg_on_unknown_name(enum fg_on_unknown u);

/* "full,lora" for a mode mask into buf. */
void fg_modes_str(unsigned modes, char *buf, size_t cap);

#endif
