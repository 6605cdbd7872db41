// The catalog: what the binary embeds is what catalog/ and results/ say (a drift
// fails here), the ranges computed from the measured sweep, where a version stands,
// attribution sentences, and bad entries refused with their file and line.
#include "hangbench/catalog.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "hangbench/matrix.hpp"

namespace hangbench::catalog {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(CatalogEmbed, EmbeddedEntriesAreTheFilesOfTheCheckout) {
  std::set<std::string> on_disk, embedded;
  for (const auto& f : std::filesystem::directory_iterator(std::string(HB_SOURCE_DIR) + "/catalog"))
    if (f.path().extension() == ".toml") on_disk.insert("catalog/" + f.path().filename().string());
  for (const auto& f : embedded_files()) {
    embedded.insert(f.file);
    EXPECT_EQ(f.text, read(std::string(HB_SOURCE_DIR) + "/" + f.file))
        << f.file << " changed since the build embedded it: rebuild (cmake --build)";
  }
  EXPECT_EQ(on_disk, embedded) << "a catalog file was added or removed: re-run cmake --preset default";
}

TEST(CatalogEmbed, EmbeddedMeasuredRangesAreWhatResultsSayNow) {
  for (const auto& f : embedded_files()) {
    const auto now = extract_measured(HB_SOURCE_DIR, f.text, f.file);
    EXPECT_EQ(nlohmann::json::parse(f.measured), now)
        << f.file << ": the results/ files it names changed since the build: rebuild";
  }
}

TEST(Catalog, EveryEntryParsesAndHasWhatAReaderNeeds) {
  ASSERT_GE(entries().size(), 5u);
  for (const auto& e : entries()) {
    EXPECT_FALSE(e.mechanism.empty()) << e.id;
    EXPECT_FALSE(e.reproducer.workload.empty()) << e.id;
    EXPECT_FALSE(e.remedies.empty()) << e.id;
    EXPECT_TRUE(std::filesystem::exists(std::string(HB_SOURCE_DIR) + "/workloads/" + e.reproducer.workload))
        << e.id << ": no workloads/" << e.reproducer.workload;
    if (!e.reproducer.matrix.empty())
      EXPECT_TRUE(std::filesystem::exists(std::string(HB_SOURCE_DIR) + "/" + e.reproducer.matrix))
          << e.id << ": " << e.reproducer.matrix;
  }
}

// A measured remedy is a row of its report's comparison table with those tallies.
TEST(Catalog, EveryMeasuredRemedyIsAComparisonRowOfItsReport) {
  for (const auto& e : entries())
    for (const auto& r : e.remedies) {
      if (!r.measured) continue;
      std::ifstream in(std::string(HB_SOURCE_DIR) + "/" + r.report);
      ASSERT_TRUE(in) << e.id << ": " << r.report;
      bool found = false;
      for (std::string line; std::getline(in, line);) {
        if (line.rfind("| " + r.comparison + " | " + r.a_hangs + " |", 0) != 0) continue;
        found = line.find("| " + r.b_hangs + " |") != std::string::npos;
        if (found) break;
      }
      EXPECT_TRUE(found) << e.id << ": " << r.report << " has no row '" << r.comparison << "' " << r.a_hangs << " vs "
                         << r.b_hangs;
    }
}

// The headline says "hung 0/40 with it, 40/40 without", taking the remedy for the side that
// hung less, in whichever order the comparison names the sides.
TEST(Catalog, TheSideThatHungLessComesFirst) {
  using Sides = std::pair<std::string, std::string>;
  EXPECT_EQ(hung_less_first("0/40", "40/40"), Sides("0/40", "40/40"));
  EXPECT_EQ(hung_less_first("12/12", "1/16"), Sides("1/16", "12/12"));
  EXPECT_EQ(hung_less_first("3/4", "12/16"), Sides("3/4", "12/16"));  // alike: as given
  EXPECT_FALSE(hung_less_first("all", "0/40").has_value());
}

TEST(Catalog, DescriptorAliasRangesAreComputedFromTheSweep) {
  const Entry* e = find("nccl-socket-close-alias");
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->measured.sweep_found);
  EXPECT_THAT(e->measured.affected, ElementsAre("2.16.2", "2.16.5", "2.17.1"));
  EXPECT_EQ(e->measured.fixed_from, "2.18.1");
  EXPECT_THAT(e->measured.not_affected, ElementsAre("2.15.5"));
  EXPECT_THAT(e->measured.unjudged, ElementsAre("2.13.4", "2.14.3"));
  EXPECT_THAT(measured_range_text(*e), HasSubstr("vulnerable 2.16.2 to 2.17.1 (3 releases), fixed from 2.18.1"));
}

