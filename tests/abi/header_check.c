/* The C API header must compile as strict C99 on its own. */
#include "semroute.h"

int main(void) {
  return semroute_abi_version() == SEMROUTE_ABI_VERSION ? 0 : 1;
}
