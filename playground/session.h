// The playground's interface to the project's kinematics and solvers: the
// same C++ compiled twice, to WebAssembly for the page (wasm_bindings.cpp)
// and natively for the tests that hold the two builds to each other
// (session_cli.cpp). Every call takes and returns JSON text, in the results
// format's own vocabulary (docs/results-format.md): a model is an entry of
// models.json, a problem a line of problems.jsonl. A call never throws: a bad
// request answers {"error": "..."} naming the field and what was expected.
//
//   catalog()            the backends of this build with their typed
//                        parameters (harness/solver_catalog.h)
//   addModel(model)      keeps a model (models.json entry) under its "id"
//                        (a model added again under an id has no scene);
//                        an entry with a "scene" (a run's) keeps that
//                        world as recorded, named in "recorded_scene"
//   randomChain(spec)    {"id", "dof", "seed", "axes": random|planar|
//                        alternating, "limit"} -> a models.json entry
//                        (scenarios' randomChain)
//   problems(request)    {"model", "count", "seed", "kind", "effectors"} ->
//                        problems.jsonl lines with reachable targets
//                        (scenarios' reachableGoals: FK of a random q; in a
//                        scene, of a collision-free one)
//   configurations(request) {"model", "count", "seed"} -> random
//                        configurations within the limits (kinematics'
//                        seeded randomConfiguration), for the tests
//   frames(request)      {"model", "q"} -> world pose of every body (in a
//                        scene also "collision", the clearances of q)
//   setScene(request)    {"model", "scene": a scene file's JSON (docs/collision.md)
//                        or null, "source"} -> the collision world built on
//                        the model (its "scene" entry of models.json, plus the
//                        robot's reach); every later solve of that model is
//                        posed in it (a spec's collision= key then applies);
//                        "scene": "recorded" poses it in the scene its run's
//                        entry came with
//   clearance(request)   {"model", "q"} -> the scene's clearances at q (below),
//                        with every checked pair's distance ("distances", in
//                        the order of the scene's "pairs") and the exact check
//   solve(request)       {"problem", "spec", "trace", "seed"} -> the Summary,
//                        the returned q, its frames and the DOFs at a limit;
//                        in a scene also "collision", the clearances of q
//   bench(request)       {"problems", "spec", "repeats"} -> mean wall time of
//                        one solve over problems x repeats (timed as a whole)
//
// Clearances ("collision" of solve, clearance()): the inner-loop distances
// of collision/world.h (closed-form capsule/box distances on shapes that
// enclose the exact ones, the ones collision=avoid steps with) of every
// checked pair, and per link shape (the scene's "links", in order) the
// smallest over its pairs [m, negative: overlapping] and that pair's name;
// "collision_free" and "min_clearance" over all pairs. "exact" is the world's
// exact check (FCL natively; where FCL is absent, the WebAssembly build,
// the same inner-loop distances), the check a result's collision_free takes.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "ikbench/collision/world.h"
#include "ikbench/kinematics/data.h"
#include "ikbench/kinematics/model.h"
#include "ikbench/solvers/solver.h"

namespace ikbench::playground {

class Session {
 public:
  Session();
  ~Session();

  std::string catalog() const;
  std::string addModel(const std::string& model_json);
  std::string randomChain(const std::string& request) const;
  std::string problems(const std::string& request) const;
  std::string configurations(const std::string& request) const;
  std::string frames(const std::string& request);
  std::string setScene(const std::string& request);
  std::string clearance(const std::string& request);
  std::string solve(const std::string& request);
  std::string bench(const std::string& request);

  // One call by method name (the command-line and test driver's entry).
  std::string call(const std::string& method, const std::string& argument);

 private:
  Solver& solver(const std::string& spec);
  // A problems.jsonl line as a Problem, posed in its model's scene if it has one.
  Problem problem(const nlohmann::json& line, const std::string& where) const;
  // Model id's scene with the FK of q in its buffers (`data`); throws without a scene.
  const CollisionWorld& sceneAt(const std::string& id, const Eigen::VectorXd& q, const Data** data);
  std::map<std::string, std::shared_ptr<const Model>> models_;
  std::map<std::string, std::shared_ptr<const CollisionWorld>> scenes_;  // by model id
  std::map<std::string, std::shared_ptr<const CollisionWorld>> recorded_;  // a run's model's own scene, by id
  // Buffers of the clearance computation, kept between frames.
  std::map<std::string, std::unique_ptr<Data>> scene_data_;  // by model id
  std::vector<ClosestPoints> distances_;
  std::map<std::string, std::unique_ptr<Solver>> solvers_;  // by spec text, kept between frames
};

}  // namespace ikbench::playground
