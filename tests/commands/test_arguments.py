"""Every argument is checked before any work: each bad value below, given to ``lveval`` as a user
types it, exits 2 with one ``error:`` line naming the argument and the fix, and writes nothing."""

from __future__ import annotations

import contextlib
import io
import json
import os

import pytest

from opencompass_lveval.cli import main
from opencompass_lveval.framework.sizes import is_size, parse_size

BAD = {
    'limit-zero': (['inputs', 'cfg.py', '--out', '{out}/x.jsonl', '--limit', '0'], '--limit'),
    'limit-negative': (['inputs', 'cfg.py', '--out', '{out}/x.jsonl', '--limit', '-1'], '--limit'),
    'count-zero': (
        [
            'build',
            'factrecall',
            '--language',
            'en',
            '--corpora',
            '{corpora}',
            '--out',
            '{out}',
            '--count',
            '0',
        ],
        '--count',
    ),
    'count-negative': (
        [
            'build',
            'tsort',
            '--books',
            'b.txt',
            '--setting',
            '2k',
            '--out',
            '{out}',
            '--count',
            '-3',
        ],
        '--count',
    ),
    'count-full-width': (
        [
            'build',
            'tsort',
            '--books',
            'b.txt',
            '--setting',
            '2k',
            '--out',
            '{out}',
            '--count',
            '１',
        ],
        '--count',
    ),
    'synth-count-zero': (['data', 'synth', '{out}', '--count', '0'], '--count'),
    'synth-scale-zero': (['data', 'synth', '{out}', '--scale', '0'], '--scale'),
    'scale-negative': (
        ['build', 'replica', '--corpora', '{corpora}', '--out', '{out}', '--scale', '-1'],
        '--scale',
    ),
    'level-full-width': (
        ['build', 'replica', '--corpora', '{corpora}', '--out', '{out}', '--levels', '1６k'],
        '--levels',
    ),
    'setting-full-width': (
        ['build', 'bestanswer', '--source', 's.json', '--setting', '1６k', '--out', '{out}'],
        '--setting',
    ),
    'level-too-large': (
        [
            'build',
            'factrecall',
            '--language',
            'en',
            '--corpora',
            '{corpora}',
            '--out',
            '{out}',
            '--levels',
            '16k,100000k',
        ],
        '100000k needs contexts of 100,000,000 words',
    ),
    'level-empty-at-scale': (
        [
            'build',
            'replica',
            '--corpora',
            '{corpora}',
            '--out',
            '{out}',
            '--levels',
            '16k',
            '--scale',
            '100000',
        ],
        'leaves contexts of 0 words',
    ),
    'dataset-outside-out': (
        [
            'build',
            'mixup',
            '--items',
            'i.jsonl',
            '--dataset',
            '../../x',
            '--language',
            'en',
            '--out',
            '{out}',
        ],
        '--dataset',
    ),
    'dataset-hidden': (
        [
            'build',
            'mixup',
            '--items',
            'i.jsonl',
            '--dataset',
            '.x',
            '--language',
            'en',
            '--out',
            '{out}',
        ],
        '--dataset',
    ),
    'missing-required': (['build', 'mixup', '--items', 'i.jsonl', '--out', '{out}'], '--dataset'),
}


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize('case', sorted(BAD))
def test_bad_argument_is_one_error_line_and_writes_nothing(case, tmp_path):
    argv, named = BAD[case]
    out = tmp_path / 'out'
    code, stdout, stderr = run([a.format(out=out, corpora=tmp_path / 'books') for a in argv])
    assert code == 2, (stdout, stderr)
    assert stderr.startswith('error: ') and stderr.count('\n') == 1, stderr
    assert named in stderr
    assert not out.exists()


def test_sizes_take_ascii_digits_only():
    assert parse_size('16k') == 16_000 and parse_size('1m') == 1_000_000
    for name in ('1６k', '１6k', '0k', '16K', '16', ' 16k'):
        assert not is_size(name)
        with pytest.raises(ValueError, match='is not a size'):
            parse_size(name)
    from opencompass_lveval.lveval.tasks import subset_of_file

    assert subset_of_file('cmrc_mixup_1６k.jsonl') is None


def test_full_width_level_file_is_no_subset(tmp_path):
    (tmp_path / 'cmrc_mixup_1６k.jsonl').write_text(
        json.dumps({'input': 'q', 'context': 'c', 'answers': ['a']}) + '\n', 'utf-8'
    )
    code, stdout, stderr = run(['data', 'check', str(tmp_path)])
    assert 'cmrc_mixup_1６k' not in stdout and code == 2
    # No benchmark is picked for a folder of none: each says what it looks for.
    assert 'holds the data of no benchmark' in stderr
    assert 'LV-Eval: {dataset}_{level}.jsonl files' in stderr
    assert 'Ada-LEval: stackselect_{setting}.json or textsort_{setting}.json files' in stderr


def test_empty_data_dir_variable_is_an_error(tmp_path, monkeypatch):
    from opencompass_lveval.adaleval.data import load_task
    from opencompass_lveval.lveval import data

    monkeypatch.chdir(tmp_path)
    (tmp_path / 'cmrc_mixup_16k.jsonl').write_text('{"input": "q"}\n', 'utf-8')  # a stray file
    monkeypatch.setenv('LVEVAL_DATA_DIR', '')
    with pytest.raises(ValueError, match=r'\$LVEVAL_DATA_DIR is set but empty'):
        data.locate(data.default_data_dir(), 'cmrc_mixup_16k')  # as LVEvalDataset.load does
    monkeypatch.setenv('ADALEVAL_DATA_DIR', ' ')
    with pytest.raises(ValueError, match=r'\$ADALEVAL_DATA_DIR is set but empty'):
        load_task('bestanswer', '1k')
    monkeypatch.delenv('ADALEVAL_DATA_DIR')
    with pytest.raises(ValueError, match=f'data/AdaLEval \\({tmp_path}/data/AdaLEval\\)'):
        load_task('bestanswer', '1k')


@pytest.mark.skipif(not hasattr(os, 'mkfifo'), reason='needs FIFOs')
def test_fifo_in_a_data_folder_is_skipped_not_read(tmp_path):
    record = {'input': 'q', 'context': 'c', 'answers': ['a'], 'answer_keywords': ''}
    (tmp_path / 'cmrc_mixup_512k.jsonl').write_text(json.dumps(record) + '\n', 'utf-8')
    os.mkfifo(tmp_path / 'lic_mixup_512k.jsonl')
    os.mkfifo(tmp_path / 'stackselect_1k.json')
    code, stdout, stderr = run(['data', 'check', str(tmp_path)])  # would block on a FIFO
    assert code == 0, stderr
    assert f'skipped {tmp_path}/lic_mixup_512k.jsonl: a FIFO, not a regular file' in stdout
    assert f'skipped {tmp_path}/stackselect_1k.json: a FIFO' in stdout
    assert 'cmrc_mixup_512k' in stdout
