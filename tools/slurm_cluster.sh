#!/usr/bin/env bash
# One-node Slurm cluster on this machine for CI tests (Debian/Ubuntu, as root).
#   tools/slurm_cluster.sh up|down|status
# Node $(hostname -s) with 4 fake GPUs; partitions cpu (default) and gpu. Files in
# $SLURM_CLUSTER_DIR (default /tmp/lveval-slurm): slurm.conf, *.log, *.pid and steps.log,
# one line per job step: "job=ID step=N|batch partition=P cuda=0,1|unset name=NAME".
# Errors: one line "slurm_cluster: error: ..." on stderr, exit status 1.
set -euo pipefail

DIR=${SLURM_CLUSTER_DIR:-/tmp/lveval-slurm}
NODE=$(hostname -s)
CONF=$DIR/slurm.conf
ETC_CONF=/etc/slurm/slurm.conf
export SLURM_CONF=$CONF  # for the daemons and the clients this script runs
STARTING=0               # 1 while up() starts daemons: a failure then stops them again
die() { echo "slurm_cluster: error: $*" >&2; if (( STARTING )); then stop_all; fi; exit 1; }
alive() { [[ -s $DIR/$1.pid ]] && kill -0 "$(cat "$DIR/$1.pid")" 2>/dev/null; }
# grep without -q: with pipefail, -q may exit early and fail the writer with SIGPIPE.
node_ok() { sinfo -h -n "$NODE" -o %T 2>/dev/null | grep -E '^(idle|mixed|allocated|completing)$' >/dev/null; }
own_etc_conf() { [[ -L $ETC_CONF && $(readlink "$ETC_CONF") == "$CONF" ]]; }

install_packages() {
  local p pkgs="slurmctld slurmd slurm-client munge"
  for p in slurmctld slurmd srun sinfo munged mungekey; do
    command -v "$p" >/dev/null || break
  done
  command -v "$p" >/dev/null && return 0
  export DEBIAN_FRONTEND=noninteractive; : >"$DIR/apt.log"
  # Refresh package lists only when apt does not know the packages yet.
  if ! apt-cache policy slurmctld 2>/dev/null | grep 'Candidate: [0-9]' >/dev/null; then
    apt-get update -qq >>"$DIR/apt.log" 2>&1 || die "apt-get update failed (see $DIR/apt.log)"
  fi
  apt-get install -y -qq --no-install-recommends $pkgs >>"$DIR/apt.log" 2>&1 \
    || die "apt-get install $pkgs failed (see $DIR/apt.log)"
}

write_config() {
  # The node's real CPUs/sockets/memory as slurmd will register them: a config that
  # claims more than that drains the node.
  local hw; hw=$(slurmd -C | head -1 | sed 's/^NodeName=[^ ]* //; s/ UpTime=.*//')
  mkdir -p "$DIR/dev" "$DIR/state" "$DIR/spool"
  # Fake GPUs: gres/gpu needs device files. Symlinks to /dev/null pass slurmd's checks and
  # yield CUDA_VISIBLE_DEVICES (a bare Count drains the node; empty files give no variable).
  for i in 0 1 2 3; do ln -sfn /dev/null "$DIR/dev/nvidia$i"; done
  echo "NodeName=$NODE Name=gpu File=$DIR/dev/nvidia[0-3]" >"$DIR/gres.conf"
  # TaskProlog runs per task, as the job user, with the task's environment, i.e. after
  # gres has set CUDA_VISIBLE_DEVICES; batch scripts log as step=batch.
  cat >"$DIR/task_prolog.sh" <<EOF
#!/bin/sh
echo "job=\$SLURM_JOB_ID step=\${SLURM_STEP_ID:-batch} partition=\$SLURM_JOB_PARTITION cuda=\${CUDA_VISIBLE_DEVICES-unset} name=\$SLURM_JOB_NAME" >>'$DIR/steps.log'
EOF
  chmod 755 "$DIR/task_prolog.sh"
  cat >"$CONF" <<EOF
ClusterName=lveval
# Short host name (what the daemons compare with gethostname) on loopback: no DNS needed.
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.daemon.pid
SlurmdPidFile=$DIR/slurmd.daemon.pid
# No *LogFile: the daemons run with -D and log to stderr, which up() sends to $DIR/*.log.
MailProg=/bin/true
# No cgroups without systemd (containers, VMs): track processes via /proc, no binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
# CR_Core, not CR_Core_Memory: without DefMemPerCPU each job would take all the node's
# memory and jobs would run one at a time.
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
# No slurmdbd, hence no accounting: AccountingStorageTRES=gres/gpu is fatal without it.
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
# Finished jobs stay in 'scontrol show job' for an hour, for tests to inspect.
MinJobAge=3600
# Reject at submission what the partition can never run (too many nodes or CPUs)
# instead of leaving it pending forever; gpu:N above the node's 4 is rejected anyway.
EnforcePartLimits=ALL
ReturnToService=2
TaskProlog=$DIR/task_prolog.sh
NodeName=$NODE NodeAddr=127.0.0.1 $hw Gres=gpu:4 State=UNKNOWN
PartitionName=cpu Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=$NODE MaxTime=INFINITE State=UP
EOF
}

