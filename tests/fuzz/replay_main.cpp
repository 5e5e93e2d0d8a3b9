// A driver for the fuzz targets where libFuzzer is not available (gcc builds,
// CI): runs each seed file, then a fixed number of deterministic mutations of
// it (bit flips, truncations, insertions, length-field rewrites).
//   usage: <target> [--mutations N] SEED...
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<uint8_t> mutate(std::vector<uint8_t> bytes, std::mt19937_64& rng) {
  const auto pick = [&](size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng() % n); };
  switch (rng() % 6) {
    case 0:  // flip bits
      for (int i = 0; i < 1 + static_cast<int>(rng() % 8) && !bytes.empty(); ++i) bytes[pick(bytes.size())] ^= 1u << (rng() % 8);
      break;
    case 1:  // truncate
      bytes.resize(pick(bytes.size() + 1));
      break;
    case 2:  // insert random bytes
      bytes.insert(bytes.begin() + static_cast<long>(pick(bytes.size() + 1)), 1 + rng() % 16, static_cast<uint8_t>(rng()));
      break;
    case 3:  // rewrite the 8-byte length field
      if (bytes.size() >= 8) {
        const uint64_t v = (rng() % 2) ? rng() : rng() % (bytes.size() + 64);
        std::memcpy(bytes.data(), &v, 8);
      }
      break;
    case 4:  // replace a digit: shifts offsets and shapes
      for (size_t tries = 0; tries < 64 && !bytes.empty(); ++tries) {
        const size_t i = pick(bytes.size());
        if (bytes[i] >= '0' && bytes[i] <= '9') {
          bytes[i] = static_cast<uint8_t>('0' + rng() % 10);
          break;
        }
      }
      break;
    default:  // duplicate a slice
      if (!bytes.empty()) {
        const size_t a = pick(bytes.size()), n = pick(bytes.size() - a + 1);
        std::vector<uint8_t> slice(bytes.begin() + static_cast<long>(a), bytes.begin() + static_cast<long>(a + n));
        bytes.insert(bytes.begin() + static_cast<long>(pick(bytes.size() + 1)), slice.begin(), slice.end());
      }
  }
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  long mutations = 2000;
  std::vector<std::string> seeds;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mutations") == 0 && i + 1 < argc) {
      mutations = std::atol(argv[++i]);
    } else {
      seeds.push_back(argv[i]);
    }
  }
  std::mt19937_64 rng(20261121);
  long runs = 0;
  for (const auto& path : seeds) {
    std::ifstream in(path, std::ios::binary);
    const std::vector<uint8_t> seed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(seed.data(), seed.size());
    std::vector<uint8_t> current = seed;
    for (long m = 0; m < mutations; ++m, ++runs) {
      current = (m % 8 == 0) ? mutate(seed, rng) : mutate(current, rng);
      LLVMFuzzerTestOneInput(current.data(), current.size());
    }
  }
  std::printf("%ld mutated inputs from %zu seeds: no crash\n", runs, seeds.size());
  return 0;
}