TEST(Catalog, CellsOfWhichNoneHungReadAsNotReproduced) {
  Entry e;
  MeasuredCell a, b;
  a.report = b.report = "results/x/report.json";
  a.cell = "v=1", b.cell = "v=2";
  a.found = b.found = true;
  a.n = b.n = 10;
  e.measured.cells = {a, b};
  EXPECT_THAT(measured_range_text(e), HasSubstr("0/10 hung in cell v=1"));
  EXPECT_THAT(measured_range_text(e), HasSubstr("not reproduced on this hardware"));
  e.measured.cells[1].hangs = 1;
  EXPECT_THAT(measured_range_text(e), Not(HasSubstr("not reproduced")));
  e.measured.cells[1].hangs = 0, e.measured.cells[1].found = false;  // a cell not in the checkout proves nothing
  EXPECT_THAT(measured_range_text(e), Not(HasSubstr("not reproduced")));
  // The entry whose claim the H100 did not reproduce says so from its committed report.
  const Entry* thread = find("nccl-abort-thread-cuda-calls");
  ASSERT_NE(thread, nullptr);
  EXPECT_THAT(measured_range_text(*thread), HasSubstr("not reproduced on this hardware"));
}

// A table of two entries: each reads its own column, never the first entry's rows.
TEST(CatalogEmbed, AnEntryOfATableOfSeveralReadsItsOwnColumn) {
  const auto dir = std::filesystem::temp_directory_path() / ("hb-measured-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const nlohmann::json row = {{"release", "2.5.0"},  {"library", "/l/2.5"}, {"verdict", "vulnerable"},
                              {"teardown_hangs", 9}, {"counted", 9},        {"static", {{"version", "2.5.0"}}}};
  const nlohmann::json table = {
      {"rows", {row}},
      {"hang", "first"},
      {"hangs",
       {{{"id", "first"}, {"cells", {{{"release", "2.5.0"}, {"library", "/l/2.5"}, {"verdict_word", "vulnerable"}}}}},
        {{"id", "second"},
         {"cells",
          {{{"release", "2.5.0"},
            {"library", "/l/2.5"},
            {"verdict_word", "fixed"},
            {"hangs", 0},
            {"counted", 4},
            {"p_vs_vulnerable", "5.5e-04"}}}}}}}};
  std::ofstream(dir / "table.json") << table.dump();
  const auto second =
      extract_measured(dir.string(), "id = \"second\"\n[measured]\nsweep = \"table.json\"\n", "second.toml");
  ASSERT_EQ(second["sweep"]["rows"].size(), 1u);
  EXPECT_EQ(second["sweep"]["rows"][0]["verdict"], "fixed");
  EXPECT_EQ(second["sweep"]["rows"][0]["counted"], 4);
  EXPECT_EQ(second["sweep"]["rows"][0]["version"], "2.5.0");
  EXPECT_EQ(second["sweep"]["rows"][0]["p_vs_vulnerable"], "5.5e-04");
  // The first column carries no counts (a table written before they were kept): unknown, not the rows'.
  const auto first =
      extract_measured(dir.string(), "id = \"first\"\n[measured]\nsweep = \"table.json\"\n", "first.toml");
  EXPECT_EQ(first["sweep"]["rows"][0]["verdict"], "vulnerable");
  EXPECT_EQ(first["sweep"]["rows"][0]["counted"], -1);
  // An entry with no column of its own reads the table's rows.
  const auto other =
      extract_measured(dir.string(), "id = \"third\"\n[measured]\nsweep = \"table.json\"\n", "third.toml");
  EXPECT_EQ(other["sweep"]["rows"][0]["counted"], 9);
  std::filesystem::remove_all(dir);
}

