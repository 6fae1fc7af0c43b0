#!/usr/bin/env bash
# Installs the Debian packages smdebug-cpp builds and tests with (idempotent). Uses sudo when not
# root. --hardening adds clang-14 and libclang-rt-14-dev (libFuzzer, for scripts/test-hardening.sh),
# so that CI updates the package lists and installs once. ccache: every build script compiles
# through it. python3 runs the document and packaging checks (scripts/check-*.py); the python3-*
# packages build and test the Python package (python/, scripts/python-venv.sh); python3-torch tests
# its PyTorch hook (smdebug_cpp.pytorch, tests/python/test_pytorch_hook.py).
# Never installs libboost-all-dev (Boost 1.74 dev packages conflict with 1.81) nor npm/nodejs
# (Node 20 and npm come with the machine).
set -euo pipefail
packages=(cmake g++ make ccache libboost1.81-dev libboost-json1.81-dev libxtensor-dev libxsimd-dev xtl-dev catch2 libssl-dev
          libbenchmark-dev openssl python3 librsvg2-bin chromium python3-numpy libtorch-dev
          python3-dev python3-pybind11 pybind11-dev python3-venv python3-pip python3-pytest python3-dask
          python3-distributed python3-pandas python3-boto3 protobuf-compiler python3-protobuf python3-prometheus-client
          python3-torch)
if [ "${1:-}" = --hardening ]; then packages+=(clang-14 libclang-rt-14-dev); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
