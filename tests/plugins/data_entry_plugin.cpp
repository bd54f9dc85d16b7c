// A file whose nnp_plugin_entry is data, not a function: calling it would
// execute bytes. nnplug must refuse it before calling anything.
#include <nnp/plugin.h>

extern "C" NNP_EXPORT const char nnp_plugin_entry[64] = "this is a string, not a function";
