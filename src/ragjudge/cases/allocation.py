"""How many questions each document is asked for: in proportion to its length, never all from a few.

A document's size is counted in words: each run of Latin letters or digits is one, and each Han character two
thirds of one (a Chinese sentence takes about one and a half characters for each word of its English), so that
a Chinese and an English document saying the same are about the same size. Documents under `MIN_WORDS` are too
short to ask about and get none. The others share `n` by the largest remainder method
(each gets the whole part of its share, and the leftover questions go to the largest fractional parts); when
`n` reaches their number, each first gets one, so that no document is left out for a longer neighbour. Ties are
broken in an order drawn from the seed, so a rerun with the same seed asks the same.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from ragjudge.cases.language import HAN

MIN_WORDS = 15
"""A document of fewer words than this is too short to ask about (a title, a stub, a line of contact details)."""
_RUN = re.compile(r"[^\W_]+")


def size_of(text: str) -> float:
    """`text`'s length in words: each run of letters or digits that is not Han, and 2/3 for each Han character."""
    # A run of letters stops at a Han character, which counts on its own.
    han = len(HAN.findall(text))
    runs = len(_RUN.findall(HAN.sub(" ", text)))
    return runs + han * 2 / 3


def allocate(sizes: Sequence[float], n: int, seed: int = 0) -> list[int]:
    """Questions per document for `n` in all, by size (a document under `MIN_WORDS` gets 0)."""
    eligible = [k for k, s in enumerate(sizes) if s >= MIN_WORDS]
    counts = [0] * len(sizes)
    if not eligible or n <= 0:
        return counts
    order = list(eligible)
    random.Random(seed).shuffle(order)  # who wins a tie
    rank = {k: r for r, k in enumerate(order)}
    left = n
    if n >= len(eligible):
        for k in eligible:
            counts[k] = 1
        left -= len(eligible)
    total = sum(sizes[k] for k in eligible)
    shares = {k: left * sizes[k] / total for k in eligible}
    for k in eligible:
        counts[k] += int(shares[k])
    rest = left - sum(int(s) for s in shares.values())
    for k in sorted(eligible, key=lambda k: (-(shares[k] - int(shares[k])), rank[k]))[:rest]:
        counts[k] += 1
    return counts


def gini(counts: Sequence[int]) -> float:
    """The Gini coefficient of `counts`: 0 when every document has as many questions, towards 1 when a few
    have them all (0 for no questions at all)."""
    values = sorted(counts)
    n, total = len(values), sum(values)
    if n == 0 or total == 0:
        return 0.0
    weighted = sum((2 * (i + 1) - n - 1) * v for i, v in enumerate(values))
    return weighted / (n * total)


def picks(sizes: Sequence[float], m: int, seed: int) -> list[int]:
    """`m` documents (positions) to draw single extra items from (out-of-scope questions, conversations):
    spread over the askable documents, by the same allocation, each document at most once while there are
    enough of them."""
    counts = allocate(sizes, m, seed)
    return [k for k, c in enumerate(counts) for _ in range(c)]
