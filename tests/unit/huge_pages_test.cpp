// Transparent huge pages for fresh host outputs (core/runtime/huge_pages.h): the policy read
// from sysfs text and the advice covering whole huge pages only (run_into's use of it:
// run_into_test.cpp).
#include "core/runtime/huge_pages.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/unit/huge_page_mapping.h"

namespace kiln {
namespace {

using Mode = HugePagePolicy::Mode;
using test::asked_for_huge_pages;
using test::kHuge;
using test::Mapping;
using test::vm_flags_at;

TEST(HugePages, ModeIsTheBracketedWord) {
  EXPECT_EQ(parse_huge_page_mode("always [madvise] never\n"), Mode::Madvise);
  EXPECT_EQ(parse_huge_page_mode("[always] madvise never"), Mode::Always);
  EXPECT_EQ(parse_huge_page_mode("always madvise [never]"), Mode::Never);
  EXPECT_EQ(parse_huge_page_mode("always madvise never"), Mode::Unavailable);
  EXPECT_EQ(parse_huge_page_mode("[sometimes]"), Mode::Unavailable);
  EXPECT_EQ(parse_huge_page_mode(""), Mode::Unavailable);
}

TEST(HugePages, PolicyFromTheSysfsFiles) {
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("kiln-thp-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "enabled") << "always [madvise] never\n";
  std::ofstream(dir / "hpage_pmd_size") << "2097152\n";
  HugePagePolicy p = read_huge_page_policy(dir);
  EXPECT_EQ(p.mode, Mode::Madvise);
  EXPECT_EQ(p.page_bytes, 2097152u);
  EXPECT_TRUE(p.worth_advising());
  std::ofstream(dir / "hpage_pmd_size") << "3000000\n";  // not a page size
  EXPECT_FALSE(read_huge_page_policy(dir).worth_advising());
  std::ofstream(dir / "hpage_pmd_size") << "536870912\n";  // arm64 with 64 KiB pages
  EXPECT_FALSE(read_huge_page_policy(dir).worth_advising()) << "a 512 MiB page per fault";
  std::ofstream(dir / "hpage_pmd_size") << "33554432\n";  // arm64 with 16 KiB pages
  EXPECT_TRUE(read_huge_page_policy(dir).worth_advising());
  std::ofstream(dir / "enabled") << "[always] madvise never\n";
  std::ofstream(dir / "hpage_pmd_size") << "2097152\n";
  EXPECT_FALSE(read_huge_page_policy(dir).worth_advising()) << "`always` needs no advice";
  std::filesystem::remove_all(dir);
  EXPECT_EQ(read_huge_page_policy(dir).mode, Mode::Unavailable) << "no files, no huge pages";
}

TEST(HugePages, AdviceCoversWholeHugePagesOnly) {
  Mapping m(4 * kHuge);
  ASSERT_NE(m.base, 0u);
  const uintptr_t start = m.unaligned();
  const HugePagePolicy madvise_mode{Mode::Madvise, kHuge};
  EXPECT_FALSE(advise_huge_pages(madvise_mode, start, kHuge)) << "no whole huge page inside";
  EXPECT_FALSE(advise_huge_pages(HugePagePolicy{Mode::Always, kHuge}, start, 3 * kHuge));
  if (!advise_huge_pages(madvise_mode, start, 3 * kHuge))
    GTEST_SKIP() << "this kernel refuses MADV_HUGEPAGE (built without transparent huge pages)";
  const uintptr_t first_whole = m.first_whole();
  EXPECT_FALSE(asked_for_huge_pages(start)) << vm_flags_at(start);
  EXPECT_TRUE(asked_for_huge_pages(first_whole)) << vm_flags_at(first_whole);
  EXPECT_TRUE(asked_for_huge_pages(first_whole + 2 * kHuge - 1));
  EXPECT_FALSE(asked_for_huge_pages(first_whole + 2 * kHuge)) << "the tail is not a whole page";
}

}  // namespace
}  // namespace kiln
