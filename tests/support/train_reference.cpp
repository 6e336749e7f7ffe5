#include "support/train_reference.h"

#include "support/test_support.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace sluice::test {

const nlohmann::json &trainReference(const std::string &file)
{
    static std::map<std::string, nlohmann::json> loaded;
    auto it = loaded.find(file);
    if (it == loaded.end())
        it = loaded.emplace(file, nlohmann::json::parse(readFile(dataFile("train/" + file)))).first;
    return it->second;
}

train::FloatTensor tensorFrom(const nlohmann::json &j)
{
    train::FloatTensor t(j["shape"].get<train::Shape>());
    for (std::size_t i = 0; i < t.size(); ++i)
        t.data[i] = j["data"][i].get<float>();
    return t;
}

bool closeTo(double got, double want, double tolerance) { return std::abs(got - want) <= tolerance * std::max(1.0, std::abs(want)); }

} // namespace sluice::test
