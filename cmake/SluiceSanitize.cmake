# SLUICE_SANITIZE: AddressSanitizer + UndefinedBehaviorSanitizer on all host C/C++ code.
# Device code is left alone: nvcc does not understand the flags.
if(SLUICE_SANITIZE)
  foreach(flag -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
    add_compile_options($<$<COMPILE_LANGUAGE:CXX,C>:${flag}>)
  endforeach()
  add_link_options(-fsanitize=address,undefined)
endif()
