// The git revision of the source tree lockprof was built from, as every result's provenance,
// `lockprof --version` and the table's header give it: `git rev-parse --short HEAD` at build
// time, "-dirty" appended when tracked files had uncommitted changes, "unknown" outside a git
// checkout. Defined in the one generated source, build/generated/git_revision.cpp, which
// cmake/git_revision.cmake rewrites at every build where the revision changed (and only then),
// so a commit needs no reconfigure and recompiles that file alone.
#pragma once

#include <string_view>

namespace lockprof {

std::string_view git_revision();

}  // namespace lockprof
