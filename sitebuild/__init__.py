"""The site's build machinery: plumbing that readers and snippets never import.

``hooks`` wires the MkDocs events to one module per job: ``execute`` runs the snippets and
the notebook into the store that the build and the tests read (``python -m
sitebuild.execute``); ``fences`` checks that every executed fence names its file;
``markdown_exec_adapter`` holds all that depends on markdown-exec's insides; ``report``
writes ``build-report.json``; ``notebook`` serves the lab notebook from the store;
``code_pages`` writes the Code section; ``math`` (TeX to MathML) and ``markup`` (the SVG
and MathML read as trees); ``figures``, ``glossary``, ``readable``, ``search`` and
``valid_html`` are hooks of their own; ``preview`` shows one snippet's output.

The build reads the library's torch-free modules (``sdpa.env``: the environment and the
digests; ``sdpa.style``: the figures' colours and markup), so the library's folder is put
on ``sys.path`` here, before any of these modules is imported.
"""

import sys
from pathlib import Path

LIBRARY_ROOT = Path(__file__).resolve().parents[1] / "snippets"  # holds the library, sdpa
if str(LIBRARY_ROOT) not in sys.path:
    sys.path.insert(0, str(LIBRARY_ROOT))


def markdown_extension(extension: type) -> tuple:
    """The two entry points of a module that defines a Markdown extension and is also a
    MkDocs hook (``glossary``, ``readable``, ``valid_html``): ``makeExtension``, which
    Python-Markdown calls when a configuration names the module (any engine that runs
    Python-Markdown can load it), and ``on_config``, which adds the extension when the
    configuration does not list it: ``makeExtension, on_config = markdown_extension(E)``."""

    def make_extension(**options):
        return extension(**options)

    def on_config(config):
        if not any(isinstance(added, extension) for added in config.markdown_extensions):
            config.markdown_extensions.append(extension())
        return config

    return make_extension, on_config
