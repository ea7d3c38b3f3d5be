# cluster.sh - a single-host Slurm cluster on loopback for the integration tests
# (sourced by tests/integration/slurm*.sh).
#
# munged, slurmctld and slurmd run as root, daemonized with pid files under $SROOT,
# on free ports, with fake GPU device files (char devices: gres.conf requires them).
# No systemd, no cgroups.  cluster_down stops exactly the daemons cluster_up started.
#
# Inputs (set before cluster_up):
#   SROOT        the cluster's directory (created; mode 755 so job users can reach munge)
#   PLUGSTACK    the plugstack.conf text
#   NODE_GRES    e.g. "gpu:t4:8,gpu:h100:8"
#   GRES_LINES   gres.conf lines after AutoDetect=off ("Name=gpu Type=t4 File=...")
#   PORTS        "CTLD_PORT SLURMD_PORT"
#   EXTRA_CONF   optional slurm.conf lines (JobSubmitPlugins=lua ...)
# Exports SLURM_CONF and NODE (this host's short name, the node's name).

NODE=$(hostname -s)

cluster_write_conf() {
    local mem cpus
    mem=$(( $(awk '/MemTotal/{print $2}' /proc/meminfo) / 1024 - 1024 ))
    cpus=$(nproc)
    set -- $PORTS
    cat > "$SROOT/etc/slurm.conf" <<CONF
ClusterName=fitgateci
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SROOT/munge-run/munge.socket
SlurmctldPort=$1
SlurmdPort=$2
StateSaveLocation=$SROOT/spool/ctld
SlurmdSpoolDir=$SROOT/spool/d
SlurmctldPidFile=$SROOT/run/slurmctld.pid
SlurmdPidFile=$SROOT/run/slurmd.pid
SlurmctldLogFile=$SROOT/log/slurmctld.log
SlurmdLogFile=$SROOT/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=debug
PlugStackConfig=$SROOT/etc/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SchedulerType=sched/builtin
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
MinJobAge=300
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem Gres=$NODE_GRES State=UNKNOWN
PartitionName=gpu Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
${EXTRA_CONF:-}
CONF
    { echo "AutoDetect=off"; printf '%s\n' "$GRES_LINES" | sed "s/^/NodeName=$NODE /"; } \
        > "$SROOT/etc/gres.conf"
    cat > "$SROOT/etc/cgroup.conf" <<CONF
CgroupPlugin=autodetect
IgnoreSystemd=yes
IgnoreSystemdOnFailure=yes
ConstrainCores=no
ConstrainDevices=no
ConstrainRAMSpace=no
CONF
    printf '%s\n' "$PLUGSTACK" > "$SROOT/etc/plugstack.conf"
}

# cluster_up: 0 when the node is idle, 1 otherwise (logs are in $SROOT/log).
cluster_up() {
    mkdir -p "$SROOT"/{etc,munge,munge-run,spool/ctld,spool/d,log,run,dev,jobs} || return 1
    chmod 755 "$SROOT" "$SROOT/munge-run" "$SROOT/etc"
    chmod 1777 "$SROOT/jobs"
    chmod 700 "$SROOT/munge"
    local i
    for i in $(seq 0 15); do
        [ -e "$SROOT/dev/nvidia$i" ] || mknod -m 666 "$SROOT/dev/nvidia$i" c 1 3 || return 1
    done
    [ -s "$SROOT/munge/munge.key" ] ||
        dd if=/dev/urandom of="$SROOT/munge/munge.key" bs=1024 count=1 status=none
    chmod 400 "$SROOT/munge/munge.key"
    cluster_write_conf
    export SLURM_CONF="$SROOT/etc/slurm.conf"

    timeout 10 munged --socket="$SROOT/munge-run/munge.socket" \
        --key-file="$SROOT/munge/munge.key" --pid-file="$SROOT/run/munged.pid" \
        --log-file="$SROOT/log/munged.log" --seed-file="$SROOT/munge/munge.seed" --force ||
        return 1
    for i in $(seq 50); do [ -S "$SROOT/munge-run/munge.socket" ] && break; sleep 0.1; done
    timeout 10 slurmctld -f "$SLURM_CONF" -i || return 1
    timeout 10 slurmd -f "$SLURM_CONF" || return 1
    for i in $(seq 100); do
        if timeout 5 sinfo -h -N -o '%t' 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
            return 0
        fi
        sleep 0.2
    done
    return 1
}

# Stop one daemon by its pid file: TERM, wait <= 10 s, then KILL.
cluster_stop() {
    local f=$SROOT/run/$1.pid p i
    [ -s "$f" ] || return 0
    p=$(cat "$f")
    kill -0 "$p" 2>/dev/null || return 0
    kill -TERM "$p" 2>/dev/null
    for i in $(seq 100); do
        kill -0 "$p" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$p" 2>/dev/null
}

cluster_down() {
    [ -n "${SROOT:-}" ] || return 0
    export SLURM_CONF="$SROOT/etc/slurm.conf"
    local i
    if [ -s "$SROOT/run/slurmctld.pid" ] && kill -0 "$(cat "$SROOT/run/slurmctld.pid")" 2>/dev/null
    then
        timeout 10 scancel --partition=gpu 2>/dev/null
        for i in $(seq 50); do
            [ -z "$(timeout 5 squeue -h 2>/dev/null)" ] && break
            sleep 0.2
        done
    fi
    cluster_stop slurmd
    cluster_stop slurmctld
    cluster_stop munged
}
