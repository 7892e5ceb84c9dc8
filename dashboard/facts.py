"""What every page's footer and every exported report states: version, commit, data checksums, and the
datasets' licences and citations (from ``data/README.md``). No Streamlit here, so the CLI report uses it too.
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from muttlab.api import dashboard_dir, version as package_version

# (dataset, licence, citation): the facts of data/README.md, shown wherever its numbers are.
DATASETS = (
    ("MUTT trial sets", "CC BY-NC-SA 3.0 (they redistribute SICK and Flickr8k text)",
     "Boag, Campos, Saenko & Rumshisky (2016). MUTT: Metric Unit TesTing for Language Generation Tasks. ACL."),
    ("SICK", "CC BY-NC-SA 3.0",
     "Marelli, Menini, Baroni, Bentivogli, Bernardi & Zamparelli (2014). A SICK cure for the evaluation of "
     "compositional distributional semantic models. LREC."),
    ("Flickr8k", "research use only",
     "Hodosh, Young & Hockenmaier (2013). Framing Image Description as a Ranking Task: Data, Models and "
     "Evaluation Metrics. JAIR 47."),
)


def git_commit(where: Path | None = None) -> str:
    """The checkout's short commit, or "" when this is not a git checkout (a wheel install) or git is absent."""
    try:
        done = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=str(where or dashboard_dir()),
                              capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


@dataclass(frozen=True)
class Facts:
    version: str
    commit: str
    grid_created: str = ""
    grid_data_checksum: str = ""
    data_files: dict[str, str] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """The footer as plain-text lines (Markdown-safe: no user text)."""
        build = f"muttlab {self.version}" + (f" · commit {self.commit}" if self.commit else "")
        out = [build]
        if self.grid_created:
            out.append(f"precomputed grid of {self.grid_created} · data sha256 {self.grid_data_checksum[:16]}… "
                       f"over {len(self.data_files)} experiment files")
        out += [f"{name}: {licence}. {citation}" for name, licence, citation in DATASETS]
        return out


def collect() -> Facts:
    """The facts of this installation (best effort: nothing here raises)."""
    from muttlab import api
    try:
        grid = api.snapshot("grid")
    except Exception:  # a broken grid file must not take the footer down; the Run page reports it
        grid = None
    return Facts(version=package_version(), commit=git_commit(),
                 grid_created=grid.created if grid else "",
                 grid_data_checksum=grid.stamp.data_digest if grid else "",
                 data_files=dict(grid.stamp.data or {}) if grid else {})
