#!/bin/bash
# tools/slurm-build.sh - a minimal Slurm of one major.minor release under its own prefix, for
# building the plugin against that release's headers and running the real-cluster suite
# against its daemons (tests/integration/slurm.sh with SLURM_PREFIX=..., docs/slurm-compat.md).
#
#   tools/slurm-build.sh 26.05        build (or find cached) /opt/fitgate-slurm/26.05
#   tools/slurm-build.sh --print 26.05    print the prefix when a good build is there, else fail
#
# Cached by version: when PREFIX/.fitgate-build names a build of this major.minor by this
# script's recipe, its slurmd -V says so and sbatch, slurmctld and slurm/spank.h are there, nothing is done (a reused CI machine
# skips the 4-5 minutes).  Prints the prefix on stdout as its last line; progress on stderr.
#
# Where the source comes from, first that works:
#   1. SLURM_SRC=PATH: an unpacked tree, or a .tar.gz/.tar.bz2 of one.
#   2. Debian's source package: `apt-get source slurm-wlm=VERSION` from the suite that carries
#      the release (22.05 bookworm, 24.11 trixie, 26.05 sid), read through a private deb-src
#      list under $WORK/apt, never the system's sources: nothing from trixie or sid can be
#      installed on bookworm by it.  With the .dsc: dpkg-source -x (Debian's patches applied);
#      when the mirror has only the .orig tarball (checksum checked by apt), that is used.
#   3. the source an earlier build of this release kept under ROOT/src (below), so a reused
#      machine rebuilds (a new recipe) without reaching the source again;
#   4. SLURM_GIT=DIR: a clone of SchedMD/slurm; its newest slurm-MM-mm-* release tag.
# The source of a build is kept as ROOT/src/slurm-VERSION.tar.gz, with a .from note.
# Configure: only what the loopback cluster needs (slurmctld, slurmd, slurmstepd, sbatch,
# srun, salloc, squeue, scontrol, sinfo, scancel, auth/munge and the default plugins); no
# slurmrestd, X11, PMIx, NVML, HDF5, MySQL, PAM or Lua, no manual pages, no testsuite.
#
# Environment: SLURM_BUILD_ROOT (prefix parent, default /opt/fitgate-slurm), WORK (scratch,
# default /var/tmp/fitgate-slurm-build), JOBS (make -j, default 2).  Needs gcc, make,
# libmunge-dev, dpkg-dev (for dpkg-source) and python3; root only to write under /opt.
set -u
ME=slurm-build
die() { echo "$ME: $*" >&2; exit 1; }
say() { echo "$ME: $*" >&2; }

PRINT=""
if [ "${1:-}" = --print ]; then PRINT=1; shift; fi
REL=${1:-}
[[ "$REL" =~ ^[0-9]{2}\.(05|11)$ ]] || die "usage: $0 [--print] MAJOR.MINOR (22.05, 24.11, 26.05)"
ROOT=${SLURM_BUILD_ROOT:-/opt/fitgate-slurm}
PREFIX=$ROOT/$REL
WORK=${WORK:-/var/tmp/fitgate-slurm-build}
JOBS=${JOBS:-2}
STAMP=$PREFIX/.fitgate-build
# Bump when the configure options or the build steps below change: a cached prefix of another
# recipe is rebuilt.
RECIPE=2

# The suite each release is taken from (Debian's source packages), one row per release.
suite_of() {
    case $1 in
    22.05) echo bookworm ;;
    24.11) echo trixie ;;
    26.05) echo sid ;;
    *) echo "" ;;
    esac
}

good_build() {
    [ -s "$STAMP" ] && grep -q "^release=$REL$" "$STAMP" && grep -q "^recipe=$RECIPE$" "$STAMP" &&
        [ -x "$PREFIX/bin/sbatch" ] && [ -x "$PREFIX/sbin/slurmctld" ] &&
        [ -x "$PREFIX/sbin/slurmd" ] && [ -f "$PREFIX/include/slurm/spank.h" ] &&
        "$PREFIX/sbin/slurmd" -V 2>/dev/null | grep -q "^slurm ${REL}\."
}

if good_build; then
    say "cached: $(grep '^version=' "$STAMP" | cut -d= -f2) in $PREFIX"
    echo "$PREFIX"
    exit 0
fi
[ -n "$PRINT" ] && exit 1

mkdir -p "$WORK" || die "cannot create $WORK"
SRC=""
FROM=""

