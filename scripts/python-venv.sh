#!/usr/bin/env bash
# Builds the Python package into a virtual environment, exactly as docs/python.md tells users to:
#
#   scripts/python-venv.sh VENV      python3 -m venv --system-site-packages VENV
#                                    VENV/bin/pip install --no-build-isolation <repo>/python
#
# Uses Debian's python3 (/usr/bin/python3, or SMDEBUG_SYSTEM_PYTHON): its site packages hold
# pybind11, numpy, dask, distributed, pandas, pytest and boto3 (scripts/setup-deps.sh installs them);
# a pyenv or conda python on PATH would not see them. Offline: nothing comes from PyPI.
# SMDEBUG_CCACHE=1 compiles through ccache (developer rebuilds).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:?usage: scripts/python-venv.sh VENV}"
python="${SMDEBUG_SYSTEM_PYTHON:-/usr/bin/python3}"
[ -x "$python" ] || { echo "python-venv.sh: $python not found (apt-get install python3 python3-venv)" >&2; exit 1; }
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv --system-site-packages "$venv"
fi
"$venv/bin/pip" install --no-build-isolation --no-index --disable-pip-version-check -q "$repo/python"
"$venv/bin/python" -c "import smdebug_cpp, smdebug_cpp.dask; print('smdebug_cpp', smdebug_cpp.__version__, 'in $venv')"
