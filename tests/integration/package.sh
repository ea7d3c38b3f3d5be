#!/usr/bin/env bash
# package.sh - the packages build from the tree, install, work, upgrade and go away cleanly.
#
#   1. Debian: dpkg-buildpackage -us -uc -b on a copy of the tree (fitgate and
#      slurm-spank-fitgate-MM.mm, named for and depending on the Slurm series of the headers
#      it was built with), contents and conffiles checked; with SLURM_PREFIX set to a release
#      tools/slurm-build.sh built (/opt/fitgate-slurm/MM.mm) also against its headers: name and
#      dependencies checked, not installed (bookworm has no 26.05 to satisfy them);
#   2. install both with apt (their dependencies from the archive); from the installed
#      paths: fitgate plan / check / --html on a fixture, the man pages, the bash
#      completion, and the plugin loaded by Debian's own sbatch through
#      /etc/slurm/plugstack.conf -> plugstack.conf.d/fitgate.conf (sbatch --help lists
#      --ft-model; no daemon needed);
#   3. upgrade twice over an admin's edit of /etc/slurm/fitgate.conf: kept silently when
#      the shipped file did not change, kept with fitgate.conf.dpkg-dist beside it when it
#      did;
#   4. remove: binaries and plugin gone, sbatch still works (the plugstack snippet left as
#      a conffile includes nothing any more); purge: nothing of ours left;
#   5. RPM: rpmspec -P and rpmbuild -bb (--nodeps: Debian has no RPM database of the
#      build dependencies) of contrib/fitgate.spec, file lists checked.
# Needs root (dpkg) and Debian's apt; skips with a message otherwise.  Cleans up after
# itself: packages purged, temporary directories removed, an admin's own fitgate files
# under /etc/slurm put back.
set -euo pipefail
# shellcheck source=tests/integration/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
SRC=$PWD


if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null || ! command -v dpkg >/dev/null; then
    log "skipped: needs root on a Debian system (dpkg, apt-get)"
    exit 0
fi

VERSION=$(sed -n '1s/^fitgate (\([^)]*\)).*/\1/p' debian/changelog)
SPEC_VERSION=$(sed -n 's/^Version:[[:space:]]*//p' contrib/fitgate.spec)
[ -n "$VERSION" ] || die "no version in debian/changelog"
[ "$VERSION" = "$SPEC_VERSION" ] ||
    die "debian/changelog says $VERSION, contrib/fitgate.spec says $SPEC_VERSION"
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
PLUGINDIR=/usr/lib/$MA/slurm-wlm
# the main packages are built against libslurm-dev's headers, whatever the environment says
OTHER_PREFIX=${SLURM_PREFIX:-}
unset SLURM_PREFIX
export DEBIAN_FRONTEND=noninteractive

# one run at a time on a machine (dpkg, /etc/slurm): wait for another to finish
exec 9> /tmp/fitgate-package.lock
flock -w 3600 9 || die "another package.sh holds /tmp/fitgate-package.lock"

