#!/usr/bin/env python3
"""same_job.py A.json B.json - whether `check --json` of a job read from its config (A) and of
the flags it reads to (B) give one verdict and one estimate: the decision, the memory and the
job, but for what only a file has.  Exit 0 when they do; 1, printing what differs, when not.
config.sh and config_train.sh use it."""
import json
import sys

a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    d.get("job", {}).pop("config", None)
    # a file declares its layout (jobfile_apply.c declared_layout); flags saying the same
    # layout need not
    d.get("job", {}).get("layout", {}).pop("declared", None)
    # the verdict and its numbers are compared, not the remedies: a file declares its layout,
    # so its remedies keep it (and say their edits), where the flags' may not
    dec = d.get("decision", {})
    dec.pop("remedies", None)
    dec["lines"] = dec.get("lines", [])[:1]
diff = [k for k in ("decision", "memory", "job") if a.get(k) != b.get(k)]
if not a.get("memory") or diff:
    print("differs in", diff or ["(no estimate)"])
    sys.exit(1)
