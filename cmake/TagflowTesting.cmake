# Test registration. One line per test file:
#
#   tagflow_add_test(tag_test.cpp tagflow_reactors)                  # gtest, discovered per test
#   tagflow_add_test(cluster_test.cpp tagflow_config DEPENDS tagflow SERIAL)
#   tagflow_add_test(dqn_test.cpp tagflow_learning TORCH)            # joins the one torch binary
#
# Positional arguments after the file are libraries to link. DEPENDS names targets the test runs
# (the tagflow CLI, say) so they are built first; SERIAL keeps a test away from the others (it uses
# ports, processes or many threads). TORCH tests are linked into one executable, tagflow_torch_tests,
# run as one ctest entry, because every process that loads LibTorch pays about 1.5 s at start-up.
#
# Every test sees TAGFLOW_SOURCE_DIR, TAGFLOW_BIN_DIR (where the tagflow binaries are) and
# TAGFLOW_HAS_TORCH (0 in presets that leave LibTorch out, such as asan and tsan) as macros.

set_property(GLOBAL PROPERTY TAGFLOW_TORCH_TEST_SOURCES "")
set_property(GLOBAL PROPERTY TAGFLOW_TORCH_TEST_LIBS "")

function(_tagflow_test_common target)
  tagflow_set_warnings(${target})
  target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR})
  target_compile_definitions(${target} PRIVATE
    TAGFLOW_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
    TAGFLOW_BIN_DIR="${CMAKE_BINARY_DIR}/bin"
    TAGFLOW_HAS_TORCH=$<BOOL:${TAGFLOW_BUILD_TORCH}>)
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
endfunction()

function(tagflow_add_test file)
  cmake_parse_arguments(T "TORCH;SERIAL" "" "DEPENDS" ${ARGN})
  get_filename_component(stem ${file} NAME_WE)
  get_filename_component(abs ${file} ABSOLUTE)
  if(T_TORCH)
    if(TAGFLOW_BUILD_TORCH)
      set_property(GLOBAL APPEND PROPERTY TAGFLOW_TORCH_TEST_SOURCES ${abs})
      set_property(GLOBAL APPEND PROPERTY TAGFLOW_TORCH_TEST_LIBS ${T_UNPARSED_ARGUMENTS})
      set_property(GLOBAL APPEND PROPERTY TAGFLOW_TORCH_TEST_DEPENDS ${T_DEPENDS})
    endif()
    return()
  endif()
  file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR}/tests ${CMAKE_CURRENT_SOURCE_DIR})
  string(REPLACE "/" "_" area "${rel}")
  set(target test_${area}_${stem})
  add_executable(${target} ${file})
  target_link_libraries(${target} PRIVATE ${T_UNPARSED_ARGUMENTS} GTest::gtest GTest::gtest_main Threads::Threads
    tagflow_tsan_suppressions)
  _tagflow_test_common(${target})
  if(T_DEPENDS)
    add_dependencies(${target} ${T_DEPENDS})
  endif()
  set(props LABELS ${area} TIMEOUT 300)
  if(T_SERIAL)
    list(APPEND props RUN_SERIAL TRUE)
  endif()
  gtest_discover_tests(${target} TEST_PREFIX "${area}/" DISCOVERY_MODE PRE_TEST PROPERTIES ${props})
endfunction()

# Called once from the root CMakeLists.txt after every test folder was added.
function(tagflow_finalize_torch_tests)
  get_property(sources GLOBAL PROPERTY TAGFLOW_TORCH_TEST_SOURCES)
  if(NOT sources)
    return()
  endif()
  get_property(libs GLOBAL PROPERTY TAGFLOW_TORCH_TEST_LIBS)
  get_property(deps GLOBAL PROPERTY TAGFLOW_TORCH_TEST_DEPENDS)
  list(REMOVE_DUPLICATES libs)
  # Every torch test runs with the LibTorch kinds installed (nodes/kind/torch_registry.hpp).
  add_executable(tagflow_torch_tests ${sources} ${CMAKE_SOURCE_DIR}/tests/support/torch_kinds.cpp)
  target_link_libraries(tagflow_torch_tests PRIVATE ${libs} tagflow_kinds_torch GTest::gtest GTest::gtest_main Threads::Threads
    tagflow_tsan_suppressions)
  _tagflow_test_common(tagflow_torch_tests)
  if(deps)
    list(REMOVE_DUPLICATES deps)
    add_dependencies(tagflow_torch_tests ${deps})
  endif()
  add_test(NAME torch/all COMMAND tagflow_torch_tests)
  set_tests_properties(torch/all PROPERTIES LABELS torch TIMEOUT 900 RUN_SERIAL TRUE)
endfunction()

include(GoogleTest)
