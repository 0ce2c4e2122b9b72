// Hopper warpgroup MMA wrappers: D[64xN] += A[64x16] * B[16xN], f32 accumulators, both operands
// read from shared memory through matrix descriptors. TB = 1 reads B N-major (row-major [K,N]
// tiles, transposed by the instruction), TB = 0 reads B K-major (the [N,K] weight layout).
// WgmmaT<T, N> (N = 16, 32, 64) also takes TA: A read M-major. Inline PTX has no loops: the
// accumulator lists are written out, one macro per N, instantiated for bf16 and f16.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace hopper {

template <typename T, int N>
struct Wgmma;

// D[64x128] += A[64x16] * B[16x128]; only the PTX type suffix differs between the types.
#define WGMMA_M64N128K16(CTYPE, PTYPE) \
template <> \
struct Wgmma<CTYPE, 128> { \
    template <int TB> \
    __device__ __forceinline__ static void run(float (&d)[64], uint64_t desc_a, uint64_t desc_b) { \
        asm volatile( \
            "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n" \
            "wgmma.mma_async.sync.aligned.m64n128k16.f32." PTYPE "." PTYPE " " \
            "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1, 0, %66;\n}\n" \
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
              "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
              "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
              "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
              "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
              "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
              "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]) \
            : "l"(desc_a), "l"(desc_b), "n"(TB)); \
    } \
};

WGMMA_M64N128K16(__nv_bfloat16, "bf16")
WGMMA_M64N128K16(__half, "f16")
#undef WGMMA_M64N128K16

// D[64x192] += A[64x16] * B[16x192]; only the PTX type suffix differs between the types.
#define WGMMA_M64N192K16(CTYPE, PTYPE) \
template <> \
struct Wgmma<CTYPE, 192> { \
    template <int TB> \
    __device__ __forceinline__ static void run(float (&d)[96], uint64_t desc_a, uint64_t desc_b) { \
        asm volatile( \
            "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n" \
            "wgmma.mma_async.sync.aligned.m64n192k16.f32." PTYPE "." PTYPE " " \
            "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95}, %96, %97, p, 1, 1, 0, %98;\n}\n" \
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
              "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
              "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
              "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
              "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
              "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
              "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
              "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
              "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
              "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
              "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]) \
            : "l"(desc_a), "l"(desc_b), "n"(TB)); \
    } \
};

WGMMA_M64N192K16(__nv_bfloat16, "bf16")
WGMMA_M64N192K16(__half, "f16")
#undef WGMMA_M64N192K16

// D[64x256] += A[64x16] * B[16x256]; only the PTX type suffix differs between the types.
#define WGMMA_M64N256K16(CTYPE, PTYPE) \
template <> \
struct Wgmma<CTYPE, 256> { \
    template <int TB> \
    __device__ __forceinline__ static void run(float (&d)[128], uint64_t desc_a, uint64_t desc_b) { \
        asm volatile( \
            "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n" \
            "wgmma.mma_async.sync.aligned.m64n256k16.f32." PTYPE "." PTYPE " " \
            "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, %128, %129, p, 1, 1, 0, %130;\n}\n" \
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
              "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
              "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
              "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
              "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
              "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
              "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
              "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
              "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
              "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
              "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
              "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
              "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
              "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
              "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127]) \
            : "l"(desc_a), "l"(desc_b), "n"(TB)); \
    } \
};

WGMMA_M64N256K16(__nv_bfloat16, "bf16")
WGMMA_M64N256K16(__half, "f16")
#undef WGMMA_M64N256K16

// Narrow N for the operand-swapped kernels (64 weight rows x 16, 32 or 64 tokens).
template <typename T, int N>
struct WgmmaT;

// D[64x16] += A[64x16] * B[16x16] with either operand transposed (TA: A read M-major).
#define WGMMA_M64N16K16(CTYPE, PTYPE) \
template <> \
struct WgmmaT<CTYPE, 16> { \
    template <int TA, int TB> \
    __device__ __forceinline__ static void run(float (&d)[8], uint64_t desc_a, uint64_t desc_b) { \
        asm volatile( \
            "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n" \
            "wgmma.mma_async.sync.aligned.m64n16k16.f32." PTYPE "." PTYPE " " \
            "{%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1, %10, %11;\n}\n" \
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]) \
            : "l"(desc_a), "l"(desc_b), "n"(TA), "n"(TB)); \
    } \
};

WGMMA_M64N16K16(__nv_bfloat16, "bf16")
WGMMA_M64N16K16(__half, "f16")
#undef WGMMA_M64N16K16

// D[64x32] += A[64x16] * B[16x32] with either operand transposed (TA: A read M-major).
#define WGMMA_M64N32K16(CTYPE, PTYPE) \
template <> \
struct WgmmaT<CTYPE, 32> { \
    template <int TA, int TB> \
    __device__ __forceinline__ static void run(float (&d)[16], uint64_t desc_a, uint64_t desc_b) { \
        asm volatile( \
            "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n" \
            "wgmma.mma_async.sync.aligned.m64n32k16.f32." PTYPE "." PTYPE " " \
            "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, 1, %18, %19;\n}\n" \
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]) \
            : "l"(desc_a), "l"(desc_b), "n"(TA), "n"(TB)); \
    } \
};

WGMMA_M64N32K16(__nv_bfloat16, "bf16")
WGMMA_M64N32K16(__half, "f16")
#undef WGMMA_M64N32K16

// D[64x64] += A[64x16] * B[16x64] with either operand transposed (TA: A read M-major).
#define WGMMA_M64N64K16(CTYPE, PTYPE) \
template <> \
struct WgmmaT<CTYPE, 64> { \
    template <int TA, int TB> \
    __device__ __forceinline__ static void run(float (&d)[32], uint64_t desc_a, uint64_t desc_b) { \
        asm volatile( \
            "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n" \
            "wgmma.mma_async.sync.aligned.m64n64k16.f32." PTYPE "." PTYPE " " \
            "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, %34, %35;\n}\n" \
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
              "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
              "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]) \
            : "l"(desc_a), "l"(desc_b), "n"(TA), "n"(TB)); \
    } \
};

WGMMA_M64N64K16(__nv_bfloat16, "bf16")
WGMMA_M64N64K16(__half, "f16")
#undef WGMMA_M64N64K16

}  // namespace hopper
