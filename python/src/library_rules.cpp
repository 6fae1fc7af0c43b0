// The built-in rules over AnyStore, compiled once for the module (<smdebug/rules/src.hpp>): the
// module's translation units that make rules by name instantiate none of them (docs/compile.md).
#include <smdebug/rules/src.hpp>
