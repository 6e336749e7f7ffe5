# CPack pre-build script: turns the TGZ staging tree into a relocatable one. Copies the Qt
# plugins the executable loads and every library it or they need into lib/, except glibc's own
# and the GPU driver's (those must match the machine's kernel and driver), then points the run
# paths at $ORIGIN so nothing from the build machine is looked up.
# The DEB is left alone: there Debian provides the libraries and dpkg-shlibdeps names them.
if(NOT CPACK_GENERATOR STREQUAL "TGZ")
  return()
endif()
if(NOT CPACK_SLUICE_PATCHELF)
  message(FATAL_ERROR "The relocatable package needs patchelf (scripts/setup-debian.sh installs it)")
endif()

set(root "${CPACK_TEMPORARY_INSTALL_DIRECTORY}")
if(NOT EXISTS "${root}/bin/sluice")
  message(FATAL_ERROR "bundle.cmake: no bin/sluice under ${root}")
endif()

# platforms: xcb for the workbench, offscreen and minimal for runs without a display;
# the rest is what the workbench draws with (SVG icons, GL on X11, compose keys).
set(plugins
  platforms/libqxcb.so platforms/libqoffscreen.so platforms/libqminimal.so
  xcbglintegrations/libqxcb-glx-integration.so xcbglintegrations/libqxcb-egl-integration.so
  imageformats/libqsvg.so iconengines/libqsvgicon.so
  platforminputcontexts/libcomposeplatforminputcontextplugin.so)
set(modules "")
foreach(plugin IN LISTS plugins)
  if(EXISTS "${CPACK_SLUICE_QT_PLUGINS_DIR}/${plugin}")
    cmake_path(GET plugin PARENT_PATH category)
    file(COPY "${CPACK_SLUICE_QT_PLUGINS_DIR}/${plugin}" DESTINATION "${root}/plugins/${category}")
    list(APPEND modules "${root}/plugins/${plugin}")
  else()
    message(WARNING "bundle.cmake: Qt plugin ${plugin} not found; the package will lack it")
  endif()
endforeach()
file(WRITE "${root}/bin/qt.conf" "[Paths]\nPrefix = ..\nPlugins = plugins\n")
# The Python package (`import sluice` with PYTHONPATH=<package>/lib/python3/dist-packages), when
# the build has it: its extension module needs the same libraries as the executable.
file(GLOB python_modules "${root}/lib/python3/dist-packages/sluice/_sluice*.so")

# glibc (its parts must come from one build: the machine's) and the GPU driver's user-space
# libraries (they must match the kernel module). cuBLAS and NCCL are loaded from the machine's
# CUDA installation at run time; a CUDA build links the runtime statically.
set(system_libraries
  "^ld-linux" "^linux-vdso" "^libc\\.so" "^libm\\.so" "^libmvec\\.so" "^libpthread\\.so" "^libdl\\.so"
  "^librt\\.so" "^libutil\\.so" "^libresolv\\.so" "^libanl\\.so" "^libnsl\\.so" "^libBrokenLocale\\.so"
  "^libcuda\\.so" "^libnvidia-" "^libnvcuvid" "^libcublas" "^libcublasLt" "^libnccl" "^libcudnn" "^libnvrtc"
  "^libGLX_" "^libEGL_"
  # Apache Arrow (from_parquet): installed in lib/sluice/ already (app/CMakeLists.txt).
  "^libarrow\\.so" "^libparquet\\.so")
file(GET_RUNTIME_DEPENDENCIES
  EXECUTABLES "${root}/bin/sluice"
  MODULES ${modules} ${python_modules}
  DIRECTORIES ${CPACK_SLUICE_LIBRARY_DIRS}
  PRE_EXCLUDE_REGEXES ${system_libraries}
  RESOLVED_DEPENDENCIES_VAR libraries
  UNRESOLVED_DEPENDENCIES_VAR missing)
if(missing)
  message(FATAL_ERROR "bundle.cmake: cannot find ${missing}")
endif()

function(set_runpath file runpath)
  execute_process(COMMAND "${CPACK_SLUICE_PATCHELF}" --set-rpath "${runpath}" "${file}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "patchelf --set-rpath ${runpath} ${file} failed")
  endif()
endfunction()

# A RUNPATH (not RPATH) on every file: LD_LIBRARY_PATH can still put the machine's own Open MPI
# or libstdc++ first where a user needs that.
file(MAKE_DIRECTORY "${root}/lib")
foreach(library IN LISTS libraries)
  cmake_path(GET library FILENAME name) # the soname: the name the loader asks for
  file(COPY_FILE "${library}" "${root}/lib/${name}")
  set_runpath("${root}/lib/${name}" "$ORIGIN")
endforeach()
set_runpath("${root}/bin/sluice" "$ORIGIN/../lib:$ORIGIN/../lib/sluice")
file(GLOB arrow_libraries "${root}/lib/sluice/lib*.so.*")
foreach(library IN LISTS arrow_libraries)
  set_runpath("${library}" "$ORIGIN:$ORIGIN/..")
endforeach()
foreach(module IN LISTS modules)
  set_runpath("${module}" "$ORIGIN/../../lib")
endforeach()
foreach(module IN LISTS python_modules) # lib/python3/dist-packages/sluice/
  set_runpath("${module}" "$ORIGIN/../../..:$ORIGIN/../../../sluice")
endforeach()
list(LENGTH libraries count)
message(STATUS "bundle.cmake: ${count} libraries and the Qt plugins bundled")
