// The SDK's C++ helpers, as a plugin author uses them.
#include <gtest/gtest.h>

#include <kiln/plugin.hpp>
#include <stdexcept>

namespace {

using kiln::sdk::Failure;
using kiln::sdk::guard;

kiln_plugin_api helper_api() {
  kiln_plugin_api api{};
  kiln::sdk::fill_error_and_blob_functions(api);
  return api;
}

TEST(SdkGuard, SuccessIsNull) {
  EXPECT_EQ(guard([] {}), nullptr);
}

TEST(SdkGuard, ExceptionsBecomeErrors) {
  const kiln_plugin_api api = helper_api();
  struct Case {
    kiln_error* error;
    kiln_status code;
    const char* message;
  };
  const Case cases[] = {
      {guard([] { throw Failure(KILN_STATUS_UNSUPPORTED, "no f64"); }), KILN_STATUS_UNSUPPORTED,
       "no f64"},
      {guard([] { throw std::runtime_error("oops"); }), KILN_STATUS_INTERNAL, "oops"},
      {guard([] { throw std::bad_alloc(); }), KILN_STATUS_OUT_OF_MEMORY, "out of memory"},
      {guard([] { throw 7; }), KILN_STATUS_INTERNAL, "unknown exception"},
  };
  for (const auto& c : cases) {
    ASSERT_NE(c.error, nullptr);
    EXPECT_EQ(api.error_code(c.error), c.code);
    EXPECT_STREQ(api.error_message(c.error), c.message);
    api.error_destroy(c.error);
  }
}

TEST(SdkBlob, HoldsBytes) {
  const kiln_plugin_api api = helper_api();
  kiln_blob* blob = kiln::sdk::make_blob(std::string("a\0b", 3));
  EXPECT_EQ(api.blob_size(blob), 3u);
  EXPECT_EQ(std::string(static_cast<const char*>(api.blob_data(blob)), 3), std::string("a\0b", 3));
  api.blob_destroy(blob);
}

TEST(SdkStructs, ReadFromAnOlderSmallerHostStructZeroFillsTheRest) {
  kiln_compile_args host{};
  host.struct_size = offsetof(kiln_compile_args, config);  // a host that predates `config`
  host.device = 3;
  host.config = "must not be read";
  const kiln_compile_args seen = kiln::sdk::read_struct(&host);
  EXPECT_EQ(seen.device, 3u);
  EXPECT_EQ(seen.config, nullptr);
  EXPECT_EQ(seen.struct_size, sizeof(kiln_compile_args));
}

TEST(SdkStructs, WriteStopsAtTheHostsSize) {
  kiln_memory_stats host{};
  host.struct_size = offsetof(kiln_memory_stats, bytes_limit);  // an older host
  host.bytes_limit = 12345;  // beyond its struct: must stay untouched
  kiln_memory_stats mine{};
  mine.struct_size = sizeof(mine);
  mine.bytes_in_use = 1;
  mine.peak_bytes_in_use = 2;
  mine.bytes_limit = 3;
  kiln::sdk::write_struct(&host, mine);
  EXPECT_EQ(host.bytes_in_use, 1u);
  EXPECT_EQ(host.peak_bytes_in_use, 2u);
  EXPECT_EQ(host.bytes_limit, 12345u);
  EXPECT_EQ(host.struct_size, offsetof(kiln_memory_stats, bytes_limit));
}

TEST(SdkOptions, ScalarsListsAndUnknownKeys) {
  const char* flags[] = {"-O3", "-g"};
  const char* threads[] = {"8"};
  const kiln_option options[] = {
      {sizeof(kiln_option), "flags", flags, 2, 1},
      {sizeof(kiln_option), "threads", threads, 1, 0},
  };
  const kiln::sdk::Options parsed(options, 2);
  EXPECT_EQ(parsed.get("threads", "auto"), "8");
  EXPECT_EQ(parsed.get("compiler", "g++"), "g++");
  EXPECT_EQ(parsed.get_list("flags", {}), (std::vector<std::string>{"-O3", "-g"}));
  EXPECT_NO_THROW(parsed.reject_unknown({"flags", "threads"}));
  try {
    parsed.reject_unknown({"threads"});
    FAIL() << "expected a Failure";
  } catch (const Failure& f) {
    EXPECT_EQ(f.code(), KILN_STATUS_INVALID_ARGUMENT);
    EXPECT_STREQ(f.what(), "unknown option 'flags' (known options: threads)");
  }
}

TEST(SdkOptions, ArrayStrideFollowsTheHostsStructSize) {
  // A newer host whose kiln_option carries one more field: the plugin must stride by the
  // host's struct_size, not its own sizeof.
  struct NewerOption {
    kiln_option v1;
    int64_t added_later;
  };
  const char* a[] = {"1"};
  const char* b[] = {"2"};
  const NewerOption options[] = {
      {{sizeof(NewerOption), "a", a, 1, 0}, 99},
      {{sizeof(NewerOption), "b", b, 1, 0}, 99},
  };
  const kiln::sdk::Options parsed(&options[0].v1, 2);
  EXPECT_EQ(parsed.get("a", ""), "1");
  EXPECT_EQ(parsed.get("b", ""), "2");
}

TEST(SdkProperties, StringsOutliveGrowth) {
  kiln::sdk::PropertyList list;
  list.add_string("name", "first");
  for (int i = 0; i < 100; ++i) list.add_int("k" + std::to_string(i), i);
  list.add_bool("fast", true);
  ASSERT_EQ(list.size(), 102u);
  EXPECT_STREQ(list.data()[0].key, "name");
  EXPECT_STREQ(list.data()[0].string_value, "first");
  EXPECT_EQ(list.data()[50].int_value, 49);
  EXPECT_EQ(list.data()[101].type, KILN_PROPERTY_BOOL);
}

}  // namespace
