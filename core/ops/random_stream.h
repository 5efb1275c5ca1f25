// kiln's random numbers, the same on every plugin and in the reference. A run has a state
// (seed, call): the seed is the compiled graph's (0 unless set), and call counts its runs,
// so each run draws new numbers and a run is reproduced from its (seed, call). Random node
// `stream` (a hash of its name) gives element i word i mod 4 of
//   philox4x32_10(counter = (i/4 low, i/4 high, stream, call low), key = (seed low, seed high)).
// Uniform values keep the word's top bits that the dtype holds exactly (f16 11, bf16 8, f32 24,
// f64 32), so they lie in [0, 1) and are bit-identical everywhere. A normal value takes the
// pair of words (2*(i mod 2), +1) of counter block i/2: u = (top 24 bits + 1) / 2^24 in (0, 1],
// v = top 24 bits / 2^24, z = sqrt(-2 ln u) cos(2 pi v).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/graph/dtype.h"

namespace kiln {

struct RandomState {
  uint64_t seed = 0;
  uint64_t call = 0;
};

// FNV-1a of the node's name: a node keeps its stream however the graph around it changes.
uint32_t random_stream_id(std::string_view node_name);

// Word `word` (0..3) of counter block `block` of `stream`.
uint32_t random_word(const RandomState& state, uint32_t stream, uint64_t block, int word);

// How many top bits of a word a uniform value of `d` keeps.
int uniform_bits(DType d);
// Element i of a uniform stream in dtype d, in [0, 1).
double random_uniform(const RandomState& state, uint32_t stream, uint64_t i, DType d);
// Element i of a standard normal stream.
double random_normal(const RandomState& state, uint32_t stream, uint64_t i);

}  // namespace kiln
