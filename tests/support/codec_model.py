"""Slow, obviously-correct models of the codecs, written from the formats'
definitions with exact arithmetic (fractions.Fraction): the expected
values of tests/representations/test_codecs_*.py. Nothing here calls the
code under test.

- FloatModel: every finite value of a floating-point format, from its
  numeric record's fields; encoding picks the neighbours of a value and
  applies a rounding rule, the overflow and the NaN options as the
  documentation words them.
- Float32Model: float32 as a scale format (too many values to list).
- mx_scale_exponent / quantize_mx_block / whole_scale /
  quantize_float_scaled / quantize_nvfp4: block-scaled formats from the OCP
  MX v1.0 and NVIDIA NVFP4 formulas; block_value: a dequantized element.
"""

from __future__ import annotations

import bisect
import math
import struct
from fractions import Fraction


class FloatModel:
    """A floating-point format from its record's parameters."""

    def __init__(self, record):
        self.record = record
        e, m, bias = record.exponent_bits, record.mantissa_bits, record.bias
        self.e, self.m, self.bias = e, m, bias
        self.signed = record.signed
        self.bits = record.bits
        self.nan_encoding = record.nan_encoding
        self.sign_bit = 1 << (self.bits - 1) if self.signed else 0
        # every non-negative finite value -> its code (magnitude bits)
        self.values: dict[Fraction, int] = {}
        has_zero = self.signed or m > 0
        for mag in range(1 << (e + m)):
            field, frac = mag >> m, mag & ((1 << m) - 1)
            if self._special(mag):
                continue
            if not has_zero:                    # e8m0fnu: field 0 is 2**-bias
                value = Fraction(2) ** (field - bias) * (1 + Fraction(frac, 1 << m))
            elif field == 0:
                value = Fraction(2) ** (1 - bias) * Fraction(frac, 1 << m)
            else:
                value = Fraction(2) ** (field - bias) * (1 + Fraction(frac, 1 << m))
            self.values[value] = mag
        self.sorted = sorted(self.values)
        self.max = self.sorted[-1]
        self.has_inf = record.has_inf
        self.has_nan = record.has_nan
        top = (1 << e) - 1
        self.inf_code = top << m if self.has_inf else None
        if self.nan_encoding == "ieee":
            self.nan_code = (top << m) | (1 << (m - 1))
        elif self.nan_encoding == "all_ones":
            self.nan_code = (1 << (e + m)) - 1
        elif self.nan_encoding == "negative_zero":
            self.nan_code = self.sign_bit
        else:
            self.nan_code = None

    def _special(self, mag: int) -> bool:
        e, m = self.e, self.m
        top = (1 << e) - 1
        if self.nan_encoding == "ieee":
            return mag >> m == top
        if self.nan_encoding == "all_ones":
            return mag == (1 << (e + m)) - 1
        return False

    def nan(self, negative: bool) -> int:
        code = self.nan_code
        return code | (self.sign_bit if negative and self.nan_encoding != "negative_zero"
                       else 0)

    def special(self, negative: bool) -> int:
        """Infinity of that sign, else NaN."""
        if self.has_inf:
            return self.inf_code | (self.sign_bit if negative else 0)
        return self.nan(negative)

    def overflow(self, negative: bool, overflow: str, rounding: str = "nearest_even") -> int:
        """A value beyond the largest finite: saturated, or (IEEE 754 7.4)
        the special value in the rounding's own direction only."""
        largest = self.values[self.max] | (self.sign_bit if negative else 0)
        if overflow != "special":
            return largest
        if rounding == "toward_zero":
            return largest
        if rounding == "up":
            return largest if negative else self.special(False)
        if rounding == "down":
            return self.special(True) if negative else largest
        return self.special(negative)

    def encode(self, x: float, rounding: str = "nearest_even",
               overflow: str | None = None, nan: str | int | None = None) -> int:
        """The code of the float x. Overflow: rounding with an unbounded
        exponent range gives a magnitude above the largest finite value."""
        if overflow is None:
            overflow = "special" if (self.has_inf or self.has_nan) else "saturate"
        negative = math.copysign(1.0, x) < 0
        if math.isnan(x):
            if isinstance(nan, int):
                return nan
            if self.has_nan:
                return self.nan(negative)
            return 0 if negative else self.sign_bit
        sign = self.sign_bit if negative else 0
        if negative and not self.signed:
            return self.nan(False) if self.has_nan else 0
        if math.isinf(x):
            # an infinity is exact, not an overflow: saturated, else the
            # format's own, else NaN, whatever the rounding
            if overflow == "saturate":
                return self.values[self.max] | sign
            return self.special(negative)
        a = Fraction(abs(x))
        if a == 0:
            if 0 not in self.values:
                return self.nan(False) if self.has_nan else 0
            return sign if self.nan_encoding != "negative_zero" else 0
        # the neighbours among the finite values, extended by one step of
        # the largest binade beyond the maximum (unbounded exponent range)
        grid = self.sorted
        if a > self.max:
            # rounded with an unbounded exponent range: the next value
            # beyond the maximum is one step of the top binade's spacing up
            ulp_top = Fraction(2) ** (floor_log2(self.max) - self.m)
            toward = (rounding == "toward_zero" or (rounding == "down" and not negative)
                      or (rounding == "up" and negative))
            if toward:
                stays = a < self.max + ulp_top
            elif rounding in ("up", "down"):
                stays = False
            else:
                mid = self.max + ulp_top / 2
                stays = a < mid or (a == mid and rounding == "nearest_even"
                                    and self.values[self.max] % 2 == 0)
            return (self.values[self.max] | sign if stays
                    else self.overflow(negative, overflow, rounding))
        i = bisect.bisect_left(grid, a)
        if grid[i] == a:
            return self.values[a] | sign
        lo = grid[i - 1] if i > 0 else None
        hi = grid[i]
        up = self._round_up(a, lo, hi, negative, rounding, self.values)
        chosen = hi if up else lo
        if chosen is None:
            return 0                                # nowhere below: code 0
        if chosen > self.max:
            return self.overflow(negative, overflow, rounding)
        mag = self.values[chosen]
        if mag == 0 and self.nan_encoding == "negative_zero":
            return 0
        return mag | sign

    @staticmethod
    def _round_up(a, lo, hi, negative, rounding, codes) -> bool:
        if lo is None:
            return True
        if rounding == "toward_zero":
            return False
        if rounding == "up":
            return not negative
        if rounding == "down":
            return negative
        mid = (lo + hi) / 2
        if a != mid:
            return a > mid
        if rounding == "nearest_away":
            return True
        # ties to even: the neighbour whose code is even
        return codes[hi] % 2 == 0

    def decode(self, code: int) -> Fraction | None:
        """The value of a code (None for NaN, +-inf as floats)."""
        negative = bool(code & self.sign_bit)
        mag = code & ~self.sign_bit & ((1 << self.bits) - 1)
        if self.nan_code is not None and (code == self.nan(negative) or (
                self.nan_encoding == "ieee" and mag >> self.m == (1 << self.e) - 1
                and mag & ((1 << self.m) - 1))):
            return None
        if not hasattr(self, "_by_code"):
            self._by_code = {m: value for value, m in self.values.items()}
        value = self._by_code.get(mag)
        if value is None:
            return None
        return -value if negative else value


