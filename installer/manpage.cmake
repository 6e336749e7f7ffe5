# Writes sluice.1.gz from the built binary: `sluice --help` is the synopsis and each command's
# `--help` a section, so the man page says exactly what the terminal says.
# cmake -DSLUICE=<binary> -DOUTPUT=<file.1.gz> -DVERSION=<x.y.z> -P manpage.cmake

# A sanitizer build runs here too; Qt's process-lifetime singletons are not leaks.
set(ENV{ASAN_OPTIONS} "detect_leaks=0")
set(ENV{QT_QPA_PLATFORM} "offscreen")

function(sluice_help out)
  execute_process(COMMAND ${SLUICE} ${ARGN} --help OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR text STREQUAL "")
    message(FATAL_ERROR "sluice ${ARGN} --help failed (${rc})")
  endif()
  # roff: backslashes and dashes literal, no line may start a request.
  string(REPLACE "\\" "\\e" text "${text}")
  string(REPLACE "-" "\\-" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

sluice_help(usage)
# The commands are the usage lines' words after "sluice" ("inspect", "bench read", ...).
# A word must end at a space or the line's end: "run PROJECT" is "run", "bench read FILE" is "bench read".
string(REGEX MATCHALL "\n  sluice [a-z]+( [a-z]+)?[ \n]" commands "${usage}")
string(REPLACE "\n  sluice " "" commands "${commands}")
string(REGEX REPLACE "[ \n](;|$)" "\\1" commands "${commands}")
list(REMOVE_DUPLICATES commands)

set(page ".TH SLUICE 1 \"\" \"sluice ${VERSION}\" \"User Commands\"
.SH NAME
sluice \\- workbench for machine\\-learning input pipelines and data\\-parallel training
.SH SYNOPSIS
.nf
${usage}.fi
.SH DESCRIPTION
Without a command, or with a project file, \\fBsluice\\fR opens the workbench (it needs a display).
The commands run headless: they need no display and print \\fBsluice: \\fIwhat\\fB: \\fIwhy\\fR to
standard error when something is wrong.
.SH COMMANDS
")
foreach(command IN LISTS commands)
  string(REPLACE " " ";" words "${command}")
  sluice_help(text ${words})
  string(APPEND page ".SS \"sluice ${command}\"\n.nf\n${text}.fi\n")
endforeach()
string(APPEND page ".SH EXIT STATUS
0 success, 1 the run failed or was stopped, 2 bad input (a file, project or option that is not valid).
.SH FILES
.TP
.I share/sluice/projects
example projects, next to the installed binary's folder (for example /usr/share/sluice/projects)
.SH SEE ALSO
\\fBsluice \\-\\-version\\fR for the features this build has (CUDA, NCCL, MPI, BLAS).
")

cmake_path(REPLACE_EXTENSION OUTPUT LAST_ONLY "" OUTPUT_VARIABLE plain)
file(WRITE "${plain}" "${page}")
find_program(GZIP gzip REQUIRED)
# -n: no name or time stamp inside, so the same text gives the same file.
execute_process(COMMAND ${GZIP} -9nf "${plain}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip ${plain} failed")
endif()
