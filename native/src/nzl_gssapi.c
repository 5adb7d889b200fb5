/*
 * nestjs-zk-lock's SASL GSSAPI (Kerberos V5, RFC 4752) client, on the machine's MIT Kerberos GSS-API
 * library, loaded with dlopen the first time this mechanism runs (so the addon neither links nor
 * needs it otherwise). The conversation, as ZooKeeper's server runs it: security contexts are
 * exchanged (the client's first token, the server's mutual-authentication reply); the client then
 * sends an empty message; the server offers its security layers in a wrapped 4-byte message, and the
 * client answers, wrapped, "no security layer" (ZooKeeper protects nothing with SASL layers; TLS does
 * that), without an authorization id (the server names the client by its authenticated principal).
 * The GSS-API types and constants are declared here from RFC 2744 and MIT's gssapi_ext.h, so that
 * building needs no Kerberos headers either.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
#include "nzl_sasl.h"

typedef uint32_t OM_uint32;
typedef struct { size_t length; void *value; } gss_buffer_desc;
typedef struct { OM_uint32 length; void *elements; } gss_OID_desc, *gss_OID;
typedef struct gss_OID_set_desc_struct *gss_OID_set;
typedef struct gss_name_struct *gss_name_t;
typedef struct gss_ctx_id_struct *gss_ctx_id_t;
typedef struct gss_cred_id_struct *gss_cred_id_t;
typedef struct { const char *key; const char *value; } gss_key_value_element_desc;
typedef struct { OM_uint32 count; gss_key_value_element_desc *elements; } gss_key_value_set_desc;

#define GSS_S_COMPLETE 0u
#define GSS_S_CONTINUE_NEEDED 1u
#define GSS_ERROR(x) ((x) & 0xffff0000u)
#define GSS_C_MUTUAL_FLAG 2u
#define GSS_C_SEQUENCE_FLAG 8u
#define GSS_C_INDEFINITE 0xffffffffu
#define GSS_C_INITIATE 1
#define GSS_C_GSS_CODE 1
#define GSS_C_MECH_CODE 2

/* What nestjs-zk-lock calls, found in the library by name. */
static struct {
    int loaded;
    char problem[256];
    gss_OID *nt_hostbased_service;
    gss_OID *nt_principal_name;
    OM_uint32 (*import_name)(OM_uint32 *, gss_buffer_desc *, gss_OID, gss_name_t *);
    OM_uint32 (*release_name)(OM_uint32 *, gss_name_t *);
    OM_uint32 (*acquire_cred_from)(OM_uint32 *, gss_name_t, OM_uint32, gss_OID_set, int, const gss_key_value_set_desc *,
                                   gss_cred_id_t *, gss_OID_set *, OM_uint32 *);
    OM_uint32 (*acquire_cred)(OM_uint32 *, gss_name_t, OM_uint32, gss_OID_set, int, gss_cred_id_t *, gss_OID_set *, OM_uint32 *);
    OM_uint32 (*release_cred)(OM_uint32 *, gss_cred_id_t *);
    OM_uint32 (*init_sec_context)(OM_uint32 *, gss_cred_id_t, gss_ctx_id_t *, gss_name_t, gss_OID, OM_uint32, OM_uint32, void *,
                                  gss_buffer_desc *, gss_OID *, gss_buffer_desc *, OM_uint32 *, OM_uint32 *);
    OM_uint32 (*delete_sec_context)(OM_uint32 *, gss_ctx_id_t *, gss_buffer_desc *);
    OM_uint32 (*wrap)(OM_uint32 *, gss_ctx_id_t, int, OM_uint32, gss_buffer_desc *, int *, gss_buffer_desc *);
    OM_uint32 (*unwrap)(OM_uint32 *, gss_ctx_id_t, gss_buffer_desc *, gss_buffer_desc *, int *, OM_uint32 *);
    OM_uint32 (*release_buffer)(OM_uint32 *, gss_buffer_desc *);
    OM_uint32 (*display_status)(OM_uint32 *, OM_uint32, int, gss_OID, OM_uint32 *, gss_buffer_desc *);
} gss;

#define GSS_LIBRARY "libgssapi_krb5.so.2"
#define GSS_PACKAGES "install MIT Kerberos' GSS-API library (Debian/Ubuntu: apt-get install libgssapi-krb5-2; Alpine: apk add krb5-libs; Fedora/RHEL: dnf install krb5-libs)"

