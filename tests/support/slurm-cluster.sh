#!/bin/bash
# A real Slurm cluster of several nodes on this one machine, for tests.
#
#   slurm-cluster.sh start STATE_DIR [NODES]   start it (default 2 nodes: node1, node2)
#   slurm-cluster.sh stop STATE_DIR            stop every daemon it started, remove STATE_DIR
#   slurm-cluster.sh check                     exit 0 if it can run here, else 77 and why
#   slurm-cluster.sh start-for-tests STATE_DIR [NODES]
#                                              stop what a killed test run left in
#                                              STATE_DIR, then start; where the
#                                              cluster cannot run here, write why
#                                              into STATE_DIR/unavailable and exit 0
#                                              (the tests skip, saying why)
#
# What runs (Debian's slurm-wlm 22.05 and munge; nothing of /etc is read or
# written: every command is steered by SLURM_CONF):
#   - munged with a key of its own (STATE_DIR/munge/munge.key) and its socket
#     in a private directory under /tmp (a socket path has at most 107 bytes);
#     Slurm finds it through AuthInfo=socket=...;
#   - slurmctld, and one `slurmd -N nodeK` per node, each in a UTS namespace
#     of its own whose host name is nodeK (`unshare --uts`), so that the tasks
#     of a step see their node's name, as on a real cluster. Every node says
#     CPUs=2 (they share this machine's CPUs: SlurmdParameters=config_overrides);
#   - plugins that need no cgroup: ProctrackType=proctrack/linuxproc,
#     TaskPlugin=task/affinity (--cpu-bind works), select/cons_tres by core;
#   - TopologyPlugin=topology/tree with two leaf switches (s1: the first half
#     of the nodes, s2: the rest) under one root (top), so that tasks get
#     SLURM_TOPOLOGY_ADDR=top.s1.node1 and SLURM_TOPOLOGY_ADDR_PATTERN.
# Ports are chosen free at start (SlurmctldPort and one Port= per node).
#
# After `start`, STATE_DIR/env holds the lines to source (SLURM_CONF=...);
# srun, salloc, sbatch, sinfo and scontrol then talk to this cluster.
# `start` waits until every node is idle (at most 60 s) and fails (exit 1,
# the daemons stopped, their logs printed) otherwise. `stop` is safe to call
# twice, and after a failed start.
set -u

die() { echo "slurm-cluster.sh: $*" >&2; exit 1; }

check() {
    local missing=""
    for p in munged munge slurmctld slurmd srun salloc scontrol sinfo unshare hostname; do
        command -v "$p" >/dev/null 2>&1 || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        echo "missing:$missing (install slurm-wlm and munge: scripts/install-deps.sh)"; return 77
    fi
    if [ "$(id -u)" != 0 ]; then echo "needs root (slurmd runs the tasks as root here)"; return 77; fi
    if ! unshare --uts true 2>/dev/null; then echo "cannot make a UTS namespace (unshare --uts)"; return 77; fi
    local plugins
    plugins=$(dirname "$(find /usr/lib /usr/lib64 -name proctrack_linuxproc.so -print -quit 2>/dev/null)")
    for p in proctrack_linuxproc task_affinity topology_tree select_cons_tres auth_munge cred_munge; do
        [ -e "$plugins/$p.so" ] || { echo "Slurm plugin $p is not installed"; return 77; }
    done
    return 0
}

# A port nobody listens on, from a range unlikely to be taken; $1 more after it free too.
free_port_base() {
    local count=$1 tries=0 base used
    used=$(ss -Htln 2>/dev/null | awk '{n=split($4,a,":"); print a[n]}')
    while [ $tries -lt 200 ]; do
        base=$((20000 + (RANDOM % 2000) * 10))
        local ok=1 i
        for ((i = 0; i < count; i++)); do
            if echo "$used" | grep -qx "$((base + i))"; then ok=0; break; fi
        done
        [ $ok = 1 ] && { echo $base; return 0; }
        tries=$((tries + 1))
    done
    return 1
}

