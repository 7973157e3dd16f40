// The WebAssembly twin of playground_session (playground/session_cli.cpp):
//   node session_cli.js MODULE.js CALLS.json
// runs every [method, argument] call of CALLS.json on the module's Session
// and prints one JSON array of the answers, as the native command does.
"use strict";
const fs = require("fs");
const path = require("path");

if (process.argv.length !== 4) {
  console.error("usage: node session_cli.js MODULE.js CALLS.json");
  process.exit(2);
}
const create = require(path.resolve(process.argv[2]));
let calls;
try {
  calls = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
  if (!Array.isArray(calls)) throw new Error("not an array");
} catch (e) {
  console.error(`session_cli.js: ${process.argv[3]}: expected a JSON array of [method, argument] pairs (${e.message})`);
  process.exit(2);
}
create().then((Module) => {
  const session = new Module.Session();
  const out = calls.map((c, k) => {
    if (!Array.isArray(c) || c.length !== 2 || typeof c[0] !== "string") {
      console.error(`session_cli.js: call ${k} is not a [method, argument] pair`);
      process.exit(2);
    }
    return JSON.parse(session.call(c[0], JSON.stringify(c[1])));
  });
  session.delete();
  process.stdout.write(JSON.stringify(out) + "\n");
});
