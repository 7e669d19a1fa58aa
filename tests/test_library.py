"""The science library itself: the attention math, the models, the batched training."""

from __future__ import annotations

import ast
import dataclasses
import itertools
import math
import re
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from conftest import DOCS, REPO, SNIPPETS
from sdpa import env, runtime
from sdpa.attention import (Scale, attention, entropy, jacobian, jacobian_spectral_norm,
                            jacobian_trace, qk_norm, scores, softcap, softcap_slope)
from sdpa import gpt
from sdpa.gpt import GPTSweep, gpt_model, lr_sensitivity, run_gpt
from sdpa import recall
from sdpa.recall import (Arm, RecallExperiment, recall_at_init, recall_model, run_recall,
                         run_recalls, train_member)
from sdpa.models import GPTConfig, RecallBlock, RecallHead, qk_norm_bound
from sdpa.tasks import text_corpus
from sdpa.tasks import copy_batch, recall_batches
from sdpa.training import make_optimizer, train

# ---------------------------------------------------------------- attention math


def test_scale_rules():
    assert [rule.factor(64) for rule in Scale] == [1.0, 1 / 8, 1 / 64]
    assert [rule.label for rule in Scale] == ["no factor", "1/√d_k", "1/d_k"]  # as the pages name them


def test_attention_is_pytorchs_scaled_dot_product_attention():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 16, generator=g, dtype=torch.float64) for _ in range(3))
    assert torch.allclose(attention(q, k, v, 0.25), F.scaled_dot_product_attention(q, k, v))
    assert torch.equal(scores(q, k, 0.5), (q @ k.transpose(-2, -1)) * 0.5)


def test_jacobian_formula_matches_autograd_and_its_properties():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(6, dtype=torch.float64, generator=g) * 2
    p = torch.softmax(z, -1)
    auto = torch.autograd.functional.jacobian(lambda x: torch.softmax(x, -1), z)
    J = jacobian(p)
    assert torch.allclose(J, auto, atol=1e-12)
    assert torch.allclose(J, J.T)
    ones = torch.ones(6, dtype=torch.float64)
    assert torch.allclose(J @ ones, torch.zeros(6, dtype=torch.float64), atol=1e-12)
    assert torch.linalg.eigvalsh(J).min() > -1e-12  # positive semi-definite
    assert jacobian_trace(p).item() == pytest.approx(torch.trace(J).item())
    tie = torch.tensor([0.5, 0.5, 0.0, 0.0], dtype=torch.float64)
    assert jacobian_spectral_norm(tie).item() == pytest.approx(0.5)
    uniform = torch.full((8,), 1 / 8, dtype=torch.float64)
    assert jacobian_spectral_norm(uniform).item() == pytest.approx(1 / 8)
    assert jacobian_trace(uniform).item() == pytest.approx(1 - 1 / 8)
    one_hot = torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64)
    assert jacobian(one_hot).abs().max().item() == 0
    rows = torch.softmax(torch.randn(200, 16, generator=g, dtype=torch.float64) * 3, -1)
    assert jacobian_spectral_norm(rows).max().item() <= 0.5 + 1e-12


def test_entropy_softcap_and_qk_norm():
    assert entropy(torch.full((4,), 0.25)).item() == pytest.approx(math.log(4))
    assert entropy(torch.tensor([1.0, 0.0])).item() == 0.0
    z = torch.linspace(-200, 200, 101, dtype=torch.float64, requires_grad=True)
    capped = softcap(z, 30.0)
    assert capped.abs().max() < 30
    assert softcap(torch.tensor(0.1), 30.0) == pytest.approx(0.1, rel=1e-4)
    (slope,) = torch.autograd.grad(capped.sum(), z)
    assert torch.allclose(slope, softcap_slope(z.detach(), 30.0))
    x = torch.randn(5, 16, generator=torch.Generator().manual_seed(1)) * 7 + 2
    assert torch.allclose(qk_norm(x).pow(2).mean(-1), torch.ones(5), atol=1e-4)
    assert torch.allclose(qk_norm(x, "rms"), nn.RMSNorm(16, eps=1e-6)(x), atol=1e-6)
    assert torch.allclose(qk_norm(x, "layer").mean(-1), torch.zeros(5), atol=1e-5)


# ---------------------------------------------------------------- runtime


