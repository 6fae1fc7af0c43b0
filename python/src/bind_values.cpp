// smdebug_cpp._core's values as numpy objects (binding.hpp: to_numpy, float64, numeric_dtype).
#include "binding.hpp"

#include <pybind11/stl.h>  // py::cast of the shape

#include <array>
#include <string>
#include <vector>

namespace smdebug_python {

using namespace smdebug;

// A read-only array over the value's own buffer: no copy. The capsule holds a TensorValue (which
// shares the buffer's ownership), so the array stays valid after the Trial is gone. String tensors
// become numpy unicode arrays, as the reference returns them (a copy: numpy has no view of them).
py::object to_numpy(const TensorValue& v) {
    std::vector<py::ssize_t> shape(v.shape().begin(), v.shape().end());
    if (v.is_string()) {
        py::list items;
        for (const auto& s : v.strings()) items.append(py::str(s));
        py::module_ np = py::module_::import("numpy");
        py::object arr = np.attr("array")(items, py::arg("dtype") = "str");
        return arr.attr("reshape")(py::tuple(py::cast(shape)));
    }
    // numpy dtypes by DType, looked up once (by name they cost a dictionary search per value).
    // Leaked on purpose: Python objects must not be released after the interpreter has finalised.
    static const auto* dtypes = [] {
        auto* d = new std::array<py::object, 16>();
        for (int i = 0; i <= static_cast<int>(DType::string); ++i)
            if (static_cast<DType>(i) != DType::string) (*d)[i] = py::dtype(std::string(dtype_name(static_cast<DType>(i))));  // numpy's names
        return d;
    }();
    const py::dtype dt = py::reinterpret_borrow<py::dtype>((*dtypes)[static_cast<int>(v.dtype())]);
    if (v.empty() || v.bytes().data() == nullptr) return py::array(dt, shape, std::vector<py::ssize_t>{}, nullptr);
    std::vector<py::ssize_t> strides(shape.size());
    py::ssize_t stride = static_cast<py::ssize_t>(dtype_size(v.dtype()));
    for (std::size_t i = shape.size(); i-- > 0;) {
        strides[i] = stride;
        stride *= shape[i];
    }
    auto* keep = new TensorValue(v);
    py::capsule owner(keep, [](void* p) { delete static_cast<TensorValue*>(p); });
    py::array arr(dt, shape, strides, static_cast<const void*>(keep->bytes().data()), owner);
    py::detail::array_proxy(arr.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return arr;
}

py::object float64(double d) {
    static const auto* np_float64 = new py::object(py::module_::import("numpy").attr("float64"));  // leaked: see to_numpy
    return (*np_float64)(d);
}

std::optional<DType> numeric_dtype(const py::dtype& dt) {
    const auto size = dt.itemsize();
    switch (dt.kind()) {
        case 'f':
            if (size == 2) return DType::float16;
            if (size == 4) return DType::float32;
            if (size == 8) return DType::float64;
            break;
        case 'i':
            if (size == 1) return DType::int8;
            if (size == 2) return DType::int16;
            if (size == 4) return DType::int32;
            if (size == 8) return DType::int64;
            break;
        case 'u':
            if (size == 1) return DType::uint8;
            if (size == 2) return DType::uint16;
            if (size == 4) return DType::uint32;
            if (size == 8) return DType::uint64;
            break;
        case 'b': return DType::boolean;
        case 'c':
            if (size == 8) return DType::complex64;
            if (size == 16) return DType::complex128;
            break;
        default: break;
    }
    return std::nullopt;
}

void bind_values(py::module_&) {
    // numpy is imported with the package, as smdebug does: the first value() of a program (a rule's
    // first step, a loop's first value) then pays for no import (~70 ms: numpy loads its submodules).
    (void)to_numpy(TensorValue::scalar<float>(0.0f));
}

}  // namespace smdebug_python
