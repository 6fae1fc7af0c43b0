#pragma once
// Forward declarations of the public types, for headers that only name them (a function that takes
// a Trial<AnyStore>& and passes it on), as xtensor's xtensor_forward.hpp: the full headers are
// needed where members are called. The store concepts constrain the templates, and a store type
// must be complete to be checked against them: AnyStore (what create_trial returns) comes along;
// Trial<LocalStore> or Trial<S3Store> need their store's header.
#include <cstdint>

#include <smdebug/storage/any_store.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug {

enum class Mode : std::uint8_t;
enum class DType : std::uint8_t;
class TensorValue;
struct Collection;

class LocalStore;
class S3Store;

struct TrialOptions;
struct TensorNamesQuery;
struct StepQuery;
template <Store S> class Trial;
template <Store S> class Tensor;

struct HookOptions;
struct HookConfig;
template <WritableStore S> class Hook;

}  // namespace smdebug
