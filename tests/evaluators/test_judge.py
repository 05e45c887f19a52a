"""The LLM judge: the paper's prompts word for word, the rating parser on real-looking replies,
Spearman on literal values, and the judge's cache resuming a killed run.

The judge model here is a small object whose ``chat`` answers from a fixed table keyed by the
prompt, with ``LongContextAPI.chat``'s signature and reply shape. That is acceptable only for
this unit layer (the evaluator's logic: prompts, parsing, counting, caching, cost). What decides
a verdict, and a judge that echoes its prompt, are tested against real HTTP servers on 127.0.0.1
(``servers.ChatServer``) through ``LongContextAPI``; the end-to-end run against a served model is
in tests/models/test_api_server.py.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

import pytest
from servers import ChatServer

from opencompass_lveval.evaluators.judge import (
    Judge,
    average_ranks,
    cost_usd,
    order,
    parse_rating,
    spearman,
    summarise,
    verdict_key,
)
from opencompass_lveval.files.errors import ApiError
from opencompass_lveval.lveval.tasks import (
    JUDGE_FACTRECALL_PROMPT,
    JUDGE_QA_PROMPT,
    TASKS,
    TASKS_BY_NAME,
)

# Figure A10 of the LV-Eval v2 paper as the paper's text gives it (wrapped lines and all).
FIGURE_A10 = '''For factrecall datasets:
"""You are a LLM evaluator. There are a refernce {{answer}}, and a LLM's {{response}}. Your task is to rate the {{response}} based on
the following two aspects:
## Semantic similarity between {{answer}} and {{response}}
## {{response}} recall of the {{answer}}
You must rate the response on a scale of 0 to 10 by strictly following this format: "[rating]", for example: "[5]".
<The start of {{answer}}>
{A}
<The end of {{answer}}>
<The start of {{response}}>
{R}
<The end of {{response}}>"""

For other datasets:
"""You are a LLM evaluator. There are a pair of {{question}} and {{answer}}, and a {{response}} from the evaluated LLM. Your task is to
rate LLM's {{response}} based on the following two aspects:
## Semantic similarity between {{answer}} and {{response}}
## Is the {{response}} relevant to the {{question}}?
You must rate the response on a scale of 0 to 10 by strictly following this format: "[rating]", for example: "[5]".
<The start of {{question}}>
{Q}
<The end of {{question}}>
<The start of {{answer}}>
{A}
<The end of {{answer}}>
<The start of {{response}}>
{R}
<The end of {{response}}>"""'''  # noqa: E501

# The two wrapped lines of the figure, joined by one space.
WRAPS = (' based on\nthe following', ' Your task is to\nrate ')


def figure_prompts(text: str) -> tuple[str, str]:
    """(factrecall prompt, other prompt) of the figure's text, wrapped lines joined."""
    for wrap in WRAPS:
        text = text.replace(wrap, wrap.replace('\n', ' '))
    factrecall, other = re.findall(r'"""(.*?)"""', text, re.S)
    return factrecall, other


def test_the_prompts_are_the_papers_word_for_word():
    factrecall, other = figure_prompts(FIGURE_A10)
    assert factrecall == JUDGE_FACTRECALL_PROMPT
    assert other == JUDGE_QA_PROMPT
    # As the figure's Python string renders: {{answer}} prints as {answer}.
    filled = TASKS_BY_NAME['cmrc_mixup'].judge_request('Q?', 'A.', 'R!')
    assert filled.startswith(
        'You are a LLM evaluator. There are a pair of {question} and {answer}, and a {response} '
        "from the evaluated LLM. Your task is to rate LLM's {response} based on the following two "
        'aspects:\n'
    )
    assert filled.endswith(
        '<The start of {question}>\nQ?\n<The end of {question}>\n<The start of {answer}>\nA.\n'
        '<The end of {answer}>\n<The start of {response}>\nR!\n<The end of {response}>'
    )
    # Text inside a field stays as it is (one pass).
    assert '{R}' in TASKS_BY_NAME['factrecall_en'].judge_request('', 'x{R}', 'y')


