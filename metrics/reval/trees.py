"""Dependency trees from spaCy, and level-by-level batching of many trees.

A child-sum Tree-LSTM (Tai et al. 2015, §3.1) computes a node from its children, so the nodes of
one *height* (leaves are height 0, a parent is one above its tallest child) depend only on lower
heights. :class:`TreeBatch` orders the nodes of a whole batch of trees by height, so that the model
runs one LSTM-cell call per height for the entire batch instead of one call per node.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import torch


@dataclass(frozen=True)
class DepTree:
    """A tokenised sentence and its dependency tree.

    Attributes:
      tokens: lowercased tokens, in sentence order.
      heads: for each token the index of its head, -1 for the root. Exactly one root.
    """

    tokens: tuple[str, ...]
    heads: tuple[int, ...]

    def __post_init__(self):
        if len(self.tokens) != len(self.heads):
            raise ValueError("a tree needs one head per token")
        if not self.tokens:
            raise ValueError("a tree needs at least one token")
        if sum(1 for h in self.heads if h < 0) != 1:
            raise ValueError(f"a tree needs exactly one root, got heads {self.heads}")

    @property
    def root(self) -> int:
        return self.heads.index(-1)

    def children(self) -> list[list[int]]:
        """For each token the indices of its dependents, in sentence order."""
        kids: list[list[int]] = [[] for _ in self.tokens]
        for child, head in enumerate(self.heads):
            if head >= 0:
                kids[head].append(child)
        return kids

    def heights(self) -> list[int]:
        """Height of each node: 0 for a leaf, else 1 + the largest height among its children."""
        kids = self.children()
        height = [0] * len(self.tokens)
        order = []  # nodes from the root down; reversed, every child comes before its parent
        stack = [self.root]
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(kids[node])
        if len(order) != len(self.tokens):
            raise ValueError(f"heads {self.heads} do not form one tree")
        for node in reversed(order):
            if kids[node]:
                height[node] = 1 + max(height[k] for k in kids[node])
        return height

    def to_json(self) -> list:
        return [list(self.tokens), list(self.heads)]

    @classmethod
    def from_json(cls, data: list) -> "DepTree":
        return cls(tuple(data[0]), tuple(int(h) for h in data[1]))


def tree_from_doc(doc) -> DepTree:
    """The dependency tree of a spaCy Doc, whitespace tokens dropped.

    spaCy occasionally splits a short caption into two sentences (two roots); the later roots are then
    attached to the first one, so every sentence has one root whose state represents it (Tai et al. §4.2
    use the root's hidden state).
    """
    kept = [t for t in doc if not t.is_space]
    if not kept:
        raise ValueError(f"nothing to parse in {doc.text!r}")
    position = {t.i: k for k, t in enumerate(kept)}
    heads = []
    for t in kept:
        heads.append(-1 if t.head.i == t.i or t.head.i not in position else position[t.head.i])
    roots = [k for k, h in enumerate(heads) if h < 0]
    for extra in roots[1:]:
        heads[extra] = roots[0]
    return DepTree(tuple(t.text.lower() for t in kept), tuple(heads))


def parse_trees(sentences: Sequence[str], nlp=None, batch_size: int = 256) -> list[DepTree]:
    """Dependency trees of the sentences, from the project's spaCy parser (``muttlab.resources.spacy_nlp``)."""
    if nlp is None:
        from muttlab.resources.spacy_nlp import load_parser
        nlp = load_parser()
    return [tree_from_doc(doc) for doc in nlp.pipe(list(sentences), batch_size=batch_size)]


def tokenize(sentences: Sequence[str], nlp=None) -> list[tuple[str, ...]]:
    """Lowercased spaCy tokens (the tokenizer only, no parse): the sequential LSTM's input."""
    if nlp is None:
        from muttlab.resources.spacy_nlp import load_parser
        nlp = load_parser()
    return [tuple(t.text.lower() for t in nlp.tokenizer(s) if not t.is_space) for s in sentences]


def save_trees(path: Path, trees: dict[str, DepTree]) -> None:
    """Write sentence -> tree as JSON (atomically: a half-written cache is never read)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps({s: t.to_json() for s, t in trees.items()}), encoding="utf-8")
    tmp.replace(path)


def load_trees(path: Path) -> dict[str, DepTree]:
    return {s: DepTree.from_json(v) for s, v in json.loads(path.read_text(encoding="utf-8")).items()}


@dataclass(frozen=True)
class Level:
    """The nodes of one height, across the whole batch.

    Attributes:
      start, stop: the level's nodes are positions ``start:stop`` of the batch's node order.
      child_index: batch positions of all children of this level's nodes (all in lower levels).
      child_parent: for each entry of ``child_index``, its parent's offset within the level (0-based).
    """

    start: int
    stop: int
    child_index: torch.Tensor
    child_parent: torch.Tensor

    @property
    def size(self) -> int:
        return self.stop - self.start


@dataclass(frozen=True)
class TreeBatch:
    """Many trees flattened into one node order sorted by height.

    Attributes:
      order: for each batch position, (tree number, token index) of the node there.
      levels: one :class:`Level` per height, lowest first.
      roots: batch position of each tree's root, in tree order.
    """

    order: tuple[tuple[int, int], ...]
    levels: tuple[Level, ...]
    roots: torch.Tensor

    @classmethod
    def build(cls, trees: Sequence[DepTree]) -> "TreeBatch":
        nodes = []  # (height, tree, token)
        kids = []
        for t, tree in enumerate(trees):
            kids.append(tree.children())
            nodes.extend((h, t, k) for k, h in enumerate(tree.heights()))
        nodes.sort()
        position = {(t, k): p for p, (_, t, k) in enumerate(nodes)}
        levels = []
        p = 0
        while p < len(nodes):
            height = nodes[p][0]
            q = p
            while q < len(nodes) and nodes[q][0] == height:
                q += 1
            child_index, child_parent = [], []
            if height > 0:
                for offset in range(q - p):
                    _, t, k = nodes[p + offset]
                    for child in kids[t][k]:
                        child_index.append(position[(t, child)])
                        child_parent.append(offset)
            levels.append(Level(p, q, torch.tensor(child_index, dtype=torch.long),
                                torch.tensor(child_parent, dtype=torch.long)))
            p = q
        roots = torch.tensor([position[(t, tree.root)] for t, tree in enumerate(trees)], dtype=torch.long)
        return cls(tuple((t, k) for _, t, k in nodes), tuple(levels), roots)

    def gather_inputs(self, inputs: Sequence[torch.Tensor]) -> torch.Tensor:
        """Stack per-tree token inputs (one ``(n_tokens, dim)`` tensor per tree) in the batch's node order."""
        flat = torch.cat(list(inputs))
        offsets = [0]
        for x in inputs:
            offsets.append(offsets[-1] + x.shape[0])
        index = torch.tensor([offsets[t] + k for t, k in self.order], dtype=torch.long)
        return flat.index_select(0, index)


def unique(sentences: Iterable[str]) -> list[str]:
    """The distinct sentences in first-seen order."""
    return list(dict.fromkeys(sentences))
