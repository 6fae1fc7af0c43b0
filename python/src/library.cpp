// The library's definitions, compiled once for the module (docs/compile.md): the module's other
// translation units are compiled with SMDEBUG_SEPARATE_COMPILATION (setup.py) and parse
// declarations where they do not look below the public API.
#include <smdebug/src.hpp>