write_config() {
    local state=$1 nodes=$2 socket=$3 base=$4
    local host
    host=$(hostname -s)
    {
        echo "# Written by tests/support/slurm-cluster.sh; removed by its stop."
        echo "ClusterName=stacksage-test"
        echo "SlurmctldHost=$host(127.0.0.1)"
        echo "SlurmctldPort=$base"
        echo "SlurmUser=root"
        echo "SlurmdUser=root"
        echo "AuthType=auth/munge"
        echo "AuthInfo=socket=$socket"
        echo "CredType=cred/munge"
        echo "StateSaveLocation=$state/ctld"
        echo "SlurmdSpoolDir=$state/spool/%n"
        echo "SlurmctldPidFile=$state/run/slurmctld.pid"
        echo "SlurmdPidFile=$state/run/slurmd-%n.pid"
        echo "SlurmctldLogFile=$state/log/slurmctld.log"
        echo "SlurmdLogFile=$state/log/slurmd-%n.log"
        echo "PlugStackConfig=$state/plugstack.conf"
        echo "ProctrackType=proctrack/linuxproc"
        echo "TaskPlugin=task/affinity"
        echo "TopologyPlugin=topology/tree"
        echo "SelectType=select/cons_tres"
        echo "SelectTypeParameters=CR_Core"
        echo "SchedulerType=sched/builtin"
        echo "SwitchType=switch/none"
        echo "MpiDefault=none"
        echo "AccountingStorageType=accounting_storage/none"
        echo "JobAcctGatherType=jobacct_gather/none"
        echo "JobCompType=jobcomp/none"
        echo "SlurmdParameters=config_overrides"
        echo "ReturnToService=2"
        echo "SlurmctldTimeout=30"
        echo "SlurmdTimeout=300"
        echo "InactiveLimit=0"
        echo "KillWait=2"
        echo "MinJobAge=30"
        echo "MessageTimeout=30"
        echo "SlurmctldDebug=info"
        echo "SlurmdDebug=info"
        local i
        for ((i = 1; i <= nodes; i++)); do
            echo "NodeName=node$i NodeHostname=node$i NodeAddr=127.0.0.1 Port=$((base + i))" \
                 "CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1024 State=UNKNOWN"
        done
        echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
    } >"$state/slurm.conf"
    local half=$(((nodes + 1) / 2)) s1="" s2="" i
    for ((i = 1; i <= nodes; i++)); do
        if [ $i -le $half ]; then s1="$s1${s1:+,}node$i"; else s2="$s2${s2:+,}node$i"; fi
    done
    {
        echo "SwitchName=s1 Nodes=$s1"
        [ -n "$s2" ] && echo "SwitchName=s2 Nodes=$s2"
        echo "SwitchName=top Switches=s1${s2:+,s2}"
    } >"$state/topology.conf"
    : >"$state/plugstack.conf"
}

# The pid in pid file $1 when that process is still the daemon the file is
# named after (slurmd-node1.pid: slurmd; a pid reused by another program is
# never signalled).
daemon_pid() {
    local file=$1 pid name
    pid=$(cat "$file" 2>/dev/null) || return 1
    case "$pid" in '' | *[!0-9]*) return 1 ;; esac
    name=$(basename "$file" .pid)
    name=${name%%-*}
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] || return 1
    echo "$pid"
}

stop() {
    local state=$1
    [ -d "$state" ] || return 0
    local f pid
    # The nodes' UTS namespaces, to find what steps left behind (below).
    local namespaces=""
    for f in "$state"/run/slurmd-*.pid; do
        pid=$(daemon_pid "$f") && namespaces="$namespaces $(readlink "/proc/$pid/ns/uts" 2>/dev/null)"
    done
    # slurmd first (they end the steps they run), then slurmctld, then munged.
    # Their pids are taken before: a daemon removes its pid file as it stops.
    local pids="" names=""
    for f in "$state"/run/slurmd-*.pid "$state"/run/slurmctld.pid "$state"/run/munged.pid; do
        pid=$(daemon_pid "$f") || continue
        pids="$pids $pid"
        names="$names $(cat "/proc/$pid/comm")"
        kill -TERM "$pid" 2>/dev/null
    done
    # Bounded wait (10 s), then KILL what is left, each by its pid.
    local i
    for ((i = 0; i < 50; i++)); do
        local alive=0
        for pid in $pids; do kill -0 "$pid" 2>/dev/null && alive=1; done
        [ $alive = 0 ] && break
        sleep 0.2
    done
    local n=1
    for pid in $pids; do
        local name
        name=$(echo $names | cut -d' ' -f$n)
        n=$((n + 1))
        [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] && kill -KILL "$pid" 2>/dev/null
    done
    # slurmstepd and tasks of a step cut short (a test killed on timeout):
    # every process still in one of the nodes' own UTS namespaces, by pid.
    local ns p
    for ns in $namespaces; do
        # Never the host's own (a stale pid file naming a process of the host).
        [ "$ns" = "$(readlink /proc/self/ns/uts)" ] && continue
        for p in /proc/[0-9]*; do
            [ "$(readlink "$p/ns/uts" 2>/dev/null)" = "$ns" ] && kill -KILL "${p#/proc/}" 2>/dev/null
        done
    done
    local socket_dir
    socket_dir=$(cat "$state/munge-socket-dir" 2>/dev/null)
    case "$socket_dir" in /tmp/stacksage-munge.*) rm -rf "$socket_dir" ;; esac
    rm -rf "$state"
}

