# Locate LLVM/MLIR 22 (Debian: /usr/lib/llvm-22) and pull in the MLIR CMake
# helpers (mlir_tablegen, add_mlir_dialect, ...).
if(NOT MLIR_DIR AND EXISTS /usr/lib/llvm-22/lib/cmake/mlir)
  set(MLIR_DIR /usr/lib/llvm-22/lib/cmake/mlir)
endif()
# Link against the shared libMLIR / libLLVM by default: much faster links on
# small machines. KB_STATIC_LLVM (issue 5) links the static archives so the
# binary runs on hosts without LLVM (scripts/pack-kb-rewrite).
option(KB_STATIC_LLVM "Link LLVM/MLIR statically" OFF)
if(KB_STATIC_LLVM AND NOT TARGET zstd::libzstd_shared)
  # Debian's LLVMExports names this target without shipping its config;
  # the static archive, where installed, keeps the packed binary free of a
  # libzstd soname (libzstd.so.1 is on every Debian and Ubuntu base system).
  find_library(KB_ZSTD_LIB NAMES libzstd.a zstd libzstd.so.1 REQUIRED)
  add_library(zstd::libzstd_shared UNKNOWN IMPORTED)
  set_target_properties(zstd::libzstd_shared PROPERTIES
    IMPORTED_LOCATION "${KB_ZSTD_LIB}")
endif()
find_package(MLIR REQUIRED CONFIG)
if(MLIR_VERSION VERSION_LESS 22)
  message(FATAL_ERROR "kb-rewrite needs MLIR 22, found ${MLIR_VERSION}")
endif()
message(STATUS "Using MLIR ${MLIR_VERSION} from ${MLIR_DIR}")
# Clang libTooling for the libtorch C++ frontend and the plugin (issue 7).
find_package(Clang REQUIRED CONFIG HINTS ${LLVM_DIR}/../clang /usr/lib/llvm-22/lib/cmake/clang)
message(STATUS "Using LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")

list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
set(LLVM_RUNTIME_OUTPUT_INTDIR ${CMAKE_BINARY_DIR}/bin)
set(LLVM_LIBRARY_OUTPUT_INTDIR ${CMAKE_BINARY_DIR}/lib)
set(MLIR_BINARY_DIR ${CMAKE_BINARY_DIR})
include(TableGen)
include(AddLLVM)
include(AddMLIR)
include(HandleLLVMOptions)

include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
include_directories(${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include)
# LLVM_DEFINITIONS is one space-separated string; split it into flags.
separate_arguments(KB_LLVM_DEFINITIONS NATIVE_COMMAND "${LLVM_DEFINITIONS}")
add_definitions(${KB_LLVM_DEFINITIONS})

# Debian builds LLVM without exceptions but with RTTI; match it.
if(NOT LLVM_ENABLE_RTTI)
  add_compile_options(-fno-rtti)
endif()

if(KB_STATIC_LLVM)
  # Debian's MLIR archives name the LLVM dylib in their link interface;
  # point them at the static LLVM components instead, and keep unused
  # sonames (z3 from LLVMSupport's interface) off the binary.
  foreach(target ${MLIR_EXPORTED_TARGETS})
    if(TARGET ${target})
      get_target_property(libs ${target} INTERFACE_LINK_LIBRARIES)
      if(libs)
        list(TRANSFORM libs REPLACE "^LLVM$"
          "LLVMSupport;LLVMRemarks;LLVMBitstreamReader;LLVMTargetParser;LLVMDemangle")
        set_target_properties(${target} PROPERTIES INTERFACE_LINK_LIBRARIES "${libs}")
      endif()
    endif()
  endforeach()
  add_link_options(-Wl,--as-needed -static-libstdc++ -static-libgcc)
  set(KB_MLIR_LIBS MLIRIR MLIRParser MLIRPass MLIRTransforms MLIRFuncDialect
      MLIRSupport MLIROptLib MLIRInferTypeOpInterface MLIRSideEffectInterfaces)
  set(KB_LLVM_LIBS LLVMSupport)
else()
  set(KB_MLIR_LIBS MLIR)
  set(KB_LLVM_LIBS LLVM)
endif()

find_program(KB_LIT lit PATHS ${LLVM_TOOLS_BINARY_DIR} /usr/lib/llvm-22/bin NO_DEFAULT_PATH)
find_program(KB_FILECHECK FileCheck PATHS ${LLVM_TOOLS_BINARY_DIR} /usr/lib/llvm-22/bin NO_DEFAULT_PATH)
