// Which part of the training data this process reads (data-parallel training).
//
// With shard {index = r, count = P}, the TRAIN-phase data layers built afterwards give
// rank r the records at global stream positions r, r + P, r + 2P, ... (record i of
// the sequence goes to rank i % P, Caffe 1.0's multi-GPU rule), so the P ranks read
// disjoint parts of the source and, together, batch k of all ranks holds exactly the
// records one process with a P times larger batch reads as its batch k. batch_size is
// per rank. TEST-phase layers are not sharded. Shuffling permutes the global sequence
// with the same seed on every rank, so the shards stay disjoint.
// Set it before constructing the Solver / Net (layers read it at setup). Default {0, 1}.
#pragma once

namespace taihu::caffe {

struct DataShard {
  int index = 0;  // this rank
  int count = 1;  // number of ranks
};

// Throws taihu::Error unless 0 <= index < count.
void set_train_data_shard(DataShard shard);
DataShard train_data_shard();

}  // namespace taihu::caffe
