#include "bench/suite/suite.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <set>

namespace kiln::bench {
namespace {

// Reads YAML nodes, failing with the file, the position and the key.
class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  Error error(const YAML::Node& node, const std::string& what) const {
    const YAML::Mark m = node.Mark();
    return Error::user(path_ + ":" + std::to_string(m.line + 1) + ":" +
                       std::to_string(m.column + 1) + ": " + what);
  }
  Result<std::string> string(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) return error(node, "'" + key + "' must be a string");
    return node.as<std::string>();
  }
  Result<int> integer(const YAML::Node& node, const std::string& key, int low, int high) const {
    int value = 0;
    if (!node.IsScalar() || !YAML::convert<int>::decode(node, value))
      return error(node, "'" + key + "' must be an integer");
    if (value < low || value > high)
      return error(node, "'" + key + "' must be from " + std::to_string(low) + " to " +
                             std::to_string(high));
    return value;
  }
  Status keys(const YAML::Node& map, const std::string& where,
              const std::set<std::string>& known) const {
    if (!map.IsMap()) return error(map, "'" + where + "' must be a map");
    for (const auto& entry : map) {
      const std::string key = entry.first.as<std::string>();
      if (!known.contains(key)) {
        std::string list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        return error(entry.first, "unknown key '" + (where.empty() ? "" : where + ".") + key +
                                      "' (expected one of: " + list + ")");
      }
    }
    return Ok{};
  }
  // A path in the file, relative to the file's directory.
  std::string resolve(const std::string& p) const {
    if (p.empty() || std::filesystem::path(p).is_absolute()) return p;
    return (std::filesystem::path(path_).parent_path() / p).lexically_normal().string();
  }

 private:
  std::string path_;
};

Result<SuiteGraph> read_graph(const Reader& r, const YAML::Node& node, const std::string& where) {
  if (auto s = r.keys(node, where, {"file", "weights", "name", "builtin", "model", "size", "only"});
      !s)
    return std::move(s).error();
  SuiteGraph g;
  for (auto [key, field] : {std::pair{"file", &g.file}, std::pair{"weights", &g.weights},
                            std::pair{"name", &g.name}, std::pair{"builtin", &g.builtin},
                            std::pair{"model", &g.model}, std::pair{"size", &g.size}}) {
    if (!node[key]) continue;
    auto text = r.string(node[key], where + "." + key);
    if (!text) return std::move(text).error();
    *field = *text;
  }
  if (!g.file.empty() + !g.builtin.empty() + !g.model.empty() != 1)
    return r.error(node, "'" + where + "' needs exactly one of 'file', 'builtin' and 'model'");
  if (!g.weights.empty() && g.file.empty())
    return r.error(node["weights"], "'" + where + ".weights' goes with 'file'");
  if (!g.builtin.empty() && g.builtin != "anchors")
    return r.error(node["builtin"], "'" + where +
                                        ".builtin' must be anchors (the anchor "
                                        "workloads); got '" +
                                        g.builtin + "'");
  if (g.size != "cpu" && g.size != "gpu" && g.size != "small")
    return r.error(node["size"], "'" + where + ".size' must be cpu, gpu or small");
  if (const YAML::Node only = node["only"]) {
    if (!only.IsSequence()) return r.error(only, "'" + where + ".only' must be a list");
    for (const auto& item : only) {
      auto text = r.string(item, where + ".only");
      if (!text) return std::move(text).error();
      g.only.push_back(*text);
    }
  }
  if (!g.only.empty() && g.builtin.empty())
    return r.error(node["only"], "'" + where + ".only' goes with 'builtin'");
  g.file = r.resolve(g.file);
  g.model = r.resolve(g.model);
  g.weights = r.resolve(g.weights);
  return g;
}

