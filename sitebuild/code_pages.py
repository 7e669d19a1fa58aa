"""The site's *Code* section: one page per module of the library, from the real files.

At every build :func:`add_pages` writes a page for each module of ``snippets/sdpa/``
(found on disk, so a new module gets its page with no edit anywhere) and lists them
under the ``Code`` entry of the nav. A page shows the whole file, in order, with its
line numbers: each top-level function or class (and each run of public constants) is
its own part under a heading named after it, included from the file by line range
(``--8<-- "sdpa/attention.py:30:33"``), so the page cannot drift from the code that ran
and ``code/attention/#scores`` links to a function.

:meth:`Library.uses_line` writes, under each executed snippet, a line that links every
library name the snippet uses (``from sdpa.x import a``, or ``import sdpa`` and then
``sdpa.f``) to its part there, and the training loop that ran it: a module names its loops
in ``__loops__ = ("train",)``, and a snippet whose names reach one of them through
the library's code (a function that calls one that calls the loop) links it too
(:meth:`Library.loops`). MkDocs checks each of those links and anchors.
"""

from __future__ import annotations

import ast
import hashlib
import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from mkdocs.structure.files import File

from sitebuild.fences import executed_fences

PACKAGE = "sdpa"
SECTION = "code/index.md"  # the nav entry whose section lists the modules
LOOPS = "__loops__"  # a module's names of its training loops: __loops__ = ("train",)
_USES_LINES: dict[tuple[str, str, str], str] = {}  # see Library.uses_line


@dataclass
class Part:
    """Lines ``start``..``end`` of a module, shown under a heading when ``anchor`` is set."""

    start: int
    end: int
    anchor: str = ""  # the heading's id: the first name defined here ("" for the module's head)
    names: list[str] = field(default_factory=list)  # the public names, as the heading shows them


@dataclass
class Module:
    name: str  # sdpa.attention
    file: str  # sdpa/attention.py, under the snippets folder
    page: str  # code/attention.md
    summary: str  # first line of the docstring
    parts: list[Part] = field(default_factory=list)
    anchors: dict[str, str] = field(default_factory=dict)  # top-level name -> its part's anchor
    lines: dict[str, int] = field(default_factory=dict)  # top-level name -> line of its definition
    imported: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (module, its name there)
    refers: dict[str, set[str]] = field(default_factory=dict)  # top-level name -> the names its code reads
    loops: tuple[str, ...] = ()  # the training loops it defines (its __loops__)

    @classmethod
    def read(cls, base: Path, path: Path) -> Module:
        relative = path.relative_to(base)
        parts = list(relative.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        stem = "/".join(parts[1:]) or "index"
        page = f"code/{stem}/index.md" if path.name == "__init__.py" and len(parts) > 1 else f"code/{stem}.md"
        text = path.read_text()
        tree = ast.parse(text)
        doc = (ast.get_docstring(tree) or "").strip().splitlines()
        module = cls(".".join(parts), relative.as_posix(), page, doc[0] if doc else "")
        package = module.name if path.name == "__init__.py" else module.name.rpartition(".")[0]
        source_lines = text.splitlines()
        module.parts.append(Part(1, len(source_lines)))
        previous = None
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    module.imported[alias.asname or alias.name] = (_absolute(node, package), alias.name)
            elif _lazy_names(node):  # the package's names that load their module on first use
                module.imported.update({name: (home, name) for name, home in _lazy_names(node).items()})
            kind, names = _defines(node)
            if names == [LOOPS]:
                module.loops = tuple(ast.literal_eval(node.value))
            for name in names:
                module.refers[name] = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} - {name}
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            while first > 1 and source_lines[first - 2].lstrip().startswith("#"):  # comments above it
                first -= 1
            public = [name for name in names if not name.startswith("_")]
            if kind == "def" or (kind == "assign" and public and previous != "assign"):
                module.parts[-1].end = first - 1
                module.parts.append(Part(first, len(source_lines), names[0], public or names))
            elif kind == "assign":
                module.parts[-1].names += public
            for name in names:
                module.lines.setdefault(name, node.lineno)
                module.anchors.setdefault(name, module.parts[-1].anchor)
            previous = kind if kind != "assign" or module.parts[-1].anchor else None
        if module.parts[0].end < module.parts[0].start:  # the file starts with a definition
            module.parts.pop(0)
        return module

    def markdown(self, heading: bool = True) -> str:
        level = "#" if heading else "##"
        blocks = [f"{level} {self.name}" if heading else f"{level} `{self.name}` {{ #{PACKAGE} }}",
                  self.summary,
                  f"The file `snippets/{self.file}` as the site ran it"
                  + (", each function under its own heading." if len(self.parts) > 1 else ".")]
        for number, part in enumerate(self.parts):
            if part.anchor:
                names = ", ".join(f"`{name}`" for name in part.names)
                blocks.append(f"{level}# {names} {{ #{part.anchor} }}")
            title = f' title="snippets/{self.file}"' if number == 0 else ""
            blocks.append(f'```python linenums="{part.start}"{title}\n'
                          f'--8<-- "{self.file}:{part.start}:{part.end}"\n```')
        return "\n\n".join(block for block in blocks if block) + "\n"