// `also`: a later sweep of other releases adds its releases, and gives its verdict to
// a release the first table left unjudged, never over a verdict the first one gave.
TEST(Catalog, AlsoTablesAddReleasesAndJudgeWhatTheFirstLeftOpen) {
  const auto dir = std::filesystem::temp_directory_path() / ("hb-catalog-also-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto cell = [](const char* release, const char* verdict) {
    return nlohmann::json{{"release", release},
                          {"library", std::string("/l/") + release},
                          {"verdict_word", verdict},
                          {"hangs", 4},
                          {"counted", 4}};
  };
  auto table = [&](std::vector<nlohmann::json> cells) {
    return nlohmann::json{{"rows", nlohmann::json::array()}, {"hangs", {{{"id", "e"}, {"cells", cells}}}}};
  };
  std::ofstream(dir / "first.json") << table({cell("2.25.1", "vulnerable"), cell("2.26.2", "inconclusive")}).dump();
  std::ofstream(dir / "later.json")
      << table({cell("2.23.4", "vulnerable"), cell("2.25.1", "inconclusive"), cell("2.26.2", "fixed")}).dump();
  const auto m = extract_measured(
      dir.string(), "id = \"e\"\n[measured]\nsweep = \"first.json\"\nalso = [\"later.json\"]\n", "e.toml");
  std::map<std::string, std::string> verdict;
  for (const auto& row : m["sweep"]["rows"]) verdict[row["release"]] = row["verdict"];
  EXPECT_EQ(verdict, (std::map<std::string, std::string>{
                         {"2.23.4", "vulnerable"}, {"2.25.1", "vulnerable"}, {"2.26.2", "fixed"}}));
  EXPECT_TRUE(m["sweep"]["found"].get<bool>());
  // A named table that is not there: the range is not trusted.
  const auto missing = extract_measured(
      dir.string(), "id = \"e\"\n[measured]\nsweep = \"first.json\"\nalso = [\"gone.json\"]\n", "e.toml");
  EXPECT_FALSE(missing["sweep"]["found"].get<bool>());
  std::filesystem::remove_all(dir);
}

TEST(Catalog, WhereAVersionStands) {
  const Entry* alias = find("nccl-socket-close-alias");
  ASSERT_NE(alias, nullptr);
  EXPECT_EQ(standing_of(*alias, "2.17.1"), "measured vulnerable");
  EXPECT_EQ(standing_of(*alias, "2.16.3"), "in the measured affected range");  // never a wheel
  EXPECT_EQ(standing_of(*alias, "2.28.9"), "measured fixed");
  EXPECT_EQ(standing_of(*alias, "2.15.5"), "measured not affected");
  EXPECT_EQ(standing_of(*alias, "2.10.3"), "");
  const Entry* blocking = find("nccl-launch-blocking-proxy");
  ASSERT_NE(blocking, nullptr);
  if (!blocking->measured.sweep_found) {
    EXPECT_EQ(standing_of(*blocking, "2.15.5"), "in the claimed affected range");
    EXPECT_EQ(standing_of(*blocking, "2.20.5"), "claimed fixed");
  }
  EXPECT_LT(compare_versions("2.9.6", "2.16.2"), 0);
  EXPECT_LT(compare_versions("2.25.1", "2.25.1.post1"), 0);
  EXPECT_EQ(compare_versions("2.18.1", "2.18.1"), 0);
}

