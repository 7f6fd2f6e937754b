#!/usr/bin/env bash
# tests/slurm_cluster.sh — a throwaway single-node Slurm cluster in a folder, for
# tests/test_slurm.c (and by hand): its own munge key and socket, its own slurm.conf,
# spool, state and log folders and ports; no systemd, every daemon started by hand and
# stopped by its pid.
#   tests/slurm_cluster.sh start DIR    start munged, slurmctld, slurmd; wait until the node is idle
#   tests/slurm_cluster.sh stop DIR     stop them (by pid), keep DIR (logs)
# Then: SLURM_CONF=DIR/slurm.conf sbatch ... (start prints the export line).
set -euo pipefail
cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
stop() {
  for p in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
    if [ -f "$p" ]; then kill "$(cat "$p")" 2>/dev/null || true; fi
  done
  for p in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
    for _ in $(seq 300); do   # until it is gone (an event; 30 s at most)
      [ -f "$p" ] && kill -0 "$(cat "$p")" 2>/dev/null || break
      sleep 0.1
    done
    rm -f "$p"
  done
}
if [ "$cmd" = stop ]; then stop; exit 0; fi
[ "$cmd" = start ] || { echo "$0: unknown command $cmd" >&2; exit 2; }
for prog in munged slurmctld slurmd sinfo; do
  command -v "$prog" >/dev/null || { echo "slurm_cluster: $prog not found (apt install munge slurmctld slurmd slurm-client)" >&2; exit 3; }
done
mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
dir=$(cd "$dir" && pwd)
host=$(hostname -s)
# ports from the folder's name, away from Slurm's defaults (6817/6818), so two clusters differ
base=$(( 20000 + $(printf '%s' "$dir" | cksum | cut -d' ' -f1) % 20000 ))
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$dir/munge/munge.key"
cat > "$dir/slurm.conf" <<CONF
ClusterName=cbtest
SlurmctldHost=$host
SlurmUser=$(id -un)
SlurmdUser=root
SlurmctldPort=$base
SlurmdPort=$((base + 1))
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
trap 'stop' ERR
munged --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" --pid-file="$dir/munge/munged.pid" \
       --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed" --force
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
# wait for the node to be idle (an event; the bound, 600 looks over 2 minutes or more,
# only stops a cluster that never comes up: 20 s had been tight on a loaded machine)
for _ in $(seq 600); do
  if sinfo -h -o %T 2>/dev/null | grep -q idle; then
    echo "export SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 0.2
done
echo "slurm_cluster: the node did not become idle in 2 minutes; logs in $dir/log:" >&2
tail -5 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
stop
exit 1
