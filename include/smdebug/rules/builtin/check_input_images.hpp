#pragma once
// CheckInputImages (docs/rules.md "Built-in rules": names and defaults; definition from the AWS
// "CheckInputImages" rule: checks that input images were normalised, by whether the mean of the
// sample data differs from zero by more than a threshold).
// Inspected tensors: saved at the step and matching `regex`; axis 0 is the batch (a sample each)
// and axis `channel` the colour channel (rank < 2: one sample, one channel). The rule adds up,
// over every step it has seen, the elements of each channel. Once at least `threshold_samples`
// samples were counted it fires when some channel's mean is above `threshold_mean` in absolute value.
#include <smdebug/rules/builtin/common.hpp>

namespace smdebug {

struct CheckInputImagesParams {
    double threshold_mean = 0.2;
    std::int64_t threshold_samples = 500;
    std::vector<std::string> regex{".*hybridsequential0_input_0"};
    std::int64_t channel = 1;

    static CheckInputImagesParams parse(const std::string& rule, RuleParams& p) {
        CheckInputImagesParams v;
        v.threshold_mean = p.number(rule, "threshold_mean", v.threshold_mean);
        v.threshold_samples = p.integer(rule, "threshold_samples", v.threshold_samples, 1);
        v.regex = p.list(rule, "regex", ".*hybridsequential0_input_0");
        v.channel = p.integer(rule, "channel", v.channel, 0);
        return v;
    }
};

template <Store S>
class CheckInputImages : public RuntimeRule<S> {
public:
    using Params = CheckInputImagesParams;
    explicit CheckInputImages(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "CheckInputImages"), p_(std::move(p)) {}

    void set_required_tensors(std::int64_t step) override {
        names_ = detail::tensors_at_step(this->base_trial(), step, {}, p_.regex);
        for (const auto& n : names_) this->req_.add(this->base_trial(), n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        for (const auto& n : names_) {
            if (!this->req_.has_value(this->base_trial(), n, step)) continue;  // unreadable here: skipped alone
            const auto& v = this->req_.value(this->base_trial(), n, step);
            const auto x = detail::as_doubles(v);
            if (x.empty()) continue;
            const auto& shape = v.shape();
            const std::size_t batch = shape.size() >= 2 ? shape[0] : 1;
            const std::size_t axis = static_cast<std::size_t>(p_.channel);
            const std::size_t channels = shape.size() >= 2 && axis < shape.size() ? shape[axis] : 1;
            std::size_t inner = 1;  // elements after the channel axis
            for (std::size_t i = axis + 1; channels > 1 && i < shape.size(); ++i) inner *= shape[i];
            if (sums_.size() < channels) sums_.resize(channels), counts_.resize(channels);
            for (std::size_t i = 0; i < x.size(); ++i) {
                const std::size_t c = channels > 1 ? (i / inner) % channels : 0;
                sums_[c] += x[i];
                counts_[c] += 1;
            }
            samples_ += static_cast<std::int64_t>(batch);
        }
        if (samples_ < p_.threshold_samples) return false;
        for (std::size_t c = 0; c < sums_.size(); ++c) {
            const double mean = counts_[c] ? sums_[c] / counts_[c] : 0.0;
            if (std::fabs(mean) > p_.threshold_mean)
                return this->fired("channel " + std::to_string(c) + ": mean " + text::format_double(mean) + " over " + std::to_string(samples_) +
                                   " samples, |mean| > " + text::format_double(p_.threshold_mean));
        }
        return false;
    }

private:
    Params p_;
    std::vector<std::string> names_;
    std::vector<double> sums_, counts_;
    std::int64_t samples_ = 0;
};

}  // namespace smdebug
