#include "semroute.h"

#include "semroute/version.h"

extern "C" {

const char* semroute_version(void) { return SEMROUTE_VERSION_STRING; }

int semroute_abi_version(void) { return SEMROUTE_ABI_VERSION; }

}  // extern "C"
