"""The reply store: replies bound to their requests, first writer wins, damaged or foreign entries
replaced by one writer only, and a store that cannot be written named at once."""

from __future__ import annotations

import errno
import json
import threading

import pytest

from opencompass_lveval.serving.request import planned_request
from opencompass_lveval.serving.store import ReplyStore, ReplyStoreError

SAMPLING = {'temperature': 0, 'max_tokens': 8, 'stop': []}


def request(index: int = 0):
    return planned_request('engine', [index, 7, 7], SAMPLING, f'#{index}')


def reply(of, text: str = 'an answer', **changes) -> dict:
    record = {
        **of.expected(),
        'text': text,
        'completion_tokens': 3,
        'latency_s': 0.1,
        'finish_reason': 'length',
    }
    return {**record, **changes}


def test_a_stored_reply_is_used_only_for_its_own_request(tmp_path):
    store, first, second = ReplyStore(tmp_path), request(0), request(1)
    assert store.put_once(reply(first, 'first'))
    assert store.read(first.expected())[0]['text'] == 'first'
    # The first's reply copied over the second's file: not the second's answer.
    path = store.records.path(second.key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(store.records.path(first.key).read_text())
    found, problem = store.read(second.expected())
    assert found is None and f'its key is {first.key[:70]!r}' in problem
    # Another model's reply, or one longer than its budget, alike.
    for change, said in (
        ({'model': 'another'}, 'its model is'),
        ({'max_tokens': 9}, 'its max_tokens is'),
        ({'prompt_tokens': 2}, 'its prompt_tokens is'),
        ({'completion_tokens': 50}, 'exceed max_tokens=8'),
    ):
        path.write_text(json.dumps(reply(second, **change)))
        assert said in store.read(second.expected())[1]
    # Written again, the foreign entry is set aside and the answer linked.
    assert store.put_once(reply(second, 'second'))
    assert store.read(second.expected())[0]['text'] == 'second'
    assert json.loads(path.with_suffix('.damaged').read_text())['completion_tokens'] == 50


def test_the_first_writer_of_a_key_wins(tmp_path):
    store, asked = ReplyStore(tmp_path), request()
    kept = []

    def write(index: int) -> None:
        if store.put_once(reply(asked, f'writer {index}')):
            kept.append(index)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(kept) == 1
    assert store.read(asked.expected())[0]['text'] == f'writer {kept[0]}'
    assert not [p for p in store.records.path(asked.key).parent.iterdir() if p.suffix == '.part']


def test_two_writers_on_a_damaged_entry_keep_the_first_good_reply(tmp_path, monkeypatch):
    """Both writers find the entry damaged before either replaces it: one replaces it, the other
    finds its good reply and keeps it (before: the second set the first's reply aside)."""
    store, asked = ReplyStore(tmp_path), request()
    path = store.records.path(asked.key)
    path.parent.mkdir(parents=True)
    path.write_text('{"text": ')
    both_found_it = threading.Barrier(2)
    read = store.answered

    def answered_after_both_looked(expected):
        found = read(expected)
        if threading.current_thread().name.startswith('writer'):
            both_found_it.wait(timeout=5)
            threading.current_thread().name = 'done'  # only the first look waits
        return found

    monkeypatch.setattr(store, 'answered', answered_after_both_looked)
    kept = []
    threads = [
        threading.Thread(
            target=lambda i=i: kept.append(i) if store.put_once(reply(asked, f'w{i}')) else None,
            name=f'writer {i}',
        )
        for i in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(kept) == 1
    assert store.read(asked.expected())[0]['text'] == f'w{kept[0]}'
    assert path.with_suffix('.damaged').read_text() == '{"text": '


def test_a_store_that_cannot_be_written_is_named(tmp_path, monkeypatch):
    blocked = tmp_path / 'a file'
    blocked.write_text('')
    with pytest.raises(ReplyStoreError, match=r'cannot be written \(Not a directory: .*a file'):
        ReplyStore(blocked / 'store').put_once(reply(request()))

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, 'No space left on device')

    monkeypatch.setattr('opencompass_lveval.serving.store.os.fsync', full)
    with pytest.raises(ReplyStoreError, match='No space left on device.*free space'):
        ReplyStore(tmp_path / 'store').put_once(reply(request()))
