# Warning flags shared by every taihu target: taihu_set_warnings(<target>).
function(taihu_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
    $<$<AND:$<COMPILE_LANGUAGE:CXX,C>,$<BOOL:${TAIHU_WERROR}>>:-Werror>
    $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${TAIHU_WERROR}>>:-Werror=all-warnings>)
endfunction()