def test_seeded_builds_the_same_layer_and_restores_the_global_generator(monkeypatch):
    monkeypatch.delenv(env.SEED_OFFSET, raising=False)
    torch.manual_seed(123)
    expected_next = torch.rand(3)
    torch.manual_seed(123)
    with runtime.seeded(7):
        a = nn.Linear(8, 4)
    assert torch.equal(torch.rand(3), expected_next), "the global generator is left as it was"
    with runtime.seeded(7):
        b = nn.Linear(8, 4)
    assert torch.equal(a.weight, b.weight)
    monkeypatch.setenv(env.SEED_OFFSET, "1")
    with runtime.seeded(6):
        c = nn.Linear(8, 4)
    assert torch.equal(a.weight, c.weight), "the seed offset applies"


# ---------------------------------------------------------------- the recall model


def test_recall_head_computes_the_textbook_attention():
    """The head's reordered products equal softmax((q @ k^T) * scale) @ v written out."""
    with runtime.seeded(0):
        head = RecallHead(d_model=12, d_k=8, n_values=5, scale=0.3)
    data = recall_batches(RecallExperiment(d_model=12, n_pairs=6, batch=4).task, 0, 1)
    query, pairs = data.tokens(0)
    out = head(query, pairs)
    q, k, v = head.W_Q(query)[:, None], head.W_K(pairs), head.W_V(pairs)
    att = (q @ k.transpose(-2, -1)) * 0.3
    p = torch.softmax(att, -1)
    assert torch.allclose(out.scores, att[:, 0], atol=1e-5)
    assert torch.allclose(out.logits, head.W_O(p @ v)[:, 0], atol=1e-5)


def test_unit_and_default_initialisation():
    experiment = RecallExperiment(d_model=256, d_k=128)
    unit = recall_model(experiment, Arm(init="unit"), seed=0).W_Q.weight
    default = recall_model(experiment, Arm(init="default"), seed=0).W_Q.weight
    assert unit.var().item() == pytest.approx(1 / 256, rel=0.05)
    assert default.var().item() == pytest.approx(1 / (3 * 256), rel=0.05)
    assert default.abs().max() <= 1 / 16


@pytest.mark.parametrize("optimizer, schedule", [("adam", "constant"), ("sgd", "constant"),
                                                 ("adam", "cosine")])
def test_batched_training_equals_the_loop_and_is_deterministic(monkeypatch, optimizer, schedule):
    """Members trained one by one by the plain loop (``sdpa.training.train``, through
    ``train_member``) match the same loop training them as one ``Ensemble`` (as
    ``run_recall`` does): the loss at every step, and every weight at the end (a warm-up
    and cosine schedule too)."""
    monkeypatch.setenv(env.DEVICE, "cpu")
    arms = (Arm(Scale.NONE), Arm(Scale.INV, lr_q=0.5, learn_scale=True),
            Arm(Scale.INV_SQRT, init="default", k_init=2.0))
    experiment = RecallExperiment(d_k=16, d_model=16, n_pairs=4, batch=8, steps=6,
                                  seeds=(0, 1), lrs=(1e-2, 3e-2), arms=arms, optimizer=optimizer,
                                  schedule=schedule, warmup=2)
    history = run_recall.__wrapped__(experiment)
    # run_recalls' ensemble and loop, kept here for its weights
    ensemble = recall._ensemble((experiment,))
    adam_or_sgd = make_optimizer(optimizer, ensemble.param_groups())
    batches = itertools.islice(recall._batches((experiment,), experiment.steps + 1), experiment.steps)
    losses = train(ensemble, adam_or_sgd, batches, recall._member_losses,
                   recall.schedule(experiment, adam_or_sgd))
    assert torch.equal(torch.tensor(losses), history.metrics.loss[:-1].flatten(1))
    weights = ensemble.state()  # name -> (members, ...), in experiment.members() order
    for arm, lr, seed in [(arms[1], 3e-2, 1), (arms[2], 1e-2, 0), (arms[0], 3e-2, 0)]:
        model, losses = train_member(experiment, arm, lr, seed)
        batched = history.arm(arm, lr).loss[:-1, experiment.seeds.index(seed)]  # last: no step
        assert torch.allclose(batched, torch.tensor(losses), rtol=1e-5, atol=1e-6), (arm, lr, seed)
        member = experiment.members().index((arm, lr, seed))
        for name, weight in model.named_parameters():
            assert torch.allclose(weights[name][member], weight, rtol=1e-4, atol=1e-6), name
    again = run_recall.__wrapped__(experiment)
    assert torch.equal(history.metrics.loss, again.metrics.loss)
    assert torch.equal(history.metrics.grad_q, again.metrics.grad_q)


