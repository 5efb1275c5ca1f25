# The asan preset: AddressSanitizer + UndefinedBehaviorSanitizer on everything we build,
# plugins included, so a bad access across the plugin boundary is caught too.
if(KILN_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
