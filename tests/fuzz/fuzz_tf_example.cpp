// libFuzzer target: any bytes decoded as a tf.train.Example give features or an error,
// never a crash or a read past the record; every bytes value lies inside the input.
#include "io/formats/tf_example.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte *>(data), size);
    const auto example = sluice::parseExample(bytes, "fuzz");
    if (!example.ok())
        return 0;
    for (const auto &[name, f] : *example)
        for (const auto &b : f.bytes)
            if (b.data() < bytes.data() || b.data() + b.size() > bytes.data() + size)
                std::abort();
    return 0;
}
