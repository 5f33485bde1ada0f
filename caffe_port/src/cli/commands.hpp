// taihu-caffe's commands, as Caffe's tools/caffe.cpp brews them (train, test, time,
// device_query) plus taihu's data tools (convert_mnist, make_digits). Each returns the
// exit status; errors are thrown (taihu::Error, FlagError) and reported by main.
#pragma once
#include "cli/flags.hpp"

namespace taihu::caffe::cli {

int train(const Args& a);
int test(const Args& a);
int time(const Args& a);
int convert_mnist(const Args& a);
int make_digits(const Args& a);
int device_query(const Args& a);

}  // namespace taihu::caffe::cli
