"""The lab notebook: it runs wherever a reader downloads it, and its key numbers hold.

The notebook (docs/lab.py, Jupytext percent format) is run as readers download it
(``sitebuild.notebook.download``: its first cell writes the library it imports), cell by
cell in a fresh Python kernel by nbclient, in an empty folder outside the repository and
with no PYTHONPATH. The build runs the same cells in docs/ (and fails on an error); one
run here serves every test below. Its last cell evaluates to a dict of the key numbers.
"""

from __future__ import annotations

import ast
import fnmatch
import re
import shutil
import tempfile
import threading
from pathlib import Path

import pytest
import yaml

from conftest import DOCS, REPO, SNIPPETS, ahead, run_ahead
from sdpa import fmt
from sdpa import env as sdpa_env

NOTEBOOK = DOCS / "lab.py"
#: Words that state a result (a comparison or an outcome of a run): the notebook's text cells
#: use none of them; its last section prints its findings from the numbers instead.
RESULT_WORDS = ("slower", "faster", "larger", "smaller", "learns", "fails", "rescue", "stall",
                "sharpen", "vanish", "better", "worse", "rises", "falls", "stays",
                "remov", "grows like", "spreads like", "orders of magnitude")


def plugin_config() -> dict:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    for plugin in config["plugins"]:
        if isinstance(plugin, dict) and "mkdocs-jupyter" in plugin:
            return plugin["mkdocs-jupyter"]
    raise AssertionError("mkdocs-jupyter is not configured in mkdocs.yml")


def start_lab() -> tuple:
    """Run the downloaded notebook in an empty folder, in a thread (its kernel is a process
    of its own, so it overlaps the tests that run meanwhile): (notebook, folder, thread, errors)."""
    import nbclient

    from sitebuild.notebook import download

    folder = Path(tempfile.mkdtemp(prefix="sdpa-download-"))
    notebook = download(NOTEBOOK, [SNIPPETS])
    env = sdpa_env.environment(drop=("PYTHONPATH",))
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3", allow_errors=False,
                                     resources={"metadata": {"path": str(folder)}})
    errors: list[BaseException] = []

    def execute() -> None:
        try:
            client.execute(env=env)
        except BaseException as error:  # noqa: BLE001 - handed to the fixture
            errors.append(error)

    thread = threading.Thread(target=execute, name="downloaded notebook", daemon=True)
    thread.start()
    return notebook, folder, thread, errors


run_ahead("lab", start_lab)  # started as the session's tests are collected


@pytest.fixture(scope="module")
def lab() -> tuple:
    """The downloaded notebook, executed in an empty folder: (notebook, folder)."""
    notebook, folder, thread, errors = ahead("lab", start_lab)
    thread.join(timeout=900)
    if errors:
        raise errors[0]
    yield notebook, folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def summary(lab) -> dict:
    last = [cell for cell in lab[0].cells if cell.cell_type == "code"][-1]
    (result,) = [o for o in last.outputs if o.output_type == "execute_result"]
    return ast.literal_eval(result["data"]["text/plain"])


def test_plugin_fails_on_errors_executes_and_offers_the_source():
    config = plugin_config()
    assert config["execute"] is True
    assert config["allow_errors"] is False
    assert config["include_source"] is True


def test_only_lab_py_is_a_notebook_page():
    patterns = plugin_config()["include"]
    candidates = [p for p in DOCS.rglob("*") if p.suffix in (".py", ".ipynb")]
    pages = [p for p in candidates if any(Path(p).match(pattern) for pattern in patterns)]
    assert pages == [NOTEBOOK]
    assert not any(fnmatch.fnmatch("index.md", pattern) for pattern in patterns)
    # and no Markdown page is read as one (the plugin would otherwise open each with Jupytext)
    assert any(fnmatch.fnmatch("index.md", pattern) for pattern in plugin_config()["ignore"])


