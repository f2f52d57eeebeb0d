// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "models/common/params.hpp"
#include "models/common/utf8.hpp"

using indexsim::config::ConfigError;
using indexsim::config::Document;
using indexsim::config::Rule;

namespace {
const char* kDoc = R"(
memory:
  hbm:
    tRCD_ns: 14.4
    stacks: 6
    impl: hbm3e
)";
}

TEST(ConfigParams, ReadsTypedValuesAndRecordsResolvedTree) {
  auto doc = Document::load_string(kDoc, "t.yaml");
  auto hbm = doc->root().child("memory").child("hbm");
  EXPECT_DOUBLE_EQ(hbm.req<double>("tRCD_ns", Rule::positive()), 14.4);
  EXPECT_EQ(hbm.req<int>("stacks"), 6);
  EXPECT_EQ(hbm.req<std::string>("impl"), "hbm3e");
  EXPECT_EQ(hbm.opt<int>("refresh_mode", 1), 1);
  doc->check_unused();
  EXPECT_EQ(doc->resolved()["memory"]["hbm"]["refresh_mode"], 1);  // defaults are part of the resolved config
}

TEST(ConfigParams, MisspeltKeyIsAnErrorNamingFileAndPath) {
  auto doc = Document::load_string("memory:\n  hbm:\n    tRCD_ns: 14\n    tRDC_ns: 3\n", "hw.yaml");
  doc->root().child("memory").child("hbm").req<double>("tRCD_ns");
  try {
    doc->check_unused();
    FAIL() << "unknown key accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file, "hw.yaml");
    EXPECT_EQ(e.path, "memory.hbm.tRDC_ns");
    EXPECT_EQ(e.value, "3");
    EXPECT_NE(std::string(e.what()).find("unknown key"), std::string::npos);
  }
}

TEST(ConfigParams, MissingRequiredKeyNamesThePath) {
  auto doc = Document::load_string("memory: {hbm: {stacks: 6}}\n", "hw.yaml");
  try {
    doc->root().child("memory").child("hbm").req<double>("tRCD_ns");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path, "memory.hbm.tRCD_ns");
    EXPECT_NE(e.rule.find("missing"), std::string::npos);
  }
}

TEST(ConfigParams, NegativeSizeBreaksTheRuleAndSaysWhich) {
  auto doc = Document::load_string("sram: {capacity_MiB: -4}\n", "hw.yaml");
  try {
    doc->root().child("sram").req<double>("capacity_MiB", Rule::positive());
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path, "sram.capacity_MiB");
    EXPECT_EQ(e.value, "-4");
    EXPECT_EQ(e.rule, "must be > 0");
  }
}

TEST(ConfigParams, WrongTypeIsAnError) {
  auto doc = Document::load_string("a: {n: twelve, m: 1.5}\n", "x.yaml");
  EXPECT_THROW(doc->root().child("a").req<int>("n"), ConfigError);
  EXPECT_THROW(doc->root().child("a").req<int>("m"), ConfigError);  // not an integer
}

TEST(ConfigParams, SetOverridesAnyKeyAndChangesTheHash) {
  auto a = Document::load_string(kDoc, "t.yaml");
  auto b = Document::load_string(kDoc, "t.yaml");
  b->set("memory.hbm.stacks=8");
  EXPECT_EQ(b->root().child("memory").child("hbm").req<int>("stacks"), 8);
  a->root().child("memory").child("hbm").req<int>("stacks");
  EXPECT_NE(indexsim::config::stable_hash(a->resolved()), indexsim::config::stable_hash(b->resolved()));
}

TEST(ConfigParams, HashIsStableAcrossKeyOrder) {
  auto a = Document::load_string("x: 1\ny: 2\n", "a");
  auto b = Document::load_string("y: 2\nx: 1\n", "b");
  for (auto& d : {a, b}) {
    d->root().req<int>("x");
    d->root().req<int>("y");
  }
  EXPECT_EQ(indexsim::config::stable_hash(a->resolved()), indexsim::config::stable_hash(b->resolved()));
  EXPECT_EQ(indexsim::config::stable_hash(a->resolved()).size(), 16u);
}

// RFC 3629: UTF-8 is 1 to 4 bytes per code point, no overlong forms, no surrogates
// (U+D800..U+DFFF), nothing above U+10FFFF. Text that is not is refused where it enters.
TEST(Utf8, WellFormedTextPassesAndEveryKindOfMalformedSequenceFails) {
  EXPECT_TRUE(indexsim::valid_utf8(""));
  EXPECT_TRUE(indexsim::valid_utf8("h200 µs → 加速 \xF0\x9F\x98\x80"));   // 1, 2, 3 and 4 bytes
  EXPECT_TRUE(indexsim::valid_utf8("\xF4\x8F\xBF\xBF"));                  // U+10FFFF
  for (const char* bad : {"\xFF", "\x80", "\xC3", "\xE2\x82", "\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80",
                          "\xF4\x90\x80\x80", "\xF8\x88\x80\x80\x80", "ok\xC3(", "\xE2\x28\xA1"})
    EXPECT_FALSE(indexsim::valid_utf8(bad)) << bad;
  auto doc = indexsim::config::Document::load_string("name: ok\n", "t.yaml");
  EXPECT_THROW(doc->set("name=\xFF"), indexsim::config::ConfigError);
  EXPECT_THROW(indexsim::config::Document::load_string("name: \"\xC0\xAF\"\n", "t.yaml"), indexsim::config::ConfigError);
}
