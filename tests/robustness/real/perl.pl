# SPDX-License-Identifier: MIT
# Perl hash and string churn: a word table built, sorted, rewritten and
# dropped each round; prints a digest of the results.
use strict;
use warnings;
my $digest = 0;
for my $round (1 .. 20) {
    my %h;
    for my $i (1 .. 20000) {
        my $w = join '', map { chr(97 + ($i * $_ + $round) % 26) } 1 .. ($i % 40 + 1);
        push @{ $h{ substr($w, 0, 3) } }, $w x (1 + $i % 3);
    }
    for my $k (sort keys %h) {
        my $s = join ',', sort @{ $h{$k} };
        $digest = ($digest * 131 + length($s) + ord($s)) % 1000000007;
    }
}
print "digest $digest\n";