def test_notebook_html_loads_nothing_from_the_network():
    """Render with the site's plugin options (without executing): no remote script or link."""
    from mkdocs_jupyter import convert

    config = plugin_config()
    html = convert.nb2html(str(NOTEBOOK), execute=False, include_requirejs=config["include_requirejs"],
                           custom_mathjax_url=config["custom_mathjax_url"])
    remote = re.findall(r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=[\"']?(?:https?:)?//", html)
    assert not remote, remote
    assert "download the notebook" in html.lower()


def test_notebook_runs_and_prints_its_tables_and_figures(lab):
    outputs = [o for cell in lab[0].cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    assert html.count('<figure class="sdpa-figure"') == 2
    assert sum("text/markdown" in o.get("data", {}) for o in outputs) == 3


def test_the_downloaded_notebook_runs_in_an_empty_folder(lab):
    """Outside the repository, with no snippets/ on any path: the notebook carries its library."""
    notebook, folder = lab
    assert not folder.is_relative_to(REPO)
    written = sorted(p.relative_to(folder).as_posix() for p in (folder / "snippets").rglob("*.py"))
    assert "snippets/sdpa/__init__.py" in written
    for name in written:
        assert (folder / name).read_text() == (REPO / name).read_text(), name
    printed = "".join(o.get("text", "") for c in notebook.cells if c.cell_type == "code" for o in c.outputs)
    assert "shared library: snippets/sdpa" in printed


def listed(values) -> str:
    values = [str(v) for v in values]
    return ", ".join(values[:-1]) + " and " + values[-1] if len(values) > 1 else "".join(values)


def markdown_outputs(notebook) -> list[str]:
    return [o["data"]["text/markdown"] for cell in notebook.cells if cell.cell_type == "code"
            for o in cell.outputs if "text/markdown" in o.get("data", {})]


def test_the_findings_are_printed_from_the_run(lab, summary):
    """The notebook's text states no result (issue 38): its last section prints the findings,
    built from the numbers it measured, so they agree with its own tables at any seed."""
    findings = markdown_outputs(lab[0])[-1]
    spectral = list(zip(summary["spectral_unscaled"], summary["spectral_scaled"]))
    heads = [8, 32, 128, 512]
    above = [d for d, (u, s) in zip(heads, spectral) if u > s]
    below = [d for d in heads if d not in above]
    sentence = re.search(r"The unscaled rows' mean spectral norm is (.*?)\. ", findings).group(1)
    expected = [f"above the scaled rows' at d_k = {listed(above)}"] if above else []
    expected += [f"not above it at d_k = {listed(below)}"] if below else []
    assert sentence == " and ".join(expected)
    for arm, numbers in summary["training"].items():
        line = next(line for line in findings.splitlines() if f"Training, {arm}." in line)
        assert f"mean loss is {fmt(numbers['final_loss'])}" in line
        if numbers["slowest_steps_to_target"] is None:
            assert f"{numbers['seeds_to_target']} of 5" in line
        else:
            assert f"by step {numbers['slowest_steps_to_target']:.0f}" in line


def test_the_text_cells_state_no_result():
    """The Markdown cells describe the setup and link the verdicts; results are printed.
    A result is read as a comparison or an outcome: none of these words in a text cell."""
    text = "\n".join(line[2:] for line in NOTEBOOK.read_text().splitlines() if line.startswith("# "))
    cells = re.split(r"^%% \[markdown\]$", text, flags=re.M)
    for word in RESULT_WORDS:
        for cell in cells:
            assert not re.search(rf"\b{word}", cell, re.I), f"a text cell says {word!r}: print it instead"


def test_a_failing_cell_fails_the_conversion(tmp_path):
    """With the site's allow_errors, mkdocs-jupyter raises on an error instead of rendering it."""
    import nbclient
    from mkdocs_jupyter import convert

    broken = tmp_path / "broken.py"
    broken.write_text("# %%\nratio = 1 / 0\n")
    with pytest.raises(nbclient.exceptions.CellExecutionError, match="ZeroDivisionError"):
        convert.nb2html(str(broken), execute=True, kernel_name="python3",
                        allow_errors=plugin_config()["allow_errors"])


def test_the_setup_text_says_how_the_lab_differs_from_the_ablation():
    """Section 3's text: the lab's runs go through ``sdpa.training.train`` (run_recall's loop,
    the ablation's too), and its setup differs from the failure-modes ablation's as it says."""
    import inspect

    from sdpa import ablation, recall
    from sdpa.ablation import Ablation
    from sdpa.sizes import SIZES

    text = " ".join(line[2:] for line in NOTEBOOK.read_text().splitlines() if line.startswith("# "))
    assert "is exactly" not in text
    assert "train(ensemble" in inspect.getsource(recall.run_recalls)
    assert "each(run_recalls, " in inspect.getsource(ablation.run_ablation)  # the ablation trains by it
    for size in ("quick", "full"):  # the profiles differ in the ablation's seeds alone
        study = SIZES[size].ablation
        assert (study.n_pairs, study.d_model, study.steps, study.d_ks) == (8, 32, 200, (16, 64, 256))
        assert [name for name, _ in study.optimizers] == ["adam", "sgd"]
    assert Ablation().batch == 32
    said = ("16 (key, value) pairs", "d_model = d_k = 64", "Adam for 120 steps",
            "8 pairs with d_model = 32 for 200 steps, at d_k = 16, 64 and 256, with both "
            "initialisations, and with plain SGD as well as Adam")
    for words in said:
        assert words in text, words
    code = NOTEBOOK.read_text()
    assert 'd_k=D_K, d_model=64, steps=120, batch=32' in code and "D_K = 64" in code
    assert recall.RecallExperiment().n_pairs == 16 and 'optimizer="adam"' in code