TEST(Attribution, NamesTheEntryTheLibraryAndItsStanding) {
  auto a = attribute("nccl-descriptor-alias", "NCCL descriptor-alias teardown hang", "...",
                     {"/x/libnccl.so.2", "2.17.1", "7950630aae228ba9e2698507b2cae9b8"});
  ASSERT_NE(a.entry, nullptr);
  EXPECT_EQ(a.standing, "measured vulnerable");
  EXPECT_EQ(a.sentence,
            "matches hang nccl-socket-close-alias; this process uses NCCL 2.17.1 (/x/libnccl.so.2, sha256 "
            "7950630aae22), measured vulnerable (results/h200-2026-12-03-sweep/final/release-table.json); fixed "
            "from 2.18.1");
  // The headline's few words: no path, no report (FINDINGS has them).
  EXPECT_EQ(a.brief, "known hang nccl-socket-close-alias; NCCL 2.17.1 here is measured vulnerable; fixed from 2.18.1");
  auto fixed = attribute("nccl-descriptor-alias", "NCCL descriptor-alias teardown hang", "", {"/y", "2.21.5", ""});
  EXPECT_THAT(fixed.sentence, HasSubstr("NCCL 2.21.5 (/y), measured fixed"));
  EXPECT_THAT(fixed.brief, HasSubstr("NCCL 2.21.5 here is measured fixed"));
  auto unread = attribute("nccl-descriptor-alias", "NCCL descriptor-alias teardown hang", "", {"/z", "", ""});
  EXPECT_EQ(unread.brief, "known hang nccl-socket-close-alias; fixed from 2.18.1");
}

// The multi-communicator abort's fix is a call order that 2.22.3 made possible: a job that
// aborts one at a time on a fixed release still hangs, so "fixed" is said with its condition
// (the H100's live KNOWN line said "2.22.3 here is claimed fixed" for a one-at-a-time abort).
TEST(Attribution, AFixThatIsACallOrderIsSaidWithIt) {
  const std::vector<std::string> facts = {"joined thread: a device-synchronising free"};
  auto a = attribute("nccl-abort-joins-spinning-thread", "", "", {"/x", "2.28.3", ""}, facts);
  ASSERT_NE(a.entry, nullptr);
  ASSERT_EQ(a.entry->id, "nccl-multi-comm-abort");
  EXPECT_THAT(a.brief, HasSubstr("fixed only with every communicator aborted in one group"));
  EXPECT_THAT(a.brief, HasSubstr(", with every communicator aborted in one group"));
  EXPECT_THAT(a.sentence, HasSubstr("fixed only with every communicator aborted in one group"));
  // An affected release needs no condition: it hangs either way.
  auto old = attribute("nccl-abort-joins-spinning-thread", "", "", {"/x", "2.21.5", ""}, facts);
  EXPECT_THAT(old.brief, HasSubstr("NCCL 2.21.5 here is measured vulnerable;"));
}

TEST(Attribution, AShapeWithNoEntrySaysSo) {
  // The same socket shape outside NCCL is not this bug.
  auto socket = attribute("nccl-descriptor-alias", "descriptor-alias teardown shape", "", {});
  EXPECT_EQ(socket.entry, nullptr);
  EXPECT_THAT(socket.sentence, HasSubstr("no catalog entry for this shape (rule nccl-descriptor-alias)"));
  EXPECT_THAT(socket.sentence,
              HasSubstr("nccl-socket-close-alias is this rule's shape only when its title names NCCL"));
  EXPECT_EQ(attribute("zombie", "zombie not reaped", "", {}).entry, nullptr);
  // wait-for names a catalogued cycle only when its words say which.
  EXPECT_EQ(attribute("wait-for", "who waits for whom", "rank 0 waits in recv", {}).entry, nullptr);
  auto lazy = attribute("wait-for", "who waits for whom (pipeline cycle)",
                        "rank 1's thread 501 holds the GIL inside the CUDA driver (cuKernelGetFunction)", {});
  ASSERT_NE(lazy.entry, nullptr);
  EXPECT_EQ(lazy.entry->id, "cuda-lazy-load-gil");
  EXPECT_THAT(lazy.sentence, HasSubstr("measured: 18/18 hung in cell"));
}

