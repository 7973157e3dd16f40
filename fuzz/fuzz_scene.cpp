// Scene JSON text -> parseScene: a scene or a SuiteError; a parsed scene is
// also built into a collision world around a small chain, which accepts it or
// refuses it with std::invalid_argument / SuiteError, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/scenarios/scene.h"
#include "ikbench/scenarios/suite.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (size > 8192) return -1;
  try {
    const ikbench::Scene scene = ikbench::parseScene(text, "/nonexistent/fuzz/scene.json");
    IKBENCH_FUZZ_CHECK(scene.obstacles.size() <= static_cast<size_t>(ikbench::kMaxSceneObstacles));
    if (scene.obstacles.size() > 64) return 0;  // FCL's cost, not the parser's, past this
    ikbench::ChainSpec spec;
    spec.joints = 3;
    const auto model = ikbench::randomChain(spec, 1);
    const auto world = ikbench::buildCollisionWorld(scene, model);
    ikbench::Data d(*model);
    ikbench::forwardKinematics(*model, model->neutralConfiguration(), d);
    const ikbench::CollisionReport r = world->check(d);
    IKBENCH_FUZZ_CHECK(!(r.min_clearance != r.min_clearance));  // not NaN
  } catch (const ikbench::SuiteError&) {
  }
  return 0;
}
