// The page's handle on the project's solvers: Session (session.h) exported
// to JavaScript with embind. Every method takes and returns JSON text.
#include <emscripten/bind.h>

#include "session.h"

EMSCRIPTEN_BINDINGS(ikbench_playground) {
  using ikbench::playground::Session;
  emscripten::class_<Session>("Session")
      .constructor<>()
      .function("call", &Session::call)
      .function("catalog", &Session::catalog)
      .function("addModel", &Session::addModel)
      .function("randomChain", &Session::randomChain)
      .function("problems", &Session::problems)
      .function("frames", &Session::frames)
      .function("setScene", &Session::setScene)
      .function("clearance", &Session::clearance)
      .function("solve", &Session::solve)
      .function("bench", &Session::bench);
}
