// `ikbench playground`: writes playground.html, one self-contained page
// (docs/playground.md). It embeds, as the report embeds plotly:
//   - the WebAssembly module of playground/ (Emscripten, -sSINGLE_FILE:
//     the module's JavaScript with its WebAssembly inside);
//   - three.js, its OrbitControls and TransformControls, from Debian's
//     libjs-three (/usr/share/javascript/three);
//   - the page's own script, style and drawing code (playground/assets/);
//   - the models: the shipped URDF arms and the humanoid skeleton as the
//     default suite's families load them (models.json entries, with the
//     effectors and goal kind of the family), and the native build's solver
//     names (so the page can say which backends it lacks);
//   - with --run DIR, the models of that run with their recorded scenes.
// Random and planar chains are generated in the page by the module.
#pragma once

#include <string>
#include <vector>

namespace ikbench::playground {

struct PlaygroundOptions {
  std::string out = "playground.html";
  std::string module;      // the module's .js; empty: $IKBENCH_PLAYGROUND_MODULE, else the build's
  std::string assets_dir;  // playground/assets; empty: this source tree's
  std::string three_dir;   // empty: $IKBENCH_THREE_DIR, else /usr/share/javascript/three
  // Results directories whose models the page offers too, each in the scene
  // it was checked in (a URDF's meshes, an MJCF's geoms, an SRDF's pairs).
  std::vector<std::string> runs;
};

// The page's text. HarnessError naming the missing file and how to get it.
std::string playgroundPage(const PlaygroundOptions& options);
// Writes it to options.out (writeOutputFile's rules); returns the path.
std::string writePlayground(const PlaygroundOptions& options);

}  // namespace ikbench::playground
