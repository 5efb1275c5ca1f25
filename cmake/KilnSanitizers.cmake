# The asan preset: AddressSanitizer + UndefinedBehaviorSanitizer on everything we build,
# plugins included, so a bad access across the plugin boundary is caught too.
if(KILN_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

# Code the sanitizer suite spends most of its time in (the reference interpreter, the KIR
# interpreter plugin) is compiled at -O1 there, as AddressSanitizer's documentation advises
# for speed: unoptimised, the interpreter suite alone ran 25 minutes. The rest stays
# unoptimised, which builds about twice as fast.
# Call it where the sources are added to their target (source properties are per directory).
function(kiln_sanitized_hot_path)
  if(KILN_SANITIZE)
    set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS -O1)
  endif()
endfunction()