def test_adam_logit_scale_equals_scaled_qk_init_and_lr():
    c = 1 / 16
    r = c**0.5
    arms = (Arm(Scale.INV), Arm(Scale.NONE, q_init=r, k_init=r, lr_q=r, lr_k=r))
    history = run_recall.__wrapped__(RecallExperiment(d_k=16, d_model=16, n_pairs=4, batch=8,
                                                      steps=20, seeds=(0,), arms=arms))
    assert torch.allclose(history.arm(arms[0]).loss, history.arm(arms[1]).loss, rtol=1e-3,
                          atol=1e-4)


def test_default_init_gives_narrower_unscaled_logits():
    arms = (Arm(Scale.NONE, init="unit"), Arm(Scale.NONE, init="default"))
    at_init = recall_at_init(RecallExperiment(d_k=64, seeds=(0, 1, 2), arms=arms), n_batches=4)
    unit, default = (at_init.arm(arm).record(0) for arm in arms)
    assert (unit.max_logit > default.max_logit).all()
    assert (unit.logit_var / default.logit_var).mean().item() == pytest.approx(9, rel=0.3)


# ---------------------------------------------------------------- the small GPT


def test_copy_task_targets():
    inputs, targets = copy_batch(4, vocab=8, context=16, generator=torch.Generator().manual_seed(0))
    assert inputs.shape == targets.shape == (4, 16)
    assert torch.equal(inputs[:, :8], inputs[:, 8:])
    assert (targets[:, :7] == -1).all() and (targets[:, 7:] >= 0).all()


def test_gpt_attention_reads_like_the_formula_and_qk_norm_bound_at_init():
    config = GPTConfig(qk_norm="rms", softcap=10.0)
    model = gpt_model(config, seed=0)
    attn = model.blocks[0].attn
    x = torch.randn(3, 16, config.d_model, generator=torch.Generator().manual_seed(1))
    q, k, v = attn.c_attn(x).split(config.n_heads * config.d_head, dim=-1)
    heads = lambda t: t.view(3, 16, config.n_heads, config.d_head).transpose(1, 2)  # noqa: E731
    q, k, v = heads(q), heads(k), heads(v)
    z = softcap(scores(attn.q_norm(q), attn.k_norm(k), config.d_head**-0.5), 10.0)
    mask = torch.ones(16, 16, dtype=torch.bool).tril()
    p = torch.softmax(z.masked_fill(~mask, float("-inf")), -1)
    expected = attn.c_proj((p @ v).transpose(1, 2).reshape(3, 16, -1))
    out, stats = attn(x)
    assert torch.allclose(out, expected, atol=1e-6)
    assert stats.max_logit <= 10.0
    bound = qk_norm_bound(config, model.state_dict())
    assert bound.item() == pytest.approx(math.sqrt(config.d_head))  # gains 1: sqrt(d_head)


def test_lr_sensitivity_definition():
    assert lr_sensitivity(torch.tensor([1.0, 0.5, 3.0]), 2.0) == pytest.approx((0.5 + 0 + 1.5) / 3)


@pytest.mark.parametrize("config", [GPTConfig(), GPTConfig(qk_norm="rms", scale=Scale.NONE),
                                    GPTConfig(softcap=10.0)], ids=lambda c: c.label)
def test_batched_gpt_sweep_equals_separate_runs(monkeypatch, config):
    """A member of a sweep follows its own run: a plain model trained by the plain loop
    (``sdpa.training.train``, through ``sdpa.gpt.train_member``)."""
    monkeypatch.setenv(env.DEVICE, "cpu")
    sweep = GPTSweep(arms=(GPTConfig(qk_norm="rms"), config), lrs=(3e-3, 3e-2), seeds=(0, 1),
                     steps=6)
    history = run_gpt.__wrapped__(sweep)
    lr, seed = 3e-3, 1  # a low rate: rounding differences stay small in 6 steps
    _, losses = gpt.train_member(sweep, config, lr, seed)
    batched = history.arm(config, lr).loss[:, sweep.seeds.index(seed)]
    assert torch.allclose(batched, torch.tensor(losses), rtol=1e-4, atol=1e-6)


