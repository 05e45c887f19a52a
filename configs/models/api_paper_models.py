# The API rows of the LV-Eval and Ada-LEval papers (GPT-3.5/GPT-4 for LV-Eval; GPT-4-Turbo,
# GPT-3.5-Turbo and Claude-2 for Ada-LEval), each fed as its paper's official code fed it
# (`inputs='official'`; Claude-2 had no official code: exact inputs). Keys come from the
# environment variable each row names (OPENAI_API_KEY, ANTHROPIC_API_KEY), never from a config.
# `lveval inputs CONFIG --out F --count-only` prints the tokens and cost before a run.
from opencompass_lveval.models import LongContextAPI

_zoo = __import__('opencompass_lveval.models.zoo', fromlist=['zoo'])
lveval_api_models = [dict(type=LongContextAPI, **entry) for entry in _zoo.api_entries('lveval')]
adaleval_api_models = [dict(type=LongContextAPI, **entry) for entry in _zoo.api_entries('adaleval')]
api_paper_models = lveval_api_models + adaleval_api_models
models = api_paper_models
del _zoo
