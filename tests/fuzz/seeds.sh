#!/bin/bash
# tests/fuzz/seeds.sh DIR - seed corpora for the fuzz targets, one directory per target under
# DIR, made from the fixtures (so seeds follow the fixtures) plus the hand-written inputs in
# tests/fuzz/corpus/TARGET.  Called by tests/fuzz/run.sh; needs nothing beyond coreutils.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=$1
for t in config gpu safetensors hub policy options; do
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