def test_a_sweep_in_parts_is_the_whole_sweep(monkeypatch):
    """A sweep's parts (a seed and a few arms each, so that workers can share a long sweep),
    trained one by one and joined, give the records of the whole sweep, every field, bit for
    bit."""
    monkeypatch.setenv(env.DEVICE, "cpu")
    arms = tuple(GPTConfig(scale=scale, qk_init=a) for scale in (Scale.NONE, Scale.INV_SQRT)
                 for a in (1.0, 0.5, 0.25))
    sweep = GPTSweep(arms=arms, lrs=(1e-2, 3e-2), seeds=(0, 1), steps=4)
    whole = run_gpt.__wrapped__(sweep).records
    parts = sweep.parts(members=4)
    assert len(parts) == 6, "2 seeds x 3 parts of 2 arms"
    parts = gpt.GPTHistory.joined(sweep, [run_gpt.__wrapped__(p) for p in parts]).records
    for field in dataclasses.fields(whole):
        assert torch.equal(getattr(whole, field.name).nan_to_num(), getattr(parts, field.name).nan_to_num()), field.name


def test_configuration_objects_hold_data_and_train_nothing():
    """A study's frozen configuration (``Plane``, ``BudgetStudy``, ...) holds sizes, rates
    and seeds: no method of a library class calls what trains (a memoised study or engine,
    :func:`sdpa.runtime.each`, or a training loop). Functions train, and say so by name."""
    modules = {path: ast.parse(path.read_text()) for path in sorted((SNIPPETS / "sdpa").glob("*.py"))}
    training = {"each", "train", "train_member", "train_alone"} | {
        node.name for tree in modules.values() for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
        and any(re.match(r"(runtime\.)?memo\b", ast.unparse(d)) for d in node.decorator_list)}
    found = []
    for path, tree in modules.items():
        for cls in (node for node in tree.body if isinstance(node, ast.ClassDef)):
            for method in (node for node in cls.body if isinstance(node, ast.FunctionDef)):
                calls = {getattr(call.func, "id", getattr(call.func, "attr", None))
                         for call in ast.walk(method) if isinstance(call, ast.Call)}
                found += [f"{path.name}: {cls.name}.{method.name} calls {name}" for name in sorted(calls & training)]
    assert not found, found


def test_text_sweep_member_equals_separate_run(monkeypatch):
    """The text task trains through the same ensemble: a member follows the plain loop."""
    monkeypatch.setenv(env.DEVICE, "cpu")
    config = GPTConfig(d_model=16, d_head=8, vocab=text_corpus().vocab, context=16,
                       scale=Scale.NONE, qk_lr=0.5)
    sweep = GPTSweep(arms=(GPTConfig(d_model=16, d_head=8, vocab=config.vocab, context=16), config),
                     lrs=(3e-3,), seeds=(0, 1), steps=5, task="text", held_out=4, evals=5)
    history = run_gpt.__wrapped__(sweep)
    _, losses = gpt.train_member(sweep, config, 3e-3, 1)
    assert torch.allclose(history.arm(config, 3e-3).loss[:, 1], torch.tensor(losses), rtol=1e-4)
    assert history.records.held_out_loss.shape[0] == 6  # at steps 0, 1, ..., 5
    assert history.records.held_out_loss[-1].equal(history.records.final_loss)


def test_qk_lr_is_w_q_and_w_k_learning_slower_from_the_same_start():
    """GPTConfig.qk_lr: the same function at the start, and under Adam the effective W_Q and
    W_K (qk_lr times the trained weight) move qk_lr times as far in a step; the rest alike."""
    r, inner = 0.25, 2 * 16
    idx = torch.randint(0, 8, (4, 16), generator=torch.Generator().manual_seed(0))
    runs = []
    for qk_lr in (1.0, r):
        model = gpt.gpt_model(GPTConfig(scale=Scale.NONE, qk_lr=qk_lr), seed=3)
        before = {n: w.detach().clone() for n, w in model.named_parameters()}
        logits, _ = model(idx)
        # eps far below the gradients: Adam's step is then exactly lr * sign (step one)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, eps=1e-20)
        logits.square().mean().backward()
        optimizer.step()
        runs.append((logits.detach(), before, dict(model.named_parameters()), qk_lr))
    assert torch.allclose(runs[0][0], runs[1][0], atol=1e-6)
    name = "blocks.0.attn.c_attn.weight"
    steps = [(after[name] - before[name]).detach() for _, before, after, _ in runs]
    steps[1][:inner] *= r  # the effective W_Q and W_K are qk_lr times the trained rows
    assert torch.allclose(steps[1][:inner], r * steps[0][:inner], rtol=1e-3, atol=1e-7)
    assert torch.allclose(steps[1][inner:], steps[0][inner:], rtol=1e-3, atol=1e-7)  # W_V alike
    weight = "blocks.0.mlp.c_fc.weight"
    assert torch.allclose(runs[1][2][weight], runs[0][2][weight], atol=1e-6)


