"""The driver of the placement cluster tests, run on the rig's head node as a user would run a
stage there: replicas of the paced server placed by Ray or Slurm, then either held until the
driver is stopped (``hold``) or fed a workload by the dispatcher (``dispatch``).

    python placement_driver.py {ray,slurm} FOLDER REPLICAS GPUS {hold,dispatch}

What it saw goes to FOLDER as it goes: ``replicas.json`` (each replica's name, node, URL, GPUs,
and whether ``/health`` answered from here), ``progress`` (requests answered so far) and
``report.json`` (the dispatch's report). Each server logs what it received to
``FOLDER/requests-NAME.jsonl``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from opencompass_lveval.files.atomic import write_text
from opencompass_lveval.serving.placement import ReplicaSpec, healthy, placement_class
from opencompass_lveval.serving.replicas import serving

TOKENS_PER_S = 3000
CAP_TOKENS = 6000
ANSWER = 16


def specs(folder: Path, count: int, gpus: int) -> list[ReplicaSpec]:
    made = []
    for index in range(count):
        name = f'r{index}'
        argv = [sys.executable, '-m', 'opencompass_lveval.testing.paced_server', '--host',
                '{host}', '--port', '{port}', '--tokens-per-s', str(TOKENS_PER_S),
                '--log', str(folder / f'requests-{name}.jsonl')]  # fmt: skip
        made.append(ReplicaSpec(name, argv, {}, gpus))
    return made


def workload() -> list:
    """60 requests of 300 to 4000 tokens: about 40 s of one replica's work."""
    from opencompass_lveval.serving.request import planned_request

    sampling = {'max_tokens': ANSWER}
    return [
        planned_request('paced', [index % 50] * (300 + (index * 997) % 3700 - ANSWER),
                        sampling, f'#{index}')
        for index in range(60)
    ]  # fmt: skip


def describe(replicas: list) -> list[dict]:
    return [
        {'name': r.name, 'node': r.node, 'url': r.url, 'gpus': r.where.get('gpus'),
         'health': healthy(r.url, 5.0)}
        for r in replicas
    ]  # fmt: skip


def main(placement: str, folder: str, count: str, gpus: str, mode: str) -> None:
    work = Path(folder)
    chosen = placement_class(placement)(log_dir=str(work / 'logs'))
    with serving(chosen, specs(work, int(count), int(gpus)), 120) as replicas:
        seen = {'driver': os.getpid(), 'replicas': describe(replicas)}
        write_text(work / 'replicas.json', json.dumps(seen))
        if mode == 'hold':
            while True:
                time.sleep(1)
        from opencompass_lveval.serving.dispatch import dispatch  # seconds to import: not in hold
        from opencompass_lveval.serving.store import ReplyStore

        requests = workload()
        report = dispatch(
            requests, replicas, ReplyStore(work / 'replies'), CAP_TOKENS, 60,
            progress=lambda done, total: write_text(work / 'progress', str(done)),
        )  # fmt: skip
        write_text(work / 'report.json', json.dumps({**vars(report), 'planned': len(requests)}))
    connected = 'ray' in sys.modules and sys.modules['ray'].is_initialized()
    write_text(work / 'stopped', json.dumps({'ray_connected': connected}))


if __name__ == '__main__':
    main(*sys.argv[1:])
