"""Bad and odd inputs: each gives a clear error naming the file, line or item and the fix, or a
counted outcome, never a crash, a silent wrong score or unbounded work.

``CASES`` runs each case the way a user meets it (mostly through the ``lveval`` command) and
returns what the user sees. The reliability table (docs/reliability.md) is checked against it:
every row names a case here, and the text it quotes in backticks must appear in what the case
gives.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import re
import time
import zipfile
from pathlib import Path
from unittest import mock

import pytest
from parity_data import DATA
from servers import HostileServer, completion, drip, echo_key, huge, redirect, throttled

from opencompass_lveval.cli import main

REPO = Path(__file__).resolve().parents[1]
RELIABILITY = REPO / 'docs' / 'reliability.md'


def lveval(*argv) -> str:
    """What `lveval ARGV` prints (stdout and stderr) and its exit code."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return f'{out.getvalue()}{err.getvalue()}exit {code}'


def lines(path: Path, records) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(''.join(json.dumps(r, ensure_ascii=False) + '\n' for r in records), 'utf-8')
    return path


def lveval_record(i=0, **changes) -> dict:
    return {
        'input': f'question {i}',
        'context': f'context {i}',
        'answers': [f'answer {i}'],
        'answer_keywords': '',
        **changes,
    }


def stale_copy_is_ignored_and_named(tmp: Path) -> str:
    lines(tmp / 'cmrc_mixup_16k.jsonl', [{'pred': '北京', 'answers': ['北京']}])
    lines(tmp / 'cmrc_mixup_16k.old.jsonl', [{'pred': '上海', 'answers': ['北京']}])
    out = lveval('score', tmp)
    assert json.loads((tmp / 'eval_result' / 'result.json').read_text()) == {
        'cmrc_mixup_16k': 100.0
    }
    return out


def non_string_predictions_are_counted(tmp: Path) -> str:
    lines(
        tmp / 'loogle_SD_mixup_16k.jsonl',
        [
            {'pred': 42, 'answers': ['42']},
            {'pred': ['John Smith'], 'answers': ['John Smith']},
            {'pred': {'a': 1}, 'answers': ['x']},
            {'pred': 'x', 'answers': ['x']},
        ],
    )
    out = lveval('score', tmp)
    assert json.loads((tmp / 'eval_result' / 'result.json').read_text()) == {
        'loogle_SD_mixup_16k': 75.0
    }
    from datasets import Dataset

    from opencompass_lveval.lveval.evaluator import LVEvalEvaluator

    keywords = Dataset.from_dict({'answer_keywords': ['', '', '']})
    result = LVEvalEvaluator('qa_f1_score').score(
        [42, ['x'], None], [['42'], ['x'], ['y']], keywords
    )
    assert result['score'] == round(100 * 2 / 3, 2)
    return out + result['diagnostics']


def responses(tmp: Path, records) -> Path:
    return lines(tmp / 'responses.jsonl', records)


def num_choice_true_is_refused(tmp: Path) -> str:
    path = responses(tmp, [{'prediction': 'A1', 'answer': 'A1', 'num_choice': True}])
    return lveval('score-adaleval', '--task', 'bestanswer', path)


def impossible_gold_designation_is_refused(tmp: Path) -> str:
    path = responses(tmp, [{'prediction': 'A1', 'answer': 'A5', 'num_choice': 3}])
    out = lveval('score-adaleval', '--task', 'bestanswer', path)
    path = responses(tmp, [{'prediction': 'A1', 'answer': 'B2', 'num_choice': 3}])
    return out + lveval('score-adaleval', '--task', 'bestanswer', path)


def huge_num_choice_is_refused_at_once(tmp: Path) -> str:
    path = responses(tmp, [{'prediction': 'A7', 'answer': 'A7', 'num_choice': 1_000_000_000}])
    start = time.perf_counter()
    out = lveval('score-adaleval', '--task', 'bestanswer', '--extraction', 'official', path)
    assert time.perf_counter() - start < 1
    return out


def truncated_stackselect_is_refused(tmp: Path) -> str:
    packed = DATA / 'data' / 'adaleval' / 'stackselect_1k.json.gz'
    records = json.loads(gzip.decompress(packed.read_bytes()))
    (tmp / 'stackselect_1k.json').write_text(json.dumps(records[:500]), 'utf-8')
    from opencompass_lveval.adaleval.data import load_task

    try:
        load_task('bestanswer', '1k', str(tmp))
    except ValueError as exc:
        return str(exc) + '\n' + lveval('data', 'check', tmp)
    raise AssertionError('a truncated file loaded')


def tsort_record(**changes) -> dict:
    return {'book_id': 1, 'para_offset': [0, 1, 2, 3], 'answer': [2, 1, 4, 3], **changes}


def tsort_three_parts_is_refused(tmp: Path) -> str:
    record = tsort_record(before='b', after='a', parts=['p1', 'p2', 'p3'])
    (tmp / 'textsort_2k.json').write_text(json.dumps([record]), 'utf-8')
    return lveval('data', 'check', tmp)


def tsort_book_too_short_is_refused(tmp: Path) -> str:
    book = tmp / 'short.txt'
    book.write_text('\n\n'.join(f'Paragraph {i} of a short story.' for i in range(40)), 'utf-8')
    out = lveval('build', 'tsort', '--books', book, '--setting', '2k', '--out', tmp / 'out')
    assert not (tmp / 'out' / 'textsort_2k.json').exists()
    book.write_text('\n\n'.join(f'Paragraph {i} ' + 'word ' * 60 for i in range(400)), 'utf-8')
    out += lveval(
        'build', 'tsort', '--books', book, '--setting', '2k', '--count', '50', '--out', tmp / 'out'
    )
    return out + f'\nrecords: {len(json.loads((tmp / "out" / "textsort_2k.json").read_text()))}'


def tsort_parts_of_wrong_types_are_refused(tmp: Path) -> str:
    record = tsort_record(before='b', after='a', parts=[1, None, {}, []])
    (tmp / 'textsort_2k.json').write_text(json.dumps([record]), 'utf-8')
    return lveval('data', 'check', tmp)


def tsort_empty_prompt_without_parts_is_refused(tmp: Path) -> str:
    (tmp / 'textsort_2k.json').write_text(json.dumps([tsort_record(prompt='')]), 'utf-8')
    return lveval('data', 'check', tmp)


def invalid_utf8_in_a_field_is_named(tmp: Path) -> str:
    path = lines(tmp / 'cmrc_mixup_16k.jsonl', [lveval_record(0)])
    with open(path, 'ab') as stream:
        stream.write(b'{"input": "q\xff\xfe", "context": "c", "answers": ["a"]}\n')
    from opencompass_lveval.lveval.dataset import LVEvalDataset

    try:
        LVEvalDataset.load(name='cmrc_mixup_16k', path=str(tmp))
    except ValueError as exc:
        return str(exc) + '\n' + lveval('data', 'check', tmp)
    raise AssertionError('invalid UTF-8 loaded')


def record_larger_than_arrows_block_loads(tmp: Path) -> str:
    big = lveval_record(1, context='word ' * 2_400_000)  # 12 MB, three times Arrow's block
    lines(tmp / 'factrecall_en_1000k.jsonl', [lveval_record(0), big, lveval_record(2)])
    from opencompass_lveval.lveval.dataset import LVEvalDataset

    table = LVEvalDataset.load(name='factrecall_en_1000k', path=str(tmp))
    assert len(table[1]['context']) == len(big['context'])
    return f'loaded {table.num_rows} records\n' + lveval('data', 'check', tmp)


