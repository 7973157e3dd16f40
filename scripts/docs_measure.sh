#!/usr/bin/env bash
# The measurements behind the generated tables of README.md, docs/performance.md,
# docs/measurements.md, docs/analytic-ik.md and docs/collision.md (docs/history.md, "The project's
# own history").
#
#   scripts/docs_measure.sh OUT [BIN]     BIN: the release build's benchmarks/ (default build/release/benchmarks)
#
# Writes run directories under OUT, each a finished `ikbench run` that `ikbench history add` records
# with the Google Benchmark JSON and throughput-*.json files beside its run.json:
#   OUT/jacobian-family   the nine Jacobian-family backends on the jacobian-family suite, with the
#                         per-iteration and batch Google Benchmark cases, `ikbench throughput` and
#                         the clean build's time and binary sizes (build.json, scripts/build_time.sh)
#   OUT/trac-ARM          the TRAC-IK protocol on each shipped arm (10 000 targets, one thread)
#   OUT/arms/KEY          scripts/arm_table.py: `auto` against KDL LMA on every arm of the corpus
#                         (the corpus arms need ../shared/data or IKBENCH_CORPUS_DIR)
#   OUT/closed-form-ARM   analytic-6r, auto and auto:closed_form=off on the UR5, the IRB 2400 and the
#                         held-out KR 210 (corpus), one thread; bench_analytic's cases beside the UR5's
#   OUT/clutter           the clutter suite (every shipped arm in the workcell scene, one thread) with
#                         bench_collision's queries; OUT/clutter-near its targets near obstacles
#   OUT/external-overhead the external-solver protocol's cost: the Python and Node null solvers, one
#                         problem per message and batch=50, on the UR5, one thread (node on PATH)
#   OUT/meshes            the meshes suite: the UR5's links as meshes, hulls and capsules in the workcell
# Every file records the machine's load while it ran; on a shared machine the absolute times are
# the machine's of that moment, the ratios within one file are what carries.
# Then:  ikbench history add OUT/jacobian-family OUT/trac-* OUT/arms/* OUT/closed-form-* OUT/clutter* \
#          OUT/external-overhead OUT/meshes --db DB
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: scripts/docs_measure.sh OUT [BIN]" >&2; exit 2; }
out=$1
bin=${2:-build/release/benchmarks}
for b in ikbench bench_kinematics bench_solvers bench_batch bench_analytic bench_collision; do
  [ -x "$bin/$b" ] || { echo "docs_measure: $bin/$b: not built (cmake --build --preset release --target $b)" >&2; exit 2; }
done
# The corpus of real arms beside the source tree, as the benchmarks and scripts/arm_table.py find it.
export IKBENCH_CORPUS_DIR="${IKBENCH_CORPUS_DIR:-$(cd "$(dirname "$0")/.." && pwd)/../shared/data}"
mkdir -p "$out"
gb() {  # gb NAME FILTER [DIR]: 5 repetitions of the matching cases into OUT/DIR/NAME.json (DIR: jacobian-family)
  "$bin/$1" --benchmark_filter="$2" --benchmark_min_time=0.2 --benchmark_repetitions=5 \
    --benchmark_enable_random_interleaving=true \
    --benchmark_out="$out/${3:-jacobian-family}/$1.json" --benchmark_out_format=json >/dev/null
}
tp() {  # tp NAME ARGS...: ikbench throughput into OUT/jacobian-family/throughput-NAME.json
  local name=$1
  shift
  local dir="$out/tp-$name"
  rm -rf "$dir"
  "$bin/ikbench" throughput --batch --threads 1,2 --out "$dir" "$@" >/dev/null
  mv "$dir/throughput.json" "$out/jacobian-family/throughput-$name.json"
  rm -rf "$dir"
}

# The build itself, first (nothing else runs beside it): a clean build of the main command's
# targets from a worktree of HEAD, without ccache (scripts/build_time.sh), kept as OUT/jacobian-family/build.json.
"$(dirname "$0")/build_time.sh" "$out/build"
jf='jt:restarts=2,gd-momentum:restarts=2,pinv:restarts=2,gn:restarts=2,dls:restarts=2,dls-adaptive:restarts=2,dls-marquardt:restarts=2,lm:restarts=2,sdls:restarts=2'
"$bin/ikbench" run --suite jacobian-family --threads 2 --no-trace --progress none --no-summary --force \
  --out "$out/jacobian-family" --solvers "$jf"
