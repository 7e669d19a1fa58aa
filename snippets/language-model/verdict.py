"""The page's verdict, per starting spread, written from the confirmed numbers so that it
says what they show.

At each row's starting spread the model without the factor (row u) and the 1/sqrt(d_k)
model from the same weights (row u + 1) are compared on the fresh seeds, each at its best
W_Q/W_K rate, seed by seed (``sdpa.language.spread_pairs``). The intervals are t intervals
at a level corrected for the number of spreads compared (Bonferroni), so that all of them
hold together at 95%; where an interval holds zero the two models are not told apart. The
comparison turns only between two spreads whose intervals exclude zero on opposite sides
(``sdpa.language.turns``). A quick build prints its numbers and says that it decides
nothing. The full build's words are its intervals' alone: its study is not swept over seed
blocks, so no claim stated before the runs is printed (issue 36, item 2).
"""

import sdpa
from sdpa.language import NAMED_MODELS, corrected_confidence, language_study, logit_spread
from sdpa.language import run_language, spread_pairs, turns

STUDY = language_study()


def verdict(study):
    out = run_language(study)

    rows = [{"u": p.u, "spread": p.spread, "w": (out.row_best[p.u][1], out.row_best[p.u + 1][1]),
             "edge": [u for u in (p.u, p.u + 1) if out.on_edge(u)],
             "without": out.final(p.without).mean().item(),
             "scaled": out.final(p.scaled).mean().item(),
             "difference": p.difference, "word": p.word} for p in spread_pairs(out)]
    rows.sort(key=lambda row: row["spread"])
    return {"profile": sdpa.runtime.profile(), "rows": rows,
            "turns": [(a["spread"], b["spread"], a["word"], b["word"]) for a, b in turns(rows)],
            "level": corrected_confidence(study), "family": study.confidence,
            "steps": study.steps, "seeds": len(study.confirm_seeds),
            "tokens": study.steps * study.batch * study.model.context,
            "named": [(name, logit_spread(d_model, d_head, study.model.init_std))
                      for name, d_model, d_head in NAMED_MODELS]}


result = verdict(STUDY)
r = result


def percent(level):
    return f"{100 * level:.4g}%"


print(sdpa.markdown_table(
    ["starting spread", "rows (u; best w of each)", "no factor", "1/√d_k, same weights",
     "difference (nats)", "without the factor it"],
    [(f"{row['spread']:.3g}", f"{row['u']} and {row['u'] + 1}; w = "
      + ", ".join(f"{w}" + (" (edge)" if u in row["edge"] else "")
                  for u, w in zip((row["u"], row["u"] + 1), row["w"])),
      f"{row['without']:.3f}", f"{row['scaled']:.3f}", str(row["difference"]), row["word"])
     for row in r["rows"]],
    align="rlrrrl",
    caption=f"Final held-out loss (mean over {r['seeds']} fresh seeds) of the model without the "
    "factor (row u) and of the 1/√d_k model from the same weights (row u + 1), each at its "
    "best W_Q/W_K rate and the shared rate; (edge): that best w is an end of its row's "
    "window. Difference: without minus with, paired by seed, "
    f"with a {percent(r['level'])} t interval"
    + (f", so that the {len(r['rows'])} intervals hold together at {percent(r['family'])} "
       "(Bonferroni)." if len(r["rows"]) > 1 else "."),
))

words = "; ".join(f"{row['word']} at a spread of {row['spread']:.3g}" + (
    f" (row{'s' * (len(row['edge']) > 1)} {' and '.join(map(str, row['edge']))}: best w at the "
    "window's edge)" if row["edge"] else "") for row in r["rows"])
if not r["turns"]:
    turn = ("No two spreads' intervals exclude zero on opposite sides, so the comparison does "
            "not turn." if len(r["rows"]) > 1
            else "This build compared one spread, so nothing can turn.")
else:
    turn = "The comparison turns " + "; and ".join(
        f"between a spread of {a:.3g} (it {x}) and {b:.3g} (it {y})"
        for a, b, x, y in r["turns"]) + "."
named = " and ".join(f"{name}'s heads at {spread:.3g}" for name, spread in r["named"])
text = (f"**At the end of the budget** ({r['steps']} steps, held-out loss, {r['seeds']} fresh "
        f"seeds, {percent(r['level'])} intervals): without the factor the model {words}. {turn} "
        f"For scale, GPT-2's initialisation starts {named}.")
if r["profile"] == "quick":
    print('!!! note "Quick build: the numbers, not the verdict"\n'
          "    This build ran the quick profile, far too small to decide anything (one seed "
          f"chooses, two confirm, after {r['tokens']:,} characters of training). What its "
          "numbers show, in the words the full build uses:\n\n    " + text + "\n")
else:
    print('!!! success "What the full build measured"\n    ' + text + "\n")
