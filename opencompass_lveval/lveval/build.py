"""Build LV-Eval-style data: context mixing, confusing facts, keyword replacement, factrecall.

Neither paper released its construction code; this follows their description (docs/lveval.md,
Construction). Every builder is seeded (same seed, same bytes), streams one record at a time
(memory stays around one record plus the source text), and writes the official format, so the
output loads through ``LVEvalDataset`` and the OpenCompass configs.
"""

from __future__ import annotations

import bisect
import functools
import json
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from tqdm import tqdm

from ..files.atomic import atomic_open
from ..files.jsonl import is_strings, not_json_field, strict_loads
from ..framework.sizes import parse_size
from ..prompts.text import (
    book_paragraphs,
    cut,
    insert_sentence,
    length,
    read_book,
    replacer,
    sentence_boundaries,
)
from .tasks import LEVELS, TASKS, TASKS_BY_NAME

# The longest context the builders make, in words (English) or characters (Chinese), after
# ``scale``: 10m, about 60 MB of text, which a builder holds a few times over while it writes one
# record. The corpora wrap around, so any length could be cut from them; a level beyond this
# (100000k) would only allocate until MemoryError.
MAX_CONTEXT = 10_000_000


def level_length(level: str, scale: int = 1) -> int:
    """Words (English) or characters (Chinese) of a level: '16k' -> 16000, divided by ``scale``
    (a whole number from 1); a ValueError for a level whose contexts would be empty or longer than
    ``MAX_CONTEXT``."""
    if isinstance(scale, bool) or not isinstance(scale, int) or scale < 1:
        raise ValueError(f'scale must be a whole number from 1, not {scale!r}')
    size = parse_size(level) // scale
    at_scale = f' at scale {scale}' if scale != 1 else ''
    if size > MAX_CONTEXT:
        raise ValueError(
            f'level {level}{at_scale} needs contexts of {size:,} words or characters, more than '
            f'the {MAX_CONTEXT:,} (10m) a builder makes; choose --levels up to 10m or a larger '
            '--scale'
        )
    if size < 1:
        raise ValueError(
            f'level {level}{at_scale} leaves contexts of 0 words or characters; choose a '
            'smaller --scale'
        )
    return size


def check_levels(levels: Iterable[str], scale: int = 1) -> list[str]:
    """The levels, each checked by ``level_length`` before anything is written."""
    levels = list(levels)
    for level in levels:
        level_length(level, scale)
    return levels


def check_count(count: int, what: str = 'count') -> int:
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f'{what} must be a whole number from 1, not {count!r}')
    return count


@dataclass
class QAItem:
    """One QA pair with its supporting documents (and optional confusing facts)."""

    input: str
    answers: list[str]
    documents: list[str]
    answer_keywords: str = ''
    confusing_facts: list[str] = field(default_factory=list)


def _passage(index: int, text: str) -> str:
    return f'Passage {index}\n{text}'


def mix_context(
    item: QAItem, pool: list[str], target: int, language: str, rng: random.Random, reserve: int = 0
) -> str:
    """Supporting documents plus distracting ones from ``pool``, shuffled, each prefixed with
    ``Passage {i}``, until ``target`` words/characters (minus ``reserve`` for confusing facts) are
    met; the last distractor is cut so the total lands on the target."""
    budget = target - reserve
    chosen = list(item.documents)
    total = sum(length(_passage(0, d), language) for d in chosen)
    if not [d for d in pool if d not in item.documents]:
        raise ValueError(
            'no distracting documents to reach the target length: give more QA '
            'items or a pool of documents'
        )
    order = rng.sample(range(len(pool)), len(pool))
    position = 0
    while total < budget:
        document = pool[order[position % len(order)]]
        position += 1
        if document in item.documents:
            continue
        size = length(_passage(0, document), language)
        if total + size > budget:
            room = budget - total - length(_passage(len(chosen), ''), language)
            if room <= 0:
                break
            document = cut(document, room, language)
            size = length(_passage(len(chosen), document), language)
        chosen.append(document)
        total += size
    rng.shuffle(chosen)
    return '\n'.join(_passage(i, d) for i, d in enumerate(chosen))


