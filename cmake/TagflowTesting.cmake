# Test registration. One line per test file:
#
#   tagflow_add_test(tag_test.cpp tagflow_common)                    # gtest, discovered per test
#   tagflow_add_test(federated_process_test.cpp tagflow_hosts DEPENDS tagflow CLUSTER)
#   tagflow_add_test(dqn_learner_test.cpp tagflow_learning TORCH)    # joins the one torch binary
#
# Positional arguments after the file are libraries to link. DEPENDS names targets the test runs
# (the tagflow CLI, say) so they are built first; CLUSTER marks a file whose tests start processes,
# clusters or many threads. Cluster tests run beside each other under `ctest -j N` (on 2 cores,
# two at a time instead of one took the suite from 14 to 8-9 minutes): each takes free ports
# claimed from the others (common/loopback_ports.hpp; shipped files are moved onto them with
# tests/support/shipped_config.hpp's on_free_ports), pid-named namespaces and directories of its
# own. Two more words, for CLUSTER files only, keep a file's tests apart from others:
#
#   ALONE        ctest runs each of its tests with nothing beside it (RUN_SERIAL): tests that bound
#                a whole cluster's run in wall time (HostileCluster's 150 s under attack) or race
#                a sub-second heartbeat timeout (the coordinator's own tests);
#   LOCK NAME    no two tests holding NAME run at once (RESOURCE_LOCK): tests that edit one
#                machine-wide file, such as the Slurm tests' lines in /etc/hosts.
#
# (ctest takes these per test, gtest_discover_tests per executable: each is discovered with a
# filter on the gtest suites its file defines, at the end of the folder's CMakeLists.txt.) TORCH
# tests are linked into one executable, tagflow_torch_tests, run as one ctest entry, because every
# process that loads LibTorch pays for it at start-up (about 0.4 CPU s with the stand-ins of
# TagflowTorch.cmake, 0.7 s without; more on a busy machine).
#
# The other files of a folder share one executable, test_<area> (test_<area>_cluster for its
# CLUSTER files, so that editing a unit test relinks no cluster test and the reverse), linked with
# the union of their libraries: linking one executable per file cost more than compiling them.
# Each gtest test is still its own ctest entry, run alone in its own process, so a file's tests
# cannot see another file's; files of one folder must not share a test name or a symbol outside an
# anonymous namespace. A file that needs its own compile options sets them on the source
# (set_source_files_properties in the folder's CMakeLists.txt).
#
# Every test sees TAGFLOW_SOURCE_DIR, TAGFLOW_BIN_DIR (where the tagflow binaries are) and
# TAGFLOW_HAS_TORCH (0 in presets that leave LibTorch out, such as asan and tsan) as macros.

option(TAGFLOW_TEST_PCH "Precompile gtest and the common standard headers once for every test" ON)
# Unity build: each test executable compiles its files TAGFLOW_TEST_UNITY_BATCH at a time, as one
# translation unit, so the project and library headers they share are parsed once per batch.
# Files batched together must not both define a name in an anonymous namespace (or static): give
# such helpers a name particular to their file. A file that sets its own compile options is
# compiled alone (CMake leaves it out of the batches).
option(TAGFLOW_TEST_UNITY "Compile the files of each test executable in batches (unity build)" ON)
set(TAGFLOW_TEST_UNITY_BATCH 8 CACHE STRING "Test files per unity batch")
# The test files themselves compile at -O0 in the optimized builds (the libraries and programs
# they test keep the build type's -O2): test code spends its time in the libraries it calls and
# the processes it starts. On the 2-core build machine rebuilding the 51 test objects (and their
# links) took 479 CPU s at -O1 and 337 at -O0, back to back on one tree, and the suite ran no
# longer (549 s against 600 s the hour before; no test more than 3.6 s slower). -Og trips a
# false -Wmismatched-new-delete in msgpack's zone. Empty keeps the build type's level.
set(TAGFLOW_TEST_OPTIMIZE "-O0" CACHE STRING "Optimization flag for test code in optimized builds")
# Nor do the test files carry debug information in the optimized builds (the libraries and
# programs keep the build type's line tables for backtraces): -g0 compiled test_nodes_gateway's
# batch in 13.2 s against 17.4 s with -g1. The sanitizer presets turn it back on, for the test
# code's lines in their reports.
option(TAGFLOW_TEST_DEBUG_INFO "Debug information for test code in optimized builds" OFF)

set_property(GLOBAL PROPERTY TAGFLOW_TORCH_TEST_SOURCES "")
set_property(GLOBAL PROPERTY TAGFLOW_TORCH_TEST_LIBS "")

