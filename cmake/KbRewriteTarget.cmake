# kb_rewrite_target(<target> [LOCK <file>] [OUTPUT_DIR <dir>] [UPDATE_LOCK])
#
# At build time, the target's C++ sources are rewritten by kb-rewrite (fused
# CUDA kernels for the memory-bound chains after GEMMs and convolutions;
# docs/cxx.md) into OUTPUT_DIR (default: <binary dir>/kb_rewrite/<target>),
# and the target builds the rewritten copies plus the generated
# kb_kernels.cu against libtorch as before. With LOCK, the rewrite must
# reproduce the lock file's kernels (hermetic builds; no model is ever
# called); UPDATE_LOCK refreshes the lock instead. The project must enable
# the CUDA language. The sources themselves are never modified.
function(kb_rewrite_target target)
  cmake_parse_arguments(KB "UPDATE_LOCK" "LOCK;OUTPUT_DIR" "" ${ARGN})
  if(NOT KB_REWRITE_EXECUTABLE)
    message(FATAL_ERROR "kb_rewrite_target(${target}): KB_REWRITE_EXECUTABLE is "
                        "not set (find_package(KbRewrite) sets it)")
  endif()
  if(NOT KB_OUTPUT_DIR)
    set(KB_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/kb_rewrite/${target}")
  endif()
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  set(inputs)
  set(outputs)
  set(kept)
  set(dirs)
  foreach(src IN LISTS sources)
    get_filename_component(abs "${src}" ABSOLUTE BASE_DIR "${source_dir}")
    if(abs MATCHES "\\.(cpp|cc|cxx)$")
      get_filename_component(name "${abs}" NAME)
      get_filename_component(dir "${abs}" DIRECTORY)
      list(APPEND inputs "${abs}")
      list(APPEND outputs "${KB_OUTPUT_DIR}/${name}")
      list(APPEND dirs "${dir}")
    else()
      list(APPEND kept "${src}")
    endif()
  endforeach()
  if(NOT inputs)
    message(FATAL_ERROR "kb_rewrite_target(${target}): no C++ sources")
  endif()
  list(REMOVE_DUPLICATES dirs)
  set(lock_args)
  set(lock_deps)
  if(KB_LOCK)
    get_filename_component(lock "${KB_LOCK}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    set(lock_args --lock "${lock}")
    if(KB_UPDATE_LOCK)
      list(APPEND lock_args --update-lock)
    else()
      set(lock_deps "${lock}")
    endif()
  endif()
  # The compiler flags the target's sources see (transitive include
  # directories and definitions of what it links, libtorch's included).
  set(incs "$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>")
  set(defs "$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>")
  add_custom_command(
    OUTPUT ${outputs} "${KB_OUTPUT_DIR}/kb_kernels.h" "${KB_OUTPUT_DIR}/kb_kernels.cu"
    COMMAND "${KB_REWRITE_EXECUTABLE}" rewrite ${inputs} -o "${KB_OUTPUT_DIR}" ${lock_args}
            -- -std=c++17 "$<$<BOOL:${incs}>:-I$<JOIN:${incs},;-I>>"
            "$<$<BOOL:${defs}>:-D$<JOIN:${defs},;-D>>"
    DEPENDS ${inputs} ${lock_deps} "${KB_REWRITE_EXECUTABLE}"
    COMMENT "kb-rewrite: fusing the epilogues of ${target}"
    COMMAND_EXPAND_LISTS VERBATIM)
  add_custom_target(${target}_kb_rewrite DEPENDS ${outputs}
                    "${KB_OUTPUT_DIR}/kb_kernels.cu")
  set_property(TARGET ${target} PROPERTY SOURCES ${kept} ${outputs}
               "${KB_OUTPUT_DIR}/kb_kernels.cu")
  add_dependencies(${target} ${target}_kb_rewrite)
  # The rewritten copies include "kb_kernels.h" and the originals' own
  # relative headers.
  target_include_directories(${target} PRIVATE "${KB_OUTPUT_DIR}" ${dirs})
endfunction()