start() {
    local state=$1 nodes=${2:-2}
    case "$nodes" in '' | *[!0-9]*) die "NODES must be a number, not '$nodes'" ;; esac
    [ "$nodes" -ge 1 ] || die "NODES must be at least 1"
    local why
    why=$(check) || { echo "slurm-cluster.sh: cannot run here: $why" >&2; exit 77; }
    [ -e "$state/slurm.conf" ] && die "$state already holds a cluster: stop it first ($0 stop $state)"
    mkdir -p "$state"/{ctld,spool,run,log,munge} || die "cannot create $state"
    state=$(cd "$state" && pwd)
    chmod 700 "$state/munge"
    local socket_dir
    socket_dir=$(mktemp -d /tmp/stacksage-munge.XXXXXX) || die "cannot create a directory under /tmp"
    chmod 755 "$socket_dir"
    echo "$socket_dir" >"$state/munge-socket-dir"
    local socket=$socket_dir/munge.socket.2
    dd if=/dev/urandom of="$state/munge/munge.key" bs=1024 count=1 status=none && chmod 400 "$state/munge/munge.key"
    if ! munged -S "$socket" --key-file="$state/munge/munge.key" --pid-file="$state/run/munged.pid" \
        --log-file="$state/log/munged.log" --seed-file="$state/munge/munged.seed"; then
        cat "$state/log/munged.log" >&2
        stop "$state"; die "munged did not start"
    fi
    local base
    base=$(free_port_base $((nodes + 1))) || { stop "$state"; die "found no free ports"; }
    write_config "$state" "$nodes" "$socket" "$base"
    export SLURM_CONF=$state/slurm.conf
    printf 'SLURM_CONF=%s\nexport SLURM_CONF\n' "$SLURM_CONF" >"$state/env"
    if ! slurmctld -f "$SLURM_CONF" -i >"$state/log/slurmctld.out" 2>&1; then
        cat "$state/log/slurmctld.out" "$state/log/slurmctld.log" >&2
        stop "$state"; die "slurmctld did not start"
    fi
    local i
    for ((i = 1; i <= nodes; i++)); do
        # Its own host name; daemonizes and writes its pid file.
        if ! unshare --uts sh -c "hostname node$i && exec slurmd -f '$SLURM_CONF' -N node$i" \
            >"$state/log/slurmd-node$i.out" 2>&1; then
            cat "$state/log/slurmd-node$i.out" >&2
            stop "$state"; die "slurmd of node$i did not start"
        fi
    done
    # Every node idle, at most 60 s.
    local t
    for ((t = 0; t < 300; t++)); do
        # A daemon that died (a port taken meanwhile, a bad setting): say so now.
        local f
        for f in "$state"/run/slurmctld.pid "$state"/run/slurmd-*.pid; do
            if ! daemon_pid "$f" >/dev/null && [ $t -gt 5 ]; then
                echo "slurm-cluster.sh: $(basename "$f" .pid) is not running; its log:" >&2
                tail -n 20 "$state/log/$(basename "$f" .pid).log" >&2
                stop "$state"
                exit 1
            fi
        done
        local idle
        idle=$(sinfo -h -N -o '%N %t' 2>/dev/null | grep -c ' idle$')
        [ "$idle" = "$nodes" ] && { echo "slurm-cluster.sh: $nodes node(s) idle; SLURM_CONF=$SLURM_CONF"; return 0; }
        sleep 0.2
    done
    echo "slurm-cluster.sh: the nodes did not become idle within 60 s:" >&2
    sinfo -N >&2
    tail -n 20 "$state"/log/*.log >&2
    stop "$state"
    exit 1
}

case "${1:-}" in
start) [ $# -ge 2 ] || die "usage: $0 start STATE_DIR [NODES]"; start "$2" "${3:-2}" ;;
stop) [ $# -ge 2 ] || die "usage: $0 stop STATE_DIR"; stop "$2" ;;
check) why=$(check); rc=$?; [ $rc = 0 ] || echo "$why"; exit $rc ;;
start-for-tests)
    [ $# -ge 2 ] || die "usage: $0 start-for-tests STATE_DIR [NODES]"
    stop "$2"
    if ! why=$(check); then
        mkdir -p "$2" && echo "$why" >"$2/unavailable"
        echo "slurm-cluster.sh: no cluster: $why"
        exit 0
    fi
    start "$2" "${3:-2}" ;;
*) die "usage: $0 start STATE_DIR [NODES] | start-for-tests STATE_DIR [NODES] | stop STATE_DIR | check" ;;
esac
