#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A git session on generated files: init, add, commit, edit, branch,
# merge, gc, fsck, and reads of history.  Dates, names and contents are
# fixed, so every hash it prints is the same on every run; run it through
# preload_compare.sh.
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
export HOME=$dir GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
export GIT_AUTHOR_DATE='2024-01-01T00:00:00Z' GIT_COMMITTER_DATE='2024-01-01T00:00:00Z'

# gen SEED LINES FILE...: writes text files, each with lines of its own;
# LINES 0 gives each file 1 to 200 lines.
gen() {
  awk -v s="$1" -v n="$2" 'BEGIN {
    for (a = 3; a < ARGC; a++) {
      k = s + a * 101; m = n ? n : (k * 37) % 200 + 1
      for (i = 0; i < m; i++)
        printf "line %d of %d: %x %s\n", i, k, (i * 2654435761 + k) % 4294967296,
               substr("abcdefghijklmnopqrstuvwxyz", 1 + (i + k) % 26) > ARGV[a]
      close(ARGV[a])
    } }' "$@"
}

git init -q -b main repo
cd repo
mkdir dir0 dir1 dir2 dir3 dir4 dir5 dir6 dir7 dir8 dir9
gen 0 0 $(for d in $(seq 0 9); do seq -f "dir$d/file%g.txt" 0 29; done)
gen 7 60000 big1.txt
gen 8 30000 big2.txt
head -c 300000 big1.txt | gzip -n -9 > blob.gz
git add -A
git commit -q -m "initial import"

git checkout -q -b topic
gen 5000 150 dir3/file0.txt dir3/file3.txt dir3/file9.txt dir3/file27.txt
git rm -q dir5/file1.txt dir5/file2.txt
git mv dir6 dir6-renamed
git commit -q -am "topic edits"
git checkout -q main
gen 9999 500 dir0/file0.txt
sed -i 's/line 1 /LINE 1 /' big2.txt
git commit -q -am "main edits"
git merge -q --no-edit topic
for i in $(seq 1 20); do
  echo "round $i" >> dir1/file1.txt
  git commit -q -am "round $i"
done
git tag v1

git gc -q
git fsck --full --strict --no-progress
git count-objects -v | grep -E '^(count|in-pack|packs)'
git log -5 --format='%H %s'
git rev-list --count HEAD
git diff --stat HEAD~22 HEAD | tail -1
git ls-tree -r v1 | sha256sum
git archive --format=tar v1 | sha256sum
git grep -c 'LINE 1 ' HEAD -- big2.txt
git blame --porcelain dir1/file1.txt | grep -c '^author t$'
