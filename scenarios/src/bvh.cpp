// BVH loader (see bvh.h for the model mapping). The BVH format: Biovision
// Hierarchy, as described by M. Meredith & S. Maddock, "Motion capture file
// formats explained" (2001): rotation channels are applied in the order they
// are listed, so a joint's local transform is T(offset or translation
// channels) * R_c1 * R_c2 * R_c3, and world_T_joint = world_T_parent * local.
#include "ikbench/scenarios/bvh.h"
#include "ikbench/scenarios/skeleton.h"
#include "ikbench/scenarios/input_limits.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numbers>
#include <set>
#include <sstream>

#include "ikbench/kinematics/forward_kinematics.h"

namespace ikbench {
namespace {

// Tokens point into the text (no allocation per token: the CMU files have
// 100k numbers).
struct Token {
  std::string_view text;
  int line;
};

std::vector<Token> tokenize(std::string_view text) {
  std::vector<Token> out;
  int line = 1;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') {
      ++i;
    } else {
      size_t j = i;
      while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      out.push_back({text.substr(i, j - i), line});
      i = j;
    }
  }
  return out;
}

bool parseDouble(std::string_view s, double& v) {
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (b != e && *b == '+') ++b;
  const auto [ptr, ec] = std::from_chars(b, e, v);
  return ec == std::errc() && ptr == e;
}

Eigen::Matrix3d channelRotation(BvhChannel c, double degrees) {
  const double a = degrees * std::numbers::pi / 180.0;
  switch (c) {
    case BvhChannel::kXrot:
      return Eigen::AngleAxisd(a, Eigen::Vector3d::UnitX()).toRotationMatrix();
    case BvhChannel::kYrot:
      return Eigen::AngleAxisd(a, Eigen::Vector3d::UnitY()).toRotationMatrix();
    case BvhChannel::kZrot:
      return Eigen::AngleAxisd(a, Eigen::Vector3d::UnitZ()).toRotationMatrix();
    default:
      return Eigen::Matrix3d::Identity();
  }
}

bool isTranslation(BvhChannel c) { return c == BvhChannel::kXpos || c == BvhChannel::kYpos || c == BvhChannel::kZpos; }

// Local translation (file units) and rotation of joint `j` in frame `f`.
void localTransform(const BvhJoint& j, const Eigen::MatrixXd& motion, int f, Eigen::Vector3d& t, Eigen::Matrix3d& R) {
  t = j.offset;
  R.setIdentity();
  for (size_t k = 0; k < j.channels.size(); ++k) {
    const double v = motion(f, j.first_channel + static_cast<int>(k));
    switch (j.channels[k]) {
      case BvhChannel::kXpos:
        t.x() = v;
        break;
      case BvhChannel::kYpos:
        t.y() = v;
        break;
      case BvhChannel::kZpos:
        t.z() = v;
        break;
      default:
        R = R * channelRotation(j.channels[k], v);
        break;
    }
  }
}

class Parser {
 public:
  // `text` must outlive the parser (tokens point into it).
  Parser(const std::string& text, const std::string& source) : tokens_(tokenize(text)), source_(source) {}

  [[noreturn]] void fail(const std::string& msg, int line = -1) const {
    if (line < 0) line = pos_ < tokens_.size() ? tokens_[pos_].line : (tokens_.empty() ? 1 : tokens_.back().line);
    throw SuiteError(fmt::format("{}:{}: {}", source_, line, msg));
  }
  bool atEnd() const { return pos_ >= tokens_.size(); }
  const Token& next(const char* expected) {
    if (atEnd()) fail(fmt::format("unexpected end of file (truncated file?), expected {}", expected));
    return tokens_[pos_++];
  }
  const Token& peek() const { return tokens_[pos_]; }
  void expect(std::string_view word) {
    const Token& t = next(fmt::format("'{}'", word).c_str());
    if (t.text != word) fail(fmt::format("expected '{}', found '{}'", word, t.text), t.line);
  }
  double number(const char* what) {
    const Token& t = next(what);
    double v = 0.0;
    if (!parseDouble(t.text, v)) fail(fmt::format("expected {} (a number), found '{}'", what, t.text), t.line);
    if (!std::isfinite(v)) fail(fmt::format("{} is '{}' (expected a finite number)", what, t.text), t.line);
    return v;
  }
  long count(const char* what) {
    const Token& t = next(what);
    long v = 0;
    const auto [ptr, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc() || ptr != t.text.data() + t.text.size())
      fail(fmt::format("expected {} (a non-negative integer), found '{}'", what, t.text), t.line);
    if (v < 0) fail(fmt::format("{} is {} (expected a non-negative integer)", what, v), t.line);
    return v;
  }

