# Every third-party package, found once, with its role reported by feature_summary.
find_package(TBB REQUIRED)
set_package_properties(TBB PROPERTIES TYPE REQUIRED PURPOSE "oneTBB task arena: pipeline stages, replicas, parallel scans")
find_package(nlohmann_json 3.10 REQUIRED)
set_package_properties(nlohmann_json PROPERTIES TYPE REQUIRED PURPOSE "Project files and --json output")
find_package(ZLIB REQUIRED)
set_package_properties(ZLIB PROPERTIES TYPE REQUIRED PURPOSE "Inflating deflated .npz members")
find_package(JPEG REQUIRED)
set_package_properties(JPEG PROPERTIES TYPE REQUIRED PURPOSE "decode_image and sluice gen images: JPEG (libjpeg-turbo, as TensorFlow)")
find_package(PNG REQUIRED)
set_package_properties(PNG PROPERTIES TYPE REQUIRED PURPOSE "decode_image and sluice gen images: PNG (libpng, as TensorFlow)")
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
add_feature_info(OpenBLAS OPENBLAS_FOUND "CPU backend matrix products (sgemm ${OPENBLAS_VERSION}, single-threaded, split over oneTBB tasks)")
if(NOT SLUICE_PYTHON_PACKAGE_ONLY)
  find_package(Qt6 6.2 REQUIRED COMPONENTS Core Widgets Test PrintSupport Svg)
  # QCustomPlot draws the workbench's live charts (Debian libqcustomplot-dev, built for Qt 6).
  find_package(QCustomPlotQt6 REQUIRED)
  set_package_properties(QCustomPlotQt6 PROPERTIES TYPE REQUIRED PURPOSE "The workbench's live charts")
  set_package_properties(Qt6 PROPERTIES TYPE REQUIRED PURPOSE "Command line, workbench and Qt Test (never in core)")
endif()

# --- CUDA (optional) -------------------------------------------------------
set(SLUICE_HAVE_CUDA OFF)
if(NOT SLUICE_WITH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_ARCHITECTURES ${SLUICE_CUDA_ARCHITECTURES})
    # CMake 3.25 does not know the flag for C++20 device code with recent nvcc; our .cu
    # files are written to C++17.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    enable_language(CUDA)
    find_package(CUDAToolkit)
    if(CUDAToolkit_FOUND)
      set(SLUICE_HAVE_CUDA ON)
    endif()
  endif()
  if(SLUICE_WITH_CUDA STREQUAL "ON" AND NOT SLUICE_HAVE_CUDA)
    message(FATAL_ERROR "SLUICE_WITH_CUDA=ON but no CUDA compiler/toolkit was found")
  endif()
endif()
add_feature_info(CUDA SLUICE_HAVE_CUDA "GPU backend (CUDA runtime, cuBLAS, NCCL); archs ${SLUICE_CUDA_ARCHITECTURES}")

# NCCL: only its header is needed to build; the library is loaded at run time (dlopen), so a
# CUDA build starts where NCCL is missing and mirrors over logical replicas or through the host.
set(SLUICE_HAVE_NCCL OFF)
if(SLUICE_HAVE_CUDA)
  find_path(SLUICE_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV NCCL_HOME PATH_SUFFIXES include)
  if(SLUICE_NCCL_INCLUDE_DIR)
    set(SLUICE_HAVE_NCCL ON)
  endif()
endif()
add_feature_info(NCCL SLUICE_HAVE_NCCL "All-reduce between GPUs and machines (loaded at run time)")

# --- MPI (optional) ---------------------------------------------------------
set(SLUICE_HAVE_MPI OFF)
if(NOT SLUICE_WITH_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS CXX)
  if(MPI_CXX_FOUND)
    set(SLUICE_HAVE_MPI ON)
  elseif(SLUICE_WITH_MPI STREQUAL "ON")
    message(FATAL_ERROR "SLUICE_WITH_MPI=ON but no MPI implementation was found")
  endif()
endif()
add_feature_info(MPI SLUICE_HAVE_MPI "Several processes or machines through mpirun")

