// Secrets out of everything the project writes: a connection string's
// password is replaced before a command line, an error or a log line reaches
// a file, a store or a terminal. Credentials belong in libpq's environment
// (PGPASSWORD) or its password file (~/.pgpass), never on a command line.
#pragma once

#include <string>
#include <string_view>

namespace ikbench {

// The text with every secret replaced by "***":
//   the password of a URL's user info: scheme://user:SECRET@host -> scheme://user:***@host
//   a password query parameter:        ...?password=SECRET&x=1  -> ...?password=***&x=1
//   a libpq keyword:                   password=SECRET, password = 'a b' -> password=***
//                                      (and sslpassword, the client key's passphrase)
// (libpq's keyword syntax: a value is a run of non-blanks or a single-quoted
// string with backslash escapes). Text without a secret is returned unchanged.
std::string redactSecrets(std::string_view text);

}  // namespace ikbench
