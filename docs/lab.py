# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lab notebook: the whole story in one run
#
# This notebook runs the site's central argument end to end, in three experiments that
# take under a minute on a laptop CPU. Each asks one question:
#
# 1. **Variance.** How does the spread of q·k grow with the head dimension d_k?
# 2. **Saturation.** What does that spread do to a softmax row, and to its Jacobian, the
#    path of every gradient into W_Q and W_K?
# 3. **Training.** How does a one-head model learn an associative-recall task with the
#    logits multiplied by 1, 1/√d_k or 1/d_k?
#
# The notebook states no result in its text. Each cell prints what it measured, and the
# last section prints the findings from those numbers, so the text cannot disagree with
# the run. The site's verdicts live on its pages, linked at the end.
#
# The site builds this page by executing the notebook, and the test suite executes the
# same file and checks what it prints. Download the notebook as [lab.ipynb](lab.ipynb)
# for Jupyter, or as [lab.py](lab.py), the
# [Jupytext "percent" script](https://jupytext.readthedocs.io/en/latest/formats-scripts.html)
# it is written in (it also runs as a plain Python script). The site renders it with
# [mkdocs-jupyter](https://github.com/danielfrg/mkdocs-jupyter). Every piece of code it
# uses comes from the site's small shared library, `sdpa`.

# %% [markdown]
# ## Setup
#
# The notebook lives in `docs/` and runs with `docs/` as its working directory; the shared
# library lives in the repository's `snippets/` folder. The next cell puts that folder on
# Python's import path, looking next to the working directory and one level up, so the
# notebook also runs from the repository root.

# %%
import sys
from pathlib import Path

candidates = [Path.cwd() / "snippets", Path.cwd().parent / "snippets"]
SNIPPETS = next(p for p in candidates if (p / "sdpa").is_dir())
sys.path.insert(0, str(SNIPPETS))

import math

from IPython.display import HTML, Markdown, display

import sdpa
from sdpa import survey
from sdpa.attention import Scale
from sdpa.recall import Arm, RecallExperiment, run_recall

print("shared library:", Path(sdpa.__file__).parent.relative_to(SNIPPETS.parent))
print("device:", sdpa.device())

# %% [markdown]
# ## 1. Variance: how the spread of q·k grows
#
# Queries and keys with independent, zero-mean, unit-variance components: each score is a
# sum of d_k independent products of variance 1, so its variance is d_k (the
# [derivation](../derivation/#the-mean-and-the-variance-of-qk)). `survey.spread` measures
# the standard deviation of the 10^6 scores of 1,000 queries against 1,000 keys (the
# derivation page's table, the same draw), before and after dividing by √d_k.

# %%
HEAD_DIMS = [8, 32, 128, 512]
variance = [{"d_k": d_k, "std": survey.spread(d_k), "sqrt_d_k": math.sqrt(d_k),
             "std_scaled": survey.spread(d_k) / math.sqrt(d_k)} for d_k in HEAD_DIMS]

display(Markdown(sdpa.markdown_table(
    ["d_k", "std of q·k", "√d_k", "std of q·k/√d_k"],
    [(r["d_k"], r["std"], r["sqrt_d_k"], r["std_scaled"]) for r in variance],
)))

# %% [markdown]
# ## 2. Saturation: how many keys a row reads, and the softmax Jacobian
#
# We take the survey's rows of 64 keys (`sdpa.survey`, the rows the failure-modes page
# measures; the cell prints how many).
# For each we read the largest softmax weight and two sizes of the softmax Jacobian
# diag(p) − p pᵀ. That Jacobian multiplies every gradient on its way from the weights back
# to the logits. Its spectral norm is the largest gain in any one direction: at most 1/2,
# for a tie between two keys. Its trace sums over all directions: 1 − 1/64 for a uniform
# row, 0 for a strictly one-hot row (one weight exactly 1).

