#include "playground_page.h"

#include <fmt/format.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "harness/build_info.h"
#include "harness/results_format.h"
#include "harness/results_reader.h"
#include "harness/run_config.h"
#include "harness/run_directory.h"
#include "ikbench/scenarios/scene.h"
#include "ikbench/scenarios/input_limits.h"
#include "ikbench/scenarios/suite.h"
#include "ikbench/solvers/registry.h"

namespace ikbench::playground {

using namespace harness;

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The families of the default suite whose models the page offers (the
// shipped arms and the humanoid with anatomical limits); random and planar
// chains are made in the page.
constexpr const char* kModelSuite = "default";
constexpr const char* kHumanoidFamily = "humanoid-anatomical";

// A part of the page: a regular file within the input limit (a device, a
// FIFO or a directory is refused without reading it).
std::string readText(const fs::path& path, const std::string& what, const std::string& hint) {
  if (path.empty()) throw HarnessError(fmt::format("playground: no {}{}", what, hint));
  try {
    return readInputFile(path.string(), what.c_str());
  } catch (const SuiteError& e) {
    throw HarnessError(fmt::format("playground: {}{}", e.what(), hint));
  }
}

std::string envOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

// Text placed inside <script>: "</script" would end the element early.
std::string scriptSafe(std::string text) {
  for (size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 3)) text.replace(at, 2, "<\\/");
  return text;
}

// A model of the page: its goals (those of its family's first problem:
// reachable targets, FK of a random configuration) and its models.json entry.
json pageModel(const std::string& key, const std::string& label, const std::string& kind, const Problem& p,
               json model) {
  json goals = json::array();
  for (const Goal& g : p.goals) {
    const Eigen::Quaterniond r(g.target_orientation);
    goals.push_back({{"body", p.model->bodyName(g.body)},
                     {"point", {g.point.x(), g.point.y(), g.point.z()}},
                     {"target_position", {g.target_position.x(), g.target_position.y(), g.target_position.z()}},
                     {"target_quat_xyzw", {r.x(), r.y(), r.z(), r.w()}}});
  }
  return {{"key", key}, {"label", label}, {"kind", kind}, {"goals", goals}, {"model", std::move(model)}};
}

// The models of the page: per family of the default suite, its first problem's model and goals.
json pageModels() {
  const Suite suite = loadSuite(kModelSuite);
  json models = json::array();
  for (const Family& f : suite.families) {
    const bool arm = f.type == "urdf";
    if ((!arm && f.name != kHumanoidFamily) || f.problems.empty()) continue;
    const Problem& p = f.problems.front();
    const std::string key = arm ? f.robot : "humanoid";
    const std::string source = fs::path(f.source).filename().string();
    const std::string from = source.empty() ? "" : fmt::format(" ({})", source);  // a built-in skeleton has no file
    models.push_back(pageModel(key,
                               arm ? fmt::format("{}{}", f.robot, from)
                                   : fmt::format("humanoid skeleton, {} effectors{}", p.goals.size(), from),
                               f.goal == "mixed" ? "pose" : f.goal, p, modelToJson(*p.model, key, source)));
  }
  return models;
}

// The models of a results directory, each with the scene it was checked in
// (models.json's entry as written: the links' own geometry, meshes
// included) and its first family's first problem's goals.
json runModels(const std::string& dir) {
  const ResultsDirectory r = readResults(dir, true, false);
  std::map<std::string, json> by_id;  // models.json's entries, from the reader's one parse
  const auto models = readModels(r, nullptr, &by_id);
  const auto problems = readProblems(r, models);
  const std::string run = fs::path(dir).lexically_normal().filename().string();
  // Each model's entry as written, by the model the reader built from it;
  // taken at the model's first problem.
  std::map<const Model*, json> entries;
  for (auto& [id, m] : by_id) entries[models.at(id).get()] = std::move(m);
  json out = json::array();
  for (const auto& [key, p] : problems) {
    auto node = entries.extract(p.model.get());
    if (node.empty()) continue;
    json entry = std::move(node.mapped());
    const std::string id = entry["id"].get<std::string>();
    bool pose = false;
    for (const Goal& g : p.goals) pose = pose || g.kind != GoalKind::kPosition;
    const std::string family = r.families.at(static_cast<size_t>(key.first));
    // models.json writes null for what a model has not (a generated chain's source).
    auto text = [](const json& object, const char* key, const std::string& otherwise) {
      const auto it = object.find(key);
      return it != object.end() && it->is_string() ? it->get<std::string>() : otherwise;
    };
    const std::string scene = entry.contains("scene") && entry["scene"].is_object()
                                  ? fmt::format(", scene '{}'", text(entry["scene"], "name", ""))
                                  : "";
    entry["id"] = fmt::format("{}/{}", run, id);  // the page's id: unique across runs
    const std::string name = text(entry, "name", id), source = fs::path(text(entry, "source", "")).filename().string();
    out.push_back(pageModel(fmt::format("run:{}/{}", run, id),
                            fmt::format("{}{} (run {}, family {}{})", name, source.empty() ? "" : ", " + source, run,
                                        family, scene),
                            pose ? "pose" : "position", p, std::move(entry)));
  }
  if (out.empty()) throw HarnessError(fmt::format("playground: {}: the run has no problems", dir));
  return out;
}

// The shipped scenes (<data>/scenes/*.json, docs/collision.md), each checked
// by the scene reader here and embedded as its file's JSON: the page builds
// them on its model with the module's own reader (Session.setScene), so that
// a seeded box field gets a new seed in the page.
json pageScenes() {
  json scenes = json::array();
  const fs::path dir = fs::path(dataDirectory()) / "scenes";
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    const Scene scene = loadScene(f.string());
    json file = json::parse(readText(f, "the scene", ""));
    scenes.push_back({{"name", scene.name},
                      {"file", f.filename().string()},
                      {"description", scene.description},
                      {"obstacles", scene.obstacles.size()},
                      {"scene", std::move(file)}});
  }
  return scenes;
}

}  // namespace