# --- 1. a tree or tarball given
if [ -n "${SLURM_SRC:-}" ]; then
    if [ -d "$SLURM_SRC" ]; then
        SRC=$SLURM_SRC
    else
        rm -rf "$WORK/given.$REL" && mkdir -p "$WORK/given.$REL" &&
            tar -xf "$SLURM_SRC" -C "$WORK/given.$REL" || die "cannot unpack $SLURM_SRC"
        SRC=$(find "$WORK/given.$REL" -mindepth 1 -maxdepth 1 -type d | head -1)
    fi
    FROM="SLURM_SRC=$SLURM_SRC"
fi

# --- 2. Debian's source package, through a private deb-src list
apt_src() {
    local suite=$1 apt=$WORK/apt dir=$WORK/deb.$REL ver
    mkdir -p "$apt/lists/partial" "$dir" || return 1
    printf 'deb-src http://deb.debian.org/debian %s main\n' bookworm trixie sid \
        > "$apt/sources.list"
    local A=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/none"
        -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o APT::Sandbox::User=root)
    timeout 300 apt-get "${A[@]}" -qq update >&2 || { say "apt-get update failed"; return 1; }
    # the version the suite carries, e.g. 26.05.5-1 (apt-cache lists every suite's)
    ver=$(apt-cache "${A[@]}" showsrc slurm-wlm 2>/dev/null |
        awk '/^Version: /{print $2}' | grep "^${REL}\." | sort -V | tail -1)
    [ -n "$ver" ] || { say "no slurm-wlm $REL in $suite's Sources"; return 1; }
    say "apt-get source slurm-wlm=$ver ($suite)"
    rm -rf "${dir:?}"/*
    (cd "$dir" && timeout 600 apt-get "${A[@]}" -qq source --download-only "slurm-wlm=$ver") \
        >&2 2> "$dir.err"
    sed 's/^/    /' "$dir.err" >&2
    local dsc orig
    dsc=$(ls "$dir"/slurm-wlm_*.dsc 2>/dev/null | head -1)
    orig=$(ls "$dir"/slurm-wlm_*.orig.tar.* 2>/dev/null | head -1)
    if [ -n "$dsc" ] && [ -n "$orig" ] && ls "$dir"/slurm-wlm_*.debian.tar.* >/dev/null 2>&1 &&
        (cd "$dir" && dpkg-source -x "$(basename "$dsc")" src >&2); then
        SRC=$dir/src
        FROM="Debian source package slurm-wlm $ver ($suite), Debian patches applied"
    elif [ -n "$orig" ]; then
        mkdir -p "$dir/orig" && tar -xf "$orig" -C "$dir/orig" || return 1
        SRC=$(find "$dir/orig" -mindepth 1 -maxdepth 1 -type d | head -1)
        FROM="Debian's $(basename "$orig") ($suite, slurm-wlm $ver; the mirror had no .dsc"
        FROM="$FROM or debian.tar: upstream source without Debian's patches)"
    else
        say "slurm-wlm $ver: nothing fetched from the mirror"
        return 1
    fi
}
if [ -z "$SRC" ] && [ -n "$(suite_of "$REL")" ]; then
    apt_src "$(suite_of "$REL")" || SRC=""
fi

# --- 3. the source an earlier build kept
KEEP_DIR=$ROOT/src
if [ -z "$SRC" ]; then
    kept=$(find "$KEEP_DIR" -maxdepth 1 -name "slurm-$REL.*.tar.gz" 2>/dev/null | sort -V | tail -1)
    if [ -n "$kept" ]; then
        rm -rf "$WORK/kept.$REL" && mkdir -p "$WORK/kept.$REL" &&
            tar -xzf "$kept" -C "$WORK/kept.$REL" || die "cannot unpack $kept"
        SRC=$(find "$WORK/kept.$REL" -mindepth 1 -maxdepth 1 -type d | head -1)
        FROM="$(cat "$kept.from" 2>/dev/null), kept as $kept"
        say "the source is the one kept in $kept"
    fi
fi

# --- 4. a SchedMD/slurm clone: the newest release tag of REL
if [ -z "$SRC" ] && [ -n "${SLURM_GIT:-}" ]; then
    tag=$(git --git-dir="$SLURM_GIT" tag -l "slurm-${REL%.*}-${REL#*.}-*" |
        grep -E -- '-[0-9]+-[0-9]+$' | sort -V | tail -1)
    [ -n "$tag" ] || die "no slurm-${REL/./-}-* release tag in $SLURM_GIT"
    rm -rf "$WORK/git.$REL" && mkdir -p "$WORK/git.$REL" &&
        git --git-dir="$SLURM_GIT" archive --format=tar "$tag" | tar -x -C "$WORK/git.$REL" ||
        die "git archive $tag failed"
    SRC=$WORK/git.$REL
    FROM="SchedMD/slurm tag $tag ($(git --git-dir="$SLURM_GIT" rev-parse "$tag^{commit}"))"
fi
[ -n "$SRC" ] && [ -x "$SRC/configure" ] ||
    die "no source for Slurm $REL (set SLURM_SRC=TARBALL or SLURM_GIT=CLONE)"

VERSION=$(awk '/Major:/{M=$2} /Minor:/{m=$2} /Micro:/{u=$2} END {print M "." m "." u}' \
    "$SRC/META")
[ "${VERSION%.*}" = "$REL" ] || die "$SRC is Slurm $VERSION, not $REL"
say "Slurm $VERSION from $FROM"
if [ ! -s "$KEEP_DIR/slurm-$VERSION.tar.gz" ]; then
    mkdir -p "$KEEP_DIR" &&
        tar -C "$SRC" --transform "s,^\.,slurm-$VERSION," \
            -czf "$KEEP_DIR/slurm-$VERSION.tar.gz.tmp" . &&
        mv "$KEEP_DIR/slurm-$VERSION.tar.gz.tmp" "$KEEP_DIR/slurm-$VERSION.tar.gz" &&
        echo "$FROM" > "$KEEP_DIR/slurm-$VERSION.tar.gz.from" ||
        say "could not keep the source in $KEEP_DIR (the build goes on)"
fi

# --- configure + make install (out of tree, so the source stays as unpacked)
B=$WORK/build.$REL
rm -rf "$B" "$PREFIX" && mkdir -p "$B" || die "cannot create $B"
CONF=(--prefix="$PREFIX" --sysconfdir="$PREFIX/etc" --with-munge=/usr --disable-static
    --disable-debug --disable-x11 --disable-pam --disable-slurmrestd --disable-sview
    --without-pmix --without-ucx --without-nvml --without-rsmi --without-hdf5 --without-lua
    --without-mysql_config --without-freeipmi --without-rrdtool --without-jwt
    --without-http-parser --without-yaml --without-json --without-bpf --without-dbus
    --without-hwloc --without-readline --without-ofed)
# --disable-static: libtool compiles every file once, not twice.  libslurmfull stays shared:
# the plugin finds slurm_option_get / slurm_option_set in the running sbatch through it.  An
# option a release does not know is only warned about by configure.
t0=$(date +%s)
(cd "$B" && "$SRC/configure" "${CONF[@]}" CFLAGS="-O1 -g0" > configure.log 2>&1) ||
    { tail -30 "$B/configure.log" >&2; die "configure failed ($B/configure.log)"; }
t1=$(date +%s)
# src/ only: the programs, libraries and plugins; the top level's own install-*-am adds the
# headers without recursing.  No testsuite, no doc (Debian's 22.05 tree lacks
# doc/man/man1/slurm.1, and nothing here reads the manual pages).
(cd "$B" && nice -n 10 make -j"$JOBS" -s -C src > make.log 2>&1) ||
    { grep -E 'error|Error' "$B/make.log" | tail -20 >&2; die "make failed ($B/make.log)"; }
(cd "$B" && make -s -C src install && make -s install-exec-am install-data-am) \
    > "$B/install.log" 2>&1 ||
    { tail -20 "$B/install.log" >&2; die "make install failed ($B/install.log)"; }
t2=$(date +%s)
{
    echo "release=$REL"
    echo "recipe=$RECIPE"
    echo "version=$VERSION"
    echo "from=$FROM"
    echo "configure=${CONF[*]}"
    echo "configure_s=$((t1 - t0))"
    echo "build_s=$((t2 - t1))"
    echo "host_cpus=$(nproc)"
    echo "date=$(date -u +%Y-%m-%dT%H:%MZ)"
} > "$STAMP"
good_build || die "built, but $PREFIX does not hold a working Slurm $REL"
say "built Slurm $VERSION in $PREFIX: configure $((t1 - t0)) s, make + install $((t2 - t1)) s"
echo "$PREFIX"
