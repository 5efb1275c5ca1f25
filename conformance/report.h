// The conformance kit's findings: one verdict per check (PASS, FAIL or SKIP, with the reason),
// grouped by what they check, written as the Markdown report a vendor publishes or as JSON.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace kiln::conformance {

enum class Verdict { Pass, Fail, Skip };

struct Finding {
  Verdict verdict = Verdict::Pass;
  std::string detail;  // why it failed or was skipped; what was seen when it passed
};

struct Check {
  std::string group;  // "abi", "memory", "streams", "kir", "errors", "threads"
  std::string name;
  Finding finding;
};

inline Finding pass(std::string detail = "") {
  return {Verdict::Pass, std::move(detail)};
}
inline Finding fail(std::string detail) {
  return {Verdict::Fail, std::move(detail)};
}
inline Finding skip(std::string detail) {
  return {Verdict::Skip, std::move(detail)};
}

const char* verdict_name(Verdict v);

// What the report's header says about the plugin under test.
struct Subject {
  std::string path, name, version, vendor, abi, devices, date;
};

class Report {
 public:
  // Each finding is also printed to `echo` as it is made ("PASS group: name -- detail"), so
  // what was found survives a later check that takes the kit down.
  explicit Report(std::ostream* echo = nullptr) : echo_(echo) {}
  void add(const std::string& group, const std::string& name, Finding finding);
  const std::vector<Check>& checks() const { return checks_; }
  int count(Verdict v) const;
  std::string markdown(const Subject& subject) const;
  std::string json(const Subject& subject) const;

 private:
  std::ostream* echo_;
  std::vector<Check> checks_;
};

}  // namespace kiln::conformance