mv "$out/build/build.json" "$out/jacobian-family/build.json" && rmdir "$out/build"
gb bench_kinematics '^ForwardKinematics/dof:7/joint:revolute$|FkErrorsJacobian/dof:7/'
gb bench_solvers 'PerIteration/dls(:kernel=[a-z]+)?/dof:7/'
gb bench_batch 'PerIteration/(auto|dls)(/lanes:16/isa:[01])?$|^Peak|^LibraryNearest|^Batch/auto(:library=131072:start=library)?/lanes:16/isa:0$|^Scalar(Generic)?/auto$'
tp auto --solver auto --solves 300000
tp dls --solver dls --solves 300000
tp auto-library --solver auto:library=131072:start=library --solves 1000000
tp auto-library-distinct --solver auto:library=131072:start=library --solves 1000000 --problems 1000000

trac='auto,dls:time_budget_us=5000,dls:restarts=100:time_budget_us=5000,lm:restarts=100:time_budget_us=5000,sdls:restarts=100:time_budget_us=5000,ceres-lm:time_budget_us=5000,ceres-lm:autodiff=1:time_budget_us=5000,kdl-lma:time_budget_us=5000,kdl-lma:restarts=100:time_budget_us=5000,kdl-nr-jl:time_budget_us=5000,analytic-6r,analytic-7r'
for arm in ur5 panda iiwa14 irb2400; do
  "$bin/ikbench" run --urdf "scenarios/data/robots/$arm.urdf" --samples 10000 --threads 1 --no-trace --seed 1 \
    --progress none --no-summary --force --out "$out/trac-$arm" --solvers "$trac"
done

/usr/bin/python3 scripts/arm_table.py table --samples 10000 --sched normal --out "$out/arms" \
  --ikbench "$bin/ikbench" >/dev/null

for suite in clutter clutter-near; do
  "$bin/ikbench" run --suite "$suite" --threads 1 --no-trace --progress none --no-summary --force --out "$out/$suite"
done
gb bench_collision '.' clutter

cf='analytic-6r,auto,auto:closed_form=off'
for arm in ur5 irb2400; do
  "$bin/ikbench" run --urdf "scenarios/data/robots/$arm.urdf" --samples 2000 --threads 1 --no-trace --seed 1 \
    --progress none --no-summary --force --out "$out/closed-form-$arm" --solvers "$cf"
done
kr210="$IKBENCH_CORPUS_DIR/robots/kuka_kr210l150.urdf"
if [ -f "$kr210" ]; then
  "$bin/ikbench" run --urdf "$kr210" --base base_link --tip tool0 --samples 2000 --threads 1 --no-trace --seed 1 \
    --progress none --no-summary --force --out "$out/closed-form-kr210" --solvers "$cf"
fi
gb bench_analytic '^(SolveRobot|PureSolve|Overhead)/' closed-form-ur5

# The external-solver protocol's cost per problem (docs/external-solvers.md): the null solvers answer
# every problem with its start, so their wall time per problem is the protocol's alone. One robot (one
# model) so that batches fill; the four specs interleaved problem by problem.
ext_py="ext:cmd='/usr/bin/python3 examples/external/null_solver.py'"
ext_js="ext:cmd='node examples/external/null_solver.mjs'"
"$bin/ikbench" run --urdf scenarios/data/robots/ur5.urdf --samples 2000 --threads 1 --no-trace --seed 1 \
  --progress none --no-summary --force --out "$out/external-overhead" \
  --solvers "$ext_py,$ext_py:batch=50,$ext_js,$ext_js:batch=50"

# Collision geometry as meshes, hulls and capsules (docs/collision.md, "Measured"): the same UR5
# links in three representations, one target seed, one run.
"$bin/ikbench" run --suite meshes --threads 1 --no-trace --progress none --no-summary --force --out "$out/meshes"
