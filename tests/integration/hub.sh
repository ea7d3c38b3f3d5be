#!/bin/bash
# tests/integration/hub.sh - fitgate's model sources against real servers on loopback:
# lighttpd serving a hub layout (configs, indexes, safetensors files read only by HTTP range
# requests, a gated repo, a forbidden one, CDN-style redirects, X-Repo-Commit), plus
# misbehaving servers (silent, trickling, flooding, not HTTP), the huggingface_hub cache
# layout, fitgate's own cache (hits, TTL, offline, refusal of unsafe directories) and
# `fitgate verify`.  Run from anywhere: `bash tests/integration/hub.sh` (make integration).
# Needs lighttpd and a C compiler; installs lighttpd with apt-get when missing.
# Every server it starts is stopped on exit, failure or interrupt.
set -u
# shellcheck source=tests/integration/lib/common.sh
FG_DIE_RC=2 FG_DIE_TAG=
source "$(dirname "$0")/lib/common.sh"
FITGATE=${FITGATE:-$ROOT/build/fitgate}
FIX=$ROOT/tests/fixtures/hub
SHA=0123456789abcdef0123456789abcdef01234567   # the commit our hub claims for every main
TOKEN=hf_fitgate_test_token

[ -x "$FITGATE" ] || die "$FITGATE missing: run make first"

# lighttpd serves the hub; mod_openssl and openssl make the TLS-verification case.
missing=
{ command -v lighttpd >/dev/null 2>&1 || [ -x /usr/sbin/lighttpd ]; } || missing="$missing lighttpd"
[ -e /usr/lib/lighttpd/mod_openssl.so ] || missing="$missing lighttpd-mod-openssl"
command -v openssl >/dev/null 2>&1 || missing="$missing openssl"
if [ -n "$missing" ]; then
    echo "hub.sh: installing$missing"
    SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing \
        >/dev/null || echo "hub.sh: could not install$missing" >&2
fi
{ command -v lighttpd >/dev/null 2>&1 || [ -x /usr/sbin/lighttpd ]; } || die "lighttpd missing"
LIGHTTPD=$(command -v lighttpd || echo /usr/sbin/lighttpd)
# Debian starts the packaged service on install; ours is separate and on its own port.

WORK=$(mktemp -d /tmp/fitgate-hub.XXXXXX) || die "mktemp failed"
chmod 700 "$WORK"
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do
        kill "$p" 2>/dev/null
    done
    for p in "${PIDS[@]}"; do
        wait "$p" 2>/dev/null
    done
    [ -f "$WORK/lighttpd.pid" ] && kill "$(cat "$WORK/lighttpd.pid")" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cc -std=c11 -O2 -Wall -Wextra -o "$WORK/bad_server" "$ROOT/tests/integration/hub/bad_server.c" ||
    die "cannot build bad_server"

PASS=0
FAIL=0
ok() { echo "ok   $*"; PASS=$((PASS + 1)); }
bad() {
    echo "FAIL $*"
    FAIL=$((FAIL + 1))
    sed 's/^/     | /' "$WORK/out" "$WORK/err" | head -20
}

# --- the hub's document root --------------------------------------------------
DOC=$WORK/www
mkdir -p "$DOC/cdn"
for dir in "$FIX"/repos/*/*; do
    repo=${dir#"$FIX"/repos/}
    org=${repo%%/*} name=${repo#*/}
    mkdir -p "$DOC/$repo/resolve/main"
    for f in "$dir"/*; do
        case $f in
        *.safetensors) mkdir -p "$DOC/cdn/$org--$name" && cp "$f" "$DOC/cdn/$org--$name/" ;;
        *) cp "$f" "$DOC/$repo/resolve/main/" ;;
        esac
    done
    ln -s main "$DOC/$repo/resolve/$SHA"
done
# Header-only files get their real length back (sparse): data_offsets must stay inside.
while IFS=$'\t' read -r path size; do
    case $path in '#'*) continue ;; esac
    org=${path%%/*} rest=${path#*/} name=${rest%%/*} file=${rest#*/}
    truncate -s "$size" "$DOC/cdn/$org--$name/$file" || die "truncate $path"
done <"$FIX/manifest.tsv"
# A config far over the 4 MiB cap, announced by Content-Length.
mkdir -p "$DOC/acme/huge/resolve/main"
{ printf '{"model_type": "llama", "pad": "'; head -c $((8 << 20)) /dev/zero | tr '\0' 'x'; printf '"}'; } \
    >"$DOC/acme/huge/resolve/main/config.json"