def insert_at_boundaries(context: str, insertions: list[tuple[int, str]], language: str) -> str:
    """Each (offset, sentence) inserted into the original ``context``, last offset first, so
    no sentence lands inside another."""
    for offset, sentence in sorted(insertions, key=lambda pair: pair[0], reverse=True):
        context = insert_sentence(context, offset, sentence, language)
    return context


def insert_confusing_facts(
    context: str, facts: Iterable[str], language: str, rng: random.Random
) -> str:
    """Each fact at a random sentence boundary of ``context``."""
    facts = list(facts)
    if not facts:
        return context
    boundaries = sentence_boundaries(context, language) or [len(context)]
    offsets = [rng.choice(boundaries) for _ in facts]
    return insert_at_boundaries(context, list(zip(offsets, facts)), language)


def mixup_records(
    items: list[QAItem],
    level: str,
    language: str,
    dataset: str,
    rules: list[tuple[str, str]],
    seed: int,
    cfi: bool = True,
    kpr: bool = True,
    scale: int = 1,
    pool: Optional[list[str]] = None,
) -> Iterator[dict]:
    """The records of one level: the same QA pairs at every level, contexts of that length.

    Distracting documents come from the other items' supporting documents and ``pool``.
    """
    replace = replacer(rules if kpr else [], language)
    documents = [d for item in items for d in item.documents] + list(pool or [])
    target = level_length(level, scale)
    for index, item in enumerate(items):
        rng = random.Random(f'{seed}:{dataset}:{level}:{index}')
        facts = item.confusing_facts if cfi else []
        reserve = sum(length(f, language) for f in facts)
        context = mix_context(item, documents, target, language, rng, reserve)
        context = replace(insert_confusing_facts(context, facts, language, rng))
        yield dict(
            input=replace(item.input),
            context=context,
            answers=[replace(a) for a in item.answers],
            length=length(context, language),
            dataset=dataset,
            language=language,
            answer_keywords=replace(item.answer_keywords),
            confusing_facts=[replace(f) for f in facts],
            all_classes=None,
        )


def write_jsonl(path: Path, records: Iterable[dict], total: int, description: str) -> Path:
    """Stream records to ``path`` (one JSON object per line), with a progress bar on a terminal
    where a file takes more than a second (``data synth`` writes 55 small ones: no bar each)."""
    bar = dict(total=total, desc=description, unit='record', leave=False, delay=1.0, disable=None)
    with atomic_open(path) as stream:
        for record in tqdm(records, **bar):
            stream.write(json.dumps(record, ensure_ascii=False) + '\n')
    return path


def build_mixup(
    items: list[QAItem],
    dataset: str,
    language: str,
    out_dir: str | Path,
    rules: list[tuple[str, str]] = (),
    levels: Iterable[str] = LEVELS,
    seed: int = 0,
    cfi: bool = True,
    kpr: bool = True,
    scale: int = 1,
    pool: Optional[list[str]] = None,
) -> list[Path]:
    """Write ``{dataset}_{level}.jsonl`` for every level (``dataset`` a plain file-name part)."""
    from ..commands.arguments import name_part

    name_part(dataset)
    levels = check_levels(levels, scale)
    return [
        write_jsonl(
            Path(out_dir) / f'{dataset}_{level}.jsonl',
            mixup_records(
                items, level, language, dataset, list(rules), seed, cfi, kpr, scale, pool
            ),
            len(items),
            f'{dataset}_{level}',
        )
        for level in levels
    ]


def read_items(path: str | Path) -> list[QAItem]:
    """QA items from JSON lines: ``input`` (a string), ``answers`` (a non-empty list of strings),
    ``documents`` (the supporting texts, a list of strings), optional ``answer_keywords`` (a
    string) and ``confusing_facts`` (a list of strings). Anything else is an error naming the
    file, the line and the field: a string where a list belongs would be split into characters."""
    items = []
    with open(path, encoding='utf-8') as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            where = f'{path}, line {number}'
            try:
                record = strict_loads(line)
            except ValueError as exc:
                raise ValueError(f'{where}: not valid JSON ({exc})') from exc
            items.append(_qa_item(record, where))
    return items


