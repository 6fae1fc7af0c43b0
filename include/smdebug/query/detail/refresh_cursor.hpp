#pragma once
// RefreshCursor: how far a trial has read a running job, and which loaded steps are complete.
//  - the last complete step (lcs): every worker wrote it, or the wait window gave up on it (D12),
//    or training ended; it only moves forward;
//  - the listing token (D11): index keys after it are listed on the next refresh. It sits just
//    before the oldest step that may still receive files — the step after lcs, or an older step
//    among the newest W loaded steps (the incomplete-step window) that not every worker has
//    written — so slow workers' late index files are still loaded; it never moves backwards;
//  - completeness and the step states of docs/semantics.md §5 over the loaded steps;
//  - the confirmed frontier (docs/semantics.md §2.4): a directory or
//    bucket listing is not a snapshot, and an index file renamed into place while it runs can be
//    missing from it while a later one is returned. Every index file up to the frontier has been
//    loaded: it is the newest key of a listing that a later listing (begun after it ended) has
//    confirmed. No step past the frontier's step is complete, and the token never moves past the
//    frontier while keys beyond it are unconfirmed, so a missed file is listed again.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <set>
#include <string>

#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/query/detail/step_index.hpp>
#include <smdebug/query/detail/trial_settings.hpp>

namespace smdebug::detail {

class RefreshCursor {
public:
    // `index` must outlive the cursor; its step map is followed, never changed.
    RefreshCursor(const StepIndex& index, std::int64_t wait_window, StepRange range)
        : index_(&index), window_(wait_window), range_(range), lookback_begin_(index.steps().end()) {}
    RefreshCursor(const RefreshCursor&) = delete;
    RefreshCursor& operator=(const RefreshCursor&) = delete;

    std::int64_t last_complete_step() const noexcept { return lcs_; }
    const std::optional<std::string>& token() const noexcept { return token_; }
    bool loaded_all_steps() const noexcept { return loaded_all_steps_; }
    std::int64_t wait_window() const noexcept { return window_; }

    // ---- while listing ---------------------------------------------------------------------------

    // A listed index key: remembered as the last one listed; false when it was read already.
    bool note_listed(const std::string& key) {
        if (!last_listed_ || key > *last_listed_) last_listed_ = key;
        return !read_keys_.contains(key);
    }
    // Whether a listed key was read already (note_listed without its side effect).
    bool was_read(const std::string& key) const { return read_keys_.contains(key); }
    // A key read (or left out by range_steps): not read again while it stays after the token.
    void mark_read(const std::string& key) { read_keys_.insert(key); }

    // After index.ingest(g, ...) for one file.
    void note_ingested(std::int64_t g, const IngestedStep& step) {
        if (!step.registered) return;
        if (step.new_step) note_new_step(g);
        if (step.workers < index_->num_workers()) short_steps_.insert(g);
        else short_steps_.erase(g);
        if (step.workers == index_->num_workers() && g > lcs_) complete_above_lcs_.insert(g);
        else complete_above_lcs_.erase(g);
    }

    // Every index key up to `key` (the newest of a listing) has been read: a listing begun after
    // that listing ended has been read too.
    void confirm_through(const std::optional<std::string>& key) {
        if (!key || (frontier_ && *key <= *frontier_)) return;
        frontier_ = key;
        if (const auto sf = paths::parse_step_file(*key)) confirmed_step_ = std::max(confirmed_step_, sf->step);
    }
    // The global step of the frontier (-1 before any confirmed listing).
    std::int64_t confirmed_step() const noexcept { return confirmed_step_; }

    // After a refresh's files are ingested and its listings confirmed: complete steps up to the
    // frontier, the wait window, then the new listing position.
    void finish_refresh() {
        promote_complete_steps();
        apply_wait_window();
        update_token();
    }

    // End of training seen and the last refreshes done: every loaded step is complete.
    void mark_loaded_all_steps() {
        loaded_all_steps_ = true;
        if (!index_->steps().empty()) set_lcs(std::max(lcs_, index_->steps().rbegin()->first));
    }

    // ---- completeness ----------------------------------------------------------------------------

    bool is_complete(std::int64_t g) const {
        return (index_->worker_count(g) == index_->num_workers() && g <= confirmed_step_) || loaded_all_steps_ || lcs_ >= g;
    }

    // The decision list of docs/semantics.md §5 over the loaded steps (no refresh).
    StepState step_state(std::int64_t step, Mode mode) const {
        auto decide = [&](std::int64_t found, std::int64_t g) {
            if (found > step) return lcs_ >= g ? StepState::UNAVAILABLE : StepState::NOT_YET_AVAILABLE;
            if ((index_->worker_count(g) == index_->num_workers() && g <= confirmed_step_) || loaded_all_steps_ || g <= lcs_)
                return StepState::AVAILABLE;
            return StepState::NOT_YET_AVAILABLE;
        };
        const auto& steps = index_->steps();
        if (mode == Mode::GLOBAL) {
            if (auto it = steps.lower_bound(step); it != steps.end()) return decide(it->first, it->first);
        } else {
            const auto& m = index_->mode_steps(mode);
            if (auto it = m.lower_bound(step); it != m.end()) return decide(it->first, it->second);
        }
        return loaded_all_steps_ ? StepState::UNAVAILABLE : StepState::NOT_YET_AVAILABLE;
    }

private:
    // How many of the newest loaded steps the reader keeps looking back at for late files (D11).
    std::size_t lookback() const noexcept { return static_cast<std::size_t>(std::max<std::int64_t>(window_, 1)); }