  // ROOT/JOINT body after the name: { OFFSET .. CHANNELS .. children }
  void joint(int parent, std::string name, int line, int depth) {
    if (depth > kMaxBvhNesting)
      fail(fmt::format("joint '{}' is nested {} levels deep (the limit is {})", name, depth, kMaxBvhNesting), line);
    if (joints_.size() >= static_cast<size_t>(kMaxJoints))
      fail(fmt::format("more than {} joints (the limit)", kMaxJoints), line);
    if (!names_.insert(name).second) fail(fmt::format("joint name '{}' is used twice", name), line);
    BvhJoint j;
    j.name = std::move(name);
    j.parent = parent;
    expect("{");
    expect("OFFSET");
    for (int k = 0; k < 3; ++k) j.offset[k] = number("an OFFSET value");
    const int index = static_cast<int>(joints_.size());
    if (!atEnd() && peek().text == "CHANNELS") {
      ++pos_;
      const long n = count("the channel count");
      if (n > 6) fail(fmt::format("joint '{}' has {} channels (expected at most 6)", j.name, n));
      for (long k = 0; k < n; ++k) {
        const Token& t = next("a channel name");
        static const std::map<std::string, BvhChannel> kNames = {
            {"xposition", BvhChannel::kXpos}, {"yposition", BvhChannel::kYpos}, {"zposition", BvhChannel::kZpos},
            {"xrotation", BvhChannel::kXrot}, {"yrotation", BvhChannel::kYrot}, {"zrotation", BvhChannel::kZrot}};
        std::string lower(t.text);
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        auto it = kNames.find(lower);
        if (it == kNames.end())
          fail(fmt::format("joint '{}': unknown channel '{}' (expected Xposition, Yposition, Zposition, Xrotation, "
                           "Yrotation or Zrotation)",
                           j.name, t.text),
               t.line);
        for (BvhChannel c : j.channels)
          if (c == it->second) fail(fmt::format("joint '{}': channel '{}' listed twice", j.name, t.text), t.line);
        j.channels.push_back(it->second);
      }
    }
    j.first_channel = channels_;
    channels_ += static_cast<int>(j.channels.size());
    joints_.push_back(j);
    while (true) {
      const Token& t = next("JOINT, End Site or '}'");
      if (t.text == "}") break;
      if (t.text == "JOINT") {
        const Token& n = next("a joint name");
        joint(index, std::string(n.text), n.line, depth + 1);
      } else if (t.text == "End") {
        expect("Site");
        BvhJoint e;
        e.parent = index;
        e.end_site = true;
        e.name = joints_[index].name + "_end";
        for (int k = 2; names_.count(e.name); ++k) e.name = fmt::format("{}_end{}", joints_[index].name, k);
        names_.insert(e.name);
        expect("{");
        expect("OFFSET");
        for (int k = 0; k < 3; ++k) e.offset[k] = number("an End Site OFFSET value");
        expect("}");
        e.first_channel = channels_;
        joints_.push_back(e);
      } else {
        fail(fmt::format("expected JOINT, End Site or '}}' in joint '{}', found '{}'", joints_[index].name, t.text),
             t.line);
      }
    }
  }

