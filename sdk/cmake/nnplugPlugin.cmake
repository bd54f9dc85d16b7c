# nnp_add_plugin(<target> <sources>...): a plugin (a backend or layer types)
# as a MODULE library that exports only nnp_plugin_entry (DESIGN.md §2) and
# links nothing of nnplug's but its headers: the core hands a plugin
# everything through the nnp_api table. The same function serves the source
# tree and installed packages (find_package(nnplug CONFIG)).
function(nnp_add_plugin target)
  set(map "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/plugin.map")
  add_library(${target} MODULE ${ARGN})
  target_link_libraries(${target} PRIVATE nnplug::sdk)
  # A plugin gets the table from its init (nnp::set_api), never from libnnp.
  target_compile_definitions(${target} PRIVATE NNP_NO_GET_API)
  target_link_options(${target} PRIVATE "-Wl,--version-script=${map}")
  # Every symbol resolved at link time, except under clang's sanitizers,
  # whose runtime lives in the executable.
  if(NOT NNP_SANITIZE)
    target_link_options(${target} PRIVATE -Wl,--no-undefined)
  endif()
  set_target_properties(${target} PROPERTIES PREFIX "lib" LINK_DEPENDS "${map}")
  if(DEFINED NNP_PLUGIN_DIR)  # nnplug's own tree: beside libnnp.so, where the core looks
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${NNP_PLUGIN_DIR})
    target_compile_definitions(${target} PRIVATE NNP_PLUGIN_VERSION="${PROJECT_VERSION}")
  endif()
endfunction()
