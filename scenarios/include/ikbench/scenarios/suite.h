// Suites: named, seeded collections of scenario families, read from JSON
// suite files (scenarios/data/suites/*.json or a user's own file).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ikbench/kinematics/goal.h"
#include "ikbench/core/solver_options.h"

namespace ikbench {

// Bad suite file or loader input; what() names the file, line and field and
// says what was expected.
class SuiteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One family of problems in a suite: one model source and one goal set.
struct Family {
  std::string name;  // unique within the suite, e.g. "chain7-position"
  std::string description;
  std::vector<Problem> problems;
  int dof = 0;        // nv of the family's model(s)
  int effectors = 0;  // goals per problem
  std::string goal;   // "position" | "orientation" | "pose" | "mixed"
  std::string type;    // the family type: "random_chain", "random_tree", "urdf", "mjcf", "bvh", "skeleton"
  std::string source;  // the URDF, MJCF or BVH file of a loaded model, else empty
  std::string robot;   // the robot's name for a URDF family (per-robot tables), else empty
  std::string scene;   // the scene file of a family posed in a scene (Problem::collision), else empty
  // Trajectory / mocap tracking ("previous solution" start policy): problem
  // i starts from the solver's answer to problem i-1, so the harness runs the
  // family in order on one thread; problems[i].q0 is used only for i == 0.
  bool sequential = false;
  // How its answers are judged (docs/protocols.md). `targets`: "reachable"
  // when every target has a known solution (FK of a configuration within
  // the limits), "unreachable" when none has (beyond an upper bound of the
  // reach). `start`: the seed regime (nominal, zero, random, previous,
  // near:D). Problems t * starts_per_target + k are target t from its k-th
  // start. A sequential family's frames are 1 / frame_rate seconds apart (0:
  // no frame rate), and a joint jump above branch_jump [rad or m] between
  // consecutive answers counts as a switch of solution branch.
  std::string targets = "reachable";
  std::string start = "nominal";
  int starts_per_target = 1;
  double frame_rate = 0.0;
  double branch_jump = 0.0;
};

struct Suite {
  std::string name;    // "quick", "default", or the file's stem
  // The evaluation protocol the suite follows ("trac-ik", "ikfast-test",
  // "seeds", "tracking": scenarios/data/protocols/), or empty. A protocol's
  // run records the quality of every answer (docs/protocols.md).
  std::string protocol;
  std::string source;  // path of the suite file
  std::uint64_t seed = 0;  // master seed; every family's seed derives from it
  SolverOptions options;   // tolerances, iteration cap, budget from the file
  std::vector<std::string> solvers;  // default solver specs of the suite
  std::vector<Family> families;
};

// Directory of the shipped data (scenarios/data): $IKBENCH_DATA_DIR if set,
// else the source tree's, else the installed copy.
std::string dataDirectory();
// Names of the shipped suites (files in <data>/suites/).
std::vector<std::string> builtinSuiteNames();
// Loads a shipped suite by name or a suite file by path and builds every
// family deterministically from the seed (seed_override replaces the file's).
Suite loadSuite(const std::string& name_or_path, std::optional<std::uint64_t> seed_override = std::nullopt);
// The same from the text of a suite file; `path` names it in errors and
// relative model paths in it are resolved against its directory.
Suite parseSuite(const std::string& text, const std::string& path,
                 std::optional<std::uint64_t> seed_override = std::nullopt);

// For `ikbench run --urdf FILE`: `samples` random reachable pose targets
// within limits on the chain base -> tip (whole model's leaves if empty),
// started at the middle of the limits. The family is named <robot>-pose
// (robot = the file's stem) when the tip is the default one (the only leaf
// link moved by a joint), whether or not it was given, else
// <robot>-<tip>-pose. With a scene file, the targets come from collision-free
// configurations in it, every problem carries it, and the scene's name joins
// the family's: <robot>-<scene>-pose.
Family urdfFamily(const std::string& path, const std::string& base, const std::string& tip, int samples,
                  std::uint64_t seed, const std::string& scene = "");

// What `ikbench run` takes beside the robot file (docs/collision.md).
struct RobotFiles {
  bool mjcf = false;        // the robot file is MJCF (mjcf.h), else URDF
  std::string srdf;         // an SRDF: its disabled pairs join the scene's (a scene of no obstacles without one)
  std::string start_state;  // a <group_state> of the SRDF: every problem starts there
  std::vector<std::string> package_path;  // where package://NAME/ mesh paths are looked up (urdf.h)
  std::string geometry = "mesh";          // the links' collision geometry: mesh, hull or capsules (urdf.h)
};
// urdfFamily with those: the family of an MJCF file is named like a URDF's.
Family robotFamily(const std::string& path, const std::string& base, const std::string& tip, int samples,
                   std::uint64_t seed, const std::string& scene, const RobotFiles& files);
// The names of the shipped protocols (files in <data>/protocols/).
std::vector<std::string> builtinProtocolNames();
// For `ikbench run --protocol NAME --urdf FILE [--base B --tip T]`: the
// protocol's suite template (<data>/protocols/NAME.json) for the chain base ->
// tip of the URDF (the tip as urdfFamily resolves it). The template's family
// fields name, description, file, base and tip may hold {robot} (the file's
// stem, plus -<tip> for a tip other than the default), {urdf}, {base} and
// {tip}. `count` replaces every family's count (targets, or a path's
// frames). SuiteError for an unknown protocol or a bad URDF.
Suite loadProtocol(const std::string& name, const std::string& urdf, const std::string& base, const std::string& tip,
                   std::optional<std::uint64_t> seed_override = std::nullopt,
                   std::optional<int> count = std::nullopt);

// For `ikbench run --bvh FILE`: the file's own motion frames as goals (end
// effector positions per frame), solved in sequence from the previous answer.
Family bvhFamily(const std::string& path, std::uint64_t seed);

}  // namespace ikbench
