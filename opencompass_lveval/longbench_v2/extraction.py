"""The answer letter in a LongBench v2 reply, read exactly as pred.py's ``extract_answer`` reads it.

Every ``*`` is removed first (Markdown bold), then the first ``The correct answer is (X)`` wins,
else the first ``The correct answer is X``; X is one of A-D, matched case-sensitively and with no
boundary after it, so "is Alpha" reads A and "is BC" reads B, while "is: (A)", a lower-case "the
correct answer", two spaces or full-width brackets read nothing. Both modes use this reading: it is
what the prompt asks for and what every published number was scored with.
"""

from __future__ import annotations

import re
from typing import Optional

_BRACKETED = re.compile(r'The correct answer is \(([A-D])\)')
_BARE = re.compile(r'The correct answer is ([A-D])')


def extract_answer(reply: str) -> Optional[str]:
    """The letter A-D the reply gives, or None."""
    text = reply.replace('*', '')
    found = _BRACKETED.search(text) or _BARE.search(text)
    return found.group(1) if found else None
