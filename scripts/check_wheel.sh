#!/usr/bin/env bash
# The package as a user installs it: build the wheel, install it (core dependencies only) into a clean venv,
# check that `muttlab` is the only top-level name it adds, and run `muttlab run` on the bundled sample from
# a folder holding a `metrics/` package of its own. The grid must equal the editable install's (.venv).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

.venv/bin/python -m pip wheel -q --disable-pip-version-check --no-deps -w "$work/dist" . 2>&1 | grep -v "^WARNING: Location" || true
wheel=$(ls "$work"/dist/muttlab-*.whl)
echo "wheel: $(basename "$wheel")"

# Top-level names in the wheel: the package and its metadata, nothing else.
.venv/bin/python - "$wheel" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
top = sorted({n.split("/")[0] for n in names})
extra = [t for t in top if t != "muttlab" and not t.endswith(".dist-info")]
assert not extra, f"the wheel adds top-level names besides muttlab: {extra}"
for needed in ("muttlab/data/sample/trials.jsonl", "muttlab/data/models/reval-treelstm.pt",
               "muttlab/data/models/ml-dreem.json", "muttlab/dashboard/config.toml", "muttlab/dashboard/app.py",
               "muttlab/dashboard/views/run.py", "muttlab/py.typed", "muttlab/metrics/bleu.py"):
    assert needed in names, f"the wheel lacks {needed}"
print(f"wheel contents: {len(names)} files under {top}")
PY

python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --disable-pip-version-check "$wheel" 2>&1 | grep -v "^WARNING: Location" || true

# A user's own `metrics` package in the working directory must not shadow muttlab's.
mkdir -p "$work/user/metrics"
echo 'raise ImportError("the user package was imported instead of muttlab.metrics")' > "$work/user/metrics/__init__.py"
# Core metrics only (the wheel is installed without extras); ML-METEOR reads its tuned model from package data.
metrics="BLEU-4,ROUGE-L,CIDEr-D,W2V-AVG,ML-METEOR"
run() { (cd "$work/user" && env -u MUTTLAB_DATA_DIR MUTTLAB_CACHE_DIR="$work/cache-$2" "$1" run --suite sample \
           --metrics "$metrics" --refs 5,10 --format json); }
run "$work/venv/bin/muttlab" wheel > "$work/wheel.json"
run "$repo/.venv/bin/muttlab" editable > "$work/editable.json"
(cd "$work/user" && "$work/venv/bin/python" -m muttlab --version)
if ! cmp -s "$work/wheel.json" "$work/editable.json"; then
  diff "$work/wheel.json" "$work/editable.json" | head -20
  echo "check_wheel: the wheel's grid differs from the editable install's"
  exit 1
fi
echo "check_wheel: the installed wheel's grid equals the editable install's ($(grep -c '"metric"' "$work/wheel.json") cells)"
