#!/usr/bin/env bash
# The 1.0 renames of issue 30 §4, as one mechanical step (notes/api-1.0.md, "Renames").
#
# Run from the repository root on a tree WITHOUT the renames (the state before the rename commits):
# after merging the internals refactor, revert the rename commits (or merge before them), merge,
# then run this and commit its result alone. It refuses a tree that is already renamed or half
# renamed, because `HeldLock` means the internal class before and the public type after.
#
# Order matters: the internal class HeldLock becomes GrantedLock first, then HeldLockInfo takes
# the name HeldLock.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"

# Source, tests, sample app, benchmarks and the user docs; not notes/ (history) nor api/ (generated).
files() { git ls-files -- lib test sample-app bench docs README.md CONTRIBUTING.md CHANGELOG.md scripts | grep -E '\.(ts|mts|cts|mjs|cjs|js|md)$'; }

if files | xargs grep -lwE 'GrantedLock|ZkConnectionLike|LockKindOptions' >/dev/null 2>&1; then
  echo "api-1.0-renames: GrantedLock, ZkConnectionLike or LockKindOptions already appear: this tree is (partly) renamed; start from one without the renames" >&2
  exit 1
fi
if ! files | xargs grep -lw 'HeldLockInfo' >/dev/null 2>&1; then
  echo "api-1.0-renames: HeldLockInfo is not found: nothing to rename, or the tree is already renamed" >&2
  exit 1
fi

rename() { # old new
  files | xargs grep -lw "$1" | xargs --no-run-if-empty sed -i -E "s/\\b$1\\b/$2/g"
  echo "renamed $1 -> $2"
}
rename ZkLockConnection ZkConnectionLike   # the interface a LockService's connection has (lib/zookeeper/zk-lock-connection.ts)
rename HeldLock GrantedLock                # the internal class of a granted lock node (lib/recipes/granted-lock.ts)
rename HeldLockInfo HeldLock               # what heldLock() returns (lib/recipes/lock-handle.ts)
rename LockKind LockKindOptions            # the { mode, permits } options pair (lib/recipes/lock-kind.ts)

echo "now: npm run typecheck && npm run build && npm run api:update, and commit the renames alone"
