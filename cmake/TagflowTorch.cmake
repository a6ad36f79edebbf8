# LibTorch, kept in as few targets as possible (one translation unit with <torch/torch.h> costs
# ~40 s and ~1 GB to compile, and every process that links it pays ~0.4 CPU s at start-up). Only
# rl/learning/, the tagflow-torch executable and the LibTorch test executable link `torch`.
find_package(Torch 1.13 REQUIRED)

# Libraries LibTorch names but never calls. Debian's libtorch_cpu lists OpenCV, FFmpeg, LMDB and
# LevelDB among its DT_NEEDED entries without taking a single symbol from them, and loading them
# with all they load in turn (Qt, GDAL, codecs: 231 of the 293 objects a LibTorch process maps)
# cost every LibTorch process about 0.3 CPU seconds at start (cmake/README.md). Each one that cmake/unused-needed finds unused (by libtorch_cpu and
# by everything still loaded without it) gets an empty stand-in of the same name in
# BUILD/lib/tagflow, which the LibTorch executables search first (tagflow_use_torch_stand_ins).
# TAGFLOW_TORCH_STAND_INS=OFF loads the real ones.
option(TAGFLOW_TORCH_STAND_INS "Replace the libraries LibTorch names but never calls by empty ones" ON)
set(TAGFLOW_TORCH_STAND_IN_DIR ${CMAKE_BINARY_DIR}/lib/tagflow)
set(_tagflow_never_called "^lib(opencv_[a-z0-9_]+|avcodec|avformat|avutil|swscale|swresample|lmdb|leveldb)[.]so")
set(_tagflow_stand_ins "")
if(TAGFLOW_TORCH_STAND_INS)
  find_library(TAGFLOW_TORCH_CPU_LIBRARY torch_cpu HINTS ${TORCH_INSTALL_PREFIX}/lib)
  if(TAGFLOW_TORCH_CPU_LIBRARY)
    # The check reads some 300 libraries' entries and 20 symbol tables (about 5 s): once per
    # LibTorch file and version of the script.
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/cmake/unused-needed)
    file(TIMESTAMP ${TAGFLOW_TORCH_CPU_LIBRARY} _stamp)
    file(MD5 ${CMAKE_SOURCE_DIR}/cmake/unused-needed _script)
    set(_key "${TAGFLOW_TORCH_CPU_LIBRARY} ${_stamp} ${_script} ${_tagflow_never_called}")
    if(NOT "${_key}" STREQUAL "${_TAGFLOW_TORCH_UNUSED_KEY}")
      execute_process(
        COMMAND ${CMAKE_SOURCE_DIR}/cmake/unused-needed ${TAGFLOW_TORCH_CPU_LIBRARY}
                "${_tagflow_never_called}"
        OUTPUT_VARIABLE _unused RESULT_VARIABLE _rc ERROR_VARIABLE _err)
      set(_failure "")
      if(NOT _rc EQUAL 0)
        message(STATUS "LibTorch's unused libraries not checked (${_err}); all are loaded")
        set(_unused "")
        string(STRIP "unused-needed exited ${_rc}: ${_err}" _failure)
      endif()
      # Read by tests/cli/torch_stand_ins_test.cpp: no stand-ins because the check failed is a
      # failure there, not a LibTorch without unused libraries.
      set(_TAGFLOW_TORCH_UNUSED_FAILURE "${_failure}" CACHE INTERNAL "why the check failed, if it did")
      string(STRIP "${_unused}" _unused)
      string(REPLACE "\n" ";" _unused "${_unused}")
      set(_TAGFLOW_TORCH_UNUSED "${_unused}" CACHE INTERNAL "libraries LibTorch names, never calls")
      set(_TAGFLOW_TORCH_UNUSED_KEY "${_key}" CACHE INTERNAL "what _TAGFLOW_TORCH_UNUSED was found for")
    endif()
    set(_tagflow_stand_ins ${_TAGFLOW_TORCH_UNUSED})
  endif()
endif()
list(LENGTH _tagflow_stand_ins _count)
message(STATUS "LibTorch: ${_count} libraries it names but never calls replaced by empty ones")

add_custom_target(tagflow_torch_stand_ins)
foreach(_name IN LISTS _tagflow_stand_ins)
  string(MAKE_C_IDENTIFIER "${_name}" _id)
  add_library(tagflow_stand_in_${_id} SHARED ${CMAKE_SOURCE_DIR}/cmake/empty_library.cpp)
  set_target_properties(tagflow_stand_in_${_id} PROPERTIES PREFIX "" OUTPUT_NAME "${_name}"
    SUFFIX "" NO_SONAME ON LIBRARY_OUTPUT_DIRECTORY ${TAGFLOW_TORCH_STAND_IN_DIR} UNITY_BUILD OFF)
  target_link_options(tagflow_stand_in_${_id} PRIVATE "LINKER:-soname,${_name}" "LINKER:--as-needed")
  add_dependencies(tagflow_torch_stand_ins tagflow_stand_in_${_id})
endforeach()

# TARGET (an executable that loads LibTorch) looks for libraries in BUILD/lib/tagflow first, next
# to its own directory ($ORIGIN/../lib/tagflow: the Dockerfile copies both). The search path is a
# DT_RPATH, not a DT_RUNPATH: only DT_RPATH also serves the libraries libtorch_cpu itself needs.
function(tagflow_use_torch_stand_ins target)
  add_dependencies(${target} tagflow_torch_stand_ins)
  set_target_properties(${target} PROPERTIES BUILD_RPATH "\$ORIGIN/../lib/tagflow")
  target_link_options(${target} PRIVATE "LINKER:--disable-new-dtags")
endfunction()
