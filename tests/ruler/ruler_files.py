"""Where RULER's test data lies (tests/data), shared by its tests: a module of its own name, since
another folder's conftest.py may be the one `import conftest` finds."""

from parity_data import DATA

GOLDEN = DATA / 'golden' / 'ruler'
STAND_IN = DATA / 'reference' / 'stand_in'
LLAMA2_SP = DATA / 'reference' / 'tokenizers' / 'llama2_sp'
NLTK_DATA = DATA / 'reference' / 'nltk_data'
PUNKT = NLTK_DATA / 'tokenizers' / 'punkt_tab' / 'english'


def golden_files() -> list[tuple[int, str]]:
    """(length, task) of the 30 golden files."""
    return sorted(
        (int(p.parts[-3]), p.parts[-2]) for p in (GOLDEN / 'data').glob('*/*/validation.jsonl')
    )


def golden_text(length: int, task: str) -> str:
    return (GOLDEN / 'data' / str(length) / task / 'validation.jsonl').read_text(encoding='utf-8')