def _qa_item(record, where: str) -> QAItem:
    if not isinstance(record, dict):
        raise ValueError(
            f'{where}: a QA item is a JSON object with "input", "answers" and "documents"'
        )
    for name in ('input', 'answers', 'documents'):
        if name not in record:
            raise ValueError(
                f'{where}: a QA item needs "input", "answers" and "documents" (no "{name}")'
            )
    keywords = record.get('answer_keywords')
    facts = record.get('confusing_facts')
    problems = [
        (not isinstance(record['input'], str), 'input', 'a string'),
        (
            not is_strings(record['answers'], non_empty=True),
            'answers',
            'a non-empty list of strings',
        ),
        (not is_strings(record['documents']), 'documents', 'a list of strings'),
        (keywords is not None and not isinstance(keywords, str), 'answer_keywords', 'a string'),
        (facts is not None and not is_strings(facts), 'confusing_facts', 'a list of strings'),
    ]
    for bad, name, wanted in problems:
        if bad:
            raise ValueError(f'{where}: "{name}" must be {wanted}, found {record[name]!r:.80}')
    field_name = not_json_field(record)
    if field_name is not None:
        raise ValueError(f'{where}: "{field_name}" holds NaN or Infinity, which JSON has not')
    return QAItem(
        record['input'],
        list(record['answers']),
        list(record['documents']),
        keywords or '',
        list(facts or []),
    )


def read_rules(path: Optional[str | Path]) -> list[tuple[str, str]]:
    """Replacement rules from a JSON object {original: substitute} or a list of
    [original, substitute] pairs: each original a non-empty string, each substitute a string."""
    if not path:
        return []
    try:
        data = strict_loads(Path(path).read_text(encoding='utf-8'))
    except ValueError as exc:
        raise ValueError(f'{path}: not valid JSON ({exc})') from exc
    if isinstance(data, dict):
        pairs = [(f'key {original!r}', [original, value]) for original, value in data.items()]
    elif isinstance(data, list):
        pairs = [(f'item {index}', pair) for index, pair in enumerate(data)]
    else:
        raise ValueError(
            f'{path}: rules are a JSON object {{original: substitute}} or a list of '
            '[original, substitute] pairs'
        )
    rules = []
    for where, pair in pairs:
        if not (isinstance(pair, list) and len(pair) == 2):
            raise ValueError(
                f'{path}, {where}: a rule is an [original, substitute] pair, found {pair!r:.80}'
            )
        original, substitute = pair
        if not (isinstance(original, str) and original):
            raise ValueError(
                f'{path}, {where}: the original must be a non-empty string, found {original!r:.80}'
            )
        if not isinstance(substitute, str):
            raise ValueError(
                f'{path}, {where}: the substitute of {original!r} must be a '
                f'string, found {substitute!r:.80}'
            )
        rules.append((original, substitute))
    return rules


# factrecall ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Needle:
    """The papers' fact-question-answer triple, its two confusing facts and the KPR rules that
    turned the original (Einstein, Galileo, Gauss) into what was published (Figures A12-A13)."""

    language: str
    fact: str
    question: str
    answer: str
    confusing_facts: tuple[str, str]
    rules: tuple[tuple[str, str], ...]


