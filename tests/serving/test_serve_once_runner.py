"""``ServeOnceRunner`` in whole OpenCompass runs, with paced stand-in replicas in place of vLLM
(``server_argv``): the requests planned before any replica starts are the ones the inferencer's
tasks then look up, each asked once; a resumed run asks nothing answered; settings are refused
when the runner is built."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest
from runs import load_config, run_opencompass

from opencompass_lveval.files.errors import ModelConfigError
from opencompass_lveval.models.vllm import LongContextVLLM
from opencompass_lveval.runner.serve_once import ServeOnceRunner
from opencompass_lveval.testing.paced_server import body_key, paced_answer

KEPT = ('LVEval_factrecall_en_16k', 'LVEval_factrecall_zh_256k', 'LVEval_loogle_SD_mixup_64k')
TASK = dict(type='opencompass_lveval.runner.infer_task.LongContextInferTask')
SECRET = 'hf_' + 'q' * 30  # a token's form, given to replicas by name


@pytest.mark.parametrize(
    ('settings', 'message'),
    [
        (dict(replica=2), "unknown setting 'replica'; did you mean 'replicas'?"),
        (dict(replicas=0), 'replicas must be a whole number >= 1'),
        (dict(placement='kubernetes'), "placement must be one of ['local', 'ray', 'slurm']"),
        (dict(cap_tokens=1.5), 'cap_tokens must be None'),
        (dict(request_deadline_s=0), 'request_deadline_s must be a number of seconds > 0'),
        (dict(cost_model='cubic'), "cost_model must be one of ('linear', 'quadratic')"),
        (dict(replica_env={'A': 1}), 'replica_env must be a dict of str to str'),
    ],
)
def test_settings_are_refused_when_the_runner_is_built(settings, message):
    with pytest.raises(ModelConfigError, match=f'^ServeOnceRunner: {re.escape(message)}'):
        ServeOnceRunner(task=TASK, **settings)


def served_config(root: Path, model: Path, replicas: int = 2) -> Path:
    """The demo-serve config (its data in ``root``/data/demo), the paced server standing in for
    vLLM."""
    cfg = load_config('eval_demo_serve.py')
    cfg.datasets = [d for d in cfg.datasets if d['abbr'] in KEPT or 'LVEval' not in d['abbr']]
    cfg.models[0]['path'] = str(model)
    paced = [sys.executable, '-m', 'opencompass_lveval.testing.paced_server', '--port', '{port}']
    paced += ['--tokens-per-s', '200000', '--log', str(root / 'paced-{port}.jsonl')]
    runner = cfg.infer.runner
    runner.update(
        replicas=replicas,
        server_argv=paced,
        cap_tokens=20000,
        ready_timeout_s=60,
        placement_settings=dict(num_cpus=0.5),
        plan_workers=2,
        replica_env_from=['LVEVAL_TEST_TOKEN'],
    )
    path = root / 'config.py'
    cfg.dump(str(path))
    return path


def received(root: Path) -> list[dict]:
    lines = [
        json.loads(x) for log in root.glob('paced-*.jsonl') for x in log.read_text().splitlines()
    ]
    return [line for line in lines if line['event'] == 'received']


@pytest.mark.slow
def test_predictions_are_the_replies_to_the_planned_requests_each_asked_once(tmp_path, monkeypatch):
    from mmengine.config import Config

    from opencompass_lveval.cli import main
    from opencompass_lveval.serving.plan import RenderedPair
    from opencompass_lveval.serving.request import engine_identity, served_model_name
    from opencompass_lveval.testing import save_tiny_llama

    monkeypatch.chdir(tmp_path)  # the demo's datasets read data/demo
    assert main(['data', 'synth', 'data/demo', '--count', '2']) == 0
    model = save_tiny_llama(tmp_path / 'tiny', 4096)
    config = served_config(tmp_path, model)
    env = {'PYTHONPATH': str(Path(__file__).parents[2]), 'LVEVAL_TEST_TOKEN': SECRET}
    run_opencompass(config, tmp_path, env, '-m', 'infer')
    run = sorted((tmp_path / 'out').iterdir())[-1]
    cfg = Config.fromfile(str(config), format_python_code=False)
    model_cfg, runner = cfg.models[0], cfg.infer.runner
    served = served_model_name(engine_identity(model_cfg, runner.server_argv))
    planned, second_calls = 0, 0
    for dataset_cfg in cfg.datasets:
        path = run / 'predictions' / model_cfg['abbr'] / f'{dataset_cfg["abbr"]}.json'
        predictions = json.loads(path.read_text())
        meta, records = RenderedPair(model_cfg, dataset_cfg).open()
        bodies = [{'model': served, 'prompt': b.ids, **meta['sampling']} for _, b in records]
        assert len(predictions) == len(bodies) > 0
        answers = [None] * len(bodies)
        if 'answer_call' in dataset_cfg['infer_cfg']['inferencer']:  # two calls
            answers = answer_bodies(model_cfg, dataset_cfg, bodies)
            second_calls += len(answers) - answers.count(None)
        for index, (body, answer) in enumerate(zip(bodies, answers)):
            entry = predictions[str(index)]
            last = answer or body
            assert entry['prediction'] == paced_answer(last)
            assert entry['usage']['transport'] == 'served'
            if answer is not None:
                assert entry['first_reply'] == paced_answer(body)
                assert entry['usage']['prompt_tokens'] == len(body['prompt'] + answer['prompt'])
            else:
                assert entry['usage']['prompt_tokens'] == len(body['prompt'])
        planned += len(bodies)
    assert second_calls == 3 * 4  # LongBench v2's three chains of thought, 4 records each
    keys = [line['key'] for line in received(tmp_path)]
    assert len(keys) == len(set(keys)) == planned + second_calls  # every request asked once
    report = json.loads((run / 'serve' / f'{model_cfg["abbr"]}.dispatch.json').read_text())
    assert report['answered'] == planned and sum(report['sent'].values()) == planned
    name = f'{model_cfg["abbr"]}.answers.dispatch.json'
    assert json.loads((run / 'serve' / name).read_text())['answered'] == second_calls
    # A resumed run whose prediction files are gone writes them again, byte for byte, from the
    # replies: nothing is asked again.
    files = (run / 'predictions').rglob('*.json')
    before = {p: p.read_bytes() for p in files if not p.name.endswith('.inference.json')}
    # and Ada-LEval's four, RULER's 13 (each task at 4k), LongBench v2's nine one-call datasets
    # and three chains of thought, OpenAI MRCR's three (MRCR v2's 8k rows do not fit the demo's
    # 4k window)
    assert len(before) == len(cfg.datasets) == len(KEPT) + 4 + 13 + 12 + 3
    for path in before:
        path.unlink()
    again = run_opencompass(config, tmp_path, env, '-m', 'infer', '-r')
    assert {p: p.read_bytes() for p in before} == before
    assert len(received(tmp_path)) == planned + second_calls
    assert f'{planned} requests planned; {planned} answered by an earlier run' in again.stdout
    assert f'{second_calls} answer calls planned; {second_calls} answered by an' in again.stdout
    # The secret given by name is in no file of the run, its config dump included.
    assert not [p for p in run.rglob('*') if p.is_file() and SECRET.encode() in p.read_bytes()]


@pytest.mark.parametrize(
    ('settings', 'message'),
    [
        (dict(server_argv='python -m my.server --port {port}'), 'server_argv must be None'),
        (dict(server_argv=['python', 3]), 'server_argv must be None'),
        (dict(replicas=2, quorum=3), 'quorum=3 is more than replicas=2'),
        (dict(max_restarts=-1), 'max_restarts must be a whole number >= 0'),
        (dict(max_reply_bytes=10), 'max_reply_bytes must be a whole number >= 1024'),
        (dict(replica_env_from='HF_TOKEN'), 'replica_env_from must be a list of environment'),
        (
            dict(replica_env_from=['HF TOKEN']),
            "replica_env_from must be a list of environment variable names, and 'HF TOKEN' is not",
        ),
        (
            dict(replica_env={'HF_TOKEN': 'hf_abcdefghijklmnopqrstuvwx'}),
            "replica_env['HF_TOKEN'] looks like a secret given literally (its name says token)",
        ),
        (
            dict(replica_env={'EXTRA': 'sk-abcdefghijklmnopqrstuvwxyz'}),
            "replica_env['EXTRA'] looks like a secret given literally (its value has the form",
        ),
    ],
)
def test_more_settings_are_refused_when_the_runner_is_built(settings, message):
    with pytest.raises(ModelConfigError, match=f'^ServeOnceRunner: {re.escape(message)}'):
        ServeOnceRunner(task=TASK, **settings)


# The runner's own steps in this process (plan, serve, the tasks rewritten), on paced replicas.

SMALL = ('LVEval_factrecall_en_16k', 'LVEval_loogle_SD_mixup_64k')


@pytest.fixture(scope='module')
def stage(tmp_path_factory):
    """Demo data, a tiny model and two LV-Eval dataset configs reading it."""
    from opencompass_lveval.cli import main
    from opencompass_lveval.testing import save_tiny_llama

    root = tmp_path_factory.mktemp('stage')
    assert main(['data', 'synth', str(root / 'data'), '--count', '2']) == 0
    model = save_tiny_llama(root / 'tiny', 4096)
    cfg = load_config('eval_demo_serve.py')
    datasets = [dict(d, path=str(root / 'data')) for d in cfg.datasets if d['abbr'] in SMALL]
    return root, dict(cfg.models[0], path=str(model)), datasets


def paced_runner(root: Path, **settings) -> ServeOnceRunner:
    paced = [sys.executable, '-m', 'opencompass_lveval.testing.paced_server', '--port', '{port}']
    paced += ['--tokens-per-s', '500000', '--log', str(root / 'paced.jsonl')]
    chosen = dict(server_argv=paced, cap_tokens=20000, ready_timeout_s=60, plan_workers=1,
                  placement_settings=dict(num_cpus=0.5))  # fmt: skip
    chosen.update(settings)
    return ServeOnceRunner(task=TASK, **chosen)


def said_by_the_runner(call) -> str:
    """What OpenCompass's logger says while ``call`` runs."""
    import logging

    from opencompass.utils import get_logger

    lines = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())
    get_logger().addHandler(handler)
    try:
        call()
    finally:
        get_logger().removeHandler(handler)
    return '\n'.join(lines)


