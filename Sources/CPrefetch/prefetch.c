// The module is its header (an inline function); SwiftPM builds a C target from at least one source file.
#include "prefetch.h"
