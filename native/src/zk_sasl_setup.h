/*
 * nestjs-zk-lock: the `sasl` field of the addon's init object, turned into what the C client's
 * zookeeper_init_sasl takes (zoo_sasl_params_t, callbacks reaching nzl_sasl.c), kept for as long as
 * the handle lives; and the start of a handle with it, over TLS or not.
 * The init object's sasl: { mechanism, user, password?, keytab?, service, host?, host_map? } (strings;
 * lib/zookeeper/zk-sasl.options.ts checks them first).
 */
#ifndef ZK_SASL_SETUP_H
#define ZK_SASL_SETUP_H

#include <string>
#include <napi.h>
#include <zookeeper.h>
#include "nzl_sasl.h"

#ifdef HAVE_OPENSSL_H
// Added to the C client by native/c-client.cjs: zookeeper_init_ssl with SASL.
extern "C" zhandle_t *zoo_nzl_init_ssl_sasl(const char *host, const char *cert, watcher_fn watcher, int recv_timeout,
                                            const clientid_t *clientid, void *context, int flags, zoo_sasl_params_t *sasl_params);
#endif

struct SaslSetup {
    nzl_sasl_config_t *config = nullptr;
    std::string service, host, mechanism;
    zoo_sasl_params_t params;

    ~SaslSetup() { nzl_sasl_config_free(config); }

    // The setup from `value` (an object), or nullptr with a JavaScript exception pending.
    static SaslSetup *from(Napi::Env env, Napi::Value value) {
        if (!value.IsObject()) {
            Napi::TypeError::New(env, "ZK init: sasl must be an object").ThrowAsJavaScriptException();
            return nullptr;
        }
        Napi::Object o = value.As<Napi::Object>();
        std::string fields[7];
        bool present[7];
        static const char *names[7] = {"mechanism", "user", "password", "keytab", "service", "host", "host_map"};
        for (int i = 0; i < 7; i++) {
            Napi::Value v = o.Get(names[i]);
            if (env.IsExceptionPending()) return nullptr;
            present[i] = v.IsString();
            if (present[i]) fields[i] = v.As<Napi::String>().Utf8Value();
        }
        if (!present[0] || !present[1] || !present[4]) {
            Napi::TypeError::New(env, "ZK init: sasl needs mechanism, user and service strings").ThrowAsJavaScriptException();
            return nullptr;
        }
        SaslSetup *s = new SaslSetup();
        s->mechanism = fields[0];
        s->service = fields[4];
        s->host = fields[5];
        s->config = nzl_sasl_config_new(fields[0].c_str(), fields[1].c_str(), present[2] ? fields[2].c_str() : nullptr,
                                        present[3] ? fields[3].c_str() : nullptr, present[6] ? fields[6].c_str() : nullptr);
        for (char &c : fields[2]) c = 0;  // the password lives on in the configuration only
        if (!s->config) {
            delete s;
            Napi::Error::New(env, "ZK init: out of memory").ThrowAsJavaScriptException();
            return nullptr;
        }
        s->params.service = s->service.c_str();
        // No host: zk_sasl.c names the server by its address, which the host map turns into a name.
        s->params.host = present[5] ? s->host.c_str() : nullptr;
        s->params.mechlist = s->mechanism.c_str();
        s->params.callbacks = nzl_sasl_callbacks(s->config);
        return s;
    }

    zhandle_t *init(const char *hostPort, const char *cert, watcher_fn watcher, int timeout, clientid_t *id, void *context) {
#ifdef HAVE_OPENSSL_H
        if (cert) return zoo_nzl_init_ssl_sasl(hostPort, cert, watcher, timeout, id, context, 0, &params);
#endif
        return zookeeper_init_sasl(hostPort, watcher, timeout, id, context, 0, nullptr, &params);
    }
};

#endif