# ---------------------------------------------------------------- conventions


def _snippet_files():
    return sorted(p for p in SNIPPETS.rglob("*.py") if p.relative_to(SNIPPETS).parts[0] != "sdpa")


#: Calls that draw random numbers (the last part of the called name): torch's, NumPy's and
#: Python's samplers on a global generator.
GLOBAL_DRAWS = {"rand", "randn", "randint", "randperm", "rand_like", "randn_like",
                "randint_like", "normal", "normal_", "uniform_", "bernoulli", "multinomial",
                "shuffle", "choice", "sample"}


def _seeding(path):
    """A snippet's seeding: its first statement after the imports (and docstring), its
    ``sdpa.seed`` calls, and whether it draws random numbers: from the generator that
    ``sdpa.seed`` returned (any call it is passed to), from another seeded generator
    (``sdpa.generator``, ``sdpa.seeded``) or from a global one."""
    tree = ast.parse(path.read_text())
    body = tree.body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    first = next(s for s in body if not isinstance(s, (ast.Import, ast.ImportFrom)))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    seeds = [c for c in calls if ast.unparse(c.func) == "sdpa.seed"]
    seeded = {ast.unparse(t) for n in ast.walk(tree) if isinstance(n, ast.Assign)
              and n.value in seeds for t in n.targets}  # generator = sdpa.seed(N)

    def draws(call: ast.Call) -> bool:
        arguments = [*call.args, *(k.value for k in call.keywords)]
        return (ast.unparse(call.func).rpartition(".")[2] in GLOBAL_DRAWS | {"generator", "seeded"}
                or any(k.arg == "generator" for k in call.keywords)
                or any(ast.unparse(a) in seeded for a in arguments))

    return first, seeds, seeded, [c for c in calls if draws(c)]


def test_every_snippet_follows_the_seeding_rule():
    """A snippet that draws random numbers calls sdpa.seed(N) once, right after the imports;
    a snippet that calls it draws from what it seeded (the generator it returned, or the
    global state); no generator is made anywhere else."""
    for path in _snippet_files():
        name = path.relative_to(SNIPPETS)
        first, seeds, seeded, draws = _seeding(path)
        if draws:
            call = first.value if isinstance(first, (ast.Assign, ast.Expr)) else None
            assert call in seeds, (f"{name}: it draws random numbers, so its first statement "
                                   "after the imports must be generator = sdpa.seed(N)")
            assert len(seeds) == 1, f"{name}: sdpa.seed is called once"
        if seeds:
            uses = [c for c in draws if ast.unparse(c.func).rpartition(".")[2] in GLOBAL_DRAWS
                    or set(map(ast.unparse, [*c.args, *(k.value for k in c.keywords)])) & seeded]
            assert uses, (f"{name}: calls sdpa.seed but draws nothing from it (memoised "
                          "experiments carry their own seeds): remove the call")
    library = [p for p in (SNIPPETS / "sdpa").glob("*.py") if p.name != "runtime.py"]
    for path in [*_snippet_files(), *library, DOCS / "lab.py"]:
        text = path.read_text()
        assert "manual_seed" not in text and "torch.Generator(" not in text, (
            f"{path}: seeds go through sdpa.runtime (sdpa.seed, generator, seeded)")


