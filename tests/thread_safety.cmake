# Run by ctest (thread_safety_core): clang's thread safety analysis over core's units that take
# locks or touch guarded fields, each compiled with -fsyntax-only; any finding fails the test.
#   cmake -DCLANGXX=clang++ -DCORE=<core folder> -DSOURCES="a.cpp;b.cpp" -P thread_safety.cmake
# First a unit made to fail (a guarded field written without its lock): if the analysis lets it
# through, it is not running, and no finding below would mean anything.
set(bad ${CMAKE_CURRENT_BINARY_DIR}/thread_safety_must_fail.cpp)
file(WRITE ${bad} "#include \"util/mutex.h\"\nstruct S { sluice::Mutex m; int n GUARDED_BY(m) = 0; void f() { ++n; } };\n")
execute_process(COMMAND ${CLANGXX} -std=c++20 -fsyntax-only -Wthread-safety -Werror=thread-safety -I${CORE} ${bad}
                RESULT_VARIABLE result OUTPUT_QUIET ERROR_QUIET)
if(result EQUAL 0)
  message(FATAL_ERROR "the analysis passed a unit that writes a guarded field without its lock: it is not checking")
endif()

set(failed "")
foreach(source IN LISTS SOURCES)
  execute_process(COMMAND ${CLANGXX} -std=c++20 -fsyntax-only -Wthread-safety -Wthread-safety-beta -Werror=thread-safety
                          -Werror=thread-safety-beta -I${CORE} ${source}
                  RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message("${err}${out}")
    list(APPEND failed ${source})
  endif()
endforeach()
list(LENGTH SOURCES checked)
if(failed)
  message(FATAL_ERROR "thread safety analysis failed in: ${failed}")
endif()
message("thread safety analysis: ${checked} units of core checked, no finding")
