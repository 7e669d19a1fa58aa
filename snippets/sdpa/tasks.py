"""The data the site's experiments learn from, drawn from seeded CPU generators.

* Associative recall (:func:`recall_batches`): ``n_pairs`` (key, value) pairs with
  distinct keys, then a query key drawn from those pairs; the target is the value paired
  with it. Tokens are fixed random embeddings with unit-variance components: a pair
  token is ``(E_key[k] + E_val[v]) / sqrt(2)``, the query token is ``E_key[k]``. Solving
  the task needs attention on the pair whose key matches the query.
* Copy (:func:`copy_batch`): a run of random tokens followed by the same run again; the
  second half is predictable only by attending back to the right position.
* Text (:func:`text_corpus`, :func:`text_batch`): real English prose that every Python
  has offline, the help topics of CPython's ``pydoc_data.topics`` (the text ``help()``
  shows for keywords and statements), read character by character.
* Planted scores (:func:`planted_scores`): rows of attention scores in which one key
  leans towards its query, the simplest model of a head that has something to find.
"""

from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from sdpa.runtime import generator


@dataclass(frozen=True)
class RecallTask:
    """The shape of the associative-recall task."""

    n_keys: int = 32  # key vocabulary
    n_values: int = 32  # value vocabulary: the classes
    n_pairs: int = 16  # pairs per sequence: the row length of the attention
    batch: int = 64  # sequences per batch
    d_model: int = 64  # embedding width


@dataclass(frozen=True)
class RecallBatches:
    """Consecutive batches of the recall task for one seed (token ids and embeddings)."""

    keys: torch.Tensor  # (batches, batch, n_pairs) distinct key ids per sequence
    values: torch.Tensor  # (batches, batch, n_pairs) value ids
    query: torch.Tensor  # (batches, batch) the queried key's id
    target: torch.Tensor  # (batches, batch) the value id paired with it
    key_embedding: torch.Tensor  # (n_keys, d_model), N(0, 1) entries
    value_embedding: torch.Tensor  # (n_values, d_model)

    def tokens(self, t: int | slice = slice(None)) -> tuple[torch.Tensor, torch.Tensor]:
        """Batch ``t`` (default: all) embedded: the query tokens (batch, d_model) and the
        pair tokens (batch, n_pairs, d_model), with a leading batches axis for a slice."""
        # F.embedding gathers rows as indexing would (the same numbers), several times faster
        pairs = (F.embedding(self.keys[t], self.key_embedding)
                 + F.embedding(self.values[t], self.value_embedding))
        return F.embedding(self.query[t], self.key_embedding), pairs.div_(math.sqrt(2))

    def to(self, device: torch.device | str) -> "RecallBatches":
        return RecallBatches(*(getattr(self, f).to(device) for f in self.__dataclass_fields__))


def recall_batches(task: RecallTask, seed: int, n_batches: int) -> RecallBatches:
    """``n_batches`` batches of ``task`` for ``seed``; the embeddings depend on the seed only."""
    g = generator(10_000 + seed)
    shape = (n_batches, task.batch)
    keys = torch.rand(*shape, task.n_keys, generator=g).argsort(-1)[..., : task.n_pairs]
    values = torch.randint(task.n_values, (*shape, task.n_pairs), generator=g)
    where = torch.randint(task.n_pairs, shape, generator=g)[..., None]
    e = generator(20_000 + seed)
    return RecallBatches(
        keys=keys,
        values=values,
        query=keys.gather(-1, where)[..., 0],
        target=values.gather(-1, where)[..., 0],
        key_embedding=torch.randn(task.n_keys, task.d_model, generator=e),
        value_embedding=torch.randn(task.n_values, task.d_model, generator=e),
    )


def copy_batch(
    n: int, vocab: int, context: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` sequences of ``context`` tokens: ``context/2`` random tokens, then the same again.

    Returns inputs and next-token targets; targets in the first half (unpredictable) are
    -1, which the loss ignores.
    """
    half = context // 2
    first = torch.randint(0, vocab, (n, half), generator=generator)
    tokens = torch.cat([first, first, first[:, :1]], dim=1)  # one extra for the last target
    inputs, targets = tokens[:, :-1].clone(), tokens[:, 1:].clone()
    targets[:, : half - 1] = -1
    return inputs, targets


@dataclass(frozen=True)
class TextCorpus:
    """A text as character ids, split into a training and a held-out (validation) part."""

    chars: str  # the alphabet, sorted: a character's id is its index here
    train: torch.Tensor  # (characters,) int64 ids
    valid: torch.Tensor
    sha256: str  # of the whole text, UTF-8: what a builder checks to know it has the same text

    @property
    def vocab(self) -> int:
        return len(self.chars)


@functools.cache
def text_corpus(held_out: float = 0.1) -> TextCorpus:
    """CPython's help topics (``pydoc_data.topics.topics``, every topic in the order of
    its name), the last ``held_out`` of the characters kept for validation."""
    from pydoc_data.topics import topics

    text = "".join(topics[name] for name in sorted(topics))
    chars = "".join(sorted(set(text)))
    lookup = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([lookup[c] for c in text], dtype=torch.int64)
    cut = round(len(data) * (1 - held_out))
    return TextCorpus(chars=chars, train=data[:cut], valid=data[cut:],
                      sha256=hashlib.sha256(text.encode()).hexdigest())


def text_batch(data: torch.Tensor, n: int, context: int,
               generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` windows of ``context`` characters at random places of ``data``: inputs and
    next-character targets."""
    starts = torch.randint(0, len(data) - context, (n,), generator=generator)
    windows = data[starts[:, None] + torch.arange(context + 1)]
    return windows[:, :-1], windows[:, 1:]


def planted_scores(
    n_queries: int, n_keys: int, d_k: int, rho: float, generator: torch.Generator
) -> torch.Tensor:
    """Unscaled scores q.k of shape (n_queries, n_keys); column 0 is the matching key.

    Query and key components are standard normal; the matching key is
    ``k = rho q + sqrt(1 - rho^2) e`` with ``e`` independent noise, so its score has mean
    ``rho d_k``, while every other score has mean 0 and variance ``d_k``. The keys are not
    drawn one by one: given ``q``, the score ``q . e`` of an independent standard-normal
    vector is exactly N(0, |q|^2), so drawing it directly gives the same distribution for
    a fraction of the cost (rows of 16,384 keys stay cheap).
    """
    q = torch.randn(n_queries, d_k, generator=generator)
    norm = q.norm(dim=-1, keepdim=True)
    z = norm * torch.randn(n_queries, n_keys, generator=generator)
    z[:, 0] = rho * norm[:, 0] ** 2 + math.sqrt(1.0 - rho**2) * z[:, 0]
    return z