TEST(CatalogParse, BadEntriesNameTheirFileAndLine) {
  const std::string head = "id = \"x\"\ntitle = \"t\"\nmechanism = \"m\"\n";
  try {
    parse_entry(head + "[[upstream]]\nkind = \"blog\"\nurl = \"u\"\nwhat = \"w\"\n", "catalog/x.toml");
    FAIL() << "accepted a reference of kind blog";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), "catalog/x.toml");
    EXPECT_EQ(e.line(), 5);
    EXPECT_THAT(e.message(), HasSubstr("issue, pull or commit"));
  }
  EXPECT_THROW(parse_entry(head, "catalog/y.toml"), ConfigError);  // id is not the file's name
  EXPECT_THROW(parse_entry(head + "[[remedies]]\naction = \"a\"\nreport = \"r.md\"\n", "catalog/x.toml"),
               ConfigError);  // measured, without its comparison
  EXPECT_THROW(parse_entry(head + "[[remedies]]\naction = \"a\"\nmeasured = false\n", "catalog/x.toml"),
               ConfigError);  // unmeasured, without why
  EXPECT_THROW(parse_entry("id = \"x\"\n", "catalog/x.toml"), ConfigError);
  // A measured remedy's tallies are K/N, and one side hung less: otherwise it is no remedy.
  const std::string remedy = "[[remedies]]\naction = \"a\"\nreport = \"r.md\"\ncomparison = \"c\"\n";
  try {
    parse_entry(head + remedy + "a_hangs = \"40 of 40\"\nb_hangs = \"0/40\"\n", "catalog/x.toml");
    FAIL() << "accepted a_hangs = \"40 of 40\"";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 8);
    EXPECT_THAT(e.message(), HasSubstr("expected HANGS/TRIALS"));
  }
  EXPECT_THROW(parse_entry(head + remedy + "a_hangs = \"4/8\"\nb_hangs = \"8/16\"\n", "catalog/x.toml"), ConfigError);
  EXPECT_NO_THROW(parse_entry(head + remedy + "a_hangs = \"8/8\"\nb_hangs = \"0/16\"\n", "catalog/x.toml"));
  // A string check says which releases carry the string; a check and 'none' exclude each other.
  EXPECT_THROW(parse_entry(head + "[static_check]\nname = \"n\"\nstring = \"S\"\n", "catalog/x.toml"), ConfigError);
  EXPECT_THROW(
      parse_entry(head + "[static_check]\nname = \"n\"\nstring = \"S\"\npresent_means = \"maybe\"\n", "catalog/x.toml"),
      ConfigError);
  EXPECT_THROW(parse_entry(head + "[static_check]\nname = \"n\"\nnone = \"why\"\n", "catalog/x.toml"), ConfigError);
  EXPECT_NO_THROW(parse_entry(head + "[static_check]\nnone = \"why\"\n", "catalog/x.toml"));
  EXPECT_NO_THROW(parse_entry(head, "catalog/x.toml"));
}

}  // namespace
}  // namespace hangbench::catalog

// A generic shape (a rank that died) is nccl-net-error-swallowed only where that
// release turns the death into a hang; elsewhere it stays the graph's own finding.
TEST(CatalogAttribution, AShapeBoundToTheAffectedRangeNeedsTheVersion) {
  EXPECT_TRUE(hangbench::catalog::rule_needs_nccl_version("missing-rank"));
  EXPECT_FALSE(hangbench::catalog::rule_needs_nccl_version("nccl-launch-blocking"));
  const auto* in_range = hangbench::catalog::entry_for("missing-rank", "", "", "2.27.7");
  ASSERT_NE(in_range, nullptr);
  EXPECT_EQ(in_range->id, "nccl-net-error-swallowed");
  EXPECT_EQ(hangbench::catalog::entry_for("missing-rank", "", "", "2.28.3"), nullptr);
  EXPECT_EQ(hangbench::catalog::entry_for("missing-rank", "", "", ""), nullptr);
  const auto a = hangbench::catalog::attribute("missing-rank", "", "", {"/x/libnccl.so.2", "2.28.9", ""});
  EXPECT_EQ(a.entry, nullptr);
  EXPECT_NE(a.sentence.find("only with NCCL 2.26.2 to 2.27.7"), std::string::npos) << a.sentence;
}

