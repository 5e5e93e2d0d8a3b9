// The C++ client header must compile on its own, without libtorch headers.
#include <semroute/semroute.hpp>

int main() { return semroute::Model::default_params().struct_size == sizeof(semroute_model_params) ? 0 : 1; }
