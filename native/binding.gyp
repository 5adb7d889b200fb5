# nestjs-zk-lock's native addon (src/zk_native.cpp), on Node-API (node-addon-api, NAPI_VERSION 8: one
# build loads in every Node.js version the package supports), linked against the ZooKeeper C client
# that native/install.cjs builds into c-client/ first (from the zookeeper package's sources), then runs this.
{
  "variables": {
    "zk_client_dir": "<(module_root_dir)/c-client"
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
