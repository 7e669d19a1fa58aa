"""A failing snippet, told the same way everywhere: its file, its line, its page, the error.

``mkdocs build`` fails with :func:`report` (at every verbosity: ``-q`` included, which
drops warnings before strict mode counts them, mkdocs issue 4126); ``mkdocs serve``
prints the same message and keeps serving, the traceback shown in the page.
"""

from __future__ import annotations

import logging
import sys
import traceback
import types
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

    @staticmethod
    def frames(error: BaseException, filename: str) -> types.TracebackType | None:
        """``error``'s traceback below the executor's frame, cut after the last frame that
        runs code compiled as ``filename``: re-raised with it, an error's traceback ends on
        the snippet's line (what pytest prints last) instead of the executor's. None when no
        frame ran the snippet (a syntax error)."""
        frames, tb = [], error.__traceback__.tb_next if error.__traceback__ else None
        while tb is not None:
            frames.append(tb)
            tb = tb.tb_next
        ours = [index for index, tb in enumerate(frames) if tb.tb_frame.f_code.co_filename == filename]
        cut = None
        for tb in reversed(frames[: ours[-1] + 1] if ours else []):
            cut = types.TracebackType(cut, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
        return cut

    @property
    def where(self) -> str:
        """``snippets/<page>/<name>.py, line N`` (the file alone where no line is known)."""
        return f"{self.snippet}, line {self.line}" if self.line else self.snippet

    def message(self, page: str) -> str:
        return f"snippet failed: {self.where} (page docs/{page}): {self.error}\n{self.traceback}"


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
