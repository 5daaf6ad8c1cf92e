#!/usr/bin/env bash
# A single-node SLURM cluster on this Debian machine, for testing `--profile profiles/slurm`
# (tests/test_slurm.py, the `slurm` stage of .ci/run). Run as root:
#
#   bash scripts/slurm_cluster.sh install   # apt-get the packages (slurmctld, slurmd, munge)
#   bash scripts/slurm_cluster.sh start     # munge key, slurm.conf, munged, slurmctld, slurmd
#   bash scripts/slurm_cluster.sh status    # what runs, sinfo
#   bash scripts/slurm_cluster.sh stop      # cancel jobs, stop the daemons it started, by pid
#
# The cluster is the kind many lab clusters are: partitions `cpu` (default) and `gpu` on the one
# node (no GPU is declared: jobs with gpu=0 only), and NO accounting database (no slurmdbd, so
# `sacct` fails) — the case the profile's `slurm-status-command` must handle.
# State (pid files, logs, spool) goes to $ICDA_SLURM_STATE (default /tmp/icda-slurm). The
# config is written to /etc/slurm/slurm.conf, where sbatch/squeue find it without SLURM_CONF;
# an existing slurm.conf that this script did not write is never touched (start stops instead).
set -euo pipefail

STATE=${ICDA_SLURM_STATE:-/tmp/icda-slurm}
CONF=/etc/slurm/slurm.conf
MARKER="# Written by icda scripts/slurm_cluster.sh"

die() { echo "slurm_cluster.sh: $*" >&2; exit 1; }

need_root() { [ "$(id -u)" = 0 ] || die "run as root (it installs packages and starts daemons)"; }

# pid of a daemon this script started, if it is still alive
alive_pid() {
    local file="$STATE/$1.pid"
    [ -s "$file" ] && kill -0 "$(cat "$file")" 2>/dev/null && cat "$file"
}

install_packages() {
    need_root
    if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null \
        && command -v munged >/dev/null; then
        echo "slurm_cluster.sh: packages already installed ($(slurmd -V))"
        return
    fi
    command -v apt-get >/dev/null || die "no apt-get: install slurmctld, slurmd, slurm-client and munge yourself"
    # --no-install-recommends: slurm-wlm's recommends pull ~30 plugin packages the test never uses.
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        slurmctld slurmd slurm-client munge >/dev/null
    echo "slurm_cluster.sh: installed $(slurmd -V)"
}

write_conf() {
    local host node
    host=$(hostname -s)
    # the node as slurmd sees it (CPUs, sockets, cores, RealMemory): a node declared bigger than it
    # is would be drained, one declared smaller would reject jobs that fit
    node=$(slurmd -C | head -n 1)
    [[ $node == NodeName=* ]] || die "'slurmd -C' printed no node line: $node"
    mkdir -p "$(dirname "$CONF")" "$STATE/ctld" "$STATE/d"
    cat >"$CONF" <<EOF
$MARKER for a single-node test cluster; 'stop' removes it.
ClusterName=icda
SlurmctldHost=$host(127.0.0.1)
# Daemons run as root: a throwaway test cluster, no state directories to hand to a slurm user.
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d
SlurmctldPidFile=$STATE/slurmctld.internal.pid
SlurmdPidFile=$STATE/slurmd.internal.pid
SlurmctldLogFile=$STATE/slurmctld.log
SlurmdLogFile=$STATE/slurmd.log
# No cgroups (containers and CI machines often lack a writable cgroup tree).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
# No accounting database: sacct fails here, as on many lab clusters.
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
# Finished jobs stay visible to squeue this long (SLURM's default, stated because the profile's
# squeue status command depends on it).
MinJobAge=300
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=cpu Nodes=$host Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=$host MaxTime=INFINITE State=UP
EOF
}

# start-stop-daemon runs the daemon in the foreground mode (-D/-F) in the background and records
# its own pid, so that stop kills exactly what start started
start_daemon() {
    local name=$1; shift
    start-stop-daemon --start --background --make-pidfile --pidfile "$STATE/$name.pid" "$@"
}

