"""Seeded stand-ins for what RULER's generators read, so that ``lveval data synth`` builds all 13
tasks offline: an essay haystack, a SQuAD v2 dev file, a HotpotQA dev file and an English word
list in the official formats (``inputs.py`` reads them as it reads the downloads), made of
wonderwords' nouns, adjectives and verbs; and a punkt_tab English model with no learned
parameters (no abbreviations, collocations or sentence starters: a sentence ends at every
``.``, ``?`` or ``!`` before a space), since the official model is not in the package. The
synthetic essays hold no abbreviations, so that model splits them as the official one would.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from ..files.atomic import write_text
from .inputs import ENGLISH_WORDS, ESSAYS, HOTPOTQA, PUNKT_ENGLISH, PUNKT_FILES, SQUAD
from .inputs import wonderwords_lists as word_lists

ESSAY_SENTENCES = 1200  # about 9,600 words: more than a 4096-token haystack uses
ARTICLES, PARAGRAPHS, QUESTIONS = 8, 4, 2  # 64 SQuAD questions
HOTPOT_ITEMS = 40


class Words:
    """Seeded draws from wonderwords' lists."""

    def __init__(self, seed: int, salt: str) -> None:
        self.rng = random.Random(f'{seed}:ruler:{salt}')
        self.lists = word_lists()

    def __call__(self, kind: str) -> str:
        return self.rng.choice(self.lists[kind])

    def sentence(self) -> str:
        return (
            f'The {self("adjective")} {self("noun")} will {self("verb")} the '
            f'{self("adjective")} {self("noun")} near the {self("noun")}.'
        )


def essays(seed: int) -> dict:
    words = Words(seed, 'essays')
    return {'text': ' '.join(words.sentence() for _ in range(ESSAY_SENTENCES))}


def squad(seed: int, articles: int = ARTICLES) -> dict:
    """Articles of paragraphs, each paragraph stating facts its questions ask for."""
    words, count = Words(seed, 'squad'), articles
    articles = []
    for article in range(count):
        paragraphs = []
        for _ in range(PARAGRAPHS):
            facts = [(words('noun'), words('adjective') + ' ' + words('noun')) for _ in range(3)]
            context = ' '.join(
                [words.sentence()]
                + [f'The {thing} of the city is the {value}.' for thing, value in facts]
            )
            qas = [
                {
                    'id': f'{article}-{len(paragraphs)}-{number}',
                    'question': f'What is the {thing} of the city?',
                    'answers': [{'text': value, 'answer_start': context.index(value)}],
                    'is_impossible': False,
                }
                for number, (thing, value) in enumerate(facts[:QUESTIONS])
            ]
            paragraphs.append({'context': context, 'qas': qas})
        articles.append({'title': f'Article {article}', 'paragraphs': paragraphs})
    return {'version': 'v2.0', 'data': articles}


def hotpotqa(seed: int, questions: int = HOTPOT_ITEMS) -> list:
    """Questions over two linked paragraphs among ten."""
    words = Words(seed, 'hotpotqa')
    items = []
    for number in range(questions):
        person, town, thing = words('noun').title(), words('noun').title(), words('noun')
        context = [
            [
                f'{person} {number}',
                [f'{person} {number} was born in {town} Town. ', words.sentence()],
            ],
            [f'{town} Town', [f'{town} Town is known for its {thing}. ', words.sentence()]],
        ]
        context += [
            [f'{words("noun").title()} {number}-{k}', [words.sentence(), ' ' + words.sentence()]]
            for k in range(8)
        ]
        question = f'What is the birthplace of {person} {number} known for?'
        items.append(
            {'_id': str(number), 'question': question, 'answer': thing, 'context': context}
        )
    return items


def english_words() -> dict:
    lists = word_lists()
    found = sorted(set(lists['noun'] + lists['adjective'] + lists['verb']))
    return {word: word for word in found}


def write_inputs(folder: Path, seed: int, questions: int = HOTPOT_ITEMS) -> Path:
    """The four files and the parameter-free punkt_tab model under ``folder``, each QA file
    with at least ``questions`` questions."""
    folder = Path(folder)
    articles = max(ARTICLES, -(-questions // (PARAGRAPHS * QUESTIONS)))
    for name, content in (
        (ESSAYS, essays(seed)),
        (SQUAD, squad(seed, articles)),
        (HOTPOTQA, hotpotqa(seed, max(HOTPOT_ITEMS, questions))),
        (ENGLISH_WORDS, english_words()),
    ):
        write_text(folder / name, json.dumps(content))
    for name in PUNKT_FILES:
        write_text(folder / 'nltk_data' / PUNKT_ENGLISH / name, '')
    return folder
