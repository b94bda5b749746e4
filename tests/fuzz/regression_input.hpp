// The inputs the fuzz targets found faults with, as kept in
// fuzz/corpus/<target>/regression-<name>.
#pragma once

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace rstorm::fuzz::testing {

enum class Selector { kDrop, kKeep };

// The input's bytes. Targets that decode several kinds of input read the first
// byte as the kind: kDrop leaves it out, to feed the rest to the decoder.
inline std::string regression_input(const std::string& target, const std::string& name,
                                    Selector selector = Selector::kDrop) {
  const std::string path = std::string(RSTORM_FUZZ_CORPUS) + "/" + target + "/regression-" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  const std::string all = bytes.str();
  return selector == Selector::kDrop ? all.substr(1) : all;
}

}  // namespace rstorm::fuzz::testing
