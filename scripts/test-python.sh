#!/usr/bin/env bash
# Installs the Python package (bindings/python) into a fresh virtual
# environment of Debian's python3 (its numpy and pytest; no network) and runs
# its tests, which compare every answer with the CLI's on the same models.
# The library: SEMROUTE_LIBRARY (test-install.sh points it at the installed
# one), else the build tree's (BUILD_DIR, default ./build).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=$(realpath "${BUILD_DIR:-build}")
python=${SEMROUTE_PYTHON:-/usr/bin/python3}  # Debian's, not one earlier on PATH
export SEMROUTE_LIBRARY=${SEMROUTE_LIBRARY:-$build_dir/capi/libsemroute.so.0}
export SEMROUTE_CLI=${SEMROUTE_CLI:-$build_dir/cli/semroute}
export SEMROUTE_REPO=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install -q --no-build-isolation --no-index --disable-pip-version-check ./bindings/python
cd "$work"  # import the installed package, not the source folder
echo "python: $("$work/venv/bin/python" -c 'import semroute; print(semroute.__file__, semroute.version())')"
"$work/venv/bin/python" -m pytest -q -p no:cacheprovider "$SEMROUTE_REPO/bindings/python/tests"