    // Book-keeping for a step seen for the first time: the count of steps above lcs, and the
    // oldest of the newest lookback() steps (an iterator that only moves forward).
    void note_new_step(std::int64_t g) {
        const auto& steps = index_->steps();
        if (g > lcs_) ++above_lcs_;
        if (steps.size() <= lookback()) lookback_begin_ = steps.begin();
        else if (g > lookback_begin_->first) ++lookback_begin_;
    }

    // lcs only moves forward; keeps the count of loaded steps above it.
    void set_lcs(std::int64_t v) {
        if (v <= lcs_) return;
        const auto& steps = index_->steps();
        for (auto it = steps.upper_bound(lcs_); it != steps.end() && it->first <= v; ++it) --above_lcs_;
        lcs_ = v;
    }

    // lcs moves to the newest complete step at or below the frontier.
    void promote_complete_steps() {
        const auto end = complete_above_lcs_.upper_bound(confirmed_step_);
        if (end == complete_above_lcs_.begin()) return;
        set_lcs(*std::prev(end));
        complete_above_lcs_.erase(complete_above_lcs_.begin(), complete_above_lcs_.upper_bound(lcs_));
    }

    // D12: when more than W loaded steps are incomplete (every step above lcs is), the older
    // half of them, ⌈count/2⌉ oldest first, are given up on: lcs moves to the newest of those.
    void apply_wait_window() {
        if (window_ <= 0 || above_lcs_ <= window_) return;
        const auto give_up = (above_lcs_ + 1) / 2;
        auto it = index_->steps().upper_bound(lcs_);
        std::advance(it, give_up - 1);
        std::int64_t target = it->first;
        if (target > confirmed_step_) {  // never give up past the frontier: a missed file may be there
            const auto last = index_->steps().upper_bound(confirmed_step_);
            if (last == index_->steps().begin()) return;
            target = std::prev(last)->first;
        }
        set_lcs(target);
        complete_above_lcs_.erase(complete_above_lcs_.begin(), complete_above_lcs_.upper_bound(lcs_));
    }

    // The listing position (D11): just before the oldest step that may still get files — the
    // step after lcs, or an older step among the newest lookback() loaded steps that not every
    // worker has written — and never inside the part of the step range that range_steps
    // excludes. Never moves backwards.
    void update_token() {
        std::optional<std::int64_t> from;
        if (lcs_ >= 0 || !index_->steps().empty()) from = lcs_ + 1;
        if (lookback_begin_ != index_->steps().end()) {
            const std::int64_t cutoff = lookback_begin_->first;
            short_steps_.erase(short_steps_.begin(), short_steps_.lower_bound(cutoff));  // out of sight for good
            if (!short_steps_.empty() && (!from || *short_steps_.begin() < *from)) from = *short_steps_.begin();
        }
        if (from && range_.begin && *from < *range_.begin) from = *range_.begin;
        if (!from && range_.begin && last_listed_) from = *range_.begin;
        std::optional<std::string> token;
        if (from && range_.end && *from >= *range_.end) token = last_listed_;  // nothing left to load
        else if (from) token = paths::index_step_prefix(*from);
        else token = last_listed_;
        // Keys listed past the frontier are unconfirmed: one missing among them must be listed again.
        if (token && last_listed_ && (!frontier_ || *frontier_ < *last_listed_)) {
            if (!frontier_) token.reset();
            else if (*frontier_ < *token) token = frontier_;
        }
        if (token && (!token_ || *token > *token_)) {
            token_ = std::move(token);
            read_keys_.erase(read_keys_.begin(), read_keys_.upper_bound(*token_));
        }
    }

    const StepIndex* index_;
    std::int64_t window_;
    StepRange range_;
    std::int64_t lcs_ = -1;
    std::int64_t above_lcs_ = 0;          // loaded steps above lcs (all incomplete)
    std::set<std::int64_t> short_steps_;  // loaded steps (not older than the lookback) missing a worker
    std::set<std::int64_t> complete_above_lcs_;  // loaded steps above lcs every worker wrote (unconfirmed)
    std::optional<std::string> frontier_;        // every index key up to it has been read
    std::int64_t confirmed_step_ = -1;           // the frontier's global step
    StepIndex::StepModes::const_iterator lookback_begin_;
    std::optional<std::string> token_;
    std::optional<std::string> last_listed_;
    std::set<std::string> read_keys_;     // keys after the token already read (or range-filtered)
    bool loaded_all_steps_ = false;
};

}  // namespace smdebug::detail
