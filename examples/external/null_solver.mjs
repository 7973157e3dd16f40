// The null solver in JavaScript: answers every problem with its start configuration, at once.
// Its wall time per problem in an ikbench run is the protocol's own cost through the Node adapter:
//
//   ikbench run --chain 6 --samples 200 --solvers "ext:cmd='node examples/external/null_solver.mjs'"
import ext from '../../adapters/node/ikbench-external.js';

ext.solver((model, problem) => ({ q: problem.q0, status: 'max-iterations', iterations: 0 }), { name: 'null-js' }).serve();
