"""The one place MUTT Lab reads its configuration.

No other module reads the environment: the CLI, the dashboard and the tests build a
:class:`Settings` (usually through :func:`load_settings`) and pass it down.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from muttlab import checks
from muttlab.errors import InvalidArgument, MuttlabError

DEFAULT_REF_COUNTS = (5, 10, 20)
# The metrics a run shows when none are named: the 2016 paper's families (n-gram, METEOR, edit rate,
# compression). The CLI's `muttlab run` and the dashboard's Run page both start from this list.
DEFAULT_METRICS: tuple[str, ...] = ("BLEU-4", "METEOR-1.5", "CIDEr-D", "ROUGE-L", "TER", "BADGER-like", "TERp")
# MUTT (Boag et al. 2016, §3): a meaning-preserving trial passes when |s_orig - s_corr| / s_orig <= 0.15.
DEFAULT_TOLERANCE = 0.15
# Two scores are tied when |s_orig - s_corr| <= tie_tolerance * max(1, |s_orig|): a difference in the last
# bits of a float is rounding, not a judgement (ACES counts such a tie as a failure of the strict rule).
# 0 is the papers' exact comparison (``exact`` in MUTTLAB_TIE_RULE and --tie-rule).
DEFAULT_TIE_TOLERANCE = 1e-9
EXACT_TIE_RULE = "exact"
# A tie tolerance at or above this would call most real differences ties: a typo, not a rule.
MAX_TIE_TOLERANCE = 0.01
DEFAULT_SEED = 13
DEFAULT_CACHE_DIR = Path.home() / ".cache" / "muttlab"
# A dashboard sign-in lasts this long (seconds); then the session is anonymous again.
DEFAULT_SESSION_TTL = 8 * 3600


def _number(value: float) -> str:
    """Shortest readable form of a setting: 0.15, 1e-9 (not 1e-09)."""
    mantissa, _, exponent = f"{value:g}".partition("e")
    return f"{mantissa}e{int(exponent)}" if exponent else mantissa


def parse_tie_rule(text: str, where: str) -> float:
    """The tie tolerance a tie rule names: ``exact`` (0, the papers' comparison) or a relative tolerance
    such as ``1e-9``. ``where`` names the variable or flag in the error."""
    value = text.strip().lower()
    if value == EXACT_TIE_RULE:
        return 0.0
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not 0.0 <= number < MAX_TIE_TOLERANCE:
        raise MuttlabError(f"{where}={text!r}: give 'exact' (the papers' exact comparison) or a relative "
                           f"tolerance from 0 to below {_number(MAX_TIE_TOLERANCE)}, e.g. 1e-9 (the default)")
    return number


def tie_rule_text(tie_tolerance: float) -> str:
    """A tie tolerance as it is written in signatures and reports: ``exact`` or ``1e-9``."""
    return EXACT_TIE_RULE if tie_tolerance == 0 else _number(tie_tolerance)


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class Limits:
    """Caps on what one request may ask for, so that no input stalls a shared server.

    Unit-test sentences are captions and SICK sentences (at most 38 words in the study's data); a
    5,000-word METEOR pair takes minutes and BADGER's memory grows with the square of the length, so a
    sentence is capped well above real data and far below harm. Each cap has its environment variable
    (``SETTING``); the error that reports a cap names it.
    """

    max_words: int = 200  # words per sentence (candidate or reference)
    max_chars: int = 2000  # characters per sentence
    max_refs: int = 50  # references per candidate (the study uses at most 20)
    max_pairs: int = 100_000  # pairs (lines, trials) per upload or imported file
    max_upload_mb: int = 64  # size of one uploaded or imported file, in MiB
    # A visitor's own suite on the dashboard ("Your sentences"): parsed, corrupted and kept in the server's
    # memory for anyone who asks, so capped far below the command line's file limits.
    max_suite_sentences: int = 200  # sentences in one suite built on the dashboard
    max_suite_kb: int = 512  # size of the file or pasted text it is built from, in KiB
    max_suites: int = 4  # suites one visitor (browser session) keeps on the server at once
    # A read-only server (the public demo), where every visitor is anonymous: what one visitor's computations
    # (a grid, a study, a challenge set's scores) may take of it, and how many run at once for everyone
    # (docs/security.md, "The demo's share per visitor").
    visitor_compute_s: int = 120  # seconds of computing per visitor (client address) in 15 minutes
    anonymous_jobs: int = 1  # such computations running at once on the whole server
    # Memory the dashboard's memos of finished results may hold, and the size of a read-only server's own score
    # cache (never the shared one), in MiB.
    memo_mb: int = 384
    demo_cache_mb: int = 256

    SETTING = {"max_words": "MUTTLAB_MAX_WORDS", "max_chars": "MUTTLAB_MAX_CHARS", "max_refs": "MUTTLAB_MAX_REFS",
               "max_pairs": "MUTTLAB_MAX_PAIRS", "max_upload_mb": "MUTTLAB_MAX_UPLOAD_MB",
               "max_suite_sentences": "MUTTLAB_MAX_SUITE_SENTENCES", "max_suite_kb": "MUTTLAB_MAX_SUITE_KB",
               "max_suites": "MUTTLAB_MAX_SUITES", "visitor_compute_s": "MUTTLAB_VISITOR_COMPUTE_S",
               "anonymous_jobs": "MUTTLAB_ANONYMOUS_JOBS", "memo_mb": "MUTTLAB_MEMO_MB",
               "demo_cache_mb": "MUTTLAB_DEMO_CACHE_MB"}

    @property
    def max_upload_bytes(self) -> int:
        return self.max_upload_mb * 1024 * 1024

    UNIT = {"max_words": "words", "max_chars": "characters", "max_refs": "references", "max_pairs": "pairs",
            "max_upload_mb": "MiB", "max_suite_sentences": "sentences", "max_suite_kb": "KiB", "max_suites": "suites",
            "visitor_compute_s": "seconds", "anonymous_jobs": "computations", "memo_mb": "MiB",
            "demo_cache_mb": "MiB"}

    def exceeded(self, name: str, value: float, what: str) -> str:
        """The message for ``what`` holding ``value`` units over the cap ``name`` (one of SETTING's keys)."""
        shown = f"{value:,.1f}" if isinstance(value, float) else f"{value:,}"
        return (f"{what} has {shown} {self.UNIT[name]}, over the limit of {getattr(self, name):,} "
                f"(shorten the input, or raise {self.SETTING[name]} if this is intended)")

    def check_text(self, text: str, what: str) -> None:
        """Raise a MuttlabError naming the limit when ``text`` is over ``max_chars`` or ``max_words``; the
        characters are counted first, so an oversized text costs nothing to refuse."""
        if len(text) > self.max_chars:
            raise MuttlabError(self.exceeded("max_chars", len(text), what))
        words = len(text.split())
        if words > self.max_words:
            raise MuttlabError(self.exceeded("max_words", words, what))

    @classmethod
    def from_env(cls, env) -> "Limits":
        values = {}
        for name, variable in cls.SETTING.items():
            text = (env.get(variable) or "").strip()
            if not text:
                continue
            try:
                value = int(text)
            except ValueError:
                value = 0
            if value < 1:
                raise MuttlabError(f"{variable}={text!r}: give a whole number of at least 1")
            values[name] = value
        return cls(**values)


_active_limits: Limits | None = None


def active_limits() -> Limits:
    """The limits every metric call and reader enforces: the environment's (read once), unless
    :func:`set_limits` chose others for this process."""
    global _active_limits
    if _active_limits is None:
        _active_limits = Limits.from_env(os.environ)
    return _active_limits


def set_limits(limits: Limits | None) -> None:
    """Use these limits for this process (None: read the environment again on next use)."""
    global _active_limits
    _active_limits = limits


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
    users_file: Path | None = None
    session_ttl: int = DEFAULT_SESSION_TTL
    model_dir_override: Path | None = None
    ref_counts: tuple[int, ...] = DEFAULT_REF_COUNTS
    tolerance: float = DEFAULT_TOLERANCE
    tie_tolerance: float = DEFAULT_TIE_TOLERANCE
    seed: int = DEFAULT_SEED
    workers: int = field(default_factory=lambda: max(1, min(2, os.cpu_count() or 1)))
    metric_paths: tuple[str, ...] = ()
    # A Dask scheduler address (tcp://host:8786): runs are scored on that cluster; None scores here.
    scheduler: str | None = None
    limits: Limits = field(default_factory=Limits)
    # Where a read-only server keeps the scores it computes (MUTTLAB_DEMO_CACHE_DIR); None: demo_cache_dir's default.
    demo_cache_override: Path | None = None

    @property
    def using_sample(self) -> bool:
        return self.data_dir is None

    def rule_signature(self, noise_floor: float = 0.0) -> str:
        """The accuracy rules' settings as signature fields: Difference tolerance and tie rule, and a
        metric's noise floor (``floor:1e-6``) when it is larger than the tie tolerance and so decides ties."""
        floor = f"|floor:{_number(noise_floor)}" if noise_floor > self.tie_tolerance else ""
        return f"tol:{_number(self.tolerance)}|tie:{tie_rule_text(self.tie_tolerance)}{floor}"

    @property
    def model_dir(self) -> Path | None:
        """The writable folder of trained models (``MUTTLAB_MODEL_DIR``, else ``<cache dir>/models``).

        None on a read-only server: there the metrics use the shipped models and training is refused.
        """
        if self.read_only:
            return None
        return self.model_dir_override or self.cache_dir / "models"

    @property
    def demo_cache_dir(self) -> Path:
        """The folder of a read-only server's own score cache (``MUTTLAB_DEMO_CACHE_DIR``, else
        ``~/.cache/muttlab-demo``): written by that server only, never the shared cache it reads."""
        return self.demo_cache_override or Path.home() / ".cache" / "muttlab-demo"

    @property
    def store_url(self) -> str:
        """SQLAlchemy URL of the pair store: the configured one, else SQLite in the cache dir."""
        return self.database_url or f"sqlite:///{self.cache_dir / 'pairs.sqlite'}"

    def with_overrides(self, **changes) -> "Settings":
        """A copy with the given fields replaced; None values leave a field as it is."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


# Bounds of the whole-number settings; the others need only be non-negative.
_SETTING_RANGES = {"workers": (1, 1024), "seed": (0, checks.MAX_SEED), "session_ttl": (60, 10 ** 9)}


def _checked_overrides(overrides, fields) -> dict:
    """``load_settings``' keyword overrides, by the annotation of the :class:`~muttlab.settings.Settings` field
    each names: paths become :class:`~pathlib.Path`, lists tuples. None leaves a field as it is."""
    annotations = {f.name: str(f.type).replace(" | None", "") for f in fields}
    checked = {}
    for key, value in overrides.items():
        if key not in annotations:
            raise InvalidArgument("load_settings", key, f"is not a setting; the settings are {', '.join(annotations)}")
        kind = annotations[key]
        if value is None:
            checked[key] = value
        elif kind == "Path":
            checked[key] = checks.path(value, "load_settings", key)
        elif kind == "bool":
            checked[key] = checks.instance(value, "load_settings", key, bool, "True or False")
        elif kind == "str":
            checked[key] = checks.text(value, "load_settings", key)
        elif kind == "int":
            checked[key] = checks.whole(value, "load_settings", key, *_SETTING_RANGES.get(key, (0, 10 ** 9)))
        elif kind == "float":
            checked[key] = checks.real(value, "load_settings", key, 0.0, 1e9)
        elif kind == "tuple[int, ...]":
            checked[key] = tuple(checks.wholes(value, "load_settings", key, 1, 10 ** 6))
        elif kind == "tuple[str, ...]":
            checked[key] = tuple(checks.names(value, "load_settings", key))
        elif kind == "Limits":
            checked[key] = checks.instance(value, "load_settings", key, Limits, "a muttlab.settings.Limits")
        else:  # a field of a kind not listed here is the dataclass's to check
            checked[key] = value
    return checked


def load_settings(environ: dict[str, str] | None = None, **overrides) -> Settings:
    """Settings from the environment (``MUTTLAB_*`` variables), then explicit overrides.

    Variables: MUTTLAB_DATA_DIR, MUTTLAB_CACHE_DIR, MUTTLAB_NO_CACHE, MUTTLAB_DATABASE_URL,
    MUTTLAB_READ_ONLY, MUTTLAB_ANNOTATOR_TOKEN, MUTTLAB_WORKERS, MUTTLAB_METRICS (comma-separated
    import paths of outside metrics, ``package.module:callable``), MUTTLAB_USERS_FILE (dashboard accounts,
    kept outside the repository), MUTTLAB_SESSION_TTL (seconds a sign-in lasts), MUTTLAB_MODEL_DIR (trained
    models; default ``<cache dir>/models``), MUTTLAB_DEMO_CACHE_DIR (a read-only server's own score cache),
    MUTTLAB_SCHEDULER (a Dask scheduler address that runs are sent to),
    MUTTLAB_TIE_RULE (``exact`` or a relative tie tolerance, default 1e-9; docs/corruptions.md).
    """
    env = checks.environment(os.environ if environ is None else environ)
    overrides = _checked_overrides(overrides, fields(Settings))
    data_dir = env.get("MUTTLAB_DATA_DIR")
    workers = checks.whole_variable(env, "MUTTLAB_WORKERS", "worker processes, e.g. 2", 0)
    ttl = checks.whole_variable(env, "MUTTLAB_SESSION_TTL", "seconds a sign-in lasts, e.g. 28800", 1)
    settings = Settings(
        data_dir=Path(data_dir).expanduser() if data_dir else None,
        cache_dir=Path(env["MUTTLAB_CACHE_DIR"]).expanduser() if env.get("MUTTLAB_CACHE_DIR") else DEFAULT_CACHE_DIR,
        use_cache=not _flag(env.get("MUTTLAB_NO_CACHE")),
        database_url=env.get("MUTTLAB_DATABASE_URL") or None,
        read_only=_flag(env.get("MUTTLAB_READ_ONLY")),
        annotator_token=env.get("MUTTLAB_ANNOTATOR_TOKEN") or None,
        metric_paths=tuple(p.strip() for p in env.get("MUTTLAB_METRICS", "").split(",") if p.strip()),
        scheduler=env.get("MUTTLAB_SCHEDULER", "").strip() or None,
        limits=Limits.from_env(env),
    )
    if workers:
        settings = replace(settings, workers=workers)
    if (env.get("MUTTLAB_TIE_RULE") or "").strip():
        settings = replace(settings, tie_tolerance=parse_tie_rule(env["MUTTLAB_TIE_RULE"], "MUTTLAB_TIE_RULE"))
    if env.get("MUTTLAB_USERS_FILE"):
        settings = replace(settings, users_file=Path(env["MUTTLAB_USERS_FILE"]).expanduser())
    if env.get("MUTTLAB_MODEL_DIR"):
        settings = replace(settings, model_dir_override=Path(env["MUTTLAB_MODEL_DIR"]).expanduser())
    if env.get("MUTTLAB_DEMO_CACHE_DIR"):
        settings = replace(settings, demo_cache_override=Path(env["MUTTLAB_DEMO_CACHE_DIR"]).expanduser())
    if ttl:
        settings = replace(settings, session_ttl=max(60, ttl))
    return settings.with_overrides(**overrides)