def answers_of(model_cfg: dict, datasets: list) -> list[str]:
    """What the materialising task's model answers for every record, as the inferencer asks."""
    from opencompass.registry import ICL_PROMPT_TEMPLATES
    from opencompass.utils import build_dataset_from_cfg, build_model_from_cfg

    from opencompass_lveval.models.settings import answer_length

    model, answers = build_model_from_cfg(model_cfg), []
    for dataset_cfg in datasets:
        dataset = build_dataset_from_cfg(dataset_cfg)
        template = ICL_PROMPT_TEMPLATES.build(dataset_cfg['infer_cfg']['prompt_template'])
        for index in range(len(dataset.test)):
            prompt = template.generate_item(dataset.test[index], output_field='answers')
            answers += model.generate_from_template(
                [prompt], max_out_len=answer_length(model_cfg, dataset_cfg)
            )
    return answers


def expected_answers(model_cfg: dict, datasets: list, engine: str) -> list[str]:
    """The paced server's answer to each record's ids, made from the model config's own
    builder and the served name."""
    from opencompass_lveval.serving.plan import RenderedPair
    from opencompass_lveval.serving.request import served_model_name

    found = []
    for dataset_cfg in datasets:
        meta, records = RenderedPair(model_cfg, dataset_cfg).open()
        model = served_model_name(engine)
        found += [paced_answer({'model': model, 'prompt': b.ids, **meta['sampling']})
                  for _, b in records]  # fmt: skip
    return found


