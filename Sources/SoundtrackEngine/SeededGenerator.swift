import SoundtrackContext

/// A small, fast, seedable random number generator (xoshiro256**), seeded through SplitMix64.
///
/// The engine never uses the system generator: every random choice comes from a
/// `SeededGenerator` derived from the engine seed, the user and the user's pick counter,
/// so the same inputs give the same picks in any process.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var s0, s1, s2, s3: UInt64

    /// A generator seeded from one 64-bit value.
    public init(seed: UInt64) {
        var x = seed
        func next() -> UInt64 {
            x = x &+ 0x9e37_79b9_7f4a_7c15
            return StableHash.mix(x &- 0x9e37_79b9_7f4a_7c15)
        }
        s0 = next(); s1 = next(); s2 = next(); s3 = next()
        if s0 | s1 | s2 | s3 == 0 { s0 = 1 }
    }

    /// A generator for one decision: derived from the engine seed, a user and a counter.
    public init(seed: UInt64, user: String, counter: Int64) {
        self.init(seed: StableHash.mix(seed ^ StableHash.fnv1a(user) ^ StableHash.mix(UInt64(bitPattern: counter))))
    }

    public mutating func next() -> UInt64 {
        let result = ((s1 &* 5) << 7 | (s1 &* 5) >> 57) &* 9
        let t = s1 << 17
        s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3
        s2 ^= t
        s3 = (s3 << 45) | (s3 >> 19)
        return result
    }

    /// A uniform Double in [0, 1).
    public mutating func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// A standard normal sample (Box–Muller; one of the pair is discarded for simplicity).
    public mutating func normal() -> Double {
        var u = unit()
        while u <= 0 { u = unit() }
        let v = unit()
        return (-2 * _log(u)).squareRoot() * _cos(2 * .pi * v)
    }

    /// A Gamma(shape, 1) sample (Marsaglia–Tsang), for shape > 0.
    public mutating func gamma(shape: Double) -> Double {
        if shape < 1 {
            let u = unit()
            return gamma(shape: shape + 1) * _pow(max(u, 1e-300), 1 / shape)
        }
        let d = shape - 1.0 / 3.0
        let c = 1 / (9 * d).squareRoot()
        while true {
            var x: Double
            var v: Double
            repeat {
                x = normal()
                v = 1 + c * x
            } while v <= 0
            v = v * v * v
            let u = unit()
            if u < 1 - 0.0331 * x * x * x * x { return d * v }
            if _log(max(u, 1e-300)) < 0.5 * x * x + d * (1 - v + _log(v)) { return d * v }
        }
    }

    /// A Beta(a, b) sample for whole-number shapes a, b ≥ 1 (Thompson sampling on like and
    /// dislike counts): each Gamma(k) is −log of a product of k uniforms (a sum of k exponentials)
    /// while k ≤ 8, which costs one logarithm instead of normal and gamma draws; larger shapes go
    /// through ``gamma(shape:)``. Beta is `X / (X + Y)` for independent X ~ Gamma(a), Y ~ Gamma(b).
    public mutating func beta(counts a: Int, _ b: Int) -> Double {
        precondition(a >= 1 && b >= 1, "shapes must be at least 1")
        let x = gammaWhole(a)
        let y = gammaWhole(b)
        return x / (x + y)
    }

    private mutating func gammaWhole(_ k: Int) -> Double {
        guard k <= 8 else { return gamma(shape: Double(k)) }
        var product = 1.0
        for _ in 0..<k {
            // (0, 1]: the product never reaches 0, so its logarithm is finite.
            product *= Double((next() >> 11) + 1) * 0x1.0p-53
        }
        return -_log(product)
    }
}

#if canImport(Glibc)
import Glibc
@inline(__always) func _log(_ x: Double) -> Double { Glibc.log(x) }
@inline(__always) func _cos(_ x: Double) -> Double { Glibc.cos(x) }
@inline(__always) func _pow(_ x: Double, _ y: Double) -> Double { Glibc.pow(x, y) }
#else
import Foundation
@inline(__always) func _log(_ x: Double) -> Double { Foundation.log(x) }
@inline(__always) func _cos(_ x: Double) -> Double { Foundation.cos(x) }
@inline(__always) func _pow(_ x: Double, _ y: Double) -> Double { Foundation.pow(x, y) }
#endif
