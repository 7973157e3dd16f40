// Scene files: the obstacles around a robot, the rule for its collision
// geometry and the pairs that may touch (docs/collision.md, "Scene files").
//
// A scene is JSON:
//   {"name": "workcell", "description": "...",
//    "units": "m" | "reach",          // "reach": positions and sizes in units of the robot's reach
//    "obstacles": [{"name": "table", "type": "box", "size": [x, y, z],
//                   "position": [x, y, z], "rpy": [r, p, y]},
//                  {"type": "sphere", "radius": r, ...}, {"type": "capsule" | "cylinder",
//                   "radius": r, "length": l, ...}, {"type": "mesh", "file": "part.stl", "scale": s, ...}],
//    "random_boxes": {"count": n, "seed": s, "min": [x, y, z], "max": [x, y, z],
//                     "min_size": [x, y, z], "max_size": [x, y, z], "clear_radius": r},
//    "robot": {"fraction": 0.15, "min_radius": 0.025, "max_radius": 0.06,
//              "links": {"<link>": {"radius": r}}},
//    "disabled_pairs": [["<link>", "<link or obstacle>"], ...],
//    "srdf": "robot.srdf",            // its <disable_collisions> pairs join disabled_pairs (srdf.h)
//    "avoid": {"influence_distance": 0.05, "security_distance": 0.002, "damper_gain": 0.5}}
// Every error names the file, the line and the field and says what was
// expected; counts and sizes are bounded (kMaxSceneObstacles, ...).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ikbench/collision/world.h"
#include "ikbench/kinematics/model.h"

namespace ikbench {

// Most obstacles in a scene (listed and random together), most triangles
// over its meshes, largest size or distance [m] in it.
inline constexpr int kMaxSceneObstacles = 10000;
inline constexpr std::size_t kMaxSceneTriangles = 1000000;
inline constexpr double kMaxSceneExtent = 1000.0;

struct Scene {
  std::string name;         // the file's "name", else its stem
  std::string source;       // the file
  std::string description;
  bool units_reach = false;  // obstacle positions and sizes are in units of the robot's reach
  std::vector<Shape> obstacles;  // random boxes included
  CapsuleRule capsules;
  std::vector<std::pair<std::string, std::string>> disabled;
  std::string srdf;  // an SRDF file whose <disable_collisions> pairs are left out too, or empty
  AvoidanceParameters avoid;
};

Scene loadScene(const std::string& path);
// From a scene file's text; `path` names it in errors and relative mesh
// paths are resolved against its directory.
Scene parseScene(const std::string& text, const std::string& path);

// The robot's reach: the largest distance from the root to a body's origin
// over straight chains (the sum of the rest offsets along the path).
double modelReach(const Model& model);

// The collision world of `scene` around `model`: obstacles scaled by the
// reach when the scene says so, link geometry from `link_shapes` (the URDF's
// <collision>) and capsules fitted to the other links; `more_disabled`
// (an SRDF's pairs on the model's links: Srdf::pairsIn) join the scene's
// own. Throws SuiteError naming the scene file for a pair or link the model
// does not have. (The scene's `srdf` is read by its caller, which knows the
// whole robot description: the urdf and mjcf families and robotFamily, suite.h.)
std::shared_ptr<const CollisionWorld> buildCollisionWorld(
    const Scene& scene, const std::shared_ptr<const Model>& model, std::vector<LinkShape> link_shapes = {},
    const std::vector<std::pair<std::string, std::string>>& more_disabled = {});

}  // namespace ikbench
