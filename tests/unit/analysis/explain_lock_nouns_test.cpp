// The explanation names each lock's read-modify-write ("atomic exchanges", "compare-and-swaps")
// from the lock's own header, so every lock in the catalog, under its real name, gets its noun.
// (explain.cpp used to key a private table on "pg_slock" and "ttas_cas", names no lock had.)
#include <string>

#include <gtest/gtest.h>

#include "lockprof/analysis/explain.hpp"
#include "lockprof/workload/runnable_locks.hpp"

namespace lockprof::analysis {
namespace {

CellEvidence cell(const std::string& lock, const std::string& algorithm, double rmw, double spins) {
    CellEvidence e;
    e.lock = lock;
    e.algorithm = algorithm;
    e.threads = 2;
    e.acquires_per_second = summarize({10e6, 11e6, 12e6});
    e.rmw_per_acquire = summarize({rmw, rmw, rmw});
    e.spins_per_acquire = summarize({spins, spins, spins});
    return e;
}

std::string explained(const CellEvidence& a, const CellEvidence& b) {
    const auto diagnoses = explain({a, b});
    std::string text;
    for (const auto& f : diagnoses.at(0).findings) text += f.text + "\n";
    return text;
}

TEST(ExplainLockNouns, PostgresAndTtasCasUseTheirNouns) {
    const auto pg = explained(cell("pg-slock", "pg-slock", 37, 36), cell("ttas", "ttas", 1.3, 12));
    EXPECT_NE(pg.find("pg-slock issues 37 atomic exchanges per acquire"), std::string::npos) << pg;
    const auto ttas_cas =
        explained(cell("ttas-cas", "ttas-cas", 30, 29), cell("ttas", "ttas", 1.3, 12));
    EXPECT_NE(ttas_cas.find("ttas-cas issues 30 compare-and-swaps per acquire"), std::string::npos)
        << ttas_cas;
}

TEST(ExplainLockNouns, EveryCatalogLockHasItsOwnNoun) {
    for (const auto& lock : workload::lock_catalog()) {
        const auto text =
            explained(cell(lock.name, lock.algorithm, 37, 36), cell("ttas", "ttas", 1.3, 12));
        EXPECT_NE(text.find(lock.name + " issues 37 "), std::string::npos) << text;
        EXPECT_EQ(text.find("atomic read-modify-writes"), std::string::npos)
            << lock.name << " fell back to the generic noun: " << text;
    }
}

}  // namespace
}  // namespace lockprof::analysis