: >"$WORK/users"

start_lighttpd() {
    local port tries
    for tries in 1 2 3 4 5; do
        port=$("$WORK/bad_server" freeport)
        cat >"$WORK/lighttpd.conf" <<EOF
server.modules = ("mod_access", "mod_auth", "mod_authn_file", "mod_redirect", "mod_setenv")
server.document-root = "$DOC"
server.bind = "127.0.0.1"
server.port = $port
server.pid-file = "$WORK/lighttpd.pid"
server.errorlog = "$WORK/lighttpd.log"
server.follow-symlink = "enable"
mimetype.assign = (".json" => "application/json", "" => "application/octet-stream")
auth.backend = "plain"
auth.backend.plain.userfile = "$WORK/users"
# The hub sends LFS files (safetensors) to a CDN, and renamed repos to their new name.
url.redirect-code = 302
url.redirect = (
    "^/acme/renamed/resolve/(.*)\$" => "/acme/tiny/resolve/\$1",
    "^/([^/]+)/([^/]+)/resolve/[^/]+/(.+\\.safetensors)\$" => "/cdn/\$1--\$2/\$3"
)
\$HTTP["url"] =~ "^/[^/]+/[^/]+/resolve/main/" {
    setenv.add-response-header = ("X-Repo-Commit" => "$SHA")
}
\$HTTP["url"] =~ "^/acme/gated/" {
    \$REQUEST_HEADER["Authorization"] != "Bearer $TOKEN" {
        # lighttpd adds no setenv headers to mod_auth's 401, so the hub's X-Error-Code is
        # covered by tests/test_source.c's canned server instead
        auth.require = ("" => ("method" => "basic", "realm" => "hub", "require" => "valid-user"))
    }
}
\$HTTP["url"] =~ "^/acme/forbidden/" {
    url.access-deny = ("")
}
EOF
        "$LIGHTTPD" -tt -f "$WORK/lighttpd.conf" >"$WORK/lighttpd.check" 2>&1 ||
            { cat "$WORK/lighttpd.check"; die "lighttpd rejects its config"; }
        "$LIGHTTPD" -D -f "$WORK/lighttpd.conf" >>"$WORK/lighttpd.log" 2>&1 &
        LPID=$!
        PIDS+=("$LPID")
        for _ in $(seq 50); do
            if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
                HUB=http://127.0.0.1:$port
                return 0
            fi
            kill -0 "$LPID" 2>/dev/null || break
            sleep 0.1
        done
        kill "$LPID" 2>/dev/null
    done
    cat "$WORK/lighttpd.log"
    die "lighttpd did not start"
}

# Start a misbehaving server; sets BAD to its URL.
start_bad() {
    rm -f "$WORK/port.$1"
    "$WORK/bad_server" "$1" "$WORK/port.$1" 120 &
    PIDS+=("$!")
    for _ in $(seq 50); do
        [ -s "$WORK/port.$1" ] && break
        sleep 0.1
    done
    [ -s "$WORK/port.$1" ] || die "bad_server $1 did not start"
    BAD=http://127.0.0.1:$(cat "$WORK/port.$1")
}

# fg [VAR=value ...] -- fitgate args: a clean environment (HOME, caches under $WORK),
# stdout in $WORK/out, stderr in $WORK/err, exit status in RC, wall time in MS.
fg() {
    local envs=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    local t0 t1
    t0=$(date +%s%N)
    env -i PATH="$PATH" HOME="$WORK/home" XDG_CACHE_HOME="$WORK/cache" HF_HOME="$WORK/hf" \
        HF_ENDPOINT="$HUB" "${envs[@]}" "$FITGATE" "$@" >"$WORK/out" 2>"$WORK/err"
    RC=$?
    t1=$(date +%s%N)
    MS=$(((t1 - t0) / 1000000))
}
has() { grep -q -- "$1" "$WORK/$2"; }
# cJSON prints "key":<TAB>value; match "key": value with any blank run.
jhas() { grep -Eq -- "$(printf '%s' "$1" | sed 's/": /":[[:space:]]*/g')" "$WORK/out"; }
json_num() { sed -n "s/.*\"$1\":[[:space:]]*\\([0-9-][0-9]*\\).*/\\1/p" "$WORK/out" | head -1; }

mkdir -p "$WORK/home"
start_lighttpd
echo "hub.sh: lighttpd on $HUB, files under $WORK"

