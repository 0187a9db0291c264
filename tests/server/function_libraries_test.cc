// FunctionLibraries (server/scripting/function_libraries.h) and the two
// shebang readers, as redis-server 7.0.15 behaves (each case was checked
// against it): the "#!" line split as sdssplitargs splits it, FUNCTION
// RESTORE compiling each record as it reads it (7.0 release candidates'
// records too) before joining the loaded libraries, function names that
// differ in case only, and an engine that FLUSH and RESTORE keep.
#include "server/scripting/function_libraries.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "core/crc64.h"
#include "server/scripting/scripting.h"

namespace ringkv::server::scripting::function_libraries_test {
namespace {

// A host for libraries that are loaded, listed and dumped, never run.
class NoCalls final : public ScriptHost {
 public:
  const CommandSpec* FindCommand(std::string_view) override { return nullptr; }
  void Call(ScriptRun&, const CommandSpec*, Argv, io::OutBuffer&) override {}
  bool AclCheckCmd(Argv, bool*) override { return false; }
  void Log(int, std::string_view) override {}
  bool OnScriptHook(ScriptRun&) override { return false; }
};

std::string Library(std::string_view name, std::string_view function) {
  return "#!lua name=" + std::string(name) + "\nredis.register_function('" + std::string(function) +
         "', function() return 1 end)";
}

// An RDB string of under 16 KiB: its 6- or 14-bit length, then its bytes.
std::string RdbString(std::string_view s) {
  std::string len = s.size() < 64 ? std::string(1, static_cast<char>(s.size()))
                                   : std::string{static_cast<char>(0x40 | (s.size() >> 8)), static_cast<char>(s.size() & 0xFF)};
  return len + std::string(s);
}

// `records`, then RDB version 10 and the CRC-64 of all that.
std::string Payload(const std::string& records) {
  std::string out = records + std::string("\x0a\x00", 2);
  const uint64_t crc = core::Crc64(0, out);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((crc >> (8 * i)) & 0xFF));
  return out;
}

std::string Function2(std::string_view code) { return "\xf5" + RdbString(code); }

std::string ErrorOf(const absl::Status& s) { return std::string(s.message()); }

class FunctionLibrariesTest : public ::testing::Test {
 protected:
  NoCalls host_;
  FunctionLibraries libs_{&host_};
};

TEST_F(FunctionLibrariesTest, MetadataIsSplitAsSdssplitargsSplits) {
  auto name_of = [](std::string_view first_line) -> std::string {
    absl::StatusOr<LibraryMetadata> md = ParseLibraryMetadata(std::string(first_line) + "\nreturn");
    return md.ok() ? md->engine + "/" + md->name : std::string(md.status().message());
  };
  EXPECT_EQ(name_of("#!lua name=a"), "lua/a");
  EXPECT_EQ(name_of("#!lua \"name=q1\""), "lua/q1");
  EXPECT_EQ(name_of("#!lua name=\"q\\x32\""), "lua/q2");
  EXPECT_EQ(name_of("#!\"lua\" name=a"), "lua/a");
  // A closing quote must end the word; an unclosed one is no split at all.
  EXPECT_EQ(name_of("#!lua name=q3\"x\"y"), "ERR Invalid library metadata");
  EXPECT_EQ(name_of("#!lua name='x"), "ERR Invalid library metadata");
  EXPECT_EQ(name_of("#!lua name=a 'x y'"), "ERR Invalid metadata value given: x y");
  // Words are printed as C strings; a NUL before the line's end ends it.
  EXPECT_EQ(name_of("#!lua name=a \"b\\x00c\""), "ERR Invalid metadata value given: b");
  EXPECT_EQ(name_of(std::string("#!lua name=a\0 x", 15)), "ERR Invalid library metadata");
  EXPECT_EQ(ErrorOf(ParseLibraryMetadata("#!lua name=a").status()), "ERR Invalid library metadata");
}

TEST_F(FunctionLibrariesTest, EvalShebangIsSplitAsSdssplitargsSplits) {
  auto flags_of = [](std::string_view body) -> std::string {
    absl::StatusOr<uint32_t> f = ParseShebangFlags(body);
    return f.ok() ? std::to_string(*f) : std::string(f.status().message());
  };
  EXPECT_EQ(flags_of("return 1"), std::to_string(kEvalCompat));
  EXPECT_EQ(flags_of("#!lua\nreturn 1"), "0");
  EXPECT_EQ(flags_of("#!lua flags=\nreturn 1"), "0");
  EXPECT_EQ(flags_of("#!lua \"fl\\x61gs=no-writes\"\nreturn 1"), std::to_string(kNoWrites));
  EXPECT_EQ(flags_of("#!lua flags=no-writes,,allow-oom\nreturn 1"), "ERR Unexpected flag in script shebang: ");
  EXPECT_EQ(flags_of("#!lua"), "ERR Invalid script shebang");
  EXPECT_EQ(flags_of("#!lua bad'\nreturn 1"), "ERR Invalid engine in script shebang");
  EXPECT_EQ(flags_of("#!lux\nreturn 1"), "ERR Unexpected engine in script shebang: #!lux");
}

TEST_F(FunctionLibrariesTest, FlushKeepsTheEngineAndWhatLibrariesLeftInIt) {
  ASSERT_TRUE(libs_.Load(Library("a", "fa"), false).ok());
  const LuaEngine* engine = libs_.engine();
  ASSERT_NE(engine, nullptr);
  libs_.Flush();
  EXPECT_TRUE(libs_.libraries().empty());
  EXPECT_EQ(libs_.FindFunction("fa"), nullptr);
  EXPECT_EQ(libs_.engine(), engine);
  ASSERT_TRUE(libs_.Load(Library("a", "fa"), false).ok());
  ASSERT_TRUE(libs_.Restore(libs_.Dump(), "flush").ok());
  EXPECT_EQ(libs_.engine(), engine);
  EXPECT_NE(libs_.FindFunction("FA"), nullptr);
}

TEST_F(FunctionLibrariesTest, NamesThatDifferInCaseAreTwoFunctionsOneAnswersFcall) {
  const std::string code =
      "#!lua name=cs\nredis.register_function('Fx', function() return 1 end)\n"
      "redis.register_function{function_name='fx', callback=function() return 2 end, description='second'}";
  ASSERT_TRUE(libs_.Load(code, false).ok());
  EXPECT_EQ(libs_.function_count(), 2u);
  const LibraryInfo& lib = libs_.libraries().at("cs");
  ASSERT_EQ(lib.functions, (std::vector<std::string>{"Fx", "fx"}));
  EXPECT_EQ(libs_.listed_function(lib, "Fx").name, "Fx");
  EXPECT_EQ(libs_.listed_function(lib, "fx").description, "second");
  EXPECT_EQ(libs_.FindFunction("fx")->name, "Fx");  // the first registered
  // The same name twice is refused, as Redis does.
  EXPECT_EQ(ErrorOf(libs_
                        .Load("#!lua name=dup\nredis.register_function('g', function() return 1 end)\n"
                              "redis.register_function('g', function() return 2 end)",
                              false)
                        .status()),
            "ERR Error registering functions: ERR Function already exists in the library");
  ASSERT_TRUE(libs_.Delete("cs"));
  EXPECT_EQ(libs_.function_count(), 0u);
}

TEST_F(FunctionLibrariesTest, RestoreCompilesEachRecordAsItReadsIt) {
  ASSERT_TRUE(libs_.Load(Library("loaded", "fl"), false).ok());
  auto restore = [&](const std::string& records, std::string_view policy = "append") {
    absl::Status s = libs_.Restore(Payload(records), policy);
    return s.ok() ? std::string("OK") : ErrorOf(s);
  };
  // One library twice: refused before its second copy compiles.
  EXPECT_EQ(restore(Function2(Library("d", "d1")) + Function2("#!lua name=d\nfoo(")), "ERR Library 'd' already exists");
  // A record that does not compile comes before a clash with the loaded ones.
  EXPECT_EQ(restore(Function2(Library("loaded", "g1")) + Function2("#!lua name=g2\nfoo(")),
            "ERR Error compiling function: user_function:2: unexpected symbol near '<eof>'");
  EXPECT_EQ(restore(Function2(Library("loaded", "g1"))), "ERR Library loaded already exists");
  EXPECT_EQ(restore(Function2(Library("other", "FL"))), "ERR Function FL already exists");
  EXPECT_EQ(restore(Function2(Library("s1", "ss")) + Function2(Library("s2", "SS"))), "ERR Function SS already exists");
  EXPECT_EQ(restore(std::string("\x00", 1) + RdbString("x")), "ERR given type is not a function");
  // Nothing of the refused payloads stayed.
  EXPECT_EQ(libs_.libraries().size(), 1u);
  EXPECT_EQ(libs_.function_count(), 1u);
  EXPECT_EQ(restore(Function2(Library("loaded", "g1")), "replace"), "OK");
  EXPECT_EQ(libs_.FindFunction("fl"), nullptr);
  EXPECT_NE(libs_.FindFunction("g1"), nullptr);
}

TEST_F(FunctionLibrariesTest, RestoreReadsAReleaseCandidatesRecords) {
  const std::string code = "redis.register_function('pg', function() return 1 end)";
  // Name, engine, a description (or not), the code without its "#!" line.
  ASSERT_EQ(libs_.Restore(Payload("\xf6" + RdbString("pga") + RdbString("LUA") + std::string("\x01", 1) +
                                  RdbString("about") + RdbString(code)),
                          "append"),
            absl::OkStatus());
  EXPECT_EQ(libs_.libraries().at("pga").code, "#!LUA name=pga\n" + code);
  auto restore = [&](const std::string& records) { return ErrorOf(libs_.Restore(Payload(records), "append")); };
  EXPECT_EQ(restore("\xf6"), "ERR Failed loading library name");
  EXPECT_EQ(restore("\xf6" + RdbString("x")), "ERR Failed loading engine name");
  EXPECT_EQ(restore("\xf6" + RdbString("x") + RdbString("LUA") + "\x85" + RdbString(code)),
            "ERR Failed loading library description indicator");
  // A record may read on into the footer, as Redis's reader does: here the
  // description indicator is the version byte, the description the next.
  EXPECT_EQ(restore("\xf6" + RdbString("x") + RdbString("LUA")), "ERR Failed loading library blob");
  EXPECT_EQ(restore("\xf6" + RdbString("x") + RdbString("LUX") + std::string("\x00", 1) + RdbString(code)),
            "ERR Engine 'LUX' not found");
}

}  // namespace
}  // namespace ringkv::server::scripting::function_libraries_test
