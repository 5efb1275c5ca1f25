; Inputs of gpu/narrow_integers.test: 64-bit integer operations, some of whose values fit
; 32 bits or whose users read only the low 32 bits.
target triple = "nvptx64-nvidia-cuda"

; A 32x32 -> 64 product (Philox's): both factors masked to 32 bits.
define i64 @product(i64 %a, i64 %b) {
  %x = and i64 %a, 4294967295
  %y = and i64 %b, 4294967295
  %p = mul i64 %x, %y
  ret i64 %p
}

; A sum whose only user keeps its low 32 bits, and does so with nsw: the narrowed sum's upper
; bits are zero where they were a sign, so the flag must go (x = 0 gives -1 before, and a
; trunc nsw of 0xFFFFFFFF would be poison).
define i32 @sum_kept_low(i64 %x) {
  %s = add i64 %x, -1
  %t = trunc nsw i64 %s to i32
  ret i32 %t
}

; The same through a select, whose user is a trunc nsw too.
define i32 @through_select(i64 %x, i64 %y, i1 %c) {
  %s = add i64 %x, -1
  %m = select i1 %c, i64 %s, i64 %y
  %t = trunc nsw i64 %m to i32
  ret i32 %t
}

; A mask to 32 bits of a value that already fits goes; a xor of two masked words is 32-bit.
define i64 @words(i64 %a, i64 %b) {
  %x = and i64 %a, 65535
  %y = and i64 %b, 4294967295
  %z = xor i64 %x, %y
  %w = and i64 %z, 4294967295
  %h = lshr i64 %w, 16
  ret i64 %h
}

; Values of 64 bits stay 64-bit.
define i64 @wide(i64 %a, i64 %b) {
  %p = mul i64 %a, %b
  %s = add i64 %p, %a
  ret i64 %s
}
