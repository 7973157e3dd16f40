// BVH motion capture (Biovision hierarchy) as an ikbench Model plus one
// configuration per motion frame.
//
// HIERARCHY: every ROOT/JOINT becomes a Model joint named after it; an End
// Site becomes a fixed body "<parent>_end" (the effectors). The OFFSET is the
// rest translation from the parent. Channels:
// * rotation channels -> a ball joint whose quaternion is the product of the
//   channel rotations in the file's order (e.g. "Zrotation Xrotation
//   Yrotation" gives R = Rz(a) Rx(b) Ry(c)), angles in degrees in the file;
// * translation channels that MOVE during the clip (more than
//   BvhOptions::static_tolerance file units from their first-frame value;
//   e.g. the root of CMU files, `Hips` under the static `joint_Root` of
//   Bandai Namco files) -> a free joint (translation replaces the OFFSET, as
//   in the files where the channels repeat the OFFSET);
// * translation channels that stay constant (Bandai Namco's 6 channels on
//   every joint, which repeat the OFFSET) -> approximated by their
//   first-frame values as a fixed translation (BvhClip::notes says so); the
//   largest deviation over the clip is recorded in
//   BvhClip::max_translation_deviation (metres);
// * a root whose channel values are all zero in every frame (Bandai Namco's
//   `joint_Root`) -> a fixed joint (the world frame);
// * no channels -> fixed.
// Units: positions are multiplied by `scale` (metres per file unit). With
// scale = 0 (auto) it is guessed from the rest skeleton's size S (the largest
// root-to-end-site distance): S < 5 -> metres (1), S > 50 -> centimetres
// (0.01), otherwise CMU ASF units (0.056444 m = 1/0.45 inch, the factor of
// the metre-scaled CMU BVH releases).
// Parsing accepts any whitespace (spaces, tabs, CRLF or LF, mixed), numbers
// without a leading zero (".0083333"), zero-length bones. Errors (SuiteError)
// name the file, the line and what was expected: truncated files, unknown
// channels, negative or non-numeric counts, NaN/inf values, unbalanced braces.
#pragma once

#include <Eigen/Core>
#include <memory>
#include <string>
#include <vector>

#include "ikbench/kinematics/model.h"
#include "ikbench/kinematics/pose.h"
#include "ikbench/scenarios/suite.h"

namespace ikbench {

enum class BvhChannel { kXpos, kYpos, kZpos, kXrot, kYrot, kZrot };

struct BvhJoint {
  std::string name;                                  // "<parent>_end" for End Sites
  int parent = -1;                                   // index into BvhClip::joints
  Eigen::Vector3d offset = Eigen::Vector3d::Zero();  // file units
  std::vector<BvhChannel> channels;
  int first_channel = 0;  // column of its first channel in a motion row
  bool end_site = false;
  int model_joint = -1;  // index of its Model joint (== body)
};

struct BvhOptions {
  double scale = 0.0;  // metres per file unit; 0 = auto (see above)
  // Translation channels whose values stay within this distance [file
  // units] of their first-frame value are treated as constant.
  double static_tolerance = 1e-3;
  // Total body mass [kg] spread over the segments by Winter's anthropometric
  // table (skeleton.h, assignAnthropometricMasses) for centre-of-mass goals.
  double body_mass = 70.0;
};

struct BvhClip {
  std::shared_ptr<const Model> model;
  std::vector<BvhJoint> joints;            // file order (End Sites included)
  Eigen::MatrixXd motion;                  // frames x channels, as in the file
  std::vector<Eigen::VectorXd> frames;     // q (nq) of the model per frame
  double frame_time = 0.0;                 // seconds
  double scale = 1.0;                      // metres per file unit actually used
  std::vector<int> end_effectors;          // model bodies of the End Sites
  std::vector<std::string> notes;          // approximations made
  double max_translation_deviation = 0.0;  // [m], see above
  int numFrames() const { return static_cast<int>(frames.size()); }
};

BvhClip loadBvh(const std::string& path, const BvhOptions& options = {});
BvhClip parseBvh(const std::string& text, const std::string& source, const BvhOptions& options = {});

// The BVH's own forward kinematics of frame `frame`, straight from the raw
// channel values (translation channels replace the OFFSET, rotations in file
// order), independent of the Model: world pose of every BvhClip::joints entry
// in metres. Used to verify the model (round trip).
std::vector<Pose3d> bvhReferencePoses(const BvhClip& clip, int frame);

// Goals of a mocap tracking sequence: problem k has one position goal per
// effector body (End Sites by default) at its FK position at frame
// first + k * stride; problems run in sequence from the previous answer;
// problem 0 starts from the neutral pose (identity rotations) with the root
// translation of the first frame.
struct BvhTrackingSpec {
  int first = 0;
  int count = -1;  // -1: every remaining frame
  int stride = 1;
  std::vector<std::string> effectors;  // body names; empty = End Sites
};
Family bvhTrackingFamily(const BvhClip& clip, const BvhTrackingSpec& spec, const std::string& name);

// bvhFamily() with explicit options.
Family bvhFamily(const std::string& path, const BvhOptions& options, const BvhTrackingSpec& spec);

}  // namespace ikbench
