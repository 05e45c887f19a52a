"""Which datasets each model of an OpenCompass config runs, as OpenCompass 0.5.4's partitioners
pair them (``BasePartitioner.parse_model_dataset_args``): by the config's
``model_dataset_combinations`` where it has them (each model its own copies of cells, as RULER's
per-model data gives them), else every model with every dataset. Plain data in, plain data out:
the leaderboard reads dumped configs with it, ``lveval inputs`` loaded ones."""

from __future__ import annotations

from collections.abc import Mapping


def model_datasets(config: Mapping) -> list[tuple[dict, list[dict]]]:
    """(model config, its dataset configs), in the config's order."""
    combinations = config.get('model_dataset_combinations')
    if not combinations:
        return [(model, list(config.get('datasets') or [])) for model in config['models']]
    return [
        (model, list(combination['datasets']))
        for combination in combinations
        for model in combination['models']
    ]