def test_the_seeding_rule_tells_a_draw_from_an_unused_seed(tmp_path):
    """The rule's reading of a snippet: what counts as a draw, and as a seed that is used."""
    cases = [  # (source, sdpa.seed calls, draws)
        ("import torch\nimport sdpa\n\ng = sdpa.seed(0)\nx = torch.randn(3, generator=g)\n", 1, 1),
        ("import sdpa\nfrom sdpa.attention import random_qk\n\ng = sdpa.seed(0)\n"
         "q, k = random_qk(4, 4, 8, g)\n", 1, 1),
        ("import sdpa\nfrom sdpa import survey\n\nx = survey.spread(8)\n", 0, 0),
        ("import sdpa\n\nsdpa.seed(0)\nx = 1\n", 1, 0),
        ("import torch\n\nx = torch.randn(3)\n", 0, 1),
    ]
    for i, (source, seeds, draws) in enumerate(cases):
        path = tmp_path / f"case{i}.py"
        path.write_text(source)
        _, found, _, drawn = _seeding(path)
        assert (len(found), len(drawn)) == (seeds, draws), source


def test_readme_figure_template_runs(tmp_path):
    """The README's 'Add a snippet' template is a working snippet."""
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("### Add a snippet"):readme.index("### Add a page")]
    code = textwrap.dedent(re.search(r"```python\n(.*?)```", section, re.S).group(1))
    script = tmp_path / "template.py"
    script.write_text(code)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=env.environment({"PYTHONPATH": str(SNIPPETS)}), timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith('<figure class="sdpa-figure" id="fig-qk-spread">')


def test_recall_block_equals_textbook_multi_head_attention():
    """RecallBlock folds W_K and W_V into the query's side; the numbers are the formula's."""
    heads, d_k, n = 4, 8, 5
    with runtime.seeded(0):
        block = RecallBlock(heads, d_k, n_values=7, scale=d_k**-0.5)
    g = runtime.generator(1)
    query = torch.randn(3, heads * d_k, generator=g)
    pairs = torch.randn(3, n, heads * d_k, generator=g)
    out = block(query, pairs)
    x = block.ln_1(torch.cat([pairs, query.unsqueeze(1)], dim=1))
    # the query's position attends to the pairs' (not to itself: the task's decoy)
    mask = torch.tensor([True] * n + [False])

    def split(t):  # (batch, heads, tokens, d_k)
        return t.unflatten(-1, (heads, d_k)).transpose(1, 2)

    q, k, v = split(block.W_Q(x[:, -1:])), split(block.W_K(x)), split(block.W_V(x))
    k, v = k[:, :, mask], v[:, :, mask]
    att = (q @ k.transpose(-2, -1)) * d_k**-0.5
    p = torch.softmax(att, dim=-1)
    read = (p @ v).transpose(1, 2).flatten(1)
    logits = block.head(block.ln_f(query + block.W_O(read)))
    assert torch.allclose(out.attention, p.squeeze(2), atol=1e-6)
    assert torch.allclose(out.scores, att.squeeze(2), atol=1e-5)
    assert torch.allclose(out.logits, logits, atol=1e-5)


def test_experiments_trained_together_equal_their_separate_runs():
    """run_recalls: one ensemble per optimiser (experiments of one optimiser share its param
    group at a rate they share); each history is run_recall's, bit for bit."""
    base = RecallExperiment(d_k=8, d_model=16, n_pairs=4, batch=8, steps=6, record_every=2,
                            seeds=(0, 1))
    adam = dataclasses.replace(base, optimizer="adam", lrs=(1e-2, 3e-2),
                               arms=(Arm(Scale.NONE), Arm(Scale.INV, learn_scale=True)))
    sgd = dataclasses.replace(base, optimizer="sgd", lrs=(0.3,), seeds=(1, 2),
                              arms=(Arm(Scale.INV_SQRT),))
    adam_too = dataclasses.replace(base, optimizer="adam", lrs=(3e-2,), seeds=(2,),
                                   arms=(Arm(Scale.INV_SQRT),))  # a rate that adam has too
    together = run_recalls((adam, sgd, adam_too))
    for experiment, history in zip((adam, sgd, adam_too), together):
        alone = run_recall(experiment)
        assert history.metrics.loss.shape == alone.metrics.loss.shape
        for field in ("loss", "grad_q", "scale", "entropy"):
            assert torch.equal(getattr(history.metrics, field), getattr(alone.metrics, field))
    with pytest.raises(ValueError):
        run_recalls((adam, dataclasses.replace(sgd, d_k=16)))


