// The on-disk cache: whole entries or none, checksums, corrupt and truncated entries,
// refused directories, explained misses, LRU eviction, stats, verify and clear.
#include "core/cache/disk_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

namespace kiln {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class DiskCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kiln_cache_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  DiskCache open(int64_t max_bytes = 1 << 20) const {
    return DiskCache(dir_.string(), max_bytes, log_);
  }
  static CacheKey key(const std::string& config) {
    return kernel_key("0123456789abcdef0123456789abcdef", config, "cpp_openmp:0:cpu", "g++ 12");
  }
  fs::path dir_;
  std::shared_ptr<spdlog::logger> log_ =
      std::make_shared<spdlog::logger>("cache", std::make_shared<spdlog::sinks::null_sink_mt>());
};

TEST_F(DiskCacheTest, StoresAndReadsBackAndKeysDiffer) {
  const DiskCache cache = open();
  ASSERT_TRUE(cache.enabled()) << cache.refused();
  EXPECT_FALSE(cache.get(key("a")));
  cache.put(key("a"), std::string("artifact\0bytes", 14));
  EXPECT_EQ(cache.get(key("a")), std::string("artifact\0bytes", 14));
  EXPECT_FALSE(cache.get(key("b")));
  EXPECT_NE(key("a").digest(), key("b").digest());
  // A new cache directory is the owner's alone.
  EXPECT_EQ(fs::status(dir_).permissions() & (fs::perms::group_all | fs::perms::others_all),
            fs::perms::none);
}

TEST_F(DiskCacheTest, CorruptAndTruncatedEntriesAreMissesAndRemoved) {
  const DiskCache cache = open();
  cache.put(key("a"), "first payload");
  cache.put(key("b"), "second payload");
  const std::string a = cache.path_of(key("a")), b = cache.path_of(key("b"));
  {  // flip one payload byte
    std::fstream f(a, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-3, std::ios::end);
    f.put('X');
  }
  fs::resize_file(b, fs::file_size(b) / 2);  // a writer that died half way
  EXPECT_EQ(cache.verify(false).size(), 2u);
  EXPECT_FALSE(cache.get(key("a")));
  EXPECT_FALSE(cache.get(key("b")));
  EXPECT_FALSE(fs::exists(a));
  EXPECT_FALSE(fs::exists(b));
  cache.put(key("a"), "first payload");  // computed again and replaced
  EXPECT_EQ(cache.get(key("a")), "first payload");
  EXPECT_TRUE(cache.verify(true).empty());
}

TEST_F(DiskCacheTest, GarbageFilesAreReportedByVerify) {
  const DiskCache cache = open();
  cache.put(key("a"), "payload");
  fs::create_directories(dir_ / "kernels" / "ff");
  std::ofstream(dir_ / "kernels" / "ff" / "ffff.bin") << "not an entry";
  // The right magic over a mangled key: explaining a miss reads it without throwing.
  std::ofstream(dir_ / "kernels" / "ff" / "fffe.bin")
      << "kiln-cache/2\n"
      << std::string(32, 'a') << "\nkernels\nx9\nno tab here\n";
  EXPECT_THAT(cache.explain_miss(key("b")), HasSubstr("config ('a' there, 'b' here)"));
  const auto problems = cache.verify(true);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_THAT(problems[0].why + problems[1].why, HasSubstr("not a kiln cache entry"));
  EXPECT_EQ(cache.stats().entries, 1);
}

TEST_F(DiskCacheTest, DirectoryWritableByOthersIsRefused) {
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::others_write | fs::perms::others_exec);
  const DiskCache cache = open();
  EXPECT_FALSE(cache.enabled());
  EXPECT_THAT(cache.refused(), HasSubstr("writable by other users"));
  cache.put(key("a"), "payload");  // ignored, and no crash
  EXPECT_FALSE(cache.get(key("a")));
  EXPECT_TRUE(fs::is_empty(dir_));
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_write);
  EXPECT_FALSE(open().enabled());
  fs::permissions(dir_, fs::perms::owner_all);
  EXPECT_TRUE(open().enabled());
}

