"""How often a noisy judge fails the gate falsely, and how often a real drop is caught, with `judge.rejudge`.

Run: python bench/judge_noise.py [--prs 200] [--cases 100] [--flip 0.1] [--seed 7]. Seeded; no network.

The gate simulated: main's report and the PR's are each one run of the same 100 cases; a case's judge-decided
verdict is right with probability 1 - flip, per judgement. A case failing its first judgement, or passing it where
main failed the case, is judged `rejudge` more times and takes the majority (`ragjudge.gate.rejudge.majority_passes`,
a tie keeps the failure); a case whose judgements split is `judge_split`, never a regression. When main's run
judged the very same answer, main's outcome is one more vote (`ragjudge.gate.main_vote`), at no call. The gate
fails on `newly_failing <= 0`: a case passing on main and failing, unsplit, on the PR.

Two services: one that answers a case the same way every time (what a deterministic pipeline does; main's vote
applies to every unchanged answer), and one that rewords every answer on every run (main's vote never applies).
Unchanged PR: every answer good on both sides. Real drop: 8 of the PR's answers changed and bad (a right judgement
fails them).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ragjudge.gate.rejudge import majority_passes


def judged(good: bool, flip: float, rejudge: int, rng: random.Random, main: str | None) -> tuple[str, bool, int]:
    """(status, split, judge calls) of one case in one run; `main`: main's status when it judged this very answer
    (its vote), `"fail?"` when main failed the case on another answer (a pass is then judged again), else None."""

    def once() -> str:
        right = rng.random() >= flip
        return "pass" if good == right else "fail"

    first = once()
    if rejudge == 0 or (first == "pass" and main not in ("fail", "fail?")):
        return first, False, 1
    statuses = [first, *(once() for _ in range(rejudge))]
    votes = [*statuses, *([main] if main in ("pass", "fail") else [])]
    status = "pass" if majority_passes(votes) else "fail"
    return status, len(set(votes)) > 1, 1 + rejudge


def one_pr(cases: int, bad: int, flip: float, rejudge: int, same: bool, rng: random.Random) -> tuple[bool, int]:
    """(the gate failed, judge calls) for one simulated PR against its own simulated main."""
    failed, calls = False, 0
    for k in range(cases):
        main, _, c_main = judged(True, flip, rejudge, rng, None)
        unchanged = same and k >= bad  # the bad answers are new answers: main never judged them
        vote = main if unchanged else ("fail?" if main == "fail" else None)
        now, split, c_now = judged(k >= bad, flip, rejudge, rng, vote)
        calls += c_main + c_now
        failed |= main == "pass" and now == "fail" and not split
    return failed, calls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prs", type=int, default=200)
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--flip", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    print(
        f"| service | rejudge | false failures (unchanged PR, {args.prs} PRs) | real drops caught "
        f"(8 of {args.cases} worse) | judge calls per case |"
    )
    print("|---|---|---|---|---|")
    for same, name in ((True, "same answer each run"), (False, "rewords every answer")):
        for rejudge in (0, 1, 2, 3):
            rng = random.Random(args.seed * 100 + rejudge)
            false = [one_pr(args.cases, 0, args.flip, rejudge, same, rng) for _ in range(args.prs)]
            drop = [one_pr(args.cases, 8, args.flip, rejudge, same, rng) for _ in range(args.prs)]
            calls = sum(c for _, c in false + drop) / (2 * len(false + drop) * args.cases)
            print(
                f"| {name} | {rejudge} | {sum(f for f, _ in false) / args.prs:.1%} "
                f"| {sum(f for f, _ in drop) / args.prs:.1%} | {calls:.2f} |"
            )


if __name__ == "__main__":
    main()
