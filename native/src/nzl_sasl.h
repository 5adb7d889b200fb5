/*
 * nestjs-zk-lock's SASL client behind the Cyrus-compatible calls of sasl/sasl.h, as the ZooKeeper C
 * client's zk_sasl.c drives it: what the addon (zk_native.cpp) configures, and the conversation
 * state shared by the mechanisms (DIGEST-MD5 in nzl_digest_md5.c, GSSAPI in nzl_gssapi.c).
 */
#ifndef NZL_SASL_H
#define NZL_SASL_H

#include <stddef.h>
#include "sasl/sasl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What one connection authenticates with; given to sasl_client_new through NZL_SASL_CB_CONFIG. */
typedef struct nzl_sasl_config nzl_sasl_config_t;

/**
 * A configuration (strings copied; NULL for absent ones): mechanism "DIGEST-MD5" (user, password)
 * or "GSSAPI" (user: the client principal, keytab: the client keytab or NULL for the default
 * credentials, host_map: "address=name" lines that name the server at each address for the
 * service principal, used when the C client is given no fixed host). NULL when out of memory.
 */
nzl_sasl_config_t *nzl_sasl_config_new(const char *mechanism, const char *user, const char *password, const char *keytab,
                                       const char *host_map);
/** The callback list to put in zoo_sasl_params_t: lives as long as the configuration. */
const sasl_callback_t *nzl_sasl_callbacks(nzl_sasl_config_t *config);
/** Frees a configuration (the password is wiped first). */
void nzl_sasl_config_free(nzl_sasl_config_t *config);

/**
 * Why the last SASL step on this thread failed, in words (the C client only keeps a return code),
 * or NULL; nzl_sasl_clear_error() forgets it. The step and the failure run within one call of
 * zookeeper_process, on the thread that made it.
 */
const char *nzl_sasl_last_error(void);
void nzl_sasl_clear_error(void);

/* ---- shared by the mechanisms ---- */

struct nzl_sasl_config {
    char *mechanism;
    char *user;
    char *password;
    char *keytab;
    char *host_map;
    sasl_callback_t callbacks[2];
};

struct sasl_conn {
    const nzl_sasl_config_t *config;
    char *service;      /* "zookeeper" */
    char *host;         /* the server's name in the service principal (GSSAPI), "zk-sasl-md5" (DIGEST-MD5) */
    int step;           /* how many server messages the mechanism has handled */
    unsigned char *out; /* the last message to the server, owned, valid until the next call */
    unsigned outlen;
    char detail[512];   /* why it failed */
    /* DIGEST-MD5 */
    char rspauth[33];   /* what the server must answer to prove it knows the password */
    /* GSSAPI (nzl_gssapi.c) */
    void *gss;
};

/** Records why `conn` failed (printf format) and returns `code`. */
int nzl_sasl_fail(sasl_conn_t *conn, int code, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/** Sets the message to send (copied); returns SASL_OK or SASL_NOMEM. */
int nzl_sasl_output(sasl_conn_t *conn, const void *data, size_t len);

/** DIGEST-MD5 (RFC 2831): the server's challenge (step 0), then its rspauth (step 1). */
int nzl_digest_md5_step(sasl_conn_t *conn, const char *in, unsigned inlen);
/** GSSAPI (RFC 4752): the first message (in == NULL) and each later one; SASL_CONTINUE, SASL_OK or an error. */
int nzl_gssapi_step(sasl_conn_t *conn, const unsigned char *in, unsigned inlen);
void nzl_gssapi_dispose(sasl_conn_t *conn);

#ifdef __cplusplus
}
#endif

#endif
