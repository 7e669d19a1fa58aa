"""The links from each executed snippet to the library code it uses, on the *Code* pages.

The Code pages are mkdocstrings' (``docs/code/<module>.md``: ``::: sdpa.<module>``, every
definition under its own heading, its source beside it). :func:`under_snippet` writes lines
under each executed snippet linking the training loop that ran it (recorded while it runs:
``sdpa.runtime.loops``) and every library name it uses (``from sdpa.x import a``; ``import
sdpa``, then ``sdpa.f``) to the place where it is defined, as mkdocs-autorefs references
(``[`a`][sdpa.x.a]``), found with griffe. :class:`WholeClasses` is the griffe extension that
shows a class as one definition (its source holds its methods).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import griffe

PACKAGE = "sdpa"
SECTION = "code/index.md"  # the Code section's first page: the package itself


def page(module: str) -> str:
    """The Code page of a module: ``sdpa.attention`` -> ``code/attention.md``."""
    return SECTION if module == PACKAGE else f"code/{module.removeprefix(PACKAGE + '.').replace('.', '/')}.md"


class Library:
    """The package under one of the snippet folders, as griffe reads it from disk now; the
    names the package loads from their modules on first use (its ``_HOMES``: ``{"seed":
    "sdpa.runtime", ...}``) as if it imported them."""

    def __init__(self, bases: list[Path]):
        base = next((base for base in bases if (base / PACKAGE / "__init__.py").is_file()), None)
        paths = (base / PACKAGE).rglob("*.py") if base else []
        names = (".".join(path.relative_to(base).with_suffix("").parts) for path in paths)
        self.modules = {name.removesuffix(".__init__") for name in names}
        self.package = base and griffe.load(PACKAGE, search_paths=[base], resolve_aliases=True)
        homes = self.package and self.package.members.get("_HOMES")
        self.homes = ast.literal_eval(str(homes.value)) if homes else {}

    def identifier(self, module: str, name: str) -> str | None:
        """The Code pages' identifier of ``name`` as imported from ``module``:
        ``sdpa.runtime.seed`` for ``("sdpa", "seed")``, a module's own name for a module."""
        path = f"{self.homes[name] if module == PACKAGE and name in self.homes else module}.{name}"
        try:
            found = self.package[path.removeprefix(f"{PACKAGE}.")]
            found = found.final_target if found.is_alias else found
        except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            return None
        return found.path if found.path.split(".")[0] == PACKAGE else None

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
        return f"Library code used: {' · '.join(links)}" if links else ""


def under_snippet(source: str, trained: list[str], library: Library | None) -> list[str]:
    """The Markdown lines under an executed snippet: the loop that trained it, if its run
    stepped an optimiser (recorded while it ran: ``sdpa.runtime.loops``), then the library
    code it uses, each name an autorefs reference to its heading on the Code pages (plain
    names, and no library line, where the site has no Code pages)."""
    loops = " · ".join(f"[`{name}`][{name}]" if library else f"`{name}`" for name in trained)
    texts = [f"The loop that trained it: {loops}" if loops else "",
             library.uses_line(source) if library else ""]
    return [line for text in texts if text for line in ("", text, "{ .sdpa-uses }")]


@functools.lru_cache(maxsize=1)
def library(code: str, bases: tuple[Path, ...]) -> Library:
    """The :class:`Library`, read again only when the digest of the library's code (``code``)
    changes: a rebuild after an edit of prose reads it no more."""
    return Library(list(bases))


class WholeClasses(griffe.Extension):
    """A class on the Code pages is one definition: its source shows its methods and fields,
    which get no heading of their own (mkdocs.yml: the mkdocstrings handler's extensions)."""

    def on_class_members(self, *, cls: griffe.Class, **kwargs) -> None:
        for name in list(cls.members):
            cls.del_member(name)
