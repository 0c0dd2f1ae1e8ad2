from ragjudge.report.warning_kinds import WarningKind, by_kind, kind_of
from ragjudge.report.workspace import relative_paths


def test_warnings_that_differ_in_names_places_and_numbers_are_one_kind() -> None:
    warnings = [
        f"case 'c{n}' (/runner/work/repo/cases/a.yaml:{n * 7}): category 'oos' looks like out-of-scope"
        for n in range(58)
    ]
    kinds = by_kind([*warnings, "the treatment and control URLs are the same"], root="/runner/work/repo")
    assert kinds == [
        WarningKind("case 'c0' (cases/a.yaml:0): category 'oos' looks like out-of-scope", 58),
        WarningKind("the treatment and control URLs are the same", 1),
    ]
    assert kinds[0].text() == "case 'c0' (cases/a.yaml:0): category 'oos' looks like out-of-scope (and 57 more like it)"
    assert kinds[1].text() == "the treatment and control URLs are the same"


def test_different_sentences_stay_apart() -> None:
    assert kind_of("response.answer found nothing in 3 replies") != kind_of("response.ids found nothing in 3 replies")
    assert len(by_kind(["a warning", "another warning"])) == 2


def test_paths_outside_the_workspace_stay_as_they_are() -> None:
    assert relative_paths("read /tmp/x.json and /w/s/c.yaml", "/w/s") == "read /tmp/x.json and c.yaml"
    assert relative_paths("read /x", "/") == "read /x"


def test_the_workspace_is_githubs_when_set(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("GITHUB_WORKSPACE", "/github/workspace")
    assert by_kind(["feedback /github/workspace/fb.jsonl unreadable"])[0].first == "feedback fb.jsonl unreadable"
