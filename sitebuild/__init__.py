"""The site's build machinery: plumbing that readers and snippets never import.

The science library that snippets import is ``sdpa`` (``snippets/sdpa/``). Here, one
module per job:

* ``hooks``: the MkDocs events (``hooks:`` in mkdocs.yml), wiring the jobs below;
* ``execute``: runs the snippets and the notebook into the store (``python -m
  sitebuild.execute``, and the build's first step), which the build and the tests read;
* ``fences``: every executed fence names its file and every include exists (an extension);
* ``markdown_exec_adapter``: all that depends on markdown-exec's inner workings;
* ``report``: ``build-report.json``, and the build report page's records;
* ``notebook``: the lab notebook's page from the store, its cell ids and ``.ipynb`` download;
* ``code_pages``: the Code section, one page per module of the library;
* ``math``: TeX to MathML at build time (an extension);
* ``markup``: the SVG and MathML that ``figures`` and ``math`` rewrite, read as trees;
* ``figures``, ``glossary``, ``readable``, ``search``, ``valid_html``: hooks of their own;
* ``preview``: one snippet's output in light and dark, without the site.

The build reads what it shares with the library from the library's modules that import
neither torch nor matplotlib (``sdpa.env`` and ``sdpa.style``), so the
library's folder is put on ``sys.path`` here, before any of these modules is imported.
"""

import sys
from pathlib import Path

#: The folder that holds the science library: the build imports its torch-free modules
#: (``sdpa.env``: the environment variables' names; ``sdpa.style``: the figures' colours and
#: markup) and nothing else of it.
LIBRARY_ROOT = Path(__file__).resolve().parents[1] / "snippets"
if str(LIBRARY_ROOT) not in sys.path:
    sys.path.insert(0, str(LIBRARY_ROOT))


def markdown_extension(extension: type) -> tuple:
    """The two entry points of a module that defines a Markdown extension and is also a
    MkDocs hook (``glossary``, ``readable``, ``valid_html``), written once:
    ``makeExtension``, which Python-Markdown calls when a configuration names the module
    (any engine that runs Python-Markdown can load it so), and ``on_config``, the hook that
    adds the extension when the configuration does not list it::

        makeExtension, on_config = markdown_extension(GlossaryExtension)
    """

    def make_extension(**options):
        return extension(**options)

    def on_config(config):
        if not any(isinstance(added, extension) for added in config.markdown_extensions):
            config.markdown_extensions.append(extension())
        return config

    return make_extension, on_config
