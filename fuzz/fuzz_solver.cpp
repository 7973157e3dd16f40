// Random models, goals and start configurations -> every backend. The
// solver contract (tests/solver_contract_test.cpp) on inputs no one wrote by
// hand: each solve returns a status; unless the input is invalid or the
// backend unsupported, q is finite and within the limits, and `converged`
// means forward kinematics of q meets the tolerances. A model the Model
// constructor refuses (a zero axis, crossed limits) ends the input.
//
// The input is read with libFuzzer's FuzzedDataProvider: a backend index,
// 1-7 joints (type, parent, offset, rotation, axis, optional limits), 1-2
// goals (body, kind, point, target from a random configuration or free),
// and a start configuration (random within limits, or the neutral one).
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/rng.h"
#include "ikbench/solvers/registry.h"

namespace {

using namespace ikbench;

double real(FuzzedDataProvider& in, double lo, double hi) { return in.ConsumeFloatingPointInRange(lo, hi); }

Eigen::Vector3d vec(FuzzedDataProvider& in, double lo, double hi) {
  return {real(in, lo, hi), real(in, lo, hi), real(in, lo, hi)};
}

const std::vector<std::string>& backends() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const SolverInfo& info : Registry::global().list()) out.push_back(info.name);
    return out;
  }();
  return names;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const std::string backend = backends()[in.ConsumeIntegralInRange<size_t>(0, backends().size() - 1)];
  const std::uint64_t seed = in.ConsumeIntegral<std::uint64_t>();

  std::vector<JointSpec> joints;
  const int n = in.ConsumeIntegralInRange(1, 7);
  static const JointType kTypes[] = {JointType::kRevolute, JointType::kRevolute, JointType::kPrismatic,
                                     JointType::kBall, JointType::kFixed, JointType::kFree};
  for (int i = 0; i < n; ++i) {
    JointSpec j;
    j.name = "j" + std::to_string(i);
    j.parent = i == 0 ? -1 : in.ConsumeIntegralInRange(0, i - 1);
    j.type = kTypes[in.ConsumeIntegralInRange(0, i == 0 ? 5 : 4)];  // a free joint only at the root
    j.parent_T_joint.p = vec(in, -1.0, 1.0);
    const Eigen::Vector3d rv = vec(in, -3.2, 3.2);
    if (rv.norm() > 0) j.parent_T_joint.R = Eigen::AngleAxisd(rv.norm(), rv.normalized()).toRotationMatrix();
    j.axis = vec(in, -1.0, 1.0);
    const int nv = tangentSize(j.type);
    if (nv > 0 && j.type != JointType::kFree && in.ConsumeBool()) {
      j.lower.resize(nv);
      j.upper.resize(nv);
      // Rotation limits hold 0 (Model refuses others); slider and hinge limits anywhere.
      const bool rotation = j.type == JointType::kBall;
      for (int k = 0; k < nv; ++k) {
        j.lower[k] = rotation ? -real(in, 0.0, 4.0) : real(in, -4.0, 4.0);
        j.upper[k] = rotation ? real(in, 0.0, 4.0) : j.lower[k] + real(in, 0.0, 4.0);
      }
    }
    joints.push_back(j);
  }
  std::shared_ptr<const Model> model;
  try {
    model = std::make_shared<const Model>(std::move(joints), "fuzz");
  } catch (const ModelError&) {
    return 0;
  }

  Rng rng(seed);
  Problem p;
  p.model = model;
  p.name = "fuzz";
  const Eigen::VectorXd q_target = randomConfiguration(*model, rng);
  Data d(*model);
  forwardKinematics(*model, q_target, d);
  const int goals = in.ConsumeIntegralInRange(1, 2);
  for (int g = 0; g < goals; ++g) {
    Goal goal;
    goal.body = in.ConsumeIntegralInRange(0, model->numJoints() - 1);
    goal.kind = static_cast<GoalKind>(in.ConsumeIntegralInRange(0, 2));
    goal.point = vec(in, -0.5, 0.5);
    goal.weight = real(in, 0.1, 10.0);
    const Pose3d& pose = d.world_T_body[goal.body];
    goal.target_position = pose.R * goal.point + pose.p;
    goal.target_orientation = pose.R;
    if (in.ConsumeBool()) goal.target_position += vec(in, -2.0, 2.0);  // perhaps unreachable
    p.goals.push_back(goal);
  }
  p.q0 = in.ConsumeBool() ? randomConfiguration(*model, rng) : model->neutralConfiguration();

  std::unique_ptr<Solver> solver;
  try {
    solver = Registry::global().create(backend + ":restarts=" + std::to_string(in.ConsumeIntegralInRange(0, 2)));
  } catch (const SpecError& e) {
    std::fprintf(stderr, "%s: %s\n", backend.c_str(), e.what());
    std::abort();
  }
  SolverOptions o;
  o.max_iterations = 60;
  o.record_trace = in.ConsumeBool();
  Eigen::VectorXd q = p.q0;
  const Summary s = solver->solve(p, q, o);
  {
    std::string& ctx = fuzz::context();
    ctx = "backend " + backend + ", status " + std::string(toString(s.status)) + " (" + s.message + ")\nmodel:";
    for (int j = 0; j < model->numJoints(); ++j)
      ctx += " " + std::string(toString(model->type(j))) + "(parent " + std::to_string(model->parent(j)) + ")";
    std::ostringstream os;
    os << "\nlower " << model->lowerLimits().transpose() << "\nupper " << model->upperLimits().transpose()
       << "\nq0 " << p.q0.transpose() << "\nq  " << q.transpose();
    ctx += os.str();
  }
  Status parsed;
  IKBENCH_FUZZ_CHECK(parseStatus(toString(s.status), &parsed));
  if (s.status == Status::kInvalidInput || s.status == Status::kUnsupported) {
    IKBENCH_FUZZ_CHECK(!s.message.empty());
    return 0;
  }
  IKBENCH_FUZZ_CHECK(q.size() == model->nq() && q.allFinite());
  IKBENCH_FUZZ_CHECK(withinLimits(*model, q, 1e-9));
  IKBENCH_FUZZ_CHECK(std::isfinite(s.position_error) && std::isfinite(s.orientation_error));
  forwardKinematics(*model, q, d);
  const GoalErrors e = evaluateGoals(*model, p.goals, d);
  IKBENCH_FUZZ_CHECK(s.converged() == (e.position <= o.position_tolerance && e.orientation <= o.orientation_tolerance));
  for (const IterationRecord& r : s.trace) IKBENCH_FUZZ_CHECK(r.q.allFinite());
  return 0;
}
