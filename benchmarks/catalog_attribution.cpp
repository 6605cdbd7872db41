// What attribution adds to a diagnosis (issue 28: at most 50 ms): parsing the
// embedded catalog once per process (every entry's TOML and measured ranges), and
// attributing one matched shape (entry lookup, where the library's version stands,
// the sentence). Run: build/benchmarks/catalog_attribution
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include "hangbench/catalog.hpp"

namespace {

using namespace hangbench::catalog;

// The first diagnosis of a process pays this once (entries() is parsed on first use).
void BM_ParseEmbeddedCatalog(benchmark::State& state) {
  for (auto _ : state) {
    std::vector<Entry> all;
    for (const auto& f : embedded_files()) {
      Entry e = parse_entry(f.text, f.file);
      apply_measured(e, nlohmann::json::parse(f.measured));
      all.push_back(std::move(e));
    }
    benchmark::DoNotOptimize(all);
  }
}
BENCHMARK(BM_ParseEmbeddedCatalog)->Unit(benchmark::kMicrosecond);

// Every matched shape afterwards: the KNOWN line of the headline.
void BM_AttributeDescriptorAlias(benchmark::State& state) {
  entries();  // parsed once, as in a diagnosis
  const LibraryInUse nccl{"/opt/nccl/lib/libnccl.so.2", "2.17.1", std::string(64, 'a')};
  for (auto _ : state) {
    auto a = attribute("nccl-descriptor-alias", "NCCL descriptor-alias teardown hang", "summary", nccl);
    benchmark::DoNotOptimize(a);
  }
}
BENCHMARK(BM_AttributeDescriptorAlias)->Unit(benchmark::kMicrosecond);

// A shape no entry names (the common case of the generic rules).
void BM_AttributeUnknownShape(benchmark::State& state) {
  entries();
  for (auto _ : state) {
    auto a = attribute("pipe-writer-held", "reader blocked on a pipe", "summary", {});
    benchmark::DoNotOptimize(a);
  }
}
BENCHMARK(BM_AttributeUnknownShape)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