NEEDLES = {
    'en': Needle(
        'en',
        'Albert Einstein is a German-American theoretical physicist. His contributions include '
        'significant advancements in relativity and quantum mechanics, notably his mass-energy '
        'equivalence formula $E=mc^2$. Due to his contributions to theoretical physics, Albert '
        'Einstein received numerous honors, including the Nobel Prize in Physics in 1921. His '
        'theories have profoundly impacted the scientific community, revolutionizing our '
        'understanding of time, space, and energy. He is widely regarded as one of the founders '
        'of modern physics.',
        'What is the name of the scientist widely acclaimed as the foundational figure of modern '
        'physics?',
        'Albert Einstein',
        (
            'Galileo Galilei was an Italian astronomer, physicist, mathematician, and philosopher, '
            'regarded as one of the pioneers of modern astronomy. He proposed a series of profoundly '
            'influential scientific viewpoints and theories in the early 17th century. Galileo '
            'Galilei was among the first scientists to use a telescope for astronomical '
            'observations, discovering the four major moons of Jupiter, a discovery that supported '
            'the heliocentric theory. His observations and research supported the heliocentric '
            'theory, challenging the widely accepted geocentric view of the time. Additionally, '
            'Galileo Galilei made significant contributions to the field of physics, particularly in '
            'kinematics, acceleration, and free-fall motion. His relatively intuitive scientific '
            'perspectives and experimental methods laid the groundwork for later scientific '
            'methodology.',
            'Carl Friedrich Gauss made extensive contributions to mathematics, particularly in '
            'algebra, number theory, differential geometry, and probability theory. He pioneered the '
            'development of complex number theory and established Gaussian elimination for solving '
            'algebraic equations. In the field of number theory, he proposed many significant '
            "conjectures and theorems such as Gauss's prime number theorem and quadratic reciprocity "
            'law. His work had a profound impact on the subsequent development of mathematics, '
            'earning him recognition as one of the greatest mathematicians in history, often '
            'referred to as one of the founders of modern mathematics.',
        ),
        (
            ('Albert Einstein', 'Ludwig Beethoven'),
            ('Galileo Galilei', 'David Beckham'),
            ('Carl Friedrich Gauss', 'John Beverley'),
            ('Gauss', 'Beverley'),
        ),
    ),
    'zh': Needle(
        'zh',
        '庚子年间，爱因斯坦，乃一德裔美籍学士，研究于物理理学，彼其良图，探求相对论，量子力学，尤有大进，'
        '质能等价公式E=mc²，千古独步，声名于当世，诺贝尔物理学奖，以资尊崇，兹矣荣耀之大典，论其学术，'
        '涉时空能普，影响深远，以其义非常人，广为当世所知，声名播于天下，实乃现代物理学之奠基者。',
        '被世人广泛推崇为现代物理学奠基人的科学家叫什么名字？',
        '爱因斯坦',
        (
            '伽利略乃为意大利一代名天文、物理、数学、哲学俱备之士，为今日现代天文之奠基者，其于十七世纪初，'
            '献上了一系列极具卓识，影响深远之学术见解及理论，彼以望远镜，探究苍穹之奥秘，发现木星四卫，'
            '此一发现为日心说提供了有力支撑，彼之观测及研究，助推日心说之兴起，同时对当时广泛流传的地心说'
            '提出质疑，此外，伽利略亦对运动学、加速度学以及自由落体运动等物理学领域做出了卓越贡献，'
            '其所提出之直观科学观点和实验方法，为后世科学方法论之建立奠定了坚实基础。',
            '高斯先生于数学一途殊有造诣，所涉代数、数论、微分几何、概率诸端，无不悉心窥探，研求非浅，'
            '其所开创之复数数学，创设高斯消元之法，解决方程何其奇妙，于数理之道，提出多般假说、定律，'
            '如高斯数论、二次互反之规，其学问所及，对于今后数学之兴盛，功业非浅，堪为历史上最伟大之数学宗师。',
        ),
        (('爱因斯坦', '贝多芬'), ('伽利略', '贝克拉姆'), ('高斯', '贝弗利')),
    ),
}
FACTRECALL_CONTEXTS = 200


@functools.lru_cache(maxsize=2)
def _book_paragraphs(folder: str) -> tuple[str, ...]:
    """The paragraphs of every book in ``folder``, read once per process."""
    books = sorted(Path(folder).glob('*.txt'))
    if not books:
        raise FileNotFoundError(
            f'no *.txt books in {folder}; point --corpora at a folder with en/ and zh/ books'
        )
    return tuple(p for book in books for p in book_paragraphs(book))


def haystack(corpora: str | Path, language: str, size: int, rng: random.Random) -> str:
    """``size`` words/characters of books, starting at a random paragraph and wrapping around."""
    paragraphs = _book_paragraphs(str(Path(corpora) / language))
    start = rng.randrange(len(paragraphs))
    pieces, total = [], 0
    while total < size:
        paragraph = paragraphs[(start + len(pieces)) % len(paragraphs)]
        pieces.append(paragraph)
        total += length(paragraph, language)
    return cut('\n'.join(pieces), size, language)


