"""Ranks with ties given their mean rank: what Wilcoxon's test and Spearman's correlation rank by."""

from __future__ import annotations

from collections.abc import Sequence


def mid_ranks(values: Sequence[float]) -> tuple[list[float], list[int]]:
    """1-based ranks with ties given their mean rank, and the sizes of the tie groups (in ascending order).

    The ranks are scipy's ``rankdata(values, method="average")``; a mean rank is a whole or half number,
    exact in floating point.
    """
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    groups: list[int] = []
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for k in range(start, end + 1):
            ranks[order[k]] = (start + end) / 2 + 1
        groups.append(end - start + 1)
        start = end + 1
    return ranks, groups
