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