@pytest.mark.slow  # two configs planned and served, then materialised: seconds
def test_two_configs_on_one_checkpoint_are_both_served(stage, tmp_path):
    """Inputs 'exact' beside 'official' on the same weights share one engine, and each config's
    requests are planned and answered (only the first was: the second failed with MissingReply
    after the replicas stopped)."""
    root, model, datasets = stage
    configs = [dict(model, abbr='tiny-exact'), dict(model, abbr='tiny-official', inputs='official')]
    tasks = [dict(models=[m], datasets=[datasets], work_dir=str(tmp_path)) for m in configs]
    runner = paced_runner(tmp_path)
    served = runner.serve(tasks)
    engines = {task['models'][0]['served_identity'] for task in served}
    assert len(engines) == 1  # one engine, one set of replicas
    for config, task in zip(configs, served):
        expected = expected_answers(config, datasets, *engines)
        assert answers_of(task['models'][0], task['datasets'][0]) == expected
    assert expected_answers(configs[0], datasets, *engines) != expected  # other ids, answers
    lines = [json.loads(x) for x in (tmp_path / 'paced.jsonl').read_text().splitlines()]
    asked = [line['key'] for line in lines if line['event'] == 'received']
    assert len(asked) == len(set(asked)) == 8  # 2 configs x 2 datasets x 2 records, each once