# %%
print(f"{survey.N_ROWS:,} rows of 64 keys, in {survey.KEY_SETS} independent key sets")
saturation = []
for d_k in HEAD_DIMS:
    for name, factor in (("q·k", 1.0), ("q·k/√d_k", 1 / math.sqrt(d_k))):
        rows = survey.rows(d_k, factor)
        saturation.append({
            "d_k": d_k, "logits": name,
            "max_weight": rows.max_weight.mean().item(),
            "spectral_norm": rows.spectral_norm.mean().item(),
            "trace": rows.trace.mean().item(),
        })

figure = sdpa.Figure(
    "lab-saturation",
    caption="Rows of 64 keys. Left: the mean largest softmax weight. Right: the mean spectral "
    "norm (solid) and trace (dashed) of the softmax Jacobian; unscaled in orange, scaled in blue. "
    "The last section prints what the curves show.",
    alt="Two panels against head dimension: the mean largest weight (left) and the mean spectral "
    "norm and trace of the softmax Jacobian (right), unscaled and scaled; the numbers are printed "
    "at the end of the notebook.",
    ncols=2, size=(7.4, 3.0),
)
with figure as (left, right):
    for color, name, marker in ((sdpa.PALETTE[1], "q·k", "o"), (sdpa.PALETTE[0], "q·k/√d_k", "s")):
        rows = [r for r in saturation if r["logits"] == name]
        left.plot(HEAD_DIMS, [r["max_weight"] for r in rows], marker + "-", color=color, label=name)
        right.plot(HEAD_DIMS, [r["spectral_norm"] for r in rows], marker + "-", color=color,
                   label=f"{name}, spectral norm")
        right.plot(HEAD_DIMS, [r["trace"] for r in rows], marker + "--", color=color,
                   label=f"{name}, trace")
    left.set(xscale="log", ylim=(0, 1.02), xlabel="d_k", ylabel="mean largest weight")
    right.set(xscale="log", ylim=(0, 1.02), xlabel="d_k", ylabel="size of the softmax Jacobian")
    for ax in (left, right):
        ax.set_xticks(HEAD_DIMS, [str(d) for d in HEAD_DIMS])
        ax.minorticks_off()
    left.legend()
    right.legend(fontsize=7)
display(HTML(figure.html))

# %% [markdown]
# ## 3. Training: a short ablation of the factor
#
# The task: a sequence of 16 (key, value) pairs, then one of the keys; the answer is its
# value. One attention head (d_model = d_k = 64, weights initialised so that q and k
# components have unit variance), trained with Adam for 120 steps on fresh batches, five
# seeds per arm. Every run goes through `train`,
# [the site's training loop](../code/training/#train) (`zero_grad`, `backward`, `step` on
# `torch.optim`), the same function the failure-modes ablation trains with.
# `sdpa.recall.run_recall` hands it all arms and seeds at once, as one ensemble. A test of
# the library checks, on a small setup, that an ensemble's runs match the same runs trained
# one by one. The arms differ only in the factor c in softmax(c q·k).
#
# This is a fixed-rate illustration, not the verdict on whether training needs the factor:
# every arm gets one learning rate, one budget and one initialisation. At one rate a scale
# rule cannot be told from a learning rate, since a factor is also a start and a rate for
# W_Q and W_K ([the identity](../tuning/#every-rule-is-a-point-of-one-plane)); the
# [tuned comparisons](../tuning/#what-the-factor-buys) tune both for every rule alike.
#
# The setup is not the [training ablation](../failure-modes/#the-training-ablation)'s either,
# so the two can read the same arm differently. That ablation trains on 8 pairs with
# d_model = 32 for 200 steps, at d_k = 16, 64 and 256, with both initialisations, and with
# plain SGD as well as Adam.

# %%
D_K = 64
ARMS = {"c = 1": Arm(Scale.NONE), "c = 1/√d_k": Arm(Scale.INV_SQRT), "c = 1/d_k": Arm(Scale.INV)}
experiment = RecallExperiment(
    d_k=D_K, d_model=64, steps=120, batch=32, record_every=5,
    optimizer="adam", lrs=(1e-2,), arms=tuple(ARMS.values()), seeds=(0, 1, 2, 3, 4),
)
history = run_recall(experiment)