def test_the_prompts_match_the_paper_file(seeds):
    paper = (seeds / 'lveval_paper_v2.txt').read_text(encoding='utf-8')
    start = paper.index('For factrecall datasets:')
    end = paper.index('<The end of {{response}}>"""', paper.index('For other datasets:', start))
    block = paper[start : end + len('<The end of {{response}}>"""')]
    assert block == FIGURE_A10
    assert figure_prompts(block) == (JUDGE_FACTRECALL_PROMPT, JUDGE_QA_PROMPT)


def test_factrecall_rows_take_the_answer_prompt_the_others_the_question_one():
    for task in TASKS:
        expected = JUDGE_FACTRECALL_PROMPT if task.haystack else JUDGE_QA_PROMPT
        assert task.judge_prompt == expected, task.name


@pytest.mark.parametrize(
    'reply, rating',
    [
        ('[7]', 7),
        ('[10]', 10),
        ('[0]', 0),
        ('Rating: [3]', 3),
        ('The response matches the answer closely.\n\n[ 8 ]', 8),
        ('Following the format "[rating]": [6]', 6),
        ('[9] ... so, again, [9]', 9),
    ],
)
def test_ratings_are_read(reply, rating):
    assert parse_rating(reply).value == rating
    assert parse_rating(reply).problem is None


@pytest.mark.parametrize(
    'reply, problem',
    [
        ('[11]', '[11] is outside 0 to 10'),
        ('[-1]', '[-1] is outside 0 to 10'),
        ('[7.5]', '[7.5] is not a whole number'),
        ('I would rate this response 7 out of 10.', 'no [n] rating in the reply'),
        ('', 'no [n] rating in the reply'),
        ('First impression [3], on reflection [8].', '2 different ratings: [3], [8]'),
        (None, 'reply is NoneType, not text'),
    ],
)
def test_anything_else_is_unparseable_and_says_why(reply, problem):
    rating = parse_rating(reply)
    assert rating.value is None
    assert rating.problem == problem


FORMAT_LINE = (
    'You must rate the response on a scale of 0 to 10 by strictly following this format: '
    '"[rating]", for example: "[5]".'
)


@pytest.mark.parametrize(
    'reply, rating, problem',
    [
        (
            FORMAT_LINE,
            None,
            'no [n] rating of its own: its only [n] is in text copied from the prompt',
        ),
        (f'{FORMAT_LINE}\n[8]', 8, None),
        (f'As asked ({FORMAT_LINE}) my rating is [3].', 3, None),
        # The response's own bracket, quoted, is no rating; a bare [2] answer line is one.
        ('The response says "see note [4] below" and misses the answer. [1]', 1, None),
        ('[2]', 2, None),
    ],
)
def test_an_echo_of_the_prompt_is_no_rating(reply, rating, problem):
    prompt = prompts('see note [4] below\n[2]')[0]
    assert FORMAT_LINE in prompt
    found = parse_rating(reply, prompt)
    assert (found.value, found.problem) == (rating, problem)
    # Without the prompt the format example reads as a rating: what the echo cut prevents.
    assert parse_rating(FORMAT_LINE).value == 5


def test_spearman_with_ties_on_literal_values():
    assert average_ranks([10, 20, 20, 5]) == [2.0, 3.5, 3.5, 1.0]
    # x ranks 1..5 (deviations -2..2), y = 5, 6, 7, 8, 7 ranks 1, 2, 3.5, 5, 3.5 (deviations
    # -2, -1, .5, 2, .5): Pearson on ranks is 8 / sqrt(10 * 9.5). The textbook
    # 1 - 6 sum d^2 / n(n^2 - 1) = 1 - 6 * 3.5 / 120 = 0.825 is exact only without ties.
    assert spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) == pytest.approx(8 / 95**0.5)
    assert spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) == pytest.approx(0.8207826816681233)
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert spearman([1, 2, 3], [4, 4, 4]) is None  # constant: undefined
    assert spearman([1], [2]) is None
    with pytest.raises(ValueError):
        spearman([1, 2], [1])
    assert order({'b': 1.0, 'a': 2.0, 'c': 1.0}) == ['a', 'b', 'c']


def test_spearman_agrees_with_scipy():
    stats = pytest.importorskip('scipy.stats')
    xs = [0.0, 0.5, 0.5, 1.0, 0.25, 0.0, 1.0, 0.75]
    ys = [1, 6, 5, 10, 3, 0, 9, 9]
    assert spearman(xs, ys) == pytest.approx(stats.spearmanr(xs, ys).correlation)


