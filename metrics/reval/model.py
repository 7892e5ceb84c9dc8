"""The ReVal networks: sentence encoders, the similarity head, the target distribution and the loss.

Gupta et al. (EMNLP 2015, §3) follow Tai et al. (ACL 2015, §4.2): encode both sentences (h₁, h₂), form
h× = h₁ ⊙ h₂ and h+ = |h₁ − h₂|, pass them through a sigmoid hidden layer and a softmax over K = 5
relatedness classes; the prediction is ŷ = rᵀp̂ with r = (1, …, K). Training minimises the KL divergence
to a sparse target distribution p over ⌊y⌋ and ⌈y⌉ (Tai et al. §4.2, eq. for p_i).
"""
from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils.rnn import pack_sequence

from muttlab.metrics.reval.trees import DepTree, TreeBatch

MODELS = ("lstm", "treelstm")

# Tai et al. (2015, §4.2) initialise words missing from GloVe uniformly in [-0.05, 0.05].
OOV_RANGE = 0.05


@dataclass(frozen=True)
class ModelConfig:
    """The architecture. Defaults follow Tai et al. (2015, Table 1 and §4.2) for SICK, with 50-d GloVe.

    Attributes:
      model: ``lstm`` (sequential, last hidden state) or ``treelstm`` (child-sum dependency Tree-LSTM,
        the root's hidden state).
      input_dim: word-vector size (GloVe 6B-50d).
      memory: LSTM memory (hidden) size, 150 for both encoders.
      hidden: similarity-layer size, 50.
      classes: K, the number of relatedness classes (SICK scores lie in 1..5).
    """

    model: str = "treelstm"
    input_dim: int = 50
    memory: int = 150
    hidden: int = 50
    classes: int = 5

    def __post_init__(self):
        if self.model not in MODELS:
            raise ValueError(f"unknown ReVal model {self.model!r}; choose one of {', '.join(MODELS)}")

    def to_dict(self) -> dict:
        return asdict(self)


class WordVectors:
    """Frozen input vectors: GloVe where the word is known, else a fixed small random vector.

    The out-of-vocabulary vector is drawn from a generator seeded by the word itself, so it is the same
    in every process and never has to be stored with a checkpoint.
    """

    def __init__(self, keyed_vectors, dim: int):
        self.kv = keyed_vectors
        self.dim = dim
        self._oov: dict[str, np.ndarray] = {}

    def vector(self, word: str) -> np.ndarray:
        index = self.kv.key_to_index.get(word)
        if index is not None:
            return self.kv.vectors[index]
        if word not in self._oov:
            seed = int.from_bytes(hashlib.sha256(word.encode("utf-8")).digest()[:8], "little")
            self._oov[word] = np.random.default_rng(seed).uniform(
                -OOV_RANGE, OOV_RANGE, self.dim).astype(np.float32)
        return self._oov[word]

    def known(self, word: str) -> bool:
        return word in self.kv.key_to_index

    def encode(self, tokens: Sequence[str]) -> torch.Tensor:
        """``(len(tokens), dim)`` float32 tensor."""
        return torch.from_numpy(np.stack([self.vector(w) for w in tokens]).astype(np.float32, copy=False))