def zip_with_crc_error_is_named(tmp: Path) -> str:
    archive = tmp / 'cmrc_mixup.zip'
    with zipfile.ZipFile(archive, 'w', zipfile.ZIP_STORED) as zipped:
        zipped.writestr(
            'cmrc_mixup/cmrc_mixup_16k.jsonl',
            json.dumps(lveval_record(0, context='c' * 200)) + '\n',
        )
    raw = bytearray(archive.read_bytes())
    raw[raw.find(b'cccc')] = ord('d')
    archive.write_bytes(bytes(raw))
    from opencompass_lveval.lveval.dataset import LVEvalDataset

    try:
        LVEvalDataset.load(name='cmrc_mixup_16k', path=str(tmp))
    except ValueError as exc:
        return str(exc) + '\n' + lveval('data', 'check', tmp)
    raise AssertionError('a damaged zip loaded')


def gbk_prediction_file_is_named(tmp: Path) -> str:
    text = json.dumps({'pred': '北京', 'answers': ['北京']}, ensure_ascii=False) + '\n'
    (tmp / 'cmrc_mixup_16k.jsonl').write_bytes(text.encode('gbk'))
    return lveval('score', tmp)


def eight_million_digit_tsort_prediction_is_scored(tmp: Path) -> str:
    path = responses(
        tmp,
        [
            {'prediction': '1' * 8_000_000, 'answer': [1, 2, 3, 4]},
            {'prediction': 'Answer: [1, 2, 3, 4]', 'answer': [1, 2, 3, 4]},
        ],
    )
    out = lveval('score-adaleval', '--task', 'tsort', path)
    out += lveval('score-adaleval', '--task', 'tsort', '--extraction', 'official', path)
    return out


def tokenizer_only_folder(tmp: Path, chat_template: bool = True) -> Path:
    """A model folder with a tokenizer and no weights: nothing can load weights from it."""
    from opencompass_lveval.testing import train_tokenizer

    tokenizer = train_tokenizer()
    if not chat_template:
        tokenizer.chat_template = None
    tokenizer.save_pretrained(tmp / 'model')
    return tmp / 'model'


def missing_model_folder_is_named(tmp: Path) -> str:
    from opencompass_lveval.models.hf import LongContextHF

    try:
        LongContextHF(path='./no/such/model', max_seq_len=4096)
    except ValueError as exc:
        return str(exc)
    raise AssertionError('a missing model folder was accepted')


def window_too_small_fails_before_weights(tmp: Path) -> str:
    from opencompass_lveval.runner.infer_task import check_before_weights

    model = dict(
        type='opencompass_lveval.models.hf.LongContextHF',
        abbr='tiny',
        path=str(tokenizer_only_folder(tmp)),
        max_seq_len=70,
    )
    dataset = dict(abbr='LVEval_cmrc_mixup_16k', infer_cfg=dict(inferencer=dict(max_out_len=64)))
    try:
        check_before_weights(model, [dataset])
    except ValueError as exc:
        return str(exc)
    raise AssertionError('a window too small for the answer passed')


def _refused_before_weights(model: dict, datasets: list) -> str:
    from opencompass_lveval.runner.infer_task import check_before_weights

    try:
        check_before_weights(model, datasets)
    except ValueError as exc:
        return str(exc)
    raise AssertionError(f'{model} passed the check before the weights')


HF = 'opencompass_lveval.models.hf.LongContextHF'


def window_past_positions_is_refused(tmp: Path) -> str:
    from opencompass_lveval.testing import save_tiny_llama

    folder = save_tiny_llama(tmp / 'model')  # max_position_embeddings 512
    return _refused_before_weights(
        dict(type=HF, abbr='tiny', path=str(folder), max_seq_len=4096), []
    )


def tokenizer_past_embedding_is_refused(tmp: Path) -> str:
    from opencompass_lveval.testing import save_tiny_llama, train_tokenizer

    small = train_tokenizer(['a small text, a small vocabulary'])
    folder = save_tiny_llama(tmp / 'model', tokenizer=small)
    train_tokenizer().save_pretrained(folder)  # another model's tokenizer, over this one's
    return _refused_before_weights(
        dict(type=HF, abbr='tiny', path=str(folder), max_seq_len=512), []
    )


def answer_length_not_positive_is_refused(tmp: Path) -> str:
    model = dict(type=HF, abbr='tiny', path=str(tokenizer_only_folder(tmp)), max_seq_len=512)

    def dataset(**inferencer) -> dict:
        inferencer = dict(type='GenInferencer', **inferencer)
        return dict(abbr='LVEval_cmrc_mixup_16k', infer_cfg=dict(inferencer=inferencer))

    model_zero = _refused_before_weights({**model, 'max_out_len': 0}, [dataset()])
    dataset_negative = _refused_before_weights(model, [dataset(max_out_len=-5)])
    return f'{model_zero}\n{dataset_negative}'


def hub_id_not_here_is_answered_at_once(tmp: Path) -> str:
    """The documented `lveval inputs` command on a machine without the model or a network: one
    line at once, as `--count-only` gives it."""
    import huggingface_hub.constants

    cache, huggingface_hub.constants.HF_HUB_CACHE = huggingface_hub.constants.HF_HUB_CACHE, str(tmp)
    try:
        start = time.perf_counter()
        out = lveval('inputs', REPO / 'configs' / 'eval_lveval.py', '--out', tmp / 'inputs.jsonl',
                     '--models', 'chatglm3-6b-32k-vllm', '--limit', '5')  # fmt: skip
        return f'{out}\nanswered in {time.perf_counter() - start:.0f} s'
    finally:
        huggingface_hub.constants.HF_HUB_CACHE = cache


