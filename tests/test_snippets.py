"""Every snippet a page includes runs, prints something, and leaks no global state."""

from __future__ import annotations

import traceback

import pytest

from conftest import DOCS, LIBRARY, SNIPPETS, included_snippets, page_includes
from sitebuild.fences import executed_fences, problems
from sitebuild.execute import SnippetError, execute


@pytest.mark.parametrize("snippet", included_snippets())
def test_snippet_runs_and_prints(snippet, run_snippet):
    run = run_snippet(snippet)  # the build's run or the snippet workers', when the session has either
    assert run.output.strip(), f"snippets/{snippet} printed nothing"
    assert "result" in run.namespace, f"snippets/{snippet} should leave its data in `result` for the tests"
    assert not run.leaks, f"snippets/{snippet} {' and '.join(run.leaks)}"


def test_every_snippet_is_included_by_a_page():
    on_disk = {
        str(path.relative_to(SNIPPETS))
        for path in SNIPPETS.rglob("*.py")
        if path.relative_to(SNIPPETS).parts[0] != LIBRARY
    }
    orphans = sorted(on_disk - set(included_snippets()))
    assert not orphans, f"snippets no page includes: {orphans}"


def test_snippet_folders_match_pages():
    """snippets/<page>/ holds the snippets of docs/<page>.md and of no other page."""
    for page, snippets in page_includes().items():
        stem = page.removesuffix(".md")
        strangers = [s for s in snippets if s.split("/")[0] != stem]
        assert not strangers, f"docs/{page} includes snippets of other pages: {strangers}"


def test_pages_exist_for_every_include():
    assert (DOCS / "derivation.md").is_file()
    assert included_snippets(), "no page includes a snippet: the discovery is broken"


@pytest.mark.parametrize("page", sorted(page_includes()))
def test_every_executed_fence_is_titled_with_the_file_it_includes(page):
    """The Source tab names its file: ``title="snippets/<page>/<name>.py"``, its one include.

    The build checks the same (sitebuild.fences); here it is checked without building."""
    text = (DOCS / page).read_text()
    assert all(len(fence.includes) == 1 for fence in executed_fences(text)), f"docs/{page}: a fence runs no file"
    assert not problems(text, [SNIPPETS]), f"docs/{page}: {problems(text, [SNIPPETS])}"


def test_the_fence_check_names_a_wrong_title_and_a_missing_include():
    page = '# P\n\n```python exec="on" title="snippets/derivation/other.py"\n--8<-- "derivation/score_std.py"\n```\n'
    assert problems(page, [SNIPPETS]) == [
        'line 3: the fence that includes \'derivation/score_std.py\' needs title="snippets/derivation/score_std.py"'
        " (the Source tab names the file that ran)"
    ]
    missing = page.replace("derivation/score_std.py", "derivation/nowhere.py")
    assert problems(missing, [SNIPPETS])[0].startswith("line 4: the include 'derivation/nowhere.py' is missing")


RAISES_IN_A_FUNCTION = '"""Raises on its fourth line."""\n\ndef ratio():\n    return 1 / 0\n\nprint(ratio())\n'


@pytest.mark.parametrize("code, line", [(RAISES_IN_A_FUNCTION, 4), ("x = 1\ny = (\n", 2)],
                         ids=["raises", "syntax-error"])
def test_a_failing_snippet_under_pytest_ends_with_its_file_and_line(code, line):
    """What ``run_snippet`` raises names the snippet's file and line in its message, and its
    traceback ends on that line (the location pytest prints last), not in the executor."""
    with pytest.raises(SnippetError) as caught:
        execute(code, "snippets/broken/boom.py")
    assert str(caught.value).startswith(f"snippets/broken/boom.py, line {line}: ")
    if line == 4:  # a syntax error runs no line of the snippet: its message says where
        last = traceback.extract_tb(caught.value.__traceback__)[-1]
        assert (last.filename, last.lineno) == ("snippets/broken/boom.py", 4)
        assert "ZeroDivisionError" in str(caught.value)