TEST_F(DiskCacheTest, MissesNameWhatDiffersFromTheNearestEntry) {
  const DiskCache cache = open();
  EXPECT_EQ(cache.explain_miss(key("a")), "no kernels entry yet");
  cache.put(key("block_size=256"), "x");
  cache.put(kernel_key("ffffffffffffffffffffffffffffffff", "", "other", "clang"), "y");
  const std::string why = cache.explain_miss(key("block_size=512"));
  EXPECT_THAT(why, HasSubstr("config ('block_size=256' there, 'block_size=512' here)"));
  EXPECT_THAT(why, ::testing::Not(HasSubstr("kir_hash")));
  CacheKey moved = key("block_size=256");
  moved.parts[4].second = "g++ 13";  // the compiler changed (a copied cache, a new machine)
  EXPECT_THAT(cache.explain_miss(moved), HasSubstr("compiler_fingerprint ('g++ 12' there"));
  // A long value that differs near its end: the message shows the words around the change.
  const std::string head = "fusion=true max_readers=4 max_inline_ops=64 max_kernel_ops=256 ";
  cache.put(key(head + "split=4096 deterministic=false"), "z");
  EXPECT_THAT(cache.explain_miss(key(head + "split=4096 deterministic=true")),
              HasSubstr("('...split=4096 deterministic=false' there, '...split=4096 "
                        "deterministic=true' here)"));
}

TEST_F(DiskCacheTest, EvictsTheLeastRecentlyUsedBeyondTheCap) {
  const std::string payload(400, 'p');
  open().put(key("1"), payload);
  const auto entry = static_cast<int64_t>(fs::file_size(open().path_of(key("1"))));
  const DiskCache cache = open(entry * 7 / 2);  // room for three entries
  cache.put(key("1"), payload);
  cache.put(key("2"), payload);
  cache.put(key("3"), payload);
  // Entry 1 used last: 2 is now the least recently used.
  const auto old = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::last_write_time(cache.path_of(key("2")), old);
  fs::last_write_time(cache.path_of(key("3")), old + std::chrono::minutes(1));
  EXPECT_TRUE(cache.get(key("1")));
  cache.put(key("4"), payload);
  EXPECT_FALSE(fs::exists(cache.path_of(key("2"))));
  EXPECT_TRUE(cache.get(key("1")));
  EXPECT_TRUE(cache.get(key("3")));
  EXPECT_TRUE(cache.get(key("4")));
  EXPECT_EQ(cache.stats().entries, 3);
  EXPECT_LE(cache.stats().bytes, entry * 7 / 2);
}

TEST_F(DiskCacheTest, StatsAndClear) {
  const DiskCache cache = open();
  cache.put(key("1"), "a");
  cache.put(key("2"), "b");
  cache.put(CacheKey{"tune", {{"kir_hash", "h"}}}, "block_size=512");
  const CacheStats s = cache.stats();
  EXPECT_EQ(s.entries, 3);
  ASSERT_EQ(s.kinds.size(), 2u);
  EXPECT_EQ(s.kinds[0].name, "kernels");
  EXPECT_EQ(s.kinds[0].entries, 2);
  EXPECT_EQ(s.kinds[1].name, "tune");
  EXPECT_EQ(cache.clear(), 3);
  EXPECT_EQ(cache.stats().entries, 0);
}

TEST_F(DiskCacheTest, ConcurrentWritersLeaveOneWholeEntry) {
  const DiskCache cache = open();
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t)
    writers.emplace_back([&] {
      for (int i = 0; i < 50; ++i) cache.put(key("same"), std::string(10000, 'w'));
    });
  std::vector<std::thread> readers;
  std::atomic<int> bad{0};
  for (int t = 0; t < 2; ++t)
    readers.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        auto v = cache.get(key("same"));
        if (v && *v != std::string(10000, 'w')) ++bad;
      }
    });
  for (auto& w : writers) w.join();
  for (auto& r : readers) r.join();
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(cache.get(key("same")), std::string(10000, 'w'));
  EXPECT_TRUE(cache.verify(false).empty());
  EXPECT_EQ(cache.stats().entries, 1);  // no temporary files left as entries
}

}  // namespace
}  // namespace kiln