def broken_plugins_are_left_out(tmp: Path) -> str:
    """Installed plugins that exit or run argparse at import, are abstract or take a built-in's
    name, each its own distribution; `lveval score` in a fresh process."""
    import os
    import subprocess
    import sys

    from test_benchmarks import ABSTRACT, ARGPARSE, pip_install

    site = pip_install(
        tmp,
        {
            'exits': 'import sys\n\nsys.exit(0)\n',
            'argparse': ARGPARSE
            + 'parser.add_argument("--size", required=True)\nparser.parse_args()\n',
            'abstract': ABSTRACT + '    name, title = "abstract", "Abstract"\n',
            'twin': 'from opencompass_lveval.lveval.benchmark import LVEval as Bench\n',
        },
    )
    lines(tmp / 'predictions' / 'cmrc_mixup_16k.jsonl', [{'pred': '北京', 'answers': ['北京']}])
    done = subprocess.run(
        [sys.executable, '-m', 'opencompass_lveval.cli', 'score', str(tmp / 'predictions')],
        env={**os.environ, 'PYTHONPATH': os.pathsep.join([str(site), str(REPO)])},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return f'{done.stdout}{done.stderr}exit {done.returncode}'


def tokenizer_without_chat_template_is_named(tmp: Path) -> str:
    from opencompass_lveval.models.base import LongContextModel
    from opencompass_lveval.models.settings import InputSettings

    try:
        folder = str(tokenizer_only_folder(tmp, False))
        LongContextModel.input_builder(InputSettings(path=folder, window=4096))
    except ValueError as exc:
        return str(exc)
    raise AssertionError('a tokenizer without a chat template was used as a chat model')


def remote_code_is_off_by_default(tmp: Path) -> str:
    from opencompass_lveval.models.vllm import engine_kwargs

    return repr(engine_kwargs(str(tmp), 4096, {}, None, False, '0.33.0'))


def zero_and_negative_counts_are_refused(tmp: Path) -> str:
    return (
        lveval('inputs', 'config.py', '--out', tmp / 'x.jsonl', '--limit', '0')
        + lveval(
            'build', 'tsort', '--books', 'b.txt', '--setting', '2k', '--out', tmp, '--count', '-3'
        )
        + lveval('data', 'synth', tmp, '--scale', '0')
    )


def full_width_digit_level_is_no_level(tmp: Path) -> str:
    lines(tmp / 'data' / 'cmrc_mixup_1６k.jsonl', [lveval_record(0)])
    out = lveval('data', 'check', tmp / 'data')
    return out + lveval('build', 'replica', '--corpora', tmp, '--out', tmp, '--levels', '1６k')


def huge_level_is_refused_up_front(tmp: Path) -> str:
    start = time.perf_counter()
    out = lveval(
        'build',
        'factrecall',
        '--language',
        'en',
        '--corpora',
        tmp,
        '--out',
        tmp / 'out',
        '--levels',
        '16k,100000k',
    )
    assert time.perf_counter() - start < 1 and not (tmp / 'out').exists()
    return out


def dataset_outside_out_is_refused(tmp: Path) -> str:
    items = lines(tmp / 'items.jsonl', [{'input': 'q', 'answers': ['a'], 'documents': ['d']}])
    out = lveval(
        'build',
        'mixup',
        '--items',
        items,
        '--dataset',
        '../../x',
        '--language',
        'en',
        '--out',
        tmp / 'out',
    )
    assert not list(tmp.parent.parent.glob('x_*.jsonl'))
    return out


def empty_data_dir_variable_is_named(tmp: Path) -> str:
    import os

    from opencompass_lveval.lveval import data

    try:
        with mock.patch.dict(os.environ, {'LVEVAL_DATA_DIR': ''}):
            data.locate(data.default_data_dir(), 'cmrc_mixup_16k')  # as LVEvalDataset.load does
    except ValueError as exc:
        return str(exc)
    raise AssertionError('an empty LVEVAL_DATA_DIR read the current folder')


def fifo_in_data_folder_is_skipped(tmp: Path) -> str:
    import os

    lines(tmp / 'cmrc_mixup_512k.jsonl', [lveval_record(0)])
    os.mkfifo(tmp / 'lic_mixup_512k.jsonl')
    return lveval('data', 'check', tmp)


def mixup_item_fields_are_checked(tmp: Path) -> str:
    good = {'input': 'q', 'answers': ['a'], 'documents': ['d']}
    out = ''
    for bad in ({'documents': 'd e f'}, {'answer_keywords': ['a']}):
        items = lines(tmp / 'items.jsonl', [good, {**good, **bad}])
        out += lveval(
            'build',
            'mixup',
            '--items',
            items,
            '--dataset',
            'mine',
            '--language',
            'en',
            '--out',
            tmp / 'out',
        )
    return out


def bad_rules_are_named(tmp: Path) -> str:
    items = lines(tmp / 'items.jsonl', [{'input': 'q', 'answers': ['a'], 'documents': ['d']}])
    out = ''
    for rules in ('{"": "X"}', '{"the": 1}', '{"the": NaN}'):
        (tmp / 'rules.json').write_text(rules, 'utf-8')
        out += lveval(
            'build',
            'mixup',
            '--items',
            items,
            '--rules',
            tmp / 'rules.json',
            '--dataset',
            'mine',
            '--language',
            'en',
            '--out',
            tmp / 'out',
        )
    return out


def bestanswer_source_is_checked(tmp: Path) -> str:
    question = {
        'question_id': 'q',
        'question': 'How?',
        'all_answers': ['a', 'b'],
        'answer': 'A1',
        'tags': ['python'],
    }
    out = ''
    for bad in ({'answer': 'A99'}, {'tags': None}):
        record = {k: v for k, v in {**question, **bad}.items() if v is not None}
        (tmp / 'source.json').write_text(json.dumps([question, record]), 'utf-8')
        out += lveval(
            'build',
            'bestanswer',
            '--source',
            tmp / 'source.json',
            '--setting',
            '4k',
            '--out',
            tmp / 'out',
        )
    return out


def run_folder(tmp: Path, config: str, results: dict) -> Path:
    """A run folder as OpenCompass leaves it: a dumped config and result files of model m."""
    run = tmp / 'work' / '20260101_000000'
    (run / 'configs').mkdir(parents=True)
    (run / 'configs' / 'c.py').write_text(config)
    for dataset, content in results.items():
        lines(run / 'results' / 'm' / f'{dataset}.json', []).write_text(content)
    return run


PLAIN_CONFIG = "models = [dict(abbr='m')]\ndatasets = [dict(abbr='LVEval_cmrc_mixup_16k')]\n"


def run_folder_code_is_not_run(tmp: Path) -> str:
    marker = tmp / 'ran'
    out = ''
    for code in (
        f"models = [dict(abbr=__import__('pathlib').Path({str(marker)!r}).touch())]\n",
        f'exec("open({str(marker)!r}, \'w\')")\nmodels = []\n',  # a statement, not an assignment
    ):
        run = run_folder(tmp / str(len(out)), code, {'LVEval_cmrc_mixup_16k': '{"score": 10.0}'})
        out += lveval('leaderboard', run.parent, '--out', tmp / 'board')
    return out + f'\nmarker file exists: {marker.exists()}'


def result_that_is_not_a_score_is_named(tmp: Path) -> str:
    out = ''
    for result in ('{"score": true}', '{"score": 10.0, "provenance": [1, 2]}'):
        run = run_folder(tmp / str(len(out)), PLAIN_CONFIG, {'LVEval_cmrc_mixup_16k': result})
        out += lveval('leaderboard', run.parent, '--out', tmp / 'board')
    return out


def refused_run_fails_strict(tmp: Path) -> str:
    run = run_folder(
        tmp, "models = [dict(abbr='big')]\ndatasets = [dict(abbr='LVEval_cmrc_mixup_16k')]\n", {}
    )
    log = run / 'logs' / 'infer' / 'big' / 'LVEval_cmrc_mixup_16k.out'
    lines(log, []).write_text('GPURequestError: asks for 8 GPUs, the nodes offer at most 4\n')
    return lveval('leaderboard', tmp / 'work', '--out', tmp / 'board', '--strict')


def synthetic_only_board_fails_strict(tmp: Path) -> str:
    result = '{"score": 90.0, "provenance": {"data_origin": "synthetic"}}'
    run_folder(tmp, PLAIN_CONFIG, {'LVEval_cmrc_mixup_16k': result})
    return lveval('leaderboard', tmp / 'work', '--out', tmp / 'board', '--strict')


def forged_model_name_stays_one_cell(tmp: Path) -> str:
    name = 'ok | FAKE | 99.00 |<img src=x onerror=alert(1)>'
    run = run_folder(tmp, PLAIN_CONFIG, {})
    lines(run / 'results' / name / 'LVEval_cmrc_mixup_16k.json', []).write_text('{"score": 10.0}')
    lveval('report', run)
    return (run / 'summary' / 'long_context_report.md').read_text('utf-8')


def failed_rebuild_keeps_the_data(tmp: Path) -> str:
    build = [
        'build',
        'factrecall',
        '--language',
        'en',
        '--levels',
        '1k',
        '--count',
        '3',
        '--out',
        tmp / 'data',
    ]
    lveval(*build, '--corpora', DATA / 'corpora')
    out = lveval(*build, '--corpora', tmp / 'corpra')
    kept = (tmp / 'data' / 'factrecall_en_1k.jsonl').read_text('utf-8').count('\n')
    return out + f'\nfactrecall_en_1k.jsonl after the failed rebuild: {kept} records'


def api_key_variable_unset_stops_before_requests(tmp: Path) -> str:
    import os

    from opencompass_lveval.models.zoo import api_entries
    from opencompass_lveval.runner.infer_task import check_before_weights

    model = dict(type='opencompass_lveval.models.api.LongContextAPI', **api_entries('lveval')[1])
    dataset = dict(abbr='LVEval_cmrc_mixup_16k', infer_cfg=dict(inferencer=dict(max_out_len=64)))
    saved = os.environ.pop('OPENAI_API_KEY', None)
    try:
        check_before_weights(model, [dataset])
    except ValueError as exc:
        return str(exc)
    finally:
        if saved is not None:
            os.environ['OPENAI_API_KEY'] = saved
    raise AssertionError('an unset key variable passed the pre-run check')


def api_setting_misspelled_is_named(tmp: Path) -> str:
    from opencompass_lveval.models.api import LongContextAPI

    config = dict(
        path='gpt-4-0613',
        max_seq_len=8192,
        tokenizer_path='cl100k_base',
        url='http://127.0.0.1:9/v1',
        system_promt='You are a helpful assistant.',
    )
    try:
        LongContextAPI.request_builder(config)
    except ValueError as exc:
        return str(exc)
    raise AssertionError('a misspelled API setting passed')


# The LLM judge, against real chat servers on 127.0.0.1 -------------------------------------------


def judged_predictions(tmp: Path) -> Path:
    """A prediction folder `lveval judge` takes: three cmrc_mixup answers."""
    records = [
        {'pred': f'answer {i}', 'answers': [f'answer {i}'], 'input': f'question {i}'}
        for i in range(3)
    ]
    return lines(tmp / 'preds' / 'cmrc_mixup_16k.jsonl', records).parent


def judge_config(tmp: Path, name: str, path: str, url: str) -> Path:
    config = tmp / f'{name}.py'
    config.write_text(
        f"judge = dict(type='LongContextAPI', abbr='judge', path={path!r}, url={url!r}, "
        "max_seq_len=8192, tokenizer_path='cl100k_base', retry=0)\n"
    )
    return config


def two_judges_under_one_name_are_asked_each(tmp: Path) -> str:
    from servers import ChatServer

    preds = judged_predictions(tmp)
    first, second = ChatServer(lambda prompt: '[9]'), ChatServer(lambda prompt: '[2]')
    try:
        out = lveval('judge', preds, '--config', judge_config(tmp, 'a', 'judge-a', first.url))
        out += lveval('judge', preds, '--config', judge_config(tmp, 'b', 'judge-b', second.url))
    finally:
        first.stop(), second.stop()
    return out + f'\nthe second judge was asked {len(second.asked)} times'


def an_echoing_judge_rates_nothing(tmp: Path) -> str:
    from servers import ChatServer

    preds = judged_predictions(tmp)
    echo = ChatServer(lambda prompt: prompt)
    try:
        out = lveval('judge', preds, '--config', judge_config(tmp, 'echo', 'echo', echo.url))
    finally:
        echo.stop()
    result = json.loads((preds / 'eval_result' / 'judge_result.json').read_text('utf-8'))
    return out + '\n' + result['cmrc_mixup_16k']['judge']['problems'][0]['problem']


def judge_counts_of_the_wrong_type_are_named(tmp: Path) -> str:
    from servers import ChatServer

    preds = judged_predictions(tmp)
    server = ChatServer(lambda prompt: '[9]')
    try:
        config = judge_config(tmp, 'a', 'judge-a', server.url)
        lveval('judge', preds, '--config', config)
        entry = next((preds / 'eval_result' / 'judge_cache').rglob('verdicts/*/*.json'))
        entry.write_text(json.dumps(dict(json.loads(entry.read_text()), prompt_tokens='abc')))
        out = lveval('judge', preds, '--config', config)
    finally:
        server.stop()
    result = {'score': 10.0, 'judge': {'samples': 3, 'rated': 3, 'prompt_tokens': 'abc'}}
    run = run_folder(tmp / 'run', PLAIN_CONFIG, {'LVEval_cmrc_mixup_16k': json.dumps(result)})
    return out + lveval('report', run)


# lveval compare -----------------------------------------------------------------------------------


def compared_run(tmp: Path, model: str, change=None) -> Path:
    """A run of one model on cmrc_mixup 16k: 40 records of one data file, the details naming
    each record as OpenCompass does, the score their mean; ``change`` edits the result."""
    abbr = 'LVEval_cmrc_mixup_16k'
    details = [{'example_abbr': f'{abbr}_{i}', 'score': [float(i % 2)]} for i in range(40)]
    result = {'score': 50.0, 'details': details, 'provenance': {'data_fingerprint': 'f1'}}
    if change:
        change(result)
    config = f'models = [dict(abbr={model!r})]\ndatasets = [dict(abbr={abbr!r})]\n'
    run = run_folder(tmp / model, config, {})
    lines(run / 'results' / model / f'{abbr}.json', []).write_text(json.dumps(result))
    return run


def compare_pairs_only_the_same_records(tmp: Path) -> str:
    def later_range(result):  # records 40 to 79 of the same file (another test_range)
        for index, detail in enumerate(result['details']):
            detail['example_abbr'] = f'LVEval_cmrc_mixup_16k_{40 + index}'

    def repeated(result):
        result['details'][1]['example_abbr'] = result['details'][0]['example_abbr']

    a = compared_run(tmp, 'a')
    out = ''
    for name, change in (('b', later_range), ('c', repeated), ('d', lambda r: r.update(score=3))):
        out += lveval('compare', a, compared_run(tmp, name, change))
    return out


def compare_refuses_scores_outside_the_metric(tmp: Path) -> str:
    a = compared_run(tmp, 'a')
    out = ''
    for name, score in (('b', -3.0), ('c', '1e400')):
        run = compared_run(tmp, name, lambda r, score=score: r['details'][0].update(score=[score]))
        path = run / 'results' / name / 'LVEval_cmrc_mixup_16k.json'
        path.write_text(path.read_text().replace('"1e400"', '1e400'))
        out += lveval('compare', a, run)
    return out


def compare_names_a_run_without_results(tmp: Path) -> str:
    empty = run_folder(tmp / 'empty', PLAIN_CONFIG, {})
    return lveval('compare', empty, compared_run(tmp, 'a'))


def api_model(url: str, tmp: Path, **settings):
    """A GPT row of the API client against ``url`` (a hostile local server), its replies cached
    under ``tmp``."""
    from opencompass_lveval.models.api import LongContextAPI

    config = dict(path='gpt-4-0613', max_seq_len=8192, tokenizer_path='cl100k_base', retry=0)
    return LongContextAPI(url=url, cache_dir=str(tmp / 'cache'), **{**config, **settings})


def ask(model) -> str:
    """What asking the model one prompt gives: its answer, or the error it raises."""
    try:
        return f'answer: {model.generate([[{"role": "HUMAN", "prompt": "Where?"}]], 8)[0]}'
    except Exception as exc:
        return f'{type(exc).__name__}: {exc}'


def cached_entries(tmp: Path) -> str:
    return f'\ncached entries: {len(list((tmp / "cache").rglob("*.json")))}'


def api_key_echoed_encoded_is_redacted(tmp: Path) -> str:
    import os

    key = 'sk-proj/Ab+Cd=Ef-SECRETPART-9'
    with mock.patch.dict(os.environ, {'LVEVAL_TEST_KEY': key}):
        with HostileServer(echo_key(401)) as server:
            out = ask(api_model(server.url, tmp, key_env='LVEVAL_TEST_KEY'))
        os.environ['LVEVAL_TEST_KEY'] = key + '\n'
        try:
            api_model(server.url, tmp, key_env='LVEVAL_TEST_KEY')
        except ValueError as exc:
            out += f'\n{exc}'
    assert 'SECRETPART' not in out
    return out


def api_drip_is_cut_at_the_deadline(tmp: Path) -> str:
    with HostileServer(drip(0.2)) as server:
        model = api_model(server.url, tmp, timeout=1)
        started = time.perf_counter()
        out = ask(model)
        assert time.perf_counter() - started < 3
        try:
            api_model(server.url, tmp, timeout=None)
        except ValueError as exc:
            out += f'\n{exc}'
    return out + cached_entries(tmp)


def api_retry_after_is_capped(tmp: Path) -> str:
    with HostileServer(throttled('3600')) as server:
        model = api_model(server.url, tmp, retry=2, max_wait_s=0.2)
        started = time.perf_counter()
        out = ask(model)
    return out + f'\nwaited {time.perf_counter() - started:.0f} s in all'


def api_huge_reply_is_refused(tmp: Path) -> str:
    with HostileServer(huge(200 * 2**20, declared=False)) as server:
        return ask(api_model(server.url, tmp)) + cached_entries(tmp)


def api_content_not_text_is_an_error(tmp: Path) -> str:
    with HostileServer(completion(None)) as server:
        out = ask(api_model(server.url, tmp)) + cached_entries(tmp)
    parts = [{'type': 'text', 'text': 'Par'}, {'type': 'text', 'text': 'is'}]
    with HostileServer(completion(parts)) as server:
        return out + '\n' + ask(api_model(server.url, tmp))


def api_redirect_is_not_followed(tmp: Path) -> str:
    with HostileServer(completion('the other host')) as other:
        with HostileServer(redirect(302, other.url + '/chat/completions')) as server:
            out = ask(api_model(server.url, tmp))
        return out + f'\nrequests to the other host: {len(other.requests)}' + cached_entries(tmp)


def api_impossible_url_is_refused_at_build(tmp: Path) -> str:
    out = ''
    for url in ('http:///v1', 'http://127.0.0.1:99999/v1'):
        try:
            api_model(url, tmp, retry=5)
        except ValueError as exc:
            out += f'{exc}\n'
    return out


def api_cache_entry_of_wrong_shape_is_asked_again(tmp: Path) -> str:
    import logging

    with HostileServer(completion('Paris')) as server:
        ask(api_model(server.url, tmp))
        [entry] = (tmp / 'cache').rglob('*.json')
        entry.write_text(json.dumps({**json.loads(entry.read_text()), 'prompt_tokens': 'abc'}))
        logged = io.StringIO()
        handler = logging.StreamHandler(logged)
        logging.getLogger('opencompass_lveval').addHandler(handler)
        try:
            out = ask(api_model(server.url, tmp))
        finally:
            logging.getLogger('opencompass_lveval').removeHandler(handler)
        return f'{logged.getvalue()}{out}\nrequests: {len(server.requests)}'


def perplexity_run_is_read(tmp: Path) -> str:
    config = (
        "models = [dict(abbr='m')]\ndatasets = [dict(abbr='AdaLEval_tsort_ppl_2k', infer_cfg="
        "dict(prompt_template=dict(template=dict({'[1, 2, 3, 4]': 'Answer: [1, 2, 3, 4]'}))))]\n"
    )
    run = run_folder(tmp, config, {})
    return lveval('leaderboard', run.parent, '--out', tmp / 'board')


def partitioned(tmp: Path, models: list, datasets: list) -> str:
    """What the shipped configs' partitioner says for these models and datasets: the run's stop
    message, or how many tasks it made."""
    from mmengine.config import ConfigDict

    from opencompass_lveval.runner.prelaunch import CheckedPartitioner

    combos = [
        dict(models=[ConfigDict(m) for m in models], datasets=list(map(ConfigDict, datasets)))
    ]
    work, out = tmp / 'run', str(tmp / 'run' / 'predictions')
    try:
        tasks = CheckedPartitioner(out_dir=out, num_worker=1).partition(combos, str(work), out)
    except SystemExit as stop:
        return f'{stop}\nexit 1; tasks started: 0'
    return f'{len(tasks)} tasks'


BM25 = dict(type='opencompass_lveval.models.baselines.ExtractiveBaseline', abbr='bm25')


def two_lveval_datasets(folder: Path) -> list:
    from opencompass_lveval.framework import benchmarks

    return benchmarks.named('lveval').configs(str(folder), ['16k'], ['cmrc_mixup', 'factrecall_en'])


def bad_model_folder_stops_the_run(tmp: Path) -> str:
    from opencompass_lveval.lveval.synthetic import write_synthetic

    write_synthetic(tmp / 'data', count=1, levels=['16k'])
    model = dict(type='opencompass_lveval.models.hf.LongContextHF', abbr='mine',
                 path='./no/such/model', max_seq_len=4096)  # fmt: skip
    return partitioned(tmp, [model, BM25], two_lveval_datasets(tmp / 'data'))


def missing_data_folder_stops_the_run(tmp: Path) -> str:
    from opencompass_lveval.framework import benchmarks

    return partitioned(tmp, [BM25], benchmarks.demo_datasets(str(tmp / 'data' / 'demo')))


def failed_inference_is_not_evaluated(tmp: Path) -> str:
    from opencompass.tasks import OpenICLEvalTask

    from opencompass_lveval.runner.local import CheckedLocalRunner

    datasets = two_lveval_datasets(tmp / 'data')
    config = (
        f"models = [dict(abbr='bm25')]\ndatasets = {[dict(abbr=d['abbr']) for d in datasets]}\n"
    )
    run = run_folder(tmp, config, {})
    lines(run / 'results' / 'bm25' / 'LVEval_cmrc_mixup_16k.json', []).write_text('{"score": 1}')
    log = lines(run / 'logs' / 'infer' / 'bm25' / 'LVEval_cmrc_mixup_16k.out', [])
    log.write_text(
        'Task [bm25/LVEval_cmrc_mixup_16k,bm25/LVEval_factrecall_en_16k]\nTraceback ...\n'
        'opencompass_lveval.files.errors.LVEvalDataError: factrecall_en_16k.jsonl, line 2: not UTF-8 text\n'
    )
    task = dict(models=[BM25], datasets=[datasets[1:]], work_dir=str(run))
    try:
        status, said = CheckedLocalRunner(task=dict(type=OpenICLEvalTask)).launch([task]), ''
    except SystemExit as stop:  # the stage's only dataset has no predictions: the run stops
        status, said = [], f'{stop}\n'
    return f'evaluation tasks started: {len(status)}\n{said}' + lveval(
        'leaderboard', run.parent, '--out', tmp / 'board'
    )


def gpus_not_here_stop_the_run(tmp: Path) -> str:
    import os

    from opencompass_lveval.runner.infer_task import LongContextInferTask
    from opencompass_lveval.runner.local import CheckedLocalRunner

    big = dict(BM25, abbr='big', run_cfg=dict(num_gpus=1))
    task = dict(models=[big], datasets=[two_lveval_datasets(tmp / 'data')], work_dir=str(tmp))
    try:  # this machine, as if it had no GPU
        with mock.patch.dict(os.environ, {'CUDA_VISIBLE_DEVICES': ''}):
            CheckedLocalRunner(task=dict(type=LongContextInferTask)).launch([task])
    except SystemExit as stop:
        return str(stop)
    raise AssertionError('a task asking for a GPU started on a machine without one')


# ---- serving: replies bound to their requests, the store, settings (issue 43) --------------


def serving_logged(call) -> str:
    """What the serving modules log while ``call`` runs, then what it returns or raises."""
    import logging

    logged = io.StringIO()
    handler = logging.StreamHandler(logged)
    logging.getLogger('opencompass_lveval.serving').addHandler(handler)
    try:
        said = str(call())
    except Exception as exc:  # noqa: BLE001 (the case shows what the user reads)
        said = f'{type(exc).__name__}: {exc}'
    finally:
        logging.getLogger('opencompass_lveval.serving').removeHandler(handler)
    return f'{logged.getvalue()}{said}'


def served_requests(count: int = 12) -> list:
    from opencompass_lveval.serving.request import planned_request

    sampling = {'temperature': 0, 'max_tokens': 8, 'stop': []}
    return [planned_request('e', [i] * (20 + i), sampling, f'#{i}') for i in range(count)]


def stand_in_stage(tmp: Path, replicas: list, requests: list, **settings):
    from opencompass_lveval.serving.dispatch import Dispatcher, DispatchSettings, Fixed
    from opencompass_lveval.serving.store import ReplyStore
    from opencompass_lveval.testing.stand_in import stand_in_transport

    chosen = DispatchSettings(30, 400, progress=lambda done, total: None, **settings)
    store = ReplyStore(tmp / 'store')
    return store, Dispatcher(requests, store, Fixed(replicas), chosen, stand_in_transport)


def replies_not_of_their_request_are_asked_again(tmp: Path) -> str:
    from opencompass_lveval.testing.stand_in import PacedStandIn

    def wrong(kind):
        seen = []

        def reply(answer: dict) -> dict:
            seen.append(answer)
            return {
                'previous': seen[-2] if len(seen) > 1 else {**answer, 'choices': []},
                'model': {**answer, 'model': 'another'},
                'long': {**answer, 'usage': {**answer['usage'], 'completion_tokens': 3200}},
                'two': {**answer, 'choices': answer['choices'] * 2},
                'none': {**answer, 'choices': []},
            }[kind]

        return reply

    said, wrongly_stored = [], 0
    for kind in ('previous', 'model', 'long', 'two', 'none'):
        requests = served_requests()
        bad, good = PacedStandIn('bad', 10**8, wrong(kind)), PacedStandIn('good', 10**7)
        store, dispatcher = stand_in_stage(tmp / kind, [bad, good], requests)
        said.append(serving_logged(dispatcher.run))
        for request in requests:
            reply, _ = store.read(request.expected())
            wrongly_stored += reply is None or reply['text'] != f'stand-in {request.key[:12]}'
    return '\n'.join(said) + f"\nstored replies not their request's answer: {wrongly_stored}"


class HugeReplies:
    """A replica on 127.0.0.1 whose every completion is a 2 MB body."""

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def log_message(self, *args):
                pass

            def do_GET(self):
                self.send_response(200)
                self.send_header('Content-Length', '0')
                self.end_headers()

            def do_POST(self):
                self.rfile.read(int(self.headers['Content-Length']))
                body = b'{"padding": "' + b'x' * 2_000_000 + b'"}'
                self.send_response(200)
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        class Quiet(ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass  # the client hangs up on a reply it refuses: expected here

        self.server = Quiet(('127.0.0.1', 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        self.name, self.node, self.where = 'huge', 'localhost', {}
        self.url = f'http://127.0.0.1:{self.server.server_address[1]}/v1'

    def alive(self) -> bool:
        return True

    def log_tail(self, chars: int = 3000) -> str:
        return ''


def huge_replies_are_refused_while_read(tmp: Path) -> str:
    import resource

    from opencompass_lveval.serving.dispatch import dispatch
    from opencompass_lveval.serving.store import ReplyStore

    replica = HugeReplies()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        said = serving_logged(
            lambda: dispatch(
                served_requests(4), [replica], ReplyStore(tmp), 400, 30, max_reply_bytes=2**20
            )  # fmt: skip
        )
    finally:
        replica.server.shutdown()
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024
    return f'{said}\nstored: {len(list(tmp.rglob("*.json")))}; memory grew {grown} MB'


def unwritable_store_stops_at_once(tmp: Path) -> str:
    from opencompass_lveval.testing.stand_in import PacedStandIn

    (tmp / 'full').write_text('')
    _, dispatcher = stand_in_stage(tmp / 'full', [PacedStandIn('r0', 10**6)], served_requests())
    started = time.monotonic()
    said = serving_logged(dispatcher.run)
    return f'{said}\nstopped after {time.monotonic() - started:.0f} s'


def serving_settings_are_checked(tmp: Path) -> str:
    from opencompass_lveval.runner.serve_once import ServeOnceRunner
    from opencompass_lveval.serving.placement import ReplicaSpec
    from opencompass_lveval.serving.placement.local import LocalPlacement

    task = dict(type='opencompass_lveval.runner.infer_task.LongContextInferTask')
    said = []
    for settings in (
        dict(server_argv='python -m my.server --port {port}'),
        dict(replicas=2, quorum=3),
        dict(replica_env={'HF_TOKEN': 'hf_' + 'x' * 30}),
    ):
        said.append(serving_logged(lambda s=settings: ServeOnceRunner(task=task, **s)))
    specs = [ReplicaSpec(f'r{i}', ['serve'], {}, 0) for i in range(300)]
    said.append(serving_logged(lambda: LocalPlacement(log_dir=tmp).prepare(specs)))
    return '\n'.join(said)


def cut_journal_is_read_line_by_line(tmp: Path) -> str:
    from opencompass_lveval.serving.journal import ReplicaJournal

    (tmp / 'replicas.jsonl').write_text('{"replica": "r0", "event": "started"}\n{"replica": "r0"')
    journal = serving_logged(lambda: len(ReplicaJournal(tmp).records))
    return f'{journal}\nevents read: {journal.splitlines()[-1]}'


# ---- runners under faults (issue 43): RayRunner on a one-machine Ray cluster, run folders ----


def ray_runner(**settings):
    """A ``RayRunner`` of ``ShellTask``s on this process's shared one-machine Ray cluster (two
    CPUs, two fake GPUs)."""
    from ray_clusters import shared_ray

    from opencompass_lveval.runner.ray_runner import RayRunner

    return RayRunner(dict(type='ShellTask'), address=shared_ray(), **settings)


def ray_address_where_no_head_answers(tmp: Path) -> str:
    from ray_clusters import refused_addresses

    found = refused_addresses(0.25)
    assert all(seconds < 1.5 for _, _, seconds in found), found
    return '\n'.join(refusal for _, refusal, _ in found)


def ray_settings_that_no_task_could_keep(tmp: Path) -> str:
    from opencompass_lveval.files.errors import ModelConfigError
    from opencompass_lveval.runner.ray_runner import RayRunner

    said = []
    for settings in (
        dict(num_cpus=float('inf')), dict(deadline_s=float('nan')), dict(memory=-1),
        dict(resources={'A100': 'one'}), dict(task_env_from='HF_TOKEN'),
    ):  # fmt: skip
        with pytest.raises(ModelConfigError) as refused:
            RayRunner(dict(type='OpenICLInferTask'), **settings)
        said.append(str(refused.value))
    return '\n'.join(said)


def ray_request_no_node_offers(tmp: Path) -> str:
    from ray_clusters import shell_log, shell_task

    work, said = tmp / 'run', []
    with contextlib.chdir(tmp):
        for settings, abbr in ((dict(num_cpus=64), 'cpus'), (dict(resources={'A100': 1}), 'a100')):
            with pytest.raises(SystemExit) as stopped:
                ray_runner(**settings).launch([shell_task(work, abbr, 'true')])
            said.append(f'{stopped.value}\n{shell_log(work, abbr)}')
    submitted = (work / 'logs' / 'ray_runner.jsonl').is_file()
    return '\n'.join(said) + f'attempts on the cluster: {int(submitted)}'


def lost_record(node: str) -> str:
    return json.dumps({'task': 'Shell[x/d]', 'attempt': 1, 'host': 'lvnode9', 'node_id': node,
                       'outcome': 'deadline', 'lost': True})  # fmt: skip


def ray_rerun(tmp: Path, journal_text: str) -> str:
    """One task run where the journal of an earlier stage says ``journal_text``: what the run's
    log said, the status and the seconds it took."""
    from ray_clusters import shell_task
    from runs import logged

    work = tmp / 'run'
    (work / 'logs').mkdir(parents=True)
    (work / 'logs' / 'ray_runner.jsonl').write_text(journal_text)
    start = time.monotonic()
    with contextlib.chdir(tmp), logged() as said:
        status = ray_runner(deadline_s=60).launch([shell_task(work, 'fine', 'true')])
    took = time.monotonic() - start
    assert took < 30, took
    return '\n'.join(said) + f'\n{status}'


def ray_silent_node_is_tried_again(tmp: Path) -> str:
    from ray_clusters import node_ids, shared_ray

    (node,) = node_ids(shared_ray())
    return ray_rerun(tmp, lost_record(node) + '\n')


def ray_journal_bad_lines_are_named(tmp: Path) -> str:
    return ray_rerun(tmp, '[1, 2]\n{"task": "Shell[x/d]", "attem')


def task_leaves_processes_behind(tmp: Path) -> str:
    from ray_clusters import shell_task
    from rigs import command_lines

    mark = f'sleep 1414.{os.getpid()}'
    leaves = f'{mark}1 & setsid nohup {mark}2 >/dev/null 2>&1 & exit 0'
    with contextlib.chdir(tmp):
        status = ray_runner().launch([shell_task(tmp / 'run', 'leaves', leaves)])
    left = [line for line in command_lines() if line.startswith(mark)]
    return f'{status}; processes left: {len(left)}'


def ray_node_that_cannot_run_the_task(tmp: Path) -> str:
    from ray_clusters import shell_task

    from opencompass_lveval.runner.on_node import environment_problem

    shadow = tmp / 'shadow' / 'opencompass_lveval'  # the metadata stays, the code is another
    shadow.mkdir(parents=True)
    (shadow / '__init__.py').write_text('import opencompass_lveval_code_that_is_missing\n')
    tasks = [shell_task(tmp / 'run', name, 'true') for name in ('one', 'two')]
    with contextlib.chdir(tmp), mock.patch.dict(os.environ, {'PYTHONPATH': str(shadow.parent)}):
        runner = ray_runner(max_num_workers=1, task_env_from=['PYTHONPATH'])
        with pytest.raises(SystemExit) as stop:
            runner.launch(tasks)
    (tmp / 'tmp').mkdir(exist_ok=True)
    (tmp / 'tmp' / 'c.py').write_text('')
    other = tmp / 'work' / 'logs' / 'ray' / 'driver-mark'  # another run's folder at that path
    other.parent.mkdir(parents=True)
    other.write_text('another')
    spec = dict(cwd=str(tmp), config=str(tmp / 'tmp' / 'c.py'), work_dir=str(tmp / 'work'),
                work_mark={'path': str(other), 'text': 'this run'})  # fmt: skip
    return f'{stop.value}\n{environment_problem(spec)}'


def two_drivers_on_one_run_folder(tmp: Path) -> str:
    import subprocess
    import sys

    from runs import logged

    from opencompass_lveval.runner.run_lock import hold_for

    holder = 'from opencompass_lveval.runner.run_lock import hold_run_folder as h; import sys, time'
    first = subprocess.Popen(
        [sys.executable, '-c', f'{holder}; h(sys.argv[1]); print(1, flush=True); time.sleep(60)',
         str(tmp / 'run')], stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        first.stdout.readline()
        with pytest.raises(SystemExit) as refused:
            hold_for([dict(work_dir=str(tmp / 'run'))])
    finally:
        first.kill()
        first.wait()
    with logged() as said:
        hold_for([dict(work_dir=str(tmp / 'run'))])
    return f'{refused.value}\n' + '\n'.join(said)


def run_folder_with_shell_characters(tmp: Path) -> str:
    from ray_clusters import shell_log, shell_task

    from opencompass_lveval.runner.local import CheckedLocalRunner

    folder = tmp / 'r$(touch INJECTED)x y'
    folder.mkdir()
    runner = CheckedLocalRunner(task=dict(type='ShellTask'), max_num_workers=1)
    with contextlib.chdir(folder), mock.patch.dict(os.environ, {'CUDA_VISIBLE_DEVICES': ''}):
        status = runner.launch([shell_task(folder / 'run', 'fine', 'echo ran')])
    injected = len(list(tmp.rglob('INJECTED')))
    return f'{status} {shell_log(folder / "run", "fine")}INJECTED files: {injected}'


def task_secrets_by_name(tmp: Path) -> str:
    import hashlib

    from ray_clusters import shell_log, shell_task

    secret = 'sk-lveval-' + os.urandom(8).hex()
    seen = 'printf %s "$LVEVAL_TEST_SECRET" | sha256sum'
    with contextlib.chdir(tmp), mock.patch.dict(os.environ, {'LVEVAL_TEST_SECRET': secret}):
        runner = ray_runner(task_env_from=['LVEVAL_TEST_SECRET'])
        status = runner.launch([shell_task(tmp / 'run', 'key', seen)])
    saw = hashlib.sha256(secret.encode()).hexdigest() in shell_log(tmp / 'run', 'key')
    holding = [p for p in tmp.rglob('*') if p.is_file() and secret.encode() in p.read_bytes()]
    with contextlib.chdir(tmp), pytest.raises(SystemExit) as unset:
        ray_runner(task_env_from=['LVEVAL_TEST_SECRET']).launch(
            [shell_task(tmp / 'r2', 'k', 'true')]
        )
    return (
        f'{status}: the task saw the variable: {saw}; files holding its value: {len(holding)}'
        f'\n{unset.value}'
    )


CASES = {
    'stale-prediction-copy': stale_copy_is_ignored_and_named,
    'non-string-predictions': non_string_predictions_are_counted,
    'num-choice-true': num_choice_true_is_refused,
    'impossible-gold-answer': impossible_gold_designation_is_refused,
    'huge-num-choice': huge_num_choice_is_refused_at_once,
    'truncated-adaleval-file': truncated_stackselect_is_refused,
    'tsort-three-parts': tsort_three_parts_is_refused,
    'tsort-parts-wrong-types': tsort_parts_of_wrong_types_are_refused,
    'tsort-book-too-short': tsort_book_too_short_is_refused,
    'tsort-empty-prompt': tsort_empty_prompt_without_parts_is_refused,
    'invalid-utf8-in-data': invalid_utf8_in_a_field_is_named,
    'record-over-4mb': record_larger_than_arrows_block_loads,
    'zip-crc-error': zip_with_crc_error_is_named,
    'gbk-prediction-file': gbk_prediction_file_is_named,
    'eight-million-digits': eight_million_digit_tsort_prediction_is_scored,
    'missing-model-folder': missing_model_folder_is_named,
    'window-too-small': window_too_small_fails_before_weights,
    'no-chat-template': tokenizer_without_chat_template_is_named,
    'remote-code-default': remote_code_is_off_by_default,
    'zero-count': zero_and_negative_counts_are_refused,
    'full-width-level': full_width_digit_level_is_no_level,
    'huge-level': huge_level_is_refused_up_front,
    'dataset-outside-out': dataset_outside_out_is_refused,
    'empty-data-dir': empty_data_dir_variable_is_named,
    'fifo-in-data-folder': fifo_in_data_folder_is_skipped,
    'mixup-item-fields': mixup_item_fields_are_checked,
    'bad-rules': bad_rules_are_named,
    'bestanswer-source': bestanswer_source_is_checked,
    'run-folder-code': run_folder_code_is_not_run,
    'result-not-a-score': result_that_is_not_a_score_is_named,
    'refused-run-strict': refused_run_fails_strict,
    'synthetic-only-strict': synthetic_only_board_fails_strict,
    'forged-model-name': forged_model_name_stays_one_cell,
    'failed-rebuild': failed_rebuild_keeps_the_data,
    'api-key-unset': api_key_variable_unset_stops_before_requests,
    'api-setting-misspelled': api_setting_misspelled_is_named,
    'judge-same-name': two_judges_under_one_name_are_asked_each,
    'judge-echo': an_echoing_judge_rates_nothing,
    'judge-counts': judge_counts_of_the_wrong_type_are_named,
    'compare-other-records': compare_pairs_only_the_same_records,
    'compare-score-range': compare_refuses_scores_outside_the_metric,
    'compare-no-results': compare_names_a_run_without_results,
    'window-past-positions': window_past_positions_is_refused,
    'tokenizer-past-embedding': tokenizer_past_embedding_is_refused,
    'answer-length-not-positive': answer_length_not_positive_is_refused,
    'tokenizer-not-here': hub_id_not_here_is_answered_at_once,
    'broken-plugin': broken_plugins_are_left_out,
    'api-key-echoed-encoded': api_key_echoed_encoded_is_redacted,
    'api-drip': api_drip_is_cut_at_the_deadline,
    'api-retry-after-cap': api_retry_after_is_capped,
    'api-huge-reply': api_huge_reply_is_refused,
    'api-content-not-text': api_content_not_text_is_an_error,
    'api-redirect': api_redirect_is_not_followed,
    'api-impossible-url': api_impossible_url_is_refused_at_build,
    'api-cache-entry-shape': api_cache_entry_of_wrong_shape_is_asked_again,
    'run-bad-model-folder': bad_model_folder_stops_the_run,
    'run-missing-data-folder': missing_data_folder_stops_the_run,
    'failed-inference-not-evaluated': failed_inference_is_not_evaluated,
    'gpus-not-here': gpus_not_here_stop_the_run,
    'perplexity-run-on-board': perplexity_run_is_read,
    # serving: replies bound to their requests, the store, settings
    'serve-reply-not-its-own': replies_not_of_their_request_are_asked_again,
    'serve-huge-reply': huge_replies_are_refused_while_read,
    'serve-store-not-writable': unwritable_store_stops_at_once,
    'serve-settings': serving_settings_are_checked,
    'serve-journal-cut': cut_journal_is_read_line_by_line,
    'ray-address-no-answer': ray_address_where_no_head_answers,
    'ray-settings-not-finite': ray_settings_that_no_task_could_keep,
    'ray-request-no-node-offers': ray_request_no_node_offers,
    'ray-silent-node-tried-again': ray_silent_node_is_tried_again,
    'ray-journal-bad-lines': ray_journal_bad_lines_are_named,
    'task-leaves-processes': task_leaves_processes_behind,
    'ray-node-cannot-run': ray_node_that_cannot_run_the_task,
    'two-drivers': two_drivers_on_one_run_folder,
    'run-folder-shell-characters': run_folder_with_shell_characters,
    'task-secrets-by-name': task_secrets_by_name,
}
# Cases that need a Ray cluster (started once per test process): seconds each.
SLOW = {
    'ray-request-no-node-offers', 'ray-silent-node-tried-again', 'ray-journal-bad-lines',
    'task-leaves-processes', 'ray-node-cannot-run', 'task-secrets-by-name', 'broken-plugin',
}  # fmt: skip


def documented_rows() -> dict[str, list[str]]:
    """case -> the texts its docs/reliability.md row quotes in backticks (third column)."""
    text = RELIABILITY.read_text('utf-8')
    table = text.split('<!-- reliability:start -->')[1].split('<!-- reliability:end -->')[0]
    rows = {}
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip().strip('|').split('|')]
        if len(cells) == 3 and cells[0].startswith('`') and cells[0] != '---':
            rows[cells[0].strip('`')] = re.findall(r'`([^`]+)`', cells[2])
    return rows


def test_reliability_table_lists_exactly_the_cases():
    rows = documented_rows()
    assert sorted(rows) == sorted(CASES)
    assert all(rows.values()), [case for case, quoted in rows.items() if not quoted]


@pytest.mark.parametrize(
    'case', [pytest.param(c, marks=pytest.mark.slow) if c in SLOW else c for c in sorted(CASES)]
)
def test_case_gives_what_the_table_says(case, tmp_path):
    outcome = CASES[case](tmp_path)
    for quoted in documented_rows()[case]:
        assert quoted in outcome, f'{case}: {quoted!r} not in {outcome[-1500:]!r}'
