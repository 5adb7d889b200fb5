/*
 * nestjs-zk-lock's SASL client for the ZooKeeper C client (see nzl_sasl.h): the Cyrus-compatible
 * calls, which hand each message to the mechanism (nzl_digest_md5.c, nzl_gssapi.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "nzl_sasl.h"

enum { MECH_DIGEST_MD5 = 1, MECH_GSSAPI = 2 };

#if defined(_MSC_VER)
#define NZL_THREAD_LOCAL __declspec(thread)
#else
#define NZL_THREAD_LOCAL __thread
#endif
static NZL_THREAD_LOCAL char last_error[512];

const char *nzl_sasl_last_error(void) { return last_error[0] ? last_error : NULL; }
void nzl_sasl_clear_error(void) { last_error[0] = '\0'; }

static char *copy(const char *s) { return s ? strdup(s) : NULL; }

static void wipe_free(char *s)
{
    if (!s) return;
    volatile char *p = s;
    while (*p) *p++ = 0;
    free(s);
}

nzl_sasl_config_t *nzl_sasl_config_new(const char *mechanism, const char *user, const char *password, const char *keytab,
                                       const char *host_map)
{
    nzl_sasl_config_t *c = (nzl_sasl_config_t *) calloc(1, sizeof(*c));
    if (!c) return NULL;
    c->mechanism = copy(mechanism);
    c->user = copy(user);
    c->password = copy(password);
    c->keytab = copy(keytab);
    c->host_map = copy(host_map);
    if (!c->mechanism || (user && !c->user) || (password && !c->password) || (keytab && !c->keytab) || (host_map && !c->host_map)) {
        nzl_sasl_config_free(c);
        return NULL;
    }
    c->callbacks[0].id = NZL_SASL_CB_CONFIG;
    c->callbacks[0].context = c;
    c->callbacks[1].id = SASL_CB_LIST_END;
    return c;
}

const sasl_callback_t *nzl_sasl_callbacks(nzl_sasl_config_t *config) { return config->callbacks; }

void nzl_sasl_config_free(nzl_sasl_config_t *c)
{
    if (!c) return;
    free(c->mechanism);
    free(c->user);
    wipe_free(c->password);
    free(c->keytab);
    free(c->host_map);
    free(c);
}

int nzl_sasl_fail(sasl_conn_t *conn, int code, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(conn->detail, sizeof(conn->detail), format, args);
    va_end(args);
    snprintf(last_error, sizeof(last_error), "%s", conn->detail);
    return code;
}

int nzl_sasl_output(sasl_conn_t *conn, const void *data, size_t len)
{
    unsigned char *out = (unsigned char *) malloc(len ? len : 1);
    if (!out) return SASL_NOMEM;
    if (len) memcpy(out, data, len);
    free(conn->out);
    conn->out = out;
    conn->outlen = (unsigned) len;
    return SASL_OK;
}

/* The server's name for the service principal: the map's entry for the address zk_sasl.c passes
 * ("a.b.c.d" or an IPv6 address, without the port), or the address itself. */
static char *service_host(const nzl_sasl_config_t *config, const char *server)
{
    const char *line = config->host_map;
    size_t n = strlen(server);
    while (line && *line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t) (end - line) : strlen(line);
        if (len > n + 1 && strncmp(line, server, n) == 0 && line[n] == '=') {
            char *name = (char *) malloc(len - n);
            if (!name) return NULL;
            memcpy(name, line + n + 1, len - n - 1);
            name[len - n - 1] = '\0';
            return name;
        }
        line = end ? end + 1 : NULL;
    }
    return strdup(server);
}

