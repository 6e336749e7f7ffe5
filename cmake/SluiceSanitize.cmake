# SLUICE_SANITIZE: AddressSanitizer + UndefinedBehaviorSanitizer on all host C/C++ code.
# Device code is left alone: nvcc does not understand the flags.
if(SLUICE_SANITIZE)
  foreach(flag -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
    add_compile_options($<$<COMPILE_LANGUAGE:CXX,C>:${flag}>)
  endforeach()
  add_link_options(-fsanitize=address,undefined)
  # Every test executable links the whole core, so full debug information is copied into each of
  # them: the suite's build once filled a CI disk. Line tables (-g1) are all a sanitizer report
  # needs to name the file and line, and -gz keeps them compressed in objects and executables.
  add_compile_options($<$<COMPILE_LANGUAGE:CXX,C>:-g1> $<$<COMPILE_LANGUAGE:CXX,C>:-gz>)
  add_link_options(-gz)
  # The sanitizers' per-check data is full of pointers, so a position-independent executable
  # carries a relocation for each: about a third of every test executable. Packed relative
  # relocations (DT_RELR, glibc 2.36) store them as a bitmap instead.
  include(CheckLinkerFlag)
  check_linker_flag(CXX "-Wl,-z,pack-relative-relocs" SLUICE_LINKER_PACKS_RELOCATIONS)
  if(SLUICE_LINKER_PACKS_RELOCATIONS)
    add_link_options(-Wl,-z,pack-relative-relocs)
  endif()
endif()
