"""What RULER's generators read besides the tokenizer: the four downloaded files, wonderwords
2.2.0's word lists and nltk's ``punkt_tab`` sentence splitter, each read once, with errors that
name the file and how to get it (docs/ruler.md, "Inputs").

The inputs folder holds the files under the names RULER's download scripts give them
(``scripts/data/synthetic/json/``): ``PaulGrahamEssays.json``, ``squad.json``,
``hotpotqa.json``, ``english_words.json``; a task reads only its own.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..files.errors import DataError

ESSAYS, SQUAD, HOTPOTQA, ENGLISH_WORDS = (
    'PaulGrahamEssays.json',
    'squad.json',
    'hotpotqa.json',
    'english_words.json',
)
# Where punkt_tab's English model sits below an NLTK data folder; its four files.
PUNKT_ENGLISH = Path('tokenizers', 'punkt_tab', 'english')
PUNKT_FILES = ('collocations.tab', 'sent_starters.txt', 'abbrev_types.txt', 'ortho_context.tab')
WONDERWORDS_VERSION = '2.2.0'
GET_INPUTS = 'see docs/ruler.md, "Inputs", for where to get it'


class RulerInputError(DataError):
    """An input of the RULER generators is missing or unreadable; the message says which and
    how to get it."""


def file_digest(*paths: Path) -> str:
    """sha256 over the files' names and bytes, in the order given."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(Path(path).name.encode() + b'\0')
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()


def _load_json(folder: Path, name: str):
    path = Path(folder) / name
    if not path.is_file():
        raise RulerInputError(
            f'{path}: not found; RULER reads {name} from the inputs folder, {GET_INPUTS}'
        )
    try:
        return json.loads(path.read_text(encoding='utf-8'))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RulerInputError(f'{path}: not JSON ({exc}); {GET_INPUTS}') from exc


def _shape_error(folder: Path, name: str, what: str) -> RulerInputError:
    return RulerInputError(f'{Path(folder) / name}: {what}; {GET_INPUTS}')


def essay_words(folder: Path) -> list[str]:
    """The essays as RULER's haystack: every run of whitespace one space, split on spaces."""
    data = _load_json(folder, ESSAYS)
    if not isinstance(data, dict) or not isinstance(data.get('text'), str):
        raise _shape_error(folder, ESSAYS, 'expected {"text": "..."}, the essays joined')
    return re.sub(r'\s+', ' ', data['text']).split(' ')


def english_words(folder: Path) -> list[str]:
    """english_words.json's values, in the file's order."""
    data = _load_json(folder, ENGLISH_WORDS)
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise _shape_error(folder, ENGLISH_WORDS, 'expected an object of words {"key": "word"}')
    return list(data.values())


@dataclass(frozen=True)
class QAInputs:
    """A QA file as RULER reads it: the questions (query, answers, the ids of their gold
    documents and, for SQuAD, of the other paragraphs of the same article) and the documents,
    distinct and sorted."""

    questions: list[dict]
    documents: list[str]


def squad(folder: Path) -> QAInputs:
    """SQuAD v2 dev: answerable questions only; each paragraph's own article's other
    paragraphs are its first distractors."""
    data = _load_json(folder, SQUAD)
    try:
        articles = data['data']
        documents = sorted({p['context'] for a in articles for p in a['paragraphs']})
        index = {document: i for i, document in enumerate(documents)}
        questions = []
        for article in articles:
            article_docs = [index[p['context']] for p in article['paragraphs']]
            for paragraph in article['paragraphs']:
                own = index[paragraph['context']]
                questions += [
                    {
                        'query': qa['question'],
                        'outputs': [answer['text'] for answer in qa['answers']],
                        'context': [own],
                        'more_context': [i for i in article_docs if i != own],
                    }
                    for qa in paragraph['qas']
                    if not qa['is_impossible']
                ]
    except (KeyError, TypeError) as exc:
        raise _shape_error(folder, SQUAD, f'not SQuAD v2.0 dev (missing {exc})') from exc
    return QAInputs(questions, documents)


