"""Exact noise floors: what a uniformly random order of the pool scores, per query."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalvalidity.metrics import Metric

__all__ = ["Floor"]


@dataclass(frozen=True)
class Floor:
    """Per-query floor statistics of one metric under a uniformly random order of the pool.

    Attributes
    ----------
    metric : Metric
    expected : numpy.ndarray
        E[metric], float64, one value per query.
    variance : numpy.ndarray
        Var[metric] per query.
    ceiling : numpy.ndarray
        The best value achievable per query given which gold items are in the pool.
    """

    metric: Metric
    expected: np.ndarray
    variance: np.ndarray
    ceiling: np.ndarray

    @property
    def std(self) -> np.ndarray:
        """Standard deviation per query."""
        return np.sqrt(self.variance)

    @property
    def headroom(self) -> np.ndarray:
        """Headroom per query: ceiling minus expected."""
        return self.ceiling - self.expected
