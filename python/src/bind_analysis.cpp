// smdebug_cpp._core's analysis functions (smdebug/analysis/: docs/diagnose.md): diagnose(trial) and
// diff(trial_a, trial_b, rtol, atol), each returning the JSON text of `smdebug diagnose --json` /
// `smdebug diff --json` (smdebug_cpp.analysis turns it into dicts). Computed with the GIL released
// and the trials locked (two trials in one order, by address, as SharedTrial asks).
#include "binding.hpp"

#include <cmath>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <boost/json.hpp>

#include <smdebug/analysis/diagnose.hpp>
#include <smdebug/analysis/diff.hpp>
#include <smdebug/analysis/json.hpp>
#include <smdebug/query/shared_trial.hpp>
#include <smdebug/storage/any_store.hpp>

namespace smdebug_python {

void bind_analysis(py::module_& m) {
    using Box = smdebug::SharedTrial<smdebug::AnyStore>;
    using Ptr = std::shared_ptr<Box>;
    m.def(
        "diagnose",
        [](const Ptr& box) {
            if (!box) throw py::type_error("diagnose needs a trial");
            py::gil_scoped_release release;
            return box->with([](smdebug::Trial<smdebug::AnyStore>& t) { return boost::json::serialize(smdebug::analysis::to_json(smdebug::analysis::diagnose(t))); });
        },
        py::arg("trial"), "The JSON text of `smdebug diagnose --json` for the trial (docs/diagnose.md).");
    m.def(
        "diff",
        [](const Ptr& a, const Ptr& b, double rtol, double atol) {
            if (!a || !b) throw py::type_error("diff needs two trials");
            if (a == b) throw py::value_error("diff needs two different trials (open the path twice to compare a run with itself)");
            if (!std::isfinite(rtol) || rtol < 0 || !std::isfinite(atol) || atol < 0)
                throw py::value_error("rtol and atol must be numbers >= 0");
            py::gil_scoped_release release;
            const bool a_first = std::less<Box*>()(a.get(), b.get());
            auto first = (a_first ? a : b)->lock();
            auto second = (a_first ? b : a)->lock();
            auto& ta = a->trial(a_first ? first : second);
            auto& tb = b->trial(a_first ? second : first);
            return boost::json::serialize(smdebug::analysis::to_json(smdebug::analysis::diff(ta, tb, {rtol, atol})));
        },
        py::arg("trial_a"), py::arg("trial_b"), py::arg("rtol") = 0.0, py::arg("atol") = 0.0,
        "The JSON text of `smdebug diff --json` for two trials (docs/diagnose.md): bitwise unless rtol/atol.");
}

}  // namespace smdebug_python