function(_tagflow_test_common target)
  tagflow_set_warnings(${target})
  target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR})
  target_compile_definitions(${target} PRIVATE
    TAGFLOW_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
    TAGFLOW_BIN_DIR="${CMAKE_BINARY_DIR}/bin"
    TAGFLOW_HAS_TORCH=$<BOOL:${TAGFLOW_BUILD_TORCH}>)
  if(TAGFLOW_TEST_OPTIMIZE)
    # After the build type's flags on the command line, so it wins; Debug stays at -O0.
    target_compile_options(${target} PRIVATE $<$<NOT:$<CONFIG:Debug>>:${TAGFLOW_TEST_OPTIMIZE}>)
  endif()
  if(NOT TAGFLOW_TEST_DEBUG_INFO)
    target_compile_options(${target} PRIVATE $<$<NOT:$<CONFIG:Debug>>:-g0>)
  endif()
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  if(TAGFLOW_TEST_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON
      UNITY_BUILD_BATCH_SIZE ${TAGFLOW_TEST_UNITY_BATCH})
  else()
    set_target_properties(${target} PROPERTIES UNITY_BUILD OFF)
  endif()
endfunction()

# One precompiled header for every test executable (REUSE_FROM this target): gtest and the standard
# headers most test files include, about half of a test file's preprocessed lines.
function(_tagflow_test_pch target)
  if(NOT TAGFLOW_TEST_PCH)
    return()
  endif()
  if(NOT TARGET tagflow_test_pch)
    file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/generated/tagflow_test_pch.cpp CONTENT "")
    add_library(tagflow_test_pch OBJECT ${CMAKE_BINARY_DIR}/generated/tagflow_test_pch.cpp)
    target_link_libraries(tagflow_test_pch PRIVATE GTest::gtest)
    _tagflow_test_common(tagflow_test_pch)
    target_precompile_headers(tagflow_test_pch PRIVATE <gtest/gtest.h> <algorithm> <atomic> <chrono>
      <filesystem> <fstream> <map> <sstream> <string> <thread> <vector>)
  endif()
  target_precompile_headers(${target} REUSE_FROM tagflow_test_pch)
endfunction()

# Every gtest executable links tests/support/test_tmpdir.cpp: each test process gets a directory
# of its own for ::testing::TempDir(), removed with what is in it when the process exits.
function(_tagflow_test_tmpdir target)
  if(NOT TARGET tagflow_test_tmpdir)
    add_library(tagflow_test_tmpdir OBJECT ${CMAKE_SOURCE_DIR}/tests/support/test_tmpdir.cpp)
    _tagflow_test_common(tagflow_test_tmpdir)
  endif()
  target_link_libraries(${target} PRIVATE tagflow_test_tmpdir)
endfunction()

# ctest's COST for tests without times from an earlier run: it starts the costliest first. Runs
# after the first use the times ctest recorded (Testing/Temporary/CTestCostData.txt) instead.
set(TAGFLOW_TEST_ALONE_COST 1000)
set(TAGFLOW_TEST_CLUSTER_COST 10)

# The gtest suites `file` defines (TEST and TEST_F lines), in `out`.
function(_tagflow_test_suites file out)
  file(STRINGS ${file} lines REGEX "^TEST(_F)?\\([A-Za-z0-9_]+")
  set(suites "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^TEST(_F)?\\(([A-Za-z0-9_]+).*" "\\2" suite "${line}")
    list(APPEND suites ${suite})
  endforeach()
  list(REMOVE_DUPLICATES suites)
  if(NOT suites)
    message(FATAL_ERROR "${file} marked ALONE or LOCK defines no TEST or TEST_F suite")
  endif()
  set(${out} ${suites} PARENT_SCOPE)
endfunction()

# A gtest filter matching every test of `suites`, in `out`.
function(_tagflow_suites_filter out)
  list(TRANSFORM ARGN APPEND ".*")
  list(JOIN ARGN ":" filter)
  set(${out} "${filter}" PARENT_SCOPE)
endfunction()