@pytest.mark.slow
def test_every_config_is_planned_before_any_replica_starts(stage, tmp_path):
    """A later model's planning error stops the stage before any GPU is spent (it came after
    the earlier model had been served)."""
    root, model, datasets = stage
    broken = [dict(d, path=str(tmp_path / 'nowhere')) for d in datasets]
    tasks = [
        dict(models=[dict(model, abbr='first')], datasets=[datasets], work_dir=str(tmp_path)),
        dict(models=[dict(model, abbr='second', max_seq_len=2048)], datasets=[broken],
             work_dir=str(tmp_path)),
    ]  # fmt: skip
    with pytest.raises(Exception, match='nowhere'):
        paced_runner(tmp_path).serve(tasks)
    assert not (tmp_path / 'paced.jsonl').exists()  # no replica ever started


@pytest.mark.slow
def test_secrets_reach_the_replicas_by_name_and_nothing_in_the_run_folder(
    stage, tmp_path, monkeypatch
):
    """``replica_env_from``: the replica gets the variable from this shell (a server that does
    not see it exits), and its value is nowhere under the run folder; a rerun (-r) reuses every
    reply and says so."""
    root, model, datasets = stage
    monkeypatch.setenv('LVEVAL_TEST_TOKEN', SECRET)
    check = f'test "$LVEVAL_TEST_TOKEN" = {SECRET} || exit 7; exec "$@"'
    paced = ['sh', '-c', check, 'sh', sys.executable, '-m', 'opencompass_lveval.testing.paced_server',
             '--port', '{port}', '--tokens-per-s', '500000']  # fmt: skip
    tasks = [dict(models=[model], datasets=[datasets], work_dir=str(tmp_path))]
    runner = paced_runner(
        tmp_path, server_argv=paced, replica_env_from=['LVEVAL_TEST_TOKEN'], max_restarts=0
    )
    runner.serve(tasks)
    said = said_by_the_runner(lambda: runner.serve(tasks))  # the second time: every reply reused
    assert (
        'tiny-llama-vllm: 4 requests planned; 4 answered by an earlier run of this folder' in said
    )
    for path in tmp_path.rglob('*'):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_the_log_reader_names_the_serving_errors(tmp_path):
    """A task that fails on a missing reply, or a refused request, has its error line found by
    the package's own log reader (it said "its log names no error": the names lacked 'Error')."""
    import traceback

    from opencompass_lveval.leaderboard.runs import first_error
    from opencompass_lveval.serving.dispatch import RefusedRequestError
    from opencompass_lveval.serving.served import MissingReplyError

    for kind in (MissingReplyError, RefusedRequestError):
        try:
            raise kind('tiny: no reply in serve/replies for a prompt of 812 tokens')
        except kind:
            log = tmp_path / f'{kind.__name__}.out'
            log.write_text('Task [tiny/LVEval_cmrc_mixup_16k]\n' + traceback.format_exc())
        assert first_error(log) == (
            f'{kind.__module__}.{kind.__name__}: tiny: no reply in serve/replies for a prompt '
            'of 812 tokens'
        )


@pytest.mark.slow
def test_a_stored_reply_not_of_its_request_is_not_a_prediction(stage, tmp_path):
    """A reply copied over another request's file in the store is refused when the predictions
    are written, naming the entry (it became that record's prediction)."""
    from opencompass_lveval.serving.served import MissingReplyError

    root, model, datasets = stage
    tasks = [dict(models=[model], datasets=[datasets], work_dir=str(tmp_path))]
    served = paced_runner(tmp_path).serve(tasks)[0]
    replies = sorted(Path(served['models'][0]['reply_store']).rglob('*.json'))
    replies[1].write_bytes(replies[0].read_bytes())
    with pytest.raises(MissingReplyError, match=r'the stored one is not its answer \(.*its key is'):
        answers_of(served['models'][0], datasets)


