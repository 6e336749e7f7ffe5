#pragma once
// The two string hashes TensorFlow buckets strings with, bit for bit, so that Keras's Hashing
// layer and the OOV buckets of StringLookup/IntegerLookup give the same indices in Sluice:
// FarmHash Fingerprint64 (tf.strings.to_hash_bucket_fast, Keras without a salt) and SipHash-2-4
// keyed by two 64-bit words (tf.strings.to_hash_bucket_strong, Keras with a salt).
//
// Written here rather than taken from a library: both are a page of code, Debian packages
// neither in the form TensorFlow uses (farmhash's Fingerprint64 is farmhashna::Hash64, not the
// platform-tuned Hash64), and the result must never change with a library's version.
//
// Threading: pure functions.

#include <cstdint>
#include <string_view>

namespace sluice::pipeline {

// farmhash::Fingerprint64 (= farmhashna::Hash64), what tensorflow::Fingerprint64 returns.
std::uint64_t farmhashFingerprint64(std::string_view bytes);

// SipHash-2-4 with the 128-bit key {k0, k1} (highwayhash::SipHash, as TensorFlow's
// StrongKeyedHash calls it).
std::uint64_t sipHash24(std::uint64_t k0, std::uint64_t k1, std::string_view bytes);

// tf.strings.to_hash_bucket_fast / to_hash_bucket_strong: the hash modulo `buckets` (≥ 1).
inline std::int64_t hashBucketFast(std::string_view bytes, std::uint64_t buckets)
{
    return std::int64_t(farmhashFingerprint64(bytes) % buckets);
}
inline std::int64_t hashBucketStrong(std::string_view bytes, std::uint64_t buckets, std::uint64_t k0, std::uint64_t k1)
{
    return std::int64_t(sipHash24(k0, k1, bytes) % buckets);
}

} // namespace sluice::pipeline
