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
from muttlab.rules import (DEFAULT_TIE_TOLERANCE, DEFAULT_TOLERANCE, Rules, TieRule, parse_tie_rule,
                           relative_tie_rule)

DEFAULT_REF_COUNTS = (5, 10, 20)
# The metrics a run shows when none are named: the 2016 paper's families (n-gram, METEOR, edit rate,
# compression). The CLI's `muttlab run` and the dashboard's Run page both start from this list.
DEFAULT_METRICS: tuple[str, ...] = ("BLEU-4", "METEOR-1.5", "CIDEr-D", "ROUGE-L", "TER", "BADGER-like", "TERp")
DEFAULT_SEED = 13
DEFAULT_CACHE_DIR = Path.home() / ".cache" / "muttlab"
# A dashboard sign-in lasts this long (seconds); then the session is anonymous again.
DEFAULT_SESSION_TTL = 8 * 3600
# What a server may load before visitors ask (MUTTLAB_WARM_UP), from the most to the least.
WARM_UPS = ("full", "quick", "none")


def parse_proxies(text: str, where: str) -> tuple[str, ...]:
    """The reverse proxies whose forwarded-client headers a server believes: comma-separated addresses or
    networks (``127.0.0.1``, ``10.0.0.0/8``, ``::1``), each as :func:`ipaddress.ip_network` writes it. ``where``
    names the variable or argument in the error."""
    import ipaddress

    networks = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            networks.append(str(ipaddress.ip_network(part, strict=False)))
        except ValueError:
            raise MuttlabError(f"{where}: {part[:60]!r} is no IP address or network; list the reverse proxies in "
                               "front of the server, e.g. 127.0.0.1 or 10.0.0.0/8, comma-separated") from None
    return tuple(networks)


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


def user_cache_home() -> Path:
    """The user's own cache folder, for what is kept per user rather than per configuration (METEOR's compiled
    driver): ``$XDG_CACHE_HOME``, else ``~/.cache``."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def worker_environment() -> dict[str, str]:
    """The environment of a process that runs outside code (:mod:`muttlab.metrics.outside`): this process's,
    without any ``MUTTLAB_*`` variable, so that it learns no database password, credential or cache location."""
    return {k: v for k, v in os.environ.items() if not k.startswith("MUTTLAB_")}


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
    # What decides a verdict (tie rule, Difference tolerance): muttlab.rules; MUTTLAB_TIE_RULE, --tie-rule.
    rules: Rules = Rules()
    # The calibrations a calibrated tie rule reads (MUTTLAB_CALIBRATIONS); None: the ones the package ships.
    calibrations_file: Path | None = None
    seed: int = DEFAULT_SEED
    workers: int = field(default_factory=lambda: max(1, min(2, os.cpu_count() or 1)))
    metric_paths: tuple[str, ...] = ()
    # A Dask scheduler address (tcp://host:8786): runs are scored on that cluster; None scores here.
    scheduler: str | None = None
    # Mutual TLS with the cluster (tls:// addresses): the CA that signed the scheduler's and workers'
    # certificates, and this client's certificate and key (distributed.security.Security). Only scores from a
    # cluster reached this way are stored in the shared cache (docs/scale.md).
    dask_tls_ca: Path | None = None
    dask_tls_cert: Path | None = None
    dask_tls_key: Path | None = None
    # Reverse proxies whose X-Forwarded-For a server believes (docs/security.md); none by default: a client is
    # the address its connection comes from.
    trusted_proxies: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    # Where a read-only server keeps the scores it computes (MUTTLAB_DEMO_CACHE_DIR); None: demo_cache_dir's default.
    demo_cache_override: Path | None = None
    # What a server loads before visitors ask (MUTTLAB_WARM_UP): "full", every metric; "quick", a first page's
    # needs (the slower metrics, the trials and the severity sentences load when a visitor first needs them);
    # "none", nothing (every metric, METEOR's JVM and spaCy load when first needed).
    warm_up: str = "full"

    @property
    def using_sample(self) -> bool:
        return self.data_dir is None

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

    @property
    def dask_tls(self) -> bool:
        """Whether mutual TLS with the Dask cluster is configured (any of its three files)."""
        return any(p is not None for p in (self.dask_tls_ca, self.dask_tls_cert, self.dask_tls_key))

    def with_overrides(self, **changes) -> "Settings":
        """A copy with the given fields replaced; None values leave a field as it is."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def with_rules(self, **changes) -> "Settings":
        """A copy whose :class:`~muttlab.rules.Rules` have the given fields (``tie``, ``tolerance``) replaced."""
        return replace(self, rules=replace(self.rules, **changes))


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
        elif kind == "tuple[str, ...]" and key == "trusted_proxies":
            checked[key] = parse_proxies(",".join(checks.names(value, "load_settings", key)),
                                         f"load_settings: {key}")
        elif kind == "tuple[str, ...]":
            checked[key] = tuple(checks.names(value, "load_settings", key))
        elif kind == "Limits":
            checked[key] = checks.instance(value, "load_settings", key, Limits, "a muttlab.settings.Limits")
        elif kind == "Rules":
            checked[key] = checks.instance(value, "load_settings", key, Rules, "a muttlab.rules.Rules")
        else:  # a field of a kind not listed here is the dataclass's to check
            checked[key] = value
    return checked


