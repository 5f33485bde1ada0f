// The process-wide training data shard. See taihu/caffe/data_shard.hpp.
#include "taihu/caffe/data_shard.hpp"

#include <string>

#include "taihu/arch/error.hpp"

namespace taihu::caffe {
namespace {
DataShard g_shard;
}  // namespace

void set_train_data_shard(DataShard shard) {
  if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count) {
    throw Error("data shard: index " + std::to_string(shard.index) + " of " + std::to_string(shard.count) +
                " (need 0 <= index < count)");
  }
  g_shard = shard;
}

DataShard train_data_shard() { return g_shard; }

}  // namespace taihu::caffe
