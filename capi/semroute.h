/* semroute: the stable C API.
 *
 * Conventions (they hold for every function added to this header):
 * - names are semroute_<object>_<verb>; handles are opaque;
 * - fallible calls return a semroute_status* (NULL = success) holding a
 *   stable numeric code and a message, released with semroute_status_free();
 * - every returned object has exactly one free function, which accepts NULL;
 * - no C++ exception and no abort ever crosses this boundary.
 */
#ifndef SEMROUTE_H
#define SEMROUTE_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define SEMROUTE_API __declspec(dllexport)
#else
#define SEMROUTE_API __attribute__((visibility("default")))
#endif

/* Equals the SONAME major of libsemroute.so. */
#define SEMROUTE_ABI_VERSION 0

#ifdef __cplusplus
extern "C" {
#endif

/* Library version, e.g. "0.1.0". Static storage; never free it. Thread-safe. */
SEMROUTE_API const char* semroute_version(void);

/* ABI version of the loaded library; compare with SEMROUTE_ABI_VERSION. Thread-safe. */
SEMROUTE_API int semroute_abi_version(void);

#ifdef __cplusplus
}
#endif

#endif /* SEMROUTE_H */