  void parse(BvhClip& clip) {
    if (tokens_.empty()) fail("empty file (expected HIERARCHY)", 1);
    expect("HIERARCHY");
    const Token& r = next("ROOT");
    if (r.text != "ROOT") fail(fmt::format("expected ROOT, found '{}'", r.text), r.line);
    const Token& name = next("the root joint's name");
    joint(-1, std::string(name.text), name.line, 1);
    if (!atEnd() && peek().text == "ROOT") fail("a second ROOT (only one skeleton per file is supported)");
    expect("MOTION");
    // "Frames:" (possibly "Frames" ":"), "Frame Time:".
    const Token& fr = next("'Frames:'");
    if (fr.text == "Frames")
      expect(":");
    else if (fr.text != "Frames:")
      fail(fmt::format("expected 'Frames:', found '{}'", fr.text), fr.line);
    const long frames = count("the number of frames");
    expect("Frame");
    const Token& ti = next("'Time:'");
    if (ti.text == "Time")
      expect(":");
    else if (ti.text != "Time:")
      fail(fmt::format("expected 'Time:', found '{}'", ti.text), ti.line);
    clip.frame_time = number("the frame time");
    if (!(clip.frame_time > 0.0)) fail(fmt::format("frame time {} (expected > 0)", clip.frame_time), ti.line);
    if (frames > kMaxBvhFrames)
      fail(fmt::format("{} frames is too many (the limit is {})", frames, kMaxBvhFrames), fr.line);
    if (channels_ > 0 && frames > kMaxBvhValues / channels_)
      fail(fmt::format("{} frames of {} channels is too many values (the limit is {})", frames, channels_,
                       kMaxBvhValues),
           fr.line);

    clip.motion.resize(frames, channels_);
    // One frame per line: every line of the MOTION block must hold exactly
    // one frame's values, which catches truncated and corrupted rows.
    for (long f = 0; f < frames && channels_ > 0; ++f) {
      if (atEnd()) fail(fmt::format("the file ends after {} of {} frames (truncated file?)", f, frames));
      const int line = peek().line;
      int k = 0;
      while (!atEnd() && peek().line == line) {
        const Token& t = tokens_[pos_++];
        if (k >= channels_)
          fail(fmt::format("frame {} has more than {} values (expected one frame of {} channel values per line)", f,
                           channels_, channels_),
               t.line);
        double v = 0.0;
        if (!parseDouble(t.text, v))
          fail(fmt::format("frame {}, value {}: expected a number, found '{}'", f, k + 1, t.text), t.line);
        if (!std::isfinite(v))
          fail(fmt::format("frame {}, value {}: '{}' is not a finite number", f, k + 1, t.text), t.line);
        clip.motion(f, k++) = v;
      }
      if (k != channels_)
        fail(fmt::format("frame {} has {} values, expected {} (one per channel; truncated file?)", f, k, channels_),
             line);
    }
    if (!atEnd())
      fail(fmt::format("unexpected '{}' after the {} declared frames (wrong 'Frames:' count?)", peek().text, frames));
    clip.joints = std::move(joints_);
  }

 private:
  std::vector<Token> tokens_;
  std::string source_;
  size_t pos_ = 0;
  std::vector<BvhJoint> joints_;
  std::set<std::string> names_;
  int channels_ = 0;
};

double autoScale(const std::vector<BvhJoint>& joints) {
  std::vector<Eigen::Vector3d> p(joints.size());
  double size = 0.0;
  for (size_t i = 0; i < joints.size(); ++i) {
    p[i] = (joints[i].parent < 0 ? Eigen::Vector3d::Zero() : p[joints[i].parent]) +
           (joints[i].parent < 0 ? Eigen::Vector3d::Zero() : joints[i].offset);
    size = std::max(size, p[i].norm());
  }
  if (size < 5.0) return 1.0;
  if (size > 50.0) return 0.01;
  return 0.056444;
}

}  // namespace

