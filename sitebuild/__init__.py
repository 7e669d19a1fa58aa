"""The site's build machinery, which readers and snippets never import: ``hooks`` wires the
MkDocs events to a module per job (``execute``: the snippets into the store; ``fences``,
``markdown_exec_adapter``, ``report``, ``notebook``, ``code_pages``, ``math``, ``markup``),
and ``figures``, ``glossary``, ``readable``, ``report`` and ``valid_html`` are hooks of their
own (and Markdown extensions, which zensical.yml lists for an engine without hooks). It
reads the library's torch-free modules (``sdpa.env``, ``sdpa.style``), whose folder
is put on ``sys.path`` here.
"""

import sys
from pathlib import Path

LIBRARY_ROOT = Path(__file__).resolve().parents[1] / "snippets"  # holds the library, sdpa
if str(LIBRARY_ROOT) not in sys.path:
    sys.path.insert(0, str(LIBRARY_ROOT))


def markdown_extension(extension: type) -> tuple:
    """``makeExtension`` (for any engine: the class itself) and the hook ``on_config`` (adding the
    extension when the configuration does not list it): ``makeExtension, on_config =
    markdown_extension(E)``."""

    def on_config(config):
        if not any(isinstance(added, extension) for added in config.markdown_extensions):
            config.markdown_extensions.append(extension())
        return config

    return extension, on_config
