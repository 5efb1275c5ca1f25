#include "bench/suite/results.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

namespace kiln::bench {
namespace {

using json = nlohmann::json;

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

json row_json(const ResultRow& r) {
  return json{{"cell", r.cell},
              {"graph", r.graph},
              {"shape", r.shape},
              {"target", r.target},
              {"device", r.device},
              {"kernels", r.kernels},
              {"runs", r.runs},
              {"median_ms", r.median_ms},
              {"min_ms", r.min_ms},
              {"max_ms", r.max_ms},
              {"ci_low_ms", r.ci_low_ms},
              {"ci_high_ms", r.ci_high_ms},
              {"bytes", r.bytes},
              {"gbps", r.gbps},
              {"device_gbps", r.device_gbps},
              {"bandwidth_fraction", r.bandwidth_fraction},
              {"compile_cold_ms", r.compile_cold_ms},
              {"compile_warm_ms", r.compile_warm_ms},
              {"check", r.check},
              {"max_abs_error", r.max_abs_error},
              {"error", r.error},
              {"reference", r.reference},
              {"skipped", r.skipped}};
}

// JSON has no infinity: a non-finite number (an unwritten output's error) is written as null
// and read back as infinity.
double number(const json& j, const char* key) {
  const json& v = j.at(key);
  return v.is_null() ? std::numeric_limits<double>::infinity() : v.get<double>();
}

ResultRow row_from(const json& j) {
  ResultRow r;
  r.cell = j.at("cell").get<int64_t>();
  r.graph = j.at("graph").get<std::string>();
  r.shape = j.at("shape").get<std::string>();
  r.target = j.at("target").get<std::string>();
  r.device = j.at("device").get<std::string>();
  r.kernels = j.at("kernels").get<int64_t>();
  r.runs = j.at("runs").get<int64_t>();
  r.median_ms = number(j, "median_ms");
  r.min_ms = number(j, "min_ms");
  r.max_ms = number(j, "max_ms");
  r.ci_low_ms = number(j, "ci_low_ms");
  r.ci_high_ms = number(j, "ci_high_ms");
  r.bytes = j.at("bytes").get<int64_t>();
  r.gbps = number(j, "gbps");
  r.device_gbps = number(j, "device_gbps");
  r.bandwidth_fraction = number(j, "bandwidth_fraction");
  r.compile_cold_ms = number(j, "compile_cold_ms");
  r.compile_warm_ms = number(j, "compile_warm_ms");
  r.check = j.at("check").get<std::string>();
  r.max_abs_error = number(j, "max_abs_error");
  r.error = j.at("error").get<std::string>();
  // Results written before reference rows existed have neither field.
  r.reference = j.value("reference", "");
  r.skipped = j.value("skipped", "");
  return r;
}

}  // namespace

std::string to_csv(const Results& r) {
  std::string s =
      "cell,graph,shape,target,device,kernels,runs,median_ms,min_ms,max_ms,ci_low_ms,ci_high_ms,"
      "bytes,gbps,device_gbps,bandwidth_fraction,compile_cold_ms,compile_warm_ms,check,"
      "max_abs_error,error,reference,skipped\n";
  for (const ResultRow& w : r.rows) {
    s += fmt::format(
        "{},{},{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{},{:.6g},{:.6g},"
        "{:.4f},{:.1f},{:.1f},{},{:.3g},{},{},{}\n",
        w.cell, csv_field(w.graph), csv_field(w.shape), csv_field(w.target), csv_field(w.device),
        w.kernels, w.runs, w.median_ms, w.min_ms, w.max_ms, w.ci_low_ms, w.ci_high_ms, w.bytes,
        w.gbps, w.device_gbps, w.bandwidth_fraction, w.compile_cold_ms, w.compile_warm_ms,
        csv_field(w.check), w.max_abs_error, csv_field(w.error), csv_field(w.reference),
        csv_field(w.skipped));
  }
  return s;
}

std::string to_json(const Results& r) {
  json rows = json::array();
  for (const ResultRow& w : r.rows) rows.push_back(row_json(w));
  const json j{
      {"format", "kiln.bench/1"}, {"suite", r.suite}, {"cells", r.cells}, {"shard", r.shard},
      {"machine", r.machine},     {"date", r.date},   {"rows", rows}};
  return j.dump(2) + "\n";
}

Result<Results> from_json(const std::string& text, const std::string& source) {
  try {
    const json j = json::parse(text);
    if (j.value("format", "") != "kiln.bench/1")
      return Error::user(source + ": not a kiln bench result (format kiln.bench/1)");
    Results r;
    r.suite = j.at("suite").get<std::string>();
    r.cells = j.at("cells").get<int64_t>();
    r.shard = j.at("shard").get<std::string>();
    r.machine = j.at("machine").get<std::string>();
    r.date = j.at("date").get<std::string>();
    for (const json& row : j.at("rows")) r.rows.push_back(row_from(row));
    return r;
  } catch (const json::exception& e) {
    return Error::user(source + ": " + e.what());
  }
}

Result<Results> merge_results(const std::vector<Results>& parts, bool partial) {
  if (parts.empty()) return Error::user("kiln bench merge: no result files");
  Results merged = parts.front();
  merged.shard.clear();
  merged.rows.clear();
  std::map<int64_t, ResultRow> by_cell;
  std::vector<std::string> machines;
  for (const Results& p : parts) {
    if (p.suite != merged.suite || p.cells != merged.cells)
      return Error::user("kiln bench merge: results of suite '" + p.suite + "' (" +
                         std::to_string(p.cells) + " cells) cannot join those of '" + merged.suite +
                         "' (" + std::to_string(merged.cells) + " cells)");
    if (std::find(machines.begin(), machines.end(), p.machine) == machines.end())
      machines.push_back(p.machine);
    for (const ResultRow& row : p.rows) {
      if (row.cell < 0 || row.cell >= merged.cells)
        return Error::user("kiln bench merge: cell " + std::to_string(row.cell) +
                           " is outside the suite's " + std::to_string(merged.cells) + " cells");
      if (!by_cell.emplace(row.cell, row).second)
        return Error::user("kiln bench merge: cell " + std::to_string(row.cell) + " (" + row.graph +
                           " on " + row.target + ") is in two result files");
    }
  }
  std::string missing;
  for (int64_t c = 0; c < merged.cells; ++c)
    if (!by_cell.contains(c)) missing += (missing.empty() ? "" : ", ") + std::to_string(c);
  if (!missing.empty() && !partial)
    return Error::user("kiln bench merge: no result for cells " + missing +
                       " (run their shards, or merge with --partial)");
  merged.machine.clear();
  for (const std::string& m : machines) merged.machine += (merged.machine.empty() ? "" : "; ") + m;
  for (auto& [cell, row] : by_cell) merged.rows.push_back(std::move(row));
  return merged;
}

}  // namespace kiln::bench
