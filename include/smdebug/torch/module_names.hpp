#pragma once
// The names the Python smdebug.pytorch hook gives to modules: a module's class name as Python's
// Module._get_name() returns it. LibTorch's Module::name() is the demangled C++ type name
// ("torch::nn::LinearImpl", "my::MLPImpl"): namespaces and the ModuleHolder convention's "Impl"
// suffix are stripped ("Linear", "MLP").
#include <string>
#include <string_view>

#include <torch/torch.h>

namespace smdebug {

inline std::string python_class_name(std::string_view cpp_name) {
    // Template arguments may contain "::" too: cut namespaces only before the first '<'.
    const auto angle = cpp_name.find('<');
    const auto head = cpp_name.substr(0, angle);
    const auto colons = head.rfind("::");
    std::string_view n = colons == std::string_view::npos ? cpp_name : cpp_name.substr(colons + 2);
    if (n.starts_with("class ")) n.remove_prefix(6);  // MSVC's demangling
    if (n.starts_with("struct ")) n.remove_prefix(7);
    if (n.size() > 4 && n.ends_with("Impl")) n.remove_suffix(4);
    return std::string(n);
}

inline std::string python_class_name(const torch::nn::Module& module) { return python_class_name(module.name()); }

}  // namespace smdebug
