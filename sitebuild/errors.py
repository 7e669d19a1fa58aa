"""A failing snippet, told the same way everywhere: its file, its line, its page, the error.

``mkdocs build`` fails with :func:`report` (at every verbosity: ``-q`` included, which
drops warnings before strict mode counts them, mkdocs issue 4126); ``mkdocs serve``
prints the same message and keeps serving, the traceback shown in the page.
"""

from __future__ import annotations

import logging
import sys
import traceback
from dataclasses import dataclass

from mkdocs.exceptions import PluginError


@dataclass(frozen=True)
class SnippetFailure:
    snippet: str  # the file, as the fence's title names it
    line: int | None  # the snippet's line that was running
    error: str  # "ZeroDivisionError: division by zero"
    traceback: str

    @classmethod
    def from_exception(cls, error: BaseException, filename: str) -> SnippetFailure:
        """``error`` raised by code compiled as ``filename`` (the executor's own frame dropped)."""
        frames = traceback.extract_tb(error.__traceback__)
        lines = [frame.lineno for frame in frames if frame.filename == filename]
        if isinstance(error, SyntaxError) and error.filename == filename:
            lines.append(error.lineno)
        tb = error.__traceback__.tb_next if error.__traceback__ else None
        text = "".join(traceback.format_exception(type(error), error, tb)).rstrip()
        return cls(filename, lines[-1] if lines else None,
                   traceback.format_exception_only(type(error), error)[-1].strip(), text)

    def message(self, page: str) -> str:
        where = f"{self.snippet}, line {self.line}" if self.line else self.snippet
        return f"snippet failed: {where} (page docs/{page}): {self.error}\n{self.traceback}"


def _serve_logger() -> logging.Logger:
    """Outside the "mkdocs" logger that strict mode counts, so ``mkdocs serve`` keeps running."""
    logger = logging.getLogger("sitebuild.serve")
    if not logger.handlers:
        logger.propagate = False
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("ERROR   -  %(message)s"))
        logger.addHandler(handler)
    return logger


def report(messages: list[str], command: str) -> None:
    """Fail the build with ``messages``; under ``mkdocs serve``, print them and go on."""
    if not messages:
        return
    if command == "serve":
        for message in messages:
            _serve_logger().error(message)
    else:
        raise PluginError("\n\n".join(messages))
