/* numformat.h: the C view of a numeric record, sw_numeric_format: the
 * parameters of a format and everything they imply, as plain C data.
 *
 * It holds no Python object, so code that converts values (the codec
 * engine, codec/) reads formats through it without reaching into
 * descriptors or the interpreter; numinfo.h makes and attaches records.
 */
#ifndef SW_NUMFORMAT_H
#define SW_NUMFORMAT_H

typedef enum {
    SW_NUM_FLOAT = 0,       /* binary floating point */
    SW_NUM_COMPLEX,         /* two components of a binary floating point */
    SW_NUM_INT,             /* two's complement (signed) or plain binary */
    SW_NUM_BOOL,            /* 0 or 1 */
    SW_NUM_KIND_COUNT
} sw_num_kind;

typedef enum {
    SW_NAN_IEEE = 0,        /* exponent all ones, mantissa non-zero; the
                               all-ones exponent with a zero mantissa is
                               an infinity */
    SW_NAN_ALL_ONES,        /* exponent and mantissa all ones only */
    SW_NAN_NEGATIVE_ZERO,   /* the sign bit alone (fnuz: no -0) */
    SW_NAN_NONE,            /* no NaN (and no infinity) */
    SW_NAN_COUNT
} sw_nan_encoding;

/* Everything a format's parameters imply, computed once when the record
 * is made.  For a complex format the float fields describe each of the
 * two components, and `bits` is the whole value. */
typedef struct {
    int kind;               /* sw_num_kind */
    int bits;               /* width of one value */
    int is_signed;
    /* Floating-point and complex formats only (0 otherwise). */
    int exponent_bits;
    int mantissa_bits;      /* stored fraction bits, without the implicit 1 */
    int bias;
    int nan_encoding;       /* sw_nan_encoding (SW_NAN_NONE for integers) */
    int has_inf;
    int has_nan;
    int has_zero;           /* 0 only for an unsigned format without a
                               mantissa (e8m0fnu) */
    int has_subnormals;     /* exponent field 0 holds values below the
                               smallest normal */
    int max_exponent;       /* floor(log2(max_finite)): below min_exponent
                               where every finite value is subnormal */
    int min_exponent;       /* the smallest normal's unbiased exponent */
    double max_finite;      /* exact in a double */
    double smallest_normal;
    double smallest_subnormal;  /* smallest positive value */
    double eps;             /* 1.0 to the next larger value (numinfo.c) */
} sw_numeric_format;

#endif /* SW_NUMFORMAT_H */
