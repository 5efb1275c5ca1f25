# Warnings on for every kiln target; the build is expected to stay warning-free.
function(kiln_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
    -Wcast-align -Wunused -Woverloaded-virtual -Wformat=2
    -Wimplicit-fallthrough)
endfunction()
