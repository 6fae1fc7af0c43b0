#pragma once
// TensorValue's xtensor views: view<T>() (no copy) and as<T>() (a converting copy), defined in
// core/impl/tensor_value.ipp. Header-only, core/tensor_value.hpp brings them already; in separate
// mode (core/config.hpp) a translation unit that calls them includes this header, so that the
// others parse no xtensor expressions.
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/core/impl/tensor_value.ipp>
