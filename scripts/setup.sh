#!/usr/bin/env bash
# Installs the Debian packages ikbench needs; a no-op when all are present.
# slurm-wlm and munge are for scripts/slurm/ and its test (tests/slurm/); emscripten,
# nodejs and libjs-three for the playground (docs/playground.md).
# apt-get as root, sudo otherwise, and a clear message if neither works.
set -euo pipefail

PACKAGES=(
  build-essential cmake git pkg-config
  libeigen3-dev libceres-dev libfmt-dev libbenchmark-dev libgtest-dev
  liborocos-kdl-dev liburdfdom-dev nlohmann-json3-dev libcli11-dev
  python3-matplotlib python3-pandas python3-scipy
  slurm-wlm munge
  pybind11-dev python3-dev python3-numpy python3-pytest
  clang libfuzzer-14-dev libclang-rt-14-dev
  python3-plotly chromium chromium-driver python3-selenium
  python3-tabulate python3-jinja2 postgresql python3-psycopg2 ccache
  emscripten nodejs libjs-three
  libfcl-dev zlib1g-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "ikbench setup: installing missing packages: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO=(sudo -n)
else
  echo "ikbench setup: these Debian packages are missing: ${missing[*]}" >&2
  echo "ikbench setup: run as root or with passwordless sudo, or install them yourself:" >&2
  echo "  sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