BvhClip parseBvh(const std::string& text, const std::string& source, const BvhOptions& options) {
  if (!(options.scale >= 0.0) || !std::isfinite(options.scale))
    throw SuiteError(fmt::format("{}: scale = {} (expected >= 0; 0 = auto)", source, options.scale));
  BvhClip clip;
  Parser(text, source).parse(clip);
  clip.scale = options.scale > 0.0 ? options.scale : autoScale(clip.joints);
  const int frames = static_cast<int>(clip.motion.rows());
  const double s = clip.scale;

  std::vector<JointSpec> specs;
  std::vector<JointType> kind(clip.joints.size());
  int static_translations = 0;
  for (size_t i = 0; i < clip.joints.size(); ++i) {
    BvhJoint& j = clip.joints[i];
    JointSpec spec;
    spec.name = j.name;
    spec.parent = j.parent < 0 ? -1 : clip.joints[j.parent].model_joint;
    bool has_t = false, has_r = false, t_moves = false, all_zero = true;
    double deviation = 0.0;
    for (size_t k = 0; k < j.channels.size(); ++k) {
      const int col = j.first_channel + static_cast<int>(k);
      double dev = 0.0;
      for (int f = 1; f < frames; ++f) dev = std::max(dev, std::abs(clip.motion(f, col) - clip.motion(0, col)));
      if (isTranslation(j.channels[k])) {
        has_t = true;
        t_moves = t_moves || dev > options.static_tolerance;
        deviation = std::max(deviation, dev);
      } else {
        has_r = true;
      }
      for (int f = 0; f < frames && all_zero; ++f) all_zero = clip.motion(f, col) == 0.0;
    }
    Eigen::Vector3d t0 = j.offset;
    Eigen::Matrix3d R0 = Eigen::Matrix3d::Identity();
    if (frames > 0) localTransform(j, clip.motion, 0, t0, R0);
    if (j.end_site || j.channels.empty()) {
      spec.type = JointType::kFixed;
      spec.parent_T_joint.p = s * j.offset;
    } else if (has_t && t_moves) {
      spec.type = JointType::kFree;  // translation replaces the OFFSET
    } else if (j.parent < 0 && all_zero && frames > 0) {
      // A root whose channels are all zero in every frame (Bandai Namco's
      // joint_Root) is the world frame, not a degree of freedom.
      spec.type = JointType::kFixed;
      spec.parent_T_joint.p = s * t0;
      clip.notes.push_back(fmt::format("root '{}' has all-zero channels: fixed (the world frame)", j.name));
    } else {
      spec.type = has_r ? JointType::kBall : JointType::kFixed;
      spec.parent_T_joint.p = s * t0;
      if (!has_r) spec.parent_T_joint.R = R0;
      if (has_t) {
        ++static_translations;
        clip.max_translation_deviation = std::max(clip.max_translation_deviation, s * deviation);
      }
    }
    kind[i] = spec.type;
    j.model_joint = static_cast<int>(specs.size());
    specs.push_back(std::move(spec));
  }
  if (static_translations > 0)
    clip.notes.push_back(fmt::format(
        "{} joints have constant translation channels: fixed at their first-frame values (max deviation {:.3g} m)",
        static_translations, clip.max_translation_deviation));
  if (!(options.body_mass > 0.0) || !std::isfinite(options.body_mass))
    throw SuiteError(fmt::format("{}: body_mass = {} (expected a finite mass > 0 [kg])", source, options.body_mass));
  const double assigned = assignAnthropometricMasses(specs, options.body_mass);
  if (std::abs(assigned - 1.0) > 1e-9)
    clip.notes.push_back(fmt::format("anthropometric masses: {:.1f}% of the {} kg body mass matched a segment name",
                                     100.0 * assigned, options.body_mass));
  try {
    clip.model = std::make_shared<const Model>(std::move(specs), std::filesystem::path(source).stem().string());
  } catch (const ModelError& e) {
    throw SuiteError(fmt::format("{}: {}", source, e.what()));
  }
  for (const BvhJoint& j : clip.joints)
    if (j.end_site) clip.end_effectors.push_back(j.model_joint);

  // Configurations per frame.
  const Model& m = *clip.model;
  clip.frames.assign(frames, m.neutralConfiguration());
  for (int f = 0; f < frames; ++f) {
    Eigen::VectorXd& q = clip.frames[f];
    for (size_t i = 0; i < clip.joints.size(); ++i) {
      const BvhJoint& j = clip.joints[i];
      if (kind[i] != JointType::kBall && kind[i] != JointType::kFree) continue;
      Eigen::Vector3d t;
      Eigen::Matrix3d R;
      localTransform(j, clip.motion, f, t, R);
      int iq = m.idxQ(j.model_joint);
      if (kind[i] == JointType::kFree) {
        q.segment<3>(iq) = s * t;
        iq += 3;
      }
      q.segment<4>(iq) = Eigen::Quaterniond(R).normalized().coeffs();
    }
  }
  return clip;
}

