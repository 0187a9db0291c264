// LOLWUT [VERSION version] [art arguments...]: some computer art and the
// Redis version, as Redis 7.0 answers it. Without VERSION, or with a version
// other than 5 and 6, the reply is just "Redis ver. 7.0.15\n" (7.0 has no
// art of its own); VERSION 5 draws Schotter (core/lolwut_art.h) for
// [columns] [squares per row] [squares per column], VERSION 6 a skyline for
// [columns] [rows]. Each argument is clamped to Redis's limits, which keep
// the work bounded; the reply is a verbatim "txt" string.
#include <algorithm>
#include <string>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "core/lolwut_art.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/version.h"

namespace ringkv::server {
namespace {

// The art's optional arguments: argv[i] for each default given, in order,
// each clamped to [1, max]. False, with the error sent, on a non-integer.
bool ParseArtArguments(CommandContext& ctx, Argv args, std::span<int64_t> values, std::span<const int64_t> max) {
  for (size_t i = 0; i < values.size() && i < args.size(); ++i) {
    if (!ParseInt(ctx, args[i], &values[i])) return false;
  }
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::clamp<int64_t>(values[i], 1, max[i]);
  return true;
}

// LOLWUT 5: Georg Nees's Schotter.
void ReplySchotter(CommandContext& ctx, Argv args) {
  int64_t v[3] = {66, 8, 12};  // columns, squares per row, squares per column
  constexpr int64_t kMax[3] = {1000, 200, 200};
  if (!ParseArtArguments(ctx, args, v, kMax)) return;
  absl::BitGen rng;
  std::string text = core::lolwut::RenderBraille(core::lolwut::DrawSchotter(
      static_cast<int>(v[0]), static_cast<int>(v[1]), static_cast<int>(v[2]), rng));
  absl::StrAppend(&text, "\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. ", kRedisVersion, "\n");
  ctx.reply.Verbatim(text);
}

// LOLWUT 6: a skyline of 8-bit games.
void ReplySkyline(CommandContext& ctx, Argv args) {
  int64_t v[2] = {80, 20};  // columns, rows
  constexpr int64_t kMax[2] = {1000, 1000};
  if (!ParseArtArguments(ctx, args, v, kMax)) return;
  absl::BitGen rng;
  core::lolwut::Canvas canvas(static_cast<int>(v[0]), static_cast<int>(v[1]), core::lolwut::kWhite);
  core::lolwut::DrawSkyline(canvas, rng);
  std::string text = core::lolwut::RenderGrays(canvas);
  absl::StrAppend(&text,
                  "\nDedicated to the 8 bit game developers of past and present.\n"
                  "Original 8 bit image from Plaguemon by hikikomori. Redis ver. ",
                  kRedisVersion, "\n");
  ctx.reply.Verbatim(text);
}

void CmdLolwut(ServerCommandContext& ctx) {
  Argv args = ctx.argv.subspan(1);
  int64_t version = 7;  // this server's own: no art
  if (ctx.argv.size() >= 3 && Is(ctx.argv[1], "VERSION")) {
    if (!ParseInt(ctx, ctx.argv[2], &version)) return;
    args = ctx.argv.subspan(3);
  }
  // Redis prints the version as an unsigned "%u.0.0" and matches "5." and
  // "6." on it: only 5 and 6 (modulo 2^32) draw; any other shows the version.
  switch (static_cast<uint32_t>(version)) {
    case 5: ReplySchotter(ctx, args); return;
    case 6: ReplySkyline(ctx, args); return;
    default: ctx.reply.Verbatim(absl::StrCat("Redis ver. ", kRedisVersion, "\n"));
  }
}

}  // namespace

void RegisterLolwutCommands(CommandTable& t) {
  using namespace cmd;
  t.Add(Cmd("lolwut", -1, kReadonly | kFast, 0, 0, 0, "@read @fast", "server",
            "Display some computer art and the Redis version", "5.0.0", CmdLolwut));
}

}  // namespace ringkv::server
