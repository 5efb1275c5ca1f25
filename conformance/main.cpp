// kiln-conformance: the kit a plugin vendor runs against a plugin built with the SDK. Every ABI
// rule of plugin.h, memory, streams and events, every KIR construct against kiln's reference
// interpreter, the error paths and claimed thread safety; each check PASS, FAIL or SKIP with its
// reason, printed and written as a Markdown or JSON report. Exits 1 when any check fails.
//   kiln-conformance PLUGIN.so [--device N] [--report out.md|out.json] [--option KEY=VALUE]...
#include <CLI/CLI.hpp>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "conformance/context.h"
#include "conformance/isolated.h"

namespace kc = kiln::conformance;
namespace fs = std::filesystem;

namespace {

// The kit's graphs: beside an installed kit (PREFIX/share/kiln/conformance/graphs), else the
// source tree's.
std::string default_graphs_dir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = self.parent_path().parent_path() / "share/kiln/conformance/graphs";
    if (fs::is_directory(installed, ec)) return installed.string();
  }
  return KILN_CONFORMANCE_GRAPHS;
}

// What the report's header says, read in a process of its own (a driver the plugin starts,
// such as CUDA's, cannot be used across the kit's later forks).
kc::Subject describe(const kc::Context& c) {
  const kc::Finding f = kc::run_isolated(
      [&]() -> kc::Finding {
        kc::RawPlugin p(c.path);
        if (!p.table()) return kc::fail("declined");
        const std::string abi =
            std::to_string(p.table()->abi_major) + "." + std::to_string(p.table()->abi_minor);
        if (std::string e = p.create(c.options); !e.empty())
          return kc::skip("\t\t\t" + abi + "\tnot created: " + e);
        kiln_plugin_attributes a{};
        a.struct_size = sizeof a;
        p.take(p.table()->get_attributes(p.instance(), &a));
        std::string devices;
        for (uint32_t d = 0; d < p.device_count(); ++d) {
          kiln_device_info info{};
          info.struct_size = sizeof info;
          if (p.take(p.table()->device_info(p.instance(), d, &info)).empty())
            devices += (devices.empty() ? "" : ", ") + std::string(info.kind ? info.kind : "?") +
                       ":" + std::to_string(d) + " " + (info.name ? info.name : "");
        }
        return kc::pass(std::string(a.name ? a.name : "") + "\t" + (a.version ? a.version : "") +
                        "\t" + (a.vendor ? a.vendor : "") + "\t" + abi + "\t" +
                        (devices.empty() ? "none" : devices));
      },
      c.timeout_seconds);
  std::vector<std::string> fields;
  // A plugin that cannot even be opened is named by its file.
  std::istringstream in(f.verdict == kc::Verdict::Fail ? std::string() : f.detail);
  for (std::string field; std::getline(in, field, '\t');) fields.push_back(field);
  fields.resize(5);
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  return {c.path,    fields[0].empty() ? fs::path(c.path).filename().string() : fields[0],
          fields[1], fields[2],
          fields[3], fields[4],
          date};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kiln-conformance: checks a kiln plugin against the ABI and the reference"};
  kc::Context c;
  std::string report_path;
  std::vector<std::string> options;
  c.graphs_dir = default_graphs_dir();
  app.add_option("plugin", c.path, "the plugin's shared object (kiln_NAME.so)")->required();
  app.add_option("--device", c.device, "the device to test (default 0)");
  app.add_option("--report", report_path, "write the report to FILE: .md (Markdown) or .json");
  app.add_option("--option", options, "a plugin option KEY=VALUE (repeatable)");
  app.add_option("--graphs", c.graphs_dir, "the folder of the kit's graphs");
  app.add_option("--timeout", c.timeout_seconds, "seconds one isolated check may take");
  CLI11_PARSE(app, argc, argv);
  if (!fs::is_regular_file(c.path)) {
    std::cerr << "kiln-conformance: no plugin file " << c.path << "\n";
    return 2;
  }
  c.path = fs::absolute(c.path).string();
  for (const std::string& o : options) {
    const size_t eq = o.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "kiln-conformance: --option " << o << ": expected KEY=VALUE\n";
      return 2;
    }
    c.options.emplace_back(o.substr(0, eq), o.substr(eq + 1));
  }
  if (!report_path.empty() && !report_path.ends_with(".md") && !report_path.ends_with(".json")) {
    std::cerr << "kiln-conformance: --report " << report_path << ": name a .md or .json file\n";
    return 2;
  }
  const kc::Subject subject = describe(c);
  kc::Report report(&std::cout);
  kc::check_abi(c, report);
  kc::check_memory(c, report);
  kc::check_streams(c, report);
  kc::check_imports(c, report);
  kc::check_capture(c, report);
  kc::check_kir(c, report);
  std::cout << "kiln-conformance: " << subject.name << " " << subject.version << ": "
            << report.count(kc::Verdict::Pass) << " passed, " << report.count(kc::Verdict::Fail)
            << " failed, " << report.count(kc::Verdict::Skip) << " skipped\n";
  if (!report_path.empty()) {
    std::ofstream out(report_path);
    out << (report_path.ends_with(".json") ? report.json(subject) : report.markdown(subject));
    if (!out) {
      std::cerr << "kiln-conformance: cannot write " << report_path << "\n";
      return 2;
    }
  }
  return report.count(kc::Verdict::Fail) > 0 ? 1 : 0;
}