# --- hits, misses, tokens -----------------------------------------------------
fg -- plan acme/tiny --json
if [ $RC = 0 ] && jhas '"id": "acme/tiny"' && has "config from hub: $HUB/acme/tiny/resolve/main/config.json" err &&
    has "commit 0123456789ab" err; then ok "hit: acme/tiny from the hub (commit from X-Repo-Commit)"
else bad "hit: acme/tiny from the hub"; fi

fg -- plan acme/tiny --json
if [ $RC = 0 ] && has "config from cache hit" err; then ok "second run: cache hit"
else bad "second run: cache hit"; fi

cache_entry=$WORK/cache/fitgate/models--acme--tiny/main/config.json
if [ "$(stat -c %a "$cache_entry")" = 600 ] && [ "$(stat -c %a "$WORK/cache/fitgate")" = 700 ] &&
    [ "$(stat -c %a "$WORK/cache/fitgate/models--acme--tiny/main")" = 700 ] &&
    [ -f "$WORK/cache/fitgate/models--acme--tiny/$SHA/config.json" ] &&
    ! ls -a "$WORK/cache/fitgate/models--acme--tiny/main" | grep -q '^\.config'; then
    ok "cache: 0600 file, 0700 dirs, keyed by main and by commit, no temp files left"
else bad "cache: modes and keys"; ls -laR "$WORK/cache/fitgate" | head -30; fi

fg -- plan nvidia/NVIDIA-Nemotron-Nano-9B-v2 --json
id_total=$(json_num total)
fg_path_total=$("$FITGATE" plan tests/fixtures/models/nvidia--NVIDIA-Nemotron-Nano-9B-v2 --json 2>/dev/null |
    sed -n 's/.*"total":[[:space:]]*\([0-9][0-9]*\).*/\1/p' | head -1)
if [ $RC = 0 ] && jhas '"id": "nvidia/NVIDIA-Nemotron-Nano-9B-v2"' && [ -n "$id_total" ] &&
    [ "$id_total" = "$fg_path_total" ]; then
    ok "plan nvidia/NVIDIA-Nemotron-Nano-9B-v2 through the hub: $id_total parameters, as from the path"
else bad "plan nvidia/NVIDIA-Nemotron-Nano-9B-v2 through the hub ($id_total vs $fg_path_total)"; fi

fg -- plan acme/no-such-model
if [ $RC = 2 ] && has "HTTP 404" err && has "acme/no-such-model@main" err; then ok "miss: 404 named"
else bad "miss: 404"; fi

fg -- plan acme/tiny@v9.9
if [ $RC = 2 ] && has "HTTP 404" err; then ok "miss: unknown revision is a 404"
else bad "miss: unknown revision"; fi

fg -- plan acme/gated
if [ $RC = 2 ] && has "HTTP 401" err && has "HF_TOKEN" err && has "licence" err; then
    ok "gated: 401 says set HF_TOKEN and accept the licence"
else bad "gated: 401"; fi

fg HF_TOKEN=$TOKEN -- plan acme/gated --json
if [ $RC = 0 ] && jhas '"model_type": "qwen3"'; then ok "gated: HF_TOKEN opens it"
else bad "gated: HF_TOKEN"; fi

mkdir -p "$WORK/tok" && printf '%s\n' "$TOKEN" >"$WORK/tok/token"
fg HF_TOKEN_PATH="$WORK/tok/token" XDG_CACHE_HOME="$WORK/cache-tok" -- plan acme/gated --json
if [ $RC = 0 ]; then ok "gated: token file (HF_TOKEN_PATH) opens it"
else bad "gated: HF_TOKEN_PATH"; fi

fg HF_TOKEN=$TOKEN -- plan acme/forbidden
if [ $RC = 2 ] && has "HTTP 403" err && has "accept" err; then ok "forbidden: 403 says accept the licence or use a token with access"
else bad "forbidden: 403"; fi

fg -- plan acme/renamed --json
if [ $RC = 0 ] && jhas '"model_type": "llama"'; then ok "redirect: renamed repo followed (302)"
else bad "redirect: renamed repo"; fi

# --- bad answers -------------------------------------------------------------
fg -- plan acme/malformed
if [ $RC = 2 ] && has "not a JSON object" err && has "captive port" err &&
    [ ! -e "$WORK/cache/fitgate/models--acme--malformed" ]; then ok "malformed: refused, not cached"
else bad "malformed"; fi

fg -- plan acme/huge
if [ $RC = 2 ] && has "larger than 4194304 bytes" err; then ok "huge: 8 MiB config refused by the 4 MiB cap (${MS} ms)"
else bad "huge: Content-Length over the cap"; fi

