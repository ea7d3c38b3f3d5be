#!/bin/bash
# tests/integration/faults.sh - faults around the hub client and the files fitgate reads, each
# answered within the deadline with a clear message, with the observed time printed:
#
#   black hole       a port whose SYNs are never answered (listen backlog full): connect timeout
#   reset            the connection reset (RST) before any reply, and in the middle of a body
#   cut body         the server closes before Content-Length bytes arrived
#   full disk        the cache on a 64 KiB tmpfs filled up (root), else RLIMIT_FSIZE (EFBIG)
#   read-only cache  a read-only bind mount (root), else mode 0500
#   corrupt cache    garbage in a cached config.json: skipped, fetched again, rewritten
#   missing files    the site GPU table (--gpus-conf) and the policy file (conf=) absent
#
# tests/integration/hub.sh (lighttpd) already covers silent, trickling, flooding and garbage
# servers, closed ports, gated / forbidden repos and the cache's ownership rules; nothing of
# that is repeated here.  The fault server is C (below), built with cc into a temporary dir.
# Run from anywhere: `bash tests/integration/faults.sh` (make integration).  FAULTS_NO_MOUNT=1
# takes the paths used where mounting is not allowed (RLIMIT_FSIZE, skipped read-only case).
set -u
# shellcheck source=tests/integration/lib/common.sh
FG_DIE_RC=2 FG_DIE_TAG=
source "$(dirname "$0")/lib/common.sh"
FITGATE=${FITGATE:-$ROOT/build/fitgate}
LIB=${LIB:-$ROOT/build/libfitgate.a}
[ -x "$FITGATE" ] || die "$FITGATE missing: run make first"
[ -f "$LIB" ] || die "$LIB missing: run make first"

WORK=$(mktemp -d /tmp/fitgate-faults.XXXXXX) || die "mktemp failed"
chmod 700 "$WORK"
PIDS=()
MOUNTS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
    chmod -R u+w "$WORK" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the fault server ------------------------------------------------------------------------
cat >"$WORK/fault_server.c" <<'EOF'
/* fault_server MODE PORTFILE [FILE]: one misbehaving HTTP server on 127.0.0.1, alive 120 s.
 *   blackhole  listen(backlog 0) and never accept; the queue is filled at start so every
 *              later SYN is dropped and the client's connect() waits
 *   reset      read the request, then RST (SO_LINGER 0)
 *   resetbody  headers with Content-Length: 100000, 1000 bytes, then RST
 *   cut        headers with Content-Length: 100000, 1000 bytes, then a clean close
 *   ok         200 with FILE as the body and an X-Repo-Commit header */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void read_request(int c)
{
    char buf[8192];
    size_t got = 0;
    struct timeval tv = {2, 0};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    while (got < sizeof buf - 1) {
        ssize_t r = recv(c, buf + got, sizeof buf - 1 - got, 0);
        if (r <= 0)
            return;
        got += (size_t)r;
        buf[got] = '\0';
        if (strstr(buf, "\r\n\r\n"))
            return;
    }
}

static void rst(int c)
{
    struct linger l = {1, 0};
    setsockopt(c, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close(c);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    signal(SIGPIPE, SIG_IGN);
    alarm(120);
    const char *mode = argv[1];
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) ||
        listen(s, strcmp(mode, "blackhole") ? 16 : 0) || getsockname(s, (struct sockaddr *)&a, &al))
        return perror("fault_server"), 2;
    if (!strcmp(mode, "blackhole")) {
        /* fill the accept queue: these connections complete, later SYNs are dropped */
        for (int i = 0; i < 4; i++) {
            int f = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
            connect(f, (struct sockaddr *)&a, sizeof a);
        }
        usleep(200000);
    }
    FILE *pf = fopen(argv[2], "w");
    if (!pf)
        return 2;
    fprintf(pf, "%u\n", (unsigned)ntohs(a.sin_port));
    fclose(pf);
    if (!strcmp(mode, "blackhole"))
        for (;;)
            pause();
    char body[1000];
    memset(body, '{', sizeof body);
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0)
            continue;
        read_request(c);
        if (!strcmp(mode, "reset")) {
            rst(c);
        } else if (!strcmp(mode, "resetbody") || !strcmp(mode, "cut")) {
            const char *h = "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n";
            send(c, h, strlen(h), 0);
            send(c, body, sizeof body, 0);
            usleep(100000);
            if (!strcmp(mode, "cut"))
                close(c);
            else
                rst(c);
        } else if (!strcmp(mode, "ok") && argc > 3) {
            FILE *f = fopen(argv[3], "rb");
            char file[65536];
            size_t n = f ? fread(file, 1, sizeof file, f) : 0;
            if (f)
                fclose(f);
            char h[256];
            int hl = snprintf(h, sizeof h, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n"
                              "X-Repo-Commit: 0123456789abcdef0123456789abcdef01234567\r\n"
                              "Content-Type: application/json\r\nConnection: close\r\n\r\n", n);
            send(c, h, (size_t)hl, 0);
            send(c, file, n, 0);
            close(c);
        } else {
            close(c);
        }
    }
}
EOF
cc -std=c11 -O2 -Wall -Wextra -o "$WORK/fault_server" "$WORK/fault_server.c" || die "cannot build the fault server"

