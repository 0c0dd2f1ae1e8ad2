"""The README is the front door and docs/ the manual (a MkDocs site): both hold together.

The README stays short and its two set-up commands are the ones .ci/run runs; no relative link in the README or
the docs leads nowhere (a file, or a heading's anchor in a Markdown file); mkdocs.yml's nav lists every page;
and the build hook's generated parts (the contracts walked from their top models, the metric tables, the
README's sections) are made from the code without MkDocs installed, so a break shows here too, not only in
`mkdocs build --strict`.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
MAX_README_LINES = 300

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^\s*```")


def prose(path: Path) -> Iterator[tuple[int, str]]:
    """The lines of a Markdown file outside fenced code blocks, numbered from 1."""
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            yield number, line


def slug(heading: str) -> str:
    """A heading's anchor as MkDocs (Python-Markdown's toc) makes it; GitHub's agrees for these headings."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = unicodedata.normalize("NFKD", text.replace("`", "").replace("*", ""))
    text = re.sub(r"[^\w\s-]", "", text.encode("ascii", "ignore").decode("ascii")).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(path: Path) -> set[str]:
    return {slug(line.lstrip("#").strip()) for _, line in prose(path) if re.match(r"#{1,6} ", line)}


def test_the_readme_is_a_front_door() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines: the reference belongs in docs/"


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_somewhere(page: Path) -> None:
    broken = []
    for number, line in prose(page):
        for target in _LINK.findall(line):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            if not resolved.exists():
                broken.append(f"{page.name}:{number}: {target} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                broken.append(f"{page.name}:{number}: {target} (no heading makes #{anchor})")
    assert broken == []


def test_the_slug_is_the_one_mkdocs_makes() -> None:
    assert slug("OpenAI-compatible (`judge.provider: openai`)") == "openai-compatible-judgeprovider-openai"
    assert slug("Is the answer right? Reference answers and criteria") == (
        "is-the-answer-right-reference-answers-and-criteria"
    )
    assert slug("The team's criteria and the reference's points") == "the-teams-criteria-and-the-references-points"
    assert slug("### `ragjudge run --bias-check N`".lstrip("#").strip()) == "ragjudge-run-bias-check-n"


def _ci_commands() -> set[str]:
    """Each command .ci/run runs, as a user would type it: without -q, pytest's cache flag or a redirect."""
    commands = set()
    for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines():
        for part in line.split("&&"):
            part = re.sub(r"\s+>\s*\S+\s*$", "", part)
            part = re.sub(r"\s-q\b|\s-p no:cacheprovider\b", "", part)
            commands.add(" ".join(part.split()))
    return commands


def test_the_readmes_two_set_up_commands_are_the_ones_ci_runs() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Set up on a fresh machine\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)\n```", section, re.DOTALL)
    assert blocks == ["pip install . && ragjudge demo", "pip install -e '.[test]' && pytest"]
    ran = _ci_commands()
    missing = [part.strip() for block in blocks for part in block.split("&&") if part.strip() not in ran]
    assert missing == [], f"the README shows commands .ci/run does not run: {missing}"


def _nav_pages(nav: Any) -> Iterator[str]:
    if isinstance(nav, str):
        yield nav
    elif isinstance(nav, list):
        for item in nav:
            yield from _nav_pages(item)
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from _nav_pages(value)


def test_the_nav_lists_every_page_once() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    listed = list(_nav_pages(config["nav"]))
    assert sorted(listed) == sorted(p.name for p in PAGES)
    assert config["docs_dir"] == "docs" and config["theme"]["name"] == "material"
    # Internal links and anchors are warnings, which --strict makes errors.
    assert {config["validation"][k] for k in ("not_found", "anchors", "omitted_files", "unrecognized_links")} == {
        "warn"
    }


def test_the_readmes_action_snippet_is_a_workflow_of_inputs_the_action_has(tmp_path: Path) -> None:
    text = README.read_text(encoding="utf-8")
    [snippet] = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.DOTALL) if "ragjudge-action@" in b]
    [step] = [s for s in yaml.safe_load(snippet)["jobs"]["gate"]["steps"] if "ragjudge-action@" in s.get("uses", "")]
    inputs = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["inputs"]
    assert set(step["with"]) <= set(inputs)
    (tmp_path / "rag-gate.yml").write_text(snippet, encoding="utf-8")
    checked = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", "rag-gate.yml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.fixture(scope="module")
def hook() -> Iterator[ModuleType]:
    """docs/hooks/generate.py, loaded as MkDocs loads it (its folder on the path while it loads)."""
    folder = str(DOCS / "hooks")
    spec = importlib.util.spec_from_file_location("ragjudge_docs_hook", DOCS / "hooks" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(folder)
    yield module


def test_every_marker_of_every_page_is_made(hook: ModuleType) -> None:
    made = {}
    for page in PAGES:
        markdown = page.read_text(encoding="utf-8")
        if hook.MARKER.search(markdown):
            made[page.name] = hook.expand(markdown)
            assert not hook.MARKER.search(made[page.name])
    assert set(made) >= {"report.md", "canary.md", "configuration.md", "metrics.md", "index.md"}


def test_an_unknown_marker_fails(hook: ModuleType) -> None:
    with pytest.raises(ValueError, match="unknown docs marker"):
        hook.expand("<!-- generated: report-contrakt -->")


def test_the_contracts_are_walked_from_their_top_models(hook: ModuleType) -> None:
    # Through lists, mappings and unions: a block reached only inside one is still documented.
    report = hook.expand("<!-- generated: report-contract -->")
    assert "### `cases[].trace.passages[]` (PassageBlock)" in report
    assert "| `schema_version` |" in report and "| `verdict` |" in report
    canary = hook.expand("<!-- generated: canary-report -->")
    assert "### `arms.treatment.cases[]` (CaseObservation)" in canary
    assert "### `metrics.*` (MetricBlock)" in canary
    config = hook.expand("<!-- generated: config -->")
    assert "### `endpoint.protocol` (ProtocolConfig)" in config
    assert "`max_passage_chars` (also read as `excerpt_chars`)" in config


def test_every_metric_of_the_registry_is_in_the_tables(hook: ModuleType) -> None:
    from ragjudge.metrics import SPECS

    tables = hook.expand("<!-- generated: metrics -->")
    assert [spec.name for spec in SPECS if f"| `{spec.name}` |" not in tables] == []


def test_the_readmes_links_into_the_docs_are_made_relative_to_them(hook: ModuleType) -> None:
    deps = hook.expand('<!-- generated: readme-section "Runtime dependencies" -->')
    assert deps.startswith("## Runtime dependencies\n")
    assert "](docs/" not in deps and "](bench/" not in deps
    assert "[the manual](index.md)" in deps


_CITED = re.compile(r"((?:tests|src/ragjudge|bench|examples)/[\w/.\-]+\.(?:py|md|yml|yaml|j2|json|jsonl))(?:::(\w+))?")


def cited(text: str) -> Iterator[tuple[str, str | None]]:
    """(path, test or other name) for every repository file a page cites as `path` or `path::name`."""
    for match in _CITED.finditer(text):
        yield match.group(1), match.group(2)


def test_every_file_and_test_the_pages_cite_exists() -> None:
    # Guarantees are held by named tests: a test moved or renamed leaves its citation pointing nowhere.
    import ast

    missing = []
    for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for path, name in cited(page.read_text(encoding="utf-8")):
            target = ROOT / path
            if not target.is_file():
                missing.append(f"{page.name}: {path}")
            elif name and target.suffix == ".py":
                defined = {
                    n.name
                    for n in ast.walk(ast.parse(target.read_text(encoding="utf-8")))
                    if isinstance(n, ast.FunctionDef | ast.ClassDef)
                }
                if name not in defined:
                    missing.append(f"{page.name}: {path}::{name}")
    assert missing == []


def test_a_citation_is_read_with_its_test_name() -> None:
    text = "held by `tests/cases/test_files.py::test_x` (3) and tests/endpoint/test_stream.py."
    assert list(cited(text)) == [("tests/cases/test_files.py", "test_x"), ("tests/endpoint/test_stream.py", None)]
