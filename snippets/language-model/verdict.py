"""The page's verdict, written from the table's numbers so that it says what they show.

Each rule is compared with 1/sqrt(d_head) on the confirmation seeds, paired by seed: a
difference within two standard errors is a tie. The verdict is about what the budget
shows: the held-out loss early (speed) and at the end of the budget; neither is the loss
of a model trained to its plateau. A quick build says so and defers to the full build.
"""

import sdpa
from sdpa.language import language_study, mean_se, run_language, verdicts


def compare(diff):
    mean, se = diff
    if abs(mean) <= 2 * se:
        return "ties", mean, se
    return ("is worse than" if mean > 0 else "beats"), mean, se


def verdict(study=None):
    study = study or language_study()
    tuned = run_language(study)
    v = verdicts(study, tuned)
    e = study.sweep().eval_steps.index(study.early)
    base = tuned["inv_sqrt"]
    out = {}
    for name, r in tuned.items():
        if name == "inv_sqrt":
            continue
        out[name] = {"label": r.label,
                     "final": compare(v.versus[name]),
                     "early": compare(mean_se(r.held_out[e] - base.held_out[e]))}
    return {"profile": sdpa.runtime.profile(), "early_step": study.early, "steps": study.steps,
            "seeds": len(study.confirm_seeds), "rules": out,
            "tokens": study.steps * study.batch * study.model.context}


result = verdict()


def phrase(label, words):
    verb, mean, se = words
    return f"{label} {verb} 1/√d_head ({mean:+.3f} ± {se:.3f} nats)"


lines = [f"{phrase(r['label'], r['final'])}" for r in result["rules"].values()]
early = [f"{phrase(r['label'], r['early'])}" for r in result["rules"].values()]
text = (f"**At the end of the budget** ({result['steps']} steps, held-out loss, "
        f"{result['seeds']} confirmation seeds, each rule at its own tuned setting): "
        + "; ".join(lines) + f". **Early** (step {result['early_step']}): " + "; ".join(early)
        + ". A difference within two standard errors counts as a tie.")
if result["profile"] == "quick":
    print('!!! note "Quick build: the numbers, not the verdict"\n'
          "    This build ran the quick profile, far too small to decide anything (one seed "
          "chooses each setting, two report it, after "
          f"{result['tokens']:,} characters of training). "
          "What its numbers show, in the words the full build uses:\n\n    " + text + "\n")
else:
    print('!!! success "Verdict (full profile)"\n    ' + text + "\n")
