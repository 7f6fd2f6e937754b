/* tests/fuzz/fuzz_obj.c — libFuzzer harness of cb_fuzz_obj (targets.h). */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return cb_fuzz_obj(data, size); }
