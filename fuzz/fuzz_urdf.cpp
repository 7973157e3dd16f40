// Robot description XML -> the project's readers: a URDF (parseUrdf), an
// MJCF model (parseMjcf, when the root is <mujoco>) and an SRDF (parseSrdf,
// checked against the names of a URDF read from the same text, or of a
// fixed arm when the text is no URDF). Each gives its result or a
// SuiteError, nothing else (no crash, no other exception, no sanitizer
// report); a loaded model's neutral configuration is within its limits and
// its forward kinematics is defined; an SRDF's pairs and states name links
// and joints the description has.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/mjcf.h"
#include "ikbench/scenarios/srdf.h"
#include "ikbench/scenarios/urdf.h"

namespace {

void checkModel(const ikbench::UrdfModel& u) {
  const ikbench::Model& m = *u.model;
  const Eigen::VectorXd q = m.neutralConfiguration();
  IKBENCH_FUZZ_CHECK(q.size() == m.nq() && ikbench::withinLimits(m, q, 0.0));
  ikbench::Data d(m);
  ikbench::forwardKinematics(m, q, d);
  for (const ikbench::LinkShape& l : u.collision) IKBENCH_FUZZ_CHECK(l.body >= 0 && l.body < m.numJoints());
}

// The names an SRDF is checked against when the text is no URDF: a two-link arm's.
ikbench::RobotNames fixedNames() {
  ikbench::RobotNames n;
  n.links = {"base_link", "link1", "link2", "tool0"};
  n.joints = {"joint1", "joint2"};
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (text.find("<mujoco") != std::string::npos) {
    // Meshes as hulls (inline vertices through qhull); a relative mesh file
    // is looked for under a directory that does not exist.
    ikbench::UrdfOptions o;
    o.meshes = ikbench::MeshGeometry::kHull;
    try {
      checkModel(ikbench::parseMjcf(text, "/nonexistent/fuzz.xml", o));
    } catch (const ikbench::SuiteError&) {
    }
    return 0;
  }
  ikbench::RobotNames names = fixedNames();
  try {
    const ikbench::UrdfModel u = ikbench::parseUrdf(text, "fuzz.urdf");
    checkModel(u);
    names = u.names;
  } catch (const ikbench::SuiteError&) {
  }
  try {
    const ikbench::Srdf s = ikbench::parseSrdf(text, "fuzz.srdf", names);
    for (const auto& [a, b] : s.disabled) IKBENCH_FUZZ_CHECK(names.links.count(a) && names.links.count(b));
    for (const ikbench::SrdfGroupState& g : s.states)
      for (const auto& [joint, value] : g.joints) IKBENCH_FUZZ_CHECK(names.joints.count(joint) && std::isfinite(value));
  } catch (const ikbench::SuiteError&) {
  }
  return 0;
}
