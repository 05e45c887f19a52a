"""Finding and reading LV-Eval files: folders at any depth, zips, and every kind of bad input."""

import json
import zipfile

import pytest

from opencompass_lveval.cli import main
from opencompass_lveval.lveval.data import (
    LVEvalDataError,
    check_folder,
    find_subsets,
    locate,
    read_subset,
)
from opencompass_lveval.lveval.synthetic import synthetic_records, write_synthetic
from opencompass_lveval.lveval.tasks import TASKS_BY_NAME


def record(i=0, **changes):
    base = dict(
        input=f'question {i}',
        context=f'context {i}',
        answers=[f'answer {i}'],
        length=2,
        dataset='cmrc_mixup',
        language='zh',
        answer_keywords=f'kw {i}',
        confusing_facts=[],
        all_classes=None,
    )
    base.update(changes)
    return {k: v for k, v in base.items() if v is not ...}


def write_jsonl(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        ''.join(
            r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) + '\n' for r in records
        ),
        encoding='utf-8',
    )
    return path


def test_reads_columns_and_fills_missing_keywords(tmp_path):
    write_jsonl(
        tmp_path / 'deep' / 'er' / 'loogle_CR_mixup_16k.jsonl',
        [record(0), record(1, answer_keywords=...), '\n', record(2, answer_keywords=None)],
    )
    table = read_subset(locate(tmp_path, 'loogle_CR_mixup_16k'))
    assert table.column_names == ['input', 'context', 'answers', 'answer_keywords']
    assert table['input'].to_pylist() == ['question 0', 'question 1', 'question 2']
    assert table['answers'].to_pylist() == [['answer 0'], ['answer 1'], ['answer 2']]
    assert table['answer_keywords'].to_pylist() == ['kw 0', '', '']


def test_reads_official_zip_without_unpacking(tmp_path):
    records = [record(i) for i in range(3)]
    with zipfile.ZipFile(tmp_path / 'cmrc_mixup.zip', 'w', zipfile.ZIP_DEFLATED) as archive:
        for level in ('16k', '32k'):
            archive.writestr(
                f'cmrc_mixup/cmrc_mixup_{level}.jsonl',
                ''.join(json.dumps(r) + '\n' for r in records),
            )
    found = find_subsets(tmp_path)
    assert sorted(found) == ['cmrc_mixup_16k', 'cmrc_mixup_32k']
    assert found['cmrc_mixup_32k'].member == 'cmrc_mixup/cmrc_mixup_32k.jsonl'
    assert read_subset(found['cmrc_mixup_32k'])['context'].to_pylist() == [
        'context 0',
        'context 1',
        'context 2',
    ]
    assert not list(tmp_path.glob('**/*.jsonl'))  # nothing was unpacked


def test_plain_file_preferred_over_zip_and_duplicates_refused(tmp_path):
    with zipfile.ZipFile(tmp_path / 'cmrc_mixup.zip', 'w') as archive:
        archive.writestr('cmrc_mixup/cmrc_mixup_16k.jsonl', json.dumps(record(9)) + '\n')
    write_jsonl(tmp_path / 'unpacked' / 'cmrc_mixup_16k.jsonl', [record(1)])
    assert find_subsets(tmp_path)['cmrc_mixup_16k'].member is None
    write_jsonl(tmp_path / 'copy' / 'cmrc_mixup_16k.jsonl', [record(1)])
    with pytest.raises(LVEvalDataError, match='present 2 times'):
        find_subsets(tmp_path)


def test_missing_folder_and_missing_subset_say_how_to_get_data(tmp_path):
    with pytest.raises(LVEvalDataError, match='does not exist.*Infinigence/LVEval'):
        find_subsets(tmp_path / 'nowhere')
    with pytest.raises(LVEvalDataError, match=r'cmrc_mixup_16k \(cmrc_mixup_16k.jsonl\) not found'):
        locate(tmp_path, 'cmrc_mixup_16k')


@pytest.mark.parametrize(
    'bad_line, message',
    [
        ('{"input": "q", "context": "c", "answers": ["a"]\n', 'line 3: not valid JSON'),
        ('[1, 2]\n', 'line 3: expected a JSON object'),
        (
            json.dumps(record(answers=...)) + '\n',
            'line 3: field "answers" must be a non-empty list',
        ),
        (
            json.dumps(record(answers='a')) + '\n',
            'line 3: field "answers" must be a non-empty list',
        ),
        (json.dumps(record(answers=[])) + '\n', 'line 3: field "answers" must be a non-empty list'),
        (
            json.dumps(record(context=...)) + '\n',
            r'line 3: field "context" must be a string, found '
            r'nothing \(field missing\)',
        ),
        (json.dumps(record(input=5)) + '\n', 'line 3: field "input" must be a string, found 5'),
        (
            json.dumps(record(answer_keywords=['k'])) + '\n',
            'line 3: field "answer_keywords" must be',
        ),
    ],
)
def test_bad_records_are_named_by_file_and_line(tmp_path, bad_line, message):
    path = write_jsonl(tmp_path / 'cmrc_mixup_16k.jsonl', [record(0), '\n', bad_line, record(1)])
    with pytest.raises(LVEvalDataError, match=message) as error:
        read_subset(locate(tmp_path, 'cmrc_mixup_16k'))
    assert str(path) in str(error.value)