start_bad flood
fg HF_ENDPOINT="$BAD" -- plan acme/flood
if [ $RC = 2 ] && has "larger than 4194304 bytes" err && deadline_ok "$MS" 1000; then
    ok "flood: a body without length is cut at the cap (${MS} ms)"
else bad "flood: endless body"; fi

start_bad garbage
fg HF_ENDPOINT="$BAD" -- plan acme/garbage
if [ $RC = 2 ] && has "$BAD" err; then ok "garbage: a reply that is not HTTP is an error ($(head -c 160 "$WORK/err"))"
else bad "garbage"; fi

# --- deadlines ---------------------------------------------------------------
start_bad silent
fg HF_ENDPOINT="$BAD" FITGATE_HUB_TIMEOUT_MS=1500 -- plan acme/silent
echo "     silent server: fitgate returned after ${MS} ms (deadline 1500 ms)"
if [ $RC = 2 ] && has "deadline" err && deadline_ok "$MS" 1500; then
    ok "silent server: deadline kept (${MS} ms for 1500 ms)"
else bad "silent server: ${MS} ms"; fi

start_bad trickle
fg HF_ENDPOINT="$BAD" FITGATE_HUB_TIMEOUT_MS=2000 -- plan acme/trickle
echo "     trickling server: fitgate returned after ${MS} ms (deadline 2000 ms)"
if [ $RC = 2 ] && deadline_ok "$MS" 2000 && has "$BAD" err; then ok "trickling server: deadline kept (${MS} ms for 2000 ms)"
else bad "trickling server: ${MS} ms"; fi

closed=$("$WORK/bad_server" freeport)
fg HF_ENDPOINT="http://127.0.0.1:$closed" -- plan acme/closed
if [ $RC = 2 ] && has "cannot connect" err && deadline_ok "$MS" 0; then ok "closed port: fails fast (${MS} ms)"
else bad "closed port"; fi

fg HF_ENDPOINT="http://hub.example.invalid" -- plan acme/not-cached
if [ $RC = 2 ] && has "plain http to a non-loopback host is refused" err; then ok "plain http off loopback refused"
else bad "plain http off loopback"; fi

# An https hub whose certificate nobody trusts: verification must refuse it.
if [ -e /usr/lib/lighttpd/mod_openssl.so ] && command -v openssl >/dev/null 2>&1; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
        -keyout "$WORK/tls.key" -out "$WORK/tls.crt" >/dev/null 2>&1
    cat "$WORK/tls.key" "$WORK/tls.crt" >"$WORK/tls.pem"
    tport=$("$WORK/bad_server" freeport)
    cat >"$WORK/tls.conf" <<EOF
server.modules = ("mod_openssl")
server.document-root = "$DOC"
server.bind = "127.0.0.1"
server.port = $tport
server.errorlog = "$WORK/tls.log"
ssl.engine = "enable"
ssl.pemfile = "$WORK/tls.pem"
EOF
    "$LIGHTTPD" -D -f "$WORK/tls.conf" >>"$WORK/tls.log" 2>&1 &
    PIDS+=("$!")
    for _ in $(seq 50); do
        (exec 3<>"/dev/tcp/127.0.0.1/$tport") 2>/dev/null && break
        sleep 0.1
    done
    fg HF_ENDPOINT="https://127.0.0.1:$tport" -- plan acme/not-cached-tls
    if [ $RC = 2 ] && has "TLS verification failed" err; then ok "https with an untrusted certificate refused (TLS verification on)"
    else bad "https self-signed"; fi
else
    echo "skip https case: lighttpd-mod-openssl or openssl unavailable"
fi

# --- offline and stale -------------------------------------------------------
fg HF_HUB_OFFLINE=1 -- plan acme/tiny --json
if [ $RC = 0 ] && has "config from cache hit" err; then ok "offline: served from the cache"
else bad "offline: cache"; fi

fg HF_HUB_OFFLINE=1 FITGATE_CACHE_TTL=0 -- plan acme/tiny --json
if [ $RC = 0 ] && has "stale cached config" err && has "offline" err; then ok "offline: expired entry used and said to be stale"
else bad "offline: stale"; fi

fg HF_HUB_OFFLINE=1 -- plan acme/never-fetched
if [ $RC = 2 ] && has "HF_HUB_OFFLINE=1" err; then ok "offline: a model never fetched is an error naming HF_HUB_OFFLINE"
else bad "offline: not cached"; fi

