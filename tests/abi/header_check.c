/* The C API header must compile as strict C99 on its own, and link. */
#include <semroute/semroute.h>

int main(void) {
  semroute_model_params params = semroute_model_default_params();
  semroute_status_free(NULL);
  return semroute_abi_version() == SEMROUTE_ABI_VERSION && params.struct_size == sizeof params ? 0 : 1;
}
