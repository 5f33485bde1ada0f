// The protobuf messages of taihu's caffe.proto (BVLC's names and field numbers) and
// reading/writing them: prototxt text format with file:line:column errors, binary
// files (.caffemodel, .solverstate, .binaryproto) with clear errors for corrupt or
// truncated files, and atomic writes (temp file in the same folder + fsync + rename).
#pragma once
#include <string>

#include "taihu/arch/atomic_file.hpp"
#include "taihu/caffe/caffe.pb.h"

namespace taihu::caffe {

// Parses protobuf text format into `message`. Throws taihu::Error
// "<source>:<line>:<column>: <protobuf's message>" on the first error, e.g. an
// unknown field ("... has no field named \"foo\"").
void parse_text(const std::string& text, const std::string& source,
                google::protobuf::Message* message);

// Reads a whole text file (throws taihu::Error naming the file when unreadable).
std::string read_file(const std::string& path);

proto::NetParameter read_net_param(const std::string& path);
proto::SolverParameter read_solver_param(const std::string& path);

// Binary protobuf. Throws taihu::Error "<path>: not a valid <what> (corrupt or
// truncated file)" when the bytes do not parse.
void read_binary(const std::string& path, const char* what, google::protobuf::Message* message);

// Writes bytes to path atomically: a temporary file in the same directory, fsync'd,
// then renamed over `path`, so readers see the old or the new file, never a mix
// (the project's one writer, taihu/arch/atomic_file.hpp).
using ::taihu::write_file_atomic;
void write_binary_atomic(const std::string& path, const google::protobuf::Message& message);

}  // namespace taihu::caffe