def _rules_overrides(overrides: dict) -> dict:
    """The rules' parts among ``load_settings``' overrides, checked by the same range as the environment's and
    the command line's: ``tie_rule`` (its text or a :class:`~muttlab.rules.TieRule`), ``tie_tolerance`` (the
    relative rule's tolerance; 0 is exact) and ``tolerance`` (the Difference formula's, 0 to 1)."""
    changes = {}
    tie_rule, tie_tolerance = overrides.pop("tie_rule", None), overrides.pop("tie_tolerance", None)
    if tie_rule is not None and tie_tolerance is not None:
        raise InvalidArgument("load_settings", "tie_tolerance", "is given with tie_rule: give one of them")
    if isinstance(tie_rule, TieRule):
        changes["tie"] = tie_rule
    elif tie_rule is not None:
        changes["tie"] = parse_tie_rule(checks.text(tie_rule, "load_settings", "tie_rule"), "load_settings(tie_rule)")
    if tie_tolerance is not None:
        changes["tie"] = relative_tie_rule(tie_tolerance, "load_settings(tie_tolerance)")
    if overrides.get("tolerance") is not None:
        changes["tolerance"] = checks.real(overrides.pop("tolerance"), "load_settings", "tolerance", 0.0, 1.0)
    overrides.pop("tolerance", None)
    return changes


def load_settings(environ: dict[str, str] | None = None, **overrides) -> Settings:
    """Settings from the environment (``MUTTLAB_*`` variables), then explicit overrides: any field of
    :class:`Settings`, and the rules' parts ``tie_rule``, ``tie_tolerance`` and ``tolerance``.

    Variables: MUTTLAB_DATA_DIR, MUTTLAB_CACHE_DIR, MUTTLAB_NO_CACHE, MUTTLAB_DATABASE_URL,
    MUTTLAB_READ_ONLY, MUTTLAB_ANNOTATOR_TOKEN, MUTTLAB_WORKERS, MUTTLAB_METRICS (comma-separated
    import paths of outside metrics, ``package.module:callable``), MUTTLAB_USERS_FILE (dashboard accounts,
    kept outside the repository), MUTTLAB_SESSION_TTL (seconds a sign-in lasts), MUTTLAB_MODEL_DIR (trained
    models; default ``<cache dir>/models``), MUTTLAB_DEMO_CACHE_DIR (a read-only server's own score cache),
    MUTTLAB_SCHEDULER (a Dask scheduler address that runs are sent to),
    MUTTLAB_DASK_TLS_CA, MUTTLAB_DASK_TLS_CERT, MUTTLAB_DASK_TLS_KEY (mutual TLS with that cluster; docs/scale.md),
    MUTTLAB_TRUSTED_PROXIES (reverse proxies whose X-Forwarded-For is believed, comma-separated addresses or
    networks; default none; docs/security.md), MUTTLAB_TIE_RULE (``exact``, a relative tie tolerance from 1e-15
    to below 0.01, default 1e-9, or ``calibrated:<study>:<pair>``; docs/corruptions.md), MUTTLAB_CALIBRATIONS (the
    calibrations file a calibrated tie rule reads; default the one the package ships), MUTTLAB_WARM_UP (``full``,
    the default, ``quick`` or ``none``: what a server loads before visitors ask; docs/deploy.md).
    """
    env = checks.environment(os.environ if environ is None else environ)
    overrides = dict(overrides)
    rule_changes = _rules_overrides(overrides)
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
        settings = settings.with_rules(tie=parse_tie_rule(env["MUTTLAB_TIE_RULE"], "MUTTLAB_TIE_RULE"))
    if (env.get("MUTTLAB_CALIBRATIONS") or "").strip():
        settings = replace(settings, calibrations_file=Path(env["MUTTLAB_CALIBRATIONS"].strip()).expanduser())
    if env.get("MUTTLAB_USERS_FILE"):
        settings = replace(settings, users_file=Path(env["MUTTLAB_USERS_FILE"]).expanduser())
    if env.get("MUTTLAB_MODEL_DIR"):
        settings = replace(settings, model_dir_override=Path(env["MUTTLAB_MODEL_DIR"]).expanduser())
    for name in ("ca", "cert", "key"):
        if env.get(f"MUTTLAB_DASK_TLS_{name.upper()}"):
            settings = replace(settings, **{f"dask_tls_{name}": Path(env[f"MUTTLAB_DASK_TLS_{name.upper()}"]).expanduser()})
    if env.get("MUTTLAB_TRUSTED_PROXIES"):
        settings = replace(settings, trusted_proxies=parse_proxies(env["MUTTLAB_TRUSTED_PROXIES"],
                                                                   "MUTTLAB_TRUSTED_PROXIES"))
    if env.get("MUTTLAB_DEMO_CACHE_DIR"):
        settings = replace(settings, demo_cache_override=Path(env["MUTTLAB_DEMO_CACHE_DIR"]).expanduser())
    if ttl:
        settings = replace(settings, session_ttl=max(60, ttl))
    warm_up = (env.get("MUTTLAB_WARM_UP") or "full").strip().lower()
    if warm_up not in WARM_UPS:
        raise InvalidArgument("load_settings", "environ", f"sets MUTTLAB_WARM_UP={env['MUTTLAB_WARM_UP']!r}: give "
                              "'full' (load every metric before visitors ask), 'quick' (only what a first page "
                              "needs) or 'none' (everything when first asked)")
    settings = replace(settings, warm_up=warm_up)
    settings = settings.with_overrides(**overrides)
    return settings.with_rules(**rule_changes) if rule_changes else settings
