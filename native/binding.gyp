# nestjs-zk-lock's native addon (src/zk_native.cpp), on Node-API (node-addon-api, NAPI_VERSION 8: one
# build loads in every Node.js version the package supports), linked against the ZooKeeper C client
# that native/c-client.cjs builds into c-client/ first (from native/zookeeper-client-c.tar.gz); native/install.cjs
# then runs this (scripts/cross-build.cjs does the same for linux-arm64 in native/cross/linux-arm64/).
{
  "variables": {
    "zk_client_dir": "<(module_root_dir)/c-client",
    # 1 when c-client.cjs built the C client with TLS (see its TLS comment): the addon is then compiled
    # with HAVE_OPENSSL_H against Node's own OpenSSL headers (node-gyp puts <nodedir>/include/node on
    # the include path) and, on purpose, NOT linked with -lssl/-lcrypto: SSL_* stay undefined here
    # and resolve at load time from the OpenSSL the node executable carries and exports.
    "zk_tls": "<!(node -p \"try { require('./c-client/nestjs-zk-lock-build.json').tls ? 1 : 0 } catch { 0 }\")",
    # 1 when c-client.cjs built the C client with its SASL support (HAVE_CYRUS_SASL_H) against
    # src/sasl/sasl.h: the addon then carries the SASL client those calls reach (src/nzl_*.c).
    "zk_sasl": "<!(node -p \"try { require('./c-client/nestjs-zk-lock-build.json').sasl ? 1 : 0 } catch { 0 }\")"
  },
  "targets": [
    {
      "target_name": "zk_native",
      "sources": ["src/zk_native.cpp"],
      "include_dirs": [
        "<(zk_client_dir)/include",
        "<(zk_client_dir)/generated",
        "<!(node -p \"require('node-addon-api').include_dir\")"
      ],
      "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "libraries": ["<(zk_client_dir)/.libs/libzookeeper_st.a"],
      "cflags": ["-O2", "-w"],
      "cflags_cc": ["-O2", "-w", "-fno-exceptions"],
      "conditions": [
        ["zk_tls==1", { "defines": ["HAVE_OPENSSL_H"] }],
        ["zk_sasl==1", { "defines": ["HAVE_CYRUS_SASL_H"], "include_dirs": ["src"], "sources": ["src/nzl_sasl.c", "src/nzl_digest_md5.c", "src/nzl_gssapi.c", "src/nzl_md5.c"] }],
        [
          "OS==\"mac\"",
          {
            "xcode_settings": {
              "GCC_ENABLE_CPP_EXCEPTIONS": "NO",
              "GCC_OPTIMIZATION_LEVEL": "2",
              "MACOSX_DEPLOYMENT_TARGET": "<!(sw_vers -productVersion)"
            }
          }
        ]
      ]
    }
  ]
}