def needle_offsets(text: str, language: str, count: int) -> list[int]:
    """``count`` strictly increasing insertion points at evenly spaced depths (0% to 100%):
    the nearest sentence boundary, or, where sentences are longer than the spacing, the nearest
    word boundary (any character boundary in Chinese)."""
    sentences = sentence_boundaries(text, language)
    spacing = len(text) / max(1, count - 1)
    offsets: list[int] = []
    for i in range(count):
        wanted = round(len(text) * i / max(1, count - 1))
        floor = offsets[-1] + 1 if offsets else 0
        at = bisect.bisect_left(sentences, wanted)
        near = [b for b in sentences[max(0, at - 1) : at + 1] if b >= floor]
        best = min(near, key=lambda b: abs(b - wanted)) if near else None
        if best is None or abs(best - wanted) > spacing / 2:
            best = max(wanted, floor)
            if language == 'en':  # move to the next space so no word is split
                space = text.find(' ', best)
                best = space if space != -1 else len(text)
        offsets.append(min(best, len(text)))
    return offsets


def factrecall_records(
    language: str,
    level: str,
    corpora: str | Path,
    seed: int = 0,
    cfi: bool = True,
    kpr: bool = True,
    context: bool = True,
    count: int = FACTRECALL_CONTEXTS,
    scale: int = 1,
) -> Iterator[dict]:
    """``count`` contexts of one level with the needle at evenly spaced depths.

    ``cfi``/``kpr`` switch confusing facts and keyword replacement (the papers' four-way
    ablation); ``context=False`` gives the no-context probe for knowledge leakage.
    """
    needle = NEEDLES[language]
    replace = replacer(list(needle.rules) if kpr else [], language)
    dataset = f'factrecall_{language}'
    rng = random.Random(f'{seed}:{dataset}:{level}')
    facts = list(needle.confusing_facts) if cfi else []
    size = (
        level_length(level, scale)
        - length(needle.fact, language)
        - sum(length(f, language) for f in facts)
    )
    base = haystack(corpora, language, size, rng) if context else ''
    offsets = needle_offsets(base, language, count) if context else [0] * count
    boundaries = sentence_boundaries(base, language) or [len(base)]
    for index, offset in enumerate(offsets):
        if context:
            record_rng = random.Random(f'{seed}:{dataset}:{level}:{index}')
            insertions = [(offset, needle.fact)] + [
                (record_rng.choice(boundaries), fact) for fact in facts
            ]
            text = insert_at_boundaries(base, insertions, language)
        else:
            text = ''
        text = replace(text)
        yield dict(
            input=replace(needle.question),
            context=text,
            answers=[replace(needle.answer)],
            length=length(text, language),
            dataset=dataset,
            language=language,
            answer_keywords='',
            confusing_facts=[replace(f) for f in facts],
            all_classes=None,
        )


def build_factrecall(
    language: str,
    out_dir: str | Path,
    corpora: str | Path,
    levels: Iterable[str] = LEVELS,
    seed: int = 0,
    cfi: bool = True,
    kpr: bool = True,
    context: bool = True,
    count: int = FACTRECALL_CONTEXTS,
    scale: int = 1,
) -> list[Path]:
    """Write ``factrecall_{language}_{level}.jsonl`` for every level."""
    levels = check_levels(levels, scale)
    check_count(count)
    return [
        write_jsonl(
            Path(out_dir) / f'factrecall_{language}_{level}.jsonl',
            factrecall_records(language, level, corpora, seed, cfi, kpr, context, count, scale),
            count,
            f'factrecall_{language}_{level}',
        )
        for level in levels
    ]


# the full-size replica ----------------------------------------------------------------------------


def corpus_documents(corpora: str | Path, language: str, size: int) -> list[str]:
    """The books cut into documents of ``size`` words/characters, line-aligned where a line is
    shorter than that."""
    documents, current, total = [], [], 0
    for book in sorted((Path(corpora) / language).glob('*.txt')):
        for line in read_book(book).splitlines():
            line = ' '.join(line.split()) if language == 'en' else ''.join(line.split())
            if not line:
                continue
            current.append(line)
            total += length(line, language)
            if total >= size:
                documents.append(cut('\n'.join(current), size, language))
                current, total = [], 0
    return documents


