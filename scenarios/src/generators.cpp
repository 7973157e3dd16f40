#include "ikbench/scenarios/generators.h"

#include <fmt/format.h>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/rng.h"

namespace ikbench {

std::shared_ptr<const Model> randomChain(const ChainSpec& spec, std::uint64_t seed) {
  if (spec.joints < 1) throw std::invalid_argument(fmt::format("random chain: joints = {} must be >= 1", spec.joints));
  Rng rng(seed);
  const double total = spec.revolute + spec.ball + spec.prismatic;
  if (!(total > 0.0)) throw std::invalid_argument("random chain: joint-type fractions must sum to > 0");
  std::vector<JointSpec> joints;
  double length = 0.0;  // length of the link leading to the next joint
  for (int i = 0; i < spec.joints; ++i) {
    JointSpec j;
    j.name = fmt::format("j{}", i);
    j.parent = i - 1;
    j.parent_T_joint.p = Eigen::Vector3d(0, 0, length);
    const double u = rng.uniform() * total;
    j.type = u < spec.revolute ? JointType::kRevolute
             : u < spec.revolute + spec.ball ? JointType::kBall
                                             : JointType::kPrismatic;
    switch (spec.axes) {
      case AxisStyle::kRandom: j.axis = rng.unitVector(); break;
      case AxisStyle::kAlternating: j.axis = (i % 2 == 0) ? Eigen::Vector3d::UnitZ() : Eigen::Vector3d::UnitY(); break;
      case AxisStyle::kPlanar: j.axis = Eigen::Vector3d::UnitY(); break;
    }
    const int nv = tangentSize(j.type);
    if (j.type == JointType::kPrismatic) {
      j.lower = Eigen::VectorXd::Constant(1, 0.0);
      j.upper = Eigen::VectorXd::Constant(1, spec.prismatic_range);
    } else if (spec.limit > 0.0) {
      j.lower = Eigen::VectorXd::Constant(nv, -spec.limit);
      j.upper = Eigen::VectorXd::Constant(nv, spec.limit);
    }
    joints.push_back(std::move(j));
    length = rng.uniform(spec.min_length, spec.max_length);
  }
  JointSpec tip;
  tip.name = "tip";
  tip.parent = spec.joints - 1;
  tip.type = JointType::kFixed;
  tip.parent_T_joint.p = Eigen::Vector3d(0, 0, length);
  joints.push_back(std::move(tip));
  return std::make_shared<const Model>(std::move(joints), fmt::format("chain{}-s{}", spec.joints, seed));
}

Eigen::VectorXd startConfiguration(const Model& model, StartPolicy policy, Rng& rng) {
  switch (policy) {
    case StartPolicy::kNominal: return model.middleConfiguration();
    case StartPolicy::kZero: return model.neutralConfiguration();
    case StartPolicy::kRandom: return randomConfiguration(model, rng);
  }
  return model.neutralConfiguration();
}

std::vector<Problem> reachableGoals(const std::shared_ptr<const Model>& model, const GoalSetSpec& spec,
                                    std::uint64_t seed, const std::string& name_prefix) {
  std::vector<Problem> out;
  out.reserve(spec.count);
  Data data(*model);
  const std::vector<int> leaves = model->leaves();
  for (int i = 0; i < spec.count; ++i) {
    Rng rng(Rng::mix(seed, static_cast<std::uint64_t>(i)));
    const Eigen::VectorXd q_target = randomConfiguration(*model, rng);
    forwardKinematics(*model, q_target, data);
    Problem p;
    p.model = model;
    p.name = fmt::format("{}{}", name_prefix, i);
    for (int leaf : leaves) {
      Goal g;
      g.body = leaf;
      g.kind = spec.kind;
      g.target_position = data.world_T_body[leaf].p;
      g.target_orientation = data.world_T_body[leaf].R;
      p.goals.push_back(g);
    }
    p.q0 = startConfiguration(*model, spec.start, rng);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace ikbench
