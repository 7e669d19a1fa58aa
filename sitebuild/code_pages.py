"""The links from each executed snippet to the library code it uses, on the *Code* pages.

The Code pages are mkdocstrings' (``docs/code/<module>.md``: ``::: sdpa.<module>``, every
definition under its own heading, its source beside it). :func:`link_uses` writes a line
under each executed snippet linking every library name it uses (``from sdpa.x import a``;
``import sdpa``, then ``sdpa.f``) to the place where it is defined, as an mkdocs-autorefs
reference (``[`a`][sdpa.x.a]``); the training loop that ran a snippet is recorded while it
runs (``sdpa.runtime.loops``) and linked by the hooks. :class:`WholeClasses` is the griffe
extension that shows a class as one definition (its source holds its methods).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import griffe

from sitebuild.fences import executed_fences

PACKAGE = "sdpa"
SECTION = "code/index.md"  # the Code section's first page: the package itself


def page(module: str) -> str:
    """The Code page of a module: ``sdpa.attention`` -> ``code/attention.md``."""
    return SECTION if module == PACKAGE else f"code/{module.removeprefix(PACKAGE + '.').replace('.', '/')}.md"


@dataclass
class Module:
    name: str  # sdpa.attention
    defined: set[str] = field(default_factory=set)  # its top-level names
    imported: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (module, its name there)

    @classmethod
    def read(cls, base: Path, path: Path) -> Module:
        parts = list(path.relative_to(base).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        module = cls(".".join(parts))
        package = module.name if path.name == "__init__.py" else module.name.rpartition(".")[0]
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    module.imported[alias.asname or alias.name] = (_absolute(node, package), alias.name)
            elif isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["_HOMES"]:
                # the package's names that load their module on first use: {"seed": "sdpa.runtime", ...}
                module.imported.update({name: (home, name) for name, home in ast.literal_eval(node.value).items()})
            module.defined.update(_defines(node))
        return module


def _defines(node: ast.stmt) -> list[str]:
    """The names a top-level statement defines."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [target.id for target in targets if isinstance(target, ast.Name)]  # as griffe documents them
    return []


def _absolute(node: ast.ImportFrom, package: str) -> str:
    parts = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
    return ".".join(parts + ([node.module] if node.module else []))


class Library:
    """The modules of the package under one of the snippet folders, as they are on disk."""

    def __init__(self, bases: list[Path]):
        base = next((base for base in bases if (base / PACKAGE / "__init__.py").is_file()), None)
        paths = sorted((base / PACKAGE).rglob("*.py")) if base else []
        self.modules = {module.name: module for module in (Module.read(base, path) for path in paths)}

    def defined(self, module: str, name: str, depth: int = 0) -> tuple[Module, str] | None:
        """The module that defines ``name`` as imported from ``module``, and its name there."""
        found = self.modules.get(module)
        if found is None or depth > 10:
            return None
        if name in found.defined:
            return found, name
        if name in found.imported:
            return self.defined(*found.imported[name], depth=depth + 1)
        return None

    def identifier(self, module: str, name: str) -> str | None:
        """The Code pages' identifier of ``name`` as imported from ``module``:
        ``sdpa.runtime.seed`` for ``("sdpa", "seed")``, a module's own name for a module."""
        if f"{module}.{name}" in self.modules:
            return f"{module}.{name}"
        where = self.defined(module, name)
        return f"{where[0].name}.{where[1]}" if where else None

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

    def uses(self, source: str) -> list[tuple[str, str]]:
        """The library names ``source`` uses, as written there, each with its identifier, in
        the order of the library's modules."""
        found = [(label, identifier) for label, origin in self.used(source).items()
                 if (identifier := self.identifier(*origin)) is not None]
        return sorted(found, key=lambda use: (use[1], use[0]))

    def uses_line(self, source: str) -> str:
        """A Markdown line linking the library names ``source`` uses (autorefs' references)."""
        links = [f"[`{label}`][{identifier}]" for label, identifier in self.uses(source)]
        return f"Library code used: {' · '.join(links)}\n{{ .sdpa-uses }}" if links else ""


def link_uses(markdown: str, page: str, library: Library, bases: list[Path]) -> str:
    """Under each executed fence of ``markdown``, the line of library links (``page``: unused,
    autorefs makes each link relative to the page it lands on)."""
    lines = markdown.split("\n")
    for fence in reversed(executed_fences(markdown)):
        if len(fence.includes) != 1:
            continue
        path = next((base / fence.includes[0][1] for base in bases if (base / fence.includes[0][1]).is_file()), None)
        uses = library.uses_line(path.read_text()) if path else ""
        if uses:
            lines[fence.last:fence.last] = [""] + [fence.indent + line for line in uses.split("\n")]
    return "\n".join(lines)


class WholeClasses(griffe.Extension):
    """A class on the Code pages is one definition: its source shows its methods and fields,
    which get no heading of their own (mkdocs.yml: the mkdocstrings handler's extensions)."""

    def on_class_members(self, *, cls: griffe.Class, **kwargs) -> None:
        for name in list(cls.members):
            cls.del_member(name)