# A driver for the policy file, as the plugin reads it (fg_policy_setup with conf=FILE).
cat >"$WORK/policy_driver.c" <<'EOF'
#include <stdio.h>
#include "policy.h"
int main(int argc, char **argv)
{
    static struct fg_policy p;
    struct fg_err err = {0};
    int rc = fg_policy_setup(&p, argc - 1, argv + 1, "plugstack.conf", &err);
    printf("rc=%d on_error=%s action=%s\n", rc, fg_on_error_name(p.on_error),
           fg_action_name(p.rules.action));
    if (rc)
        fprintf(stderr, "fitgate: %s: %s\n", fg_strerror(rc), err.detail);
    return rc ? 2 : 0;
}
EOF
# shellcheck disable=SC2046
cc -std=c11 -D_GNU_SOURCE -O2 -Iengine -Ipolicies -o "$WORK/policy_driver" "$WORK/policy_driver.c" \
    "$LIB" $(pkg-config --libs libcjson libcurl hwloc 2>/dev/null) -lm || die "cannot build the policy driver"

start() { # MODE [FILE]: sets URL
    rm -f "$WORK/port.$1"
    "$WORK/fault_server" "$1" "$WORK/port.$1" "${2:-}" &
    PIDS+=("$!")
    for _ in $(seq 50); do
        [ -s "$WORK/port.$1" ] && break
        sleep 0.1
    done
    [ -s "$WORK/port.$1" ] || die "fault_server $1 did not start"
    URL=http://127.0.0.1:$(cat "$WORK/port.$1")
}

PASS=0
FAIL=0
SKIP=0
TIMES=()
ok() { echo "ok   $*"; PASS=$((PASS + 1)); }
skip() { echo "skip $*"; SKIP=$((SKIP + 1)); }
bad() {
    echo "FAIL $*"
    FAIL=$((FAIL + 1))
    sed 's/^/     | /' "$WORK/out" "$WORK/err" 2>/dev/null | head -12
}
# fg [VAR=value ...] -- args: clean environment, caches under $WORK; RC, MS, $WORK/out, err.
fg() {
    local envs=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    local t0
    t0=$(date +%s%N)
    env -i PATH="$PATH" HOME="$WORK/home" XDG_CACHE_HOME="$WORK/cache" HF_HOME="$WORK/hf" \
        "${envs[@]}" "$FITGATE" "$@" >"$WORK/out" 2>"$WORK/err"
    RC=$?
    MS=$((($(date +%s%N) - t0) / 1000000))
}
has() { grep -q -- "$1" "$WORK/$2"; }
record() { TIMES+=("$(printf '%-34s rc=%s %6s ms  %s' "$1" "$RC" "$MS" "$(head -c 150 "$WORK/err" | tr '\n' ' ')")"); }
mkdir -p "$WORK/home"
CONFIG=tests/fixtures/hub/repos/acme/tiny/config.json
ENTRY=$WORK/cache/fitgate/models--acme--tiny/main/config.json

