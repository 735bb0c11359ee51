#!/usr/bin/env bash
# Pack the installed xla-cpu-pjrt plugin for a visit to a lent accelerator machine, whose
# tool carries at most 64 MiB: the library stripped of its symbols for debugging and
# compressed (about 34 MB from 259), as .whl/xla_cpu_pjrt.so.xz, which
# tools/accelerator_check.sh unpacks there. Takes about 2.5 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
src=$($PY -c "from jaxlite._src.backends import plugins; print(plugins.cpu_plugin().path)")
mkdir -p .whl
tmp=$(mktemp)
cp "$src" "$tmp"
strip --strip-unneeded "$tmp"
xz -9 -T0 -c "$tmp" > .whl/xla_cpu_pjrt.so.xz
rm -f "$tmp"
grep -qx "/.whl/" .git/info/exclude 2>/dev/null || echo "/.whl/" >> .git/info/exclude
ls -la .whl/xla_cpu_pjrt.so.xz
