// URDF text -> parseUrdf: a model or a SuiteError, nothing else (no crash,
// no other exception, no sanitizer report); a loaded model's neutral
// configuration is within its limits and its forward kinematics is defined.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/urdf.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ikbench::UrdfModel u;
  try {
    u = ikbench::parseUrdf(text, "fuzz.urdf");
  } catch (const ikbench::SuiteError&) {
    return 0;
  }
  const ikbench::Model& m = *u.model;
  const Eigen::VectorXd q = m.neutralConfiguration();
  IKBENCH_FUZZ_CHECK(q.size() == m.nq() && ikbench::withinLimits(m, q, 0.0));
  ikbench::Data d(m);
  ikbench::forwardKinematics(m, q, d);
  return 0;
}
