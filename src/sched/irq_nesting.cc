#include "sched/irq_nesting.h"

#include <fmt/core.h>

namespace cstool {

const std::string* IrqNames::Irq(int32_t irq, std::string_view name) {
  auto [it, inserted] = irqs_.try_emplace(irq);
  if (inserted) it->second = fmt::format("irq:{} {}", irq, name);
  return &it->second;
}

const std::string* IrqNames::Vector(std::string_view name) {
  auto it = vectors_.find(std::string(name));
  if (it == vectors_.end())
    it = vectors_.emplace(std::string(name), fmt::format("vector:{}", name)).first;
  return &it->second;
}

const std::string* IrqNames::Softirq(uint32_t vec, std::string_view name) {
  auto [it, inserted] = softirqs_.try_emplace(vec);
  if (inserted)
    it->second = name.empty() ? fmt::format("softirq:{}", vec) : fmt::format("softirq:{}", name);
  return &it->second;
}

}  // namespace cstool
