# SPDX-License-Identifier: MIT
# Allocation-heavy Perl in the spirit of the cca script of the jemalloc
# paper (A Scalable Concurrent malloc(3) Implementation for FreeBSD,
# "Experiments"): generate text, split it with regular expressions,
# count words in a hash, rewrite and sort them.
# Usage: perl words.pl SCALE.  The counts are checked against the
# generator's.
use strict;
use warnings;
use Time::HiRes qw(time);

my $scale = shift // 1;
my $start = time;
my ($seed, %made, %seen, @problems) = (12345);
my $total = 0;
for my $round (1 .. $scale) {
    my @lines;
    for my $l (1 .. 2000) {
        my @w;
        for (1 .. 12) {
            $seed = ($seed * 1103515245 + 12345) % 2147483648;
            my $word = "w" . ($seed % 5000) . ("z" x ($seed % 7));
            push @w, $word;
            $made{$word}++;
            $total++;
        }
        push @lines, join(" ", @w);
    }
    my $text = join("\n", @lines);
    $seen{$1}++ while $text =~ /(\w+)/g;
    (my $upper = $text) =~ s/(\d+)/<$1>/g;
    my $marks = () = $upper =~ /</g;
    push @problems, "round $round: $marks numbers, not " . 2000 * 12 if $marks != 2000 * 12;
}
my $counted = 0;
$counted += $seen{$_} for sort { $seen{$b} <=> $seen{$a} || $a cmp $b } keys %seen;
push @problems, "counted $counted words of $total" if $counted != $total;
for (keys %made) {
    push @problems, "word $_ miscounted" if ($seen{$_} // 0) != $made{$_};
}
printf "metric seconds %.6g s\n", time - $start;
if (@problems) {
    print "check FAILED ", join("; ", @problems[0 .. ($#problems < 4 ? $#problems : 4)]), "\n";
    exit 1;
}
print "check ok\n";