BvhClip loadBvh(const std::string& path, const BvhOptions& options) {
  return parseBvh(readInputFile(path, "BVH file"), path, options);
}

std::vector<Pose3d> bvhReferencePoses(const BvhClip& clip, int frame) {
  std::vector<Pose3d> out(clip.joints.size());
  for (size_t i = 0; i < clip.joints.size(); ++i) {
    const BvhJoint& j = clip.joints[i];
    Pose3d local;
    Eigen::Vector3d t;
    localTransform(j, clip.motion, frame, t, local.R);
    local.p = clip.scale * t;
    out[i] = j.parent < 0 ? local : out[j.parent] * local;
  }
  return out;
}

Family bvhTrackingFamily(const BvhClip& clip, const BvhTrackingSpec& spec, const std::string& name) {
  const Model& m = *clip.model;
  if (spec.first < 0 || spec.stride < 1)
    throw SuiteError(
        fmt::format("{}: tracking: first = {} must be >= 0 and stride = {} >= 1", name, spec.first, spec.stride));
  std::vector<int> bodies;
  if (spec.effectors.empty()) {
    bodies = clip.end_effectors;
  } else {
    for (const std::string& e : spec.effectors) {
      const int b = m.bodyIndex(e);
      if (b < 0) {
        std::string known;
        for (int x : clip.end_effectors) known += (known.empty() ? "" : ", ") + m.bodyName(x);
        throw SuiteError(fmt::format("{}: unknown effector '{}' (End Sites: {})", name, e, known));
      }
      bodies.push_back(b);
    }
  }
  // Effectors no joint moves (a static End Site) would be trivial goals.
  std::erase_if(bodies, [&](int b) { return m.supportingJoints(b).empty(); });
  Family fam;
  fam.name = name;
  fam.goal = "position";
  fam.sequential = true;
  fam.start = "previous";
  // Frames tracked are stride frames of the clip apart.
  fam.frame_rate = clip.frame_time > 0.0 ? 1.0 / (clip.frame_time * spec.stride) : 0.0;
  fam.branch_jump = 0.5;
  fam.dof = m.nv();
  fam.effectors = static_cast<int>(bodies.size());
  fam.description = fmt::format("mocap tracking of {} ({} joints, {} effectors, {:.4g} fps, scale {} m/unit)", m.name(),
                                m.numJoints(), bodies.size(), 1.0 / clip.frame_time, clip.scale);
  auto model = clip.model;
  Data data(m);
  const int n = clip.numFrames();
  Eigen::VectorXd q_prev;
  for (int f = spec.first, k = 0; f < n && (spec.count < 0 || k < spec.count); f += spec.stride, ++k) {
    forwardKinematics(m, clip.frames[f], data);
    Problem p;
    p.model = model;
    p.name = fmt::format("{}/{}", name, k);
    for (int b : bodies) {
      Goal g;
      g.body = b;
      g.kind = GoalKind::kPosition;
      g.target_position = data.world_T_body[b].p;
      p.goals.push_back(g);
    }
    if (k == 0) {
      // Neutral pose (identity rotations) placed at the frame's root position.
      p.q0 = m.neutralConfiguration();
      for (int j = 0; j < m.numJoints(); ++j)
        if (m.type(j) == JointType::kFree) p.q0.segment<3>(m.idxQ(j)) = clip.frames[f].segment<3>(m.idxQ(j));
    } else {
      p.q0 = q_prev;  // used only if the family is not run in sequence
    }
    q_prev = clip.frames[f];
    fam.problems.push_back(std::move(p));
  }
  return fam;
}

Family bvhFamily(const std::string& path, const BvhOptions& options, const BvhTrackingSpec& spec) {
  const BvhClip clip = loadBvh(path, options);
  return bvhTrackingFamily(clip, spec, std::filesystem::path(path).stem().string() + "-tracking");
}

}  // namespace ikbench
