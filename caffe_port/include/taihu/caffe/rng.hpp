// Random numbers for fillers, dropout and data augmentation. A Caffe-like process
// generator (Caffe's random_seed seeds it) whose full state can be saved and restored,
// so a resumed run draws the same numbers as an uninterrupted one.
#pragma once
#include <cstdint>
#include <random>
#include <string>

namespace taihu::caffe {

using Rng = std::mt19937_64;

// The process generator (seeded from the clock until seed_rng is called).
Rng& process_rng();
void seed_rng(std::uint64_t seed);
std::string save_rng_state();
void load_rng_state(const std::string& state);  // throws taihu::Error when malformed

// A generator derived from (seed, stream, index): e.g. the augmentation of batch
// `index` of data layer `stream`, independent of which thread draws it.
Rng derived_rng(std::uint64_t seed, std::uint64_t stream, std::uint64_t index);
std::uint64_t rng_seed_for_streams();  // the last seed given to seed_rng (or clock)

}  // namespace taihu::caffe
