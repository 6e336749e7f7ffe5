# Writes the header that names the commit a binary was built from, for `sluice --version` and
# bug reports. Run at every build (not only at configure time), so a new commit or a first edit
# is never reported stale; the file is rewritten only when its text changes, so nothing
# recompiles otherwise. Outside a git checkout (a source archive) the commit is "unknown".
# cmake -DSOURCE_DIR=<checkout> -DOUTPUT=<header> -P git-commit.cmake
set(commit "unknown")
find_program(GIT git)
if(GIT)
  execute_process(COMMAND ${GIT} -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE head RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0 AND head)
    set(commit "${head}")
    # Tracked files changed since that commit: the binary is not exactly it.
    execute_process(COMMAND ${GIT} -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                    OUTPUT_VARIABLE changes RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0 AND changes)
      string(APPEND commit "-modified")
    endif()
  endif()
endif()
set(text "#pragma once\n// Written by installer/git-commit.cmake at build time.\n#define SLUICE_GIT_COMMIT \"${commit}\"\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
