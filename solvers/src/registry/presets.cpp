// Named presets: specs listed beside the backends, usable wherever a spec is.
#include "ikbench/solvers/registry.h"

namespace ikbench {

void registerPresets(Registry& registry) {
  // Sugihara's error-damped DLS (lambda^2 = err_gain |e|^2 + lambda_min^2, no
  // eigenvalues), the limit mode chosen from the problem (the freeze loop on
  // a redundant chain, the clamp on a 6-DOF arm), a 2 rad step clamp and short attempts
  // (12 iterations, and abandoned as soon as 4 iterations pass without the
  // residual norm dropping by 35 %) with seeded random restarts until the 5 ms
  // budget ends: with restarts the mean time is set by how cheaply a failing
  // attempt is abandoned. Chosen by `ikbench tune` on the tuning set of
  // docs/tuning.md (success >= 99.95 %, then the lowest geometric mean of the
  // families' mean times) and evaluated on its evaluation set, arms it never
  // saw; the limit mode and the stall window by further tune runs on the same
  // sets: the commands, both sets' figures and the per-arm table are in
  // docs/tuning.md. Before any of it, the closed-form stage (closed_form=auto,
  // closed_form_stage.h): a 6R arm analytic-6r solves is answered in closed
  // form, one that almost qualifies starts from the closed form of its
  // idealised chain. collision=reject changes nothing off a scene (the compiled
  // kernel still runs it); in a scene it is the collision-aware form, chosen
  // over collision=avoid by the measurements of docs/collision.md.
  registry.addPreset({"auto",
                      "dls-adaptive:restarts=5000:time_budget_us=5000:mode=error:err_gain=0.05:limits=auto:max_step=2:"
                      "max_iterations=12:stall_iterations=4:stall_relative_improvement=0.35:closed_form=auto:"
                      "collision=reject",
                      "the general-purpose recipe (no per-robot parameter): the closed form where the chain is a 6R arm "
                      "analytic-6r solves (or almost: the start then comes from it), else error-damped DLS with short "
                      "attempts, abandoned when they stop converging, and random restarts within a 5 ms budget; the "
                      "default solver of ikbench run --urdf; in a family with a scene a colliding answer is a failed "
                      "attempt (collision=reject, docs/collision.md), off scenes it solves as without the key"});
}

}  // namespace ikbench