def replica_items(
    task_name: str, documents: list[str], count: int, seed: int, language: str
) -> tuple[list[QAItem], list[tuple[str, str]]]:
    """QA items shaped like a dataset's: a sentence of a supporting document with a span to
    recall, answer keywords where the dataset has them, two confusing variants where it inserts
    confusing facts, one replacement rule per item where it applies KPR."""
    task = TASKS_BY_NAME[task_name]
    rng = random.Random(f'{seed}:{task_name}:items')
    hops = task.hops
    chosen = rng.sample(range(len(documents)), min(len(documents), count * hops))
    items, rules = [], []
    for index in range(count):
        support = [documents[chosen[(index * hops + h) % len(chosen)]] for h in range(hops)]
        sentence, span = _question_span(support[0], language, rng)
        blank = sentence.replace(span, '____', 1)
        question = _QUESTION[language].format(blank)
        facts = (
            [sentence.replace(span, _scramble(span, language, rng), 1) for _ in range(2)]
            if task.confusing_facts
            else []
        )
        items.append(QAItem(question, [span], support, span if task.answer_keywords else '', facts))
        if (
            task.keyword_rules
        ):  # a name-like word of the sentence gets a made-up substitute everywhere
            names = (
                [
                    w
                    for w in sentence.split()[1:]
                    if w.isalpha() and w[0].isupper() and len(w) >= 5 and w not in span
                ]
                if language == 'en'
                else [
                    sentence[i : i + 2]
                    for i in range(len(sentence) - 1)
                    if sentence[i : i + 2].isalpha() and sentence[i : i + 2] not in span
                ]
            )
            names = [n for n in names if n not in _QUESTION[language] and n not in 'Passage']
            if names:
                word = rng.choice(names)
                rules.append((word, _scramble(word, language, rng)))
    return items, rules


_QUESTION = {
    'en': 'Which words complete this sentence from the passages: "{}"?',
    'zh': '文中哪几个字补全这句话：“{}”？',
}
_ZH_SUBSTITUTES = '甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申酉戌亥'


def _question_span(document: str, language: str, rng: random.Random) -> tuple[str, str]:
    """A sentence of the document and a span of it to ask for."""
    sentences = [
        s
        for s in (
            document[a:b].strip()
            for a, b in zip(
                [0] + sentence_boundaries(document, language),
                sentence_boundaries(document, language),
            )
        )
        if 40 <= len(s) <= 400
    ]
    sentence = rng.choice(sentences) if sentences else document[:200]
    if language == 'en':
        words = sentence.split()
        start = rng.randrange(max(1, len(words) - 4))
        return sentence, ' '.join(words[start : start + rng.randint(2, 4)])
    start = rng.randrange(max(1, len(sentence) - 6))
    return sentence, sentence[start : start + rng.randint(3, 6)]


def _scramble(text: str, language: str, rng: random.Random) -> str:
    """A different text of the same length (words or characters), for confusing facts and
    substitutes, so replacements keep contexts at their level's length."""
    if language == 'en':
        return ' '.join(w[::-1].capitalize() if w[:1].isupper() else w[::-1] for w in text.split())
    return ''.join(rng.choice(_ZH_SUBSTITUTES) for _ in text)


def build_replica(
    corpora: str | Path,
    out_dir: str | Path,
    seed: int = 0,
    scale: int = 1,
    levels: Iterable[str] = LEVELS,
    progress: Optional[Callable[[str], None]] = None,
) -> list[Path]:
    """All 55 subsets, QA pair counts as in the release, contexts from the corpora."""
    levels = check_levels(levels, scale)
    written = []
    for language in ('en', 'zh'):
        # Documents of an eighth of the shortest level: several fit even at 16k.
        documents = corpus_documents(corpora, language, level_length('16k', scale) // 8)
        for task in (t for t in TASKS if t.language == language):
            if progress:
                progress(task.name)
            if task.haystack:
                written += build_factrecall(language, out_dir, corpora, levels, seed, scale=scale)
                continue
            items, rules = replica_items(task.name, documents, task.qa_pairs, seed, language)
            written += build_mixup(
                items,
                task.name,
                language,
                out_dir,
                rules,
                levels,
                seed,
                cfi=task.confusing_facts,
                scale=scale,
                pool=documents,
            )
    return written
