#pragma once
// Umbrella header: everything a user of smdebug-cpp needs. Finer-grained headers live beside it
// (core/, storage/, format/, query/, net/, writer/).
#include <smdebug/core/collection.hpp>
#include <smdebug/core/dtype.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/reductions.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/query/batch_reads.hpp>
#include <smdebug/query/create_trial.hpp>
#include <smdebug/query/tensor.hpp>
#include <smdebug/query/trial.hpp>
#include <smdebug/storage/any_store.hpp>
#include <smdebug/storage/local_store.hpp>
#include <smdebug/storage/store.hpp>
#include <smdebug/writer/hook.hpp>
