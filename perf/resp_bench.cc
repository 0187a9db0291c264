// Micro-benchmarks of the request parser and the reply encoder: the two
// pieces of per-request work that are ours on every command.
#include <benchmark/benchmark.h>

#include <string>

#include "io/reply_builder.h"
#include "io/resp_parser.h"

namespace ringkv::io {
namespace {

std::string SetCommand() {
  std::string value(64, 'v');
  return "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000012345\r\n$64\r\n" + value + "\r\n";
}

void BM_ParseSet(benchmark::State& state) {
  const std::string input = SetCommand();
  RespParser parser;
  ParsedCommand cmd;
  for (auto _ : state) {
    size_t consumed;
    auto r = parser.Parse(input, {}, &cmd, &consumed);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(cmd.argv.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(input.size()));
}
BENCHMARK(BM_ParseSet);

void BM_ParsePipeline16(benchmark::State& state) {
  std::string input;
  for (int i = 0; i < 16; ++i) input += "*2\r\n$3\r\nGET\r\n$16\r\nkey:000000012345\r\n";
  RespParser parser;
  ParsedCommand cmd;
  for (auto _ : state) {
    size_t pos = 0;
    while (pos < input.size()) {
      size_t consumed;
      parser.Parse(std::string_view(input).substr(pos), {}, &cmd, &consumed);
      pos += consumed;
    }
    benchmark::DoNotOptimize(pos);
  }
  state.SetItemsProcessed(state.iterations() * 16);
}
BENCHMARK(BM_ParsePipeline16);

void BM_ParseInline(benchmark::State& state) {
  const std::string input = "SET key:000000012345 \"some value\"\r\n";
  RespParser parser;
  ParsedCommand cmd;
  for (auto _ : state) {
    size_t consumed;
    parser.Parse(input, {}, &cmd, &consumed);
    benchmark::DoNotOptimize(cmd.argv.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ParseInline);

void BM_ParseBigValueInChunks(benchmark::State& state) {
  std::string value(1 << 20, 'x');
  std::string input = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + std::to_string(value.size()) + "\r\n" + value + "\r\n";
  for (auto _ : state) {
    RespParser parser;
    ParsedCommand cmd;
    size_t consumed = 0;
    for (size_t end = 4096;; end += 4096) {
      auto r = parser.Parse(std::string_view(input).substr(0, std::min(end, input.size())), {}, &cmd, &consumed);
      if (r != RespParser::Result::kNeedMore) break;
    }
    benchmark::DoNotOptimize(consumed);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(input.size()));
}
BENCHMARK(BM_ParseBigValueInChunks);

void BM_EncodeStatusIntegerBulk(benchmark::State& state) {
  OutBuffer out;
  std::string value(64, 'v');
  for (auto _ : state) {
    ReplyBuilder rb(&out, 2);
    rb.Ok();
    rb.Integer(123456);
    rb.Bulk(value);
    if (out.size() > 1 << 20) out.Clear();
  }
  state.SetItemsProcessed(state.iterations() * 3);
}
BENCHMARK(BM_EncodeStatusIntegerBulk);

void BM_EncodeArrayOf100Bulks(benchmark::State& state) {
  OutBuffer out;
  std::string value(64, 'v');
  for (auto _ : state) {
    ReplyBuilder rb(&out, 2);
    rb.ArrayHeader(100);
    for (int i = 0; i < 100; ++i) rb.Bulk(value);
    out.Clear();
  }
  state.SetItemsProcessed(state.iterations() * 100);
}
BENCHMARK(BM_EncodeArrayOf100Bulks);

void BM_EncodeDouble(benchmark::State& state) {
  OutBuffer out;
  double d = 3.14159;
  for (auto _ : state) {
    ReplyBuilder rb(&out, 3);
    rb.Double(d);
    d += 1.0;
    if (out.size() > 1 << 20) out.Clear();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeDouble);

}  // namespace
}  // namespace ringkv::io

BENCHMARK_MAIN();
