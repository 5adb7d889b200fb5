/*
 * nestjs-zk-lock: the part of Cyrus SASL's <sasl/sasl.h> that the ZooKeeper C client's zk_sasl.c
 * and zookeeper.h use, with Cyrus's names and values, so that the C client is built with its SASL
 * support (HAVE_CYRUS_SASL_H) against nestjs-zk-lock's own client (nzl_sasl.c) instead of libsasl2:
 * DIGEST-MD5 needs no system library, GSSAPI loads MIT Kerberos at run time only when configured.
 * Only client calls exist; no server side, plugins, or security layers.
 */
#ifndef NZL_SASL_SASL_H
#define NZL_SASL_SASL_H

#ifdef __cplusplus
extern "C" {
#endif

#define SASL_CONTINUE 1
#define SASL_OK 0
#define SASL_FAIL (-1)
#define SASL_NOMEM (-2)
#define SASL_NOMECH (-4)
#define SASL_BADPROT (-5)
#define SASL_BADPARAM (-7)
#define SASL_BADAUTH (-13)
#define SASL_NOAUTHZ (-14)

typedef struct sasl_conn sasl_conn_t;

typedef struct sasl_secret {
    unsigned long len;
    unsigned char data[1];
} sasl_secret_t;

typedef struct sasl_callback {
    unsigned long id;
    int (*proc)(void);
    void *context;
} sasl_callback_t;

typedef struct sasl_interact sasl_interact_t;

#define SASL_CB_LIST_END 0
#define SASL_CB_GETREALM 0x0008
#define SASL_CB_USER 0x4001
#define SASL_CB_AUTHNAME 0x4002
#define SASL_CB_PASS 0x4004
/* nestjs-zk-lock's own: its context is the nzl_sasl_config_t with everything the client needs. */
#define NZL_SASL_CB_CONFIG 0x7a6b0001

int sasl_client_new(const char *service, const char *serverFQDN, const char *iplocalport, const char *ipremoteport,
                    const sasl_callback_t *prompt_supp, unsigned flags, sasl_conn_t **pconn);
int sasl_client_start(sasl_conn_t *conn, const char *mechlist, sasl_interact_t **prompt_need, const char **clientout,
                      unsigned *clientoutlen, const char **mech);
int sasl_client_step(sasl_conn_t *conn, const char *serverin, unsigned serverinlen, sasl_interact_t **prompt_need,
                     const char **clientout, unsigned *clientoutlen);
void sasl_dispose(sasl_conn_t **pconn);
const char *sasl_errstring(int saslerr, const char *langlist, const char **outlang);
const char *sasl_errdetail(sasl_conn_t *conn);

#ifdef __cplusplus
}
#endif

#endif
