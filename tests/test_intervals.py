"""The bootstrap intervals: coverage, the stratified Overall, and determinism, each checked
against a reference computed without the code under test."""

from __future__ import annotations

import random

import numpy as np
import pytest

from opencompass_lveval.report.intervals import (
    bootstrap_cells,
    bootstrap_means,
    interval,
    pooled,
    resample_counts,
)


def test_about_95_percent_of_intervals_cover_the_true_mean():
    rng = np.random.default_rng(7)
    covered = 0
    for trial in range(400):
        scores = 100.0 * (rng.random(120) < 0.3)  # Bernoulli(0.3) records: the mean is 30
        low, high = interval(bootstrap_means(scores, key=('coverage', trial))[0])
        covered += low <= 30 <= high
    assert 0.92 * 400 <= covered <= 0.98 * 400


def test_the_stratified_overall_matches_a_direct_loop():
    rng = random.Random(3)
    datasets = [[rng.uniform(0, 100) for _ in range(rng.randrange(60, 140))] for _ in range(11)]
    found = bootstrap_cells({('d', i): {'row': np.array(s)} for i, s in enumerate(datasets)})
    low, high = interval(pooled(found[('d', i)]['row'] for i in range(11)))
    means = []  # resample within each dataset, then the unweighted mean of the 11 means
    for _ in range(2000):
        means.append(sum(sum(rng.choices(s, k=len(s))) / len(s) for s in datasets) / len(datasets))
    means.sort()
    assert low == pytest.approx(means[int(0.025 * 2000)], abs=0.35)
    assert high == pytest.approx(means[int(0.975 * 2000)], abs=0.35)
    centre = sum(sum(s) / len(s) for s in datasets) / 11
    assert low < centre < high


def test_resamples_are_seeded_per_cell_and_draw_every_record_n_times():
    counts = resample_counts(50, 200, seed=0, key=('lveval', 'factrecall_en', '16k'))
    assert counts.shape == (200, 50) and (counts.sum(axis=1) == 50).all()
    again = resample_counts(50, 200, seed=0, key=('lveval', 'factrecall_en', '16k'))
    other = resample_counts(50, 200, seed=1, key=('lveval', 'factrecall_en', '16k'))
    assert (counts == again).all() and not (counts == other).all()
    scores = np.arange(50.0)
    direct = [sum(c * s for c, s in zip(row, scores)) / 50 for row in counts]
    means = bootstrap_means(scores, 200, 0, ('lveval', 'factrecall_en', '16k'))[0]
    assert means == pytest.approx(direct)


def test_no_interval_without_records_and_pooling_needs_every_member():
    assert interval(None) is None
    assert pooled([np.zeros(3), None]) is None
    assert list(pooled([np.zeros(3), np.full(3, 2.0)])) == [1.0, 1.0, 1.0]
    assert bootstrap_cells({'c': {'row': np.array([])}}) == {}
