"""The page's verdict, per starting spread, written from the confirmed numbers so that it
says what they show.

At each starting spread the model without the factor and the 1/sqrt(d_k) model start
from the same weights; the plane's rows give the pairs (each row at its best W_Q/W_K rate),
other models' named spreads add pairs at the default rate. Each pair is compared on the
fresh seeds, seed by seed, with a 95% t interval; an interval that holds zero is a tie. A
quick build prints its numbers and says that it decides nothing.
"""

import sdpa
from sdpa.language import language_study, logit_spread, run_language, spread_settings
from sdpa.stats import paired

STUDY = language_study()


def verdict(study):
    out = run_language(study)
    here = logit_spread(study.model.d_model, study.model.d_head, study.model.init_std)
    pairs = [(here * study.multiplier(i) ** 2, f"row {i}", f"row {k}", "its best W_Q/W_K rate")
             for i, k in zip(study.u_steps, study.u_steps[1:])]
    pairs += [(logit_spread(d_model, d_head, study.model.init_std), *spread_settings(name),
               f"{name}'s spread, the default rate")
              for name, d_model, d_head in study.spreads]
    rows = []
    for spread, none, scaled, how in sorted(pairs):
        d = paired(out.final(none), out.final(scaled))
        word = "ties" if not d.excludes_zero else ("ends higher" if d.mean > 0 else "ends lower")
        rows.append({"spread": spread, "how": how, "difference": d, "word": word})
    return {"profile": sdpa.runtime.profile(), "rows": rows, "steps": study.steps,
            "seeds": len(study.confirm_seeds),
            "tokens": study.steps * study.batch * study.model.context}


result = verdict(STUDY)
lines = [f"starting spread {r['spread']:.2g} ({r['how']}): without the factor it {r['word']} "
         f"({r['difference']} nats)" for r in result["rows"]]
text = (f"**At the end of the budget** ({result['steps']} steps, held-out loss, "
        f"{result['seeds']} fresh seeds, paired with the 1/√d_k model from the same "
        "weights, 95% t intervals): " + "; ".join(lines) + ".")
if result["profile"] == "quick":
    print('!!! note "Quick build: the numbers, not the verdict"\n'
          "    This build ran the quick profile, far too small to decide anything (one seed "
          f"chooses, two confirm, after {result['tokens']:,} characters of training). What its "
          "numbers show, in the words the full build uses:\n\n    " + text + "\n")
else:
    print('!!! success "Verdict (full profile)"\n    ' + text + "\n")
