# The asan preset: AddressSanitizer + UndefinedBehaviorSanitizer on everything we build,
# plugins included, so a bad access across the plugin boundary is caught too. At -O1, as
# AddressSanitizer's own documentation advises: unoptimised, the reference interpreter and
# the KIR interpreter plugin ran the sanitizer suite several times slower, past CI's time.
if(KILN_SANITIZE)
  add_compile_options(-O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