def hotpotqa(folder: Path) -> QAInputs:
    """HotpotQA dev (distractor): each question's ten paragraphs, ``title\\nsentences``."""
    data = _load_json(folder, HOTPOTQA)

    def text(title, sentences) -> str:
        return f'{title}\n{"".join(sentences)}'

    try:
        documents = sorted({text(t, s) for item in data for t, s in item['context']})
        index = {document: i for i, document in enumerate(documents)}
        questions = [
            {
                'query': item['question'],
                'outputs': [item['answer']],
                'context': [index[text(t, s)] for t, s in item['context']],
            }
            for item in data
        ]
    except (KeyError, TypeError, ValueError) as exc:
        raise _shape_error(folder, HOTPOTQA, f'not HotpotQA dev (problem: {exc})') from exc
    return QAInputs(questions, documents)


QA_READERS = {'squad': (SQUAD, squad), 'hotpotqa': (HOTPOTQA, hotpotqa)}


# wonderwords 2.2.0 -------------------------------------------------------------------------------


@functools.cache
def wonderwords_lists() -> dict[str, list[str]]:
    """wonderwords' noun, adjective and verb lists as RULER loads them (each line, right-stripped).
    Version 2.2.0 only: 3.0.1 drops four nouns, which changes every key and word RULER draws."""
    from importlib import metadata, util

    try:
        version = metadata.version('wonderwords')
    except metadata.PackageNotFoundError:
        version = None
    if version != WONDERWORDS_VERSION:
        found = f'wonderwords {version} is installed' if version else 'wonderwords is missing'
        raise RulerInputError(
            f"RULER draws its keys and words from wonderwords {WONDERWORDS_VERSION}'s lists and "
            f'{found}: pip install wonderwords=={WONDERWORDS_VERSION}'
        )
    # The files only: importing wonderwords would load every list (and warn) for nothing.
    assets = Path(util.find_spec('wonderwords').submodule_search_locations[0]) / 'assets'
    return {
        kind: [
            line.rstrip()
            for line in (assets / f'{kind}list.txt').read_text(encoding='utf-8').splitlines(True)
        ]
        for kind in ('noun', 'adjective', 'verb')
    }


class AdjectiveNounWords:
    """``sorted(set(f'{adj}-{noun}' for adj in adjectives for noun in nouns))``, RULER's needle
    keys (6,175,260 strings with wonderwords 2.2.0), indexed without building it (7 s and
    0.9 GB otherwise). One adjective's strings are contiguous in the sorted list unless its
    ``adj-`` is a prefix of another's (``blue-`` and ``blue-eyed-``): such groups are built and
    sorted whole, the rest are an adjective and the sorted nouns."""

    def __init__(self, adjectives: list[str], nouns: list[str]) -> None:
        self.nouns = sorted(set(nouns))
        stems = sorted({f'{adjective}-' for adjective in adjectives})
        groups: list[list[str]] = []
        for stem in stems:  # a stem's extensions follow it directly in sorted order
            if groups and stem.startswith(groups[-1][0]):
                groups[-1].append(stem)
            else:
                groups.append([stem])
        self.groups: list[tuple[str, Optional[list[str]]]] = []
        self.starts: list[int] = []
        total = 0
        for group in groups:
            built = None
            if len(group) > 1:
                built = sorted({stem + noun for stem in group for noun in self.nouns})
            self.starts.append(total)
            self.groups.append((group[0], built))
            total += len(built) if built is not None else len(self.nouns)
        self.total = total

    def __len__(self) -> int:
        return self.total

    def __getitem__(self, index: int) -> str:
        if not 0 <= index < self.total:
            raise IndexError(index)
        at = bisect.bisect_right(self.starts, index) - 1
        stem, built = self.groups[at]
        offset = index - self.starts[at]
        return built[offset] if built is not None else stem + self.nouns[offset]


@functools.cache
def needle_words() -> AdjectiveNounWords:
    lists = wonderwords_lists()
    return AdjectiveNounWords(lists['adjective'], lists['noun'])


def cwe_words() -> list[str]:
    """The distinct nouns, adjectives and verbs, sorted (the generator shuffles them by seed)."""
    lists = wonderwords_lists()
    return sorted(set(lists['noun'] + lists['adjective'] + lists['verb']))


# punkt_tab ---------------------------------------------------------------------------------------


