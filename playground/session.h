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
//   randomChain(spec)    {"id", "dof", "seed", "axes": random|planar|
//                        alternating, "limit"} -> a models.json entry
//                        (scenarios' randomChain)
//   problems(request)    {"model", "count", "seed", "kind", "effectors"} ->
//                        problems.jsonl lines with reachable targets
//                        (scenarios' reachableGoals: FK of a random q)
//   frames(request)      {"model", "q"} -> world pose of every body
//   solve(request)       {"problem", "spec", "trace", "seed"} -> the Summary,
//                        the returned q, its frames and the DOFs at a limit
//   bench(request)       {"problems", "spec", "repeats"} -> mean wall time of
//                        one solve over problems x repeats (timed as a whole)
#pragma once

#include <map>
#include <memory>
#include <string>

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
  std::string frames(const std::string& request) const;
  std::string solve(const std::string& request);
  std::string bench(const std::string& request);

  // One call by method name (the command-line and test driver's entry).
  std::string call(const std::string& method, const std::string& argument);

 private:
  Solver& solver(const std::string& spec);
  std::map<std::string, std::shared_ptr<const Model>> models_;
  std::map<std::string, std::unique_ptr<Solver>> solvers_;  // by spec text, kept between frames
};

}  // namespace ikbench::playground
