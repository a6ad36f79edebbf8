# Applies TAGFLOW_SANITIZE ("address;undefined" or "thread") to every target in the tree.
if(TAGFLOW_SANITIZE)
  list(JOIN TAGFLOW_SANITIZE "," _tagflow_sanitizers)
  add_compile_options(-fsanitize=${_tagflow_sanitizers} -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=${_tagflow_sanitizers})
  if("undefined" IN_LIST TAGFLOW_SANITIZE)
    add_compile_options(-fno-sanitize-recover=undefined)
  endif()
endif()
