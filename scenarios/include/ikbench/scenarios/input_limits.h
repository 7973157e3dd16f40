// Limits on what the loaders accept from a file. Every limit is checked
// before the input is parsed (or before the structure it bounds is built), so
// a hostile or corrupted file gets a clear error naming the file and line,
// never a stack overflow or an allocation sized by the file.
#pragma once

#include <cstddef>
#include <string>

namespace ikbench {

// Largest suite, URDF or BVH file read (bytes).
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{1} << 30;
// Deepest nesting of JSON objects/arrays in a suite file (shipped suites use 4).
inline constexpr int kMaxJsonNesting = 64;
// Deepest nesting of XML elements in a URDF (URDFs are flat: <robot><joint><origin>).
inline constexpr int kMaxXmlNesting = 64;
// Deepest joint hierarchy in a BVH (mocap skeletons are about 10 deep).
inline constexpr int kMaxBvhNesting = 256;
// Most joints in a URDF or BVH file.
inline constexpr int kMaxJoints = 100000;
// Most joints over the distinct models of one random family (models x joints).
inline constexpr long kMaxFamilyJoints = 1000000;
// Most frames in a BVH clip, and most motion values (frames x channels).
inline constexpr long kMaxBvhFrames = 10000000;
inline constexpr long kMaxBvhValues = 100000000;

// Reads a whole input file; throws SuiteError naming `what` and the path if it
// cannot be opened, is not a regular file, or exceeds kMaxInputFileBytes.
std::string readInputFile(const std::string& path, const char* what);

}  // namespace ikbench