fg HF_ENDPOINT="http://127.0.0.1:$closed" FITGATE_CACHE_TTL=0 -- plan acme/tiny --json
if [ $RC = 0 ] && has "stale cached config" err && has "hub unreachable" err; then ok "hub down: stale entry used, said so"
else bad "hub down: stale"; fi

fg FITGATE_CACHE_TTL=0 -- plan acme/tiny --json
if [ $RC = 0 ] && has "config from hub" err; then ok "expired entry refreshed from the hub"
else bad "expired entry refresh"; fi

chmod 777 "$WORK/cache/fitgate"
fg -- plan acme/tiny --json
if [ $RC = 0 ] && has "world-writable" err && has "config from hub" err; then ok "unsafe cache dir (0777) refused, answer from the hub"
else bad "unsafe cache dir"; fi
chmod 700 "$WORK/cache/fitgate"
if [ "$(id -u)" = 0 ]; then
    chown 65534 "$WORK/cache/fitgate"
    fg HF_HUB_OFFLINE=1 -- plan acme/tiny
    if [ $RC = 2 ] && has "owned by uid 65534" err; then ok "cache dir owned by another user refused"
    else bad "cache owned by another user"; fi
    chown 0 "$WORK/cache/fitgate"
fi

# --- the checkpoint in plan and check -----------------------------------------------
# A hub model's safetensors headers are read by HTTP range requests within the lookup's
# deadline, weighed against the graph, and cached as checkpoint.json beside config.json.
# Own caches and no HF cache here, so nothing above answers for them.
CK=$WORK/ck
fg XDG_CACHE_HOME="$CK" HF_HOME="$WORK/no-hf" -- plan google/gemma-2b-it --json
first_ms=$MS
ck_entry=$CK/fitgate/models--google--gemma-2b-it/main/checkpoint.json
reqs=$(sed -n 's/.*read from the hub now (\([0-9]*\) requests.*/\1/p' "$WORK/out" | head -1)
if [ $RC = 0 ] && jhas '"certainty": "checkpoint"' && [ "$(json_num checkpoint)" = 2506172416 ] &&
    has "checkpoint: safetensors headers, read from the hub now" out && [ -f "$ck_entry" ] &&
    [ "$(stat -c %a "$ck_entry")" = 600 ] &&
    [ -f "$CK/fitgate/models--google--gemma-2b-it/$SHA/checkpoint.json" ] &&
    ! ls -a "$CK/fitgate/models--google--gemma-2b-it/main" | grep -q '^\.checkpoint'; then
    ok "plan google/gemma-2b-it: 2 shard headers by HTTP range ($reqs requests, ${first_ms} ms in all), certainty checkpoint, cached 0600 by main and by commit"
else bad "plan gemma: headers from the hub"; fi

fg XDG_CACHE_HOME="$CK" HF_HOME="$WORK/no-hf" HF_HUB_OFFLINE=1 -- plan google/gemma-2b-it --json
if [ $RC = 0 ] && jhas '"certainty": "checkpoint"' && [ "$(json_num checkpoint)" = 2506172416 ] &&
    has "checkpoint: safetensors headers, from fitgate's cache" out; then
    ok "plan gemma again, offline: the same count from the cached inventory (${MS} ms, first ${first_ms} ms)"
else bad "plan gemma offline from the cached inventory"; fi

fg XDG_CACHE_HOME="$CK" HF_HOME="$WORK/no-hf" HF_ENDPOINT="http://127.0.0.1:$closed" -- plan google/gemma-2b-it --json
if [ $RC = 0 ] && [ "$(json_num checkpoint)" = 2506172416 ] && has "from fitgate's cache" out; then
    ok "plan gemma with the hub stopped: config and inventory from the cache, nothing asked (${MS} ms)"
else bad "plan gemma with the hub stopped"; fi

fg XDG_CACHE_HOME="$CK" HF_HOME="$WORK/no-hf" FITGATE_CACHE_TTL=0 HF_ENDPOINT="http://127.0.0.1:$closed" -- plan google/gemma-2b-it --json
if [ $RC = 0 ] && [ "$(json_num checkpoint)" = 2506172416 ] && has "from fitgate's expired cache" out &&
    has "hub unreachable" out; then
    ok "expired inventory, hub down: the expired one stands in, said so"
else bad "expired inventory, hub down"; fi

fg XDG_CACHE_HOME="$CK" HF_HOME="$WORK/no-hf" -- plan acme/llama-buffers --json
if [ $RC = 0 ] && jhas '"certainty": "unsure"' && jhas '"unsure_key": "checkpoint"' &&
    [ "$(json_num checkpoint)" = 162827520 ] && has "17.4% off" out; then
    ok "plan acme/llama-buffers: the hub checkpoint stores 17% more than the graph: unsure, both numbers said"