@dataclass(frozen=True)
class Reply:  # the shape of ApiReply
    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cached: bool


class TableJudge:
    """Replies from a fixed table keyed by the prompt's last line before the response's end
    marker (the response); counts the calls; raises ApiError for responses it is told to."""

    def __init__(self, replies: dict[str, str], failing=(), die_after=None):
        self.replies, self.failing, self.die_after = replies, set(failing), die_after
        self.calls = []

    def chat(self, messages, max_out_len, temperature=0.0):
        assert temperature == 0.0
        prompt = messages[-1]['content']
        response = prompt.rsplit('<The start of {response}>\n', 1)[1].split('\n<The end', 1)[0]
        if self.die_after is not None and len(self.calls) >= self.die_after:
            raise KeyboardInterrupt('killed')
        self.calls.append(response)
        if response in self.failing:
            raise ApiError(f'request for {response} failed for good: 500 from the server')
        return Reply(self.replies[response], 100 + len(response), 3, 0.01, False)


REPLIES = {'good': '[9]', 'fair': 'Rating: [5]', 'odd': 'seven', 'bad': '[0]', 'huge': '[11]'}
PRICES = dict(prompt=30.0, completion=60.0)
CONFIG = dict(type='LongContextAPI', abbr='table', path='table', prices=PRICES)


def prompts(*responses):
    task = TASKS_BY_NAME['factrecall_en']
    return [task.judge_request('', 'gold', response) for response in responses]


def test_unparseable_replies_are_counted_and_reported_never_zero(tmp_path):
    judge = Judge(CONFIG, tmp_path, model=TableJudge(REPLIES, failing={'bad'}), concurrency=1)
    verdicts = judge.rate_all(prompts('good', 'fair', 'odd', 'bad', 'huge'))
    assert [v.rating for v in verdicts] == [9, 5, None, None, None]
    result = summarise(verdicts, judge)
    assert result['judge_score'] == 70.0  # (0.9 + 0.5) / 2, the unrated left out
    assert result['judge_diagnostics'] == (
        '2 rated, 2 unparseable, 1 failed requests, 0 cached, 5 samples, judge table'
    )
    info = result['judge']
    assert (info['rated'], info['unparseable'], info['failed']) == (2, 2, 1)
    assert [p['problem'] for p in info['problems']] == [
        'no [n] rating in the reply',
        'request failed: request for bad failed for good: 500 from the server',
        '[11] is outside 0 to 10',
    ]
    assert info['prompt_tokens'] == sum(100 + len(r) for r in ('good', 'fair', 'odd', 'huge'))
    assert info['completion_tokens'] == 12
    assert info['cost_usd'] == pytest.approx(cost_usd(PRICES, info['prompt_tokens'], 12))


def test_a_killed_judge_run_resumes_from_its_cache(tmp_path):
    asked = prompts('good', 'fair', 'odd', 'huge')
    first = TableJudge(REPLIES, die_after=2)
    with pytest.raises(KeyboardInterrupt):
        Judge(CONFIG, tmp_path, model=first, concurrency=1).rate_all(asked)
    assert first.calls == ['good', 'fair']
    second = TableJudge(REPLIES)
    judge = Judge(CONFIG, tmp_path, model=second, concurrency=1)
    verdicts = judge.rate_all(asked)
    assert second.calls == ['odd', 'huge']  # the two answered before the kill are not asked again
    assert [v.cached for v in verdicts] == [True, True, False, False]
    result = summarise(verdicts, judge)['judge']
    assert result['cached'] == 2
    paid = sum(100 + len(r) for r in ('odd', 'huge'))
    assert result['cost_usd_this_run'] == pytest.approx(cost_usd(PRICES, paid, 6))
    # Re-scoring costs nothing: no model is built, nothing asked.
    again = Judge(CONFIG, tmp_path, model=None, concurrency=3).rate_all(asked)
    assert [v.rating for v in again] == [v.rating for v in verdicts]
    assert all(v.cached for v in again)


def test_a_failed_request_is_asked_again_on_the_next_run(tmp_path):
    asked = prompts('good', 'bad')
    Judge(CONFIG, tmp_path, model=TableJudge(REPLIES, failing={'bad'})).rate_all(asked)
    retry = TableJudge(dict(REPLIES, bad='[1]'))
    verdicts = Judge(CONFIG, tmp_path, model=retry).rate_all(asked)
    assert retry.calls == ['bad']
    assert [v.rating for v in verdicts] == [9, 1]