// Each entry's page says how to reproduce it from nothing.
TEST(CatalogShow, EveryEntryGivesTheCommandThatReproducesIt) {
  for (const auto& e : hangbench::catalog::entries()) {
    const std::string command = hangbench::catalog::reproduce_command(e);
    EXPECT_FALSE(command.empty()) << e.id;
    EXPECT_NE(hangbench::catalog::show_text(e).find("reproduce: " + command), std::string::npos) << e.id;
  }
  const auto* spin = hangbench::catalog::find("nccl-progress-abort-spin");
  ASSERT_NE(spin, nullptr);
  EXPECT_EQ(hangbench::catalog::reproduce_command(*spin),
            "hangbench nccl fetch 2.25.1 2.26.2 && hangbench sweep --hang nccl-progress-abort-spin "
            ".cache/nccl/vendor/nvidia-nccl-cu12-2.25.1-*/lib/libnccl.so.2 "
            ".cache/nccl/vendor/nvidia-nccl-cu12-2.26.2-*/lib/libnccl.so.2");
  const auto* gil = hangbench::catalog::find("mpi-progress-gil");
  ASSERT_NE(gil, nullptr);
  EXPECT_EQ(hangbench::catalog::reproduce_command(*gil).rfind("hangbench run --matrix ", 0), 0u);
}

// One graph pattern, two entries: the finding's typed facts tell them apart, not its words.
TEST(CatalogAttribution, TheConnectCycleIsTheEntryOfWhatItConnects) {
  using hangbench::catalog::entry_for;
  const auto* collective = entry_for("nccl-connect-cycle", "", "", "", {"nccl connection: collective"});
  ASSERT_NE(collective, nullptr);
  EXPECT_EQ(collective->id, "nccl-first-collective-connect");
  const auto* p2p = entry_for("nccl-connect-cycle", "", "", "", {"x", "nccl connection: point-to-point"});
  ASSERT_NE(p2p, nullptr);
  EXPECT_EQ(p2p->id, "nccl-first-send-connect");
  EXPECT_EQ(entry_for("nccl-connect-cycle", "", "", "", {"nccl connection: init"}), nullptr);
  const auto a = hangbench::catalog::attribute("nccl-connect-cycle", "", "", {}, {"nccl connection: init"});
  EXPECT_NE(a.sentence.find("only with the facts nccl connection: collective"), std::string::npos) << a.sentence;
}

// "hangs in A to B" read as contiguous where healthy releases lay between (the 53-build
// table's net-error column): runs break at a release judged healthy, not at an unjudged one.
TEST(Measured, HangingReleasesAreToldAsRunsBrokenOnlyByAHealthyOne) {
  using S = hangbench::catalog::ReleaseState;
  using hangbench::catalog::hanging_runs_text;
  EXPECT_EQ(hanging_runs_text({{"2.18.1", S::Hangs},
                               {"2.18.3", S::Hangs},
                               {"2.19.3", S::Healthy},
                               {"2.20.5", S::Unjudged},
                               {"2.26.2", S::Hangs},
                               {"2.27.3", S::Unjudged},
                               {"2.27.7", S::Hangs},
                               {"2.28.3", S::Healthy}}),
            "2.18.1 to 2.18.3 and 2.26.2 to 2.27.7 (4 releases)");
  // cu11 and cu12 of one release: it counts once, and its healthy build breaks nothing.
  EXPECT_EQ(hanging_runs_text({{"2.21.5", S::Hangs}, {"2.21.5", S::Healthy}, {"2.22.3", S::Hangs}}),
            "2.21.5 to 2.22.3 (2 releases)");
  EXPECT_EQ(hanging_runs_text({{"2.25.1", S::Hangs}, {"2.26.2", S::Healthy}}), "2.25.1");
  EXPECT_EQ(
      hanging_runs_text({{"a", S::Hangs}, {"b", S::Healthy}, {"c", S::Hangs}, {"d", S::Healthy}, {"e", S::Hangs}}),
      "a, c and e (3 releases)");
  EXPECT_EQ(hanging_runs_text({{"2.28.3", S::Healthy}}), "");
}
