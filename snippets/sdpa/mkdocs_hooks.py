"""MkDocs hooks: make snippet failures loud, name the snippet file, render math offline.

Loaded by ``mkdocs.yml`` (``hooks:``). What it does, in build order:

* puts ``snippets/`` on ``sys.path`` so snippets can ``import sdpa``;
* before each build (``mkdocs serve`` rebuilds too) forgets every imported module from
  ``snippets/``, so an edited helper is re-imported;
* gives every executed fence that includes one snippet that snippet's path as its
  markdown-exec ``id``, so a traceback reads ``snippets/<page>/<name>.py, line N``;
  checks that every ``--8<--`` include exists, naming the page;
* collects markdown-exec's execution failures itself (at WARNING level whatever the
  verbosity flags) and fails ``mkdocs build`` with the file, the line and the
  exception; under ``mkdocs serve`` it logs the same error and keeps the traceback in
  the page;
* times every executed snippet and writes ``build-report.json`` beside the site (page,
  snippet, figures, device, torch version, seconds), read by the build-report page;
* under ``mkdocs serve`` (or with ``SDPA_CACHE=1``) serves unchanged snippets from a
  content-addressed cache (:mod:`sdpa.snippet_cache`), so a prose edit re-renders fast;
* turns the TeX that ``pymdownx.arithmatex`` leaves into MathML at build time, so no
  page needs a script or a font from anywhere else.
"""

from __future__ import annotations

import html
import json
import logging
import time
import re
import sys
import textwrap
from pathlib import Path

from latex2mathml.converter import convert as latex_to_mathml
from mkdocs.exceptions import PluginError

SNIPPETS = Path(__file__).resolve().parents[1]
REPO = SNIPPETS.parent
log = logging.getLogger("mkdocs.hooks.sdpa")
# Under `mkdocs serve` a failing snippet is reported here, outside the "mkdocs" logger
# that strict mode counts, so the server keeps running and shows the traceback in the page.
serve_log = logging.getLogger("sdpa.serve")
serve_log.propagate = False
if not serve_log.handlers:
    _handler = logging.StreamHandler(sys.stderr)
    _handler.setFormatter(logging.Formatter("ERROR   -  %(message)s"))
    serve_log.addHandler(_handler)

_state: dict = {"command": "build", "page": ""}
_failures: list[str] = []
_report: list[dict] = []

FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<ticks>`{3,}|~{3,})(?P<lang>python|py)\b(?P<opts>[^\n]*)\n"
    r"(?P<body>.*?)^(?P=indent)(?P=ticks)[ \t]*$",
    re.M | re.S,
)
INCLUDE = re.compile(r"""^[ \t]*-{1,}8<-{1,}[ \t]+["']([^"']+)["'][ \t]*$""", re.M)
CODE_BLOCK_FRAME = re.compile(r'File "<code block: id ([^>]+)>", line (\d+)')


class _CollectExecFailures(logging.Handler):
    """Keeps markdown-exec's 'Execution of ... exited with errors' records."""

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "code block" in message and "exited with" in message:
            _failures.append(message)
        else:  # anything else markdown-exec says still reaches the console (and strict mode)
            log.log(record.levelno, message)


_collector = _CollectExecFailures(level=logging.WARNING)


def on_startup(command: str, dirty: bool) -> None:
    _state["command"] = command


def on_config(config):
    if str(SNIPPETS) not in sys.path:
        sys.path.insert(0, str(SNIPPETS))
    # markdown-exec logs failures as warnings; `mkdocs build -q` would drop them before
    # strict mode counts them. Listen at WARNING on its own logger, whatever the flags.
    exec_logger = logging.getLogger("mkdocs.plugins.markdown_exec")
    exec_logger.setLevel(logging.WARNING)
    exec_logger.propagate = False  # this hook reports the failure itself, once, clearly
    if _collector not in exec_logger.handlers:
        exec_logger.addHandler(_collector)
    _cache_notebooks(config)
    for fence in config.mdx_configs.get("pymdownx.superfences", {}).get("custom_fences", []):
        if fence.get("name") == "python" and not getattr(fence["format"], "sdpa_wrapped", False):
            fence["format"] = _timed_and_cached(fence["format"], config)
    return config


def _cache_notebooks(config) -> None:
    """Under the snippet cache, let mkdocs-jupyter cache executed notebooks too.

    The plugin keys its cache on the notebook file alone; giving it a cache folder named
    after the snippet-cache key of each notebook's code (its own source and every
    ``snippets/`` module it imports) makes that key content-addressed as well.
    """
    from sdpa import snippet_cache

    plugin = config.plugins.get("mkdocs-jupyter")
    if plugin is None or not snippet_cache.enabled(_state["command"]):
        return
    from sdpa.runtime import device

    notebooks = sorted(Path(config.docs_dir).glob("*.py")) + sorted(Path(config.docs_dir).glob("*.ipynb"))
    sources = "".join(path.read_text() for path in notebooks if path.suffix == ".py")
    key = snippet_cache.snippet_key(sources, {}, _snippet_bases(config), str(device()))
    plugin.config["cache"] = True
    plugin.config["cache_dir"] = str(snippet_cache.CACHE_DIR.parent / "notebooks" / key[:16])


def _timed_and_cached(run_fence, config):
    """Wrap markdown-exec's formatter: time each snippet, and consult the cache if enabled."""
    from sdpa import snippet_cache

    def run(source, language, css_class, options, md, **kwargs):
        snippet = options.get("id", "") or "(inline code block)"
        key = None
        if snippet_cache.enabled(_state["command"]):
            from sdpa.runtime import device  # imports torch: only when a snippet runs

            key = snippet_cache.snippet_key(source, options, _snippet_bases(config), str(device()))
            entry = snippet_cache.load(key)
            if entry is not None:
                _record(snippet, entry["html"], entry["seconds"], cached=True)
                return entry["html"]
        failures, wall = len(_failures), time.perf_counter()
        output = run_fence(source, language, css_class, options, md, **kwargs)
        seconds = round(time.perf_counter() - wall, 3)
        _record(snippet, output, seconds, cached=False)
        if key is not None and len(_failures) == failures:
            snippet_cache.store(key, {"snippet": snippet, "html": str(output), "seconds": seconds})
        return output

    run.sdpa_wrapped = True
    return run


def _record(snippet: str, output: str, seconds: float, *, cached: bool) -> None:
    import torch

    from sdpa.runtime import device

    _report.append(
        {
            "page": _state["page"],
            "snippet": snippet,
            "figures": re.findall(r'<figure class="sdpa-figure" id="fig-([^"]+)"', str(output)),
            "tables": str(output).count("<table>"),
            "seconds": seconds,
            "cached": cached,
            "device": str(device()),
            "torch": torch.__version__,
        }
    )


def _write_notebook_downloads(config) -> None:
    """Beside each notebook page written as a Jupytext script, put the same notebook as
    ``.ipynb`` (cells numbered in order, outputs empty), for readers to download."""
    plugin = config.plugins.get("mkdocs-jupyter")
    if plugin is None:
        return
    import jupytext

    for pattern in plugin.config["include"]:
        for path in sorted(Path(config.docs_dir).glob(pattern)):
            if path.suffix != ".py":
                continue
            notebook = jupytext.read(path)
            for number, cell in enumerate(notebook.cells, start=1):
                cell["id"] = f"cell-{number}"
            target = Path(config.site_dir) / path.stem / f"{path.stem}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            jupytext.write(notebook, target, fmt="ipynb")


def on_post_build(config) -> None:
    """Write the build report (every executed snippet with its figures, device and time)
    and the notebooks' ``.ipynb`` downloads."""
    _write_notebook_downloads(config)
    report = {
        "snippets": _report,
        "total_seconds": round(sum(entry["seconds"] for entry in _report if not entry["cached"]), 3),
    }
    Path(config.site_dir, "build-report.json").write_text(json.dumps(report, indent=1))


def on_pre_build(config) -> None:
    _failures.clear()
    _report.clear()
    if _state["command"] != "serve":
        return
    # A rebuild under `mkdocs serve`: forget the snippet modules so edits are re-imported.
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if path and Path(path).resolve().is_relative_to(SNIPPETS) and name != __name__:
            del sys.modules[name]


def _snippet_bases(config) -> list[Path]:
    bases = config.mdx_configs.get("pymdownx.snippets", {}).get("base_path", [SNIPPETS])
    return [Path(base).resolve() for base in ([bases] if isinstance(bases, str) else bases)]


def _display_path(path: Path) -> str:
    """A path as a reader would type it: relative to the working directory if inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def on_page_markdown(markdown: str, page, config, files) -> str:
    source = page.file.src_uri
    _state["page"] = source
    bases = _snippet_bases(config)

    def with_id(match: re.Match) -> str:
        opts, body = match.group("opts"), match.group("body")
        found = []
        for include in INCLUDE.findall(body):
            candidates = [base / include for base in bases if (base / include).is_file()]
            if not candidates:
                raise PluginError(
                    f"docs/{source}: the include '{include}' is missing "
                    f"(looked in {', '.join(_display_path(base) for base in bases)})"
                )
            found.append(candidates[0])
        if "exec=" not in opts or " id=" in f" {opts}" or len(found) != 1:
            return match.group(0)
        opening, rest = match.group(0).split("\n", 1)
        return f'{opening} id="{_display_path(found[0])}"\n{rest}'

    return FENCE.sub(with_id, markdown)


def _describe(message: str, page_src: str) -> str:
    frames = CODE_BLOCK_FRAME.findall(message)
    where = f"{frames[-1][0]}, line {frames[-1][1]}" if frames else f"a code block in docs/{page_src}"
    trace = textwrap.dedent(message.split("Output is:", 1)[-1].strip("\n"))
    trace = CODE_BLOCK_FRAME.sub(lambda m: f'File "{m.group(1)}", line {m.group(2)}', trace)
    lines, skipping = [], False
    for line in trace.splitlines():
        if line.lstrip().startswith('File "'):
            skipping = "markdown_exec" in line  # the executor's own frames say nothing
        elif not line.startswith(" "):
            skipping = False
        if line.strip() and not skipping:
            lines.append(line)
    trace = "\n".join(lines)
    last = lines[-1].strip() if lines else "unknown error"
    return f"snippet failed: {where} (page docs/{page_src}): {last}\n{trace}"


def on_page_content(content: str, page, config, files) -> str:
    if _failures:
        errors = [_describe(message, page.file.src_uri) for message in _failures]
        _failures.clear()
        if _state["command"] == "serve":
            for error in errors:
                serve_log.error(error)
        else:
            raise PluginError("\n\n".join(errors))
    return render_math(content, page.file.src_uri)


NOTEBOOK_CELL_ID = re.compile(r"cell-id=([0-9a-f]{8}(?:-[0-9a-f-]+)?)")


def on_post_page(output: str, page, config) -> str:
    """Number notebook cells in order: Jupytext gives them random ids on every read, which
    would make two builds of the lab page differ."""
    ids: dict[str, str] = {}
    return NOTEBOOK_CELL_ID.sub(lambda m: "cell-id=" + ids.setdefault(m.group(1), f"cell-{len(ids) + 1}"), output)


MATH = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">(?P<tex>.*?)</(?P=tag)>',
    re.S,
)


def render_math(content: str, page_src: str) -> str:
    """Replace arithmatex's generic TeX wrappers with MathML."""

    def to_mathml(match: re.Match) -> str:
        tex = html.unescape(match.group("tex")).strip()
        block = match.group("tag") == "div"
        tex = tex[2:-2] if tex[:2] in ("\\(", "\\[") else tex
        if "&" in tex or "\\begin" in tex:
            raise PluginError(f"docs/{page_src}: aligned environments do not render; split ${tex[:40]}...$")
        try:
            mathml = latex_to_mathml(tex, display="block" if block else "inline")
        except Exception as error:  # the converter raises many types
            raise PluginError(f"docs/{page_src}: cannot render math ${tex}$: {error}") from error
        mathml = mathml.replace("<math ", f'<math alttext="{html.escape(tex)}" ', 1)
        return f'<div class="sdpa-math">{mathml}</div>' if block else mathml

    return MATH.sub(to_mathml, content)
