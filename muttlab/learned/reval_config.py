"""Training settings of ReVal, kept apart from the training code so that reading them needs no torch."""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation settings (Tai et al. 2015, §5.2). ``epochs`` is the maximum; the best dev epoch is kept."""

    epochs: int = 20
    batch_size: int = 25
    learning_rate: float = 0.05
    weight_decay: float = 1e-4
    seed: int = 13

    def to_dict(self) -> dict:
        return asdict(self)