figure = sdpa.Figure(
    "lab-training",
    caption="Training loss of the three arms (mean over 5 seeds; band: lowest to highest seed). "
    "The dotted line is ln 32, the loss of a uniform guess among the 32 values.",
    alt="Loss against step for three arms, each a mean line in a band from the lowest to the "
    "highest seed, with chance as a dotted line; the table below gives the numbers.",
    size=(5.2, 3.3),
)
with figure as ax:
    for (name, arm), color in zip(ARMS.items(), sdpa.PALETTE[1::-1] + [sdpa.PALETTE[2]]):
        loss = history.arm(arm).loss  # (recorded steps, seeds)
        ax.plot(history.step, loss.mean(-1), color=color, label=name)
        ax.fill_between(history.step, loss.amin(-1), loss.amax(-1), color=color, alpha=0.15, lw=0)
    ax.axhline(math.log(32), color=sdpa.INK, ls=":", lw=1)
    ax.set(xlabel="step", ylabel="training loss")
    ax.legend()
display(HTML(figure.html))

# %% [markdown]
# The table reads the runs at the budget. It gives the loss after the last step (the mean,
# and the lowest and highest seed). It also gives the step at which the slowest seed first
# got its loss below 0.5 ("not reached" if one never did within the 120 steps).

# %%
TARGET = 0.5
training = []
for name, arm in ARMS.items():
    curves = history.arm(arm)  # every field: (recorded steps, seeds)
    training.append({
        "arm": name,
        "entropy_at_init": curves.entropy[0].mean().item(),
        "grad_q_over_grad_v_at_init": (curves.grad_q[0] / curves.grad_v[0]).mean().item(),
        "final_loss": curves.loss[-1].mean().item(),
        "final_loss_min": curves.loss[-1].min().item(),
        "final_loss_max": curves.loss[-1].max().item(),
        "slowest_steps_to_target": history.steps_to(curves.loss, TARGET).max().item(),
        "seeds_to_target": history.steps_to(curves.loss, TARGET).isfinite().sum().item(),
        "final_accuracy": curves.accuracy[-1].mean().item(),
    })


def reached(steps):
    return "not reached" if math.isinf(steps) else f"{steps:.0f}"


display(Markdown(sdpa.markdown_table(
    ["arm", "attention entropy at step 0 (nats)", "‖∇W_Q‖ / ‖∇W_V‖ at step 0",
     "loss after 120 steps, mean (min–max)", f"slowest seed to loss < {TARGET}",
     "accuracy after 120 steps"],
    [(r["arm"], r["entropy_at_init"], r["grad_q_over_grad_v_at_init"],
      f"{sdpa.fmt(r['final_loss'])} ({sdpa.fmt(r['final_loss_min'])}–"
      f"{sdpa.fmt(r['final_loss_max'])})", reached(r["slowest_steps_to_target"]),
      r["final_accuracy"]) for r in training],
    caption=f"Means over {len(experiment.seeds)} seeds; chance is ln 32 ≈ {math.log(32):.2f}.",
)))

# %% [markdown]
# ## What the three experiments show
#
# The next cell writes the findings from the numbers above; it states nothing the run did
# not measure.

# %%


def listed(values):
    """'8, 32 and 128'."""
    values = [str(v) for v in values]
    return ", ".join(values[:-1]) + " and " + values[-1] if len(values) > 1 else "".join(values)


def span(rows, key):
    """'between 0.123 and 0.456': the range of one measured quantity over the head dimensions."""
    values = [r[key] for r in rows]
    return f"between {sdpa.fmt(min(values))} and {sdpa.fmt(max(values))}"


def ends(rows, key):
    """'0.5 at d_k = 8 and 0.9 at 512': the narrowest and the widest head."""
    first, last = rows[0], rows[-1]
    return (f"{sdpa.fmt(first[key])} at d_k = {first['d_k']} and "
            f"{sdpa.fmt(last[key])} at {last['d_k']}")


