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
import time
from typing import Any

from opencompass.registry import MODELS, TASKS
from opencompass.tasks import openicl_infer
from opencompass.tasks.openicl_infer import OpenICLInferTask

from opencompass_lveval.models.base import LongContextModel


def answer_length(model_cfg: dict, dataset_cfg: dict) -> int:
    """The answer length a dataset asks of a model, as OpenCompass decides it: the dataset's
    inferencer ``max_out_len``, else the model's; perplexity scoring generates nothing."""
    inferencer = dataset_cfg['infer_cfg']['inferencer']
    if 'PPL' in str(inferencer.get('type', '')):
        return 0
    return inferencer.get('max_out_len', model_cfg.get('max_out_len')) or 0


def model_class(model_cfg: dict) -> Any:
    kind = model_cfg['type']
    return MODELS.get(kind) if isinstance(kind, str) else kind


def check_before_weights(model_cfg: dict, dataset_cfgs: list) -> None:
    """Raise for the first problem a long-context model would meet with these datasets."""
    cls = model_class(model_cfg)
    if not (isinstance(cls, type) and issubclass(cls, LongContextModel)):
        return
    builder = cls.input_builder(cls.input_settings(model_cfg))
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
        for model_cfg, dataset_cfgs in zip(self.model_cfgs, self.dataset_cfgs):
            check_before_weights(model_cfg, dataset_cfgs)
        return super().run(*args, **kwargs)


if __name__ == '__main__':
    from mmengine.config import Config
    from opencompass.utils import get_logger

    parser = argparse.ArgumentParser(description='Model inference, checked before weights load')
    parser.add_argument('config', help='Config file path')
    start = time.time()
    LongContextInferTask(Config.fromfile(parser.parse_args().config)).run()
    get_logger().info(f'time elapsed: {time.time() - start:.2f}s')
