#include "conformance/report.h"

#include <nlohmann/json.hpp>

namespace kiln::conformance {

const char* verdict_name(Verdict v) {
  return v == Verdict::Pass ? "PASS" : v == Verdict::Fail ? "FAIL" : "SKIP";
}

void Report::add(const std::string& group, const std::string& name, Finding finding) {
  if (echo_)
    *echo_ << verdict_name(finding.verdict) << " " << group << ": " << name
           << (finding.detail.empty() ? "" : " -- ") << finding.detail << std::endl;
  checks_.push_back({group, name, std::move(finding)});
}

int Report::count(Verdict v) const {
  int n = 0;
  for (const Check& c : checks_) n += c.finding.verdict == v;
  return n;
}

namespace {

// Table cells hold no pipes or line breaks.
std::string cell(std::string text) {
  for (char& c : text)
    if (c == '|' || c == '\n') c = c == '|' ? '/' : ' ';
  return text;
}

}  // namespace

std::string Report::markdown(const Subject& s) const {
  std::string out = "# kiln conformance: " + s.name + " " + s.version + "\n\n";
  out += "| | |\n|---|---|\n";
  out += "| plugin | `" + cell(s.path) + "` |\n| vendor | " + cell(s.vendor) + " |\n";
  out += "| ABI | " + cell(s.abi) + " |\n| devices | " + cell(s.devices) + " |\n";
  out += "| date | " + s.date + " |\n";
  out += "| result | " + std::to_string(count(Verdict::Pass)) + " passed, " +
         std::to_string(count(Verdict::Fail)) + " failed, " + std::to_string(count(Verdict::Skip)) +
         " skipped |\n";
  std::string group;
  for (const Check& c : checks_) {
    if (c.group != group) {
      group = c.group;
      out += "\n## " + group + "\n\n| check | verdict | detail |\n|---|---|---|\n";
    }
    out += "| " + cell(c.name) + " | " + verdict_name(c.finding.verdict) + " | " +
           cell(c.finding.detail) + " |\n";
  }
  return out;
}

std::string Report::json(const Subject& s) const {
  nlohmann::json j;
  j["plugin"] = {{"path", s.path},     {"name", s.name}, {"version", s.version},
                 {"vendor", s.vendor}, {"abi", s.abi},   {"devices", s.devices}};
  j["date"] = s.date;
  j["passed"] = count(Verdict::Pass);
  j["failed"] = count(Verdict::Fail);
  j["skipped"] = count(Verdict::Skip);
  j["checks"] = nlohmann::json::array();
  for (const Check& c : checks_)
    j["checks"].push_back({{"group", c.group},
                           {"name", c.name},
                           {"verdict", verdict_name(c.finding.verdict)},
                           {"detail", c.finding.detail}});
  return j.dump(2) + "\n";
}

}  // namespace kiln::conformance
