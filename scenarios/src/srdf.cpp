// SRDF reader (srdf.h): TinyXML with line numbers, every name checked
// against the robot description.
#include "ikbench/scenarios/srdf.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "ikbench/scenarios/input_limits.h"
#include "ikbench/scenarios/suite.h"
#include "xml_input.h"

namespace ikbench {

RobotNames RobotNames::of(const Model& model) {
  RobotNames n;
  for (int j = 0; j < model.numJoints(); ++j) {
    n.links.insert(model.bodyName(j));
    n.joints.insert(model.joint(j).name);
  }
  return n;
}

namespace {

[[noreturn]] void fail(const std::string& source, const TiXmlNode* node, const std::string& msg) {
  if (node) throw SuiteError(fmt::format("{}:{}: {}", source, node->Row(), msg));
  throw SuiteError(fmt::format("{}: {}", source, msg));
}

std::string attribute(const std::string& source, const TiXmlElement* e, const char* name) {
  const char* v = e->Attribute(name);
  if (!v || !*v) fail(source, e, fmt::format("<{}>: missing attribute '{}'", e->Value(), name));
  return v;
}

}  // namespace

Srdf loadSrdf(const std::string& path, const RobotNames& names) {
  return parseSrdf(readInputFile(path, "SRDF file"), path, names);
}

Srdf parseSrdf(const std::string& xml, const std::string& source, const RobotNames& names) {
  TiXmlDocument doc;
  parseXml(xml, source, &doc);
  const TiXmlElement* robot = doc.RootElement();
  if (!robot) fail(source, nullptr, "empty file (expected a <robot> element)");
  if (std::string(robot->Value()) != "robot")
    fail(source, robot, fmt::format("expected the root element <robot>, found <{}>", robot->Value()));
  Srdf out;
  out.source = source;
  for (const TiXmlElement* d = robot->FirstChildElement("disable_collisions"); d;
       d = d->NextSiblingElement("disable_collisions")) {
    const std::string a = attribute(source, d, "link1"), b = attribute(source, d, "link2");
    for (const std::string& l : {a, b})
      if (!names.links.count(l))
        fail(source, d, fmt::format("<disable_collisions>: link '{}' is not a link of the robot description", l));
    out.disabled.emplace_back(a, b);
  }
  for (const TiXmlElement* g = robot->FirstChildElement("group_state"); g; g = g->NextSiblingElement("group_state")) {
    SrdfGroupState st;
    st.name = attribute(source, g, "name");
    st.group = attribute(source, g, "group");
    st.line = g->Row();
    for (const SrdfGroupState& other : out.states)
      if (other.name == st.name)
        fail(source, g, fmt::format("<group_state> '{}' is defined twice (first on line {})", st.name, other.line));
    for (const TiXmlElement* j = g->FirstChildElement("joint"); j; j = j->NextSiblingElement("joint")) {
      const std::string joint = attribute(source, j, "name");
      if (!names.joints.count(joint))
        fail(source, j,
             fmt::format("<group_state> '{}': joint '{}' is not a joint of the robot description", st.name, joint));
      const std::string text = attribute(source, j, "value");
      double v = 0.0;
      const char* first = text.data();
      while (*first == ' ') ++first;
      const auto [ptr, ec] = std::from_chars(first, text.data() + text.size(), v);
      if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(v))
        fail(source, j,
             fmt::format("<group_state> '{}': joint '{}': value=\"{}\": expected one finite number (a state of a "
                         "multi-DOF joint is not supported)",
                         st.name, joint, text));
      st.joints.emplace_back(joint, v);
    }
    out.states.push_back(std::move(st));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> Srdf::pairsIn(const Model& model) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [a, b] : disabled)
    if (model.bodyIndex(a) >= 0 && model.bodyIndex(b) >= 0) out.emplace_back(a, b);
  return out;
}

Eigen::VectorXd Srdf::configuration(const std::string& name, const Model& model) const {
  const SrdfGroupState* st = nullptr;
  std::string known;
  for (const SrdfGroupState& s : states) {
    if (s.name == name) st = &s;
    known += (known.empty() ? "" : ", ") + s.name;
  }
  if (!st)
    throw SuiteError(fmt::format("{}: no <group_state name=\"{}\"> (states: {})", source, name,
                                 known.empty() ? "none" : known));
  Eigen::VectorXd q = model.neutralConfiguration();
  for (const auto& [joint, value] : st->joints) {
    int j = 0;
    while (j < model.numJoints() && model.joint(j).name != joint) ++j;
    // A joint outside the loaded chain, or one the model holds fixed (a mimic
    // follower): nothing to set.
    if (j == model.numJoints() || model.jointNq(j) == 0) continue;
    if (model.jointNq(j) != 1)
      throw SuiteError(fmt::format("{}:{}: <group_state> '{}': joint '{}' is not a one-DOF joint of the model", source,
                                   st->line, name, joint));
    const int dof = model.idxV(j);
    if (value < model.lowerLimits()[dof] || value > model.upperLimits()[dof])
      throw SuiteError(fmt::format("{}:{}: <group_state> '{}': joint '{}' = {} is outside its limits [{}, {}]", source,
                                   st->line, name, joint, value, model.lowerLimits()[dof],
                                   model.upperLimits()[dof]));
    q[model.idxQ(j)] = value;
  }
  return q;
}

}  // namespace ikbench