# --- Python package (optional): pybind11 from Debian's pybind11-dev ---------
set(SLUICE_HAVE_PYTHON OFF)
if(NOT SLUICE_WITH_PYTHON STREQUAL "OFF")
  # The system's interpreter, whose numpy and PyTorch (Debian's) the tests and users import,
  # rather than whichever python3 comes first on the PATH.
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python3 COMPONENTS Interpreter Development.Module OPTIONAL_COMPONENTS Development.Embed)
  if(Python3_FOUND)
    find_package(pybind11 CONFIG QUIET)
  endif()
  if(Python3_FOUND AND pybind11_FOUND)
    set(SLUICE_HAVE_PYTHON ON)
  elseif(SLUICE_WITH_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "SLUICE_WITH_PYTHON=ON but Python 3 development files or pybind11 (pybind11-dev) were not found")
  endif()
endif()
add_feature_info(Python SLUICE_HAVE_PYTHON "import sluice: the Python package (pybind11)")
# The executable embeds the interpreter for Python functions in projects where it can link it.
set(SLUICE_EMBED_PYTHON OFF)
if(SLUICE_HAVE_PYTHON AND Python3_Development.Embed_FOUND AND NOT SLUICE_PYTHON_PACKAGE_ONLY)
  set(SLUICE_EMBED_PYTHON ON)
endif()
add_feature_info(EmbeddedPython SLUICE_EMBED_PYTHON "Python functions in projects run by the sluice executable")

# --- Apache Arrow / Parquet (optional): from_parquet ---------------------------
# Debian 12 has no Arrow packages: scripts/fetch-arrow.sh (run by scripts/build.sh) puts the C++
# libraries and headers that the pyarrow wheel carries into .deps/arrow.
set(SLUICE_WITH_PARQUET AUTO CACHE STRING "Read Parquet files with Apache Arrow's C++ libraries (AUTO, ON, OFF)")
set_property(CACHE SLUICE_WITH_PARQUET PROPERTY STRINGS AUTO ON OFF)
set(SLUICE_ARROW_DIR "${PROJECT_SOURCE_DIR}/.deps/arrow" CACHE PATH "Apache Arrow's include/ and lib/ (scripts/fetch-arrow.sh)")
set(SLUICE_HAVE_PARQUET OFF)
# The Python package alone (`pip install ./python`) leaves Parquet out unless asked: its wheel
# would have to carry Arrow's libraries (not done yet).
if(SLUICE_PYTHON_PACKAGE_ONLY AND SLUICE_WITH_PARQUET STREQUAL "AUTO")
  set(SLUICE_WITH_PARQUET OFF)
endif()
if(NOT SLUICE_WITH_PARQUET STREQUAL "OFF")
  find_library(SLUICE_ARROW_LIBRARY arrow PATHS "${SLUICE_ARROW_DIR}/lib" NO_DEFAULT_PATH NO_CACHE)
  find_library(SLUICE_PARQUET_LIBRARY parquet PATHS "${SLUICE_ARROW_DIR}/lib" NO_DEFAULT_PATH NO_CACHE)
  if(SLUICE_ARROW_LIBRARY AND SLUICE_PARQUET_LIBRARY AND EXISTS "${SLUICE_ARROW_DIR}/include/parquet/arrow/reader.h")
    set(SLUICE_HAVE_PARQUET ON)
    add_library(sluice_arrow SHARED IMPORTED)
    set_target_properties(sluice_arrow PROPERTIES IMPORTED_LOCATION "${SLUICE_ARROW_LIBRARY}"
                          INTERFACE_INCLUDE_DIRECTORIES "${SLUICE_ARROW_DIR}/include")
    add_library(sluice_parquet SHARED IMPORTED)
    set_target_properties(sluice_parquet PROPERTIES IMPORTED_LOCATION "${SLUICE_PARQUET_LIBRARY}"
                          INTERFACE_LINK_LIBRARIES sluice_arrow)
    # The libraries by their sonames, for installing beside the executable.
    file(GLOB SLUICE_ARROW_RUNTIME_FILES "${SLUICE_ARROW_DIR}/lib/lib*.so.*")
  elseif(SLUICE_WITH_PARQUET STREQUAL "ON")
    message(FATAL_ERROR "SLUICE_WITH_PARQUET=ON but ${SLUICE_ARROW_DIR} has no Arrow libraries (run scripts/fetch-arrow.sh)")
  endif()
endif()
add_feature_info(Parquet SLUICE_HAVE_PARQUET "from_parquet (Apache Arrow C++ from ${SLUICE_ARROW_DIR})")