start_munge() {
  if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then return 0; fi  # reuse a running one
  install -d -o munge -g munge -m 700 /etc/munge /var/lib/munge /var/log/munge
  install -d -o munge -g munge -m 755 /run/munge
  [[ -s /etc/munge/munge.key ]] || mungekey -c -k /etc/munge/munge.key 2>/dev/null \
    || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key
  # setpriv execs (no fork), so $! is munged itself, kept in the foreground by -F.
  setsid setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged -F \
    >"$DIR/munged.log" 2>&1 </dev/null 9>&- &
  echo $! >"$DIR/munged.pid"
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && return 0; sleep 0.1; done
  die "munged did not start (see $DIR/munged.log)"
}

stop_all() {
  # Cancel jobs first: their slurmstepd and tasks are not children of slurmd.
  if alive slurmctld && [[ -n $(squeue -h -o %i 2>/dev/null) ]]; then
    scancel --quiet $(squeue -h -o %i) || true
    for _ in $(seq 50); do [[ -z $(squeue -h -o %i 2>/dev/null) ]] && break; sleep 0.2; done
  fi
  local name pid pids=() left
  for name in slurmd slurmctld munged; do
    [[ -s $DIR/$name.pid ]] || continue
    pid=$(cat "$DIR/$name.pid"); rm -f "$DIR/$name.pid"
    if kill "$pid" 2>/dev/null; then pids+=("$pid"); fi
  done
  for _ in $(seq 100); do  # up to 10 s, then SIGKILL
    left=(); for pid in "${pids[@]}"; do if kill -0 "$pid" 2>/dev/null; then left+=("$pid"); fi; done
    (( ${#left[@]} )) || break; pids=("${left[@]}"); sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  if own_etc_conf; then rm -f "$ETC_CONF"; fi
}

up() {
  if alive slurmctld && alive slurmd && node_ok; then
    echo "slurm cluster already up ($CONF)"; own_etc_conf || echo "export SLURM_CONF=$CONF"; return 0
  fi
  stop_all  # half-started leftovers
  install_packages
  write_config
  # Other clients (srun, sbatch in tests) find the config via a link in /etc/slurm, no
  # SLURM_CONF needed, unless a foreign slurm.conf is there: then we print the export.
  mkdir -p /etc/slurm
  [[ -e $ETC_CONF || -L $ETC_CONF ]] || ln -s "$CONF" "$ETC_CONF"
  STARTING=1
  start_munge
  : >"$DIR/steps.log"; chmod 666 "$DIR/steps.log"
  # SLURM_CONF (exported above) also makes slurmd find gres.conf next to slurm.conf. -D: in the
  # foreground, so $! is the daemon; -c: cold start, no jobs or node state of an earlier run.
  setsid slurmctld -D -c -f "$CONF" >"$DIR/slurmctld.log" 2>&1 </dev/null 9>&- &
  echo $! >"$DIR/slurmctld.pid"
  setsid slurmd -D -N "$NODE" -f "$CONF" >"$DIR/slurmd.log" 2>&1 </dev/null 9>&- &
  echo $! >"$DIR/slurmd.pid"
  for _ in $(seq 120); do  # ~60 s
    alive slurmctld || die "slurmctld exited (see $DIR/slurmctld.log)"
    alive slurmd || die "slurmd exited (see $DIR/slurmd.log)"
    node_ok && break
    sleep 0.5
  done
  node_ok || die "node $NODE not idle after 60 s: $(sinfo -h -N -o '%T %E' 2>&1 | head -1)"
  STARTING=0
  echo "slurm cluster up: node $NODE, partitions cpu gpu, config $CONF"
  own_etc_conf || echo "export SLURM_CONF=$CONF"
}

case ${1:-} in up|down|status) ;; *) echo "usage: $0 up|down|status" >&2; exit 2 ;; esac
[[ $(id -u) == 0 ]] || die "must run as root"
mkdir -p "$DIR"
# Concurrent callers (e.g. pytest-xdist workers) take turns. Daemons are started with fd 9
# closed (9>&-): munged would otherwise hold the lock forever.
exec 9>"$DIR/.lock"; flock 9
case $1 in
  up) up ;;
  down) stop_all; echo "slurm cluster down" ;;
  status) if alive slurmctld && alive slurmd && node_ok; then sinfo; else die "slurm cluster is not up"; fi ;;
esac
