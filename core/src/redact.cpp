#include "ikbench/core/redact.h"

#include <cctype>

namespace ikbench {
namespace {

bool isSchemeChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.'; }
bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Whether the word `key` (lower case) ends at `end` (exclusive), in any case.
bool wordBefore(std::string_view s, size_t end, std::string_view key) {
  if (end < key.size()) return false;
  const size_t start = end - key.size();
  for (size_t i = 0; i < key.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[start + i])) != key[i]) return false;
  return start == 0 || !(std::isalnum(static_cast<unsigned char>(s[start - 1])) || s[start - 1] == '_');
}

// The key `password` or `sslpassword` (libpq's passphrase of the client key) ends at `end`.
bool passwordKeyBefore(std::string_view s, size_t end) {
  return wordBefore(s, end, "password") || wordBefore(s, end, "sslpassword");
}

}  // namespace

std::string redactSecrets(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    // scheme://user:SECRET@host: from "://" to the first '/', blank or end;
    // the user info ends at its last '@' (a password may hold '@').
    if (s.compare(i, 3, "://") == 0 && i > 0 && isSchemeChar(s[i - 1])) {
      size_t auth_end = i + 3;
      while (auth_end < s.size() && s[auth_end] != '/' && s[auth_end] != '?' && s[auth_end] != '#' &&
             !isBlank(s[auth_end]))
        ++auth_end;
      const std::string_view auth = s.substr(i + 3, auth_end - i - 3);
      const size_t at = auth.rfind('@');
      const size_t colon = at == std::string_view::npos ? std::string_view::npos : auth.substr(0, at).find(':');
      out.append("://");
      if (colon != std::string_view::npos) {
        out.append(auth.substr(0, colon + 1)).append("***").append(auth.substr(at));
      } else {
        out.append(auth);
      }
      i = auth_end;
      continue;
    }
    // password=SECRET (a keyword or a query parameter), blanks allowed around '='.
    if (s[i] == '=') {
      size_t k = i;
      while (k > 0 && isBlank(s[k - 1])) --k;
      if (passwordKeyBefore(s, k)) {
        out.push_back('=');
        size_t j = i + 1;
        while (j < s.size() && isBlank(s[j])) ++j;
        if (j < s.size() && s[j] == '\'') {
          ++j;
          while (j < s.size() && s[j] != '\'') j += (s[j] == '\\' && j + 1 < s.size()) ? 2 : 1;
          if (j < s.size()) ++j;
        } else {
          while (j < s.size() && !isBlank(s[j]) && s[j] != '&' && s[j] != '#') ++j;
        }
        out.append("***");
        i = j;
        continue;
      }
    }
    out.push_back(s[i]);
    ++i;
  }
  return out;
}

}  // namespace ikbench