# --- the network -------------------------------------------------------------------------------
start blackhole
fg HF_ENDPOINT="$URL" FITGATE_HUB_TIMEOUT_MS=1500 -- plan acme/blackhole
record "black hole (deadline 1500 ms)"
if [ $RC = 2 ] && has "$URL" err && deadline_ok "$MS" 1500 && [ ! -e "$WORK/cache/fitgate/models--acme--blackhole" ]; then
    ok "black hole: gave up after ${MS} ms (deadline 1500 ms), named the URL, cached nothing"
else bad "black hole: ${MS} ms"; fi

fg HF_ENDPOINT="$URL" FITGATE_HUB_TIMEOUT_MS=1500 FITGATE_CACHE_TTL=0 -- plan acme/tiny
record "black hole, nothing cached"
[ $RC = 2 ] && deadline_ok "$MS" 1500 && ok "black hole without a cache entry: error within the deadline (${MS} ms)" ||
    bad "black hole without a cache entry"

# broken MODE RECORD WHAT: the hub (fault_server MODE) breaks its reply to acme/MODE; fitgate
# fails (rc 2) well within its 5 s deadline, names the URL and caches nothing
broken() {
    start "$1"
    fg HF_ENDPOINT="$URL" FITGATE_HUB_TIMEOUT_MS=5000 -- plan "acme/$1"
    record "$2"
    if [ $RC = 2 ] && has "$URL" err && [ "$MS" -lt 5000 ] && [ ! -e "$WORK/cache/fitgate/models--acme--$1" ]; then
        ok "$3: error in ${MS} ms, nothing cached"
    else bad "$3"; fi
}
broken reset "reset before the reply" "connection reset before the reply"
broken resetbody "reset in the middle of the body" "connection reset mid-body"
broken cut "body cut short (clean close)" "body shorter than Content-Length"

# --- the cache -----------------------------------------------------------------------------------
start ok "$ROOT/$CONFIG"
HUB=$URL
fg HF_ENDPOINT="$HUB" -- plan acme/tiny --json
[ $RC = 0 ] && [ -f "$ENTRY" ] && ok "a working hub fills the cache" || bad "hub fills the cache"

for kind in garbage empty truncated; do
    case $kind in
    garbage) printf '\x00\x01garbage\xff' >"$ENTRY" ;;
    empty) : >"$ENTRY" ;;
    truncated) head -c 40 "$CONFIG" >"$ENTRY" ;;
    esac
    fg HF_ENDPOINT="$HUB" -- plan acme/tiny --json
    record "corrupt cache entry ($kind)"
    if [ $RC = 0 ] && has "cache entry is not a JSON object" err && has "config from hub" err &&
        cmp -s "$ENTRY" "$CONFIG"; then
        ok "corrupt cache entry ($kind): named, skipped, fetched again and rewritten (${MS} ms)"
    else bad "corrupt cache entry ($kind)"; fi
done
printf 'garbage' >"$ENTRY"
fg HF_HUB_OFFLINE=1 -- plan acme/tiny
record "corrupt cache entry, offline"
if [ $RC = 2 ] && has "cache entry is not a JSON object" err && has "HF_HUB_OFFLINE" err; then
    ok "corrupt cache entry offline: error names the entry and HF_HUB_OFFLINE (${MS} ms)"
else bad "corrupt cache entry offline"; fi
rm -rf "$WORK/cache"

# Full disk.  As root: a 64 KiB tmpfs filled to the last block (ENOSPC).  Otherwise, or where
# mounting is not allowed: RLIMIT_FSIZE 0 with SIGXFSZ ignored, so every write gets EFBIG.
mkdir -p "$WORK/full"
how=""
if [ "$(id -u)" = 0 ] && [ -z "${FAULTS_NO_MOUNT:-}" ] && mount -t tmpfs -o size=64k,mode=0700 fitgate-full "$WORK/full" 2>/dev/null; then
    MOUNTS+=("$WORK/full")
    mkdir -p "$WORK/full/fitgate/models--acme--tiny/main"
    chmod -R 700 "$WORK/full/fitgate"
    dd if=/dev/zero of="$WORK/full/filler" bs=4k 2>/dev/null
    how="64 KiB tmpfs, full (ENOSPC)"
    fg HF_ENDPOINT="$HUB" XDG_CACHE_HOME="$WORK/full" -- plan acme/tiny --json