def _lazy_names(node: ast.stmt) -> dict[str, str]:
    """``_HOMES = {"seed": "sdpa.runtime", ...}`` in ``sdpa/__init__.py``: each name the
    package gives on first use, and the module it comes from."""
    if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["_HOMES"]:
        return ast.literal_eval(node.value)
    return {}


def _defines(node: ast.stmt) -> tuple[str, list[str]]:
    """What a top-level statement is ("def", "assign" or "other") and the names it binds."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return "def", [node.name]
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return "assign", [n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)]
    return "other", []


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = parts[: len(parts) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


class Library:
    """The modules of the package under one of the snippet folders, as they are on disk."""

    def __init__(self, bases: list[Path]):
        base = next((base for base in bases if (base / PACKAGE / "__init__.py").is_file()), None)
        paths = sorted((base / PACKAGE).rglob("*.py")) if base else []
        self.modules = {module.name: module for module in (Module.read(base, path) for path in paths)}
        #: What the links depend on: every module's file and text (see :meth:`uses_line`).
        texts = [(path.as_posix(), path.read_bytes()) for path in paths]
        self.digest = hashlib.sha256(repr(texts).encode()).hexdigest()

    def locate(self, module: str, name: str, depth: int = 0) -> tuple[Module, str] | None:
        """Where ``name``, as imported from ``module``, is defined: a module and the anchor
        of its part ("" for a module itself: its page's top)."""
        if f"{module}.{name}" in self.modules:
            return self.modules[f"{module}.{name}"], ""
        found = self.modules.get(module)
        if found is None or depth > 10:
            return None
        if name in found.anchors:
            return found, found.anchors[name]
        if name in found.imported:
            return self.locate(*found.imported[name], depth=depth + 1)
        return None

    def defined(self, module: str, name: str, depth: int = 0) -> tuple[Module, str] | None:
        """The module that defines ``name`` as imported from ``module``, and its name there."""
        found = self.modules.get(module)
        if found is None or depth > 10:
            return None
        if name in found.lines:
            return found, name
        if name in found.imported:
            return self.defined(*found.imported[name], depth=depth + 1)
        return None

    def loops(self, names: list[tuple[str, str]]) -> list[tuple[Module, str]]:
        """The training loops (a module's ``__loops__``) that the library code of ``names``
        ((module, name) pairs) reaches, calling or naming one function after another."""
        seen: set[tuple[str, str]] = set()
        pending = [where for module, name in names if (where := self.defined(module, name))]
        reached = []
        while pending:
            module, name = pending.pop()
            if (module.name, name) in seen:
                continue
            seen.add((module.name, name))
            if name in module.loops:
                reached.append((module, name))
            for read in module.refers.get(name, ()):
                if (where := self.defined(module.name, read)) is not None:
                    pending.append(where)
        return sorted(reached, key=lambda loop: (loop[0].name, loop[1]))

    def used(self, source: str) -> dict[str, tuple[str, str]]:
        """The library names ``source`` uses, as written there (``scores``, ``sdpa.seed``),
        each with the module it is read from and its name there."""
        tree = ast.parse(source)
        modules: dict[str, str] = {}  # local name -> library module
        found: dict[str, tuple[str, str]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == PACKAGE:
                        local = alias.asname or alias.name.split(".")[0]
                        modules[local] = alias.name if alias.asname else PACKAGE
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == PACKAGE:
                for alias in node.names:
                    if f"{node.module}.{alias.name}" in self.modules:
                        modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                    else:
                        found.setdefault(alias.asname or alias.name, (node.module, alias.name))

        def module_of(expr: ast.expr) -> str | None:
            if isinstance(expr, ast.Name):
                return modules.get(expr.id)
            if isinstance(expr, ast.Attribute) and (outer := module_of(expr.value)):
                return f"{outer}.{expr.attr}" if f"{outer}.{expr.attr}" in self.modules else None
            return None

        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and (owner := module_of(node.value)) and not module_of(node):
                found.setdefault(ast.unparse(node), (owner, node.attr))
        return found

    def uses(self, source: str) -> list[tuple[str, Module, str]]:
        """The library names ``source`` uses, as written there, with where each is defined
        (its module and the anchor of its part)."""
        found = {label: where for label, origin in self.used(source).items()
                 if (where := self.locate(*origin)) is not None}
        order = {name: {part.anchor: n for n, part in enumerate(module.parts)} for name, module in self.modules.items()}
        return sorted(((label, *where) for label, where in found.items()),
                      key=lambda use: (use[1].name, order[use[1].name].get(use[2], -1), use[0]))

    def uses_line(self, source: str, page: str) -> str:
        """A Markdown line linking the library names ``source`` uses, from page ``page``.

        Remembered per process by the library's :attr:`digest`, the source and the page:
        ``mkdocs serve`` reads the same library again on every rebuild, and an edit to
        neither changes no line."""
        key = (self.digest, source, page)
        if key not in _USES_LINES:
            _USES_LINES[key] = self._uses_line(source, page)
        return _USES_LINES[key]

    def _uses_line(self, source: str, page: str) -> str:
        def link(label: str, module: Module, anchor: str) -> str:
            target = posixpath.relpath(module.page, posixpath.dirname(page) or ".")
            return f"[`{label}`]({target}" + (f"#{anchor})" if anchor else ")")

        links = [link(*use) for use in self.uses(source)]
        loops = [link(f"{module.name}.{name}", module, module.anchors[name])
                 for module, name in self.loops(list(self.used(source).values()))]
        if not links:
            return ""
        trained = f"; the loop that trained it: {' · '.join(loops)}" if loops else ""
        return f"Library code used: {' · '.join(links)}{trained}\n{{ .sdpa-uses }}"

    def index_markdown(self) -> str:
        """The Code section's first page: the modules, then the package's own ``__init__.py``."""
        rows = "\n".join(f"| [`{module.name}`]({posixpath.relpath(module.page, 'code')}) | {module.summary} |"
                         for module in self.modules.values() if module.page != SECTION)
        package = self.modules.get(PACKAGE)
        return (
            "# Code\n\n"
            f"The library that every snippet imports, `{PACKAGE}` (the folder `snippets/{PACKAGE}/`), one page "
            "per module. Each page shows the file as the site ran it, and under every figure and "
            "table a line links the library code its snippet calls to its place here.\n\n"
            f"| module | what it holds |\n| :-- | :-- |\n{rows}\n"
            + ("\n" + package.markdown(heading=False) if package else "")
        )


def add_pages(files, config, library: Library) -> bool:
    """Add the Code pages to ``files`` and list them in the nav entry naming ``code/index.md``.

    A site whose nav has no such entry gets no Code pages (and returns False)."""
    section = next((entry for entry in config.nav or [] if isinstance(entry, dict)
                    and any(v == SECTION or isinstance(v, list) and SECTION in v for v in entry.values())), None)
    if section is None:
        return False
    pages = {module.page: module for module in library.modules.values()}
    pages.setdefault(SECTION, None)
    for page, module in pages.items():
        content = library.index_markdown() if page == SECTION else module.markdown()
        files.append(File.generated(config, page, content=content))
    title = next(iter(section))
    section[title] = [SECTION] + [{module.name: page} for page, module in pages.items() if page != SECTION]
    return True


def link_uses(markdown: str, page: str, library: Library, bases: list[Path]) -> str:
    """Under each executed fence of ``markdown`` (page ``page``), the line of library links."""
    lines = markdown.split("\n")
    for fence in reversed(executed_fences(markdown)):
        if len(fence.includes) != 1:
            continue
        path = next((base / fence.includes[0][1] for base in bases if (base / fence.includes[0][1]).is_file()), None)
        uses = library.uses_line(path.read_text(), page) if path else ""
        if uses:
            lines[fence.last:fence.last] = [""] + [fence.indent + line for line in uses.split("\n")]
    return "\n".join(lines)

