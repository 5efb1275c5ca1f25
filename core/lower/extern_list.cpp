#include "core/lower/extern_list.h"

#include <algorithm>
#include <kiln/kir.hpp>
#include <sstream>

namespace kiln {
namespace {

struct ExternLine {
  std::string name;
  std::vector<std::string> dtypes;  // empty: every dtype
  std::vector<std::string> features;
};

bool is_dtype_word(const std::string& word) {
  if (word == "tf32") return true;
  for (int d = 0; d <= static_cast<int>(DType::C64); ++d)
    if (word == dtype_name(static_cast<DType>(d))) return true;
  return false;
}

ExternLine parse(const std::string& line) {
  std::istringstream words(line);
  ExternLine out;
  words >> out.name;
  for (std::string word; words >> word;)
    (is_dtype_word(word) ? out.dtypes : out.features).push_back(word);
  return out;
}

bool contains(const std::vector<std::string>& words, const std::string& word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

}  // namespace

bool extern_available(const std::vector<std::string>& available, const LoopKernel& call) {
  const int64_t code = extern_attr(call, "dtype");
  const std::string wanted =
      code == kir::kExternTf32 ? "tf32" : std::string(dtype_name(static_cast<DType>(code)));
  for (const std::string& text : available) {
    const ExternLine line = parse(text);
    // A bare name covers every dtype; TF32 products only where listed.
    const bool every = line.dtypes.empty() && wanted != "tf32";
    if (line.name == call.extern_name && (every || contains(line.dtypes, wanted))) return true;
  }
  return false;
}

bool extern_available(const std::vector<std::string>& available, const std::string& name,
                      DType dtype) {
  return extern_available(available, name, static_cast<int64_t>(dtype));
}

bool extern_available(const std::vector<std::string>& available, const std::string& name,
                      int64_t dtype_code) {
  LoopKernel call;
  call.extern_name = name;
  call.attrs = {{"dtype", dtype_code}};
  return extern_available(available, call);
}

bool extern_has_feature(const std::vector<std::string>& available, const std::string& name,
                        const std::string& feature) {
  for (const std::string& text : available) {
    const ExternLine line = parse(text);
    if (line.name == name && contains(line.features, feature)) return true;
  }
  return false;
}

}  // namespace kiln
