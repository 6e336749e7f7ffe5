// Optimizer updates on a GPU (gpu_optimizer.h).
#include "train/gpu/gpu_optimizer.h"

#include "train/cuda/kernels/optimizer_kernels.h"

#include <stdexcept>

namespace sluice::train::gpu {

GpuOptimizer::GpuOptimizer(nlohmann::json hyperparameters, std::vector<std::string> slotNames, std::size_t parameterCount)
    : m_h(std::move(hyperparameters)), m_type(m_h.value("type", std::string())), m_count(parameterCount), m_names(std::move(slotNames))
{
    for (std::size_t i = 0; i < m_names.size(); ++i)
        m_slots.emplace_back(parameterCount);
}

float *GpuOptimizer::slot(const char *name)
{
    for (std::size_t i = 0; i < m_names.size(); ++i)
        if (m_names[i] == name)
            return m_slots[i].data();
    return nullptr;
}

void GpuOptimizer::apply(cuda::Stream stream, float *weights, const float *grads, float learningRate, std::int64_t iteration)
{
    const auto n = std::int64_t(m_count);
    const float weightDecay = m_h.value("weight_decay", 0.0f);
    if (m_type == "sgd") {
        cuda::SgdParams p;
        p.learningRate = learningRate;
        p.momentum = m_h.value("momentum", 0.0f);
        p.nesterov = m_h.value("nesterov", false);
        p.weightDecay = weightDecay;
        cuda::sgdUpdate(stream, p, weights, grads, slot("momentum"), n);
    } else if (m_type == "adam" || m_type == "adamw") {
        cuda::AdamParams p;
        p.learningRate = learningRate;
        p.beta1 = m_h.value("beta_1", 0.9);
        p.beta2 = m_h.value("beta_2", 0.999);
        p.epsilon = m_h.value("epsilon", 1e-7);
        p.amsgrad = m_h.value("amsgrad", false);
        p.weightDecay = weightDecay;
        p.iteration = iteration;
        cuda::adamUpdate(stream, p, weights, grads, slot("m"), slot("v"), slot("v_hat"), n);
    } else if (m_type == "rmsprop") {
        cuda::RmsPropParams p;
        p.learningRate = learningRate;
        p.rho = m_h.value("rho", 0.9);
        p.momentum = m_h.value("momentum", 0.0);
        p.epsilon = m_h.value("epsilon", 1e-7);
        p.centered = m_h.value("centered", false);
        p.weightDecay = weightDecay;
        cuda::rmsPropUpdate(stream, p, weights, grads, slot("velocity"), slot("momentum"), slot("average_gradient"), n);
    } else {
        throw std::invalid_argument("optimizer '" + m_type + "' has no CUDA update");
    }
}

void GpuOptimizer::upload(const std::vector<OptimizerSlot> &slots, cuda::Stream stream)
{
    for (std::size_t i = 0; i < slots.size() && i < m_slots.size(); ++i)
        m_slots[i].upload(slots[i].values, stream);
}

void GpuOptimizer::download(std::vector<OptimizerSlot> &slots, cuda::Stream stream) const
{
    for (std::size_t i = 0; i < slots.size() && i < m_slots.size(); ++i)
        slots[i].values = m_slots[i].download(stream);
}

} // namespace sluice::train::gpu
