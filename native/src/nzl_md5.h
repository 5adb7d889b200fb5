/* nestjs-zk-lock: MD5 (RFC 1321) for SASL DIGEST-MD5, so that the addon needs no crypto library. */
#ifndef NZL_MD5_H
#define NZL_MD5_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t state[4];
    uint64_t bytes;
    unsigned char block[64];
} nzl_md5_t;

void nzl_md5_init(nzl_md5_t *md5);
void nzl_md5_update(nzl_md5_t *md5, const void *data, size_t len);
void nzl_md5_final(nzl_md5_t *md5, unsigned char digest[16]);

#endif