Result<SuiteTarget> read_target(const Reader& r, const YAML::Node& node, const std::string& where) {
  if (auto s = r.keys(node, where, {"name", "config", "config_text", "torch", "device", "threads"});
      !s)
    return std::move(s).error();
  SuiteTarget t;
  for (auto [key, field] : {std::pair{"name", &t.name}, std::pair{"config", &t.config_file},
                            std::pair{"config_text", &t.config_text}, std::pair{"torch", &t.torch},
                            std::pair{"device", &t.device}}) {
    if (!node[key]) continue;
    auto text = r.string(node[key], where + "." + key);
    if (!text) return std::move(text).error();
    *field = *text;
  }
  if (node["threads"]) {
    auto v = r.integer(node["threads"], where + ".threads", 1, 4096);
    if (!v) return std::move(v).error();
    t.threads = *v;
  }
  if (!t.config_file.empty() && !t.config_text.empty())
    return r.error(node, "'" + where + "' takes 'config' or 'config_text', not both");
  if (!t.torch.empty()) {
    if (t.torch != "eager" && t.torch != "compile" && t.torch != "max-autotune")
      return r.error(
          node["torch"],
          "'" + where + ".torch' must be eager, compile or max-autotune; got '" + t.torch + "'");
    if (!t.config_file.empty() || !t.config_text.empty())
      return r.error(node, "'" + where +
                               "' is a PyTorch reference ('torch') or a kiln config, "
                               "not both");
    const bool cuda = t.device == "cuda" || t.device.rfind("cuda:", 0) == 0;
    if (t.device != "cpu" && !cuda)
      return r.error(node["device"],
                     "'" + where + ".device' must be cpu, cuda or cuda:N; got '" + t.device + "'");
  } else if (node["device"] || node["threads"]) {
    return r.error(node["device"] ? node["device"] : node["threads"],
                   "'" + where +
                       "': 'device' and 'threads' are for a PyTorch reference "
                       "('torch'); a kiln target's devices come from its config");
  }
  if (t.name.empty()) {
    if (!t.torch.empty())
      t.name = "torch-" + t.torch;
    else if (t.config_file.empty() && t.config_text.empty())
      t.name = "default";
    else if (!t.config_file.empty())
      t.name = std::filesystem::path(t.config_file).stem().string();
    else
      return r.error(node, "'" + where + "' with 'config_text' needs a 'name'");
  }
  t.config_file = r.resolve(t.config_file);
  return t;
}

}  // namespace

Result<Suite> load_suite(const std::string& path) {
  const Reader r(path);
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return Error::user(path + ": cannot read the suite file");
  } catch (const YAML::Exception& e) {
    return Error::user(path + ":" + std::to_string(e.mark.line + 1) + ":" +
                       std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  if (auto s = r.keys(root, "", {"suite", "graphs", "targets", "protocol", "check"}); !s)
    return std::move(s).error();
  Suite suite;
  suite.path = path;
  if (!root["suite"]) return r.error(root, "a suite needs a 'suite' name");
  auto name = r.string(root["suite"], "suite");
  if (!name) return std::move(name).error();
  suite.name = *name;
  for (const char* key : {"graphs", "targets"}) {
    const YAML::Node list = root[key];
    if (!list || !list.IsSequence() || list.size() == 0)
      return r.error(list ? list : root, "'" + std::string(key) + "' must be a non-empty list");
  }
  for (size_t i = 0; i < root["graphs"].size(); ++i) {
    auto g = read_graph(r, root["graphs"][i], "graphs[" + std::to_string(i) + "]");
    if (!g) return std::move(g).error();
    suite.graphs.push_back(std::move(*g));
  }
  std::set<std::string> names;
  for (size_t i = 0; i < root["targets"].size(); ++i) {
    const std::string where = "targets[" + std::to_string(i) + "]";
    auto t = read_target(r, root["targets"][i], where);
    if (!t) return std::move(t).error();
    if (!names.insert(t->name).second)
      return r.error(root["targets"][i],
                     "'" + where + "': target '" + t->name + "' is listed twice");
    suite.targets.push_back(std::move(*t));
  }
  if (const YAML::Node p = root["protocol"]) {
    if (auto s = r.keys(p, "protocol", {"runs", "runs_per_sample"}); !s)
      return std::move(s).error();
    if (p["runs"]) {
      auto v = r.integer(p["runs"], "protocol.runs", 1, 100000);
      if (!v) return std::move(v).error();
      suite.protocol.runs = *v;
    }
    if (p["runs_per_sample"]) {
      auto v = r.integer(p["runs_per_sample"], "protocol.runs_per_sample", 1, 1000);
      if (!v) return std::move(v).error();
      suite.protocol.runs_per_sample = *v;
    }
  }
  if (const YAML::Node c = root["check"]) {
    bool value = true;
    if (!c.IsScalar() || !YAML::convert<bool>::decode(c, value))
      return r.error(c, "'check' must be true or false");
    suite.check = value;
  }
  return suite;
}

}  // namespace kiln::bench
