"""The command starts at once: the commands that need no model import neither torch nor
OpenCompass, each in a fresh process as a user would run it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import opencompass_lveval

PROBE = """
import sys
from opencompass_lveval.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = sorted({name.split('.')[0] for name in sys.modules} & {'torch', 'opencompass', 'transformers', 'pandas'})
print('HEAVY=' + ','.join(heavy))
"""


def loaded(*argv: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, '-c', PROBE, *argv], capture_output=True, text=True, timeout=300
    )
    line = next(line for line in done.stdout.splitlines() if line.startswith('HEAVY='))
    return [name for name in line[len('HEAVY=') :].split(',') if name]


@pytest.fixture(scope='module')
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp('cli')
    predictions = root / 'predictions'
    predictions.mkdir()
    (predictions / 'cmrc_mixup_16k.jsonl').write_text(
        json.dumps({'pred': '北京', 'answers': ['北京']}, ensure_ascii=False) + '\n', 'utf-8'
    )
    (root / 'responses.jsonl').write_text(
        json.dumps({'prediction': '[1, 2, 3, 4]', 'answer': [1, 2, 3, 4]}) + '\n'
    )
    run = root / 'work' / '20260101_000000' / 'results' / 'm'
    run.mkdir(parents=True)
    (run / 'LVEval_cmrc_mixup_16k.json').write_text(json.dumps({'score': 50.0}))
    return root


def sliced_argv(cases: list[list[str]]) -> list:
    """The first two commands in the fast loop; each command's process costs a second, so the
    rest are slow (``data check`` reads what ``data synth`` wrote: they run in order)."""
    return cases[:2] + [pytest.param(argv, marks=pytest.mark.slow) for argv in cases[2:]]


@pytest.mark.parametrize(
    'argv',
    sliced_argv(
        [
            ['--help'],
            ['score', '{root}/predictions'],
            ['score-adaleval', '--task', 'tsort', '{root}/responses.jsonl'],
            ['report', '{root}/work', '--out', '{root}/report'],
            ['data', 'synth', '{root}/synth', '--count', '1'],
            ['data', 'check', '{root}/synth'],
            [
                'build',
                'tsort',
                '--books',
                '{corpora}/en/dracula.txt',
                '--setting',
                '2k',
                '--count',
                '2',
                '--out',
                '{root}/ada',
            ],
        ]
    ),
)
def test_commands_without_a_model_load_no_torch_and_no_opencompass(argv, folders, request):
    corpora = request.getfixturevalue('corpora') if '{corpora}' in ' '.join(argv) else None
    argv = [a.format(root=folders, corpora=corpora) for a in argv]
    heavy = loaded(*argv)
    assert 'torch' not in heavy and 'opencompass' not in heavy and 'transformers' not in heavy
    if argv[0] in ('--help', 'score'):  # as light as the official evaluation.py: no pandas
        assert heavy == []


def test_version_and_configs_dir(capsys):
    from opencompass_lveval.cli import main

    with pytest.raises(SystemExit):
        main(['--version'])
    assert capsys.readouterr().out.strip() == f'lveval {opencompass_lveval.__version__}'
    assert main(['configs-dir']) == 0
    folder = Path(capsys.readouterr().out.strip())
    assert (folder / 'datasets' / 'lveval' / 'lveval_gen.py').is_file()
    assert (folder / 'eval_lveval_slurm.py').is_file()


def test_classes_load_on_first_use_and_register():
    from opencompass.registry import ICL_EVALUATORS, ICL_PROMPT_TEMPLATES, LOAD_DATASET, MODELS

    import opencompass_lveval.framework.register  # noqa: F401

    assert LOAD_DATASET.get('AdaLEvalDataset') is opencompass_lveval.AdaLEvalDataset
    assert ICL_EVALUATORS.get('AdaLEvalEvaluator') is opencompass_lveval.AdaLEvalEvaluator
    assert MODELS.get('LongContextVLLM') is opencompass_lveval.LongContextVLLM
    assert ICL_PROMPT_TEMPLATES.get('LongContextPromptTemplate') is (
        opencompass_lveval.LongContextPromptTemplate
    )
    with pytest.raises(AttributeError):
        opencompass_lveval.NoSuchClass  # noqa: B018


HEAVY = ('numpy', 'torch', 'transformers', 'opencompass', 'matplotlib', 'pandas')


@pytest.mark.parametrize(
    'args',
    [
        ['--help'],
        *[
            [command, '--help']
            for command in (
                'configs-dir',
                'data',
                'score',
                'judge',
                'score-adaleval',
                'report',
                'build',
                'dry-run',
                'inputs',
                'leaderboard',
                'compare',
            )
        ],
    ],
    ids=lambda args: ' '.join(args),
)
def test_help_imports_no_heavy_library(args):
    """`lveval --help` answers at once: numpy, torch, OpenCompass load where they are used."""
    probe = (
        'import sys\nfrom opencompass_lveval.cli import main\n'
        f'try:\n    main({args!r})\nexcept SystemExit:\n    pass\n'
        f'print(sorted({{m.split(".")[0] for m in sys.modules}} & {set(HEAVY)!r}))'
    )
    done = subprocess.run([sys.executable, '-c', probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == '[]', done.stdout[-300:]


@pytest.mark.slow  # seconds: every subset synthesised
def test_data_synth_says_one_record_and_draws_no_bar_per_subset(tmp_path, capsys):
    """55 small files: no `0%| 0/1` bar for each (a bar shows on a terminal only after a second),
    and one record is `1 record`, in the synth line and in `data check`."""
    from opencompass_lveval.cli import main

    assert main(['data', 'synth', str(tmp_path), '--count', '1']) == 0
    printed = capsys.readouterr()
    assert 'record/s]' not in printed.err and '0%|' not in printed.err
    assert f'wrote 55 LV-Eval subsets (1 record each, lengths / 100) to {tmp_path}' in printed.out
    assert main(['data', 'check', str(tmp_path)]) == 0
    assert 'ok (synthetic, 1 record)' in capsys.readouterr().out


def test_inputs_names_the_known_models_and_datasets_for_one_that_matches_nothing(capsys):
    from runs import REPO

    from opencompass_lveval.cli import main

    config = str(REPO / 'configs' / 'eval_demo.py')
    assert main(['inputs', config, '--count-only', '--models', 'extractive-bm2']) == 2
    assert capsys.readouterr().err == (
        "error: no models ['extractive-bm2'] in the config; it has ['extractive-bm25', "
        "'random-guess']\n"
    )
    assert main(['inputs', config, '--count-only', '--datasets', 'LVEval_cmrc_16k']) == 2
    said = capsys.readouterr().err
    assert said.startswith("error: no datasets ['LVEval_cmrc_16k'] in the config; it has [")
    assert "'LVEval_cmrc_mixup_16k'" in said
