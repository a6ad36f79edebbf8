# Applies TAGFLOW_SANITIZE ("address;undefined" or "thread") to every target in the tree.
if(TAGFLOW_SANITIZE)
  list(JOIN TAGFLOW_SANITIZE "," _tagflow_sanitizers)
  add_compile_options(-fsanitize=${_tagflow_sanitizers} -fno-omit-frame-pointer)
  # A report names file and line from the line tables: add them (-g1) unless the build type's
  # flags choose a -g level already. A -g here came after the fuzz preset's -g1 and made its
  # compiles full debug info, a quarter slower (36 s against 47 s for the largest).
  string(TOUPPER "${CMAKE_BUILD_TYPE}" _tagflow_build_type)
  if(NOT " ${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${_tagflow_build_type}}" MATCHES " -g")
    add_compile_options(-g1)
  endif()
  add_link_options(-fsanitize=${_tagflow_sanitizers})
  # GCC's -Wmaybe-uninitialized reads the sanitizers' instrumentation as paths that skip an
  # initialization: with address;undefined at -O2, GCC 12 stopped the build in libstdc++'s
  # std::regex (nodes/cluster) on such a warning. The release build keeps the warning.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-Wno-maybe-uninitialized)
  endif()
  if("undefined" IN_LIST TAGFLOW_SANITIZE)
    add_compile_options(-fno-sanitize-recover=undefined)
  endif()
endif()
