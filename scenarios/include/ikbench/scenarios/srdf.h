// SRDF files (MoveIt's Semantic Robot Description Format): the parts a
// collision-aware IK benchmark uses.
//
//   <robot name="...">
//     <disable_collisions link1="A" link2="B" reason="Adjacent"/>   -> pairs left out of the check
//     <group_state name="home" group="arm">                          -> a named configuration,
//       <joint name="shoulder_pan_joint" value="0"/>                    usable as a start
//     </group_state>
//   </robot>
//
// Other elements (<group>, <end_effector>, <virtual_joint>, <passive_joint>,
// <link_sphere_approximation>) are accepted and ignored. A link or joint name
// the robot description does not have is an error naming the file, the line
// and the name: a misspelt pair would silently stay checked.
#pragma once

#include <Eigen/Core>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ikbench/kinematics/model.h"

namespace ikbench {

// The link and joint names of the whole robot description (not only of the
// chain that was loaded from it), against which an SRDF is checked.
struct RobotNames {
  std::set<std::string> links, joints;
  static RobotNames of(const Model& model);  // the model's bodies and joints
};

struct SrdfGroupState {
  std::string name, group;
  int line = 0;
  std::vector<std::pair<std::string, double>> joints;  // joint name -> value [rad or m]
};

struct Srdf {
  std::string source;
  std::vector<std::pair<std::string, std::string>> disabled;  // link pairs
  std::vector<SrdfGroupState> states;

  // The disabled pairs whose links are both bodies of `model` (a chain
  // loaded from a larger description leaves the others out).
  std::vector<std::pair<std::string, std::string>> pairsIn(const Model& model) const;
  // The configuration of group state `name` on `model`: its neutral
  // configuration with the state's joints set (joints outside the model are
  // skipped). SuiteError naming the file for an unknown state, and for a
  // value outside a joint's limits.
  Eigen::VectorXd configuration(const std::string& name, const Model& model) const;
};

// Throws SuiteError naming the file (and line) for malformed XML, a root
// other than <robot>, a missing attribute, a non-finite value, or a link or
// joint that `names` does not have.
Srdf loadSrdf(const std::string& path, const RobotNames& names);
Srdf parseSrdf(const std::string& xml, const std::string& source, const RobotNames& names);

}  // namespace ikbench
