#pragma once
// Umbrella header: everything a user of smdebug-cpp needs, local folders and S3. Lighter entry
// headers: <smdebug/local.hpp> (no Asio/OpenSSL; local folders only) and <smdebug/s3.hpp>.
// Finer-grained headers live in the layer folders (core/, storage/, format/, query/, writer/);
// CONTRIBUTING.md describes the layers.
#include <smdebug/local.hpp>
#include <smdebug/s3.hpp>
