// Compile cost of the umbrella header alone.
#include <smdebug/smdebug.hpp>

int main() { return 0; }
