// playground_session: the playground's Session (session.h) as a native
// command, for the tests that hold the WebAssembly build to the native one.
//
//   playground_session CALLS.json
//
// CALLS.json is an array of [method, argument] pairs (the argument a JSON
// value, passed to the method as its text); prints one JSON array with each
// call's answer, in order. tests/playground/session_cli.js does the same with
// the WebAssembly module. Exit status: 0 done (answers may hold "error"),
// 2 an unreadable CALLS.json.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "session.h"

int main(int argc, char** argv) {
  using nlohmann::json;
  if (argc != 2) {
    std::cerr << "usage: playground_session CALLS.json\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  std::stringstream text;
  text << in.rdbuf();
  const json calls = json::parse(text.str(), nullptr, false);
  if (!in || calls.is_discarded() || !calls.is_array()) {
    std::cerr << fmt::format("playground_session: {}: expected a JSON array of [method, argument] pairs\n", argv[1]);
    return 2;
  }
  ikbench::playground::Session session;
  json out = json::array();
  for (size_t k = 0; k < calls.size(); ++k) {
    const json& c = calls[k];
    if (!c.is_array() || c.size() != 2 || !c[0].is_string()) {
      std::cerr << fmt::format("playground_session: {}: call {} is not a [method, argument] pair\n", argv[1], k);
      return 2;
    }
    out.push_back(json::parse(session.call(c[0].get<std::string>(), c[1].dump())));
  }
  std::cout << out.dump() << "\n";
  return 0;
}