@pytest.mark.slow  # a Ray cluster of this machine: seconds to start
def test_planning_spreads_over_a_ray_cluster(stage, tmp_path):
    """With placement='ray', the pairs are planned as Ray tasks on the cluster's nodes (a head
    of the test's own, found by the placement's address), into the same files an in-process
    plan writes."""
    from ray_clusters import ray_head

    root, model, datasets = stage
    tasks = [dict(models=[model], datasets=[datasets], work_dir=str(tmp_path / 'here'))]
    here = paced_runner(tmp_path).plan(tasks, str(tmp_path / 'here'))
    with ray_head(num_cpus=2, num_gpus=0) as address:
        cluster = dict(address=address, num_cpus=0.5)
        runner = paced_runner(tmp_path, placement='ray', placement_settings=cluster)
        spread = runner.plan(tasks, str(tmp_path / 'there'))
    [(name, config)] = here.items()
    folders = [Path(config.folder), Path(spread[name].folder)]
    files = [sorted(p.name for p in folder.iterdir()) for folder in folders]
    assert files[0] == files[1] and len(files[0]) == 3 * len(datasets)
    for file in files[0]:
        assert (folders[0] / file).read_bytes() == (folders[1] / file).read_bytes(), file


HOLD = """
import sys, time
from opencompass_lveval.runner.run_lock import hold_run_folder
hold_run_folder(sys.argv[1])
print('held', flush=True)
time.sleep(60)
"""


def test_a_run_folder_another_driver_holds_is_refused_before_any_planning(tmp_path):
    """Two drivers on one run folder would each plan and start replicas and ask every request
    twice: the second stops first, naming the first."""
    work = tmp_path / 'run'
    driver = subprocess.Popen([sys.executable, '-c', HOLD, str(work)], stdout=subprocess.PIPE)
    try:
        assert driver.stdout.readline() == b'held\n'
        task = dict(
            models=[dict(type=LongContextVLLM, path='x')], datasets=[[]], work_dir=str(work)
        )
        with pytest.raises(SystemExit, match=f'RunFolderInUseError: {work} is in use by another'):
            paced_runner(tmp_path).launch([task])
    finally:
        driver.kill()
        driver.wait()
    assert sorted(p.name for p in work.iterdir()) == ['logs']  # no plan, no store


def answer_bodies(model_cfg: dict, dataset_cfg: dict, first: list[dict]) -> list[Optional[dict]]:
    """The second request of each record of a two-call dataset, given its first request's body
    and the paced server's reply to it: the dataset's answer prompt for the record and that
    reply, rendered by the model's parser and built by its builder, the first's sampling but
    the answer call's length; None where no second call is asked."""
    from opencompass.utils import build_dataset_from_cfg

    from opencompass_lveval.framework.answer_call import answer_call_of
    from opencompass_lveval.models.template import prompt_parser

    call, dataset = answer_call_of(dataset_cfg), build_dataset_from_cfg(dataset_cfg)
    builder = LongContextVLLM.config_builder(model_cfg)
    parser = prompt_parser(model_cfg.get('meta_template'))
    bodies = []
    for index, body in enumerate(first):
        prompt = call.prompt_for(dataset.test[index], paced_answer(body))
        if prompt is None:
            bodies.append(None)
            continue
        ids = builder.build(parser.parse_template(prompt, mode='gen'), call.max_out_len).ids
        bodies.append({**body, 'prompt': list(ids), 'max_tokens': call.max_out_len})
    return bodies


def asked_of(root: Path) -> list[str]:
    """The keys of the requests the paced replicas of ``paced_runner(root)`` received."""
    lines = [json.loads(x) for x in (root / 'paced.jsonl').read_text().splitlines()]
    return [line['key'] for line in lines if line['event'] == 'received']


def two_call_stage(stage, folder: Path) -> tuple[dict, dict, list]:
    """The stage's model, LongBench v2's short chain of thought on its demo data, and the first
    request's body of each of its records, as ``paced_runner(folder)`` sends them."""
    from opencompass_lveval.framework.benchmarks import named
    from opencompass_lveval.serving.plan import RenderedPair
    from opencompass_lveval.serving.request import engine_identity, served_model_name

    root, model, _ = stage
    datasets = named('longbench_v2').demo_datasets(str(root / 'data'))
    [cot] = [d for d in datasets if d['abbr'] == 'LongBenchV2_cot_short']
    served = served_model_name(engine_identity(model, paced_runner(folder).settings['server_argv']))
    meta, records = RenderedPair(model, cot).open()
    return model, cot, [{'model': served, 'prompt': b.ids, **meta['sampling']} for _, b in records]