def findings():
    """The notebook's findings, as sentences built from its own numbers."""
    unscaled = [r for r in saturation if r["logits"] == "q·k"]
    scaled = [r for r in saturation if r["logits"] != "q·k"]
    above = [u["d_k"] for u, c in zip(unscaled, scaled) if u["spectral_norm"] > c["spectral_norm"]]
    below = [u["d_k"] for u in unscaled if u["d_k"] not in above]
    norm = " and ".join(part for part in (
        above and f"above the scaled rows' at d_k = {listed(above)}",
        below and f"not above it at d_k = {listed(below)}") if part)
    lines = [
        f"- **Variance.** The std of q·k is {ends(variance, 'std')}. Divided by √d_k, it lies "
        f"{span(variance, 'std_scaled')} at d_k = {listed(HEAD_DIMS)}.",
        f"- **Saturation.** Unscaled, the mean largest weight is {ends(unscaled, 'max_weight')}. "
        f"Scaled, it lies {span(scaled, 'max_weight')}.",
        f"- **The Jacobian.** The unscaled rows' mean spectral norm is {norm}. Their mean trace is "
        f"{ends(unscaled, 'trace')}; the scaled rows' lies {span(scaled, 'trace')}.",
    ]
    for r in training:
        steps = r["slowest_steps_to_target"]
        seeds = len(experiment.seeds)
        reached_by = (f"Every seed was below {TARGET} by step {steps:.0f}." if math.isfinite(steps)
                      else f"Seeds below {TARGET} within {experiment.steps} steps: "
                      f"{r['seeds_to_target']} of {seeds}.")
        lines.append(
            f"- **Training, {r['arm']}.** After {experiment.steps} steps the mean loss is "
            f"{sdpa.fmt(r['final_loss'])} (seeds: {sdpa.fmt(r['final_loss_min'])} to "
            f"{sdpa.fmt(r['final_loss_max'])}; chance {math.log(32):.2f}). {reached_by} At step 0, "
            f"‖∇W_Q‖ / ‖∇W_V‖ is {sdpa.fmt(r['grad_q_over_grad_v_at_init'])}.")
    return "\n".join(lines)


display(Markdown(findings()))

# %% [markdown]
# This is one budget of 120 steps, one learning rate and one initialisation, with five seeds:
# it measures speed within that budget, not what a longer or re-tuned run would reach. The
# site's verdicts, and the evidence behind them, are on its pages:
# [saturation at initialisation](../failure-modes/#saturation-at-initialisation),
# [the softmax Jacobian](../failure-modes/#the-softmax-jacobian),
# [the symptoms, checked](../failure-modes/#the-symptoms-checked),
# [the training ablation](../failure-modes/#the-training-ablation) and
# [what the factor buys](../tuning/#what-the-factor-buys).
#
# The key numbers, collected for the test suite (which executes this notebook):

# %%
summary = {
    "std_over_sqrt_d_k": [round(r["std"] / r["sqrt_d_k"], 4) for r in variance],
    "std_scaled": [round(r["std_scaled"], 4) for r in variance],
    "max_weight_unscaled": [round(r["max_weight"], 4) for r in saturation if r["logits"] == "q·k"],
    "max_weight_scaled": [round(r["max_weight"], 4) for r in saturation if r["logits"] != "q·k"],
    "spectral_unscaled": [round(r["spectral_norm"], 6) for r in saturation if r["logits"] == "q·k"],
    "spectral_scaled": [round(r["spectral_norm"], 6) for r in saturation if r["logits"] != "q·k"],
    "trace_unscaled": [round(r["trace"], 6) for r in saturation if r["logits"] == "q·k"],
    "trace_scaled": [round(r["trace"], 6) for r in saturation if r["logits"] != "q·k"],
    # (steps never reached, inf, are written None)
    "training": {r["arm"]: {k: round(v, 4) if math.isfinite(v) else None
                            for k, v in r.items() if k != "arm"} for r in training},
}
summary