else bad "plan llama-buffers: unsure"; fi
fg XDG_CACHE_HOME="$CK" HF_HOME="$WORK/no-hf" HF_HUB_OFFLINE=1 -- check acme/llama-buffers --gres=gpu:h100:1
if [ $RC = 0 ] && has "cannot size acme/llama-buffers: its checkpoint stores 162827520 parameters" out &&
    has "OnUnknown=warn" out; then
    ok "check acme/llama-buffers offline: the cached inventory gives the plugin's OnUnknown verdict"
else bad "check llama-buffers"; fi

# A model_type no family reader knows (exaone: remote code): its structure is read from the
# hub's headers within the same deadline, the tensor rows cached beside the config.
EX=LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct
fg XDG_CACHE_HOME="$CK" HF_HOME="$WORK/no-hf" -- plan $EX --json
ex_entry=$CK/fitgate/models--LGAI-EXAONE--EXAONE-3.0-7.8B-Instruct/main/checkpoint.json
if [ $RC = 0 ] && jhas '"reader": "checkpoint tensors"' && jhas '"certainty": "checkpoint"' &&
    [ "$(json_num total)" = 7818448896 ] && jhas '"structure": true' &&
    has "no family reader for model_type exaone" out && has "read from the hub now" out &&
    grep -q '"layout":\[\["lm_head.weight"' "$ex_entry"; then
    ok "plan $EX: no family reader, its structure from the hub's 291 tensor headers (${MS} ms), rows cached"
else bad "plan exaone: structure from the hub's headers"; fi
fg XDG_CACHE_HOME="$CK" HF_HOME="$WORK/no-hf" HF_ENDPOINT="http://127.0.0.1:$closed" -- check $EX --gres=gpu:h200:1
# (a full fine-tune of 7.8B on one H200 does not fit: rc 1, the verdict beside the point)
if [ $RC -le 1 ] && has "read as checkpoint tensors; count checkpoint" out &&
    has "checkpoint: the structure read from its 291 tensors" out && has "from fitgate's cache" out; then
    ok "check $EX with the hub stopped: the cached rows give the same structure (${MS} ms)"
else bad "check exaone from the cached rows"; fi
# The config cached, its inventory not: offline, no headers at hand, the generic reader reads
# it as before and says the checkpoint was not read.
mkdir -p "$WORK/ck-cfg/fitgate/models--LGAI-EXAONE--EXAONE-3.0-7.8B-Instruct/main"
cp "${ex_entry%/*}/config.json" "$WORK/ck-cfg/fitgate/models--LGAI-EXAONE--EXAONE-3.0-7.8B-Instruct/main/"
fg XDG_CACHE_HOME="$WORK/ck-cfg" HF_HOME="$WORK/no-hf" HF_HUB_OFFLINE=1 -- plan $EX --json
if [ $RC = 0 ] && jhas '"generic": true' && jhas '"certainty": "generic"' &&
    has "checkpoint not read" out; then
    ok "$EX offline, its inventory not cached: the generic reader as before, said so"
else bad "exaone offline, inventory not cached"; fi

fg XDG_CACHE_HOME="$CK" HF_HOME="$WORK/no-hf" -- plan nvidia/NVIDIA-Nemotron-Nano-9B-v2 --json
neg=$CK/fitgate/models--nvidia--NVIDIA-Nemotron-Nano-9B-v2/main/checkpoint.json
if [ $RC = 0 ] && jhas '"certainty": "exact"' && has "stores no safetensors, read from the hub now" out &&
    grep -q '"safetensors":false' "$neg"; then
    ok "a repo without safetensors: the graph stands, and the absence is cached"
else bad "repo without safetensors"; fi
fg XDG_CACHE_HOME="$CK" HF_HOME="$WORK/no-hf" HF_ENDPOINT="http://127.0.0.1:$closed" -- plan nvidia/NVIDIA-Nemotron-Nano-9B-v2 --json
if [ $RC = 0 ] && has "stores no safetensors, from fitgate's cache" out; then
    ok "a repo without safetensors, again: the hub is not asked within the ttl"
else bad "repo without safetensors, cached"; fi