def punkt_folder(inputs: Optional[Path] = None) -> Path:
    """The English punkt_tab model: under ``<inputs>/nltk_data`` if there, else on NLTK's data
    path (``NLTK_DATA``, ``~/nltk_data``, ...), where ``nltk.download('punkt_tab')`` puts it."""
    roots = [Path(inputs) / 'nltk_data'] if inputs is not None else []
    roots += [Path(p) for p in os.environ.get('NLTK_DATA', '').split(os.pathsep) if p]
    for root in _with_nltk_path(roots):
        if all((root / PUNKT_ENGLISH / name).is_file() for name in PUNKT_FILES):
            return root / PUNKT_ENGLISH
    raise RulerInputError(
        "nltk's punkt_tab English model (RULER's sentence splitter for the essay haystack) is "
        f'not in {", ".join(str(r / PUNKT_ENGLISH) for r in _with_nltk_path(roots))}: run '
        '`lveval build ruler-punkt --wheel llama_index_core-0.14.25-py3-none-any.whl --out '
        'INPUTS` (or nltk.download(\'punkt_tab\') where online); see docs/ruler.md, "punkt_tab"'
    )


def _with_nltk_path(roots: list[Path]):
    """``roots``, then NLTK's data path (importing nltk, 2 s, only when the first are not it)."""
    yield from roots
    try:
        import nltk.data
    except ImportError as exc:
        raise RulerInputError('RULER splits its essays with nltk: pip install nltk') from exc
    yield from (Path(p) for p in nltk.data.path)


def punkt_files(folder: Path) -> list[Path]:
    return [Path(folder) / name for name in PUNKT_FILES]


@functools.cache
def sentence_splitter(folder: Path):
    """nltk's ``sent_tokenize`` for English with the punkt_tab model in ``folder``, its files
    read here (nltk 3.10's own loader refuses folders outside its data path)."""
    from nltk.tabdata import PunktDecoder
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    decoder, params = PunktDecoder(), PunktParameters()
    files = dict(zip(PUNKT_FILES, punkt_files(folder)))
    with open(files['collocations.tab'], encoding='utf-8') as stream:
        params.collocations = set(decoder.tab2tups(stream))
    with open(files['sent_starters.txt'], encoding='utf-8') as stream:
        params.sent_starters = decoder.txt2set(stream)
    with open(files['abbrev_types.txt'], encoding='utf-8') as stream:
        params.abbrev_types = decoder.txt2set(stream)
    with open(files['ortho_context.tab'], encoding='utf-8') as stream:
        params.ortho_context = decoder.tab2intdict(stream)
    return PunktSentenceTokenizer(params).tokenize


# The punkt_tab package of nltk_data (punkt_tab.zip), as llama-index-core 0.14.25 ships it.
PUNKT_TAB_ZIP_SHA256 = 'e57f64187974277726a3417ca6f181ec5403676c717672eef6a748a7b20e0106'
_WHEEL_ZIP = 'llama_index/core/_static/nltk_cache/tokenizers/punkt_tab.zip'


def extract_punkt(wheel: Path, out: Path) -> Path:
    """The English punkt_tab model from a downloaded llama-index-core wheel (it ships nltk_data's
    punkt_tab.zip, checked by its sha256) into ``out/nltk_data/tokenizers/punkt_tab/english``."""
    import io
    import zipfile

    from ..files.atomic import atomic_open

    try:
        with zipfile.ZipFile(wheel) as outer:
            packed = outer.read(_WHEEL_ZIP)
    except (OSError, zipfile.BadZipFile, KeyError) as exc:
        raise RulerInputError(
            f'{wheel}: no {_WHEEL_ZIP} in it ({exc}); download the wheel with `pip download '
            '--no-deps llama-index-core==0.14.25`'
        ) from exc
    if hashlib.sha256(packed).hexdigest() != PUNKT_TAB_ZIP_SHA256:
        raise RulerInputError(
            f'{wheel}: its punkt_tab.zip is not the official one (sha256 '
            f'{PUNKT_TAB_ZIP_SHA256[:8]}...); use llama-index-core 0.14.25'
        )
    target = Path(out) / 'nltk_data' / PUNKT_ENGLISH
    with zipfile.ZipFile(io.BytesIO(packed)) as inner:
        for name in PUNKT_FILES:
            with atomic_open(target / name, 'wb') as stream:
                stream.write(inner.read(f'punkt_tab/english/{name}'))
    return target
