// The common solver interface, the registry and the DLS backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/solvers/registry.h"
#include "test_util.h"

namespace ikbench {
namespace {

using test::expectReached;

TEST(Registry, BuildsFromSpecAndRejectsUnknownNamesAndKeys) {
  Registry& r = Registry::global();
  auto s = r.create("dls:lambda=0.05:max_step=0.5");
  EXPECT_EQ(s->spec(), "dls:lambda=0.05:max_step=0.5");
  EXPECT_THROW(r.create("nope"), SpecError);
  try {
    r.create("dls:lamda=1");
    FAIL();
  } catch (const SpecError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("lamda"), std::string::npos) << msg;
    EXPECT_NE(msg.find("lambda"), std::string::npos) << msg;  // lists the known keys
  }
  EXPECT_THROW(r.create("dls:lambda=abc"), SpecError);
  EXPECT_THROW(r.create("dls:lambda"), SpecError);
  EXPECT_THROW(r.create("dls:restarts=-2"), SpecError);
  EXPECT_EQ(splitSpecList(" dls, dls:lambda=0.1 ,ccd"), (std::vector<std::string>{"dls", "dls:lambda=0.1", "ccd"}));
  EXPECT_THROW(splitSpecList("dls,,ccd"), SpecError);  // an empty item is a typo, not "every solver"
  EXPECT_THROW(splitSpecList(""), SpecError);
  EXPECT_THROW(splitSpecList("  "), SpecError);
  // Common keys go into the effective options; the others keep the run's.
  auto t = r.create("dls:max_iterations=7:time_budget_us=100:stall_iterations=3:stall_relative_improvement=0.25");
  const SolverOptions eff = t->effectiveOptions(SolverOptions{});
  EXPECT_EQ(eff.max_iterations, 7);
  EXPECT_EQ(eff.time_budget_us, 100.0);
  EXPECT_EQ(eff.stall_iterations, 3);
  EXPECT_EQ(eff.stall_relative_improvement, 0.25);
  SolverOptions run;
  run.stall_iterations = 9;
  run.stall_relative_improvement = 0.125;
  const SolverOptions kept = r.create("dls:max_iterations=7")->effectiveOptions(run);
  EXPECT_EQ(kept.stall_iterations, 9);
  EXPECT_EQ(kept.stall_relative_improvement, 0.125);
}

// The Ceres and KDL backends are libraries of their own (ikbench_solvers_ceres,
// ikbench_solvers_kdl), linked whole through ikbench_backends: each registers
// its backends once; a library that appears after the registry was built
// registers at once.
TEST(Registry, BackendLibrariesRegisterWhenLinked) {
  Registry& r = Registry::global();
  EXPECT_EQ(backendLibraries(), (std::vector<std::string>{"ceres", "kdl"}));
  std::vector<std::string> names;
  for (const SolverInfo& i : r.list()) names.push_back(i.name);
  for (const char* n : {"ceres-lm", "ceres-dogleg", "kdl-lma", "kdl-nr-jl"})
    EXPECT_EQ(std::count(names.begin(), names.end(), n), 1) << n;
  EXPECT_EQ(r.create("ceres-lm")->spec(), "ceres-lm");

  static bool added = false;
  const BackendLibrary late("late-probe", 99, [](Registry& reg) {
    added = true;
    reg.addPreset({"late-probe-preset", "dls:lambda=0.25", "a preset from a library linked after the registry"});
  });
  EXPECT_TRUE(added);
  EXPECT_TRUE(r.contains("late-probe-preset"));
  EXPECT_EQ(backendLibraries().back(), "late-probe");
}

// A spec's stall keys give exactly the solves of the same stall rule set in
// SolverOptions, and a short window that asks for a large improvement ends
// attempts (stalled) long before the iteration cap.
TEST(SolverSpecs, StallKeysReplaceTheRunsStallRule) {
  const std::vector<Problem> problems = test::poseProblems(7, 3, 20);
  const std::string spec = "dls-adaptive:mode=error:limits=freeze:max_step=2:max_iterations=60";
  SolverOptions run;
  run.stall_iterations = 3;
  run.stall_relative_improvement = 0.5;
  const test::Solved by_options = test::solveEach(problems, spec, run);
  const test::Solved by_spec = test::solveEach(problems, spec + ":stall_iterations=3:stall_relative_improvement=0.5", SolverOptions{});
  const test::Solved plain = test::solveEach(problems, spec, SolverOptions{});
  // Stalls by the window (not by a vanishing step), before iteration 20.
  auto windowStallBefore20 = [](const Summary& s, const char* rule) {
    return s.status == Status::kStalled && s.iterations < 20 && s.message.find(rule) != std::string::npos;
  };
  int stalled_early = 0, plain_stalled_early = 0;
  for (size_t i = 0; i < problems.size(); ++i) {
    const Summary& a = by_options.summaries[i];
    const Summary& b = by_spec.summaries[i];
    EXPECT_EQ(a.status, b.status) << i;
    EXPECT_EQ(a.iterations, b.iterations) << i;
    EXPECT_EQ(a.message, b.message) << i;
    EXPECT_TRUE(by_options.q[i] == by_spec.q[i]) << i;
    stalled_early += windowStallBefore20(b, "no relative improvement of 0.5 in 3 iterations");
    plain_stalled_early += windowStallBefore20(plain.summaries[i], "no relative improvement");
  }
  EXPECT_GT(stalled_early, 5);
  EXPECT_EQ(plain_stalled_early, 0);  // the run's 20-iteration window cannot fire before iteration 20
  // Out of range: the message names the key.
  for (const char* bad : {"dls:stall_iterations=-1", "dls:stall_relative_improvement=1", "dls:stall_relative_improvement=-0.1"}) {
    try {
      Registry::global().parse(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const SpecError& e) {
      EXPECT_NE(std::string(e.what()).find("stall_"), std::string::npos) << e.what();
    }
  }
}

TEST(SolverSpecs, ParseOnceWithEveryParameterTypedAndDefaultsFilledIn) {
  const SolverSpec s = Registry::global().parse(" dls:lambda=0.1:restarts=3 ");
  EXPECT_EQ(s.text, "dls:lambda=0.1:restarts=3");
  EXPECT_EQ(s.name, "dls");
  EXPECT_EQ(s.common.restarts, 3);
  EXPECT_FALSE(s.common.time_budget_us.has_value());  // not given: the run's setting
  EXPECT_EQ(s.common.solutions, SolutionsMode::kFirst);
  std::map<std::string, std::string> params(s.parameters.begin(), s.parameters.end());
  EXPECT_EQ(params.at("lambda"), "0.1");
  EXPECT_EQ(params.at("max_step"), "0.5");  // the default, from DlsOptions
  EXPECT_EQ(params.at("limits"), "clamp");
  EXPECT_EQ(Registry::global().create(s)->spec(), s.text);
  // Ranges: every key checks its value, the message names key, value and range.
  for (const char* bad : {"dls:lambda=-1", "dls:restarts=2147483647", "dls:restarts=-1", "dls:max_iterations=0",
                          "dls:time_budget_us=1e30", "dls:solutions=some", "dls:limits=bounce", "dls:lambda=inf",
                          "dls:lambda=1e400", "dls:max_step=nan"}) {
    try {
      Registry::global().parse(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const SpecError& e) {
      const std::string msg = e.what();
      const std::string key = std::string(bad).substr(4, std::string(bad).find('=') - 4);
      EXPECT_NE(msg.find(key), std::string::npos) << msg;
    }
  }
  // A subnormal number is finite: accepted.
  EXPECT_NO_THROW(Registry::global().parse("dls:lambda=1e-320"));
}

TEST(SolverSpecs, PresetsExpandAndTakeOverrides) {
  const SolverSpec a = Registry::global().parse("auto");
  EXPECT_EQ(a.preset, "auto");
  EXPECT_EQ(a.text, "auto");
  EXPECT_EQ(a.name, "dls-adaptive");
  EXPECT_EQ(a.common.restarts, 5000);
  const SolverSpec b = Registry::global().parse("auto:time_budget_us=1000:restarts=5");
  EXPECT_EQ(*b.common.time_budget_us, 1000.0);
  EXPECT_EQ(b.common.restarts, 5);
  std::map<std::string, std::string> params(b.parameters.begin(), b.parameters.end());
  EXPECT_EQ(params.at("mode"), "error");  // from the preset
  EXPECT_THROW(Registry::global().addPreset({"auto", "dls", "taken"}), SpecError);
  EXPECT_THROW(Registry::global().addPreset({"bad-preset", "dls:lambda=-3", "out of range"}), SpecError);
}

// A spec knows which keys it gives, own and common, apart from the defaults
// and the run's settings; a derived spec is resolved from those values and
// reads back as the same spec from its text.
TEST(SolverSpecs, KnowTheKeysGivenAndDeriveWithoutReparsing) {
  const SolverSpec s = Registry::global().parse("dls:max_iters=40:lambda=0.05:restarts=3");
  EXPECT_TRUE(s.gives("lambda"));
  EXPECT_TRUE(s.gives("restarts"));
  EXPECT_TRUE(s.gives("max_iterations"));  // written under its former name
  EXPECT_FALSE(s.gives("max_step"));       // a default, though `parameters` lists it
  EXPECT_FALSE(s.gives("library"));
  EXPECT_EQ(s.given.count("restarts"), 0u);
  EXPECT_EQ(s.given_common.at("restarts"), "3");
  EXPECT_EQ(s.written, (std::vector<std::string>{"max_iterations", "lambda", "restarts"}));

  const SolverSpec d = Registry::global().with(s, {{"library", "64"}, {"lambda", "0.1"}});
  EXPECT_EQ(d.text, "dls:max_iterations=40:lambda=0.1:restarts=3:library=64");
  EXPECT_EQ(d.common.library, 64);
  EXPECT_EQ(d.common.restarts, 3);
  EXPECT_EQ(*d.common.max_iterations, 40);
  const SolverSpec again = Registry::global().parse(d.text);
  EXPECT_EQ(again.parameters, d.parameters);
  EXPECT_EQ(again.given, d.given);
  EXPECT_EQ(again.given_common, d.given_common);
  EXPECT_EQ(s.text, "dls:max_iters=40:lambda=0.05:restarts=3");  // the original is untouched

  // A preset's keys are given but not written: the derived text keeps the preset's name.
  const SolverSpec a = Registry::global().parse("auto:restarts=5");
  EXPECT_TRUE(a.gives("closed_form"));
  EXPECT_EQ(a.written, (std::vector<std::string>{"restarts"}));
  const SolverSpec g = Registry::global().with(a, {{"kernel", "generic"}});
  EXPECT_EQ(g.text, "auto:restarts=5:kernel=generic");
  EXPECT_EQ(g.preset, "auto");
  EXPECT_EQ(Registry::global().parse(g.text).parameters, g.parameters);
  // Deriving checks like parsing does.
  EXPECT_THROW(Registry::global().with(s, {{"lambda", "-1"}}), SpecError);
  EXPECT_THROW(Registry::global().with(s, {{"no_such_key", "1"}}), SpecError);
}

TEST(SolverSpecs, GridsExpandListsAndRanges) {
  SpecGrid g = expandSpecGrid("dls:lambda={0.01,0.02}:max_step={0.5,1}");
  EXPECT_EQ(g.specs, (std::vector<std::string>{"dls:lambda=0.01:max_step=0.5", "dls:lambda=0.01:max_step=1",
                                               "dls:lambda=0.02:max_step=0.5", "dls:lambda=0.02:max_step=1"}));
  ASSERT_EQ(g.axes.size(), 2u);
  EXPECT_EQ(g.axes[1].key, "max_step");
  g = expandSpecGrid("dls:lambda={0.001..0.1:log:3}");
  EXPECT_EQ(g.specs, (std::vector<std::string>{"dls:lambda=0.001", "dls:lambda=0.01", "dls:lambda=0.1"}));
  g = expandSpecGrid("dls:max_iterations={10..50:lin:5}:restarts=2");
  EXPECT_EQ(g.specs.size(), 5u);
  EXPECT_EQ(g.specs[1], "dls:max_iterations=20:restarts=2");
  EXPECT_EQ(expandSpecGrid("dls:lambda=0.1").specs, std::vector<std::string>{"dls:lambda=0.1"});
  for (const char* bad : {"dls:lambda={0.1,}", "dls:lambda={0.1", "dls:lambda=0.1}", "dls:lambda={1..2:lin:1}",
                          "dls:lambda={0..1:log:3}", "dls:lambda={1..2:cubic:3}", "dls:lambda={{1}}", "{dls,ccd}",
                          "dls:lambda={0..1:lin:100000}:max_step={0..1:lin:100}"})
    EXPECT_THROW(expandSpecGrid(bad), SpecError) << bad;
  // Commas inside braces do not split a list of specs.
  EXPECT_EQ(splitSpecList("dls:lambda={0.1,0.2},ccd"), (std::vector<std::string>{"dls:lambda={0.1,0.2}", "ccd"}));
  EXPECT_THROW(Registry::global().parse("dls:lambda={0.1,0.2}"), SpecError);  // expand first
}

TEST(SolverSpecs, QuotedValuesAreTextWithSeparatorsInside) {
  std::string name;
  std::map<std::string, std::string> params;
  parseSpecText("ext:cmd='python3 my solver.py --a=1:b, {c}':timeout_ms=5", &name, &params);
  EXPECT_EQ(name, "ext");
  EXPECT_EQ(params.at("cmd"), "python3 my solver.py --a=1:b, {c}");
  EXPECT_EQ(params.at("timeout_ms"), "5");
  parseSpecText("ext:cmd=\"node s.js 'x'\"", &name, &params);
  EXPECT_EQ(params.at("cmd"), "node s.js 'x'");
  // Quotes keep commas and braces inside one spec of a list, and out of grids.
  EXPECT_EQ(splitSpecList("ext:cmd='a,b',dls"), (std::vector<std::string>{"ext:cmd='a,b'", "dls"}));
  EXPECT_EQ(expandSpecGrid("ext:cmd='echo {1,2}'").specs, std::vector<std::string>{"ext:cmd='echo {1,2}'"});
  // A quoted value of a built-in key is its text.
  EXPECT_EQ(Registry::global().parse("dls:lambda='0.1'").given.at("lambda"), "0.1");
  for (const char* bad : {"ext:cmd='unterminated", "ext:cmd=\"a'", "ext:cmd=a'b'", "ext:cmd='a''b'",
                          "ext:'cmd'=x", "ext:cmd='a'b"})
    EXPECT_THROW(parseSpecText(bad, &name, &params), SpecError) << bad;
  EXPECT_THROW(splitSpecList("ext:cmd='a,b"), SpecError);
}

// The seed corpus of fuzz/fuzz_solver_spec.cpp holds to the fuzz target's contract: each entry
// gives specs or a SpecError naming what is wrong, nothing else; the entry of quoted values
// parses and creates throughout, so the fuzzer starts from quotes that reach the registry.
TEST(SolverSpecs, FuzzCorpusEntriesGiveSpecsOrSpecErrors) {
  const std::filesystem::path dir = std::filesystem::path(IKBENCH_SOURCE_DIR) / "fuzz/corpus/solver_spec";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  int files = 0, created = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ++files;
    const bool quoted = entry.path().filename() == "quoted";
    try {
      for (const std::string& item : splitSpecList(text))
        for (const std::string& spec : expandSpecGrid(item).specs) {
          try {
            EXPECT_NE(Registry::global().create(Registry::global().parse(spec)), nullptr);
            ++created;
          } catch (const SpecError& e) {
            EXPECT_FALSE(quoted) << spec << ": " << e.what();
          }
        }
    } catch (const SpecError& e) {
      EXPECT_FALSE(quoted) << e.what();
    }
  }
  EXPECT_GE(files, 5);
  EXPECT_GE(created, 3);
}

TEST(SolverInterface, TracesAreBoundedAndEndAtTheLastIteration) {
  const auto model = test::planarChain({0.5, 0.5});
  Problem p;
  p.model = model;
  p.name = "far";
  p.q0 = Eigen::Vector2d(0.3, 0.2);
  p.goals.resize(1);
  p.goals[0].body = 2;
  p.goals[0].target_position = Eigen::Vector3d(5, 0, 0);  // unreachable: runs to the cap
  SolverOptions o;
  o.record_trace = true;
  o.stall_iterations = 0;
  o.max_iterations = static_cast<int>(Summary::kMaxTraceRecords) + 5000;
  const Summary s = Registry::global().create("jt")->solve(p, o);
  EXPECT_EQ(s.status, Status::kMaxIterations);
  EXPECT_EQ(s.trace.size(), Summary::kMaxTraceRecords);
  EXPECT_EQ(s.trace.back().iteration, s.iterations);
  // A cap far beyond memory reserves nothing up front: it is accepted, and
  // the run's budget ends the solve.
  o.max_iterations = SolverOptions::kMaxIterationsLimit;
  o.time_budget_us = 20000;
  const Summary t = Registry::global().create("jt")->solve(p, o);
  EXPECT_EQ(t.status, Status::kTimeLimit);
  EXPECT_LE(t.trace.size(), Summary::kMaxTraceRecords);
  o.max_iterations = SolverOptions::kMaxIterationsLimit + 1;
  EXPECT_EQ(Registry::global().create("jt")->solve(p, o).status, Status::kInvalidInput);
}

TEST(Dls, ConvergesOnReachableRandomChainsCheckedByFk) {
  SolverOptions o;
  auto dls = Registry::global().create("dls");
  int converged = 0, total = 0;
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    ChainSpec cs;
    cs.joints = 7;
    cs.limit = 2.5;
    const auto model = randomChain(cs, seed);
    GoalSetSpec gs;
    gs.count = 10;
    gs.kind = GoalKind::kPosition;
    for (const Problem& p : reachableGoals(model, gs, seed, "p")) {
      Eigen::VectorXd q = p.q0;
      const Summary s = dls->solve(p, q, o);
      ++total;
      if (s.converged()) {
        ++converged;
        expectReached(p, q, o);
        EXPECT_LE(s.position_error, o.position_tolerance);
        EXPECT_GT(s.iterations, 0);
        EXPECT_GE(s.fk_evals, s.iterations);
        EXPECT_GE(s.jacobian_evals, s.iterations);
      }
      EXPECT_TRUE(q.allFinite());
    }
  }
  // Position goals on a redundant 7-DOF chain, one attempt: most converge.
  EXPECT_GE(converged, total * 8 / 10) << converged << " of " << total;
}

TEST(Dls, PoseGoalsConvergeWithRestarts) {
  SolverOptions o;
  auto dls = Registry::global().create("dls:restarts=20");
  ChainSpec cs;
  cs.joints = 7;
  const auto model = randomChain(cs, 99);
  GoalSetSpec gs;
  gs.count = 20;
  gs.kind = GoalKind::kPose;
  const int converged = test::solveAllChecked(*dls, reachableGoals(model, gs, 5, "pose"), o, "dls:restarts=20");
  EXPECT_GE(converged, 19);
}

TEST(SolverInterface, BadProblemsGiveInvalidInputWithAMessage) {
  const auto model = test::planarChain({0.5, 0.5});
  auto dls = Registry::global().create("dls");
  Problem p;
  p.model = model;
  p.name = "bad";
  p.q0 = Eigen::VectorXd::Zero(2);
  p.goals.resize(1);
  p.goals[0].body = 2;
  p.goals[0].target_position = Eigen::Vector3d(std::nan(""), 0, 0);
  SolverOptions o;
  Summary s = dls->solve(p, o);
  EXPECT_EQ(s.status, Status::kInvalidInput);
  EXPECT_NE(s.message.find("not finite"), std::string::npos) << s.message;

  p.goals[0].target_position = Eigen::Vector3d(0.5, 0.5, 0);
  p.goals[0].body = 17;
  s = dls->solve(p, o);
  EXPECT_EQ(s.status, Status::kInvalidInput);
  EXPECT_NE(s.message.find("body 17"), std::string::npos) << s.message;

  p.goals[0].body = 2;
  Eigen::VectorXd wrong_size = Eigen::VectorXd::Zero(3);
  s = dls->solve(p, wrong_size, o);
  EXPECT_EQ(s.status, Status::kInvalidInput);
  EXPECT_NE(s.message.find("nq = 2"), std::string::npos) << s.message;

  o.position_tolerance = -1;
  s = dls->solve(p, o);
  EXPECT_EQ(s.status, Status::kInvalidInput);
  EXPECT_NE(s.message.find("position_tolerance"), std::string::npos) << s.message;
}

TEST(SolverInterface, TimeBudgetStopsTheSolve) {
  ChainSpec cs;
  cs.joints = 50;
  const auto model = randomChain(cs, 1);
  Problem p;
  p.model = model;
  p.name = "budget";
  p.q0 = model->neutralConfiguration();
  p.goals.resize(1);
  p.goals[0].body = model->numJoints() - 1;
  p.goals[0].target_position = Eigen::Vector3d(100, 0, 0);  // unreachable: never converges
  SolverOptions o;
  o.max_iterations = 1000000;
  o.stall_iterations = 0;
  auto dls = Registry::global().create("dls:time_budget_us=2000");
  const Summary s = dls->solve(p, o);
  EXPECT_EQ(s.status, Status::kTimeLimit) << toString(s.status);
  EXPECT_LT(s.iterations, 1000000);
}

// A backend that claims convergence without moving: the verdict comes from FK.
class ClaimsConvergence final : public Solver {
 protected:
  void solveImpl(const Problem&, Eigen::VectorXd&, SolveContext& ctx) override { ctx.stop(Status::kConverged); }
};

TEST(SolverVerdict, AClaimOfConvergenceThatFkContradictsIsFalseConvergence) {
  Problem p;
  p.model = test::planarChain({1.0, 1.0});
  Goal g;
  g.body = p.model->bodyIndex("tip");
  g.kind = GoalKind::kPosition;
  g.target_position = Eigen::Vector3d(0.0, 1.5, 0.0);  // reachable, but not from where it stands
  p.goals = {g};
  p.q0 = Eigen::VectorXd::Zero(p.model->nq());
  ClaimsConvergence solver;
  const Summary s = solver.solve(p, SolverOptions());
  EXPECT_EQ(s.status, Status::kFalseConvergence) << s.message;
  EXPECT_FALSE(s.converged());
  EXPECT_NE(s.message.find("backend reported convergence"), std::string::npos) << s.message;
  EXPECT_GT(s.position_error, 0.5);
  EXPECT_EQ(toString(s.status), std::string("false-convergence"));
  // The same claim where the start already holds is plain convergence.
  p.goals[0].target_position = Eigen::Vector3d(2.0, 0.0, 0.0);
  EXPECT_EQ(solver.solve(p, SolverOptions()).status, Status::kConverged);
}

TEST(SolverSpecs, FormerKeyNamesReadAsTheirNamesNowAndAreNoted) {
  const SolverSpec spec = Registry::global().parse("dls:budget_us=700:max_iters=9:stall_iters=3:stall_improvement=0.25");
  EXPECT_EQ(spec.common.time_budget_us, 700.0);
  EXPECT_EQ(spec.common.max_iterations, 9);
  EXPECT_EQ(spec.common.stall_iterations, 3);
  EXPECT_EQ(spec.common.stall_relative_improvement, 0.25);
  ASSERT_EQ(spec.deprecated.size(), 4u);
  EXPECT_NE(spec.deprecated[0].find("'budget_us' is now 'time_budget_us'"), std::string::npos) << spec.deprecated[0];
  // The same spec under today's names reads the same and notes nothing.
  const SolverSpec now =
      Registry::global().parse("dls:time_budget_us=700:max_iterations=9:stall_iterations=3:stall_relative_improvement=0.25");
  EXPECT_EQ(now.parameters, spec.parameters);
  EXPECT_TRUE(now.deprecated.empty());
  // A preset's key is overridden under either name; one key under both names is an error.
  EXPECT_EQ(Registry::global().parse("auto:budget_us=0").common.time_budget_us, 0.0);
  EXPECT_THROW(Registry::global().parse("dls:budget_us=1:time_budget_us=2"), SpecError);
}

}  // namespace
}  // namespace ikbench