def test_non_utf8_line_is_named(tmp_path):
    path = tmp_path / 'cmrc_mixup_16k.jsonl'
    path.write_bytes(json.dumps(record(0)).encode() + b'\n{"input": "\xff\xfe"}\n')
    with pytest.raises(LVEvalDataError, match='line 2: not UTF-8 text'):
        read_subset(locate(tmp_path, 'cmrc_mixup_16k'))


def test_empty_file_and_broken_zip(tmp_path):
    write_jsonl(tmp_path / 'cmrc_mixup_16k.jsonl', [])
    with pytest.raises(LVEvalDataError, match='holds no records'):
        read_subset(locate(tmp_path, 'cmrc_mixup_16k'))
    (tmp_path / 'lic_mixup.zip').write_bytes(b'not a zip')
    with pytest.raises(LVEvalDataError, match='lic_mixup.zip is not a readable zip'):
        find_subsets(tmp_path)


def test_synthetic_data_is_deterministic_and_shaped_like_the_levels():
    task = TASKS_BY_NAME['hotpotwikiqa_mixup']
    short = synthetic_records(task, '16k', count=3, scale=100, seed=0)
    long = synthetic_records(task, '256k', count=3, scale=100, seed=0)
    assert short == synthetic_records(task, '16k', count=3, scale=100, seed=0)
    assert [r['input'] for r in short] == [r['input'] for r in long]  # same QA at every level
    assert short != synthetic_records(task, '16k', count=3, scale=100, seed=1)
    for records, target in ((short, 160), (long, 2560)):
        for r in records:
            assert r['answers'][0] in r['context']
            assert target <= r['length'] <= target * 1.5
    zh = synthetic_records(TASKS_BY_NAME['lic_mixup'], '32k', count=2, scale=100, seed=0)
    assert all(320 <= r['length'] == len(r['context']) for r in zh)


def test_check_folder_counts_records_and_flags_problems(tmp_path, capsys):
    write_synthetic(tmp_path, count=2, levels=['16k'])
    reports = {r.subset: r for r in check_folder(tmp_path)}
    assert len(reports) == 55
    assert reports['cmrc_mixup_16k'].records == 2
    assert reports['cmrc_mixup_16k'].problem == '2 records, the official release has 200'
    assert reports['cmrc_mixup_32k'].problem == 'missing'
    assert main(['data', 'check', str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert '0 of 55 official subsets ok, 44 missing, 11 with problems' in out


def test_check_folder_passes_a_complete_release(tmp_path, capsys, monkeypatch):
    import opencompass_lveval.lveval.data as data

    counts = dict.fromkeys(TASKS_BY_NAME, 1)
    monkeypatch.setattr(
        data,
        'TASKS',
        [t.__class__(**{**t.__dict__, 'qa_pairs': counts[t.name]}) for t in data.TASKS],
    )
    write_synthetic(tmp_path, count=1)
    assert main(['data', 'check', str(tmp_path)]) == 0
    assert '55 of 55 official subsets ok, 0 missing, 0 with problems' in capsys.readouterr().out


def test_hub_download_offline_is_a_clear_error(tmp_path, monkeypatch):
    import huggingface_hub.constants

    from opencompass_lveval.lveval.data import download_from_hub

    monkeypatch.setenv('HF_HUB_OFFLINE', '1')  # read at import: set the constant as well
    monkeypatch.setattr(huggingface_hub.constants, 'HF_HUB_OFFLINE', True)
    with pytest.raises(
        LVEvalDataError, match='Could not download cmrc_mixup.zip.*Download the official zips once'
    ):
        download_from_hub('cmrc_mixup', cache_dir=str(tmp_path))


@pytest.mark.slow
def test_a_full_size_1000k_record_loads(tmp_path, corpora):
    """One factrecall context of a million words (about 6 MB, beyond Arrow's 4 MB block), built
    from the books and read back whole."""
    from opencompass_lveval.lveval.build import build_factrecall
    from opencompass_lveval.lveval.dataset import LVEvalDataset

    (path,) = build_factrecall('en', tmp_path, corpora, ['1000k'], count=1)
    assert path.stat().st_size > 5_000_000
    table = LVEvalDataset.load(name='factrecall_en_1000k', path=str(tmp_path))
    context = table[0]['context']
    assert abs(len(context.split()) - 1_000_000) <= 1000
    assert 'Ludwig Beethoven' in context


@pytest.mark.slow  # seconds: synthetic data written and checked
def test_data_check_tells_synthetic_data_from_a_truncated_download(tmp_path, capsys):
    from opencompass_lveval.cli import main
    from opencompass_lveval.framework.benchmarks import SYNTHETIC_MARK

    assert main(['data', 'synth', str(tmp_path), '--count', '2']) == 0
    capsys.readouterr()
    assert main(['data', 'check', str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert '55 of 55 official subsets ok, 0 missing (55 synthetic), 0 with problems' in out
    assert '4 of 4 Ada-LEval files ok, 0 missing, 0 with problems' in out
    # The same files without the mark look like a truncated download, as they would be.
    (tmp_path / SYNTHETIC_MARK).unlink()
    (tmp_path / 'adaleval' / SYNTHETIC_MARK).unlink()
    assert main(['data', 'check', str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert '2 records, the official release has 124' in out
    assert '10 records, the official code uses 1000: truncated' in out