def test_a_two_call_answer_is_asked_once_its_first_reply_is_stored(stage, tmp_path):
    """LongBench v2's chain of thought under the runner: the second requests, planned from the
    stored first replies, are asked of the same replicas (started once), each request once, and
    TwoCallGenInferencer under ServedVLLM finds both replies; a second stage on the same folder
    (-r) asks nothing and starts no replica."""
    from opencompass.openicl.icl_retriever import ZeroRetriever
    from opencompass.registry import ICL_PROMPT_TEMPLATES
    from opencompass.utils import build_dataset_from_cfg, build_model_from_cfg

    from opencompass_lveval.framework.answer_call import answer_call_of
    from opencompass_lveval.framework.two_calls import TwoCallGenInferencer

    model, cot, first = two_call_stage(stage, tmp_path)
    second = answer_bodies(model, cot, first)
    assert len(first) == len(second) > 0 and None not in second  # paced replies are never empty
    tasks = [dict(models=[model], datasets=[[cot]], work_dir=str(tmp_path))]
    served = paced_runner(tmp_path).serve(tasks)[0]
    asked = asked_of(tmp_path)
    assert sorted(asked) == sorted(body_key(b) for b in first + second)
    launched = (tmp_path / 'logs' / 'serve' / model['abbr'] / 'replicas.jsonl').read_text()
    assert launched.count('"launched"') == 1  # both rounds on the replica started once
    dataset = build_dataset_from_cfg(cot)
    inferencer = TwoCallGenInferencer(
        build_model_from_cfg(served['models'][0]),
        max_out_len=first[0]['max_tokens'],
        answer_call=answer_call_of(cot).config(),
    )
    template = ICL_PROMPT_TEMPLATES.build(cot['infer_cfg']['prompt_template'])
    predictions = inferencer.inference(
        ZeroRetriever(dataset), prompt_template=template, output_json_filepath=str(tmp_path),
        output_json_filename='cot.json',
    )  # fmt: skip
    assert predictions == [paced_answer(body) for body in second]
    saved = json.loads((tmp_path / 'cot.json').read_text())
    assert [saved[str(i)]['first_reply'] for i in range(len(first))] == [
        paced_answer(body) for body in first
    ]
    said = said_by_the_runner(lambda: paced_runner(tmp_path).serve(tasks))
    assert len(asked_of(tmp_path)) == len(asked)
    assert f'{len(second)} answered by an earlier run of this folder' in said
    assert (tmp_path / 'logs' / 'serve' / model['abbr'] / 'replicas.jsonl').read_text() == launched


def test_a_first_reply_missing_from_the_store_stops_the_answer_calls_naming_the_record(
    stage, tmp_path
):
    """The second calls are planned from the stored first replies: one that is not there (its
    request unanswered, or its entry another's) is an error naming the record and the fix,
    never an answer prompt made of something else."""
    from opencompass_lveval.serving.plan import MissingFirstReplyError, plan_jobs
    from opencompass_lveval.serving.store import ReplyStore

    model, cot, first = two_call_stage(stage, tmp_path)
    runner = paced_runner(tmp_path)
    tasks = [dict(models=[model], datasets=[[cot]], work_dir=str(tmp_path))]
    [config] = runner.plan(tasks, str(tmp_path)).values()
    jobs = runner.answer_jobs(str(tmp_path), config.engine, [config])
    with pytest.raises(
        MissingFirstReplyError,
        match=r'LongBenchV2_cot_short record #0: its first call \(key \w+\) has no reply in .*none '
        r'stored.*run the inference stage again \(-r keeps what was answered\)',
    ):
        plan_jobs(jobs)
    # A reply under the first record's key that is not its answer (another model's) is refused.
    from opencompass_lveval.serving.plan import planned_requests
    from opencompass_lveval.serving.request import served_model_name

    [request] = [r for r in planned_requests([config.folder], served_model_name(config.engine))
                 if r.label.endswith('#0')]  # fmt: skip
    ReplyStore(tmp_path / 'serve' / 'replies' / config.engine).put_once(
        {**request.expected(), 'model': 'another', 'text': 'The correct answer is (A)',
         'completion_tokens': 8, 'latency_s': 0.1, 'finish_reason': 'stop'}
    )  # fmt: skip
    with pytest.raises(MissingFirstReplyError, match=r'record #0: .*its model is .another.'):
        plan_jobs(jobs)
