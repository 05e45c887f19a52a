# Ada-LEval BestAnswer with the accepted answer moved to the front, middle or rear of the
# candidates (the paper's position-bias study), at every BestAnswer setting.
from mmengine.config import read_base

with read_base():
    from .adaleval_gen import adaleval_datasets

_adaleval = __import__('opencompass_lveval.framework.benchmarks', fromlist=['named']).named(
    'adaleval'
)
adaleval_position_bias_datasets = [
    dataset
    for position in ('front', 'middle', 'rear')
    for dataset in _adaleval.with_position(adaleval_datasets, position)
]
del _adaleval, adaleval_datasets  # only the variants: `--datasets` takes every *_datasets name
