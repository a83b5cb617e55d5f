#!/usr/bin/env bash
# The main job on bundled data: headless batch evaluation of the bundled submissions on the shipped tasks,
# then the report. Results go to results/demo (resumable: re-running skips finished units).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-results/demo}
.venv/bin/physcodegym batch --tasks tasks/packs --submissions submissions --out "$OUT" --resume
.venv/bin/physcodegym report "$OUT" --out "$OUT/report"
echo "report: $OUT/report/index.html"
