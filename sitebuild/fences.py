"""Executed fences: each names the one snippet it includes, and that snippet exists.

A page runs a snippet with a markdown-exec fence that includes the file::

    ```python exec="on" source="tabbed-right" title="snippets/<page>/<name>.py"
    --8<-- "<page>/<name>.py"
    ```

The ``title`` names the file on the Source tab and in every error about it. The
:class:`FenceCheckExtension` (a Markdown preprocessor, for any engine) fails a page, naming
the line, when an include is missing or a fence does not include and name one file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from markdown import Extension
from markdown.preprocessors import Preprocessor
from mkdocs.exceptions import PluginError
from pymdownx.superfences import SuperFencesException


FENCE = re.compile(r"^(?P<opening>[ \t]*(?P<ticks>`{3,}|~{3,})(?:python|py)\b(?P<options>[^\n]*))\n"
                   r"(?P<body>.*?)^[ \t]*(?P=ticks)[ \t]*$", re.M | re.S)
INCLUDE = re.compile(r"""^[ \t]*-{1,}8<-{1,}[ \t]+["']([^"']+)["'][ \t]*$""", re.M)


class FenceError(SuperFencesException, PluginError):
    """A page's executed fence cannot run as written: MkDocs reports it naming the page, with
    no traceback, and superfences lets it through (``markdown_exec_adapter.py`` raises it too)."""


@dataclass(frozen=True)
class ExecutedFence:
    line: int  # of the opening line, counted from 1
    last: int  # of the closing line
    indent: str
    titles: list[str]
    includes: tuple[tuple[int, str], ...]  # (line, path under a snippets folder)


def executed_fences(markdown: str) -> list[ExecutedFence]:
    """The fences of ``markdown`` that markdown-exec runs (``exec=`` set), in order."""
    fences = []
    for match in FENCE.finditer(markdown):
        if re.search(r"\bexec=", match["options"]):
            first, body = markdown.count("\n", 0, match.start()) + 1, match["body"]
            includes = tuple((first + 1 + body.count("\n", 0, found.start()), found[1])
                             for found in INCLUDE.finditer(body))
            fences.append(ExecutedFence(first, first + match[0].count("\n"), re.match(r"[ \t]*", match["opening"])[0],
                                        re.findall(r'\btitle="([^"]*)"', match["options"]), includes))
    return fences


def problems(markdown: str, bases: list[Path]) -> list[str]:
    """What is wrong with the executed fences of ``markdown``, each naming its line."""
    found = []
    for fence in executed_fences(markdown):
        for line, include in fence.includes:
            if not any((base / include).is_file() for base in bases):
                looked = ", ".join(os.path.relpath(base) if base.is_relative_to(Path.cwd()) else str(base)
                                   for base in bases)
                found.append(f"line {line}: the include '{include}' is missing (looked in {looked})")
        if len(fence.includes) != 1:
            found.append(f'line {fence.line}: an executed fence runs one snippet file, its only line --8<-- '
                         '"<page>/<name>.py"')
        elif base := next((base for base in bases if (base / fence.includes[0][1]).is_file()), None):
            expected = f"{base.name}/{fence.includes[0][1]}"
            if fence.titles != [expected]:
                found.append(f"line {fence.line}: the fence that includes '{fence.includes[0][1]}' needs "
                             f'title="{expected}" (the Source tab names the file that ran)')
    return found


class _FenceCheck(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        if found := problems("\n".join(lines), self.bases):
            raise FenceError("\n".join(found))
        return lines


class FenceCheckExtension(Extension):
    """Fail a page whose executed fences miss an include or do not name their file."""

    def __init__(self, **kwargs):
        self.config = {"base_path": [["."], "folders the includes are looked up in (as pymdownx.snippets)"]}
        super().__init__(**kwargs)

    def extendMarkdown(self, md) -> None:  # noqa: N802 - Markdown's name
        check = _FenceCheck(md)
        bases = self.getConfig("base_path")
        check.bases = [Path(base).resolve() for base in ([bases] if isinstance(bases, str) else bases)]
        md.preprocessors.register(check, "sitebuild_fence_check", 33)  # before pymdownx.snippets (32) includes


makeExtension = FenceCheckExtension  # Python-Markdown's entry point
