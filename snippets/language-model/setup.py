"""The text, the model and the budget of the language-model study, as this build ran it.

The text is CPython's help topics (``pydoc_data.topics``), read character by character;
its SHA-256 says whether another Python holds the same text. Sizes come from the study of
the current profile (``sdpa.language.SIZES``).
"""

import sdpa
from sdpa.language import language_study
from sdpa.tasks import text_corpus


def setup():
    corpus, study = text_corpus(), language_study()
    m = study.model
    return {
        "profile": sdpa.runtime.profile(), "characters": len(corpus.train) + len(corpus.valid),
        "train": len(corpus.train), "valid": len(corpus.valid), "vocab": corpus.vocab,
        "sha256": corpus.sha256, "layers": m.n_layers, "heads": m.n_heads, "d_head": m.d_head,
        "d_model": m.d_model, "mlp_ratio": m.mlp_ratio, "context": m.context,
        "batch": study.batch, "steps": study.steps,
        "lrs": study.lrs, "rate_reach": tuple(10**e for e in study.rate_reach),
        "u_steps": study.u_steps, "w_offsets": study.w_offsets, "w_reach": study.w_reach,
        "choose_seeds": study.choose_seeds, "confirm_seeds": study.confirm_seeds,
        "tokens": study.steps * study.batch * m.context,
        "spreads": {u: study.spread(u) for u in study.u_steps},
    }


result = setup()
r = result


def rate(value):
    return f"{value:.2g}"


def rates(values):
    return ", ".join(map(rate, values))


def offset(k):
    return "u" if k == 0 else f"u {'+' if k > 0 else '−'} {abs(k)}"


print(sdpa.markdown_table(
    ["setting", "this build"],
    [("profile", r["profile"]),
     ("text", f"{r['characters']:,} characters, {r['vocab']} distinct; "
              f"SHA-256 <code>{r['sha256'][:16]}…</code>"),
     ("split", f"first {r['train']:,} characters for training, last {r['valid']:,} held out"),
     ("model", f"{r['layers']} layers, {r['heads']} heads of d_k = {r['d_head']}, "
               f"d_model = {r['d_model']}, MLP {r['mlp_ratio']} × d_model wide, "
               f"context {r['context']}"),
     ("budget", f"{r['steps']} steps of {r['batch']} sequences ({r['tokens']:,} characters, "
                f"{r['tokens'] / r['train']:.2f} passes over the text)"),
     ("shared rates (stage 1)", f"first {rates(r['lrs'])}; widened by half a decade while "
                                "the best is at an edge, between "
                                + " and ".join(map(rate, r["rate_reach"]))),
     ("the plane (stage 2)", f"rows u in {{{', '.join(map(str, r['u_steps']))}}}: W_Q, W_K "
                             "start d_k^(−u/4) × GPT-2's draw; each row at w = "
                             f"{', '.join(map(offset, r['w_offsets']))} first (they "
                             "learn at d_k^(−w/4) × the shared rate), widened by one step "
                             f"while the row's best is at an edge, within u ± {r['w_reach']}"),
     ("starting spreads", "std of the unscaled logits at initialisation: "
                          + ", ".join(f"{v:.3g} (u = {u})" for u, v in r["spreads"].items())
                          + "; row 0 is GPT-2's initialisation at this width"),
     ("seeds", f"choose the setting: {', '.join(map(str, r['choose_seeds']))}; "
               f"report it: {', '.join(map(str, r['confirm_seeds']))}")],
    align="ll",
    caption="The language-model study as this build ran it. Adam (β₁, β₂ = 0.9, 0.95), no weight "
    "decay, the rate decaying to zero on a cosine, GPT-2 initialisation (std 0.02).",
))