class Float32Model:
    """float32 as a scale format: what quantize_float_scaled asks of a
    FloatModel, from the float32 bits themselves."""

    bits, m, bias, sign_bit, has_nan = 32, 23, 127, 1 << 31, True
    max = Fraction(struct.unpack("<f", b"\xff\xff\x7f\x7f")[0])

    def nan(self, negative: bool) -> int:
        return 0x7FC00000 | (self.sign_bit if negative else 0)

    def encode(self, x: float, rounding: str = "nearest_even",
               overflow: str | None = None, nan=None) -> int:
        """The bits of x, a finite float32 value (the recipe's scales are)."""
        assert rounding == "nearest_even" and f32(x) == x and math.isfinite(x), x
        return struct.unpack("<I", struct.pack("<f", x))[0]

    def decode(self, code: int) -> Fraction | None:
        x = struct.unpack("<f", struct.pack("<I", code))[0]
        return Fraction(x) if math.isfinite(x) else None


def f32(x: float) -> float:
    """x rounded to float32 (nearest-even), as a float; beyond float32's
    largest value, an infinity (as IEEE arithmetic rounds)."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def floor_log2(a: Fraction) -> int:
    """floor(log2(a)) for a > 0, exactly."""
    k = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** k > a:
        k -= 1
    elif Fraction(2) ** (k + 1) <= a:
        k += 1
    return k


def mx_scale_exponent(amax: Fraction, rule: str, emax_elem: int, max_elem: Fraction,
                      mbits_elem: int) -> int:
    """The shared exponent of a block whose largest magnitude is amax (> 0),
    before clamping to the scale's range: the OCP MX v1.0 formula (floor)
    and its variants."""
    k = floor_log2(amax)
    if rule == "floor":
        return k - emax_elem
    if rule == "ceil":
        return (k if amax == Fraction(2) ** k else k + 1) - emax_elem
    if rule == "rceil":
        # the smallest power of two X with amax / X <= max_elem
        s = k - emax_elem
        return s if amax <= max_elem * Fraction(2) ** s else s + 1
    if rule == "even":
        # amax rounded to the element's mantissa width (half up), floor log2
        q = Fraction(2) ** (k - mbits_elem)
        rounded = (amax / q + Fraction(1, 2)).__floor__() * q
        return floor_log2(rounded) - emax_elem
    raise ValueError(rule)


def _int_element_code(v: Fraction, bits: int) -> int:
    """An OCP MX integer element (bits - 2 fraction bits), nearest-even,
    saturating symmetrically."""
    scaled = v * 2 ** (bits - 2)
    n = scaled.__floor__()
    rest = scaled - n
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2):
        n += 1
    top = 2 ** (bits - 1) - 1
    n = max(-top, min(top, n))
    return n & ((1 << bits) - 1)


def quantize_mx_block(xs, elem, rule: str, scale_emin: int = -127, scale_emax: int = 127,
                      scale_bias: int = 127):
    """(scale code, element codes) of one block by the OCP MX v1.0
    formula: X = 2**clamp(shared exponent), P_i = saturate(round(V_i / X)).
    `elem` is a FloatModel, or an int (the bits of an integer element). A
    block holding an infinity or a NaN has the NaN scale (0xFF)."""
    if any(math.isnan(x) or math.isinf(x) for x in xs):
        nan = elem.nan(False) if isinstance(elem, FloatModel) and elem.has_nan else 0
        return 0xFF, [nan] * len(xs)
    amax = max(Fraction(abs(x)) for x in xs)
    if isinstance(elem, int):
        emax, top, mbits = 0, Fraction(2 ** (elem - 1) - 1, 2 ** (elem - 2)), elem - 2
    else:
        emax, top, mbits = floor_log2(elem.max), elem.max, elem.m
    se = scale_emin if amax == 0 else mx_scale_exponent(amax, rule, emax, top, mbits)
    se = max(scale_emin, min(scale_emax, se))
    codes = []
    for x in xs:
        v = Fraction(x) / Fraction(2) ** se
        if isinstance(elem, int):
            codes.append(_int_element_code(v, elem))
        else:
            value = float(v) if v != 0 else math.copysign(0.0, x)
            codes.append(elem.encode(value, "nearest_even", "saturate"))
    return se + scale_bias, codes


FLOAT32_MAX = Fraction(struct.unpack("<f", b"\xff\xff\x7f\x7f")[0])


def whole_scale(g: float, scale) -> tuple[int, float]:
    """(code, value) of the whole-tensor scale g (a positive float32) as a
    Whole level in `scale` (a FloatModel or a Float32Model) stores it: the
    nearest of the format's positive values that float32 holds, ties to the
    even code, g below the smallest taking the smallest and above the
    largest the largest."""
    if isinstance(scale, Float32Model):
        return scale.encode(g), g              # every positive float32
    held = [v for v in scale.sorted if 0 < v <= FLOAT32_MAX]
    a = Fraction(g)
    i = bisect.bisect_left(held, a)
    if i == len(held):
        value = held[-1]
    elif held[i] == a or i == 0:
        value = held[i]
    else:
        lo, hi = held[i - 1], held[i]
        up = FloatModel._round_up(a, lo, hi, False, "nearest_even", scale.values)
        value = hi if up else lo
    return scale.values[value], float(value)


def quantize_float_scaled(rows, elem: FloatModel, scale, block: int, whole=None):
    """(whole-tensor scale, block scale codes, element codes) of float32
    rows (lists of floats) by NVIDIA's recipe as torchao computes it, every
    step one float32 operation, for any float element and scale formats
    (`scale` a FloatModel or a Float32Model) and any block: with a Whole
    level in the format `whole` (a model as `scale`; None: no Whole level,
    g = 1), g = whole_scale(amax / (emax * smax)) (1 when that is not
    positive), the value the level stores, no smaller than 2**-126 divided
    by the smallest normal scale; per block s = scale(clamp(amax_b
    / emax / g, the smallest normal scale, smax)); elements
    elem(saturate(x * ((1 / g) / s))). A block holding an infinity or a NaN
    gets the NaN scale and the element's NaN (0 without one)."""
    emax, smax = float(elem.max), float(scale.max)
    lo = 2.0 ** (1 - scale.bias)
    finite = [abs(x) for row in rows for x in row if math.isfinite(x)]
    t = max(finite, default=0.0)
    g = f32(t / f32(emax * smax)) if whole is not None and t > 0 else 1.0
    if not g > 0:
        g = 1.0
    if whole is not None:
        g = whole_scale(g, whole)[1]
        # no smaller than 2**-126 / lo, so that (1 / g) / lo is a float32:
        # the format's first value from there up
        g_min = 2.0 ** -126 / lo
        if g < g_min:
            if isinstance(whole, Float32Model):
                g = g_min
            else:
                g = float(min(v for v in whole.sorted if v >= Fraction(g_min)))
    nan_elem = elem.nan(False) if elem.has_nan else 0
    scales, elements = [], []
    for row in rows:
        srow, erow = [], []
        for start in range(0, len(row), block):
            xs = row[start:start + block]
            if any(not math.isfinite(x) for x in xs):
                srow.append(scale.nan(False))
                erow += [nan_elem] * len(xs)
                continue
            amax = max(abs(x) for x in xs)
            sc = f32(f32(amax / emax) / g)
            sc = min(max(sc, lo), smax)
            code = scale.encode(sc, "nearest_even", "saturate")
            dec = float(scale.decode(code))
            recip = f32(f32(1.0 / g) / dec)
            srow.append(code)
            erow += [elem.encode(f32(x * recip), "nearest_even", "saturate") for x in xs]
        scales.append(srow)
        elements.append(erow)
    return g, scales, elements


def quantize_nvfp4(rows, e2m1: FloatModel, e4m3: FloatModel, block: int = 16):
    """quantize_float_scaled for NVFP4: g = amax / (448 * 6) (a Float32
    Whole level holds it as it is); per block s = e4m3(clamp(amax_b / 6 /
    g, 2**-6, 448)); elements e2m1(saturate(x * ((1 / g) / s)))."""
    return quantize_float_scaled(rows, e2m1, e4m3, block, whole=Float32Model())


def block_value(elem, elem_code: int, scale, scale_code: int, g: float = 1.0) -> float:
    """The value of one quantized element, as a float64: element times
    block scale times whole-tensor scale, exactly (NaN when either code is
    a NaN); `elem` a FloatModel or the bits of an OCP MX integer element."""
    if isinstance(elem, int):
        signed = elem_code - (1 << elem) if elem_code >> (elem - 1) else elem_code
        e = Fraction(signed, 2 ** (elem - 2))
    else:
        e = elem.decode(elem_code)
    s = scale.decode(scale_code)
    if e is None or s is None:
        return math.nan
    return float(e * s * Fraction(g))
