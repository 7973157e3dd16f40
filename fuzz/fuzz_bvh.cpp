// BVH text -> parseBvh: a clip or a SuiteError; a loaded clip's motion is
// finite and its first frame's reference poses can be computed.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "ikbench/scenarios/bvh.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ikbench::BvhClip clip;
  try {
    clip = ikbench::parseBvh(text, "fuzz.bvh");
  } catch (const ikbench::SuiteError&) {
    return 0;
  }
  IKBENCH_FUZZ_CHECK(clip.motion.allFinite());
  IKBENCH_FUZZ_CHECK(clip.model != nullptr);
  if (clip.numFrames() > 0) (void)ikbench::bvhReferencePoses(clip, 0);
  return 0;
}