class ChildSumTreeLSTM(nn.Module):
    """Child-sum Tree-LSTM (Tai et al. 2015, §3.1, eqs. 2-8), evaluated one tree height at a time.

    For node j with children C(j): h̃ = Σ_k h_k; i, o, u = σ/σ/tanh(W x_j + U h̃ + b);
    f_jk = σ(W_f x_j + U_f h_k + b_f); c_j = i ⊙ u + Σ_k f_jk ⊙ c_k; h_j = o ⊙ tanh(c_j).
    """

    def __init__(self, input_dim: int, memory: int):
        super().__init__()
        self.memory = memory
        self.w_iou = nn.Linear(input_dim, 3 * memory)
        self.u_iou = nn.Linear(memory, 3 * memory, bias=False)
        self.w_f = nn.Linear(input_dim, memory)
        self.u_f = nn.Linear(memory, memory, bias=False)

    def cell(self, wx_iou: torch.Tensor, wx_f: torch.Tensor, child_h: torch.Tensor, child_c: torch.Tensor,
             child_parent: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """One step for ``n`` nodes whose children's states are ``child_h``/``child_c``.

        ``child_parent[k]`` is the node (0..n-1) that child k belongs to; ``wx_iou``/``wx_f`` are the
        nodes' input projections. Returns the nodes' (h, c), each ``(n, memory)``.
        """
        if child_h.shape[0]:
            zeros = wx_f.new_zeros(n, self.memory)
            h_sum = zeros.index_add(0, child_parent, child_h)
            f = torch.sigmoid(wx_f.index_select(0, child_parent) + self.u_f(child_h))
            fc_sum = zeros.index_add(0, child_parent, f * child_c)
            iou = wx_iou + self.u_iou(h_sum)
        else:
            fc_sum = None
            iou = wx_iou
        i, o, u = iou.chunk(3, dim=1)
        c = torch.sigmoid(i) * torch.tanh(u)
        if fc_sum is not None:
            c = c + fc_sum
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, c

    def forward(self, inputs: torch.Tensor, batch: TreeBatch) -> torch.Tensor:
        """Root hidden states ``(n_trees, memory)``; ``inputs`` are word vectors in the batch's node order."""
        wx_iou = self.w_iou(inputs)
        wx_f = self.w_f(inputs)
        hs: list[torch.Tensor] = []
        cs: list[torch.Tensor] = []
        done_h = done_c = inputs.new_zeros(0, self.memory)
        for level in batch.levels:
            if level.child_index.numel():
                # Children sit in lower levels; concatenating once per level keeps autograd simple.
                if done_h.shape[0] < level.start:
                    done_h, done_c = torch.cat(hs), torch.cat(cs)
                child_h = done_h.index_select(0, level.child_index)
                child_c = done_c.index_select(0, level.child_index)
            else:
                child_h = child_c = inputs.new_zeros(0, self.memory)
            h, c = self.cell(wx_iou[level.start:level.stop], wx_f[level.start:level.stop],
                             child_h, child_c, level.child_parent, level.size)
            hs.append(h)
            cs.append(c)
        return torch.cat(hs).index_select(0, batch.roots)


class SequentialLSTM(nn.Module):
    """A one-layer LSTM over the tokens; the sentence is its last hidden state (Tai et al. §4.2)."""

    def __init__(self, input_dim: int, memory: int):
        super().__init__()
        self.lstm = nn.LSTM(input_dim, memory, batch_first=True)

    def forward(self, inputs: Sequence[torch.Tensor]) -> torch.Tensor:
        packed = pack_sequence(list(inputs), enforce_sorted=False)
        _, (h_n, _) = self.lstm(packed)
        return h_n[-1]


class SimilarityHead(nn.Module):
    """h_s = σ(W× (h₁ ⊙ h₂) + W+ |h₁ − h₂| + b); log p̂ = log softmax(W_p h_s + b_p) (Tai et al. §4.2)."""

    def __init__(self, memory: int, hidden: int, classes: int):
        super().__init__()
        self.hidden = nn.Linear(2 * memory, hidden)
        self.out = nn.Linear(hidden, classes)

    def forward(self, h1: torch.Tensor, h2: torch.Tensor) -> torch.Tensor:
        features = torch.cat([h1 * h2, (h1 - h2).abs()], dim=1)
        return F.log_softmax(self.out(torch.sigmoid(self.hidden(features))), dim=1)


class ReValModel(nn.Module):
    """Encoder + similarity head. Inputs are frozen word vectors, so the module holds no embeddings."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        if config.model == "treelstm":
            self.encoder: nn.Module = ChildSumTreeLSTM(config.input_dim, config.memory)
        else:
            self.encoder = SequentialLSTM(config.input_dim, config.memory)
        self.head = SimilarityHead(config.memory, config.hidden, config.classes)
        self.register_buffer("ratings", torch.arange(1, config.classes + 1, dtype=torch.float32),
                             persistent=False)

    def encode(self, trees: Sequence[DepTree], vectors: Sequence[torch.Tensor]) -> torch.Tensor:
        """Sentence encodings ``(n, memory)``: one tree (and its token vectors) per sentence.

        The sequential LSTM reads only the tokens; the Tree-LSTM batches all trees level by level.
        """
        if self.config.model == "treelstm":
            batch = TreeBatch.build(trees)
            return self.encoder(batch.gather_inputs(vectors), batch)
        return self.encoder(vectors)

    def log_probs(self, h1: torch.Tensor, h2: torch.Tensor) -> torch.Tensor:
        return self.head(h1, h2)

    def expected_score(self, log_probs: torch.Tensor) -> torch.Tensor:
        """ŷ = rᵀp̂, in [1, K]."""
        return log_probs.exp() @ self.ratings


class ReValEnsemble(nn.Module):
    """Several ReVal models of one architecture (e.g. one per training seed), scoring as one.

    The ensemble's distribution is the mean of the members' p̂, so its ŷ = rᵀ mean(p̂) is the mean of the
    members' predictions. Every member encodes each sentence; ``encode`` concatenates their encodings and
    ``log_probs`` splits them again, so callers treat an ensemble exactly like a single :class:`ReValModel`.
    """

    def __init__(self, members: Sequence[ReValModel]):
        super().__init__()
        if not members:
            raise ValueError("an ensemble needs at least one model")
        configs = {m.config for m in members}
        if len(configs) != 1:
            raise ValueError(f"ensemble members must share one architecture, got {sorted(map(str, configs))}")
        self.config = members[0].config
        self.members = nn.ModuleList(members)

    def encode(self, trees: Sequence[DepTree], vectors: Sequence[torch.Tensor]) -> torch.Tensor:
        """``(n, members × memory)``: each member's encoding, side by side."""
        if self.config.model == "treelstm":
            # One TreeBatch serves every member: building it is the costly, model-free part.
            batch = TreeBatch.build(trees)
            inputs = batch.gather_inputs(vectors)
            return torch.cat([m.encoder(inputs, batch) for m in self.members], dim=1)
        return torch.cat([m.encoder(vectors) for m in self.members], dim=1)

    def log_probs(self, h1: torch.Tensor, h2: torch.Tensor) -> torch.Tensor:
        """log of the members' mean p̂."""
        parts = [m.log_probs(a, b) for m, a, b in zip(self.members, h1.split(self.config.memory, dim=1),
                                                       h2.split(self.config.memory, dim=1))]
        return torch.logsumexp(torch.stack(parts), dim=0) - float(np.log(len(parts)))

    def expected_score(self, log_probs: torch.Tensor) -> torch.Tensor:
        """ŷ = rᵀ mean(p̂): the members share r, so the first one's rule applies."""
        return self.members[0].expected_score(log_probs)


def target_distribution(scores: torch.Tensor, classes: int = 5) -> torch.Tensor:
    """Sparse target p (Tai et al. §4.2): p_⌊y⌋ = ⌊y⌋ − y + 1, p_⌊y⌋+1 = y − ⌊y⌋, zero elsewhere.

    ``scores`` lie in [1, K]; a whole-number score puts all mass on its class.
    """
    scores = scores.clamp(1.0, float(classes))
    floor = scores.floor()
    frac = scores - floor
    target = torch.zeros(scores.shape[0], classes, dtype=torch.float32)
    lower = (floor.long() - 1).clamp(max=classes - 1)
    upper = floor.long().clamp(max=classes - 1)
    target.scatter_add_(1, lower.unsqueeze(1), (1.0 - frac).unsqueeze(1).float())
    target.scatter_add_(1, upper.unsqueeze(1), frac.unsqueeze(1).float())
    return target


def kl_loss(log_probs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """KL(p ‖ p̂) averaged over every element, as Torch7's ``DistKLDivCriterion`` (used by Tai et al.) does."""
    return F.kl_div(log_probs, target, reduction="sum") / log_probs.numel()


# --------------------------------------------------------------------------- checkpoints

# Format 2 stores a list of member state dicts; format 1 (a single "state_dict") is still read.
CHECKPOINT_FORMAT = 2
READABLE_FORMATS = (1, 2)


def save_checkpoint(model: ReValModel | ReValEnsemble, path, info: dict | None = None) -> None:
    """Write the learned weights and the architecture (``path``, torch format) and, beside it, ``info``
    plus the architecture as JSON (``path`` with suffix ``.json``). An ensemble stores one state dict per
    member. Word vectors are not stored: they are frozen GloVe, rebuilt on load. Writes are atomic, so a
    reader never sees half a checkpoint.
    """
    import json
    from pathlib import Path

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    members = model.members if isinstance(model, ReValEnsemble) else [model]
    payload = {"format": CHECKPOINT_FORMAT, "config": model.config.to_dict(),
               "members": [{k: v.detach().clone() for k, v in m.state_dict().items()} for m in members]}
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(payload, tmp)
    tmp.replace(path)
    meta = {"format": CHECKPOINT_FORMAT, "config": model.config.to_dict(), "members": len(members), **(info or {})}
    meta_path = path.with_suffix(".json")
    tmp = meta_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(meta_path)


def load_checkpoint(path) -> ReValModel | ReValEnsemble:
    """The model saved at ``path`` by :func:`save_checkpoint`, in eval mode: a :class:`ReValModel`, or a
    :class:`ReValEnsemble` when the file holds more than one member.

    Raises:
      ValueError: the file is not a ReVal checkpoint of a known format.
    """
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises several types for a damaged or foreign file
        raise ValueError(f"{path} is not a readable ReVal checkpoint ({exc})") from exc
    if not isinstance(payload, dict) or payload.get("format") not in READABLE_FORMATS:
        raise ValueError(f"{path} is not a ReVal checkpoint of format {' or '.join(map(str, READABLE_FORMATS))}")
    states = payload["members"] if payload["format"] >= 2 else [payload["state_dict"]]
    config = ModelConfig(**payload["config"])
    members = []
    for state in states:
        member = ReValModel(config)
        member.load_state_dict(state)
        members.append(member)
    model = members[0] if len(members) == 1 else ReValEnsemble(members)
    model.eval()
    return model
