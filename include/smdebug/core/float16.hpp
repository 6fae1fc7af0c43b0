#pragma once
// IEEE 754 binary16 storage type: smdebug saves float16 tensors as raw halves.
#include <bit>
#include <cstdint>
#include <cstring>

namespace smdebug {

struct float16 {
    std::uint16_t bits = 0;

    float16() = default;
    static constexpr float16 from_bits(std::uint16_t b) noexcept { float16 h; h.bits = b; return h; }
    explicit float16(float f) noexcept : bits(from_float(f)) {}

    operator float() const noexcept { return to_float(bits); }

    static float to_float(std::uint16_t h) noexcept {
        const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
        std::uint32_t exp = (h >> 10) & 0x1Fu;
        std::uint32_t mant = h & 0x3FFu;
        std::uint32_t out;
        if (exp == 0x1F) {
            out = sign | 0x7F800000u | (mant << 13);
        } else if (exp == 0) {
            if (mant == 0) {
                out = sign;
            } else {  // subnormal: normalise
                int e = -1;
                do { ++e; mant <<= 1; } while ((mant & 0x400u) == 0);
                out = sign | (static_cast<std::uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3FFu) << 13);
            }
        } else {
            out = sign | ((exp + (127 - 15)) << 23) | (mant << 13);
        }
        return std::bit_cast<float>(out);
    }

    // Round-to-nearest-even conversion.
    static std::uint16_t from_float(float f) noexcept {
        const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
        const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
        const std::uint32_t absx = x & 0x7FFFFFFFu;
        if (absx >= 0x7F800000u) return sign | 0x7C00u | (absx > 0x7F800000u ? 0x200u : 0u);
        if (absx >= 0x477FF000u) return sign | 0x7C00u;  // overflow to inf
        if (absx < 0x38800000u) {                          // subnormal or zero in half
            if (absx < 0x33000000u) return sign;
            const std::uint32_t mant = (absx & 0x7FFFFFu) | 0x800000u;
            const int shift = 126 - static_cast<int>(absx >> 23);  // 14..24
            std::uint32_t r = mant >> shift;
            const std::uint32_t rem = mant & ((1u << shift) - 1u);
            const std::uint32_t half = 1u << (shift - 1);
            if (rem > half || (rem == half && (r & 1u))) ++r;
            return sign | static_cast<std::uint16_t>(r);
        }
        std::uint32_t r = ((absx >> 13) - ((127 - 15) << 10));
        const std::uint32_t rem = absx & 0x1FFFu;
        if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
        return sign | static_cast<std::uint16_t>(r);
    }
};

static_assert(sizeof(float16) == 2);

}  // namespace smdebug
