from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / 'shared'


@pytest.fixture(scope='session')
def shared() -> Path:
    """``../shared`` (reference constants, golden results); tests needing it skip without it."""
    if not SHARED.is_dir():
        pytest.skip(f'{SHARED} is absent: the reference and golden files live there')
    return SHARED