def test_the_lveval_evaluator_keeps_the_keyword_score_and_adds_the_judges(tmp_path):
    from datasets import Dataset

    from opencompass_lveval.lveval.evaluator import LVEvalEvaluator, LVEvalJudgeEvaluator

    test_set = Dataset.from_dict(
        {
            'input': ['Who wrote it?', 'Where is it?', 'When?'],
            'answers': [['Ann Lee'], ['Paris'], ['1921']],
            'answer_keywords': ['Ann Lee', 'Paris', '1921'],
        }
    )
    predictions = ['good', 'fair', 'odd']
    table = TableJudge(REPLIES)
    evaluator = LVEvalJudgeEvaluator('loogle_SD_mixup', judge=CONFIG, judge_model=table)
    evaluator._out_dir = str(tmp_path / 'run' / 'results' / 'model' / 'LVEval_loogle_SD_mixup_16k')
    result = evaluator.score(predictions, test_set['answers'], test_set)
    keyword = LVEvalEvaluator('qa_f1_score_with_gold_ans').score(
        predictions, test_set['answers'], test_set
    )
    assert result['score'] == keyword['score']
    assert result['diagnostics'] == keyword['diagnostics']
    assert result['judge_score'] == 70.0
    assert result['judge']['unparseable'] == 1
    assert result['provenance']['judge'] == 'table'
    assert [d['judge_rating'] for d in result['details']] == [9, 5, None]
    assert [d['judge_problem'] for d in result['details']][2] == 'no [n] rating in the reply'
    assert list(result)[-1] == 'details'
    # The question prompt, the first answer, and the cache beside the run's results.
    assert sorted(table.calls) == sorted(predictions)  # each asked once (requests run in parallel)
    assert (tmp_path / 'run' / 'judge_cache' / 'table' / 'verdicts').is_dir()
    again = LVEvalJudgeEvaluator('loogle_SD_mixup', judge=CONFIG, judge_model=TableJudge({}))
    again._out_dir = evaluator._out_dir
    assert again.score(predictions, test_set['answers'], test_set)['judge']['cached'] == 3


def test_the_evaluator_refuses_an_unknown_dataset():
    from opencompass_lveval.lveval.evaluator import LVEvalJudgeEvaluator

    with pytest.raises(ValueError, match='Unknown LV-Eval dataset'):
        LVEvalJudgeEvaluator('cmrc')


def test_a_damaged_cache_entry_is_asked_again_and_counted(tmp_path):
    asked = prompts('good', 'fair')
    Judge(CONFIG, tmp_path, model=TableJudge(REPLIES), concurrency=1).rate_all(asked)
    (entry,) = [p for p in (tmp_path / 'verdicts').rglob('*.json') if '[9]' in p.read_text()]
    stored = json.loads(entry.read_text())
    entry.write_text(json.dumps(dict(stored, prompt_tokens='abc')))
    again = TableJudge(REPLIES)
    judge = Judge(CONFIG, tmp_path, model=again, concurrency=1)
    verdicts = judge.rate_all(asked)
    assert again.calls == ['good'] and [v.rating for v in verdicts] == [9, 5]
    info = summarise(verdicts, judge)
    assert info['judge']['damaged_cache_entries'] == 1
    assert info['judge']['damaged_cache_files'] == [
        f'{entry}: "prompt_tokens" is "abc", not a whole number >= -1 (-1: unknown)'
    ]
    assert info['judge_diagnostics'].endswith(', 1 damaged cache entries asked again')
    assert json.loads(entry.read_text())['prompt_tokens'] == 100 + len('good')  # rewritten


# Against real HTTP servers on 127.0.0.1 ----------------------------------------------------------


def served_judge(path: str, server: ChatServer, **settings) -> dict:
    return dict(
        type='LongContextAPI',
        abbr='judge',  # the same name for every judge here
        path=path,
        url=server.url,
        max_seq_len=8192,
        tokenizer_path='cl100k_base',
        retry=0,
        **settings,
    )


