/*
 * st_dtype.h - the safetensors dtypes and their widths in bits, one table for the header
 * reader (safetensors.c) and the tensor rows (st_layout.c).
 */
#ifndef FG_ST_DTYPE_H
#define FG_ST_DTYPE_H

#define FG_ST_DTYPE_MAP(X) \
    X(F64, 64) X(F32, 32) X(F16, 16) X(BF16, 16) X(F8_E4M3, 8) X(F8_E5M2, 8) X(F8_E8M0, 8) \
    X(F6_E2M3, 6) X(F6_E3M2, 6) X(F4, 4) X(I64, 64) X(I32, 32) X(I16, 16) X(I8, 8) X(U64, 64) \
    X(U32, 32) X(U16, 16) X(U8, 8) X(BOOL, 8) X(C64, 64)

enum fg_st_dtype {
#define FG__ST_DT_ENUM(name, bits) FG_ST_##name,
    FG_ST_DTYPE_MAP(FG__ST_DT_ENUM)
#undef FG__ST_DT_ENUM
    FG_ST_DTYPE_COUNT
};

#endif
