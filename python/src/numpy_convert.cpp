#include "numpy_convert.h"

#include "io/dtype.h"

#include <pybind11/numpy.h>

#include <cstring>

namespace py = pybind11;

namespace sluice::python {

py::object toNumpy(pipeline::Tensor &&tensor)
{
    py::tuple shape(tensor.shape().size());
    for (std::size_t i = 0; i < tensor.shape().size(); ++i)
        shape[i] = tensor.shape()[i];
    if (tensor.isString()) {
        py::list values;
        for (const auto &s : tensor.stringValues())
            values.append(py::bytes(s));
        return py::module_::import("numpy").attr("array")(values, "object").attr("reshape")(shape);
    }
    const bool writable = tensor.exclusivelyOwned();
    auto *held = new pipeline::Tensor(std::move(tensor));
    py::capsule owner(held, [](void *p) { delete static_cast<pipeline::Tensor *>(p); });
    std::vector<py::ssize_t> dims(held->shape().begin(), held->shape().end());
    py::array array(py::dtype(std::string(dtypeName(held->dtype()))), dims, {}, held->data(), owner);
    if (!writable)
        py::detail::array_proxy(array.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return array;
}

Result<pipeline::Tensor> fromNumpy(py::handle value, const std::string &feature)
{
    const py::module_ np = py::module_::import("numpy");
    // asarray keeps a 0-d scalar 0-d (ascontiguousarray would make it 1-d).
    py::array array = np.attr("asarray")(value);
    if (!(array.flags() & py::array::c_style))
        array = array.attr("copy")("C");
    const py::dtype dtype = array.dtype();
    pipeline::Shape shape(array.shape(), array.shape() + array.ndim());
    const char kind = dtype.kind();
    if (kind == 'O' || kind == 'S' || kind == 'U') { // strings: bytes as they are, str as UTF-8
        std::vector<std::string> values;
        for (py::handle item : array.attr("ravel")()) {
            if (py::isinstance<py::bytes>(item))
                values.push_back(item.cast<std::string>());
            else if (py::isinstance<py::str>(item))
                values.push_back(item.cast<std::string>());
            else
                return Error::invalid("feature \"" + feature + "\"", "holds a " + std::string(py::str(item.get_type().attr("__name__"))) +
                                                                         " among strings; give bytes or str");
        }
        return pipeline::Tensor::strings(std::move(shape), std::move(values));
    }
    if (dtype.attr("byteorder").cast<std::string>() == ">")
        array = array.attr("astype")(dtype.attr("newbyteorder")("="), "C");
    const std::string name = py::str(array.dtype().attr("name"));
    const auto type = dtypeFromName(name);
    if (!type)
        return Error::invalid("feature \"" + feature + "\"", "has dtype " + name + ", which Sluice does not hold (numeric, bool or strings)");
    pipeline::Tensor tensor = pipeline::Tensor::allocate(*type, std::move(shape));
    std::memcpy(tensor.mutableData(), array.data(), std::size_t(tensor.nbytes()));
    return tensor;
}

} // namespace sluice::python