start() {
    need_root
    command -v slurmctld >/dev/null || die "SLURM is not installed: run '$0 install' first"
    if [ -e "$CONF" ] && ! grep -q "^$MARKER" "$CONF"; then
        die "$CONF exists and was not written by this script: this machine has its own SLURM; not touching it"
    fi
    for d in munged slurmctld slurmd; do
        if pid=$(alive_pid $d); then die "$d already runs (pid $pid, $STATE/$d.pid): run '$0 stop' first"; fi
    done
    # a fresh cluster: no jobs or logs of an earlier one (only what this script puts there)
    mkdir -p "$STATE"
    rm -rf "${STATE:?}/ctld" "${STATE:?}/d"
    rm -f "$STATE"/*.log "$STATE"/*.pid
    write_conf

    # munge: the key the package created (or a new one), and munged unless one already answers
    if [ ! -s /etc/munge/munge.key ]; then
        mungekey --create --keyfile /etc/munge/munge.key
        chown munge:munge /etc/munge/munge.key && chmod 600 /etc/munge/munge.key
    fi
    if munge -n </dev/null >/dev/null 2>&1; then
        echo "slurm_cluster.sh: using the munged already running"
    else
        install -d -o munge -g munge -m 0755 /run/munge
        install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge
        start_daemon munged --chuid munge --exec /usr/sbin/munged -- --foreground
        for _ in $(seq 50); do munge -n </dev/null >/dev/null 2>&1 && break; sleep 0.2; done
        munge -n </dev/null >/dev/null 2>&1 || die "munged did not start (see /var/log/munge/munged.log)"
    fi

    start_daemon slurmctld --exec /usr/sbin/slurmctld -- -D -c -f "$CONF"
    for _ in $(seq 100); do scontrol ping 2>/dev/null | grep -q "is UP" && break; sleep 0.2; done
    scontrol ping | grep -q "is UP" || die "slurmctld did not come up: $(tail -n 5 "$STATE/slurmctld.log")"
    start_daemon slurmd --exec /usr/sbin/slurmd -- -D -f "$CONF"
    local state=""
    for _ in $(seq 100); do
        state=$(sinfo -h -N -o %t 2>/dev/null | head -n 1)
        [[ $state == idle* || $state == mix* || $state == alloc* ]] && break
        sleep 0.2
    done
    [[ $state == idle* || $state == mix* || $state == alloc* ]] \
        || die "node is '$state', not idle: $(tail -n 5 "$STATE/slurmd.log")"
    echo "slurm_cluster.sh: cluster up (state in $STATE)"
    sinfo
}

stop() {
    need_root
    # jobs first: with proctrack/linuxproc a job's processes would outlive slurmd
    if alive_pid slurmctld >/dev/null; then
        scancel --full $(squeue -h -o %i 2>/dev/null) 2>/dev/null || true
        for _ in $(seq 50); do [ -z "$(squeue -h -t running,completing 2>/dev/null)" ] && break; sleep 0.2; done
    fi
    for d in slurmd slurmctld munged; do
        local pid
        if pid=$(alive_pid $d); then
            kill "$pid"
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
            if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
            echo "slurm_cluster.sh: stopped $d (pid $pid)"
        fi
        rm -f "$STATE/$d.pid"
    done
    if [ -e "$CONF" ] && grep -q "^$MARKER" "$CONF"; then rm -f "$CONF"; fi
}

status() {
    local any=1
    for d in munged slurmctld slurmd; do
        if pid=$(alive_pid $d); then echo "$d: running (pid $pid)"; any=0; else echo "$d: not running"; fi
    done
    [ $any = 0 ] && sinfo 2>/dev/null || true
    return $any
}

case "${1:-}" in
    install) install_packages ;;
    start) start ;;
    stop) stop ;;
    status) status ;;
    *) die "usage: $0 install|start|stop|status" ;;
esac
