#!/usr/bin/env bash
# Checks that the set-up resolves on plain PyPI, as on a fresh machine: `pip install --dry-run` of
# tools/requirements.txt (what tools/setup.sh installs) against https://pypi.org/simple only, with every
# local pip setting switched off (config files, PIP_* variables, find-links, extra indexes, constraints).
# Nothing is installed; only package metadata is downloaded.
#   bash tools/check_resolve.sh                              # what setup.sh installs
#   bash tools/check_resolve.sh torch==2.13.0 triton==3.9.0   # any other requirements instead
# Prints the versions chosen for the reference stack; exits non-zero when pip cannot resolve.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ $# -gt 0 ]; then reqs=("$@"); else reqs=(-r tools/requirements.txt); fi
report=$(mktemp)
trap 'rm -f "$report"' EXIT
# --isolated ignores PIP_* variables and the user's config; PIP_CONFIG_FILE=/dev/null also skips the global
# and site config files (where constraints and local indexes can live).
if ! PIP_CONFIG_FILE=/dev/null "$PY" -m pip install --isolated --disable-pip-version-check --quiet --dry-run \
    --ignore-installed --index-url https://pypi.org/simple --report "$report" "${reqs[@]}"; then
  echo "check_resolve: FAILED: ${reqs[*]} does not resolve on plain PyPI" >&2
  exit 1
fi
"$PY" - "$report" <<'EOF'
import json, sys
chosen = {p["metadata"]["name"].lower(): p["metadata"]["version"] for p in json.load(open(sys.argv[1]))["install"]}
shown = ", ".join(f"{n} {chosen[n]}" for n in ("numpy", "torch", "triton", "pytest", "hypothesis") if n in chosen)
print(f"check_resolve: ok on plain PyPI ({len(chosen)} packages): {shown}")
EOF