/* Loads the library (gss.loaded 1), or says why not (gss.loaded -1, gss.problem). */
static void load_once(void)
{
    static uv_lib_t lib; /* never closed: the functions stay in use for the life of the process */
    gss.loaded = -1;
#ifdef __APPLE__
    if (uv_dlopen("libgssapi_krb5.2.2.dylib", &lib) != 0) {
#else
    if (uv_dlopen(GSS_LIBRARY, &lib) != 0) {
#endif
        snprintf(gss.problem, sizeof(gss.problem), "%s could not be loaded (%s)", GSS_LIBRARY, uv_dlerror(&lib));
        return;
    }
#define FIND(field, name)                                                                                           \
    if (uv_dlsym(&lib, name, (void **) &gss.field) != 0) {                                                          \
        snprintf(gss.problem, sizeof(gss.problem), "%s has no %s (MIT Kerberos 1.11 or later is needed)", GSS_LIBRARY, name); \
        return;                                                                                                     \
    }
    FIND(nt_hostbased_service, "GSS_C_NT_HOSTBASED_SERVICE");
    FIND(nt_principal_name, "GSS_KRB5_NT_PRINCIPAL_NAME");
    FIND(import_name, "gss_import_name");
    FIND(release_name, "gss_release_name");
    FIND(acquire_cred_from, "gss_acquire_cred_from");
    FIND(acquire_cred, "gss_acquire_cred");
    FIND(release_cred, "gss_release_cred");
    FIND(init_sec_context, "gss_init_sec_context");
    FIND(delete_sec_context, "gss_delete_sec_context");
    FIND(wrap, "gss_wrap");
    FIND(unwrap, "gss_unwrap");
    FIND(release_buffer, "gss_release_buffer");
    FIND(display_status, "gss_display_status");
#undef FIND
    gss.loaded = 1;
}

/* 0 when the library is usable; once per process (worker threads included). */
static int load_gssapi(void)
{
    static uv_once_t once = UV_ONCE_INIT;
    uv_once(&once, load_once);
    return gss.loaded > 0 ? 0 : -1;
}

typedef struct {
    gss_name_t server;
    gss_cred_id_t cred;
    gss_ctx_id_t context;
    int established;
} gss_state;

/* Kerberos' own words for a major/minor status pair. */
static void describe(OM_uint32 major, OM_uint32 minor, char *out, size_t size)
{
    OM_uint32 ignored, more = 0;
    gss_buffer_desc text = {0, NULL};
    size_t at = 0;
    out[0] = '\0';
    do {
        if (GSS_ERROR(gss.display_status(&ignored, major, GSS_C_GSS_CODE, NULL, &more, &text))) break;
        at += (size_t) snprintf(out + at, at < size ? size - at : 0, "%s%.*s", at ? "; " : "", (int) text.length, (char *) text.value);
        gss.release_buffer(&ignored, &text);
    } while (more && at < size);
    more = 0;
    if (minor) do {
        if (GSS_ERROR(gss.display_status(&ignored, minor, GSS_C_MECH_CODE, NULL, &more, &text))) break;
        at += (size_t) snprintf(out + at, at < size ? size - at : 0, "; %.*s", (int) text.length, (char *) text.value);
        gss.release_buffer(&ignored, &text);
    } while (more && at < size);
}

static int gss_fail(sasl_conn_t *conn, const char *what, OM_uint32 major, OM_uint32 minor)
{
    char words[300];
    describe(major, minor, words, sizeof(words));
    return nzl_sasl_fail(conn, SASL_BADAUTH, "%s: %s", what, words);
}

/* The client's credentials for its principal: from its keytab when one is configured (tickets kept
 * in this process's memory), else Kerberos' defaults (the credential cache, KRB5_CLIENT_KTNAME). */
static int acquire(sasl_conn_t *conn, gss_state *s)
{
    const nzl_sasl_config_t *c = conn->config;
    OM_uint32 major, minor;
    gss_name_t me = NULL;
    gss_buffer_desc name = {strlen(c->user), c->user};
    major = gss.import_name(&minor, &name, *gss.nt_principal_name, &me);
    if (GSS_ERROR(major)) return gss_fail(conn, "the principal is not a Kerberos principal name", major, minor);
    if (c->keytab) {
        char ccache[600];
        gss_key_value_element_desc elements[] = {{"client_keytab", c->keytab}, {"ccache", ccache}};
        snprintf(ccache, sizeof(ccache), "MEMORY:nestjs-zk-lock:%s", c->user);
        gss_key_value_set_desc store = {2, elements};
        major = gss.acquire_cred_from(&minor, me, GSS_C_INDEFINITE, NULL, GSS_C_INITIATE, &store, &s->cred, NULL, NULL);
    } else {
        major = gss.acquire_cred(&minor, me, GSS_C_INDEFINITE, NULL, GSS_C_INITIATE, &s->cred, NULL, NULL);
    }
    gss.release_name(&minor, &me);
    if (GSS_ERROR(major)) {
        char what[700];
        snprintf(what, sizeof(what), "no Kerberos credentials for %s%s%s", c->user, c->keytab ? " in the keytab " : " (no keytab configured: none in the credential cache or KRB5_CLIENT_KTNAME)",
                 c->keytab ? c->keytab : "");
        return gss_fail(conn, what, major, minor);
    }
    return SASL_OK;
}

static int first_message(sasl_conn_t *conn, gss_state *s)
{
    OM_uint32 major, minor;
    char service[1024];
    gss_buffer_desc name;
    int rc;
    snprintf(service, sizeof(service), "%s@%s", conn->service, conn->host);
    name.length = strlen(service);
    name.value = service;
    major = gss.import_name(&minor, &name, *gss.nt_hostbased_service, &s->server);
    if (GSS_ERROR(major)) return gss_fail(conn, "the service name is not usable", major, minor);
    rc = acquire(conn, s);
    return rc;
}

int nzl_gssapi_step(sasl_conn_t *conn, const unsigned char *in, unsigned inlen)
{
    gss_state *s = (gss_state *) conn->gss;
    OM_uint32 major, minor;
    gss_buffer_desc input = {inlen, (void *) in}, output = {0, NULL};
    int rc;

    if (!s) {
        if (load_gssapi() != 0) return nzl_sasl_fail(conn, SASL_NOMECH, "GSSAPI needs MIT Kerberos: %s; %s", gss.problem, GSS_PACKAGES);
        s = (gss_state *) calloc(1, sizeof(*s));
        if (!s) return SASL_NOMEM;
        conn->gss = s;
        if ((rc = first_message(conn, s)) != SASL_OK) return rc;
    }
    if (!s->established) {
        major = gss.init_sec_context(&minor, s->cred, &s->context, s->server, NULL, GSS_C_MUTUAL_FLAG | GSS_C_SEQUENCE_FLAG, 0, NULL,
                                     in ? &input : NULL, NULL, &output, NULL, NULL);
        if (GSS_ERROR(major)) {
            char what[1200];
            snprintf(what, sizeof(what), "Kerberos refused to authenticate %s to %s/%s", conn->config->user, conn->service, conn->host);
            if (output.value) gss.release_buffer(&minor, &output);
            return gss_fail(conn, what, major, minor);
        }
        s->established = major == GSS_S_COMPLETE;
        rc = nzl_sasl_output(conn, output.value, output.length);
        if (output.value) gss.release_buffer(&minor, &output);
        return rc == SASL_OK ? SASL_CONTINUE : rc;
    }
    /* The server's security layer offer: 1 byte of layers (1: none), 3 of maximum message size. */
    {
        unsigned char answer[4] = {1, 0, 0, 0};
        gss_buffer_desc offer = {0, NULL}, reply = {sizeof(answer), answer};
        major = gss.unwrap(&minor, s->context, &input, &offer, NULL, NULL);
        if (GSS_ERROR(major)) return gss_fail(conn, "the server's security layer offer could not be unwrapped", major, minor);
        rc = offer.length == 4 && (((unsigned char *) offer.value)[0] & 1) ? SASL_OK : SASL_BADPROT;
        gss.release_buffer(&minor, &offer);
        if (rc != SASL_OK) return nzl_sasl_fail(conn, rc, "the server requires a SASL security layer, which is not supported");
        major = gss.wrap(&minor, s->context, 0, 0, &reply, NULL, &output);
        if (GSS_ERROR(major)) return gss_fail(conn, "the answer to the server's security layer offer could not be wrapped", major, minor);
        rc = nzl_sasl_output(conn, output.value, output.length);
        gss.release_buffer(&minor, &output);
        return rc;
    }
}

void nzl_gssapi_dispose(sasl_conn_t *conn)
{
    gss_state *s = (gss_state *) conn->gss;
    OM_uint32 minor;
    if (!s) return;
    if (s->context) gss.delete_sec_context(&minor, &s->context, NULL);
    if (s->server) gss.release_name(&minor, &s->server);
    if (s->cred) gss.release_cred(&minor, &s->cred);
    free(s);
    conn->gss = NULL;
}
