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
    static constexpr std::string_view rule_name = "CheckInputImages";
    static constexpr std::string_view fires_when = "the per-channel mean of the input images seen so far is above threshold_mean in absolute value";

    double threshold_mean = rule_param_default(&CheckInputImagesParams::threshold_mean);
    std::int64_t threshold_samples = rule_param_default(&CheckInputImagesParams::threshold_samples);
    std::vector<std::string> regex = rule_param_default(&CheckInputImagesParams::regex);
    std::int64_t channel = rule_param_default(&CheckInputImagesParams::channel);

    static constexpr auto parameters() {
        return std::tuple{
            rule_param(&CheckInputImagesParams::threshold_mean, "threshold_mean", "0.2", "largest allowed |channel mean|"),
            rule_param(&CheckInputImagesParams::threshold_samples, "threshold_samples", "500", "samples to see before checking", 1),
            rule_param(&CheckInputImagesParams::regex, "regex", ".*hybridsequential0_input_0", "input image tensors"),
            rule_param(&CheckInputImagesParams::channel, "channel", "1", "axis of the colour channel")};
    }
    static CheckInputImagesParams parse(const std::string& rule, RuleParams& p) { return parse_rule_table<CheckInputImagesParams>(rule, p); }
};

template <Store S>
class CheckInputImages : public RuntimeRule<S> {
public:
    using Params = CheckInputImagesParams;
    explicit CheckInputImages(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "CheckInputImages"), p_(std::move(p)) {}

    void set_required_tensors(std::int64_t step) override {
        names_ = selection_.at_step(this->base_trial(), step);
        for (const auto& n : names_) this->require(n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        for (const auto& n : names_) {
            const auto* fetched = this->fetched_value(n, step);
            if (!fetched) continue;  // unreadable here: skipped alone
            const auto& v = *fetched;
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
    detail::TensorSelection selection_{{}, p_.regex};
    std::vector<std::string> names_;
    std::vector<double> sums_, counts_;
    std::int64_t samples_ = 0;
};

}  // namespace smdebug