@pytest.fixture
def servers():
    started = {
        'nine': ChatServer(lambda prompt: 'Rating: [9]'),
        'two': ChatServer(lambda prompt: '[2]'),
        'echo': ChatServer(lambda prompt: prompt),
        'echo-then-rate': ChatServer(lambda prompt: f'{prompt}\n\n[8]'),
    }
    yield started
    for server in started.values():
        server.stop()


def old_format_key(name: str, prompt: str) -> str:
    """How verdicts were keyed before they knew the judge's settings: its name alone."""
    request = {'model': name, 'prompt': prompt, 'max_out_len': 64, 'temperature': 0.0}
    return hashlib.sha256(json.dumps(request, ensure_ascii=False).encode()).hexdigest()


def test_two_judges_under_one_name_never_share_a_verdict(tmp_path, servers):
    asked = prompts('good', 'fair', 'odd')
    cache = tmp_path / 'judge_cache' / 'judge'
    # A verdict of the old format ([5], keyed by the name alone) is never read.
    key = old_format_key('judge', asked[0])
    old = cache / 'verdicts' / key[:2] / f'{key}.json'
    old.parent.mkdir(parents=True)
    old.write_text(json.dumps({'reply': '[5]', 'prompt_tokens': 1, 'completion_tokens': 1}))

    first = Judge(served_judge('judge-a', servers['nine']), cache)
    assert [v.rating for v in first.rate_all(asked)] == [9, 9, 9]
    assert sorted(servers['nine'].asked) == sorted(('judge-a', p) for p in asked)
    # Another model on another server, under the same name: asked, its own ratings.
    second = Judge(served_judge('judge-b', servers['two']), cache)
    verdicts = second.rate_all(asked)
    assert [(v.rating, v.cached) for v in verdicts] == [(2, False)] * 3
    assert len(servers['two'].asked) == 3
    assert second.digest != first.digest
    assert summarise(verdicts, second)['judge']['settings_digest'] == second.digest
    # The second model's name at the first server: the endpoint decides too, and the request
    # cache of judge-b's replies at the other server is not this judge's.
    third = Judge(served_judge('judge-b', servers['nine']), cache)
    assert [v.rating for v in third.rate_all(asked)] == [9, 9, 9]
    assert len(servers['nine'].asked) == 6
    # So do the generation settings: a longer reply allowance is another judge.
    longer = Judge(served_judge('judge-a', servers['nine']), cache, max_out_len=128)
    assert [v.cached for v in longer.rate_all(asked)] == [False] * 3
    # The first judge again: every verdict from its cache, nothing asked.
    before = len(servers['nine'].asked)
    again = Judge(served_judge('judge-a', servers['nine'], prices=PRICES, timeout=5), cache)
    assert [(v.rating, v.cached) for v in again.rate_all(asked)] == [(9, True)] * 3
    assert len(servers['nine'].asked) == before
    assert json.loads(old.read_text())['reply'] == '[5]'  # left as it was, never read


def test_an_old_format_entry_under_a_new_key_is_not_read(tmp_path, servers):
    """An entry at the key looked up but without that key inside (the old record shape) is
    damaged: asked again, never read."""
    asked = prompts('good')
    judge = Judge(served_judge('judge-a', servers['two']), tmp_path)
    path = judge.cache.path(verdict_key(judge.digest, asked[0]))
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({'reply': '[5]', 'prompt_tokens': 1, 'completion_tokens': 1}))
    (verdict,) = judge.rate_all(asked)
    assert (verdict.rating, verdict.cached) == (2, False)
    assert verdict.damaged_entry == f'{path} holds another key than its name (None)'


def test_a_judge_that_echoes_the_prompt_rates_nothing_of_its_own(tmp_path, servers):
    asked = prompts('good', 'fair')
    echo = Judge(served_judge('echo', servers['echo']), tmp_path)
    verdicts = echo.rate_all(asked)
    assert [v.rating for v in verdicts] == [None, None]  # never the prompt's example [5]
    assert verdicts[0].reply == asked[0]
    result = summarise(verdicts, echo)
    assert 'judge_score' not in result
    assert result['judge']['unparseable'] == 2
    assert result['judge']['problems'][0]['problem'] == (
        'no [n] rating of its own: its only [n] is in text copied from the prompt'
    )
    rated = Judge(served_judge('echo-then-rate', servers['echo-then-rate']), tmp_path)
    assert [v.rating for v in rated.rate_all(asked)] == [8, 8]