def test_memo_keys_on_the_seed_offset_the_device_the_profile_and_the_threads(monkeypatch):
    """One memo for every experiment: a run under another seed offset, device, profile or
    thread count is another result, and ``f()`` is ``f(default)``."""
    calls = []

    @runtime.memo
    def run(config, steps=3):
        calls.append((config, steps, runtime.context()))
        return len(calls)

    for name in (env.SEED_OFFSET, env.DEVICE, env.PROFILE, env.THREADS):
        monkeypatch.delenv(name, raising=False)
    assert run("a") == run("a", 3) == run(config="a", steps=3) == 1
    monkeypatch.setenv(env.THREADS, "2")
    assert run("a") == 2 and torch.get_num_threads() == 2  # the run pinned its threads
    monkeypatch.setenv(env.THREADS, "1")
    assert run("a") == 1 and torch.get_num_threads() == 1
    monkeypatch.setenv(env.SEED_OFFSET, "5")
    assert run("a") == 3
    monkeypatch.setenv(env.PROFILE, "full")
    assert run("a") == 4
    monkeypatch.setenv(env.DEVICE, "cpu")
    assert run("a") == 4  # the CPU is what torch picked anyway: the same run
    monkeypatch.setenv(env.PROFILE, "fast")
    with pytest.raises(ValueError, match="quick, full"):
        run("a")


def test_the_notebook_s_download_carries_the_whole_library():
    """``import sdpa`` loads ``sdpa.Figure``'s module on first use (``_HOMES``), and any
    module as ``sdpa.recall``: the download writes every file of the package."""
    from sitebuild.notebook import library_cell

    cell = library_cell([SNIPPETS])
    files = [f"'snippets/{path.relative_to(SNIPPETS).as_posix()}'" for path in (SNIPPETS / "sdpa").glob("*.py")]
    assert files and all(name in cell for name in files)


def test_import_sdpa_loads_neither_torch_nor_matplotlib():
    """The build reads the environment names and the figures' palette and markup from
    ``sdpa.env`` and ``sdpa.style`` without paying for torch."""
    code = ("import sys, sdpa, sdpa.env, sdpa.style; "
            "print(sorted({'torch', 'matplotlib', 'numpy'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=REPO / "snippets")
    assert out.stdout.strip() == "[]"


def test_importing_the_library_changes_no_global_state_and_a_run_pins_the_threads():
    """Importing every module of the library leaves torch's thread count as torch set it;
    a run pins it where it starts (``sdpa.seed``, a generator, the device, the memo)."""
    code = ("import importlib, pathlib, torch; before = torch.get_num_threads(); "
            "[importlib.import_module(f'sdpa.{p.stem}') for p in pathlib.Path('sdpa').glob('*.py')]; "
            "imported = torch.get_num_threads(); import sdpa; sdpa.seed(0); "
            "print(before, imported, torch.get_num_threads())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=SNIPPETS,
                         env=env.environment({env.THREADS: "1"}))
    before, imported, seeded = map(int, out.stdout.split())
    assert imported == before and seeded == 1


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_every_rule_is_a_point_of_the_plane_bit_for_bit(optimizer):
    """The identity the plane rests on, where every multiplication by d_k^(1/4) is exact:
    each scaled rule and the unscaled head at its point give the same losses, bit for bit
    (Adam's epsilon for W_Q and W_K divided by sqrt(s))."""
    from sdpa.plane import Plane, identity_runs

    plane = Plane(steps=30)
    for d_k in (16, 256):
        for rule in (Scale.INV_SQRT, Scale.INV):
            scaled, unscaled = identity_runs(plane, optimizer, d_k, rule)
            assert scaled == unscaled, (d_k, rule)


def test_a_survey_takes_more_rows_on_request_and_the_same_rows_by_default():
    from sdpa import survey

    default = survey.rows(16, 0.25)
    assert torch.equal(default.z, survey.rows(16, 0.25, n_rows=survey.N_ROWS).z)
    assert default.z.shape[0] == survey.N_ROWS == 4096
    larger = survey.rows(16, 0.25, n_rows=2 * survey.N_ROWS)
    assert larger.z.shape == (8192, 64) and survey.standard_error(larger.max_weight) > 0
    with pytest.raises(ValueError, match="multiple of KEY_SETS"):
        survey.rows(16, 0.25, n_rows=1000)