int sasl_client_new(const char *service, const char *serverFQDN, const char *iplocalport, const char *ipremoteport,
                    const sasl_callback_t *prompt_supp, unsigned flags, sasl_conn_t **pconn)
{
    const nzl_sasl_config_t *config = NULL;
    sasl_conn_t *conn;
    (void) iplocalport, (void) ipremoteport, (void) flags;
    for (; prompt_supp && prompt_supp->id != SASL_CB_LIST_END; prompt_supp++) {
        if (prompt_supp->id == NZL_SASL_CB_CONFIG) config = (const nzl_sasl_config_t *) prompt_supp->context;
    }
    if (!config || !service || !serverFQDN || !pconn) {
        snprintf(last_error, sizeof(last_error), "the SASL client was started without its configuration");
        return SASL_BADPARAM;
    }
    conn = (sasl_conn_t *) calloc(1, sizeof(*conn));
    if (!conn) return SASL_NOMEM;
    conn->config = config;
    conn->service = strdup(service);
    conn->host = service_host(config, serverFQDN);
    if (!conn->service || !conn->host) {
        sasl_dispose(&conn);
        return SASL_NOMEM;
    }
    *pconn = conn;
    return SASL_OK;
}

void sasl_dispose(sasl_conn_t **pconn)
{
    sasl_conn_t *conn = pconn ? *pconn : NULL;
    if (!conn) return;
    nzl_gssapi_dispose(conn);
    free(conn->service);
    free(conn->host);
    free(conn->out);
    free(conn);
    *pconn = NULL;
}

const char *sasl_errstring(int saslerr, const char *langlist, const char **outlang)
{
    (void) langlist;
    if (outlang) *outlang = "en-us";
    switch (saslerr) {
    case SASL_OK: return "successful result";
    case SASL_CONTINUE: return "another step is needed in authentication";
    case SASL_NOMEM: return "out of memory";
    case SASL_NOMECH: return "no mechanism available";
    case SASL_BADPROT: return "bad protocol / cancel";
    case SASL_BADPARAM: return "invalid parameter supplied";
    case SASL_BADAUTH: return "authentication failure";
    default: return "generic failure";
    }
}

const char *sasl_errdetail(sasl_conn_t *conn) { return conn && conn->detail[0] ? conn->detail : ""; }

static int mechanism_of(const sasl_conn_t *conn)
{
    const char *m = conn->config->mechanism;
    return strcmp(m, "DIGEST-MD5") == 0 ? MECH_DIGEST_MD5 : strcmp(m, "GSSAPI") == 0 ? MECH_GSSAPI : 0;
}

int sasl_client_start(sasl_conn_t *conn, const char *mechlist, sasl_interact_t **prompt_need, const char **clientout,
                      unsigned *clientoutlen, const char **mech)
{
    int rc;
    (void) mechlist, (void) prompt_need;
    *clientout = NULL;
    *clientoutlen = 0;
    conn->step = 0;
    *mech = conn->config->mechanism;
    switch (mechanism_of(conn)) {
    case MECH_DIGEST_MD5:
        return SASL_CONTINUE; /* the server speaks first */
    case MECH_GSSAPI:
        rc = nzl_gssapi_step(conn, NULL, 0);
        break;
    default:
        return nzl_sasl_fail(conn, SASL_NOMECH, "unknown SASL mechanism %s (DIGEST-MD5 and GSSAPI are supported)", conn->config->mechanism);
    }
    if (rc == SASL_OK || rc == SASL_CONTINUE) {
        *clientout = (const char *) conn->out;
        *clientoutlen = conn->outlen;
    }
    return rc;
}

int sasl_client_step(sasl_conn_t *conn, const char *serverin, unsigned serverinlen, sasl_interact_t **prompt_need,
                     const char **clientout, unsigned *clientoutlen)
{
    int rc;
    (void) prompt_need;
    *clientout = NULL;
    *clientoutlen = 0;
    switch (mechanism_of(conn)) {
    case MECH_DIGEST_MD5:
        rc = nzl_digest_md5_step(conn, serverin, serverinlen);
        break;
    case MECH_GSSAPI:
        rc = nzl_gssapi_step(conn, (const unsigned char *) serverin, serverinlen);
        break;
    default:
        rc = nzl_sasl_fail(conn, SASL_NOMECH, "unknown SASL mechanism %s", conn->config->mechanism);
    }
    conn->step++;
    if (rc == SASL_OK || rc == SASL_CONTINUE) {
        *clientout = (const char *) conn->out;
        *clientoutlen = conn->outlen;
    }
    return rc;
}
