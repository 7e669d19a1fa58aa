"""The site's build machinery: plumbing that readers and snippets never import.

The science library that snippets import is ``sdpa`` (``snippets/sdpa/``). Here, one
module per job:

* ``hooks``: the MkDocs events (``hooks:`` in mkdocs.yml), wiring the jobs below;
* ``fences``: every executed fence names its file and every include exists (an extension);
* ``runner``: runs each executed fence (cache, timing, failures) through ``execute``;
* ``errors``: a failing snippet's message, naming file, line and page;
* ``cache``: the content-addressed snippet cache behind a fast ``mkdocs serve``;
* ``report``: ``build-report.json``;
* ``notebook``: the lab notebook's cache, cell ids and ``.ipynb`` download;
* ``math``: TeX to MathML at build time (an extension);
* ``markdown_exec_adapter``: all that depends on markdown-exec's inner workings;
* ``valid_html``: what the Nu HTML checker would reject, fixed where it is made (a hook).
"""

import sys
from pathlib import Path

#: The folder that holds the science library: the build imports its torch-free modules
#: (``sdpa.env``, the environment variables' names) and nothing else of it.
LIBRARY_ROOT = Path(__file__).resolve().parents[1] / "snippets"
if str(LIBRARY_ROOT) not in sys.path:
    sys.path.append(str(LIBRARY_ROOT))
