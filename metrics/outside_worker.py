"""The worker process of outside metrics (:mod:`muttlab.metrics.outside`): ``python -m
muttlab.metrics.outside_worker IN OUT``. It takes away its own right to write the lab's files, then imports
outside code through the registry's loaders and answers one request at a time.

Apart from :mod:`muttlab.metrics.outside` because it loads metrics with :mod:`muttlab.metrics.registry`,
which starts this process through that module: so neither of the two imports the other."""
from __future__ import annotations

import base64
import os
import sys
from pathlib import Path

import numpy as np

from muttlab.errors import MetricError, MetricPathError, MuttlabError
from muttlab.metrics.base import Metric
from muttlab.metrics.outside import MAX_ERROR_CHARS, _receive, _send
from muttlab.settings import Limits

def _describe(metric: Metric, handle: int) -> dict:
    from muttlab.metrics import base

    def attribute(name: str):
        return base.contained(metric, f"giving its {name}", getattr, metric, name)

    name = attribute("name")
    if not isinstance(name, str):
        raise MetricPathError(f"{base._label(metric)}: a metric's name must be a non-empty string, got "
                              f"{type(name).__name__}")
    info = {"handle": handle, "name": base.plain_text(name), "params": {}, "version": "", "problem": None}
    try:
        base.signature_of(metric)  # every check a signature makes, with its message
        params = base.contained(metric, "listing its parameters", metric.params)
        info["params"] = {base._text(metric, k, "parameter name"): base._text(metric, v, str(k))
                          for k, v in params.items()}
        info["version"] = base._text(metric, metric.version, "version")
    except MuttlabError as exc:
        info["problem"] = str(exc)
    score_range = attribute("score_range")
    languages = attribute("languages")
    cls = type(metric)
    info.update(
        higher_is_better=bool(attribute("higher_is_better")), requires=[str(r) for r in attribute("requires")],
        corpus_dependent=bool(attribute("corpus_dependent")), description=str(attribute("description")),
        languages=None if languages is None else [str(lang) for lang in languages],
        uses_source=bool(attribute("uses_source")),
        score_range=None if score_range is None else [float(v) for v in score_range],
        noise_floor=float(attribute("noise_floor")), scores_empty_text=bool(attribute("scores_empty_text")),
        sick_splits={str(k): str(v) for k, v in
                     base.contained(metric, "naming the SICK splits it saw", metric.sick_splits_seen).items()},
        class_module=base.plain_text(cls.__module__) if isinstance(cls.__module__, str) else "")
    return info


def _answer(request: dict, metrics: dict[int, Metric]) -> dict:
    from importlib import metadata

    from muttlab.metrics import base, registry

    op = request.get("op")
    if op == "path":
        path = request.get("path")
        metric = registry._instantiate(registry.load_callable(path), path)
    elif op == "entry_point":
        ep = metadata.EntryPoint(str(request["name"]), str(request["value"]), str(request["group"]))
        metric = registry._entry_point_metric(ep, str(request["source"]))
    elif op in ("score", "call"):
        metric = metrics[request["handle"]]
        if op == "call":
            method = request.get("method")
            if method not in ("check_available", "close"):
                raise MetricError(f"no such request: {method!r}")
            base.contained(metric, "checking its requirements" if method == "check_available" else "closing",
                           getattr(metric, method))
            return {"ok": True}
        texts = request["texts"]
        sources = request.get("sources")
        scores = metric.score([texts[i] for i in request["candidates"]],
                              [[texts[i] for i in refs] for refs in request["references"]],
                              None if sources is None else [texts[i] for i in sources])
        return {"ok": True, "scores": base64.b64encode(np.asarray(scores, dtype="<f8").tobytes()).decode("ascii")}
    else:
        raise MetricError(f"no such request: {op!r}")
    handle = len(metrics) + 1
    info = _describe(metric, handle)
    metrics[handle] = metric
    return {"ok": True, "info": info}


def _error(exc: BaseException) -> dict:
    from muttlab.metrics import base

    if isinstance(exc, MuttlabError):
        text = base._quietly(lambda: str(exc)) or type(exc).__name__
        return {"ok": False, "kind": type(exc).__name__, "error": text[:MAX_ERROR_CHARS]}
    return {"ok": False, "kind": "MetricError", "error": base._exception_text(exc)}


def main(argv: list[str]) -> int:
    """The worker: read requests from the descriptor ``argv[1]``, answer on ``argv[2]``."""
    requests, answers = os.fdopen(int(argv[1]), "rb"), os.fdopen(int(argv[2]), "wb")
    os.dup2(2, 1)  # what outside code prints goes to stderr, never into the answers
    init = _receive(requests)
    if init is None or init.get("op") != "init":
        return 2
    from muttlab.metrics import sandbox
    from muttlab.settings import set_limits

    sys.path[:] = [p for p in init.get("sys_path", []) if isinstance(p, str)]
    set_limits(Limits(**init["limits"]))
    _send(answers, {"ok": True, "sandbox": sandbox.deny_writes(Path(p) for p in init.get("protect", []))})
    metrics: dict[int, Metric] = {}
    while True:
        request = _receive(requests)
        if request is None:
            return 0
        try:
            answer = _answer(request, metrics)
        except KeyboardInterrupt:
            return 130
        except BaseException as exc:  # outside code may raise anything; it is answered, never fatal here
            answer = _error(exc)
        _send(answers, answer)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
