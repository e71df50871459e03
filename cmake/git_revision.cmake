# The source tree's git revision, taken at build time: run by the lockprof_git_revision target
# (CMakeLists.txt) on every build as `cmake -DSOURCE_DIR=... -DOUTPUT=... -P git_revision.cmake`.
# Writes OUTPUT, the one source file that defines lockprof::git_revision()
# (include/lockprof/common/git_revision.hpp): `git rev-parse --short HEAD`, with "-dirty" when
# tracked files have uncommitted changes (untracked files do not count), or "unknown" where
# SOURCE_DIR is not the top of a git checkout (a release tarball) or git is missing. OUTPUT is
# rewritten only when the revision changed, so a build after no commit recompiles nothing, and
# a build after a commit recompiles that file alone and relinks.
if(NOT SOURCE_DIR OR NOT OUTPUT)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=DIR -DOUTPUT=FILE -P git_revision.cmake")
endif()

set(revision "unknown")
find_program(GIT_EXECUTABLE git)
if(GIT_EXECUTABLE)
  # --no-optional-locks: a build never takes .git/index.lock from a git command running beside
  # it (git status would otherwise refresh the index file).
  execute_process(COMMAND "${GIT_EXECUTABLE}" --no-optional-locks -C "${SOURCE_DIR}"
                          rev-parse --show-toplevel --short HEAD
                  RESULT_VARIABLE rc OUTPUT_VARIABLE lines ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc EQUAL 0)
    string(REPLACE "\n" ";" lines "${lines}")
    list(LENGTH lines count)
    if(count EQUAL 2)
      list(GET lines 0 top)
      list(GET lines 1 head)
      file(REAL_PATH "${top}" top)
      file(REAL_PATH "${SOURCE_DIR}" source)
      # Only this tree's own history: a tarball unpacked inside another checkout is "unknown".
      if(top STREQUAL source)
        set(revision "${head}")
        execute_process(COMMAND "${GIT_EXECUTABLE}" --no-optional-locks -C "${SOURCE_DIR}"
                                status --porcelain --untracked-files=no
                        RESULT_VARIABLE rc OUTPUT_VARIABLE changes ERROR_QUIET)
        if(NOT rc EQUAL 0 OR NOT changes STREQUAL "")
          string(APPEND revision "-dirty")
        endif()
      endif()
    endif()
  endif()
endif()

set(content "// Generated at build time by cmake/git_revision.cmake; do not edit.
#include \"lockprof/common/git_revision.hpp\"

namespace lockprof {

std::string_view git_revision() {
    return \"${revision}\";
}

}  // namespace lockprof
")
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUTPUT}" "${content}")
endif()
