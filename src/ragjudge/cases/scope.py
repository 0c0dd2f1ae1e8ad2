"""What a case's category says about whether it is to be answered: out-of-scope cases are to be declined."""

from __future__ import annotations

import re

OUT_OF_SCOPE_CATEGORIES = frozenset({"out of scope", "oos", "超纲", "超出范围"})
"""Categories meaning "should be declined", compared after `category_key` (case, `-`, `_` and spaces folded)."""

# Words that make a category look like an out-of-scope one; an unrecognised such category is warned about.
_SCOPE_HINTS = ("scope", "oos", "超纲", "超出", "范围", "offtopic", "outofdomain")


def category_key(category: str) -> str:
    """`Out-Of-Scope`, `out_of_scope` and ` out  of scope ` all become `out of scope`."""
    return " ".join(re.split(r"[\s_\-]+", category.strip().lower())).strip()


def is_out_of_scope(category: str | None) -> bool:
    return category is not None and category_key(category) in OUT_OF_SCOPE_CATEGORIES


def expects_answer(should_answer: bool | None, category: str | None) -> bool:
    """`should_answer` when it is given, else what the category says: an out-of-scope case is to be declined."""
    return should_answer if should_answer is not None else not is_out_of_scope(category)


def looks_out_of_scope(category: str | None) -> bool:
    """A category a person probably meant as out-of-scope, though it is not one of the recognised spellings."""
    if category is None or is_out_of_scope(category):
        return False
    compact = category_key(category).replace(" ", "")
    return any(hint in compact for hint in _SCOPE_HINTS)
