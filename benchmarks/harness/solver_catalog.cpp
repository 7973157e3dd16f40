#include "harness/solver_catalog.h"

#include "ikbench/solvers/registry.h"

namespace ikbench::harness {

nlohmann::json solversJson() {
  using nlohmann::json;
  auto param = [](const ParamInfo& p) {
    return json{{"name", p.name},     {"type", kParamTypeNames.name(p.type)},
                {"default", p.default_value}, {"range", p.rangeText()},
                {"unit", p.unit},     {"help", p.help}};
  };
  json backends = json::array();
  for (const SolverInfo& info : Registry::global().list()) {
    json params = json::array();
    for (const ParamInfo& p : info.params) params.push_back(param(p));
    backends.push_back({{"name", info.name}, {"description", info.description}, {"parameters", params}});
  }
  json common = json::array();
  for (const ParamInfo& p : Registry::commonParams()) common.push_back(param(p));
  json presets = json::array();
  for (const PresetInfo& p : Registry::global().presets())
    presets.push_back({{"name", p.name}, {"spec", p.spec}, {"description", p.description}});
  return {{"solvers", backends}, {"common_parameters", common}, {"presets", presets}};
}

}  // namespace ikbench::harness