std::string playgroundPage(const PlaygroundOptions& options) {
  const fs::path assets = options.assets_dir.empty() ? fs::path(IKBENCH_PLAYGROUND_ASSETS_DIR) : fs::path(options.assets_dir);
  const std::string module_path =
      !options.module.empty() ? options.module : envOr("IKBENCH_PLAYGROUND_MODULE", IKBENCH_PLAYGROUND_MODULE);
  const fs::path three = !options.three_dir.empty() ? fs::path(options.three_dir)
                                                     : fs::path(envOr("IKBENCH_THREE_DIR", "/usr/share/javascript/three"));
  const std::string three_hint = " (Debian: libjs-three; scripts/setup.sh installs it)";
  const std::string module =
      readText(module_path, "the WebAssembly module",
               !options.module.empty() ? ""
               : module_path.empty()
                   ? " (this ikbench was built without it: install emscripten, reconfigure, build playground_wasm)"
                   : " (build it: cmake --build --preset release --target playground_wasm, or the wasm preset)");
  const std::string three_js = readText(three / "build/three.min.js", "three.js", three_hint) + "\n" +
                               readText(three / "examples/js/controls/OrbitControls.js", "three.js", three_hint) + "\n" +
                               readText(three / "examples/js/controls/TransformControls.js", "three.js", three_hint);
  const std::string js = readText(assets / "scene.js", "the page's script", "") + "\n" +
                         readText(assets / "playground.js", "the page's script", "");

  json models = pageModels();
  for (const std::string& dir : options.runs)
    for (json& m : runModels(dir)) models.push_back(std::move(m));
  json native_solvers = json::array();
  // The built-in backends: an external process (ext) has no place in the page.
  for (const SolverInfo& info : Registry::global().list())
    if (info.name != "ext") native_solvers.push_back(info.name);
  const json data = {{"format", "ikbench-playground/1"},
                     {"revision", gitRevision()},
                     {"models", models},
                     {"scenes", pageScenes()},
                     {"native_solvers", native_solvers}};
  const std::string about = fmt::format(
      "Written by ikbench playground at revision {}. Every solve runs the project's C++ solvers compiled to "
      "WebAssembly (portable kernel, no AVX2); times are this browser's.",
      gitRevision());

  const std::vector<std::pair<std::string, std::string>> parts = {
      {"/*@@CSS@@*/", readText(assets / "playground.css", "the page's style", "")},
      {"@@ABOUT@@", about},
      {"@@DATA@@", scriptSafe(data.dump())},
      {"/*@@THREE@@*/", scriptSafe(three_js)},
      {"/*@@MODULE@@*/", scriptSafe(module)},
      {"/*@@JS@@*/", scriptSafe(js)}};
  // One pass over the template: inserted text is never scanned again.
  const std::string tmpl = readText(assets / "playground.html", "the page's template", "");
  std::string out;
  size_t at = 0;
  while (true) {
    size_t best = std::string::npos;
    const std::pair<std::string, std::string>* which = nullptr;
    for (const auto& p : parts) {
      const size_t k = tmpl.find(p.first, at);
      if (k < best) best = k, which = &p;
    }
    if (which == nullptr) break;
    out.append(tmpl, at, best - at);
    out += which->second;
    at = best + which->first.size();
  }
  out.append(tmpl, at, std::string::npos);
  return out;
}

std::string writePlayground(const PlaygroundOptions& options) {
  checkOutputFile(options.out);
  writeOutputFile(options.out, playgroundPage(options));
  return fs::absolute(options.out).string();
}

}  // namespace ikbench::playground
