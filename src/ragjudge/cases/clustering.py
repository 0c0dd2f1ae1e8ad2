"""Similar questions grouped: production's bad answers, clustered before a person reads them (`cases import-bad`).

Each question is normalised as `dedupe` does and cut into character n-grams (bigrams and trigrams; unigrams and
bigrams for a mostly Chinese one), which needs no word splitter; the n-grams are weighted by TF-IDF over the
questions at hand and compared by cosine. Clustering is greedy and in input order: a question joins the first
cluster whose first question it is at least `THRESHOLD` similar to, else it starts a cluster. Standard library
only. `cases generate` drops a generated question that repeats an earlier one by the same measure
(`near_duplicates`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from ragjudge.cases.duplicates import normalize_question
from ragjudge.cases.language import is_cjk

THRESHOLD = 0.5
"""Cosine similarity of the n-gram TF-IDF vectors at or above which two questions are one cluster: "How long do
refunds take?" and "how long does a refund take" are (0.63), "退款要多久？" and "退款需要多久" are (0.72); "How
long does shipping take?" is not with the first (0.39), nor "How do I reset my password?" (0.10)."""


def _grams(text: str) -> Counter[str]:
    """Character bigrams and trigrams; for a mostly Chinese question unigrams and bigrams (a short CJK question
    has too few trigrams to compare on)."""
    flat = " ".join(normalize_question(text).split())
    sizes = (1, 2) if 2 * sum(is_cjk(ch) for ch in flat) > len(flat) else (2, 3)
    return Counter(flat[i : i + n] for n in sizes for i in range(len(flat) - n + 1))


def vectors(questions: Sequence[str]) -> list[dict[str, float]]:
    """Each question's TF-IDF vector over its character bigrams and trigrams, unit length."""
    counts = [_grams(q) for q in questions]
    df = Counter(g for c in counts for g in c)
    n = len(questions)
    out = []
    for c in counts:
        v = {g: tf * (math.log((1 + n) / (1 + df[g])) + 1) for g, tf in c.items()}
        norm = math.sqrt(sum(w * w for w in v.values())) or 1.0
        out.append({g: w / norm for g, w in v.items()})
    return out


def cosine(a: dict[str, float], b: dict[str, float]) -> float:
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    return sum(w * large.get(g, 0.0) for g, w in small.items())


def clusters(questions: Sequence[str], threshold: float = THRESHOLD) -> list[list[int]]:
    """The questions' positions grouped, each cluster in input order, clusters in the order they started."""
    vs = vectors(questions)
    groups: list[list[int]] = []
    for k, v in enumerate(vs):
        home = next((g for g in groups if cosine(vs[g[0]], v) >= threshold), None)
        if home is None:
            groups.append([k])
        else:
            home.append(k)
    return groups


NEAR_DUPLICATE = 0.7
"""Cosine at or above which a generated question repeats an earlier one (`cases generate`): higher than
`THRESHOLD`, since questions about one document share its words and are still different questions. Among a
few refund questions, "How long do refunds take?" and "How long do the refunds take" are (about 0.75), as are
"退款要多久？" and "退款需要多久" (0.7); "How long do credit card refunds take?" and "How long do wallet refunds
take?" are not (0.4), nor "信用卡退款多久到账？" and "钱包退款多久到账？" (0.56)."""


def near_duplicates(earlier: Sequence[str], candidates: Sequence[str], threshold: float = NEAR_DUPLICATE) -> list[int]:
    """For each candidate, in order, the position of the question it repeats (in `earlier` + the candidates
    kept before it: the same after normalisation, or at least `threshold` similar), or -1 when it is new."""
    everything = [*earlier, *candidates]
    vs = vectors(everything)
    keys = [normalize_question(q) for q in everything]
    kept = list(range(len(earlier)))
    out = []
    for k in range(len(earlier), len(everything)):
        first = next((j for j in kept if keys[j] == keys[k] or cosine(vs[j], vs[k]) >= threshold), -1)
        if first < 0:
            kept.append(k)
        out.append(first)
    return out