# The plugin's path (fg_gate_load_model, here through check --policy): the same inventory,
# in the policy's CacheDir; CheckpointScan=no asks the hub for no header.
printf 'HubEndpoint=%s\nCacheDir=%s\nHubTimeout=3\n' "$HUB" "$WORK/pcache/%U" >"$WORK/ck-policy.conf"
fg -- check acme/llama-buffers --gres=gpu:h100:1 --policy "$WORK/ck-policy.conf" --json
if [ $RC = 0 ] && has "cannot size acme/llama-buffers: its checkpoint stores 162827520 parameters" out &&
    [ -f "$WORK/pcache/$(id -u)/models--acme--llama-buffers/main/checkpoint.json" ]; then
    ok "check --policy (the plugin's loader): headers from the hub, inventory in CacheDir, OnUnknown verdict"
else bad "check --policy with the hub checkpoint"; fi
printf 'HubEndpoint=%s\nCacheDir=%s\nCheckpointScan=no\n' "$HUB" "$WORK/pcache-no/%U" >"$WORK/ck-no.conf"
fg -- check acme/llama-buffers --gres=gpu:h100:1 --policy "$WORK/ck-no.conf" --json
if [ $RC = 0 ] && ! has "cannot size" out && jhas '"certainty": "exact"' && ! has "checkpoint" out &&
    [ -f "$WORK/pcache-no/$(id -u)/models--acme--llama-buffers/main/config.json" ] &&
    [ ! -e "$WORK/pcache-no/$(id -u)/models--acme--llama-buffers/main/checkpoint.json" ]; then
    ok "CheckpointScan=no: no header asked of the hub, the graph's count decides"
else bad "CheckpointScan=no"; fi

# A hub that takes the config's place in the cache but never answers for the checkpoint: the
# lookup's deadline holds, the graph's count stands with a note, nothing is cached.
for mode in silent trickle; do
    mkdir -p "$WORK/ck-$mode/fitgate/models--acme--tiny/main"
    cp "$FIX/repos/acme/tiny/config.json" "$WORK/ck-$mode/fitgate/models--acme--tiny/main/"
    chmod -R go-w "$WORK/ck-$mode"
    start_bad "$mode"
    fg XDG_CACHE_HOME="$WORK/ck-$mode" HF_HOME="$WORK/no-hf" HF_ENDPOINT="$BAD" FITGATE_HUB_TIMEOUT_MS=1500 -- plan acme/tiny --json
    if [ $RC = 0 ] && deadline_ok "$MS" 1500 && jhas '"certainty": "exact"' &&
        has "checkpoint not read, the graph's count stands: the hub did not answer within the lookup's deadline" out &&
        [ ! -e "$WORK/ck-$mode/fitgate/models--acme--tiny/main/checkpoint.json" ]; then
        ok "$mode hub for the checkpoint: plan returned in ${MS} ms (deadline 1500 ms), the graph stands with a note, nothing cached"
    else bad "$mode hub for the checkpoint: ${MS} ms"; fi
done

# The same for a type no reader knows: the tensors' route waits no longer than the deadline,
# and the generic reader answers.
mkdir -p "$WORK/ck-exs/fitgate/models--LGAI-EXAONE--EXAONE-3.0-7.8B-Instruct/main"
cp "$FIX/repos/$EX/config.json" "$WORK/ck-exs/fitgate/models--LGAI-EXAONE--EXAONE-3.0-7.8B-Instruct/main/"
chmod -R go-w "$WORK/ck-exs"
start_bad silent
fg XDG_CACHE_HOME="$WORK/ck-exs" HF_HOME="$WORK/no-hf" HF_ENDPOINT="$BAD" FITGATE_HUB_TIMEOUT_MS=1500 -- plan $EX --json
if [ $RC = 0 ] && deadline_ok "$MS" 1500 && jhas '"generic": true' &&
    has "the hub did not answer within the lookup's deadline" out; then
    ok "silent hub for $EX's headers: plan returned in ${MS} ms (deadline 1500 ms), the generic reader answers"
else bad "silent hub for exaone's headers: ${MS} ms"; fi

# --- site dirs and the huggingface_hub cache ------------------------------------
fg HF_HUB_OFFLINE=1 FITGATE_MODEL_DIRS="$ROOT/tests/fixtures/models" -- plan nvidia/NVIDIA-Nemotron-Nano-9B-v2 --json
if [ $RC = 0 ] && has "config from site dir" err && [ "$(json_num total)" = "$fg_path_total" ]; then
    ok "site dir (org--name layout) serves nvidia/NVIDIA-Nemotron-Nano-9B-v2 offline"
else bad "site dir"; fi

