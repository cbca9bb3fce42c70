# cmake -DOUT=file.inc -DFILES="a|b" -P EmbedFiles.cmake
# Writes `{"name", R"kbembed(...)kbembed"},` per file, so the packed
# kb-rewrite binary carries the runtime it copies into rewritten models.
set(content "")
string(REPLACE "|" ";" FILES "${FILES}")
foreach(f ${FILES})
  file(READ "${f}" text)
  string(FIND "${text}" ")kbembed\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${f} contains the raw-string delimiter")
  endif()
  get_filename_component(name "${f}" NAME)
  string(APPEND content "{\"${name}\", R\"kbembed(${text})kbembed\"},\n")
endforeach()
file(WRITE "${OUT}.tmp" "${content}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
