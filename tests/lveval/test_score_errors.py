"""Bad prediction folders give clear errors that name the file and line."""

import json

import pytest

from opencompass_lveval.cli import main
from opencompass_lveval.lveval.data import LVEvalDataError
from opencompass_lveval.lveval.score import official_file_order, read_predictions, score_folder


def write(path, lines):
    path.write_text(''.join(line + '\n' for line in lines), encoding='utf-8')
    return path


def test_official_file_order_sorts_by_letters_then_number():
    names = [
        'cmrc_mixup_256k.jsonl',
        'cmrc_mixup_16k.jsonl',
        'cmrc_mixup_32k.jsonl',
        'dureader_mixup_16k.jsonl',
    ]
    assert sorted(names, key=official_file_order) == [
        'cmrc_mixup_16k.jsonl',
        'cmrc_mixup_32k.jsonl',
        'cmrc_mixup_256k.jsonl',
        'dureader_mixup_16k.jsonl',
    ]


def test_broken_line_is_named(tmp_path):
    path = write(
        tmp_path / 'cmrc_mixup_16k.jsonl',
        [json.dumps({'pred': 'a', 'answers': ['a']}), '{"pred": "b", "answers": ['],
    )
    with pytest.raises(LVEvalDataError, match=r'cmrc_mixup_16k.jsonl, line 2: not valid JSON'):
        read_predictions(path)


@pytest.mark.parametrize(
    'record, message',
    [
        ({'answers': ['a']}, 'expected an object with "pred"'),
        ({'pred': 'a', 'answers': []}, '"answers" must be a non-empty list'),
        ({'pred': 'a', 'answers': 'a'}, '"answers" must be a non-empty list'),
        ({'pred': 'a', 'answers': ['a'], 'gold_ans': ['k']}, '"gold_ans" must be a string'),
    ],
)
def test_wrong_schema_is_named(tmp_path, record, message):
    path = write(tmp_path / 'cmrc_mixup_16k.jsonl', [json.dumps(record)])
    with pytest.raises(LVEvalDataError, match=message):
        read_predictions(path)


def test_empty_file_and_unknown_name_and_empty_folder(tmp_path):
    write(tmp_path / 'cmrc_mixup_16k.jsonl', [''])
    with pytest.raises(LVEvalDataError, match='holds no predictions'):
        score_folder(tmp_path)
    (tmp_path / 'cmrc_mixup_16k.jsonl').unlink()
    with pytest.raises(LVEvalDataError, match='no .* prediction files'):
        score_folder(tmp_path)
    write(
        tmp_path / 'cmrc_512k.jsonl', [json.dumps({'pred': 'a', 'answers': ['a']})]
    )  # no such set
    with pytest.raises(
        LVEvalDataError, match=r'no .* prediction files \(ignored: cmrc_512k.jsonl\)'
    ):
        score_folder(tmp_path)


def test_cli_reports_errors_with_exit_code_2(tmp_path, capsys):
    assert main(['score', str(tmp_path / 'missing')]) == 2
    assert 'does not exist' in capsys.readouterr().err


def test_huge_and_empty_predictions_score_without_crashing(tmp_path):
    write(
        tmp_path / 'dureader_mixup_16k.jsonl',
        [
            json.dumps({'pred': '', 'answers': ['北京天安门']}),
            json.dumps({'pred': '北京天安门。' * 20000, 'answers': ['北京天安门']}),
            json.dumps({'pred': '北京天安门', 'answers': ['北京天安门']}),
        ],
    )
    write(
        tmp_path / 'loogle_SD_mixup_16k.jsonl',
        [json.dumps({'pred': 'word ' * 200000, 'answers': ['word'], 'gold_ans': 'word'})],
    )
    scored = {s.subset: s for s in score_folder(tmp_path).subsets}
    dureader = [j.score for j in scored['dureader_mixup_16k'].judgements]
    assert dureader[0] == 0.0 and dureader[2] == pytest.approx(1.0, abs=1e-8)
    assert 0.0 <= dureader[1] <= 1.0
    assert scored['loogle_SD_mixup_16k'].judgements[0].score == pytest.approx(1e-5, rel=1e-3)
