#pragma once
// Entry header for S3: everything of <smdebug/local.hpp>, plus S3Store (over the SigV4 HTTP client
// on Boost.Asio and OpenSSL) and "s3://bucket/prefix" paths in create_trial, open_store and Hook.
#include <smdebug/local.hpp>
#include <smdebug/storage/s3_store.hpp>
