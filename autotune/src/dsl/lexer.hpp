// The DSL's tokenizer: identifiers, numbers, punctuation; '#' starts a comment that
// runs to the end of the line; whitespace and newlines only separate tokens.
#pragma once
#include <string>
#include <vector>

#include "taihu/autotune/ast.hpp"

namespace taihu::autotune::dsl {

enum class Tok { ident, number, punct, end };

struct Token {
  Tok kind = Tok::end;
  std::string text;  // identifier, number literal or punctuation ("->", "+=", "[")
  SourceLoc loc;
};

// Throws taihu::Error "file:line:col: unexpected character 'x'".
std::vector<Token> tokenize(const std::string& text, const std::string& file);

}  // namespace taihu::autotune::dsl