HFC=$WORK/hf/hub/models--google--gemma-2b-it
mkdir -p "$HFC/blobs" "$HFC/refs" "$HFC/snapshots/$SHA"
blob=$(sha256sum "$FIX/repos/google/gemma-2b-it/config.json" | cut -d' ' -f1)
cp "$FIX/repos/google/gemma-2b-it/config.json" "$HFC/blobs/$blob"
ln -s "../../blobs/$blob" "$HFC/snapshots/$SHA/config.json"
printf '%s' "$SHA" >"$HFC/refs/main"
# transformers also caches the index when it loads a sharded model; the shards stay remote
iblob=$(sha256sum "$FIX/repos/google/gemma-2b-it/model.safetensors.index.json" | cut -d' ' -f1)
cp "$FIX/repos/google/gemma-2b-it/model.safetensors.index.json" "$HFC/blobs/$iblob"
ln -s "../../blobs/$iblob" "$HFC/snapshots/$SHA/model.safetensors.index.json"
fg HF_HUB_OFFLINE=1 -- plan google/gemma-2b-it --json
if [ $RC = 0 ] && has "config from hf cache: $HFC/snapshots/$SHA/config.json" err; then
    ok "HF cache: refs/main -> snapshots/<sha>/config.json -> blobs (HF_HOME/hub)"
else bad "HF cache"; fi
fg HF_HUB_OFFLINE=1 HF_HUB_CACHE="$WORK/hf/hub" HF_HOME=/nonexistent -- plan "google/gemma-2b-it@$SHA" --json
if [ $RC = 0 ] && has "config from hf cache" err; then ok "HF cache: HF_HUB_CACHE and a commit revision"
else bad "HF cache by commit"; fi

# --- verify ------------------------------------------------------------------
fg -- verify google/gemma-2b-it --json
if [ $RC = 0 ] && jhas '"headers": true' && [ "$(json_num headers_remote)" = 2 ] &&
    [ "$(json_num total)" = 2506172416 ]; then
    ok "verify google/gemma-2b-it: 2 shard headers by HTTP range behind CDN redirects, agrees (2,506,172,416)"
else bad "verify gemma over the hub"; fi

fg HF_HUB_OFFLINE=1 -- verify google/gemma-2b-it
if [ $RC = 0 ] && has "headers not available" out && has "agree" out; then
    ok "verify offline from the HF cache snapshot: index-only comparison said so"
else bad "verify offline"; fi

fg -- verify instructlab/granite-7b-lab --json
if [ $RC = 0 ] && [ "$(json_num headers_remote)" = 3 ] && jhas '"agree": true'; then
    ok "verify instructlab/granite-7b-lab: 3 shards, untied head, agrees"
else bad "verify granite-7b-lab"; fi

fg -- verify HuggingFaceTB/SmolLM2-135M-Instruct --json
if [ $RC = 0 ] && jhas '"index": false' && jhas '"agree": true'; then
    ok "verify SmolLM2-135M: single model.safetensors, agrees"
else bad "verify SmolLM2-135M"; fi

fg -- verify acme/llama-buffers
if [ $RC = 1 ] && has "lm_head: +28311552" out && has "buffers: +960" out && has "inv_freq" out &&
    has "tied but stored" out; then ok "verify acme/llama-buffers: differs, names the stored tied head and the inv_freq buffers"
else bad "verify llama-buffers"; fi

fg -- verify "$FIX/repos/acme/tiny"
if [ $RC = 0 ] && has "headers read: 1 (0 by HTTP range)" out && has "result:     agree" out; then
    ok "verify a local checkout (real safetensors file)"
else bad "verify local checkout"; fi

fg -- verify acme/renamed
if [ $RC = 0 ] && has "agree" out; then ok "verify through a renamed-repo redirect"
else bad "verify renamed"; fi

fg HF_TOKEN=$TOKEN -- verify acme/gated
if [ $RC = 2 ] && has "neither is at hand" err; then ok "verify: a repo without safetensors is an error that says so"
else bad "verify without safetensors"; fi

mkdir -p "$WORK/mystery"
cp "$FIX/repos/acme/tiny/model.safetensors" "$WORK/mystery/"
printf '{"model_type": "mystery", "torch_dtype": "float32"}\n' >"$WORK/mystery/config.json"
fg -- verify "$WORK/mystery"
if [ $RC = 2 ] && has "graph unavailable" out && has "checkpoint: 6,736 parameters" out; then
    ok "verify without a reader for the family: checkpoint side reported, exit 2"
else bad "verify without a graph"; fi

echo "hub.sh: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
