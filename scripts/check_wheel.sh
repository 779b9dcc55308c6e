#!/usr/bin/env bash
# Build the wheel, install it into a fresh virtual environment outside the checkout, and run
# there, from a directory that is not the repository and without BASALT_DATA: the README's
# Python blocks (at toy size), a simulator run on a built-in machine, and the Python tests that
# need the machine files and paper data. Proves the package carries everything it reads.
#
#   scripts/check_wheel.sh            (make setup first: it uses .venv's maturin)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${VENV:-$root/.venv}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/basalt-wheel.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

(cd "$root" && "$venv/bin/maturin" build --release -q --out "$tmp/wheels")
"$venv/bin/python" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q "$tmp"/wheels/*.whl pytest
cp "$root/scripts/readme_snippets.py" "$root/README.md" "$tmp/"
cp -r "$root/python/tests" "$tmp/tests"
cd "$tmp"
unset BASALT_DATA
py="$tmp/venv/bin/python"
"$py" - <<'PY'
import basalt, pathlib
here = pathlib.Path(basalt.__file__).resolve()
assert "site-packages" in str(here), f"basalt imported from {here}, not the installed wheel"
s = basalt.ckks.Context.preset("CRATERLAKE_80_1DIGIT", rotations=[1], symbolic=True,
                               allow_insecure=True)  # the paper's 80-bit set
with basalt.sim.record() as rec:
    (s.encrypt_symbolic(s.slots) * s.encrypt_symbolic(s.slots)).rescale().rotate(1)
r = basalt.sim.run(rec.trace, "craterlake")
assert r["seconds"] > 0, r
assert "craterlake" in basalt.sim.machines(), basalt.sim.machines()
print(f"installed wheel: basalt.sim.run(trace, 'craterlake') = {r['seconds'] * 1e6:.1f} us")
PY
"$py" readme_snippets.py README.md
"$py" -m pytest -q -p no:cacheprovider tests/test_sim.py
echo "wheel check passed ($(ls "$tmp"/wheels))"