# Registers the tests of `target` with ctest, run at the end of the folder's CMakeLists.txt (once
# every file has joined it): the suites of ALONE files with RUN_SERIAL, those of LOCK files with
# their RESOURCE_LOCK, the rest with the executable's common properties.
function(_tagflow_discover_tests target area cluster)
  # A test that calls GTEST_SKIP() is reported as skipped, not passed: ctest lists it under "did
  # not run" (each ctest test is one gtest test, so the line can only be its own).
  set(base LABELS ${area} TIMEOUT 300 SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
  set(props ${base})
  if(cluster)
    # Start before the unit tests when ctest has no times from an earlier run (a fresh tree), so
    # that the short unit tests, not a long cluster test, end the run.
    list(APPEND props COST ${TAGFLOW_TEST_CLUSTER_COST})
  endif()
  get_property(alone TARGET ${target} PROPERTY TAGFLOW_ALONE_SUITES)
  get_property(locks TARGET ${target} PROPERTY TAGFLOW_LOCKS)
  set(special ${alone})
  set(common_args TEST_PREFIX "${area}/" DISCOVERY_MODE PRE_TEST)
  if(alone)
    _tagflow_suites_filter(filter ${alone})
    # The highest cost: ctest runs them first, with nothing else started yet.
    gtest_discover_tests(${target} ${common_args} TEST_FILTER "${filter}"
      PROPERTIES ${base} RUN_SERIAL TRUE COST ${TAGFLOW_TEST_ALONE_COST})
  endif()
  list(REMOVE_DUPLICATES locks)
  foreach(lock IN LISTS locks)
    get_property(suites TARGET ${target} PROPERTY TAGFLOW_LOCK_${lock})
    list(APPEND special ${suites})
    _tagflow_suites_filter(filter ${suites})
    gtest_discover_tests(${target} ${common_args} TEST_FILTER "${filter}"
      PROPERTIES ${props} RESOURCE_LOCK ${lock})
  endforeach()
  set(rest "")
  if(special)
    _tagflow_suites_filter(filter ${special})
    set(rest TEST_FILTER "-${filter}")
  endif()
  gtest_discover_tests(${target} ${common_args} ${rest} PROPERTIES ${props})
endfunction()

function(tagflow_add_test file)
  cmake_parse_arguments(T "TORCH;CLUSTER;ALONE" "LOCK" "DEPENDS" ${ARGN})
  get_filename_component(abs ${file} ABSOLUTE)
  if(T_TORCH)
    if(TAGFLOW_BUILD_TORCH)
      set_property(GLOBAL APPEND PROPERTY TAGFLOW_TORCH_TEST_SOURCES ${abs})
      set_property(GLOBAL APPEND PROPERTY TAGFLOW_TORCH_TEST_LIBS ${T_UNPARSED_ARGUMENTS})
      set_property(GLOBAL APPEND PROPERTY TAGFLOW_TORCH_TEST_DEPENDS ${T_DEPENDS})
    endif()
    return()
  endif()
  if((T_ALONE OR T_LOCK) AND NOT T_CLUSTER)
    message(FATAL_ERROR "${file}: ALONE and LOCK are for CLUSTER files")
  endif()
  file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR}/tests ${CMAKE_CURRENT_SOURCE_DIR})
  string(REPLACE "/" "_" area "${rel}")
  if(NOT area)
    set(area top)  # tests/ itself (the layer check): label `top`, tests `top/...`
  endif()
  set(target test_${area})
  if(T_CLUSTER)
    string(APPEND target _cluster)
  endif()
  if(TARGET ${target})
    target_sources(${target} PRIVATE ${file})
  else()
    add_executable(${target} ${file})
    target_link_libraries(${target} PRIVATE GTest::gtest GTest::gtest_main Threads::Threads
      tagflow_tsan_suppressions)
    _tagflow_test_common(${target})
    _tagflow_test_pch(${target})
    _tagflow_test_tmpdir(${target})
    # Arguments of a deferred call are read when it runs: pass this call's values as text.
    cmake_language(EVAL CODE
      "cmake_language(DEFER CALL _tagflow_discover_tests [[${target}]] [[${area}]] ${T_CLUSTER})")
  endif()
  if(T_ALONE)
    _tagflow_test_suites(${abs} suites)
    set_property(TARGET ${target} APPEND PROPERTY TAGFLOW_ALONE_SUITES ${suites})
  elseif(T_LOCK)
    _tagflow_test_suites(${abs} suites)
    set_property(TARGET ${target} APPEND PROPERTY TAGFLOW_LOCKS ${T_LOCK})
    set_property(TARGET ${target} APPEND PROPERTY TAGFLOW_LOCK_${T_LOCK} ${suites})
  endif()
  if(T_UNPARSED_ARGUMENTS)
    target_link_libraries(${target} PRIVATE ${T_UNPARSED_ARGUMENTS})
  endif()
  if(T_DEPENDS)
    add_dependencies(${target} ${T_DEPENDS})
  endif()
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
  _tagflow_test_tmpdir(tagflow_torch_tests)
  tagflow_use_torch_stand_ins(tagflow_torch_tests)
  # No shared precompiled header here: LibTorch defines _GLIBCXX_USE_CXX11_ABI, which the header
  # was not built with.
  if(deps)
    list(REMOVE_DUPLICATES deps)
    add_dependencies(tagflow_torch_tests ${deps})
  endif()
  add_test(NAME torch/all COMMAND tagflow_torch_tests)
  set_tests_properties(torch/all PROPERTIES LABELS torch TIMEOUT 900
    COST ${TAGFLOW_TEST_CLUSTER_COST})
endfunction()

include(GoogleTest)
