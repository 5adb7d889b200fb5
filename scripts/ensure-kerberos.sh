#!/usr/bin/env bash
# Makes sure the Kerberos tests (npm run test:kerberos) can start their own KDC: Debian's MIT
# Kerberos KDC (`krb5-kdc`: krb5kdc, kdb5_util) and its admin tools (`krb5-admin-server`:
# kadmin.local, to add principals and write keytabs), and the client's GSS-API library
# (`libgssapi-krb5-2`, which the addon loads for GSSAPI). Installs what is missing when running as
# root (bounded: scripts/lib/registry.sh); otherwise prints the exact command. The packages' own
# services are not used (the tests run a KDC of their own, on a free port, in a temporary directory).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/registry.sh"

export PATH="$PATH:/usr/sbin:/sbin"
# Not `grep -q`: it exits at the first match, ldconfig then dies of SIGPIPE writing the rest, and
# pipefail makes the check fail, so a machine with everything installed ran apt-get now and then.
have_all() {
  command -v krb5kdc >/dev/null 2>&1 && command -v kdb5_util >/dev/null 2>&1 && command -v kadmin.local >/dev/null 2>&1 &&
    { ldconfig -p 2>/dev/null | grep 'libgssapi_krb5.so.2 ' >/dev/null; }
}

if have_all; then
  echo "kerberos: using $(command -v krb5kdc) and $(command -v kadmin.local)"
  exit 0
fi
echo "kerberos: the MIT Kerberos KDC (krb5kdc, kdb5_util, kadmin.local) or libgssapi_krb5 is missing." >&2
if apt_install kerberos krb5-kdc krb5-admin-server libgssapi-krb5-2 && have_all; then
  echo "kerberos: installed $(command -v krb5kdc)"
  exit 0
fi
exit 1
