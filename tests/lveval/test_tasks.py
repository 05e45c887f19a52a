import pytest
from parity_data import data_json

from opencompass_lveval.framework.benchmarks import named
from opencompass_lveval.lveval import metrics
from opencompass_lveval.lveval.tasks import LEVELS, TASKS, TASKS_BY_NAME, split_subset


@pytest.fixture(scope='module')
def reference():
    """The official constants (tests/data/reference, a copy of ../shared/reference)."""
    return data_json('reference/lveval_official.json')


def test_table_matches_official_constants_byte_for_byte(reference):
    assert [t.name for t in TASKS] == reference['datasets']
    assert list(LEVELS) == reference['length_levels']
    for task in TASKS:
        assert task.prompt.encode() == reference['prompt'][task.name].encode(), task.name
        assert task.max_out_len == reference['max_out_len'][task.name], task.name
        assert task.metric == reference['metric'][task.name], task.name


def test_metric_constants_match_reference(reference):
    assert frozenset(reference['blacklist_en']) == metrics.BLACKLIST_EN
    assert len(reference['blacklist_en']) == len(metrics.BLACKLIST_EN)
    assert frozenset(reference['blacklist_zh']) == metrics.BLACKLIST_ZH
    assert (
        reference['zh_punctuation_removed_in_addition_to_ascii_punctuation']
        == metrics.ZH_PUNCTUATION
    )
    assert set(reference['metric'].values()) <= set(metrics.METRICS)


def test_qa_pair_counts_add_up_to_the_release():
    assert sum(t.qa_pairs for t in TASKS) == 1729
    assert TASKS_BY_NAME['cmrc_mixup'].qa_pairs == 200
    assert TASKS_BY_NAME['loogle_CR_mixup'].qa_pairs == 99


def test_configs_cover_55_subsets_with_opencompass_abbrs():
    configs = named('lveval').configs(path='/data')
    assert len(configs) == 55
    assert len({c['abbr'] for c in configs}) == 55
    first = configs[0]
    assert first['abbr'] == 'LVEval_hotpotwikiqa_mixup_16k'
    assert first['name'] == 'hotpotwikiqa_mixup_16k'
    assert first['path'] == '/data'
    assert first['infer_cfg']['inferencer']['max_out_len'] == 64
    assert first['eval_cfg']['evaluator']['metric'] == 'qa_f1_score_with_gold_ans'
    one = named('lveval').configs(tasks=['cmrc_mixup'], sizes=['64k'])
    assert [c['abbr'] for c in one] == ['LVEval_cmrc_mixup_64k']


def test_configs_at_other_levels_copy_each_datasets_first_config():
    """``at_sizes`` keeps what a config changed (its path, a limit) and renames the cell."""
    lveval = named('lveval')
    shipped = lveval.configs(path='/data', sizes=['16k', '32k'])
    shipped[0]['limit'] = 3  # hotpotwikiqa_mixup_16k, its first config
    copies = lveval.at_sizes(shipped, ['512k', '1000k'], tasks=['hotpotwikiqa_mixup', 'lic_mixup'])
    assert [(c['abbr'], c['name'], c.get('limit')) for c in copies] == [
        ('LVEval_hotpotwikiqa_mixup_512k', 'hotpotwikiqa_mixup_512k', 3),
        ('LVEval_hotpotwikiqa_mixup_1000k', 'hotpotwikiqa_mixup_1000k', 3),
        ('LVEval_lic_mixup_512k', 'lic_mixup_512k', None),
        ('LVEval_lic_mixup_1000k', 'lic_mixup_1000k', None),
    ]
    assert shipped[0]['abbr'] == 'LVEval_hotpotwikiqa_mixup_16k'  # copies, not the originals


def test_a_task_or_level_that_matches_nothing_is_an_error_naming_the_known_ones():
    """A misspelled task added nothing and said nothing; a size not of the levels' form, or
    configs of another benchmark, the same."""
    lveval, adaleval = named('lveval'), named('adaleval')
    shipped = lveval.configs(path='/data', sizes=['16k'])
    with pytest.raises(ValueError) as error:
        lveval.at_sizes(shipped, ['512k'], tasks=['factrecall_english'])
    assert str(error.value) == (
        "lveval.at_sizes: no task 'factrecall_english'; did you mean 'factrecall_en'? its tasks: "
        'hotpotwikiqa_mixup, loogle_SD_mixup, loogle_CR_mixup, loogle_MIR_mixup, '
        'multifieldqa_en_mixup, multifieldqa_zh_mixup, factrecall_en, factrecall_zh, cmrc_mixup, '
        'lic_mixup, dureader_mixup'
    )
    with pytest.raises(ValueError, match=r"'512K' is no level of its form \(its levels: 16k, "):
        lveval.at_sizes(shipped, ['512K'])
    with pytest.raises(ValueError, match='the 17 configs given hold no plain config of any'):
        lveval.at_sizes(adaleval.configs('/ada'), ['512k'])
    only_cmrc = lveval.configs(path='/data', sizes=['16k'], tasks=['cmrc_mixup'])
    with pytest.raises(ValueError, match='hold no plain config of lic_mixup to copy'):
        lveval.at_sizes(only_cmrc, ['512k'], tasks=['cmrc_mixup', 'lic_mixup'])
    with pytest.raises(ValueError, match="adaleval.configs: no task 'tsrot'; did you mean 'tsort'"):
        adaleval.configs(tasks=['tsrot'])
    one = lveval.at_sizes(shipped, '512k', tasks='factrecall_en')  # one name needs no list
    assert [c['abbr'] for c in one] == ['LVEval_factrecall_en_512k']


def test_summary_groups_keep_opencompass_names_and_members():
    rows, found = named('lveval').summary()
    groups = {g['name']: g['subsets'] for g in found}
    assert groups['LVEval_single_hop_qa'] == [f'LVEval_loogle_SD_mixup_{v}' for v in LEVELS] + [
        f'LVEval_cmrc_mixup_{v}' for v in LEVELS
    ]
    assert len(groups['LVEval_multi_hop_qa']) == 15
    assert sorted(groups['LVEval_factrecall_cqa'])[0] == 'LVEval_factrecall_en_128k'
    assert len(groups['LVEval_qa']) == 55
    assert groups['LVEval_lic_mixup'] == [f'LVEval_lic_mixup_{v}' for v in LEVELS]
    assert groups['LVEval_16k'] == [f'LVEval_{t.name}_16k' for t in TASKS]
    # OpenCompass's order of rows: overall, levels, task types, datasets, then every subset
    assert rows[:7] == ['LVEval_qa'] + [f'LVEval_{v}' for v in LEVELS] + ['LVEval_single_hop_qa']
    assert rows[11:13] == ['LVEval_hotpotwikiqa_mixup', 'LVEval_loogle_SD_mixup']
    assert rows[22:] == [t.abbr(v) for t in TASKS for v in LEVELS]


@pytest.mark.parametrize(
    'bad', ['cmrc_mixup_512', 'cmrc_mixup_0k', 'cmrc_mixup_16K', 'cmrc_16k', 'cmrc_mixup', '']
)
def test_split_subset_rejects_unknown_names(bad):
    with pytest.raises(ValueError, match='not an LV-Eval subset'):
        split_subset(bad)


def test_split_subset_parses_names_with_underscores_and_any_level():
    task, level = split_subset('loogle_MIR_mixup_256k')
    assert (task.name, level) == ('loogle_MIR_mixup', '256k')
    assert split_subset('factrecall_en_1000k')[1] == '1000k'
    assert split_subset('cmrc_mixup_8k')[1] == '8k'  # below 16k too
