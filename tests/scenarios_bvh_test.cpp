// BVH loader: channel order, units, every quirk of the public files, the round
// trip (model FK at each frame = the file's own FK; solving for the effector
// positions from a neutral pose reaches them) and malformed files.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <numbers>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/bvh.h"
#include "ikbench/solvers/registry.h"
#include "test_util.h"

namespace ikbench {
namespace {

constexpr double kDeg = std::numbers::pi / 180.0;
const std::string kShipped = std::string(IKBENCH_SOURCE_DIR) + "/scenarios/data/skeletons/humanoid_walk_wave.bvh";
const std::string kShared = test::corpusFile("skeletons/");

// Largest distance between the model's FK and the file's own FK over every
// joint and End Site of every `stride`-th frame; also the largest rotation
// angle between them.
std::pair<double, double> roundTripError(const BvhClip& clip, int stride = 1) {
  Data d(*clip.model);
  double pos = 0.0, rot = 0.0;
  for (int f = 0; f < clip.numFrames(); f += stride) {
    forwardKinematics(*clip.model, clip.frames[f], d);
    const std::vector<Pose3d> ref = bvhReferencePoses(clip, f);
    for (size_t j = 0; j < clip.joints.size(); ++j) {
      const Pose3d& m = d.world_T_body[clip.joints[j].model_joint];
      pos = std::max(pos, (m.p - ref[j].p).norm());
      rot = std::max(rot, so3::angle(m.R * ref[j].R.transpose()));
    }
  }
  return {pos, rot};
}

TEST(BvhChannels, RotationOrderIsHonoured) {
  const auto text = [](const char* order) {
    return fmt::format(
        "HIERARCHY\nROOT A\n{{\n  OFFSET 0 0 0\n  CHANNELS 3 {}\n  End Site\n  {{\n    OFFSET 0 1 0\n  }}\n}}\n"
        "MOTION\nFrames: 1\nFrame Time: 0.1\n30 45 60\n",
        order);
  };
  // Channels in the file's order: "Zrotation Xrotation Yrotation" with
  // values 30 45 60 means R = Rz(30) Rx(45) Ry(60).
  const BvhClip zxy = parseBvh(text("Zrotation Xrotation Yrotation"), "zxy.bvh", {1.0});
  const Eigen::Matrix3d R =
      (Eigen::AngleAxisd(30 * kDeg, Eigen::Vector3d::UnitZ()) * Eigen::AngleAxisd(45 * kDeg, Eigen::Vector3d::UnitX()) *
       Eigen::AngleAxisd(60 * kDeg, Eigen::Vector3d::UnitY()))
          .toRotationMatrix();
  ASSERT_EQ(zxy.model->type(0), JointType::kBall);
  Data d(*zxy.model);
  forwardKinematics(*zxy.model, zxy.frames[0], d);
  EXPECT_LT((d.world_T_body[1].p - R * Eigen::Vector3d(0, 1, 0)).norm(), 1e-12);
  EXPECT_LT((d.world_T_body[0].R - R).norm(), 1e-12);
  // The same numbers in another order give another rotation.
  const BvhClip yxz = parseBvh(text("Yrotation Xrotation Zrotation"), "yxz.bvh", {1.0});
  forwardKinematics(*yxz.model, yxz.frames[0], d);
  EXPECT_GT((d.world_T_body[0].R - R).norm(), 0.1);
}

TEST(BvhChannels, ScaleAndStaticRoot) {
  const std::string text =
      "HIERARCHY\nROOT R\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
      " JOINT B\n {\n  OFFSET 0 100 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n  End Site\n  {\n   OFFSET 0 50 0\n "
      " }\n }\n}\n"
      "MOTION\nFrames: 2\nFrame Time: 0.5\n0 0 0 0 0 0 0 0 0\n0 0 0 0 0 0 90 0 0\n";
  // Auto scale: a 150-unit skeleton is in centimetres.
  const BvhClip c = parseBvh(text, "cm.bvh");
  EXPECT_DOUBLE_EQ(c.scale, 0.01);
  // The root's channels are all zero: it becomes the fixed world frame.
  EXPECT_EQ(c.model->type(0), JointType::kFixed);
  EXPECT_EQ(c.model->nv(), 3);
  EXPECT_EQ(c.notes.size(), 1u);
  Data d(*c.model);
  forwardKinematics(*c.model, c.frames[1], d);
  EXPECT_LT((d.world_T_body[2].p - Eigen::Vector3d(-0.5, 1.0, 0)).norm(), 1e-12);
  const BvhClip m = parseBvh(text, "cm.bvh", {2.0});
  forwardKinematics(*m.model, m.frames[1], d);
  EXPECT_LT((d.world_T_body[2].p - Eigen::Vector3d(-100, 200, 0)).norm(), 1e-9);
}

TEST(BvhShipped, HumanoidStructureAndRoundTrip) {
  const BvhClip c = loadBvh(kShipped);
  EXPECT_EQ(c.numFrames(), 48);
  EXPECT_NEAR(c.frame_time, 1.0 / 30.0, 1e-7);
  EXPECT_EQ(c.scale, 1.0);  // metres
  EXPECT_EQ(c.joints.size(), 19u + 5u);
  EXPECT_EQ(c.end_effectors.size(), 5u);
  EXPECT_EQ(c.model->type(0), JointType::kFree);
  EXPECT_EQ(c.model->nv(), 6 + 18 * 3);
  const auto [pos, rot] = roundTripError(c);
  EXPECT_LT(pos, 1e-12);
  EXPECT_LT(rot, 1e-12);
  // Head End Site of frame 0: above the hips, about 1.7 m tall figure.
  Data d(*c.model);
  forwardKinematics(*c.model, c.frames[0], d);
  const double head = d.world_T_body[c.model->bodyIndex("Head_end")].p.y();
  EXPECT_GT(head, 1.5);
  EXPECT_LT(head, 1.8);
}

// Solves a tracking family in sequence (each frame from the previous answer,
// the first from the neutral pose) and checks every converged answer by FK.
int solveSequence(const Family& fam, const std::string& spec, int* total) {
  auto solver = Registry::global().create(spec);
  SolverOptions o;
  o.max_iterations = 1000;
  int converged = 0;
  Eigen::VectorXd q;
  for (size_t k = 0; k < fam.problems.size(); ++k) {
    const Problem& p = fam.problems[k];
    if (k == 0) q = p.q0;
    const Summary s = solver->solve(p, q, o);
    EXPECT_TRUE(q.allFinite());
    if (!s.converged()) continue;
    ++converged;
    Data d(*p.model);
    forwardKinematics(*p.model, q, d);
    for (const Goal& g : p.goals) EXPECT_LE((d.world_T_body[g.body].p - g.target_position).norm(), 1e-5);
  }
  *total = static_cast<int>(fam.problems.size());
  return converged;
}

TEST(BvhShipped, TrackingFromNeutralPoseReachesEveryFrame) {
  const Family fam = bvhFamily(kShipped, 0);
  ASSERT_EQ(fam.problems.size(), 48u);
  EXPECT_TRUE(fam.sequential);
  EXPECT_EQ(fam.effectors, 5);
  // Problem 0 starts from the neutral pose (identity rotations).
  const Model& m = *fam.problems[0].model;
  EXPECT_EQ(fam.problems[0].q0.tail(m.nq() - 7), m.neutralConfiguration().tail(m.nq() - 7));
  int total = 0;
  const int converged = solveSequence(fam, "dls:restarts=5", &total);
  EXPECT_EQ(converged, total);
}

// The large public files are parsed once per test binary (Debug + ASan).
const BvhClip& sharedClip(const std::string& file) {
  static std::map<std::string, BvhClip> cache;
  auto it = cache.find(file);
  if (it == cache.end()) it = cache.emplace(file, loadBvh(kShared + file)).first;
  return it->second;
}

struct SharedClip {
  const char* file;
  int joints, end_sites, channels, frames;
  double frame_time, scale;
};
const std::vector<SharedClip> kSharedClips = {
    {"cmu_131_01_walk.bvh", 31, 7, 96, 994, 0.0083333, 0.056444},
    {"cmu_131_03_hop.bvh", 31, 7, 96, 1102, 0.0083333, 0.056444},
    {"bandai_namco_walk_normal_001.bvh", 22, 5, 132, 195, 0.0333333, 0.01},
    {"bandai_namco_kick_normal_001.bvh", 22, 5, 132, 358, 0.0333333, 0.01},
};

TEST(BvhShared, EveryFileLoadsWithReadmeCountsAndRoundTrips) {
  IKBENCH_REQUIRE_CORPUS("skeletons");
  for (const SharedClip& s : kSharedClips) {
    SCOPED_TRACE(s.file);
    const BvhClip& c = sharedClip(s.file);
    EXPECT_EQ(static_cast<int>(c.joints.size()), s.joints + s.end_sites);
    EXPECT_EQ(static_cast<int>(c.end_effectors.size()), s.end_sites);
    EXPECT_EQ(c.motion.cols(), s.channels);
    EXPECT_EQ(c.numFrames(), s.frames);
    EXPECT_DOUBLE_EQ(c.frame_time, s.frame_time);
    EXPECT_DOUBLE_EQ(c.scale, s.scale);
    EXPECT_TRUE(c.motion.allFinite());
    // Model FK = the file's own FK. Bandai Namco's constant per-joint
    // translation channels are fixed at their first-frame values: the
    // deviation bound is what the loader reports.
    const auto [pos, rot] = roundTripError(c, 23);
    EXPECT_LT(pos, 1e-9 + 30 * c.max_translation_deviation);  // <= depth x deviation
    EXPECT_LT(c.max_translation_deviation, 1e-6);
    EXPECT_LT(rot, 1e-9);
  }
}

TEST(BvhShared, RootAndPerJointTranslationHandling) {
  IKBENCH_REQUIRE_CORPUS("skeletons");
  const BvhClip& cmu = sharedClip("cmu_131_01_walk.bvh");
  EXPECT_EQ(cmu.model->type(0), JointType::kFree);  // root with 6 channels
  EXPECT_EQ(cmu.model->nv(), 6 + 30 * 3);
  EXPECT_TRUE(cmu.notes.empty());
  // Zero-length bones (LHipJoint, OFFSET 0 0 0) are kept as joints.
  EXPECT_GE(cmu.model->bodyIndex("LHipJoint"), 0);
  const BvhClip& bn = sharedClip("bandai_namco_walk_normal_001.bvh");
  // joint_Root never moves -> fixed; Hips carries the root motion -> free.
  EXPECT_EQ(bn.model->type(bn.model->bodyIndex("joint_Root")), JointType::kFixed);
  EXPECT_EQ(bn.model->type(bn.model->bodyIndex("Hips")), JointType::kFree);
  EXPECT_EQ(bn.model->nv(), 6 + 20 * 3);
  EXPECT_EQ(bn.notes.size(), 2u);
}

TEST(BvhShared, TrackingSubsetsSolveFromPreviousAnswer) {
  IKBENCH_REQUIRE_CORPUS("skeletons");
  for (const char* f : {"cmu_131_01_walk.bvh", "bandai_namco_kick_normal_001.bvh"}) {
    SCOPED_TRACE(f);
    BvhTrackingSpec spec;
    spec.first = 100;
    spec.count = 4;
    spec.stride = 8;
    const Family fam = bvhTrackingFamily(sharedClip(f), spec, "subset");
    ASSERT_EQ(fam.problems.size(), 4u);
    int total = 0;
    const int converged = solveSequence(fam, "dls:restarts=5", &total);
    EXPECT_GE(converged, total - 1) << converged << " of " << total;
  }
}

TEST(BvhTracking, SpecSelectsFramesAndEffectors) {
  const BvhClip c = loadBvh(kShipped);
  BvhTrackingSpec spec;
  spec.first = 10;
  spec.count = 5;
  spec.stride = 3;
  spec.effectors = {"LeftHand_end", "RightHand_end"};
  const Family fam = bvhTrackingFamily(c, spec, "t");
  ASSERT_EQ(fam.problems.size(), 5u);
  EXPECT_EQ(fam.effectors, 2);
  Data d(*c.model);
  forwardKinematics(*c.model, c.frames[13], d);
  EXPECT_EQ(fam.problems[1].goals[0].target_position, d.world_T_body[c.model->bodyIndex("LeftHand_end")].p);
  spec.effectors = {"Tail_end"};
  EXPECT_THROW(bvhTrackingFamily(c, spec, "t"), SuiteError);
}

// ---- malformed files: one test per case ------------------------------------

const std::string kGood =
    "HIERARCHY\n"                                                                 // 1
    "ROOT Hips\n"                                                                 // 2
    "{\n"                                                                         // 3
    "  OFFSET 0 0 0\n"                                                            // 4
    "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"  // 5
    "  JOINT Leg\n"                                                               // 6
    "  {\n"                                                                       // 7
    "    OFFSET 0 -0.4 0\n"                                                       // 8
    "    CHANNELS 3 Zrotation Xrotation Yrotation\n"                              // 9
    "    End Site\n"                                                              // 10
    "    {\n"                                                                     // 11
    "      OFFSET 0 -0.4 0\n"                                                     // 12
    "    }\n"                                                                     // 13
    "  }\n"                                                                       // 14
    "}\n"                                                                         // 15
    "MOTION\n"                                                                    // 16
    "Frames: 2\n"                                                                 // 17
    "Frame Time: 0.04\n"                                                          // 18
    "0 1 0 0 0 0 10 20 30\n"                                                      // 19
    "0.1 1 0 5 0 0 15 25 35\n";                                                   // 20

void expectBvhError(const std::string& text, const std::vector<std::string>& fragments) {
  try {
    parseBvh(text, "bad.bvh");
  } catch (const SuiteError& e) {
    const std::string what = e.what();
    for (const auto& f : fragments) EXPECT_NE(what.find(f), std::string::npos) << "missing '" << f << "' in: " << what;
    return;
  }
  ADD_FAILURE() << "no SuiteError";
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  s.replace(s.find(from), from.size(), to);
  return s;
}

TEST(BvhMalformed, GoodBaselineParses) {
  const BvhClip c = parseBvh(kGood, "good.bvh");
  EXPECT_EQ(c.numFrames(), 2);
  EXPECT_EQ(c.model->nv(), 9);
}

TEST(BvhMalformed, TruncatedInHierarchy) {
  expectBvhError(kGood.substr(0, kGood.find("    End Site")), {"bad.bvh:9:", "unexpected end of file", "truncated"});
}

TEST(BvhMalformed, TruncatedInMotion) {
  expectBvhError(kGood.substr(0, kGood.size() - 8), {"bad.bvh:20:", "frame 1 has", "expected 9"});
  expectBvhError(kGood.substr(0, kGood.find("0.1 1 0")), {"bad.bvh:", "ends after 1 of 2 frames"});
}

TEST(BvhMalformed, UnknownChannel) {
  expectBvhError(replaced(kGood, "CHANNELS 3 Zrotation Xrotation", "CHANNELS 3 Zrotation Wrotation"),
                 {"bad.bvh:9:", "joint 'Leg'", "unknown channel 'Wrotation'"});
}

TEST(BvhMalformed, NegativeCounts) {
  expectBvhError(replaced(kGood, "CHANNELS 3", "CHANNELS -3"), {"bad.bvh:9:", "channel count is -3"});
  expectBvhError(replaced(kGood, "Frames: 2", "Frames: -2"), {"bad.bvh:17:", "number of frames is -2"});
}

TEST(BvhMalformed, NanInOffsetAndMotion) {
  expectBvhError(replaced(kGood, "OFFSET 0 -0.4 0\n    CHANNELS", "OFFSET 0 nan 0\n    CHANNELS"),
                 {"bad.bvh:8:", "OFFSET value is 'nan'", "finite"});
  expectBvhError(replaced(kGood, "0.1 1 0 5", "0.1 inf 0 5"), {"bad.bvh:20:", "frame 1, value 2", "'inf'"});
}

TEST(BvhMalformed, StructureErrors) {
  expectBvhError("", {"bad.bvh:1:", "empty file"});
  expectBvhError(replaced(kGood, "HIERARCHY", "HIERARCHIE"), {"bad.bvh:1:", "expected 'HIERARCHY'"});
  expectBvhError(replaced(kGood, "  JOINT Leg", "  BONE Leg"), {"bad.bvh:6:", "expected JOINT, End Site or '}'"});
  expectBvhError(replaced(kGood, "JOINT Leg", "JOINT Hips"), {"bad.bvh:6:", "'Hips' is used twice"});
  expectBvhError(replaced(kGood, "Frame Time: 0.04", "Frame Time: 0"), {"bad.bvh:18:", "frame time"});
  expectBvhError(kGood + "1 2 3\n", {"bad.bvh:21:", "after the 2 declared frames"});
  expectBvhError(replaced(kGood, "10 20 30", "10 20 30 40"), {"bad.bvh:19:", "more than 9 values"});
  expectBvhError(replaced(kGood, "10 20 30", "10 2O 30"), {"bad.bvh:19:", "expected a number, found '2O'"});
}

TEST(BvhMalformed, QuirksAreAccepted) {
  // CRLF mixed with LF, tabs, trailing blanks, a frame time without a leading
  // zero and a zero-length bone.
  std::string t = replaced(kGood, "Frame Time: 0.04\n", "Frame Time:\t.04\r\n");
  t = replaced(t, "  OFFSET 0 0 0\n", "\tOFFSET 0 0 0  \r\n");
  t = replaced(t, "OFFSET 0 -0.4 0\n    CHANNELS", "OFFSET 0 0 0\n    CHANNELS");
  const BvhClip c = parseBvh(t, "quirks.bvh", {1.0});
  EXPECT_DOUBLE_EQ(c.frame_time, 0.04);
  EXPECT_EQ(c.numFrames(), 2);
  EXPECT_LT(roundTripError(c).first, 1e-12);
}

TEST(BvhMalformed, MissingFile) { EXPECT_THROW(loadBvh("/nonexistent/clip.bvh"), SuiteError); }

}  // namespace
}  // namespace ikbench

namespace ikbench {
namespace {

// Every prefix of a valid file either parses or throws SuiteError naming it.
TEST(BvhMalformed, TruncationSweepNeverCrashes) {
  std::ifstream in(kShipped);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(text.size(), 5000u);
  int errors = 0;
  for (size_t k = 0; k < text.size(); k += 61) {
    try {
      parseBvh(text.substr(0, k), "cut.bvh");
    } catch (const SuiteError& e) {
      ++errors;
      EXPECT_EQ(std::string(e.what()).rfind("cut.bvh:", 0), 0u) << e.what();
    }
  }
  EXPECT_GT(errors, 50);
}

}  // namespace
}  // namespace ikbench
