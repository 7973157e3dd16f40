#!/usr/bin/env bash
# Installs the Debian packages ikbench needs for a purpose; a no-op when all are present.
#   ./scripts/setup.sh main   what ./scripts/run.sh uses: the compilers and the libraries the
#                             release build links, the Python packages of the plots and the
#                             report, emscripten, nodejs and three.js for the playground page
#   ./scripts/setup.sh test   main, plus what only the tests use: GoogleTest, pytest, clang and
#                             libFuzzer (fuzz/), Chromium and its driver with selenium (the
#                             browser tests), Slurm and munge (tests/slurm/), PostgreSQL with
#                             psycopg2 (the history store's PostgreSQL tests)
#   ./scripts/setup.sh        the same as `test`: everything
# Both purposes also install closed-chain-ik from the npm registry into third_party/node
# (gitignored): the third-party external solver examples/external/closed_chain_ik_solver.mjs runs
# (docs/external-solvers.md). Without npm or the registry that step is skipped with a message.
# apt-get as root, sudo otherwise, and a clear message if neither works.
set -euo pipefail

MAIN=(
  build-essential cmake git pkg-config ccache
  libeigen3-dev libceres-dev libfmt-dev libbenchmark-dev
  liborocos-kdl-dev liburdfdom-dev nlohmann-json3-dev libcli11-dev
  libfcl-dev zlib1g-dev libassimp-dev libqhull-dev
  pybind11-dev python3-dev python3-numpy
  python3-matplotlib python3-pandas python3-scipy
  python3-plotly python3-tabulate python3-jinja2
  emscripten nodejs libjs-three
)
TEST=(
  libgtest-dev python3-pytest python3-yaml python3-jsonschema
  clang libfuzzer-14-dev libclang-rt-14-dev
  chromium chromium-driver python3-selenium
  slurm-wlm munge
  postgresql python3-psycopg2
)

purpose="${1:-test}"
case "$purpose" in
  main) PACKAGES=("${MAIN[@]}") ;;
  test|all) PACKAGES=("${MAIN[@]}" "${TEST[@]}") ;;
  *) echo "ikbench setup: unknown purpose '$purpose' (expected: main or test)" >&2; exit 2 ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# closed-chain-ik (Apache-2.0) at a fixed version, with its own dependencies only (gl-matrix,
# linear-solve, svd-js, three-mesh-bvh; its peers three and urdf-loader are for its three.js
# helpers, which the example does not load).
CLOSED_CHAIN_IK=closed-chain-ik@0.0.3
install_npm() {
  local root dir
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  dir="$root/third_party/node"
  if [ -f "$dir/node_modules/closed-chain-ik/package.json" ] &&
     grep -q '"version": "0.0.3"' "$dir/node_modules/closed-chain-ik/package.json"; then
    return 0
  fi
  if ! command -v npm >/dev/null 2>&1; then
    echo "ikbench setup: npm is not installed: skipping $CLOSED_CHAIN_IK (the closed-chain-ik example)" >&2
    return 0
  fi
  mkdir -p "$dir"
  echo "ikbench setup ($purpose): installing $CLOSED_CHAIN_IK into third_party/node"
  if ! npm install --prefix "$dir" --no-audit --no-fund --legacy-peer-deps --loglevel=error "$CLOSED_CHAIN_IK"; then
    echo "ikbench setup: npm could not install $CLOSED_CHAIN_IK; the closed-chain-ik example and its test skip" >&2
  fi
}

if [ ${#missing[@]} -eq 0 ]; then
  install_npm
  exit 0
fi

echo "ikbench setup ($purpose): installing missing packages: ${missing[*]}"
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
install_npm
