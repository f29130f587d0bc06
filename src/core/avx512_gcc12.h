// Included by the files that use AVX-512 intrinsics: GCC 12 warns "'__Y' may be used
// uninitialized" inside its own AVX-512 headers (the _mm512_undefined_* operand of unmasked
// intrinsics, masked loads, gathers and shuffles; GCC bug 105593, fixed in 13). The pragmas hold
// for the rest of the including file.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
