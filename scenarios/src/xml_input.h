// What the XML readers (URDF, SRDF, MJCF) share: the nesting bound checked on
// the raw text before a recursive parser sees it, and TinyXML parsing with
// line numbers.
#pragma once

#include <tinyxml.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ikbench {

// Throws SuiteError naming the source and line of the first element nested
// deeper than kMaxXmlNesting.
void checkXmlNesting(const std::string& xml, const std::string& source);

// Checks the nesting, then parses `xml` into `doc` (TinyXML walks multi-byte
// UTF-8 sequences by their lead byte's length, so the text is handed over
// followed by several NULs). Throws SuiteError "source:line: malformed XML".
void parseXml(const std::string& xml, const std::string& source, TiXmlDocument* doc);

// The numbers of an attribute's blank-separated list (each a finite decimal
// number, '+' allowed before it), at most `max` of them: nullopt when an item
// is not one or there are more. The readers name the attribute in their error.
std::optional<std::vector<double>> parseNumberList(std::string_view text, int max);

}  // namespace ikbench
