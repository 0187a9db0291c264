// LATENCY: the latency monitor's events (LATEST, HISTORY, GRAPH, DOCTOR,
// RESET) and the per-command latency histograms (HISTOGRAM), with Redis
// 7.0's reply shapes. docs/observability.md.
#include <array>
#include <utility>

#include "core/strings.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

void CmdLatencyLatest(ServerCommandContext& ctx) {
  const auto& events = ctx.server.latency().events();
  ctx.reply.ArrayHeader(static_cast<int64_t>(events.size()));
  for (const auto& ts : events) {
    ctx.reply.ArrayHeader(4);
    ctx.reply.Bulk(ts->name);
    ctx.reply.Integer(ts->latest().time);
    ctx.reply.Integer(ts->latest().latency);
    ctx.reply.Integer(ts->max);
  }
}

void CmdLatencyHistory(ServerCommandContext& ctx) {
  const LatencyMonitor::Series* ts = ctx.server.latency().Find(ctx.argv[2]);
  if (ts == nullptr) {
    ctx.reply.ArrayHeader(0);
    return;
  }
  const std::vector<LatencyMonitor::Sample> samples = ts->InOrder();
  ctx.reply.ArrayHeader(static_cast<int64_t>(samples.size()));
  for (const LatencyMonitor::Sample& s : samples) {
    ctx.reply.ArrayHeader(2);
    ctx.reply.Integer(s.time);
    ctx.reply.Integer(s.latency);
  }
}

void CmdLatencyGraph(ServerCommandContext& ctx) {
  const LatencyMonitor::Series* ts = ctx.server.latency().Find(ctx.argv[2]);
  if (ts == nullptr) {
    ctx.reply.Error(StrCat("ERR No samples available for event '", ctx.argv[2], "'"));
    return;
  }
  ctx.reply.Verbatim(LatencyGraph(*ts, LatencyMonitor::NowSeconds()));
}

void CmdLatencyDoctor(ServerCommandContext& ctx) {
  ctx.reply.Verbatim(
      LatencyDoctorReport(ctx.server.latency(), ctx.server.LatencyDoctorInputs(), LatencyMonitor::NowSeconds()));
}

void CmdLatencyReset(ServerCommandContext& ctx) {
  LatencyMonitor& m = ctx.server.latency();
  if (ctx.argv.size() == 2) {
    ctx.reply.Integer(m.ResetAll());
    return;
  }
  int resets = 0;
  for (size_t i = 2; i < ctx.argv.size(); ++i) resets += m.Reset(ctx.argv[i]);
  ctx.reply.Integer(resets);
}

// One command's entry: name => {calls, histogram_usec => {upper_us => calls, ...}}.
void ReplyHistogram(io::ReplyBuilder& rb, const CommandSpec& c) {
  const core::LatencyHistogram& h = *c.latency_histogram;
  std::array<std::pair<int64_t, uint64_t>, 32> steps;
  size_t n = 0;
  h.ForEachCumulativeStep([&](int64_t us, uint64_t count) {
    if (n < steps.size()) steps[n++] = {us, count};
  });
  rb.Bulk(c.name);
  rb.MapHeader(2);
  rb.Bulk("calls");
  rb.Integer(static_cast<int64_t>(h.total()));
  rb.Bulk("histogram_usec");
  rb.MapHeader(static_cast<int64_t>(n));
  for (size_t i = 0; i < n; ++i) {
    rb.Integer(steps[i].first);
    rb.Integer(static_cast<int64_t>(steps[i].second));
  }
}

// A command with a histogram and, for a container, its subcommands that have one.
void CollectWithHistograms(const CommandSpec& c, std::vector<const CommandSpec*>* out) {
  if (c.latency_histogram) out->push_back(&c);
  for (const CommandSpec& sub : c.subcommands) {
    if (sub.latency_histogram) out->push_back(&sub);
  }
}

// LATENCY HISTOGRAM [command ...]: every command with data, or the named
// ones ("config|get" names a subcommand; a container brings its
// subcommands); unknown names are skipped.
void CmdLatencyHistogram(ServerCommandContext& ctx) {
  const CommandTable& table = ctx.server.commands();
  std::vector<const CommandSpec*> found;
  if (ctx.argv.size() == 2) {
    for (const auto& c : table.all()) CollectWithHistograms(*c, &found);
  }
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    std::vector<std::string_view> parts = Split(ctx.argv[i], '|');
    const CommandSpec* c = table.Find(parts[0]);
    if (c != nullptr && parts.size() == 2) c = CommandTable::FindSub(*c, parts[1]);
    if (c == nullptr || parts.size() > 2) continue;
    CollectWithHistograms(*c, &found);
  }
  ctx.reply.MapHeader(static_cast<int64_t>(found.size()));
  for (const CommandSpec* c : found) ReplyHistogram(ctx.reply, *c);
}

void CmdLatencyHelp(ServerCommandContext& ctx) {
  static const char* kLines[] = {
      "DOCTOR",
      "    Return a human readable latency analysis report.",
      "GRAPH <event>",
      "    Return an ASCII latency graph for the <event> class.",
      "HISTORY <event>",
      "    Return time-latency samples for the <event> class.",
      "LATEST",
      "    Return the latest latency samples for all events.",
      "RESET [<event> ...]",
      "    Reset latency data of one or more <event> classes.",
      "    (default: reset all data for all event classes)",
      "HISTOGRAM [COMMAND ...]",
      "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
      "    If no commands are specified then all histograms are replied.",
  };
  ReplyHelp(ctx, kLines);
}

}  // namespace

void RegisterLatencyCommands(CommandTable& t) {
  using namespace cmd;
  constexpr uint32_t kDiag = kAdmin | kNoscript | kLoading | kStale;
  constexpr const char* kAcl = "@admin @slow @dangerous";
  std::vector<CommandSpec> subs;
  subs.push_back(Cmd("latency|doctor", 2, kDiag, 0, 0, 0, kAcl, "server", "Return a human readable latency analysis report.", "2.8.13", CmdLatencyDoctor));
  subs.push_back(Cmd("latency|graph", 3, kDiag, 0, 0, 0, kAcl, "server", "Return a latency graph for the event.", "2.8.13", CmdLatencyGraph));
  subs.push_back(Cmd("latency|help", 2, kLoading | kStale, 0, 0, 0, "@slow", "server", "Show helpful text about the different subcommands.", "2.8.13", CmdLatencyHelp));
  subs.push_back(Cmd("latency|histogram", -2, kDiag, 0, 0, 0, kAcl, "server", "Return the cumulative distribution of latencies of a subset of commands or all.", "7.0.0", CmdLatencyHistogram));
  subs.push_back(Cmd("latency|history", 3, kDiag, 0, 0, 0, kAcl, "server", "Return timestamp-latency samples for the event.", "2.8.13", CmdLatencyHistory));
  subs.push_back(Cmd("latency|latest", 2, kDiag, 0, 0, 0, kAcl, "server", "Return the latest latency samples for all events.", "2.8.13", CmdLatencyLatest));
  subs.push_back(Cmd("latency|reset", -2, kDiag, 0, 0, 0, kAcl, "server", "Reset latency data for one or more events.", "2.8.13", CmdLatencyReset));
  t.Add(Cmd("latency", -2, 0, 0, 0, 0, "@slow", "server", "A container for latency diagnostics commands", "2.8.13", nullptr, std::move(subs)));
}

}  // namespace ringkv::server
