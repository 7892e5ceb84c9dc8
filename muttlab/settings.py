"""The one place MUTT Lab reads its configuration.

No other module reads the environment: the CLI, the dashboard and the tests build a
:class:`Settings` (usually through :func:`load_settings`) and pass it down.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

DEFAULT_REF_COUNTS = (5, 10, 20)
# MUTT (Boag et al. 2016, §3): a meaning-preserving trial passes when |s_orig - s_corr| / s_orig <= 0.15.
DEFAULT_TOLERANCE = 0.15
DEFAULT_SEED = 13
DEFAULT_CACHE_DIR = Path.home() / ".cache" / "muttlab"


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class Settings:
    """Everything that changes what MUTT Lab reads, writes or computes.

    ``data_dir`` is None when no real data is configured; the app then runs on the bundled sample.
    """

    data_dir: Path | None = None
    cache_dir: Path = DEFAULT_CACHE_DIR
    use_cache: bool = True
    database_url: str | None = None
    read_only: bool = False
    annotator_token: str | None = None
    ref_counts: tuple[int, ...] = DEFAULT_REF_COUNTS
    tolerance: float = DEFAULT_TOLERANCE
    seed: int = DEFAULT_SEED
    workers: int = field(default_factory=lambda: max(1, min(2, os.cpu_count() or 1)))
    metric_paths: tuple[str, ...] = ()
    # A Dask scheduler address (tcp://host:8786): runs are scored on that cluster; None scores here.
    scheduler: str | None = None

    @property
    def using_sample(self) -> bool:
        return self.data_dir is None

    @property
    def store_url(self) -> str:
        """SQLAlchemy URL of the pair store: the configured one, else SQLite in the cache dir."""
        return self.database_url or f"sqlite:///{self.cache_dir / 'pairs.sqlite'}"

    def with_overrides(self, **changes) -> "Settings":
        """A copy with the given fields replaced; None values leave a field as it is."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def load_settings(environ: dict[str, str] | None = None, **overrides) -> Settings:
    """Settings from the environment (``MUTTLAB_*`` variables), then explicit overrides.

    Variables: MUTTLAB_DATA_DIR, MUTTLAB_CACHE_DIR, MUTTLAB_NO_CACHE, MUTTLAB_DATABASE_URL,
    MUTTLAB_READ_ONLY, MUTTLAB_ANNOTATOR_TOKEN, MUTTLAB_WORKERS, MUTTLAB_METRICS (comma-separated
    import paths of outside metrics, ``package.module:callable``), MUTTLAB_SCHEDULER (a Dask scheduler
    address that runs are sent to).
    """
    env = os.environ if environ is None else environ
    data_dir = env.get("MUTTLAB_DATA_DIR")
    workers = env.get("MUTTLAB_WORKERS")
    settings = Settings(
        data_dir=Path(data_dir).expanduser() if data_dir else None,
        cache_dir=Path(env["MUTTLAB_CACHE_DIR"]).expanduser() if env.get("MUTTLAB_CACHE_DIR") else DEFAULT_CACHE_DIR,
        use_cache=not _flag(env.get("MUTTLAB_NO_CACHE")),
        database_url=env.get("MUTTLAB_DATABASE_URL") or None,
        read_only=_flag(env.get("MUTTLAB_READ_ONLY")),
        annotator_token=env.get("MUTTLAB_ANNOTATOR_TOKEN") or None,
        metric_paths=tuple(p.strip() for p in env.get("MUTTLAB_METRICS", "").split(",") if p.strip()),
        scheduler=env.get("MUTTLAB_SCHEDULER", "").strip() or None,
    )
    if workers:
        settings = replace(settings, workers=max(1, int(workers)))
    return settings.with_overrides(**overrides)
