"""The quick profile's claims sweep on record is a sweep of this code, and what it certifies.

``bench/records/claims-sweeps.json`` (``scripts/claims_sweep.py --record``) holds, per profile,
the blocks the claims were certified on, what their words were settled on, the counts, and the
digest of every file a claim's statistic or threshold depends on (``claims.claim_sources``).
A margin on record is a margin of the code that made it: when a snippet, the library, a claim
test or ``tests/claims.py`` has changed since, this fails, naming the files; sweep again.
"""

from __future__ import annotations

import json
import re

from claims import claim_sources

from harness import REPO

RECORD = REPO / "bench" / "records" / "claims-sweeps.json"


def test_the_quick_claims_on_record_were_certified_on_this_code():
    record = json.loads(RECORD.read_text())["quick"]
    current = claim_sources()
    changed = sorted(path for path in set(current) | set(record["sources"])
                     if current.get(path) != record["sources"].get(path))
    assert not changed, (f"{len(changed)} files the claims depend on changed since their sweep of "
                         f"{record['date']}: {changed[:8]}; sweep again: python scripts/claims_sweep.py "
                         "--blocks B-E --jobs 2 --record --settled-on '...' (blocks no earlier sweep shaped)")


def test_the_certifying_sweep_is_what_the_claim_contract_asks():
    """At least ten independent blocks, none of them among those the words were settled on (nor
    block 0, the offsets 0-19 that shaped the first words); no claim failed on any, and none
    has a margin under three standard deviations over the blocks."""
    record = json.loads(RECORD.read_text())["quick"]
    blocks = set(record["blocks"])
    assert len(blocks) >= 10 and 0 not in blocks
    settled = set()
    for first, last in re.findall(r"blocks? (\d+)(?:[–-](\d+))?", record["settled_on"]):
        settled |= set(range(int(first), int(last or first) + 1))
    assert not blocks & settled, sorted(blocks & settled)
    assert record["failed"] == record["crashed"] == record["under"] == 0, record
    assert record["min_margin"] >= 3
