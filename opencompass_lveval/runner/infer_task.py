"""OpenCompass's inference task with the checks that need no weights run first.

Before a model's weights load (minutes on a large model), every model of the task is checked
against every dataset of the task: the model folder exists, the tokenizer loads, a format is known
where the tokenizer has no chat template, and the window holds the template and each dataset's
answer length. A model that fails stops the task with one message naming the model, the dataset
and the numbers. The configs shipped here use it; OpenCompass's own task works too, and then the
same problems surface at the first batch.
"""

from __future__ import annotations

import argparse
import json
import os
import os.path as osp
import time
from pathlib import Path
from typing import Any, Optional

from opencompass.registry import MODELS, TASKS
from opencompass.tasks import openicl_infer
from opencompass.tasks.openicl_infer import OpenICLInferTask
from opencompass.utils import get_infer_output_path, task_abbr_from_cfg

from opencompass_lveval.files.atomic import write_text
from opencompass_lveval.files.errors import ApiError, ModelConfigError
from opencompass_lveval.framework.answer_call import ANSWER_PROMPT, answer_call_of, merged_usage
from opencompass_lveval.models.api import LongContextAPI, default_cache_dir
from opencompass_lveval.models.base import LongContextModel
from opencompass_lveval.models.settings import answer_length
from opencompass_lveval.report.usage import inference_record_path, usage_totals


def model_class(model_cfg: dict) -> Any:
    kind = model_cfg['type']
    return MODELS.get(kind) if isinstance(kind, str) else kind


def check_before_weights(model_cfg: dict, dataset_cfgs: list) -> None:
    """Raise for the first problem a long-context model would meet with these datasets (for an
    API model: before any request, its key variable included)."""
    cls = model_class(model_cfg)
    if not isinstance(cls, type):
        return
    if issubclass(cls, LongContextAPI):
        builder = cls.request_builder(model_cfg)
        key_env = model_cfg.get('key_env')
        if key_env and not os.environ.get(key_env):
            raise ModelConfigError(
                f'{model_cfg.get("abbr")}: the API key variable {key_env} is not set: export '
                f'{key_env}=... in the shell that runs OpenCompass'
            )
    elif issubclass(cls, LongContextModel):
        builder = cls.config_builder(model_cfg)
    else:
        return
    for dataset_cfg in dataset_cfgs:
        try:
            builder.check(answer_length(model_cfg, dataset_cfg))
        except ValueError as exc:
            raise type(exc)(f'{model_cfg.get("abbr")} on {dataset_cfg.get("abbr")}: {exc}') from exc


@TASKS.register_module()
class LongContextInferTask(OpenICLInferTask):
    """``OpenICLInferTask`` that runs ``check_before_weights`` for each of its models first."""

    def get_command(self, cfg_path: str, template: str) -> str:
        return super().get_command(cfg_path, template).replace(openicl_infer.__file__, __file__)

    def run(self, *args, **kwargs):
        # OpenCompass's task names its models x datasets first; a check failing here comes before
        # that, and then the log would mention only the dataset it is named after.
        self.logger.info(f'Task {task_abbr_from_cfg(self.cfg)}')
        started = time.perf_counter()
        for model_cfg, dataset_cfgs in zip(self.model_cfgs, self.dataset_cfgs):
            check_before_weights(model_cfg, dataset_cfgs)
            if _is_api(model_cfg) and not model_cfg.get('cache_dir'):
                model_cfg['cache_dir'] = default_cache_dir(self.work_dir, model_cfg['abbr'])
        elapsed = time.perf_counter() - started
        self.logger.info(f'checked before the weights load in {elapsed:.2f} s')
        # What a cluster's runner handed this task (Ray, Slurm): kept in its log.
        visible = os.environ.get('CUDA_VISIBLE_DEVICES', '(unset)')
        self.logger.info(f'GPUs seen: CUDA_VISIBLE_DEVICES={visible}')
        return super().run(*args, **kwargs)

    def _inference(self):
        """OpenCompass's inference; then each prediction gets its usage record (the model's, in
        order), the dataset's inference time and GPUs are written beside the predictions
        (``{abbr}.inference.json``), and a failed API request names the model and dataset."""
        if not isinstance(getattr(self.model, 'usage', None), list):
            return super()._inference()
        out_path = get_infer_output_path(
            self.model_cfg, self.dataset_cfg, osp.join(self.work_dir, 'predictions')
        )
        self.model.usage = []
        resumed = _resumed_count(out_path)
        self.model.sample_offset = resumed
        started = time.perf_counter()
        try:
            super()._inference()
        except ApiError as exc:
            raise ApiError(
                f'{self.model_cfg["abbr"]} on {self.dataset_cfg["abbr"]}: {exc}'
            ) from None
        if osp.exists(out_path):
            answer = answer_length(self.model_cfg, self.dataset_cfg)
            call = answer_call_of(self.dataset_cfg)
            records = add_usage(out_path, self.model, answer, call and call.max_out_len)
            summary = {
                'wall_s': round(time.perf_counter() - started, 3),
                'gpus': (self.model_cfg.get('run_cfg') or {}).get('num_gpus', 0),
                'answered': len(self.model.usage),
                'resumed': resumed,
                'usage': usage_totals(records),
            }
            write_text(inference_record_path(Path(out_path)), json.dumps(summary))


def _is_api(model_cfg: dict) -> bool:
    cls = model_class(model_cfg)
    return isinstance(cls, type) and issubclass(cls, LongContextAPI)


def _resumed_count(out_path: str) -> int:
    """Predictions OpenCompass's inferencer restores from its temporary file on ``-r``."""
    folder, name = osp.split(out_path)
    temporary = Path(folder) / Path('tmp_' + name).with_suffix('.jsonl').name
    if not temporary.is_file():
        return 0
    try:
        with open(temporary, encoding='utf-8') as stream:
            return sum(1 for line in stream if line.strip() and json.loads(line))
    except ValueError:
        return 0  # OpenCompass sets a damaged file aside and starts over


def add_usage(
    out_path: str, model: Any, max_out_len: int, answer_max_out_len: Optional[int] = None
) -> list[Optional[dict]]:
    """Each prediction of ``out_path`` gets its usage record: this run's, in order, for the
    predictions it made (the last ones); for those a killed run made, an API model's cache's
    (both calls of a two-call answer, its second of ``answer_max_out_len``), else none (null).
    Returns the records, in order."""
    with open(out_path, encoding='utf-8') as stream:
        predictions = json.load(stream)
    order = sorted(predictions, key=int)
    fresh = dict(zip(order[len(order) - len(model.usage) :], model.usage))
    from_cache = getattr(model, 'cached_record', None)  # API models: answers of a killed run
    for index in order:
        entry = predictions[index]
        record = fresh.get(index)
        if record is None and from_cache is not None:
            record = from_cache(entry['origin_prompt'], max_out_len)
            second = entry.get(ANSWER_PROMPT)
            if record is not None and answer_max_out_len is not None:
                asked = None if second is None else from_cache(second, answer_max_out_len)
                record = merged_usage(record, asked)
        entry['usage'] = record
    write_text(out_path, json.dumps(predictions, indent=4, ensure_ascii=False))
    return [predictions[index]['usage'] for index in order]


if __name__ == '__main__':
    from mmengine.config import Config
    from opencompass.utils import get_logger

    parser = argparse.ArgumentParser(description='Model inference, checked before weights load')
    parser.add_argument('config', help='Config file path')
    start = time.time()
    LongContextInferTask(Config.fromfile(parser.parse_args().config)).run()
    get_logger().info(f'time elapsed: {time.time() - start:.2f}s')
