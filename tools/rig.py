#!/usr/bin/env python3
"""Several machines on this one, for real: nodes in network namespaces, with Slurm and/or Ray.

    python3 tools/rig.py up [--nodes 3] [--gpus 2] [--slurm] [--ray]
    python3 tools/rig.py status | down
    python3 tools/rig.py run NODE -- COMMAND...    # on the node, in the current folder
    python3 tools/rig.py kill NODE                 # every process of the node, SIGKILL
    python3 tools/rig.py cut NODE | heal NODE      # its cable pulled, and put back

A head node (lvhead: the Slurm controller, the Ray head, where a user logs in and runs
OpenCompass) and `--nodes` compute nodes (lvnode1, lvnode2, ...), as on a cluster: tasks run on
the compute nodes only. Each node has its own network namespace with one address in a private
/24 that only the rig's namespaces see (a veth to a bridge that lives in a namespace of its own),
and, from `unshare`, its own host name, process table, /tmp/ray, /dev/shm and /etc/hosts (naming
every node). The disk is shared, as NFS would be on a cluster. A node is entered with `nsenter`
on its first process (not `ip netns exec`, which remounts /sys: slurmd then finds no cgroup
file system). Killing that process kills the whole node, as a power cut would.

Slurm (`--slurm`, installed with apt where missing): slurmctld on the head and a slurmd on each
compute node, with one CPU and `--gpus` fake GPUs (GRES backed by links to /dev/null, so Slurm
hands out CUDA_VISIBLE_DEVICES), partitions `cpu` (default) and `gpu` on every compute node,
munge shared through the machine's /run. Clients need `SLURM_CONF`, which `run` sets. Every job
step is logged to steps.log by a task prolog: job, step, node, CUDA_VISIBLE_DEVICES, job name.
Ray (`--ray`): a head offering nothing on lvhead and a worker with 2 CPUs and `--gpus` GPUs on
each compute node, from the Python environment this script runs in; `run` sets `RAY_ADDRESS`.

Files live in $LVEVAL_RIG_DIR (default /tmp/lveval-rig): state.json, logs, Slurm's config and
state. Needs root and Linux (ip, nsenter, unshare). `up` first removes whatever an earlier rig
left; `down` leaves no process, namespace or mount behind. Errors: one line
"rig: error: ..." on stderr, exit status 1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

PREFIX = 'lvrig'
SUBNET = '10.251.0'  # node i is SUBNET.i/24, inside the rig's namespaces only
HUB = f'{PREFIX}-hub'
RAY_PORT = 6379
RIG = Path(os.environ.get('LVEVAL_RIG_DIR') or '/tmp/lveval-rig')
STATE = RIG / 'state.json'
SLURM = RIG / 'slurm'


class RigError(RuntimeError):
    pass


def sh(*command: str, timeout: float = 60, check: bool = True, **kwargs) -> str:
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, **kwargs)
    if check and done.returncode:
        raise RigError(f'{" ".join(command)}: {(done.stderr or done.stdout).strip()[-400:]}')
    return done.stdout


def node_name(index: int) -> str:
    return f'lvnode{index}' if index else 'lvhead'


def address_of(index: int) -> str:
    return f'{SUBNET}.{10 + index}'


def netns(node: str) -> str:
    return f'{PREFIX}-{node}'


def load_state() -> dict:
    if not STATE.is_file():
        raise RigError(f'no rig is up ({STATE} is missing): python3 tools/rig.py up')
    return json.loads(STATE.read_text())


def save_state(state: dict) -> None:
    part = STATE.with_name(STATE.name + '.part')
    part.write_text(json.dumps(state, indent=1))
    os.replace(part, STATE)


def node_of(state: dict, name: str) -> dict:
    for node in state['nodes']:
        if node['name'] == name:
            return node
    raise RigError(f'no node {name!r}: the rig has {", ".join(n["name"] for n in state["nodes"])}')


# --- nodes -------------------------------------------------------------------------------------


def node_init(name: str) -> None:
    """The first process of a node (pid 1 of its process table): names the host, gives it its own
    /tmp/ray, /dev/shm and /etc/hosts, says it is ready, then reaps orphans until killed."""
    socket.sethostname(name)
    private = RIG / 'nodes' / name
    (private / 'tmp-ray').mkdir(parents=True, exist_ok=True)
    Path('/tmp/ray').mkdir(exist_ok=True)  # a mount point; the node's files live in its folder
    sh('mount', '--bind', str(private / 'tmp-ray'), '/tmp/ray')
    sh('mount', '--bind', str(RIG / 'hosts'), '/etc/hosts')
    sh('mount', '-t', 'tmpfs', '-o', 'size=512m', 'tmpfs', '/dev/shm')
    (private / 'ready').write_text(str(os.getpid()))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        try:
            os.wait()
        except ChildProcessError:
            time.sleep(0.5)


def start_node(index: int) -> dict:
    name, address = node_name(index), address_of(index)
    ns = netns(name)
    sh('ip', 'netns', 'add', ns)
    sh('ip', 'link', 'add', 'eth0', 'netns', ns, 'type', 'veth', 'peer', 'name', name, 'netns', HUB)
    sh('ip', '-n', HUB, 'link', 'set', name, 'master', 'br0', 'up')
    sh('ip', '-n', ns, 'addr', 'add', f'{address}/24', 'dev', 'eth0')
    sh('ip', '-n', ns, 'link', 'set', 'eth0', 'up')
    sh('ip', '-n', ns, 'link', 'set', 'lo', 'up')
    private = RIG / 'nodes' / name
    private.mkdir(parents=True, exist_ok=True)
    log = open(private / 'init.log', 'w')  # noqa: SIM115 - handed to the child
    launcher = subprocess.Popen(
        ['nsenter', f'--net=/run/netns/{ns}', 'unshare', '--uts', '--mount', '--pid', '--fork',
         '--mount-proc', '--propagation', 'private', sys.executable, __file__, '_init', name],
        stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
    )  # fmt: skip
    log.close()
    for _ in range(100):
        if (private / 'ready').is_file():
            break
        if launcher.poll() is not None:
            raise RigError(f'{name} did not start: {(private / "init.log").read_text()[-400:]}')
        time.sleep(0.1)
    else:
        raise RigError(f'{name} did not start within 10 s (see {private / "init.log"})')
    children = Path(f'/proc/{launcher.pid}/task/{launcher.pid}/children').read_text().split()
    return {'name': name, 'address': address, 'netns': ns, 'pid': int(children[0])}


def enter(node: dict, cwd: str | None = None) -> list[str]:
    """The command prefix that runs a command on ``node``: its network, host name, process table
    and mounts, in ``cwd`` (default: the current folder)."""
    # `env -C`, not nsenter's --wd: that folder would be opened in this mount namespace, and
    # renames between it and the node's own paths then fail as between two devices.
    return ['nsenter', '-t', str(node['pid']), '-n', '-u', '-m', '-p', '--',
            'env', '-C', cwd or os.getcwd()]  # fmt: skip


def node_env(state: dict) -> dict:
    env = dict(os.environ)
    if state.get('slurm'):
        env['SLURM_CONF'] = str(SLURM / 'slurm.conf')
    if state.get('ray'):
        env['RAY_ADDRESS'] = f'{state["nodes"][0]["address"]}:{RAY_PORT}'
    return env


def daemon(state: dict, node: dict, command: list[str], log: Path) -> None:
    """Start ``command`` on ``node`` in the background; it dies with the node."""
    with open(log, 'w') as stream:
        subprocess.Popen(
            enter(node, '/') + command,
            env=node_env(state),
            stdin=subprocess.DEVNULL,
            stdout=stream,
            stderr=stream,
            start_new_session=True,
        )


def is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# --- Slurm -------------------------------------------------------------------------------------


def write_slurm_config(state: dict, gpus: int) -> None:
    (SLURM / 'state').mkdir(parents=True, exist_ok=True)
    (SLURM / 'dev').mkdir(exist_ok=True)
    for index in range(gpus):
        link = SLURM / 'dev' / f'nvidia{index}'
        link.unlink(missing_ok=True)
        link.symlink_to('/dev/null')
    names = ','.join(node['name'] for node in state['nodes'][1:])
    (SLURM / 'gres.conf').write_text(
        f'NodeName={names} Name=gpu File={SLURM}/dev/nvidia[0-{gpus - 1}]\n'
    )
    prolog = SLURM / 'task_prolog.sh'
    prolog.write_text(
        '#!/bin/sh\n'
        'echo "job=$SLURM_JOB_ID step=${SLURM_STEP_ID:-batch} node=$SLURMD_NODENAME '
        f"cuda=${{CUDA_VISIBLE_DEVICES-unset}} name=$SLURM_JOB_NAME\" >>'{SLURM}/steps.log'\n"
    )
    prolog.chmod(0o755)
    (SLURM / 'steps.log').touch()
    head = state['nodes'][0]
    nodes = '\n'.join(
        f'NodeName={n["name"]} NodeAddr={n["address"]} CPUs=1 Gres=gpu:{gpus} State=UNKNOWN'
        for n in state['nodes'][1:]
    )
    (SLURM / 'slurm.conf').write_text(f"""ClusterName=lvrig