W=$(mktemp -d /tmp/fitgate-package.XXXXXX)
SAVED="$W/saved-etc"
installed_by_us=0
cleanup() {
    rc=$?
    if [ "$installed_by_us" = 1 ]; then
        timeout 300 dpkg --purge $PKGS >/dev/null 2>&1 || true
    fi
    # an admin's own files (not from our packages) go back where they were
    if [ -d "$SAVED" ]; then
        (cd "$SAVED" && find . -type f) | while read -r f; do
            mkdir -p "/etc/slurm/$(dirname "$f")"
            mv -f "$SAVED/$f" "/etc/slurm/$f"
        done
    fi
    rm -rf "$W"
    exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# (no `producer | grep -q` under pipefail: grep exiting first makes the producer die of SIGPIPE)
installed() { grep -q "install ok installed" <<< "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)"; }

# ---- what the test needs ------------------------------------------------------
need=""
for p in dpkg-dev debhelper fakeroot pkgconf libcjson-dev libcurl4-openssl-dev libhwloc-dev \
         libslurm-dev slurm-client rpm; do
    installed "$p" || need="$need $p"
done
if [ -n "$need" ]; then
    log "installing$need"
    timeout 600 apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null || true
    timeout 1200 apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $need >/dev/null ||
        die "cannot install$need"
fi

# The Slurm series of libslurm-dev's headers: the plugin package's name and dependency.
series_of() { # series_of PREFIX: "22.05" from PREFIX/include/slurm/slurm_version.h
    local v
    v=$(awk '/define SLURM_VERSION_NUMBER/ {print $3}' "$1/include/slurm/slurm_version.h")
    [ -n "$v" ] && printf '%d.%02d' $((v >> 16)) $(((v >> 8) & 255))
}
SERIES=$(series_of /usr) || die "no /usr/include/slurm/slurm_version.h (libslurm-dev)"
PLUGIN_PKG=slurm-spank-fitgate-$SERIES
PKGS="fitgate $PLUGIN_PKG"
# depends_on SERIES: what the plugin package must depend on (22.05 -> << 22.06~)
depends_on() {
    local ma=${1%.*} mi=${1#*.}
    printf 'slurm-wlm-basic-plugins (>= %s), slurm-wlm-basic-plugins (<< %s.%02d~)' \
        "$1" "$ma" $((10#$mi + 1))
}

# leftovers of an interrupted run (and the plugin package of before it was named per series)
for p in $PKGS slurm-spank-fitgate; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    if [ -n "$st" ] && ! grep -q "not-installed" <<< "$st"; then
        log "purging a leftover $p"
        timeout 300 dpkg --purge "$p" >/dev/null || die "cannot purge the leftover $p"
    fi
done
# fitgate files under /etc/slurm that no package owns: an admin's; set aside, put back
for f in fitgate.conf gpus.conf plugstack.conf.d/fitgate.conf; do
    if [ -e "/etc/slurm/$f" ] && ! dpkg -S "/etc/slurm/$f" >/dev/null 2>&1; then
        mkdir -p "$SAVED/$(dirname "$f")"
        mv "/etc/slurm/$f" "$SAVED/$f"
        log "set aside /etc/slurm/$f for the test"
    fi
done

# ---- 1. build the .debs on a copy of the tree ---------------------------------------
T="$W/fitgate-$VERSION"
mkdir -p "$T"
if git rev-parse --git-dir >/dev/null 2>&1; then
    git ls-files -co --exclude-standard -z |
        tar --null --ignore-failed-read -cf - -T - 2>/dev/null | tar -C "$T" -xf -
else
    tar --exclude=./build --exclude=./.git -cf - . | tar -C "$T" -xf -
fi
log "dpkg-buildpackage -us -uc -b (fitgate $VERSION)"
start=$(date +%s)
if ! (cd "$T" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
        timeout 1800 dpkg-buildpackage -us -uc -b) > "$W/deb-build.log" 2>&1; then
    tail -40 "$W/deb-build.log" >&2
    die "dpkg-buildpackage failed (log above)"
fi
log "built in $(( $(date +%s) - start )) s"
DEB_CLI="$W/fitgate_${VERSION}_$(dpkg --print-architecture).deb"
DEB_PLUGIN="$W/${PLUGIN_PKG}_${VERSION}_$(dpkg --print-architecture).deb"
[ -f "$DEB_CLI" ] && [ -f "$DEB_PLUGIN" ] || die "packages missing: $(ls "$W")"
for d in "$DEB_CLI" "$DEB_PLUGIN"; do
    log "$(basename "$d"): $(stat -c %s "$d") bytes"
done

contents() { dpkg-deb -c "$1" | awk '{print $6}' | sed 's|^\./|/|'; }
for f in /usr/bin/fitgate /usr/share/man/man1/fitgate.1.gz \
         /usr/share/bash-completion/completions/fitgate /etc/slurm/gpus.conf; do
    grep -qx "$f" <<< "$(contents "$DEB_CLI")" || die "fitgate .deb lacks $f"
done
for f in "$PLUGINDIR/spank_fitgate.so" "$PLUGINDIR/fitgate_engine.so" \
         /usr/share/man/man5/fitgate.conf.5.gz /usr/share/man/man8/spank_fitgate.8.gz \
         /etc/slurm/fitgate.conf /etc/slurm/plugstack.conf.d/fitgate.conf \
         /usr/share/fitgate/plugstack.conf; do
    grep -qx "$f" <<< "$(contents "$DEB_PLUGIN")" || die "$PLUGIN_PKG .deb lacks $f"
done
mkdir -p "$W/ctl"
dpkg-deb -e "$DEB_PLUGIN" "$W/ctl"
for f in /etc/slurm/fitgate.conf /etc/slurm/plugstack.conf.d/fitgate.conf; do
    grep -qx "$f" "$W/ctl/conffiles" || die "$f is not a conffile"
done
# named and tied to its series; one series' plugin at a time (they share the .so's path)
# and the plugin inside is built for that series (plugin_version, which Slurm's loader compares;
# tests/integration/slurm/plugin_abi.c compiled against the series' headers)
plugin_fields_ok() { # plugin_fields_ok DEB SERIES [PREFIX of the headers, default /usr]
    local dep x=$W/x.$2 abi
    dep=$(dpkg-deb -f "$1" Depends)
    grep -qF "$(depends_on "$2")" <<< "$dep" ||
        die "$(basename "$1") does not depend on Slurm $2 only: $dep"
    [ "$(dpkg-deb -f "$1" Package)" = "slurm-spank-fitgate-$2" ] ||
        die "$(basename "$1") is named $(dpkg-deb -f "$1" Package)"
    for k in Provides Conflicts Replaces; do
        [ "$(dpkg-deb -f "$1" "$k")" = slurm-spank-fitgate ] ||
            die "$(basename "$1"): $k is '$(dpkg-deb -f "$1" "$k")', not slurm-spank-fitgate"
    done
    mkdir -p "$x" && dpkg-deb -x "$1" "$x" || die "cannot unpack $(basename "$1")"
    cc -std=c11 -isystem "${3:-/usr}/include" -o "$x/plugin_abi" \
        "$SRC/tests/integration/slurm/plugin_abi.c" -ldl || die "cannot build plugin_abi"
    local full=${3:+$3/lib/slurm}
    abi=$("$x/plugin_abi" "$x$PLUGINDIR/spank_fitgate.so" "${full:-$PLUGINDIR}/libslurmfull.so")
    [[ "$abi" == "plugin_version=$2 headers=$2 "* ]] ||
        die "$(basename "$1"): the plugin inside says $abi"
}
plugin_fields_ok "$DEB_PLUGIN" "$SERIES"
log "$PLUGIN_PKG: Depends $(depends_on "$SERIES")"

# another release's headers: the same tree makes that series' package
if [ -n "$OTHER_PREFIX" ]; then
    OTHER=$(series_of "$OTHER_PREFIX") || die "no Slurm headers under SLURM_PREFIX=$OTHER_PREFIX"
    T2="$W/other/fitgate-$VERSION"
    mkdir -p "$T2"
    (cd "$SRC" && git ls-files -co --exclude-standard -z |
        tar --null --ignore-failed-read -cf - -T - 2>/dev/null) | tar -C "$T2" -xf -
    log "dpkg-buildpackage -b against $OTHER_PREFIX (Slurm $OTHER)"
    if ! (cd "$T2" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" SLURM_PREFIX="$OTHER_PREFIX" \
            timeout 1800 dpkg-buildpackage -us -uc -b) > "$W/deb-build-other.log" 2>&1; then
        tail -40 "$W/deb-build-other.log" >&2
        die "dpkg-buildpackage against $OTHER_PREFIX failed (log above)"
    fi
    DEB_OTHER="$W/other/slurm-spank-fitgate-${OTHER}_${VERSION}_$(dpkg --print-architecture).deb"
    [ -f "$DEB_OTHER" ] || die "no $(basename "$DEB_OTHER"): $(ls "$W/other")"
    plugin_fields_ok "$DEB_OTHER" "$OTHER" "$OTHER_PREFIX"
    log "$(basename "$DEB_OTHER"): Depends $(depends_on "$OTHER")"
fi

# ---- 2. install and use from the installed paths ---------------------------------------
log "apt-get install ./fitgate ./$PLUGIN_PKG"
installed_by_us=1
if ! timeout 900 apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$DEB_CLI" "$DEB_PLUGIN" \
        > "$W/apt.log" 2>&1; then
    timeout 600 apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null 2>&1 || true
    timeout 900 apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$DEB_CLI" "$DEB_PLUGIN" \
        > "$W/apt.log" 2>&1 || { tail -20 "$W/apt.log" >&2; die "install failed"; }
fi
for p in $PKGS; do
    installed "$p" || die "$p is not installed"
done
[ "$(command -v fitgate)" = /usr/bin/fitgate ] || die "fitgate on PATH is $(command -v fitgate)"

check_installed() {
    local what=$1
    # a plan on the fixture, from a directory that is not the tree
    mkdir -p "$W/run"
    cp -r "$SRC/tests/fixtures/models/nvidia--NVIDIA-Nemotron-Nano-9B-v2" "$W/run/nemotron"
    (cd "$W/run" && timeout 120 /usr/bin/fitgate plan nemotron --gpu h200 \
        --html "$W/run/report.html") > "$W/run/plan.txt" 2>&1 || {
        cat "$W/run/plan.txt" >&2; die "$what: fitgate plan failed"; }
    grep -q "8,888,227,328" "$W/run/plan.txt" || die "$what: plan lacks the parameter count"
    grep -q "TP=1 PP=2" "$W/run/plan.txt" || die "$what: plan lacks the 2 x H200 PP=2 layout"
    grep -q '<section id="breakdown">' "$W/run/report.html" || die "$what: no HTML report"
    timeout 120 /usr/bin/fitgate check "$W/run/nemotron" --gpu h200 --gpus 2 >/dev/null 2>&1 ||
        die "$what: fitgate check on 2 x H200 did not say fits"
    rc=0
    timeout 120 /usr/bin/fitgate check "$W/run/nemotron" --gpu h200 --gpus 1 >/dev/null 2>&1 ||
        rc=$?
    [ "$rc" = 1 ] || die "$what: fitgate check on 1 x H200 exited $rc, not 1"
    # the engine library stays inside the build (docs/design.md, "libfitgate")
    if dpkg -L $PKGS | grep -E '(\.a|\.pc|\.h)$'; then
        die "$what: a package ships the engine library or its headers"
    fi
    # man pages where man finds them
    for page in 1/fitgate 5/fitgate.conf 8/spank_fitgate; do
        [ -f "/usr/share/man/man${page%%/*}/${page#*/}.${page%%/*}.gz" ] ||
            die "$what: man page ${page#*/}(${page%%/*}) not installed"
        if command -v man >/dev/null; then
            man -w "${page%%/*}" "${page#*/}" >/dev/null 2>&1 ||
                die "$what: man does not find ${page#*/}(${page%%/*})"
        fi
    done
    # completion, as bash-completion loads it
    local got
    got=$(timeout 20 bash --norc --noprofile -c '
        . /usr/share/bash-completion/completions/fitgate
        COMP_WORDS=(fitgate plan m --gpu h2); COMP_CWORD=4; _fitgate
        printf "%s\n" "${COMPREPLY[@]}"' 2>&1) || true
    grep -qx h200 <<< "$got" || die "$what: completion of --gpu h2 gave: $got"
    # the plugin where Debian's Slurm loads plugins, loaded by Debian's sbatch
    [ -f "$PLUGINDIR/spank_fitgate.so" ] && [ -f "$PLUGINDIR/fitgate_engine.so" ] ||
        die "$what: plugin not in $PLUGINDIR"
    grep -q "^include /usr/share/fitgate/plugstack.conf" /etc/slurm/plugstack.conf.d/fitgate.conf ||
        die "$what: plugstack.conf.d/fitgate.conf does not include the plugin's line"
    grep -q "^required $PLUGINDIR/spank_fitgate.so conf=/etc/slurm/fitgate.conf" \
        /usr/share/fitgate/plugstack.conf || die "$what: the plugin's line names other paths"
    sbatch_help > "$W/sbatch-help.txt" 2>&1 || {
        cat "$W/sbatch-help.txt" >&2; die "$what: sbatch --help failed with the plugin"; }
    grep -q -- "--ft-model=ID" "$W/sbatch-help.txt" ||
        die "$what: sbatch did not load the plugin (no --ft-model in sbatch --help)"
}

# sbatch reads slurm.conf and the plugstack before it prints its help: no daemon needed.
SLURMCONF="$W/slurm.conf"
printf 'ClusterName=fitgatepkg\nSlurmctldHost=localhost\nPlugStackConfig=/etc/slurm/plugstack.conf\n' \
    > "$SLURMCONF"
sbatch_help() { SLURM_CONF="$SLURMCONF" timeout 30 sbatch --help; }
grep -q '^include /etc/slurm/plugstack.conf.d/\*.conf' /etc/slurm/plugstack.conf ||
    die "Debian's /etc/slurm/plugstack.conf does not include plugstack.conf.d (changed?)"

check_installed "after install"
log "installed: plan, check, --html, man, completion and the plugin in sbatch work"

# ---- 3. upgrades over an admin's edit ------------------------------------------------------
repack() { # DEB NEW_VERSION OUT [LINE to append to etc/slurm/fitgate.conf]
    local d="$W/repack.$$.$RANDOM"
    dpkg-deb -R "$1" "$d"
    sed -i "s/^Version: .*/Version: $2/" "$d/DEBIAN/control"
    if [ -n "${4-}" ] && [ -f "$d/etc/slurm/fitgate.conf" ]; then
        echo "$4" >> "$d/etc/slurm/fitgate.conf"
    fi
    dpkg-deb --root-owner-group -b "$d" "$3" >/dev/null
    rm -rf "$d"
}
EDIT="Headroom=1.2   # site edit, package.sh"
echo "$EDIT" >> /etc/slurm/fitgate.conf

repack "$DEB_CLI" "$VERSION+1" "$W/up1-cli.deb"
repack "$DEB_PLUGIN" "$VERSION+1" "$W/up1-plugin.deb"
timeout 300 dpkg -i "$W/up1-cli.deb" "$W/up1-plugin.deb" > "$W/up1.log" 2>&1 < /dev/null ||
    { cat "$W/up1.log" >&2; die "upgrade to $VERSION+1 failed"; }
[ "$(dpkg-query -W -f='${Version}' "$PLUGIN_PKG")" = "$VERSION+1" ] ||
    die "upgrade did not take"
grep -qxF "$EDIT" /etc/slurm/fitgate.conf || die "upgrade lost the admin's edit"
[ ! -e /etc/slurm/fitgate.conf.dpkg-dist ] || die "unchanged conffile got a .dpkg-dist"

repack "$DEB_CLI" "$VERSION+2" "$W/up2-cli.deb"
repack "$DEB_PLUGIN" "$VERSION+2" "$W/up2-plugin.deb" "# a new shipped default, package.sh"
timeout 300 dpkg --force-confdef --force-confold -i "$W/up2-cli.deb" "$W/up2-plugin.deb" \
    > "$W/up2.log" 2>&1 < /dev/null || { cat "$W/up2.log" >&2; die "upgrade to $VERSION+2 failed"; }
grep -qxF "$EDIT" /etc/slurm/fitgate.conf || die "second upgrade lost the admin's edit"
grep -q "a new shipped default" /etc/slurm/fitgate.conf.dpkg-dist ||
    die "the changed shipped fitgate.conf is not beside the edit as fitgate.conf.dpkg-dist"
check_installed "after upgrades"
log "upgrades: the admin's fitgate.conf kept (silently, then with .dpkg-dist beside it)"

# ---- 4. remove, then purge ----------------------------------------------------------------
timeout 300 dpkg --remove $PKGS > "$W/remove.log" 2>&1 ||
    { cat "$W/remove.log" >&2; die "remove failed"; }
for f in /usr/bin/fitgate "$PLUGINDIR/spank_fitgate.so" "$PLUGINDIR/fitgate_engine.so" \
         /usr/share/fitgate/plugstack.conf /usr/share/bash-completion/completions/fitgate; do
    [ ! -e "$f" ] || die "$f is still there after remove"
done
[ -e /etc/slurm/plugstack.conf.d/fitgate.conf ] || die "remove dropped a conffile (only purge may)"
sbatch_help > "$W/sbatch-help.txt" 2>&1 || {
    cat "$W/sbatch-help.txt" >&2; die "sbatch is broken after remove (plugstack snippet)"; }
if grep -q -- "--ft-model" "$W/sbatch-help.txt"; then die "plugin still loaded after remove"; fi
timeout 300 dpkg --purge $PKGS > "$W/purge.log" 2>&1 ||
    { cat "$W/purge.log" >&2; die "purge failed"; }
installed_by_us=0
for f in /etc/slurm/fitgate.conf /etc/slurm/fitgate.conf.dpkg-dist /etc/slurm/gpus.conf \
         /etc/slurm/plugstack.conf.d/fitgate.conf /usr/share/fitgate /usr/share/doc/fitgate; do
    [ ! -e "$f" ] || die "$f is still there after purge"
done
[ -d /etc/slurm/plugstack.conf.d ] || die "purge removed Slurm's plugstack.conf.d"
sbatch_help >/dev/null 2>&1 || die "sbatch is broken after purge"
log "remove keeps conffiles and Slurm working; purge leaves nothing"

# ---- 5. RPM -----------------------------------------------------------------------------------
if command -v rpmbuild >/dev/null && command -v rpmspec >/dev/null; then
    R="$W/rpm"
    mkdir -p "$R/SOURCES"
    tar -C "$W" --exclude="fitgate-$VERSION/debian/.debhelper" \
        --exclude="fitgate-$VERSION/debian/tmp" --exclude="fitgate-$VERSION/debian/fitgate" \
        --exclude="fitgate-$VERSION/debian/$PLUGIN_PKG" \
        --exclude="fitgate-$VERSION/build" -czf "$R/SOURCES/fitgate-$VERSION.tar.gz" \
        "fitgate-$VERSION"
    rpmspec -P --define "_topdir $R" contrib/fitgate.spec > "$R/parsed.spec" 2> "$R/rpmspec.err" ||
        { cat "$R/rpmspec.err" >&2; die "rpmspec -P contrib/fitgate.spec failed"; }
    parsed=$(rpmspec -P --define "slurm_series 23.02" contrib/fitgate.spec)
    grep -q '^Requires:.*slurm.* >= 23.02 with .*< 23.02.999' <<< "$parsed" ||
        die "the spec does not tie the plugin to its Slurm release series"
    grep -qx '%package -n slurm-spank-fitgate-23.02' <<< "$parsed" ||
        die "the spec does not name the plugin package for its series"
    log "rpmbuild -bb --nodeps contrib/fitgate.spec"
    # (Debian's libslurm-dev has no slurm.pc: the series is given)
    if ! timeout 1800 rpmbuild -bb --nodeps --without check --define "_topdir $R" \
            --define "slurm_series $SERIES" \
            contrib/fitgate.spec > "$R/build.log" 2>&1; then
        tail -40 "$R/build.log" >&2
        die "rpmbuild failed (log above)"
    fi
    RPM_CLI=$(ls "$R"/RPMS/*/fitgate-"$VERSION"-*.rpm)
    RPM_PLUGIN=$(ls "$R"/RPMS/*/"$PLUGIN_PKG-$VERSION"-*.rpm)
    grep -qx /usr/bin/fitgate <<< "$(rpm -qlp "$RPM_CLI" 2>/dev/null)" || die "fitgate RPM lacks the CLI"
    grep -q '/slurm/spank_fitgate.so$' <<< "$(rpm -qlp "$RPM_PLUGIN" 2>/dev/null)" ||
        die "$PLUGIN_PKG RPM lacks the plugin"
    grep -qx /etc/slurm/fitgate.conf <<< "$(rpm -qp --configfiles "$RPM_PLUGIN" 2>/dev/null)" ||
        die "fitgate.conf is not %config in the RPM"
    log "RPMs: $(basename "$RPM_CLI") $(stat -c %s "$RPM_CLI") bytes," \
        "$(basename "$RPM_PLUGIN") $(stat -c %s "$RPM_PLUGIN") bytes"
else
    log "rpmbuild not available: RPM spec not built"
fi

log "ok"
