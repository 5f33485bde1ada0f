// Reading and writing caffe.proto messages: text format with file:line:column errors,
// binary with corrupt-file errors, atomic writes. See taihu/caffe/proto.hpp.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include "taihu/arch/error.hpp"
#include "taihu/caffe/proto.hpp"

namespace taihu::caffe {
namespace {

// Keeps the first error protobuf reports, with its 1-based position.
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (!has_error) {
      has_error = true;
      error = std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
    }
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
  bool has_error = false;
  std::string error;
};

}  // namespace

void parse_text(const std::string& text, const std::string& source,
                google::protobuf::Message* message) {
  google::protobuf::TextFormat::Parser parser;
  FirstErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, message)) {
    throw Error(source + ":" + (errors.has_error ? errors.error : "1:1: cannot parse " +
                                                                       message->GetTypeName()));
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open (" + std::strerror(errno) + ")");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error(path + ": read error");
  return ss.str();
}

proto::NetParameter read_net_param(const std::string& path) {
  proto::NetParameter p;
  parse_text(read_file(path), path, &p);
  return p;
}

proto::SolverParameter read_solver_param(const std::string& path) {
  proto::SolverParameter p;
  parse_text(read_file(path), path, &p);
  return p;
}

void read_binary(const std::string& path, const char* what, google::protobuf::Message* message) {
  const std::string bytes = read_file(path);
  if (bytes.empty() || !message->ParseFromString(bytes)) {
    throw Error(path + ": not a valid " + what + " (corrupt or truncated file, " +
                std::to_string(bytes.size()) + " bytes)");
  }
}

void write_binary_atomic(const std::string& path, const google::protobuf::Message& message) {
  std::string bytes;
  if (!message.SerializeToString(&bytes)) throw Error(path + ": cannot serialise " + message.GetTypeName());
  write_file_atomic(path, bytes);
}

}  // namespace taihu::caffe
