// Tokenizer for the taihu-tune DSL (see lexer.hpp).
#include "dsl/lexer.hpp"

#include <cctype>

#include "taihu/arch/error.hpp"

namespace taihu::autotune::dsl {

std::vector<Token> tokenize(const std::string& text, const std::string& file) {
  std::vector<Token> out;
  int line = 1, col = 1;
  std::size_t i = 0;
  auto advance = [&](std::size_t n) {
    for (std::size_t j = 0; j < n; ++j, ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') advance(1);
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      advance(1);
      continue;
    }
    Token t;
    t.loc = SourceLoc{file, line, col};
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
      t.kind = Tok::ident;
      t.text = text.substr(i, j - i);
      advance(j - i);
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1])))) {
      std::size_t j = i;
      while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.')) ++j;
      if (j < text.size() && (text[j] == 'e' || text[j] == 'E')) {
        std::size_t k = j + 1;
        if (k < text.size() && (text[k] == '+' || text[k] == '-')) ++k;
        if (k < text.size() && std::isdigit(static_cast<unsigned char>(text[k]))) {
          j = k;
          while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
        }
      }
      t.kind = Tok::number;
      t.text = text.substr(i, j - i);
      advance(j - i);
    } else {
      static const char* two[] = {"->", "+=", "=="};
      t.kind = Tok::punct;
      for (const char* p : two) {
        if (text.compare(i, 2, p) == 0) t.text = p;
      }
      if (t.text.empty()) {
        static const std::string single = "[](){},:=|+-*/";
        if (single.find(c) == std::string::npos) {
          throw Error(t.loc.str() + ": unexpected character '" + std::string(1, c) + "'");
        }
        t.text = std::string(1, c);
      }
      advance(t.text.size());
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.kind = Tok::end;
  end.loc = SourceLoc{file, line, col};
  out.push_back(end);
  return out;
}

}  // namespace taihu::autotune::dsl
