// The catalog of solver backends as JSON: every registered backend with its
// parameters (name, type, default, range, unit, help: the typed option
// bindings of solvers/include/ikbench/solvers/options_binding.h), the keys
// every solver accepts and the presets. `ikbench list solvers --format json`
// prints it; the playground (playground/) builds its parameter panels from
// the catalog of the WebAssembly build's own registry, so both read one source.
#pragma once

#include <nlohmann/json.hpp>

namespace ikbench::harness {

nlohmann::json solversJson();

}  // namespace ikbench::harness