else
    how="RLIMIT_FSIZE 0 (EFBIG)"
    t0=$(date +%s%N)
    (trap '' XFSZ; ulimit -f 0; exec env -i PATH="$PATH" HOME="$WORK/home" XDG_CACHE_HOME="$WORK/full" \
        HF_HOME="$WORK/hf" HF_ENDPOINT="$HUB" "$FITGATE" plan acme/tiny --json 2>&1 >/dev/null) | cat >"$WORK/err"
    RC=${PIPESTATUS[0]}
    MS=$((($(date +%s%N) - t0) / 1000000))
    : >"$WORK/out"
fi
record "full disk: $how"
leftover=$(find "$WORK/full" -name '.config.json.*' 2>/dev/null | head -1)
if [ $RC = 0 ] && has "not cached" err && [ -z "$leftover" ]; then
    ok "full disk ($how): answer from the hub, 'not cached' said, no temp file left (${MS} ms)"
else bad "full disk ($how): leftover '${leftover}'"; fi

# Read-only cache.  Root ignores modes, so a read-only bind mount; else mode 0500.
mkdir -p "$WORK/ro/fitgate"
chmod 700 "$WORK/ro/fitgate"
how=""
if [ "$(id -u)" = 0 ]; then
    if [ -z "${FAULTS_NO_MOUNT:-}" ] && mount --bind "$WORK/ro" "$WORK/ro" 2>/dev/null; then
        MOUNTS+=("$WORK/ro")
        mount -o remount,bind,ro "$WORK/ro" 2>/dev/null && how="read-only bind mount (EROFS)"
    fi
else
    chmod 500 "$WORK/ro/fitgate" && how="mode 0500 (EACCES)"
fi
if [ -n "$how" ]; then
    fg HF_ENDPOINT="$HUB" XDG_CACHE_HOME="$WORK/ro" -- plan acme/tiny --json
    record "read-only cache: $how"
    if [ $RC = 0 ] && has "not cached" err && [ -z "$(find "$WORK/ro/fitgate" -mindepth 1 2>/dev/null)" ]; then
        ok "read-only cache ($how): answer from the hub, 'not cached' said, nothing written (${MS} ms)"
    else bad "read-only cache ($how)"; fi
else
    skip "read-only cache: running as root where mounts are not allowed (no way to make a directory read-only for root)"
fi

# --- files the admin names ----------------------------------------------------------------------
fg -- gpus --table --gpus-conf "$WORK/no-such-gpus.conf"
record "missing GPU table file"
if [ $RC = 2 ] && has "no-such-gpus.conf" err && has "No such file" err && deadline_ok "$MS" 0; then
    ok "missing GPU table file: exit 2 naming the file (${MS} ms)"
else bad "missing GPU table file"; fi

mkdir -p "$WORK/gpus-dir.conf"
fg -- gpus --table --gpus-conf "$WORK/gpus-dir.conf"
record "GPU table is a directory"
[ $RC = 2 ] && has "not a regular file" err && ok "GPU table that is a directory: exit 2, 'not a regular file'" ||
    bad "GPU table that is a directory"

t0=$(date +%s%N)
"$WORK/policy_driver" "conf=$WORK/no-such-fitgate.conf" "onerror=reject" >"$WORK/out" 2>"$WORK/err"
RC=$?
MS=$((($(date +%s%N) - t0) / 1000000))
record "missing policy file (conf=)"
if [ $RC = 2 ] && has "no-such-fitgate.conf" err && has "not found" err && has "on_error=reject" out; then
    ok "missing policy file: not found, named, and OnError from the plugstack line still applies (${MS} ms)"
else bad "missing policy file"; fi

printf 'Action=warn\nHeadroom=banana\nOnError=reject\n' >"$WORK/broken.conf"
"$WORK/policy_driver" "conf=$WORK/broken.conf" >"$WORK/out" 2>"$WORK/err"
RC=$?
if [ $RC = 2 ] && has "broken.conf:2" err && has "on_error=reject action=warn" out; then
    ok "broken policy file: file:line named, the good lines (OnError=reject) still applied"
else bad "broken policy file"; fi

echo "faults.sh: observed behaviour and times"
printf '     %s\n' "${TIMES[@]}"
echo "faults.sh: $PASS passed, $FAIL failed, $SKIP skipped"
[ "$FAIL" = 0 ]
