// One name table per enum: the single place where an enum's values and their
// spellings in files, spec strings and command lines are listed. toString and
// parse both read it, so the two directions cannot drift apart.
//
//   inline constexpr EnumTable<Status, 7> kStatusNames{{{
//       {Status::kConverged, "converged"}, ...}}, "status"};
//   kStatusNames.name(Status::kConverged)   -> "converged"
//   kStatusNames.parse("stalled")           -> Status::kStalled (std::invalid_argument
//                                              listing the accepted names otherwise)
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace ikbench {

template <typename E, std::size_t N>
struct EnumTable {
  std::array<std::pair<E, std::string_view>, N> entries;
  std::string_view what;  // "goal kind", "status": used in error messages

  constexpr std::string_view name(E value) const {
    for (const auto& [v, n] : entries)
      if (v == value) return n;
    return "?";
  }
  constexpr std::optional<E> find(std::string_view text) const {
    for (const auto& [v, n] : entries)
      if (n == text) return v;
    return std::nullopt;
  }
  // The accepted spellings, comma-separated (for messages and help texts).
  std::string names() const {
    std::string out;
    for (const auto& [v, n] : entries) {
      if (!out.empty()) out += ", ";
      out += n;
    }
    return out;
  }
  // Throws std::invalid_argument naming the text and the accepted spellings.
  E parse(std::string_view text) const {
    if (auto v = find(text)) return *v;
    throw std::invalid_argument("unknown " + std::string(what) + " '" + std::string(text) +
                                "' (expected one of: " + names() + ")");
  }
};

}  // namespace ikbench
