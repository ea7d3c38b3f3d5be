#!/bin/bash
# tests/fuzz/seeds.sh DIR - seed corpora for the fuzz targets, one directory per target under
# DIR, made from the fixtures (so seeds follow the fixtures) plus the hand-written inputs in
# tests/fuzz/corpus/TARGET.  Called by tests/fuzz/run.sh; needs nothing beyond coreutils.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=$1
for t in config gpu safetensors hub policy options ckpt jobfile ctld jobjson; do
    mkdir -p "$OUT/$t"
    if [ -d "tests/fuzz/corpus/$t" ]; then
        find "tests/fuzz/corpus/$t" -maxdepth 1 -type f -exec cp {} "$OUT/$t/" \;
    fi
done

# config: every fixture config.json (models and hub repos)
for f in tests/fixtures/models/*/config.json tests/fixtures/hub/repos/*/*/config.json; do
    d=${f%/config.json}
    cp "$f" "$OUT/config/$(basename "$(dirname "$d")")--$(basename "$d").json"
done

# jobfile: every framework's own example config (tests/fixtures/configs, PROVENANCE.md)
# (every file, however deep: configs/axolotl/deepspeed_configs/zero3.json ...)
find tests/fixtures/configs -type f ! -name PROVENANCE\* ! -name '*.md' | while IFS= read -r f; do
    r=${f#tests/fixtures/configs/}
    cp "$f" "$OUT/jobfile/${r//\//--}"
done

# jobjson: the JSON fixtures; tests/fuzz/corpus/jobjson holds the YAML fixtures written as JSON
# objects (python3: json.dump(yaml.safe_load(F), indent=2)), so every framework's real keys
# start there
find tests/fixtures/configs -type f -name '*.json' | while IFS= read -r f; do
    r=${f#tests/fixtures/configs/}
    cp "$f" "$OUT/jobjson/${r//\//--}"
done

# ctld: tests/fuzz/corpus/ctld only (NUL-separated vectors as contrib/job_submit.lua writes
# them, naming fixture models and configs by their paths from the repository's root)

# gpu: the shipped table, and each row alone (small seeds mutate faster)
cp conf/gpus.conf "$OUT/gpu/gpus.conf"
n=0
grep -v '^[[:space:]]*\(#\|$\)' conf/gpus.conf | while IFS= read -r line; do
    n=$((n + 1))
    printf '%s\n' "$line" >"$OUT/gpu/row$n"
done

# safetensors: the fixture shards are header-only files (8-byte length + JSON header)
for f in tests/fixtures/hub/repos/*/*/*.safetensors; do
    r=${f#tests/fixtures/hub/repos/}
    head -c 262144 "$f" >"$OUT/safetensors/${r//\//--}"
done

# hub: fuzz_hub.c's format - one mode byte, then the server's responses, separated by
# "\n--NEXT--\n" (the k-th connection gets the k-th response, the last one repeats).
SHA=0123456789abcdef0123456789abcdef01234567
resp() { # status text, extra headers (CRLF-terminated lines), body file
    local len
    len=$(wc -c <"$3")
    printf 'HTTP/1.1 %s\r\nContent-Length: %s\r\n%s\r\n' "$1" "$len" "$2"
    cat "$3"
}
NEXT=$'\n--NEXT--\n'
i=0
for f in tests/fixtures/hub/repos/*/*/config.json; do
    i=$((i + 1))
    { printf '\0'; resp "200 OK" "X-Repo-Commit: $SHA"$'\r\n'"Content-Type: application/json"$'\r\n' "$f"; } \
        >"$OUT/hub/config$i"
    # the same behind a redirect
    { printf '\0'; printf 'HTTP/1.1 302 Found\r\nLocation: /cdn/x/config.json\r\nContent-Length: 0\r\n\r\n'
      printf '%s' "$NEXT"; resp "200 OK" "" "$f"; } >"$OUT/hub/redirect$i"
done
for f in tests/fixtures/hub/repos/*/*/*.safetensors; do
    i=$((i + 1))
    head -c 4096 "$f" >"$OUT/hub.part"
    n=$(wc -c <"$OUT/hub.part")
    total=$(wc -c <"$f")
    { printf '\1'; resp "206 Partial Content" "Content-Range: bytes 0-$((n - 1))/$total"$'\r\n' "$OUT/hub.part"; } \
        >"$OUT/hub/range$i"
done
# scan: the index, then each shard's header by range
for idx in tests/fixtures/hub/repos/*/*/model.safetensors.index.json; do
    i=$((i + 1))
    d=$(dirname "$idx")
    {
        printf '\2'
        resp "200 OK" "" "$idx"
        for f in "$d"/*.safetensors; do
            printf '%s' "$NEXT"
            total=$(wc -c <"$f")
            resp "206 Partial Content" "Content-Range: bytes 0-$((total - 1))/$total"$'\r\n' "$f"
        done
    } >"$OUT/hub/scan$i"
done
for f in tests/fixtures/hub/repos/acme/tiny/model.safetensors; do
    i=$((i + 1))
    total=$(wc -c <"$f")
    { printf '\2'; printf 'HTTP/1.1 404 Not Found\r\nX-Error-Code: EntryNotFound\r\nContent-Length: 0\r\n\r\n'
      printf '%s' "$NEXT"; resp "206 Partial Content" "Content-Range: bytes 0-$((total - 1))/$total"$'\r\n' "$f"; } \
        >"$OUT/hub/scan$i"
done
rm -f "$OUT/hub.part"

# policy: the example file, each of its setting lines alone, and the plugstack arguments
cp conf/fitgate.conf "$OUT/policy/fitgate.conf"
n=0
grep -v '^[[:space:]]*\(#\|$\)' conf/fitgate.conf | while IFS= read -r line; do
    n=$((n + 1))
    printf '%s\n' "$line" >"$OUT/policy/line$n"
done
grep -v '^#' conf/plugstack.conf.d/fitgate.conf | sed 's/^[a-z]* [^ ]* //' >"$OUT/policy/plugstack"

# dictionaries (libFuzzer -dict): the words each format is made of, from the same fixtures
DICTS=$OUT/../dicts
mkdir -p "$DICTS"
cat tests/fixtures/models/*/config.json | grep -o '"[A-Za-z_][A-Za-z0-9_]*"' | sort -u |
    sed 's/\\/\\\\/g; s/"/\\"/g; s/.*/"&"/' >"$DICTS/config.dict"
printf '"%s"\n' true false null 1e400 -1 18446744073709551616 '{' '}' '[' ']' ':' ',' >>"$DICTS/config.dict"
grep -v '^#' conf/gpus.conf | grep -o '[A-Za-z0-9]*=' | sort -u | sed 's/.*/"&"/' >"$DICTS/gpu.dict"
# jobfile: the keys of the framework configs, and YAML's own marks
find tests/fixtures/configs -type f -exec cat {} + | grep -o "[A-Za-z_][A-Za-z0-9_.-]*:" | sort -u |
    sed 's/"/\\"/g; s/.*/"&"/' >"$DICTS/jobfile.dict"
printf '"%s"\n' "&a" "*a" "<<: " "- " "---" '${' "}" "[" "]" "{" true false null auto >>"$DICTS/jobfile.dict"
# jobjson: the same keys quoted, and JSON's marks
find tests/fixtures/configs -type f -exec cat {} + | grep -o "[A-Za-z_][A-Za-z0-9_.-]*:" | tr -d : | sort -u |
    sed 's/.*/"\\"&\\":"/' >"$DICTS/jobjson.dict"
printf '"%s"\n' '{' '}' '[' ']' ',' ':' true false null '\"auto\"' 1e400 -1 >>"$DICTS/jobjson.dict"
# ctld: the options a job sets (the --ft-* table) and Slurm's, a field's end, site inputs
sed -n 's/^FG_JOBOPT([A-Z_0-9]*, *"\([a-z0-9-]*\)".*/"--ft-\1="/p' engine/job/jobopts.def \
    >"$DICTS/ctld.dict"
printf '"%s"\n' --gres=gpu: --gpus= --gpus-per-node= --nodes= --partition= --base-dir= \
    --gpus-conf= --policy= --topology= --calibration= -- '\x00' lora full qlora serve h100 t4 \
    a100_40g tests/fixtures/models/ tests/fixtures/configs/ >>"$DICTS/ctld.dict"
grep -o '^#*[A-Za-z]*=' conf/fitgate.conf | tr -d '#' | sort -u | sed 's/.*/"&"/' >"$DICTS/policy.dict"
printf '"%s"\n' PartitionName= off warn reject resize allow none yes no all full lora qlora serve \
    conf= topology= engine= '%u' '%U' >>"$DICTS/policy.dict"
cp "$DICTS/policy.dict" "$DICTS/options.dict"
cat tests/fuzz/corpus/ckpt/*.json | grep -o '"[A-Za-z_./0-9-]*"' | sort -u |
    sed 's/"/\\"/g; s/.*/"&"/' >"$DICTS/ckpt.dict"
printf '"%s"\n' true false 18446744073709551616 -1 '{' '}' ':' ',' >>"$DICTS/ckpt.dict"
printf '"%s"\n' --mode --seq-len --batch --lora-targets --lora-rank --precision --optimizer --quant \
    --zero --gpu --gpus --nodes --headroom --conservative --json --grad-ckpt all-linear attn qv \
    bf16-mixed bf16 fp16-mixed fp32 adamw adamw-8bit sgd nf4 nf4-dq int8 site hf-cache cache hub \
    'gpu:' 'gres/gpu:' h100 a100_80g '@main' '..' >>"$DICTS/options.dict"
# (libFuzzer dictionaries escape only \\, \" and \xNN: CR LF are \x0D\x0A)
printf '"%s"\n' 'HTTP/1.1 200 OK\x0D\x0A' 'HTTP/1.1 206 Partial Content\x0D\x0A' \
    'HTTP/1.1 302 Found\x0D\x0A' 'HTTP/1.1 401 Unauthorized\x0D\x0A' 'HTTP/1.1 404 Not Found\x0D\x0A' \
    'HTTP/1.1 416 Range Not Satisfiable\x0D\x0A' 'Content-Length: ' 'Content-Range: bytes ' \
    'Location: ' 'X-Repo-Commit: ' 'X-Error-Code: ' 'X-Error-Message: ' \
    'Transfer-Encoding: chunked\x0D\x0A' 'Connection: close\x0D\x0A' '\x0D\x0A' '\x0A--NEXT--\x0A' \
    GatedRepo EntryNotFound 'https://' 'http://127.0.0.1/' '\"weight_map\"' '\"metadata\"' \
    '\"total_size\"' '\"dtype\"' '\"shape\"' '\"data_offsets\"' '\"__metadata__\"' >"$DICTS/hub.dict"
for f in tests/fixtures/hub/repos/*/*/*.safetensors; do head -c 65536 "$f"; done |
    grep -ao '"[A-Za-z0-9_.]*"' | sort -u | head -300 | sed 's/"/\\"/g; s/.*/"&"/' >"$DICTS/safetensors.dict"
