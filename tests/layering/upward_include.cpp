// Compiled as part of the models layer, this file includes a header of the
// tasks layer above it. The build must refuse it (tests/layering/CMakeLists.txt).
#include "tasks/task_head.h"
