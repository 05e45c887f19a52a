"""``TwoCallGenInferencer``: OpenCompass's generation with a two-call answer (``answer_call.py``)."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Optional

from opencompass.openicl.icl_inferencer import GenInferencer
from opencompass.openicl.icl_inferencer.icl_base_inferencer import GenInferencerOutputHandler
from opencompass.registry import ICL_INFERENCERS

from .answer_call import ANSWER_BODY, ANSWER_PROMPT, FIRST_REPLY, AnswerCall, merged_usage


@ICL_INFERENCERS.register_module()
class TwoCallGenInferencer(GenInferencer):
    """``GenInferencer`` whose answer takes two calls (``answer_call``: an ``AnswerCall`` as a
    dict); see the module. Resumes (``-r``) from its temporary file as ``GenInferencer`` does."""

    def __init__(self, model, max_out_len: int, answer_call: Mapping, **kwargs) -> None:
        super().__init__(model=model, max_out_len=max_out_len, **kwargs)
        self.answer_call = AnswerCall(**answer_call)
        self.answer_call.function()  # a wrong name fails before any call

    def inference(
        self,
        retriever,
        ice_template=None,
        prompt_template=None,
        output_json_filepath: Optional[str] = None,
        output_json_filename: Optional[str] = None,
    ) -> list:
        from pathlib import Path

        handler = GenInferencerOutputHandler()
        folder = output_json_filepath or self.output_json_filepath
        name = output_json_filename or self.output_json_filename
        prompts = self.get_generation_prompt_list_from_retriever_indices(
            retriever.retrieve(),
            retriever,
            self.gen_field_replace_token,
            max_seq_len=self.max_seq_len,
            ice_template=ice_template,
            prompt_template=prompt_template,
        )
        reader = retriever.dataset_reader
        rows = reader.dataset['test']
        golds = rows[reader.output_column] if reader.output_column else [None] * len(prompts)
        temporary = Path('tmp_' + name).with_suffix('.jsonl').name
        handler.results_dict = handler.restore_from_jsonl(folder, temporary)
        start = len(handler.results_dict)
        for first in range(start, len(prompts), self.batch_size or 1):
            indices = list(range(first, min(first + (self.batch_size or 1), len(prompts))))
            self._answer_batch(handler, indices, [prompts[i] for i in indices], rows, golds)
            if self.save_every is not None and self.is_main_process:
                handler.write_to_jsonl(folder, temporary)
        if self.is_main_process:
            Path(folder).mkdir(parents=True, exist_ok=True)
            handler.write_to_json(folder, name)
            (Path(folder) / temporary).unlink(missing_ok=True)
        return [sample['prediction'] for sample in handler.results_dict.values()]

    def _generation_kwargs(self) -> dict:
        found = {}
        parameters = inspect.signature(self.model.generate).parameters
        if 'stopping_criteria' in parameters:
            found['stopping_criteria'] = self.stopping_criteria
        if 'min_out_len' in parameters:
            found['min_out_len'] = self.min_out_len
        return found

    def _answer_batch(self, handler, indices: list[int], entries: list, rows, golds) -> None:
        """Both calls of a batch, saved in the handler with the replies and second prompts."""
        model, call = self.model, self.answer_call
        usage = getattr(model, 'usage', None)
        before = len(usage) if isinstance(usage, list) else None
        extra = self._generation_kwargs()
        parsed = model.parse_template(entries, mode='gen')
        replies = model.generate_from_template(entries, max_out_len=self.max_out_len, **extra)
        seconds = [call.prompt_for(rows[index], reply) for index, reply in zip(indices, replies)]
        asked = [number for number, prompt in enumerate(seconds) if prompt is not None]
        answers = [''] * len(entries)
        if asked:
            found = model.generate_from_template(
                [seconds[n] for n in asked], max_out_len=call.max_out_len, **extra
            )
            for number, answer in zip(asked, found):
                answers[number] = answer
        if before is not None:
            records = usage[before:]
            seconds_usage = dict(zip(asked, records[len(entries) :]))
            usage[before:] = [
                merged_usage(records[n], seconds_usage.get(n)) for n in range(len(entries))
            ]
        body_of = getattr(model, 'request_body', None)
        for number, index in enumerate(indices):
            handler.save_results(parsed[number], answers[number], index, gold=golds[index])
            saved = handler.results_dict[str(index)]
            second = seconds[number]
            saved[FIRST_REPLY] = replies[number]
            saved[ANSWER_PROMPT] = (
                None if second is None else model.parse_template(second, mode='gen')
            )
            if body_of is not None:
                saved[ANSWER_BODY] = None if second is None else body_of(second, call.max_out_len)
