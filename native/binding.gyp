# nestjs-zk-lock's native addon (src/zk_native.cpp), linked against the ZooKeeper C client that
# native/install.cjs builds into c-client/ first (from the zookeeper package's sources), then runs this.
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
        "<!(node -e \"require('nan')\")"
      ],
      "libraries": ["<(zk_client_dir)/.libs/libzookeeper_st.a"],
      "cflags": ["-O2", "-w"],
      "cflags_cc": ["-O2", "-w"],
      "conditions": [
        [
          "OS==\"mac\"",
          {
            "xcode_settings": {
              "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
              "GCC_OPTIMIZATION_LEVEL": "2",
              "MACOSX_DEPLOYMENT_TARGET": "<!(sw_vers -productVersion)"
            }
          }
        ]
      ]
    }
  ]
}
