"""The site's build machinery: plumbing that readers and snippets never import.

The science library that snippets import is ``sdpa`` (``snippets/sdpa/``). Here, one
module per job:

* ``hooks``: the MkDocs events (``hooks:`` in mkdocs.yml), wiring the jobs below;
* ``fences``: every executed fence names its file and every include exists (an extension);
* ``runner``: runs each executed fence (cache, timing, failures) through ``execute``;
* ``errors``: a failing snippet's message, naming file, line and page;
* ``cache``: the content-addressed snippet cache behind a fast ``mkdocs serve``;
* ``serve``: the per-process memos of pure build steps that keep a serve rebuild quick;
* ``pool``: the worker processes that run the pages' snippets in parallel;
* ``keep``: each snippet's run, handed back by the workers to the test session;
* ``report``: ``build-report.json``;
* ``notebook``: the lab notebook's cache, cell ids and ``.ipynb`` download;
* ``math``: TeX to MathML at build time (an extension);
* ``markup``: the SVG and MathML that ``figures`` and ``math`` rewrite, read as trees;
* ``markdown_exec_adapter``: all that depends on markdown-exec's inner workings;
* ``valid_html``: what the Nu HTML checker would reject, fixed where it is made (a hook).

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
