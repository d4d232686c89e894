// cli/loadable_preload: the path `stacksage run` puts in LD_PRELOAD when the
// recorder's own path holds a space or a colon (which ld.so splits on).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/loadable_preload.hpp"

namespace fs = std::filesystem;
using stacksage::cli::LoadablePreload;
using stacksage::cli::splits_in_ld_preload;
using stacksage::Result;

namespace {

// A fake install: <parent>/<name>/libstacksage-{preload,model}.so.
class LoadablePreloadTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "loadable-preload-test-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        root_ = pattern;
        fs::create_directory(root_ / "tmp");
        old_tmpdir_ = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "";
        ::setenv("TMPDIR", (root_ / "tmp").c_str(), 1);
    }
    void TearDown() override {
        if (old_tmpdir_.empty()) ::unsetenv("TMPDIR"); else ::setenv("TMPDIR", old_tmpdir_.c_str(), 1);
        fs::remove_all(root_);
    }
    std::string install(const std::string& name, bool with_model = true) {
        fs::path dir = root_ / name;
        fs::create_directories(dir);
        std::ofstream(dir / "libstacksage-preload.so") << "recorder";
        if (with_model) std::ofstream(dir / "libstacksage-model.so") << "writer";
        return (dir / "libstacksage-preload.so").string();
    }
    fs::path root_;
    std::string old_tmpdir_;
};

}  // namespace

TEST(SplitsInLdPreload, SpacesAndColonsOnly) {
    EXPECT_FALSE(splits_in_ld_preload("/opt/stacksage-1.0/lib/stacksage/libstacksage-preload.so"));
    EXPECT_TRUE(splits_in_ld_preload("/opt/my tools/lib/stacksage/libstacksage-preload.so"));
    EXPECT_TRUE(splits_in_ld_preload("/opt/a:b/lib/stacksage/libstacksage-preload.so"));
    EXPECT_FALSE(splits_in_ld_preload("/opt/tab\there/libstacksage-preload.so"));  // ld.so keeps tabs
}

TEST_F(LoadablePreloadTest, AnOrdinaryPathIsUsedAsItIs) {
    const std::string library = install("plain");
    Result<LoadablePreload> loadable = LoadablePreload::for_library(library);
    ASSERT_TRUE(loadable) << loadable.error().message;
    EXPECT_EQ(loadable->path(), library);
    EXPECT_EQ(loadable->alias_directory(), "");
    EXPECT_TRUE(fs::is_empty(root_ / "tmp"));
}

TEST_F(LoadablePreloadTest, APathWithASpaceOrAColonBecomesLinksInAPrivateDirectoryUntilTheEnd) {
    for (const std::string name : {"with space", "with:colon"}) {
        const std::string library = install(name);
        std::string directory;
        {
            Result<LoadablePreload> loadable = LoadablePreload::for_library(library);
            ASSERT_TRUE(loadable) << loadable.error().message;
            LoadablePreload moved = std::move(loadable).value();  // the directory follows its owner
            directory = moved.alias_directory();
            EXPECT_FALSE(splits_in_ld_preload(moved.path())) << moved.path();
            EXPECT_EQ(fs::path(directory).parent_path(), root_ / "tmp");
            EXPECT_EQ(fs::path(moved.path()).parent_path(), fs::path(directory));
            EXPECT_EQ(fs::status(directory).permissions() & fs::perms::all, fs::perms::owner_all);
            // The recorder opens the model writer next to the name it was loaded under.
            EXPECT_EQ(fs::read_symlink(fs::path(directory) / "libstacksage-preload.so"), fs::path(library));
            EXPECT_EQ(fs::read_symlink(fs::path(directory) / "libstacksage-model.so"),
                      fs::path(library).parent_path() / "libstacksage-model.so");
        }
        EXPECT_FALSE(fs::exists(directory)) << name;
        EXPECT_TRUE(fs::exists(library)) << "only the links go, never the installed files";
    }
}

TEST_F(LoadablePreloadTest, AMissingModelWriterIsNotLinked) {
    const std::string library = install("no model here", /*with_model=*/false);
    Result<LoadablePreload> loadable = LoadablePreload::for_library(library);
    ASSERT_TRUE(loadable) << loadable.error().message;
    EXPECT_TRUE(fs::is_symlink(fs::path(loadable->alias_directory()) / "libstacksage-preload.so"));
    EXPECT_FALSE(fs::exists(fs::symlink_status(fs::path(loadable->alias_directory()) / "libstacksage-model.so")));
}

TEST_F(LoadablePreloadTest, ATmpdirWithASpaceIsPassedOverForTmp) {
    fs::create_directory(root_ / "tmp dir");
    ::setenv("TMPDIR", (root_ / "tmp dir").c_str(), 1);
    Result<LoadablePreload> loadable = LoadablePreload::for_library(install("a b"));
    ASSERT_TRUE(loadable) << loadable.error().message;
    EXPECT_FALSE(splits_in_ld_preload(loadable->path())) << loadable->path();
    EXPECT_TRUE(fs::is_empty(root_ / "tmp dir"));
}
