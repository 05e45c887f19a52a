"""OpenCompass datasets for Ada-LEval: the official prompts, optional position-bias variants."""
from __future__ import annotations

from typing import Optional

import hashlib
import json

import pyarrow as pa

from ..columnar import ColumnarDataset
from .data import default_data_dir, load_task
from .tasks import bestanswer_prompt, tsort_prompt

POSITIONS = ('front', 'middle', 'rear')


def move_accepted_answer(answers: list[str], label: str, position: str) -> tuple[list[str], str]:
    """The answers with the accepted one moved to the front, middle or rear, and its new label
    (the paper's position-bias study); the others keep their relative order."""
    accepted = int(label[1:]) - 1
    others = answers[:accepted] + answers[accepted + 1:]
    target = {'front': 0, 'middle': len(answers) // 2, 'rear': len(answers) - 1}[position]
    return others[:target] + [answers[accepted]] + others[target:], f'A{target + 1}'


class AdaLEvalDataset(ColumnarDataset):
    """One Ada-LEval task at one setting: columns ``answer``, ``num_choice``, ``prompt``.

    ``task`` is 'bestanswer' or 'tsort'; ``path`` a folder holding the official files at any
    depth; ``cheap`` uses the paper's smaller sample counts; ``position`` (BestAnswer only) moves
    the accepted answer to the 'front', 'middle' or 'rear'. The prompt column comes last so that
    OpenCompass's ``{column}`` replacement never touches the text inside it.
    """

    LAST_COLUMNS = ('prompt',)

    @staticmethod
    def read_table(task: str, setting: str, path: Optional[str] = None, cheap: bool = False,
                   position: Optional[str] = None,
                   limit: Optional[int] = None) -> tuple[pa.Table, str]:
        records = load_task(task, setting, path, cheap, limit)
        columns: dict[str, list] = {'answer': [], 'num_choice': [], 'prompt': []}
        for record in records:
            if task == 'bestanswer':
                answers, label = record['all_answers'], record['answer']
                if position is not None:
                    if position not in POSITIONS:
                        raise ValueError(f'position must be one of {POSITIONS}, not {position!r}')
                    answers, label = move_accepted_answer(answers, label, position)
                prompt = bestanswer_prompt(record['question'], answers)
                columns['num_choice'].append(len(answers))
            else:
                label = str(record['answer'])
                prompt = record.get('prompt') or tsort_prompt(record['before'], record['parts'],
                                                              record['after'])
                columns['num_choice'].append(24)
            columns['answer'].append(label)
            columns['prompt'].append(prompt)
        key = json.dumps([task, setting, str(path or default_data_dir()), cheap, position, limit,
                          hashlib.sha1(''.join(columns['prompt']).encode()).hexdigest()])
        return pa.table(columns), hashlib.sha1(key.encode()).hexdigest()