SlurmctldHost={head['name']}({head['address']})
SlurmUser=root
AuthType=auth/munge
StateSaveLocation={SLURM}/state
SlurmdSpoolDir={SLURM}/spool-%n
SlurmctldPidFile={SLURM}/slurmctld.pid
SlurmdPidFile={SLURM}/slurmd-%n.pid
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MinJobAge=3600
EnforcePartLimits=ALL
ReturnToService=2
# A lost node is declared down within seconds, not the default five minutes.
SlurmdTimeout=10
TaskProlog={prolog}
{nodes}
PartitionName=cpu Nodes={names} Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes={names} MaxTime=INFINITE State=UP
""")


def start_munge() -> bool:
    """A munged for every node (they share /run/munge); True when this call started it."""
    if subprocess.run('munge -n | unmunge', shell=True, capture_output=True).returncode == 0:
        return False
    for folder, mode in (('/etc/munge', 0o700), ('/var/lib/munge', 0o700), ('/run/munge', 0o755)):
        os.makedirs(folder, exist_ok=True)
        shutil.chown(folder, 'munge', 'munge')
        os.chmod(folder, mode)
    key = Path('/etc/munge/munge.key')
    if not key.is_file() or not key.stat().st_size:
        key.write_bytes(os.urandom(1024))
    shutil.chown(key, 'munge', 'munge')
    key.chmod(0o400)
    with open(RIG / 'munged.log', 'w') as log:
        munged = subprocess.Popen(
            ['setpriv', '--reuid=munge', '--regid=munge', '--init-groups', 'munged', '-F'],
            stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
    (RIG / 'munged.pid').write_text(str(munged.pid))
    for _ in range(50):
        if subprocess.run('munge -n | unmunge', shell=True, capture_output=True).returncode == 0:
            return True
        time.sleep(0.1)
    raise RigError(f'munged did not start (see {RIG / "munged.log"})')


def install_slurm() -> None:
    """Debian's Slurm and munge, where they are missing (apt; the package lists refreshed only
    when apt does not know the packages yet)."""
    if all(shutil.which(t) for t in ('slurmctld', 'slurmd', 'srun', 'sinfo', 'munged')):
        return
    if not shutil.which('apt-get'):
        raise RigError('Slurm is not installed and there is no apt-get to install it with')
    env = {**os.environ, 'DEBIAN_FRONTEND': 'noninteractive'}
    policy = sh('apt-cache', 'policy', 'slurmctld', check=False)
    if not policy.strip() or 'Candidate: (none)' in policy:
        sh('apt-get', 'update', '-qq', timeout=600, env=env)
    packages = ['slurmctld', 'slurmd', 'slurm-client', 'munge']
    sh(
        'apt-get',
        'install',
        '-y',
        '-qq',
        '--no-install-recommends',
        *packages,
        timeout=900,
        env=env,
    )


def start_slurm(state: dict, gpus: int) -> None:
    install_slurm()
    write_slurm_config(state, gpus)
    state['slurm'] = {'munged': start_munge(), 'conf': str(SLURM / 'slurm.conf')}
    conf = str(SLURM / 'slurm.conf')
    daemon(state, state['nodes'][0], ['slurmctld', '-D', '-c', '-f', conf], SLURM / 'ctld.log')
    for node in state['nodes'][1:]:
        log = SLURM / f'slurmd-{node["name"]}.log'
        daemon(state, node, ['slurmd', '-D', '-N', node['name'], '-f', conf], log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        shown = slurm_nodes(state)
        if len(shown) == len(state['nodes']) - 1 and all(s == 'idle' for s in shown.values()):
            return
        time.sleep(0.5)
    raise RigError(f'Slurm nodes not idle after 60 s: {slurm_nodes(state)} (see {SLURM}/*.log)')


def slurm_nodes(state: dict) -> dict[str, str]:
    done = subprocess.run(
        enter(state['nodes'][0], '/') + ['sinfo', '-h', '-N', '-p', 'cpu', '-o', '%N %T'],
        env=node_env(state), capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    return dict(line.split() for line in done.stdout.splitlines() if line.strip())


# --- Ray ---------------------------------------------------------------------------------------


def start_ray(state: dict, gpus: int) -> None:
    ray = Path(sys.executable).with_name('ray')
    if not ray.is_file():
        raise RigError(
            f'ray is not installed in {sys.prefix}: pip install "opencompass_lveval[ray]"'
        )
    head = state['nodes'][0]
    common = ['--disable-usage-stats', '--object-store-memory=100000000']
    state['ray'] = {'address': f'{head["address"]}:{RAY_PORT}'}
    for node in state['nodes']:  # one after the other: two joining at once can time out
        role = (
            ['--head', f'--port={RAY_PORT}', '--include-dashboard=false', '--num-cpus=0',
             '--num-gpus=0']
            if node is head
            else [f'--address={state["ray"]["address"]}', '--num-cpus=2', f'--num-gpus={gpus}']
        )  # fmt: skip
        done = subprocess.run(
            enter(node, '/') + [str(ray), 'start', f'--node-ip-address={node["address"]}']
            + role + common,
            env=node_env(state), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        (RIG / 'nodes' / node['name'] / 'ray-start.log').write_text(done.stdout + done.stderr)
        if done.returncode:
            raise RigError(f'ray start on {node["name"]}: {done.stderr.strip()[-400:]}')


# --- commands ----------------------------------------------------------------------------------


def up(count: int, gpus: int, slurm: bool, ray: bool) -> dict:
    if os.geteuid() != 0:
        raise RigError('the rig needs root (network namespaces, mounts, daemons)')
    down(quiet=True)
    RIG.mkdir(parents=True, exist_ok=True)
    state: dict = {'nodes': [], 'gpus': gpus}
    save_state(state)  # from here on, `down` can clean up whatever was started
    (RIG / 'hosts').write_text(
        '127.0.0.1 localhost\n'
        + ''.join(f'{address_of(i)} {node_name(i)}\n' for i in range(count + 1))
    )
    sh('ip', 'netns', 'add', HUB)
    sh('ip', '-n', HUB, 'link', 'add', 'br0', 'type', 'bridge')
    sh('ip', '-n', HUB, 'link', 'set', 'br0', 'up')
    for index in range(count + 1):
        state['nodes'].append(start_node(index))
        save_state(state)
    if slurm:
        start_slurm(state, gpus)
        save_state(state)
    if ray:
        start_ray(state, gpus)
        save_state(state)
    return state


def down(quiet: bool = False) -> None:
    state = json.loads(STATE.read_text()) if STATE.is_file() else {'nodes': []}
    pids = [node['pid'] for node in state['nodes']]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):  # the node's first process: all of it
            os.kill(pid, signal.SIGKILL)
    for _ in range(100):
        if not any(is_alive(pid) for pid in pids):
            break
        time.sleep(0.1)
    listed = sh('ip', 'netns', 'list', check=False).split()
    for ns in listed:
        if ns.startswith(PREFIX + '-'):
            sh('ip', 'netns', 'del', ns, check=False)
    munged = RIG / 'munged.pid'
    if (state.get('slurm') or {}).get('munged') and munged.is_file():
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(munged.read_text()), signal.SIGTERM)
    if RIG.exists():
        shutil.rmtree(RIG, ignore_errors=True)
    if not quiet:
        print('rig down')


def status() -> None:
    state = load_state()
    for node in state['nodes']:
        alive = 'up' if is_alive(node['pid']) else 'dead'
        print(f'{node["name"]} {node["address"]} pid {node["pid"]} {alive}')
    if state.get('slurm'):
        print('slurm:', ' '.join(f'{n}={s}' for n, s in sorted(slurm_nodes(state).items())))
    if state.get('ray'):
        print('ray:', state['ray']['address'])


def kill(name: str) -> None:
    node = node_of(load_state(), name)
    os.kill(node['pid'], signal.SIGKILL)
    for _ in range(100):
        if not is_alive(node['pid']):
            return
        time.sleep(0.1)
    raise RigError(f'{name} (pid {node["pid"]}) still runs 10 s after SIGKILL')


def set_link(name: str, state_word: str) -> None:
    node_of(load_state(), name)
    sh('ip', '-n', HUB, 'link', 'set', name, state_word)


def run(name: str, command: list[str]) -> int:
    state = load_state()
    node = node_of(state, name)
    return subprocess.run(enter(node) + command, env=node_env(state)).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    commands = parser.add_subparsers(dest='command', required=True)
    start = commands.add_parser('up', help='start the nodes (and Slurm, Ray)')
    start.add_argument('--nodes', type=int, default=3)
    start.add_argument('--gpus', type=int, default=2, help='fake GPUs per node')
    start.add_argument('--slurm', action='store_true')
    start.add_argument('--ray', action='store_true')
    commands.add_parser('down', help='stop everything the rig started')
    commands.add_parser('status')
    for word in ('kill', 'cut', 'heal'):
        commands.add_parser(word).add_argument('node')
    on = commands.add_parser('run', help='run a command on a node')
    on.add_argument('node')
    on.add_argument('argv', nargs=argparse.REMAINDER)
    commands.add_parser('_init').add_argument('node')
    args = parser.parse_args(argv)
    try:
        if args.command == '_init':
            node_init(args.node)
        elif args.command == 'up':
            if not 1 <= args.nodes <= 200 or args.gpus < 1:
                raise RigError('--nodes must be 1 to 200 and --gpus at least 1')
            state = up(args.nodes, args.gpus, args.slurm, args.ray)
            print(f'rig up: {", ".join(n["name"] for n in state["nodes"])} ({RIG})')
        elif args.command == 'down':
            down()
        elif args.command == 'status':
            status()
        elif args.command == 'kill':
            kill(args.node)
        elif args.command in ('cut', 'heal'):
            set_link(args.node, 'down' if args.command == 'cut' else 'up')
        else:
            command = args.argv[1:] if args.argv[:1] == ['--'] else args.argv
            return run(args.node, command)
    except (RigError, OSError, subprocess.TimeoutExpired) as exc:
        print(f'rig: error: {exc}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
