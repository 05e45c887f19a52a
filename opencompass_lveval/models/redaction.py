"""What no message may hold: every form in which a key, or a user and password in a URL, can come
back from a server, and the check that a key can be sent at all.

A server may echo the key it was sent, and not always as it was sent: percent-encoded in a URL it
names, JSON-escaped in a body, as Python's repr in a traceback it returns. ``secret_forms`` gives
each of these forms so that ``redacted`` can take them all out of an error, a log line or an
answer. A key that cannot be an HTTP header value (a newline from a file, a curly quote from a copy
and paste) is refused by ``key_problem`` before the HTTP library sees it: that library's error
prints the header.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import unicodedata
import urllib.parse

REDACTED = '[redacted]'  # what stands where a secret was
_HEX_ESCAPE = re.compile(r'%[0-9A-F]{2}')


def redacted(text: str, secrets: list[str]) -> str:
    """``text`` with each of ``secrets`` (longest first) replaced by ``REDACTED``."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


@functools.lru_cache(maxsize=64)
def secret_forms(secret: str) -> frozenset[str]:
    """``secret`` as it is and without the whitespace around it (which an error about a malformed
    header drops), each percent-encoded ('/' encoded or kept, '+' or '%20' for a space, upper- or
    lower-case hex), JSON-escaped (ASCII or not, '/' as '\\/' or not) and as repr and ascii write
    it."""
    forms = set()
    for plain in {secret, secret.strip()} - {''}:
        quoted = {
            urllib.parse.quote(plain, safe=''),
            urllib.parse.quote(plain),
            urllib.parse.quote_plus(plain, safe=''),
            urllib.parse.quote_plus(plain),
        }
        quoted |= {_HEX_ESCAPE.sub(lambda hex: hex[0].lower(), form) for form in quoted}
        escaped = {json.dumps(plain, ensure_ascii=ascii_only)[1:-1] for ascii_only in (True, False)}
        escaped |= {form.replace('/', '\\/') for form in escaped}
        forms |= {plain, *quoted, *escaped, repr(plain)[1:-1], ascii(plain)[1:-1]}
    return frozenset(forms - {''})


def url_secrets(url: str) -> list[str]:
    """A user and password in ``url``: as written, decoded, and as the Basic credentials requests
    sends for them."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return []
    user, password = parts.username or '', parts.password or ''
    plain = [urllib.parse.unquote(user), urllib.parse.unquote(password)]
    basic = base64.b64encode(':'.join(plain).encode()).decode()
    return [value for value in (user, password, *plain, basic) if value]


def shown_url(url: str) -> str:
    """``url`` as a message may show it: a user and password in it replaced."""
    return re.sub(r'(//)[^/?#]*@', rf'\g<1>{REDACTED}@', url, count=1)


def key_problem(key: str) -> str | None:
    """Why ``key`` cannot be sent as a Bearer header (None: it can), naming no part of it. A key
    is printable ASCII: anything else came from a file (a newline) or a copy and paste (a curly
    quote, a no-break space), and is refused rather than sent to fail in the HTTP library, whose
    error prints the header, or to be echoed back in an encoding redaction cannot foresee."""
    if key.isascii() and key.isprintable() and key.strip():
        return None
    if not key.strip():
        return 'nothing but whitespace'
    position, char = next(
        (i, c) for i, c in enumerate(key) if not (c.isascii() and c.isprintable())
    )
    where = f'at character {position + 1} of {len(key)}'
    if char in '\r\n':
        return f'a line break {where}'
    if unicodedata.category(char) == 'Cc':
        return f'a control character (U+{ord(char):04X}) {where}'
    name = unicodedata.name(char, 'unnamed')
    return f'U+{ord(char):04X} ({name}), which is not ASCII, {where}'
