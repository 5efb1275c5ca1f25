// Where the tests find what they read and write, relative to the test binary, so a copied
// build tree or an unpacked device bundle runs the suite anywhere. Each has an environment
// override for layouts these rules do not cover.
#pragma once

#include <string>

namespace kiln::test {

// The plugins under test: $KILN_TEST_PLUGIN_DIR, else <binary>/../lib/kiln.
std::string plugin_dir();
// The misbehaving and timing test plugins: <binary>/../lib/kiln-test.
std::string test_plugin_dir();
// The folder holding examples/ and configs/: $KILN_TEST_DATA_DIR, else the nearest folder
// above the binary that holds both (the source tree above build/<preset>/bin, the bundle's
// root above bin/).
std::string data_dir();
// The suite's kernel cache: $KILN_TEST_CACHE_DIR, else <binary>/../test-kernel-cache.
std::string cache_dir();
// The cpp_openmp plugin's precompiled headers for the suite: $KILN_TEST_HEADER_CACHE_DIR,
// else <binary>/../test-header-cache (kept out of the user's own cache directory).
std::string header_cache_dir();

}  // namespace kiln::test
