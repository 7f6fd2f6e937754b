/* core/sha256.h — SHA-256 (FIPS 180-4) of a byte buffer or a file, as 64 lowercase hex
 * digits: the run file stores the digest of every mesh file a scene read, so that a
 * rerun can tell when a file changed since the run. */
#ifndef CB_SHA256_H
#define CB_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

typedef struct cb_sha256 {
    uint32_t h[8];
    uint64_t nbytes;         /* message length so far */
    unsigned char block[64];
    size_t fill;             /* bytes in block */
} cb_sha256;

void cb_sha256_init(cb_sha256 *c);
void cb_sha256_update(cb_sha256 *c, const void *data, size_t n);
/* Finish and write the digest as 64 hex digits + NUL into hex[65]. */
void cb_sha256_hex(cb_sha256 *c, char hex[65]);

/* The digest of a whole file; CB_ERR_IO naming the file when it cannot be read. */
int cb_sha256_file(const char *path, char hex[65], cb_error *err);

#endif
